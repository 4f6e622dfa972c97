//! How declarations and ops may be written: the rules every later check
//! takes for granted. The IR keeps what the plan says as it says it (an
//! op on the lane its block gives it, a `record` on the host included; a
//! set of host buffers; `run` on a slice); these rules refuse what cannot
//! be so, before the order between lanes is worked out from it.

use crate::errors::Errors;
use crate::ir::{BufferKind, Lane, Loop, OpKind, ParamKind, Plan};
use crate::where_ops_run::{OpWord, cannot_run_there};
use syn::spanned::Spanned;

/// `registered` on a parameter that is not a slice, `run` on a slice, a
/// bound on a parameter that is not a size, a set of buffers that are not
/// device memory.
pub fn check_declaration_forms(plan: &Plan, errors: &Errors) {
    for param in &plan.params {
        if let (Some(bound), false) = (&param.bound, matches!(param.kind, ParamKind::Size)) {
            errors.at(
                bound.span,
                format!(
                    "`{}` is not a size, and only a size has a bound",
                    param.declared
                ),
                format!(
                    "bound a `usize` parameter, `run len: usize <= cap`, or drop `<= {}`",
                    crate::text::text(&bound.limit)
                ),
            );
        }
        let slice = matches!(param.kind, ParamKind::Slice(_));
        match (param.registered, param.run) {
            (Some(registered), _) if !slice => errors.at(
                registered,
                "only borrowed slices can be `registered`",
                format!("make `{}` a slice, `&[T]` or `&mut [T]`", param.name),
            ),
            (_, Some(run)) if slice => errors.at(
                run,
                "a caller's slice is given to each run already",
                format!("write `{}: ...` without `run`", param.name),
            ),
            _ => {}
        }
    }
    for buffer in &plan.buffers {
        if let (Some(array), false) = (&buffer.array, buffer.kind == BufferKind::Device) {
            errors.at(
                array.count.span(),
                format!(
                    "`{}` is declared as a set of buffers, which only `device` memory can be",
                    buffer.name
                ),
                "declare one buffer that holds them all, and use ranges of it",
            );
        }
    }
}

/// An event recorded or waited for in the loop is the loop's own: a
/// `wait` after the loop would wait for its last iteration only, and one
/// in it for the iteration before, which the checks do not model. (A
/// second loop, and what it does with the first's events, is one mistake,
/// `check_one_loop`'s.)
pub fn check_events_stay_in_their_loop(plan: &Plan, errors: &Errors) {
    if let Some(repeat) = plan.loops.first() {
        events_stay_in(repeat, plan, errors);
    }
}

fn events_stay_in(repeat: &Loop, plan: &Plan, errors: &Errors) {
    for (event, name) in plan.events.iter().enumerate() {
        let uses = |inside: bool| {
            plan.ops.iter().enumerate().find(|(id, op)| {
                let here = match inside {
                    true => repeat.contains(*id),
                    false => plan.loop_of(*id).is_none(),
                };
                here && matches!(op.kind, OpKind::Record(e) | OpKind::Wait(e) if e == event)
            })
        };
        if let (Some(_), Some((_, outside))) = (uses(true), uses(false)) {
            errors.at(
                outside.span,
                format!(
                    "`{name}` is used in the loop (line {}), and here outside it",
                    repeat.span.start().line
                ),
                "declare another event for use outside the loop; a loop's events order its iterations",
            );
        }
    }
}

/// `record`, `wait`, `alloc`, `free` and collectives are queued on a
/// stream; `sync` and host steps wait on the host; stream-ordered memory is
/// allocated once per run, so not in a loop.
pub fn check_ops_where_they_run(plan: &Plan, errors: &Errors) {
    for (index, op) in plan.ops.iter().enumerate() {
        let word = match &op.kind {
            OpKind::Record(event) => OpWord::Record(plan.events[*event].to_string()),
            OpKind::Wait(event) => OpWord::Wait(plan.events[*event].to_string()),
            OpKind::Sync(_) => OpWord::Sync,
            OpKind::Alloc(_) => OpWord::Alloc,
            OpKind::Free(_) => OpWord::Free,
            OpKind::Collective(_) => OpWord::Collective(&op.label),
            OpKind::Host { .. } => OpWord::Host,
            _ => OpWord::Other,
        };
        let in_stream = matches!(op.lane, Lane::Stream(_));
        let in_loop = plan.loop_of(index).is_some();
        if let Some((message, help)) = cannot_run_there(&word, in_stream, in_loop) {
            errors.at(op.span, message, help);
        }
    }
}

/// A plan has one `for` loop: the checks compare an iteration with a later
/// one of the same loop, and order what follows a loop by its last
/// iteration, for one loop.
pub fn check_one_loop(plan: &Plan, errors: &Errors) {
    let Some(first) = plan.loops.first() else {
        return;
    };
    for other in &plan.loops[1..] {
        errors.at(
            other.span,
            format!(
                "a plan has one `for` loop, and this one has another (line {})",
                first.span.start().line
            ),
            "split the work into two plans, or into one loop",
        );
    }
}
