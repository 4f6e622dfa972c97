//! Tests on several GPUs, in a binary of their own: NCCL's kernels hang
//! when another thread of the process allocates or frees GPU memory while
//! they are being launched, which the single-GPU tests, run in parallel,
//! would do. Ignored, with the reason, below two GPUs (those of one rank
//! alone, below one).

#[macro_use]
#[path = "../gpu/harness.rs"]
#[allow(dead_code)] // what only the single-GPU tests use
mod harness;
mod collectives;
#[path = "../gpu/placed.rs"]
#[allow(dead_code)] // the single-GPU suite's list
mod placed;
mod plans;
#[path = "../gpu/reports.rs"]
mod reports;
mod timing;

use harness::GpuTest;
use libtest_mimic::Failed;

/// Plans placed on GPUs (`gpus gpu[g]`), on every GPU of the host.
const PLACED: &[(&str, GpuTest)] = &[
    ("multi_gpu::placed::a_shard_on_each_gpu", || on_every_gpu(0)),
    ("multi_gpu::placed::work_passes_from_gpu_to_gpu", || {
        on_every_gpu(1)
    }),
    (
        "multi_gpu::placed::a_kernel_reaches_another_gpus_memory_with_peer",
        || on_every_gpu(2),
    ),
    ("multi_gpu::placed::new_checks_the_gpus_it_is_given", || {
        on_every_gpu(3)
    }),
    ("multi_gpu::placed::timing_a_plan_on_several_gpus", || {
        on_every_gpu(4)
    }),
    (
        "multi_gpu::placed::plans_on_several_gpus_replay_as_graphs",
        || on_every_gpu(6),
    ),
];

fn on_every_gpu(check: usize) -> Result<(), Failed> {
    // Not beside another test's NCCL kernels (see `collectives`).
    let _alone = collectives::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let contexts = (0..memplan::Context::count())
        .map(memplan::Context::new)
        .collect::<memplan::Result<Vec<_>>>()?;
    (placed::CHECKS[check].1)(&contexts)
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let tests = [collectives::TESTS, plans::TESTS, PLACED, timing::TESTS].concat();
    let mut trials = harness::trials_on(2, &tests);
    // A job of one rank needs one GPU: these run on every GPU host.
    trials.extend(harness::trials_on(1, timing::ONE_GPU));
    libtest_mimic::run(&args, trials).exit();
}
