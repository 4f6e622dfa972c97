// A data-parallel step over every GPU of the host, one thread driving all:
// each GPU takes its shard of the batch and computes its gradient, then
// an all-reduce (NCCL) sums the gradients on every GPU, and each GPU's sum
// is checked against the CPU's. `data_parallel_ranks` does the same with a
// process per GPU.
//
// By hand, with the runtime, for now: plans across GPUs are to come.
// Needs NCCL (`libnccl.so.2`, or `MEMPLAN_NCCL`) and `NCCL_NVLS_ENABLE`
// set (0 on shared machines; `cargo xtask demo` sets it).

#[path = "common/mod.rs"]
mod common;
#[path = "common/ranks.rs"]
mod ranks;

use memplan::Context;
use memplan::nccl::{Communicator, ReduceOp, queue_together};
use ranks::{Rank, SHARD, batch, expected};
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
    let comms = Communicator::all(&gpus)?;

    let started = Instant::now();
    let ranks: Vec<Rank> = gpus
        .iter()
        .enumerate()
        .map(|(r, ctx)| Rank::start(ctx, &batch[r * SHARD..(r + 1) * SHARD]))
        .collect::<Result<_, _>>()?;
    // Each GPU's part of the all-reduce, after its kernel on its stream.
    let parts = ranks
        .iter()
        .zip(&comms)
        .map(|(rank, comm)| {
            comm.all_reduce(&rank.gradient, &rank.gradient, ReduceOp::Sum, &rank.stream)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // SAFETY: each gradient is only read and written by its stream's
    // kernel and collective until the synchronize below; the ranks outlive it.
    unsafe { queue_together(parts)? };
    for rank in &ranks {
        rank.stream.synchronize()?;
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;

    let expected = expected(&batch, count);
    for (r, rank) in ranks.iter().enumerate() {
        common::verify(
            &format!("GPU {r}'s summed gradient"),
            &rank.gradient.to_vec()?,
            &expected,
        )?;
    }
    println!(
        "one step on {count} GPU(s): {ms:.2} ms for upload, kernel and all-reduce (a first step: NCCL's connection set-up included)"
    );
    Ok(())
}
