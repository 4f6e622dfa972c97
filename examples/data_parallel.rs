// A data-parallel step over every GPU of the host, one thread driving all:
// each GPU takes its shard of the batch and computes its gradient, then
// an all-reduce (NCCL) sums the gradients on every GPU, and each GPU's sum
// is checked against the CPU's. `data_parallel_ranks` does the same with a
// process per GPU.
//
// Needs NCCL (`libnccl.so.2`, or `MEMPLAN_NCCL`) and `NCCL_NVLS_ENABLE`
// set (0 on shared machines; `cargo xtask demo` sets it).

#[path = "common/mod.rs"]
mod common;
#[path = "common/ranks.rs"]
mod ranks;

use memplan::Context;
use ranks::{DataParallel, SHARD, batch, expected};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count = Context::count();
    if count == 0 {
        let why = Context::missing_gpu().unwrap_or_default();
        println!("no CUDA device found ({why}): nothing to run");
        return Ok(());
    }
    let gpus: Vec<Context> = (0..count).map(Context::new).collect::<Result<_, _>>()?;
    let (major, minor, patch) = memplan::nccl::version()?;
    println!(
        "{count} x {}, NCCL {major}.{minor}.{patch}: a batch of {} floats, {SHARD} per GPU",
        gpus[0].device_name()?,
        count * SHARD
    );
    let batch = batch(count);
    let mut plan = DataParallel::new(&gpus, SHARD, count)?;
    plan.host_mut().batch.copy_from_slice(&batch);

    // The first run sets up NCCL's connections; the second is a step.
    let started = Instant::now();
    plan.run()?;
    let first = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    plan.run()?;
    let ms = started.elapsed().as_secs_f64() * 1e3;

    let expected = expected(&batch, count);
    let sums = &plan.host().sums;
    for r in 0..count {
        common::verify(
            &format!("GPU {r}'s summed gradient"),
            &sums[r * SHARD..(r + 1) * SHARD],
            &expected,
        )?;
    }
    println!(
        "one step on {count} GPU(s), as a plan: {ms:.2} ms for upload, kernel, all-reduce and download ({first:.2} ms the first time, with NCCL's set-up)"
    );

    // A timed step: each GPU's part of the all-reduce is an op of its
    // stream, timed by the work NCCL ran on that GPU.
    plan.set_timing(true)?;
    let report = plan.run()?;
    print!("{report}");
    common::save_timeline("data_parallel", &memplan::Timeline::from(report))?;
    Ok(())
}
