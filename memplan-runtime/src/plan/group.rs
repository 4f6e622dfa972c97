//! Queuing one NCCL group: a collective's parts on every GPU of the
//! process, or sends and receives that meet, handed to NCCL together.

use super::info::{MALFORMED, OrBug};
use super::step::Resources;
use super::steps::Resolved;
use crate::error::Result;
use crate::op::OpResultExt;
use crate::timer::{GroupPart, Timer};

/// Queues one NCCL group: the parts of a collective on every GPU, or
/// sends and receives that meet (ops `first..`, `steps`). Every part is
/// made before the group starts, so that nothing of memplan's fails
/// inside it: a failure there, after some parts were handed over, would
/// leave NCCL to launch those alone at `ncclGroupEnd`, and their GPUs to
/// wait for ever for the rest. When NCCL refuses a call, it drops the
/// whole group at `ncclGroupEnd`.
pub(crate) fn queue_group(
    steps: &[Resolved],
    first: usize,
    on: &Resources,
    timer: &mut Timer,
) -> Result<()> {
    let (Some(first_op), Some(last_op)) = (steps.first(), steps.last()) else {
        return Ok(());
    };
    let (first_op, last_op) = (&first_op.op, &last_op.op);
    let mut parts = Vec::with_capacity(steps.len());
    for resolved in steps {
        let part = resolved
            .step
            .nccl_part(on)
            .and_then(|part| part.or_malformed());
        parts.push(part.at_op(&resolved.op)?);
    }
    let timed: Vec<GroupPart> = (parts.iter().enumerate())
        .map(|(at, part)| part.timed_as(first + at))
        .collect();
    timer.start_group(&timed).at_op(first_op)?;
    let mut queued = crate::nccl::group_start().at_op(first_op);
    if queued.is_ok() {
        for (part, resolved) in parts.iter().zip(steps) {
            // SAFETY: as for `Step::run`, which `Runner::queue` promises.
            queued = unsafe { part.queue() }.at_op(&resolved.op);
            if queued.is_err() {
                break;
            }
        }
        let ended = crate::nccl::group_end().at_op(last_op);
        queued = queued.and(ended);
    }
    // The mark ends even when the group failed: CUPTI's id for it must
    // not stay on this thread.
    let marked = timer.end_group(&timed, queued.is_ok()).at_op(last_op);
    queued.and(marked)
}

/// Where the NCCL group that opens at step `first` ends: `None` if no
/// group opens there, an error if it never closes.
pub(crate) fn group_at(steps: &[Resolved], first: usize) -> Result<Option<usize>> {
    let Some(Resolved {
        group: Some((true, _)),
        op,
        ..
    }) = steps.get(first)
    else {
        return Ok(None);
    };
    let end = (first..steps.len()).find(|&at| matches!(steps[at].group, Some((_, true))));
    end.map(Some).ok_or_else(|| op.error(MALFORMED))
}
