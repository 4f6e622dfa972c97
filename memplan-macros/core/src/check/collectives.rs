//! NCCL collectives: a plan that has them says which ranks they span
//! (`gpus`, or `ranks`), and their buffers are device memory of a type
//! NCCL knows, the same on both sides. Which GPU each buffer is on is
//! `gpus.rs`'s; lengths, roots and peers are checked by `new`, which knows
//! how many ranks there are. A plan of `ranks` has no sends and receives:
//! each rank runs it alike, so every rank would name the same peer.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{BufferKind, OpKind};
use crate::syntax::CollectiveWord;
use crate::text::text;

/// The element types NCCL reduces and moves (`ncclDataType_t`).
const NCCL_TYPES: [&str; 8] = ["i8", "u8", "i32", "u32", "i64", "u64", "f32", "f64"];

/// A collective in a plan that declares no ranks to span (`gpus` or
/// `ranks`), on host memory, of a type NCCL does not know, or of two types.
pub fn check_collective_memory(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        let OpKind::Collective(collective) = &op.kind else {
            continue;
        };
        if plan.gpus.is_none() && plan.ranks.is_none() {
            errors.at(
                op.span,
                format!("`{}` needs ranks to take part, and this plan declares none", op.label),
                "declare the GPUs this process drives, `gpus gpu[g];` (each takes part through its streams), or `ranks world;` for a plan that is one rank of a job of one process per GPU",
            );
        }
        for place in collective.places() {
            let buffer = &plan.buffers[place.buffer];
            if !matches!(
                buffer.kind,
                BufferKind::Device | BufferKind::StreamOrdered { .. }
            ) {
                errors.at(
                    place.span,
                    format!(
                        "`{}` reads and writes device memory, and `{}` is host memory",
                        op.label, buffer.name
                    ),
                    "copy it into a `device` buffer first",
                );
            }
            let elem = text(&buffer.elem);
            if !NCCL_TYPES.contains(&elem.as_str()) {
                errors.at(
                    place.span,
                    format!(
                        "`{}` holds `{elem}`, which NCCL does not move or reduce",
                        buffer.name
                    ),
                    "NCCL knows i8, u8, i32, u32, i64, u64, f32 and f64",
                );
            }
        }
        let (send, recv) = (
            &plan.buffers[collective.send.buffer],
            &plan.buffers[collective.recv.buffer],
        );
        let (a, b) = (text(&send.elem), text(&recv.elem));
        if a != b {
            errors.at(
                collective.recv.span,
                format!("`{}` sends `{a}` elements and receives `{b}`", op.label),
                "give both buffers one element type",
            );
        }
    }
}

/// A `send` or `recv` in a `ranks` plan: every rank runs the same plan,
/// so every rank would name the same peer, and they could never meet.
pub fn check_no_sends_in_ranks_plans(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        let OpKind::Collective(collective) = &op.kind else {
            continue;
        };
        if let Some(ranks) = &plan.ranks
            && matches!(collective.word, CollectiveWord::Send | CollectiveWord::Recv)
        {
            let peer = collective.rank.as_ref().map(text).unwrap_or_default();
            let verb = match collective.word {
                CollectiveWord::Send => "sends to",
                _ => "receives from",
            };
            errors.at(
                op.span,
                format!(
                    "`{}` in a plan of `ranks {}`: every rank of the job runs this same plan, so every rank {verb} rank `{peer}`, and sends cannot meet their receives one to one: the job would wait for ever",
                    op.label, ranks.name
                ),
                "a send and its receive need each rank's own number, which a `ranks` plan does not have; exchange with a collective (`all_gather`, `broadcast`), or write the plan for one process that drives every GPU (`gpus gpu[g];`)",
            );
        }
    }
}

/// The sends and receives of one group run at once, in no order: a receive
/// must not write what another op of its group reads or writes.
pub fn check_collective_groups_apart(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    let members: Vec<(usize, &crate::ir::Collective)> = plan
        .ops
        .iter()
        .enumerate()
        .filter_map(|(id, op)| match &op.kind {
            OpKind::Collective(c) => Some((id, c)),
            _ => None,
        })
        .collect();
    for (later_at, &(later, b)) in members.iter().enumerate() {
        for &(earlier, a) in &members[..later_at] {
            let writes = |c: &crate::ir::Collective| c.word == crate::syntax::CollectiveWord::Recv;
            if a.group != b.group || !(writes(a) || writes(b)) {
                continue;
            }
            let (pa, pb) = (&a.recv, &b.recv);
            let facts: Vec<crate::sym::Sym> = plan
                .loop_of(later)
                .map(|repeat| repeat.facts.clone())
                .unwrap_or_default();
            if pa.buffer == pb.buffer
                && plan
                    .atoms
                    .may_overlap(&pa.range, &pb.range, &[&pa.facts, &pb.facts, &facts])
            {
                errors.at(
                    pb.span,
                    format!(
                        "`{}` and `{}` (line {}) are sends and receives of one NCCL group, which run at once, and they touch `{}` where one writes it",
                        plan.ops[later].label,
                        plan.ops[earlier].label,
                        plan.ops[earlier].span.start().line,
                        plan.buffers[pb.buffer].name
                    ),
                    "receive into a buffer (or range) the group's other sends and receives do not touch, or put an op between them to end the group",
                );
            }
        }
    }
}
