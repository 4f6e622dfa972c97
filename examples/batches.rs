// A stream of batches, the host preparing batch k + 1 while the GPU works
// on batch k, written as a plain loop: two plans take turns. `submit`
// queues a plan's run and returns at once; the next time round, that
// plan's `host()` (which waits for the run if it is still going) hands
// back the batch's result. Each batch has its own scale `a` and the last
// one is shorter: both are given to the run, so the plans are made once.
// Then the same loop with each run replayed from a CUDA graph
// (`set_replay(Replay::Graph)`), changed in place to the batch's length
// and scale.
//
// The kernel is saxpy with `rounds` of extra arithmetic that leaves the
// result as it is, standing for real work: set so that the GPU's share of
// a batch takes about as long as the host's (copying the batch in and the
// result out), where overlapping the two pays most.

#[path = "common/batches.rs"]
mod batch_loop;
#[path = "common/mod.rs"]
mod common;

use batch_loop::{Saxpy, in_turns};

use memplan::prelude::*;
use std::time::Instant;

const BATCH: usize = 4 << 20;
const BATCHES: usize = 24;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(Saxpy::SUMMARY, Saxpy::DIAGRAM)? else {
        return Ok(());
    };
    let total = BATCHES * BATCH - BATCH / 3; // the last batch is shorter
    let x: Vec<f32> = (0..total).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..total).map(|i| (i % 333) as f32).collect();
    let a = |k: usize| 1.0 + (k % 4) as f32;
    let expected: Vec<f32> = (0..total).map(|i| a(i / BATCH) * x[i] + y[i]).collect();
    let batches = || {
        (0..total)
            .step_by(BATCH)
            .map(|start| (start, BATCH.min(total - start)))
    };

    let (rounds, host_ms, gpu_ms) = calibrate(&ctx, &x, &y)?;

    // One plan, one batch after another: the host waits for every run.
    let mut plan = Saxpy::new(&ctx, BATCH, rounds)?;
    plan.run(BATCH, 1.0)?; // warm-up
    // Written through once, so that no page is first touched in the loop.
    let mut out = vec![f32::NAN; total];
    let started = Instant::now();
    for (k, (start, len)) in batches().enumerate() {
        let host = plan.host_mut();
        host.x[..len].copy_from_slice(&x[start..start + len]);
        host.y[..len].copy_from_slice(&y[start..start + len]);
        plan.run(len, a(k))?;
        out[start..start + len].copy_from_slice(&plan.host().y[..len]);
    }
    let one_ms = started.elapsed().as_secs_f64() * 1e3;
    common::verify("one plan", &out, &expected)?;

    // Two plans in turns: while one runs, the host fills the other.
    let mut plans = [
        Saxpy::new(&ctx, BATCH, rounds)?,
        Saxpy::new(&ctx, BATCH, rounds)?,
    ];
    for plan in &mut plans {
        plan.run(BATCH, 1.0)?;
    }
    let mut out = vec![f32::NAN; total];
    let started = Instant::now();
    in_turns(&mut plans, &x, &y, a, &mut out)?;
    let two_ms = started.elapsed().as_secs_f64() * 1e3;
    common::verify("two plans in turns", &out, &expected)?;

    // The same, each run replayed from a graph: the first run captures
    // it, later ones change its nodes to the batch's length and scale.
    let mut replayed = [
        Saxpy::new(&ctx, BATCH, rounds)?,
        Saxpy::new(&ctx, BATCH, rounds)?,
    ];
    for plan in &mut replayed {
        plan.set_replay(Replay::Graph)?;
        plan.run(BATCH, 1.0)?;
    }
    let mut out = vec![f32::NAN; total];
    let started = Instant::now();
    in_turns(&mut replayed, &x, &y, a, &mut out)?;
    let graph_ms = started.elapsed().as_secs_f64() * 1e3;
    common::verify("two plans in turns, replayed", &out, &expected)?;

    println!(
        "saxpy ({rounds} rounds) over {BATCHES} batches of up to {BATCH} floats, a new `a` each:"
    );
    println!("  one plan, batch after batch:   {one_ms:8.2} ms");
    println!(
        "  two plans in turns:            {two_ms:8.2} ms, {:.2}x",
        one_ms / two_ms
    );
    println!(
        "  the same, replayed as graphs:  {graph_ms:8.2} ms, {:.3} ms a batch against {:.3} run directly",
        graph_ms / BATCHES as f64,
        two_ms / BATCHES as f64
    );
    println!(
        "  a batch alone: {host_ms:.2} ms of host copies, {gpu_ms:.2} ms on the GPU \
         (in turns, {:.2} ms at best)",
        BATCHES as f64 * host_ms.max(gpu_ms)
    );

    // The first six batches again, timed, in one timeline: each plan's
    // report comes from its `wait`, before the host fills it again.
    let mut timeline = Timeline::new();
    for plan in &mut plans {
        plan.set_timing(true)?;
    }
    for (k, (start, len)) in batches().take(6).enumerate() {
        let plan = &mut plans[k % 2];
        if let Some(report) = plan.wait()? {
            timeline.add(report);
        }
        let host = plan.host_mut();
        host.x[..len].copy_from_slice(&x[start..start + len]);
        host.y[..len].copy_from_slice(&y[start..start + len]);
        plan.submit(len, a(k))?;
    }
    for plan in &mut plans {
        if let Some(report) = plan.wait()? {
            timeline.add(report);
        }
    }
    common::save_timeline("batches", &timeline)?;
    Ok(())
}

/// Rounds of extra arithmetic for a kernel about as long as the host's
/// part of a batch, both measured on one batch; with the host's time and
/// the GPU's for a batch.
fn calibrate(ctx: &Context, x: &[f32], y: &[f32]) -> memplan::Result<(i32, f64, f64)> {
    const PROBE: i32 = 1000;
    let mut plan = Saxpy::new(ctx, BATCH, PROBE)?;
    let mut host_ms = f64::INFINITY;
    let mut out = vec![0.0f32; BATCH];
    // Each time other batches, as the loop copies them: not in a cache.
    for batch in 0..3 {
        let from = batch * BATCH..(batch + 1) * BATCH;
        let started = Instant::now();
        let host = plan.host_mut();
        host.x.copy_from_slice(&x[from.clone()]);
        host.y.copy_from_slice(&y[from]);
        out.copy_from_slice(plan.host().y);
        host_ms = host_ms.min(started.elapsed().as_secs_f64() * 1e3);
    }
    // Timed by events, not CUPTI: once a plan of the process is timed by
    // CUPTI, CUPTI records every driver call after it, which would slow
    // the loops this calibrates for.
    plan.set_timing(memplan::Timing::Events)?;
    let report = plan.run(BATCH, 1.0)?;
    let kernel_ms: f64 = report
        .ops
        .iter()
        .filter(|op| op.bytes == 0)
        .map(|op| op.duration_ms())
        .sum();
    let copies_ms = report.gpu_ms() - kernel_ms;
    let rounds = (f64::from(PROBE) * (host_ms - copies_ms).max(0.0) / kernel_ms).max(1.0);
    let mut plan = Saxpy::new(ctx, BATCH, rounds as i32)?;
    plan.set_timing(memplan::Timing::Events)?;
    plan.run(BATCH, 1.0)?;
    let gpu_ms = plan.run(BATCH, 1.0)?.gpu_ms();
    Ok((rounds as i32, host_ms, gpu_ms))
}
