//! Races between two iterations of a loop. The loop's body is checked as
//! one iteration `c` with the rest of the plan (the other checks do that);
//! here it is set beside a later iteration `c′` (any `c′ > c`), and every
//! access of one to a buffer is compared with every access of the other,
//! with the order the two iterations can be relied on to have.
//!
//! Which order that is depends on which elements of its sets (streams,
//! events, buffers) each iteration uses, and that turns on the values of
//! `c` and `c′`. So the comparison is made under a few hypotheses:
//!
//! - *nothing known*: every set's element may differ between the two
//!   iterations. Streams of a set are then different streams, and events
//!   of a set different events: the least order there can be. Buffers
//!   that are not sets are compared here.
//! - *`f(c) = f(c′)`*, for each index `f` the loop uses (`c % r`): then
//!   every set indexed by `f` gives both iterations the same element, the
//!   same stream (ordered by the stream) and the same event, and buffers of
//!   sets indexed by `f` are the same buffer, compared here. Sets indexed
//!   otherwise stay apart, as above.
//!
//! A `wait` in iteration `c′` waits for the last `record` of its event
//! issued before it. When both use one element of a set of events, that
//! is iteration `c`'s record or a later iteration's, recorded after that
//! iteration's own wait; so iteration `c`'s work is ordered before it if
//! the body waits for the event before recording it (by induction over
//! the iterations in between). A plain event (not a set) is a set of one
//! that every iteration shares: the same holds of it; and one recorded on
//! a stream every iteration uses alike is recorded in stream order, so
//! waiting for a later iteration's record waits for `c`'s too. In every
//! other case the wait is taken to order nothing across iterations.

use super::race::{Between, check_pairs};
use super::{Facts, Order};
use crate::errors::Errors;
use crate::ir::{Access, BufferId, EventId, Lane, Loop, Op, OpId, OpKind, Plan, StreamId};
use crate::sym::Sym;
use crate::text::text;

/// Two iterations of a loop touching overlapping ranges of one buffer,
/// one writing, not ordered (a ring's slot reused before its previous
/// chunk is done).
/// (Into `facts.races`, which `race::report` reports.)
pub fn check_iterations_apart(facts: &Facts, _: &Errors) {
    let (plan, order) = (facts.plan, &facts.order);
    for repeat in &plan.loops {
        let mut indexes: Vec<(Sym, String)> = Vec::new();
        for (expr, index) in plan.arrays().filter_map(|a| a.index.as_ref()) {
            if !indexes.iter().any(|(known, _)| known == index) {
                indexes.push((index.clone(), text(expr)));
            }
        }
        // `f(c) = f(c′)` cannot hold of an index that differs for every
        // `c` (`c`, `c + 1`, `2 * c`): two iterations never share its
        // element, and supposing they do would report races that cannot be.
        // Nor of a remainder that runs through fewer values than its
        // divisor, `(i + 1) % g` over `0..g`.
        let var = repeat.var.to_string();
        let atoms = &plan.atoms;
        indexes.retain(|(index, _)| {
            !atoms.is_injective_in(index, &var)
                && !atoms.remainder_is_injective_below(
                    index,
                    &var,
                    &repeat.count_value,
                    &repeat.facts,
                )
        });
        let hypotheses = std::iter::once(None).chain(indexes.iter().map(Some));
        for hypothesis in hypotheses {
            let view = View::new(plan, repeat, hypothesis.map(|(index, _)| index), order);
            let accesses: Vec<Vec<Access>> = (0..view.plan.ops.len())
                .map(|op| {
                    let mut accesses = view.plan.accesses(op);
                    for access in &mut accesses {
                        access.facts.extend(repeat.facts.iter().cloned());
                        if op >= view.split {
                            access.facts.extend(repeat.later_facts.iter().cloned());
                        }
                    }
                    accesses
                })
                .collect();
            let order = Order::compute(&view.plan);
            let var = repeat.var.to_string();
            let (start, split) = (repeat.ops.start, view.split);
            let in_plan = |op: OpId| start + if op < split { op } else { op - split };
            let between = Between::Iterations {
                var: &var,
                index: hypothesis.map(|(_, written)| written.as_str()),
                in_plan: &in_plan,
                events: plan.events.len(),
                split,
            };
            // Buffers whose two iterations' parts are provably apart as a
            // whole need no pair compared: one proof instead of N².
            let apart: Vec<bool> = (0..view.plan.buffers.len())
                .map(|buffer| view.compares(buffer) && parts_apart(&view, &accesses, buffer))
                .collect();
            let compared = |a: OpId, b: OpId, buffer: BufferId| {
                (a < view.split) != (b < view.split) && view.compares(buffer) && !apart[buffer]
            };
            let ordered = |a, b| order.happens_before(a, b);
            check_pairs(
                &view.plan,
                &accesses,
                &ordered,
                &facts.races,
                &compared,
                &between,
            );
        }
    }
}

