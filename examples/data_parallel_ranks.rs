// The data-parallel step of `data_parallel`, as one process per GPU: how a
// job spans hosts. Started plainly, this program is its own launcher: it
// makes NCCL's unique id, starts itself once per GPU with its rank, the
// rank count and the id in the environment, and waits for them. Each rank
// opens its GPU, computes its gradient, joins the communicator by the id,
// all-reduces, and checks the sum against the CPU.
//
// Across hosts a launcher does the same (mpirun, srun, torchrun): it runs
// one process per GPU and hands rank 0's id to the others, by a file,
// a key-value store or MPI. `NCCL_NVLS_ENABLE` is passed to every process
// explicitly (0 unless it was set), since NCCL reads it in each.
//
// Each rank's step is a plan that declares `ranks world;`: its `new` takes
// the rank, the rank count and the id, and joins the job's communicator.

#[path = "common/mod.rs"]
mod common;
#[path = "common/ranks.rs"]
mod ranks;

use memplan::Context;
use memplan::nccl::{Rank, UniqueId};
use ranks::{RankStep, SHARD, batch, expected};
use std::process::Command;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::var("MEMPLAN_RANK") {
        Ok(rank) => run_rank(rank.parse()?),
        Err(_) => launch(),
    }
}

/// Starts a process of this program for each GPU and waits for them all.
fn launch() -> Result<(), Box<dyn std::error::Error>> {
    let count = Context::count();
    if count == 0 {
        let why = Context::missing_gpu().unwrap_or_default();
        println!("no CUDA device found ({why}): nothing to run");
        return Ok(());
    }
    let id = UniqueId::new()?.to_string();
    let nvls = std::env::var("NCCL_NVLS_ENABLE")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "0".to_owned());
    println!("launcher: {count} process(es), one per GPU, NCCL_NVLS_ENABLE={nvls}");
    let me = std::env::current_exe()?;
    let children = (0..count)
        .map(|rank| {
            Command::new(&me)
                .env("MEMPLAN_RANK", rank.to_string())
                .env("MEMPLAN_RANKS", count.to_string())
                .env("MEMPLAN_NCCL_ID", &id)
                .env("NCCL_NVLS_ENABLE", &nvls)
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    // A rank that fails leaves the others waiting for it in NCCL: then
    // they are stopped.
    let mut running: Vec<Option<_>> = children.into_iter().map(Some).collect();
    let mut failed = Vec::new();
    while running.iter().any(Option::is_some) {
        for (rank, slot) in running.iter_mut().enumerate() {
            if let Some(child) = slot
                && let Some(status) = child.try_wait()?
            {
                if !status.success() {
                    failed.push(rank);
                }
                *slot = None;
            }
        }
        if !failed.is_empty() {
            for child in running.iter_mut().flatten() {
                let _ = child.kill();
                let _ = child.wait();
            }
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if failed.is_empty() {
        println!("launcher: every rank holds the summed gradient");
        Ok(())
    } else {
        Err(format!("launcher: ranks {failed:?} failed").into())
    }
}

/// One rank: its GPU, its shard, the all-reduce with the others.
fn run_rank(rank: usize) -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = std::env::var("MEMPLAN_RANKS")?.parse()?;
    let id = UniqueId::from_hex(&std::env::var("MEMPLAN_NCCL_ID")?)?;

    let ctx = Context::new(rank)?;
    let batch = batch(count);
    // `new` makes everything, then joins: the other ranks wait for a join.
    let world = Rank { id, count, rank };
    let mut step = RankStep::new(&ctx, &world, SHARD)?;
    step.host_mut()
        .mine
        .copy_from_slice(&batch[rank * SHARD..(rank + 1) * SHARD]);
    step.run()?;

    common::verify(
        &format!("rank {rank}'s summed gradient"),
        step.host().sum,
        &expected(&batch, count),
    )?;
    println!("rank {rank} of {count} ran on {}", ctx.device_name()?);
    Ok(())
}
