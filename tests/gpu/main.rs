//! GPU integration tests. One binary with its own harness (see harness.rs):
//! on a machine without a GPU every test shows as ignored, with the reason.

#[macro_use]
#[allow(dead_code)] // `trials_on`, which tests/multi_gpu uses
mod harness;
mod batches;
mod contracts;
mod data;
mod early;
mod kernels;
mod loops;
mod model_check;
mod placed;
mod plans;
mod replay;
mod reports;
mod runtime_errors;
mod runtime_memory;
mod runtime_streams;
mod sealed;
mod smoke;
mod threads;
mod timing;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let tests = [
        smoke::TESTS,
        runtime_memory::TESTS,
        runtime_streams::TESTS,
        runtime_errors::TESTS,
        plans::TESTS,
        placed::TESTS,
        sealed::TESTS,
        kernels::TESTS,
        early::TESTS,
        contracts::TESTS,
        loops::TESTS,
        batches::TESTS,
        replay::TESTS,
        threads::TESTS,
        timing::TESTS,
        model_check::TESTS,
    ]
    .concat();
    libtest_mimic::run(&args, harness::trials(&tests)).exit();
}
