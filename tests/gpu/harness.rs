//! The GPU tests' harness: looks for a GPU once, then runs every test, or
//! reports each one as ignored with the reason when there is no GPU.
//!
//! `MEMPLAN_REQUIRE_GPU=1` (set by the gpu-bundle's run.sh) turns a missing
//! GPU into a failure, so that a GPU host never passes by skipping.

use libtest_mimic::{Completion, Failed, Trial};

/// A GPU test: `Err` with a message on failure.
pub type GpuTest = fn() -> Result<(), Failed>;

/// Why no GPU can be used here, or `None` if one can.
pub fn missing_gpu() -> Option<String> {
    use cust::sys::{cuDeviceGetCount, cuInit, cudaError_enum as E};
    // SAFETY: cuInit and cuDeviceGetCount only write the count we pass.
    let mut count = 0;
    let status = unsafe {
        match cuInit(0) {
            E::CUDA_SUCCESS => cuDeviceGetCount(&mut count),
            error => error,
        }
    };
    match status {
        E::CUDA_SUCCESS if count > 0 => None,
        E::CUDA_SUCCESS | E::CUDA_ERROR_NO_DEVICE => {
            Some("the NVIDIA driver reports no GPU".into())
        }
        E::CUDA_ERROR_STUB_LIBRARY => {
            Some("no NVIDIA driver: this machine runs memplan's driver stub".into())
        }
        error => Some(format!("the CUDA driver failed to start: {error:?}")),
    }
}

/// Wraps each test so that it runs only where there is a GPU.
pub fn trials(tests: &[(&'static str, GpuTest)]) -> Vec<Trial> {
    let missing = missing_gpu();
    let required = std::env::var_os("MEMPLAN_REQUIRE_GPU").is_some_and(|v| v == "1");
    tests
        .iter()
        .map(|&(name, test)| {
            let missing = missing.clone();
            Trial::ignorable_test(name, move || match missing {
                None => test().map(|()| Completion::Completed),
                Some(reason) if required => Err(format!("MEMPLAN_REQUIRE_GPU=1: {reason}").into()),
                Some(reason) => Ok(Completion::ignored_with(reason)),
            })
        })
        .collect()
}

/// Turns a failed check into a test failure that says what was expected.
#[macro_export]
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(format!($($message)+).into());
        }
    };
}
