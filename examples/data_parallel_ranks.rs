// The data-parallel step of `data_parallel`, as one process per GPU: how a
// job spans hosts. Each rank opens its GPU, computes its gradient, joins
// the job's communicator, all-reduces, and checks the sum against the CPU.
//
// Started by a launcher, each process is one rank: `Job::from_env` reads
// the rank, the rank count and the local rank (so the GPU) from the
// launcher's variables, and the ranks meet through NCCL's own bootstrap at
// NCCL_COMM_ID=host:port, an address of rank 0's host. torchrun's
// MASTER_ADDR gives one (at MASTER_PORT + 1: torchrun's store holds
// MASTER_PORT); with srun or mpirun, set it. N ranks, one per GPU:
//
//   NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node=N --no-python ./data_parallel_ranks
//   mpirun -np N -x NCCL_COMM_ID=$(hostname):29500 -x NCCL_NVLS_ENABLE=0 ./data_parallel_ranks
//   NCCL_COMM_ID=$(hostname):29500 NCCL_NVLS_ENABLE=0 srun -n N ./data_parallel_ranks
//
// $(hostname) is where the command runs, which must be rank 0's host
// (mpirun's first host; a batch script's node, the allocation's first),
// and a name every host resolves to an address it reaches.
//
// Started plainly, with no launcher's variables, it is its own launcher on
// one host: it makes NCCL's unique id, starts itself once per GPU with
// MEMPLAN_RANK, MEMPLAN_RANKS and the id in MEMPLAN_NCCL_ID, and waits for
// them.
//
// `NCCL_NVLS_ENABLE` must be in every process's environment on machines of
// several GPUs (memplan starts NCCL only once it is chosen); the self-launch
// passes it to every process explicitly (0 unless it was set).
//
// Each rank's step is a plan that declares `ranks world;`: its `new` takes
// the rank, the rank count and the id, and joins the job's communicator.

#[path = "common/mod.rs"]
mod common;
#[path = "common/ranks.rs"]
mod ranks;

use memplan::nccl::{Job, UniqueId};
use memplan::{Context, Fault};
use ranks::{RankStep, SHARD, batch, expected};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let outcome = match Job::from_env() {
        Ok(job) => {
            // SAFETY: the first thing `main` does: no other thread runs yet.
            let meeting = unsafe { job.set_nccl_comm_id() };
            meeting.map_err(Into::into).and_then(|()| run_rank(&job))
        }
        Err(error) if matches!(error.fault(), Fault::NoLauncher(_)) => launch(),
        Err(error) => Err(error.into()),
    };
    // The messages say what to set or how to start the job: shown as
    // written, not as a debug dump.
    if let Err(error) = outcome {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
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
    let mut children = (0..count)
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
    loop {
        let mut running = false;
        let mut failed = None;
        for (rank, child) in children.iter_mut().enumerate() {
            match child.try_wait()? {
                None => running = true,
                Some(status) if !status.success() => failed = failed.or(Some((rank, status))),
                Some(_) => {}
            }
        }
        if let Some((rank, status)) = failed {
            for child in &mut children {
                let _ = child.kill();
                let _ = child.wait();
            }
            return Err(format!("launcher: rank {rank} failed ({status})").into());
        }
        if !running {
            println!("launcher: every rank holds the summed gradient");
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// One rank: its GPU, its shard, the all-reduce with the others.
fn run_rank(job: &Job) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::new(job.device()?)?;
    let world = job.nccl_rank()?;
    let (rank, count) = (job.rank, job.count);
    let batch = batch(count);
    // `new` makes everything, then joins: the other ranks wait for a join.
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
    println!(
        "rank {rank} of {count} (started by {}) ran on {}",
        job.launcher,
        ctx.device_name()?
    );
    Ok(())
}
