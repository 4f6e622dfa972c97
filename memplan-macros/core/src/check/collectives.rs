//! NCCL collectives: a plan that has them says which ranks they span
//! (`gpus`, or `ranks`), and their buffers are device memory of a type
//! NCCL knows, the same on both sides. Which GPU each buffer is on is
//! `gpus.rs`'s; lengths, roots and peers are checked by `new`, which knows
//! how many ranks there are.

use crate::errors::Errors;
use crate::ir::{BufferKind, OpKind, Plan};
use crate::text::text;

/// The element types NCCL reduces and moves (`ncclDataType_t`).
const NCCL_TYPES: [&str; 8] = ["i8", "u8", "i32", "u32", "i64", "u64", "f32", "f64"];

pub fn check(plan: &Plan, errors: &Errors) {
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