/// Two iterations of a loop, side by side, as a plan of their own: the
/// first `split` ops are iteration `c`'s, the rest iteration `c′`'s.
struct View<'p> {
    plan: Plan,
    split: usize,
    original: &'p Plan,
    hypothesis: Option<&'p Sym>,
}

impl<'p> View<'p> {
    fn new(plan: &'p Plan, repeat: &Loop, hypothesis: Option<&'p Sym>, order: &Order) -> Self {
        // An element the hypothesis makes the same: of a set indexed by
        // it, or by a remainder it gives equal (`c % s` of `c % (2 * s)`).
        let same = |array: &Option<crate::ir::Array>| match (array, hypothesis) {
            (Some(array), Some(h)) => array
                .index
                .as_ref()
                .is_some_and(|(_, index)| index == h || plan.atoms.remainder_follows(h, index)),
            _ => false,
        };
        let mut view = Plan {
            attrs: Vec::new(),
            vis: plan.vis.clone(),
            name: plan.name.clone(),
            params: plan.params.clone(),
            modules: plan.modules.clone(),
            kernels: plan.kernels.clone(),
            buffers: plan.buffers.clone(),
            streams: plan.streams.clone(),
            events: plan.events.clone(),
            event_arrays: plan.event_arrays.clone(),
            ops: Vec::new(),
            loops: Vec::new(),
            atoms: plan.atoms.clone(),
            gpus: plan.gpus.clone(),
            ranks: plan.ranks.clone(),
        };
        // What the later iteration's ops name: the same declaration, or
        // one of its own where the two iterations' may differ.
        let streams: Vec<StreamId> = later_ids(
            plan.streams.len(),
            |id| plan.streams[id].array.is_none() || same(&plan.streams[id].array),
            |id| {
                view.streams.push(plan.streams[id].clone());
                view.streams.len() - 1
            },
        );
        let body = &plan.ops[repeat.ops.clone()];
        // A plain event is a set of one, shared by every iteration.
        let shared_event = |id| match &plan.event_arrays[id] {
            array @ Some(_) => same(array) && waits_before_records(plan, repeat, id, order),
            None => {
                recorded_in_order(plan, body, id) || waits_before_records(plan, repeat, id, order)
            }
        };
        let events: Vec<EventId> = later_ids(plan.events.len(), shared_event, |id| {
            view.events.push(plan.events[id].clone());
            view.event_arrays.push(plan.event_arrays[id].clone());
            view.events.len() - 1
        });
        let buffers: Vec<BufferId> = later_ids(
            plan.buffers.len(),
            |id| plan.buffers[id].array.is_none() || same(&plan.buffers[id].array),
            |id| {
                view.buffers.push(plan.buffers[id].clone());
                view.buffers.len() - 1
            },
        );
        let var = &repeat.var;
        for op in body {
            let mut op = op.clone();
            op.label = format!("{} (iteration {var})", op.label);
            view.ops.push(op);
        }
        let split = view.ops.len();
        for op in &repeat.later {
            let mut op = op.clone();
            op.label = format!("{} (a later iteration {var}′)", op.label);
            op.rename(&streams, &events, &buffers);
            view.ops.push(op);
        }
        View {
            plan: view,
            split,
            original: plan,
            hypothesis,
        }
    }

    /// Whether accesses to `buffer` are compared under this hypothesis:
    /// buffers that are not sets when nothing is known, and the shared
    /// element of sets indexed by the hypothesis's index otherwise.
    fn compares(&self, buffer: BufferId) -> bool {
        let Some(original) = self.original.buffers.get(buffer) else {
            return false;
        };
        match (&original.array, self.hypothesis) {
            (None, None) => true,
            (Some(array), Some(h)) => array.index.as_ref().is_some_and(|(_, index)| index == h),
            _ => false,
        }
    }
}

