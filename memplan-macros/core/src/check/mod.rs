//! The compile-time checks. Each file holds one family, as small
//! `check_*`-style functions over the IR that push spanned errors; [`run`]
//! runs them all, so a plan's every mistake is reported at once.
//!
//! | file | checks |
//! | --- | --- |
//! | `bounds.rs` | ranges that provably leave their buffer or run backwards |
//! | `collectives.rs` | collectives without ranks to span, on host memory or of types NCCL does not know |
//! | `copies.rs` | element types, symbolic lengths, overlapping source and destination, writes to read-only slices |
//! | `host_steps.rs` | host steps that list a buffer twice, or borrow a read-only slice `&mut` |
//! | `gpus.rs` | memory of another GPU than the op's stream's: kernels without `peer`, copies, fills and collectives |
//! | `reach.rs` | memory a kernel cannot reach, async copies of pageable memory, write-combined memory read by the host, host steps on device memory |
//! | `launch.rs` | launch arguments against the kernel's declaration, and kernels with too many parameters |
//! | `lifetime.rs` | reads of memory nothing wrote, use after `free`, double `free`, `alloc` without `free` |
//! | `order.rs` | the happens-before order (and `wait` for an event never recorded) |
//! | `race.rs` | unordered accesses from two streams, host reads of results in flight, stream-ordered memory across streams |
//! | `iterations.rs` | the same between two iterations of a loop |
//! | `unused.rs` | warnings for declared and unused buffers, streams, events and kernels |
//!
//! Undeclared and twice-declared names are reported earlier, by `ir::build`.

mod bounds;
mod collectives;
mod copies;
mod gpus;
mod host_steps;
mod iterations;
mod launch;
mod lifetime;
mod order;
mod race;
mod reach;
mod unused;

pub use order::Order;
pub use unused::Warning;

use crate::errors::Errors;
use crate::ir::{Access, Plan};
use proc_macro2::Span;

/// What the checks learned, for the lowering.
#[derive(Default)]
pub struct Analysis {
    pub warnings: Vec<Warning>,
}

/// Runs every check on `plan`; errors go to `errors`.
pub fn run(plan: &Plan, errors: &Errors) -> Analysis {
    // A loop's body is one iteration `c`, with what holds of `c`.
    let accesses: Vec<Vec<Access>> = (0..plan.ops.len())
        .map(|op| {
            let mut accesses = plan.accesses(op);
            if let Some(repeat) = plan.loop_of(op) {
                for access in &mut accesses {
                    access.facts.extend(repeat.facts.iter().cloned());
                }
            }
            accesses
        })
        .collect();
    bounds::check(plan, errors);
    collectives::check(plan, errors);
    copies::check(plan, errors);
    host_steps::check(plan, errors);
    reach::check(plan, errors);
    gpus::check(plan, errors);
    launch::check(plan, errors);
    lifetime::check(plan, &accesses, errors);
    let order = Order::compute(plan, errors);
    // A loop may run no iterations: two ops outside it are ordered only if
    // they are without its body too (a `record` in the body orders nothing
    // when the body never runs). A loop that always runs orders them as
    // its body does: iteration `c` stands for the first as for any other.
    errors.mute(true);
    let may_be_empty = |op| plan.loop_of(op).is_some_and(|repeat| !repeat.never_empty);
    let without_empty_loops = Order::compute_skipping(plan, errors, &may_be_empty);
    errors.mute(false);
    let ordered = |a, b| {
        order.happens_before(a, b)
            && (plan.loop_of(a).is_some()
                || plan.loop_of(b).is_some()
                || without_empty_loops.happens_before(a, b))
    };
    let through_loop = |a, b| order.happens_before(a, b) && !ordered(a, b);
    let between = race::Between::Ops {
        through_loop: &through_loop,
    };
    race::check(plan, &accesses, &ordered, &between, errors);
    iterations::check(plan, &order, errors);
    Analysis {
        warnings: unused::find(plan, &accesses),
    }
}

/// The line a span starts on, for messages that point elsewhere.
fn line(span: Span) -> usize {
    span.start().line
}
