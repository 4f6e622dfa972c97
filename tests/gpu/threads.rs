//! A plan moves between threads (a worker that runs it, a pool that takes
//! it in turns): made on one thread, run directly, timed, replayed from
//! graphs and submitted on another, waited for back on the first and
//! dropped on a third, it gives what the same runs give on one thread.

use crate::batches::{CAP, Saxpy, saxpy};
use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::Replay;
use std::thread;

pub const TESTS: &[(&str, GpuTest)] = &[(
    "threads::a_plan_moves_between_threads",
    a_plan_moves_between_threads,
)];

/// Runs `work` on a thread of its own and returns what it returns.
fn on_another_thread<T: Send>(
    work: impl FnOnce() -> Result<T, Failed> + Send,
) -> Result<T, Failed> {
    thread::scope(|scope| {
        scope
            .spawn(work)
            .join()
            .map_err(|_| Failed::from("the other thread panicked"))?
    })
}

fn a_plan_moves_between_threads() -> Result<(), Failed> {
    let ctx = context()?;
    let (x, y) = (floats(CAP), floats(CAP));
    let mut plan = Saxpy::new(&ctx, CAP, 2)?;
    plan.host_mut().x.copy_from_slice(&x);
    plan.host_mut().y.copy_from_slice(&y);
    let mut expected = y;
    plan.run(CAP, 0.5)?;
    saxpy(1.0, &x, &mut expected, CAP);

    // A worker runs it: directly and timed, then replayed from graphs
    // (captured there), and leaves a run in flight.
    let (mut plan, mut expected) = on_another_thread(|| {
        plan.set_timing(true)?;
        let report = plan.run(CAP - 1, 0.25)?;
        saxpy(0.5, &x, &mut expected, CAP - 1);
        if report.ops.is_empty() {
            return Err(format!("a timed run on another thread timed no op: {report:?}").into());
        }
        plan.set_timing(false)?;
        plan.set_replay(Replay::Graph)?;
        for (len, a) in [(CAP, 1.0), (1000, -0.5), (CAP, 1.0)] {
            plan.run(len, a)?;
            saxpy(2.0 * a, &x, &mut expected, len);
        }
        same(
            "y, run and replayed on another thread",
            plan.host().y,
            &expected,
        )?;
        plan.submit(1001, 1.5)?;
        saxpy(3.0, &x, &mut expected, 1001);
        Ok((plan, expected))
    })?;

    // Back here, the run in flight is waited for, and the graphs the
    // worker captured replay.
    let report = plan.wait()?;
    if report.is_none() {
        return Err("the run submitted on the other thread was not in flight here".into());
    }
    same(
        "y, submitted there and waited for here",
        plan.host().y,
        &expected,
    )?;
    plan.run(CAP, -1.0)?;
    saxpy(-2.0, &x, &mut expected, CAP);
    same(
        "y, replayed here from graphs captured there",
        plan.host().y,
        &expected,
    )?;

    // Submitted here, waited for and dropped by a third thread.
    plan.submit(CAP, 0.125)?;
    saxpy(0.25, &x, &mut expected, CAP);
    on_another_thread(move || {
        plan.wait()?;
        same("y, waited for on a third thread", plan.host().y, &expected)?;
        drop(plan);
        Ok(())
    })
}