/// Whether everything iteration `c` touches of `buffer` is provably apart
/// from everything iteration `c′` does: each iteration's accesses lie in
/// one range from its smallest start to its largest end (when the
/// arithmetic can tell which those are), and the two ranges do not meet.
fn parts_apart(view: &View, accesses: &[Vec<Access>], buffer: BufferId) -> bool {
    let atoms = &view.plan.atoms;
    let of = |later: bool| -> Vec<&Access> {
        accesses
            .iter()
            .enumerate()
            .filter(|(op, _)| (*op >= view.split) == later)
            .flat_map(|(_, list)| list.iter().filter(|a| a.buffer == buffer))
            .collect()
    };
    let (first, second) = (of(false), of(true));
    let (Some(first), Some(second)) = (Hull::of(atoms, &first), Hull::of(atoms, &second)) else {
        return false;
    };
    // What the accesses that give the bounds guarantee (the loop's facts
    // among it): the few that bear on the proof.
    let facts = [first.facts.0, first.facts.1, second.facts.0, second.facts.1];
    !atoms.may_overlap(&first.range, &second.range, &facts)
}

/// The smallest range holding a list of accesses, and the facts of the two
/// that give its start and its end.
struct Hull<'a> {
    range: crate::sym::SymRange,
    facts: (&'a [Sym], &'a [Sym]),
}

impl<'a> Hull<'a> {
    /// The hull of `accesses`, if for the starts and the ends the
    /// arithmetic can tell which is outermost.
    fn of(atoms: &crate::sym::Atoms, accesses: &[&'a Access]) -> Option<Hull<'a>> {
        let (first, rest) = accesses.split_first()?;
        let (mut start, mut end) = (*first, *first);
        for access in rest {
            let facts = |other: &'a Access| [access.facts.as_slice(), other.facts.as_slice()];
            let (new_start, new_end) = (&access.range.start, &access.range.end);
            if *new_start != start.range.start
                && !atoms.provably_le(&start.range.start, new_start, &facts(start))
            {
                if !atoms.provably_le(new_start, &start.range.start, &facts(start)) {
                    return None;
                }
                start = access;
            }
            if *new_end != end.range.end && !atoms.provably_le(new_end, &end.range.end, &facts(end))
            {
                if !atoms.provably_le(&end.range.end, new_end, &facts(end)) {
                    return None;
                }
                end = access;
            }
        }
        Some(Hull {
            range: crate::sym::SymRange {
                start: start.range.start.clone(),
                end: end.range.end.clone(),
            },
            facts: (&start.facts, &end.facts),
        })
    }
}

/// For each of `count` declarations, the one the later iteration names:
/// itself where `shared`, else the one `copy` makes for it.
fn later_ids(
    count: usize,
    shared: impl Fn(usize) -> bool,
    mut copy: impl FnMut(usize) -> usize,
) -> Vec<usize> {
    (0..count)
        .map(|id| if shared(id) { id } else { copy(id) })
        .collect()
}

/// Whether, in the body, every wait for event `event` comes before every
/// record of it and is ordered before the last one: then a later
/// iteration's wait, which waits for the last record issued before it,
/// is ordered after every earlier iteration's record of that element.
fn waits_before_records(plan: &Plan, repeat: &Loop, event: EventId, order: &Order) -> bool {
    let ops = repeat.ops.clone();
    let waits: Vec<OpId> = ops
        .clone()
        .filter(|&op| matches!(plan.ops[op].kind, OpKind::Wait(e) if e == event))
        .collect();
    let records: Vec<OpId> = ops
        .filter(|&op| matches!(plan.ops[op].kind, OpKind::Record(e) if e == event))
        .collect();
    let Some(&last) = records.last() else {
        return false;
    };
    waits
        .iter()
        .all(|&wait| wait < records[0] && order.happens_before(wait, last))
}

/// Whether every record of plain event `event` in the body is on a stream
/// that is not a set: every iteration records it there, in order.
fn recorded_in_order(plan: &Plan, body: &[Op], event: EventId) -> bool {
    body.iter()
        .filter(|op| matches!(op.kind, OpKind::Record(e) if e == event))
        .all(|op| match op.lane {
            Lane::Stream(stream) => plan.streams[stream].array.is_none(),
            Lane::Host => false,
        })
}
