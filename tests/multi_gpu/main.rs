//! Tests on several GPUs, in a binary of their own: NCCL's kernels hang
//! when another thread of the process allocates or frees GPU memory while
//! they are being launched, which the single-GPU tests, run in parallel,
//! would do. Ignored, with the reason, below two GPUs.

#[macro_use]
#[path = "../gpu/harness.rs"]
#[allow(dead_code)] // what only the single-GPU tests use
mod harness;
mod collectives;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    libtest_mimic::run(&args, harness::trials_on(2, collectives::TESTS)).exit();
}
