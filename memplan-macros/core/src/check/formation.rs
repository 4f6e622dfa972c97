//! Where each op may be written: the rules every later check takes for
//! granted. The IR keeps an op on the lane its block gives it, a `record`
//! on the host included; these rules refuse what cannot run there, before
//! the order between lanes is worked out from them.

use crate::errors::Errors;
use crate::ir::{Lane, OpKind, Plan};

/// `record`, `wait`, `alloc`, `free` and collectives are queued on a
/// stream; `sync` and host steps wait on the host; stream-ordered memory is
/// allocated once per run, so not in a loop.
pub fn check_ops_where_they_run(plan: &Plan, errors: &Errors) {
    for (index, op) in plan.ops.iter().enumerate() {
        let in_stream = matches!(op.lane, Lane::Stream(_));
        let span = op.span;
        match &op.kind {
            OpKind::Alloc(_) | OpKind::Free(_) if plan.loop_of(index).is_some() => errors.at(
                span,
                "stream-ordered memory is not allocated or freed in a loop",
                "declare a set of device buffers, `device ring[r]: [T; len];`, and use `ring[c % r]`",
            ),
            OpKind::Record(event) | OpKind::Wait(event) if !in_stream => {
                let verb = match op.kind {
                    OpKind::Record(_) => "record",
                    _ => "wait",
                };
                errors.at(
                    span,
                    format!(
                        "`{verb} {}` must be in a stream block: events mark points in a stream",
                        plan.events[*event]
                    ),
                    "move it into `on stream { ... }`; the host waits with `sync`",
                );
            }
            OpKind::Sync(_) if in_stream => errors.at(
                span,
                "`sync` waits on the host, so it cannot be in a stream block",
                "move it after the block; to order two streams, `record` an event on one and `wait` for it on the other",
            ),
            OpKind::Alloc(_) if !in_stream => errors.at(
                span,
                "`alloc` is stream-ordered, so it must be in a stream block",
                "move it into the `on` block of the stream that first uses the buffer, or declare a `device` buffer",
            ),
            OpKind::Free(_) if !in_stream => errors.at(
                span,
                "`free` is stream-ordered, so it must be in a stream block",
                "move it into an `on` block, after the buffer's last use",
            ),
            OpKind::Collective(_) if !in_stream => errors.at(
                span,
                format!(
                    "`{}` is queued on a stream, so it must be in a stream block",
                    op.label
                ),
                "move it into `on s { ... }`, with `s` a stream of the GPU whose buffers it names",
            ),
            OpKind::Host { .. } if in_stream => errors.at(
                span,
                "a host step runs on the CPU, so it cannot be in a stream block",
                "move it after the block, with `sync` before it if it reads what the stream wrote",
            ),
            _ => {}
        }
    }
}
