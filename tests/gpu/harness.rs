//! The GPU tests' harness: looks for a GPU once, then runs every test, or
//! reports each one as ignored with the reason when there is no GPU.
//!
//! `MEMPLAN_REQUIRE_GPU=1` (set by the gpu-bundle's run.sh) turns a missing
//! GPU into a failure, so that a GPU host never passes by skipping.

use libtest_mimic::{Completion, Failed, Trial};

/// A GPU test: `Err` with a message on failure.
pub type GpuTest = fn() -> Result<(), Failed>;

/// Wraps each test so that it runs only where there is a GPU.
pub fn trials(tests: &[(&'static str, GpuTest)]) -> Vec<Trial> {
    let missing = memplan::Context::missing_gpu();
    let required = std::env::var_os("MEMPLAN_REQUIRE_GPU").is_some_and(|v| v == "1");
    wrap(tests, missing, required)
}

/// Wraps each test so that it runs only where there are `gpus` GPUs;
/// `MEMPLAN_REQUIRE_GPUS=n` (n at least `gpus`) turns fewer into a failure.
pub fn trials_on(gpus: usize, tests: &[(&'static str, GpuTest)]) -> Vec<Trial> {
    let count = memplan::Context::count();
    let needs = match gpus {
        1 => "needs a GPU".to_owned(),
        _ => format!("needs {gpus} GPUs"),
    };
    let missing = (count < gpus).then(|| match memplan::Context::missing_gpu() {
        Some(why) => format!("{needs}, and the driver sees {count} ({why})"),
        None => format!("{needs}, and the driver sees {count}"),
    });
    let required = std::env::var("MEMPLAN_REQUIRE_GPUS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n >= gpus);
    wrap(tests, missing, required)
}

fn wrap(tests: &[(&'static str, GpuTest)], missing: Option<String>, required: bool) -> Vec<Trial> {
    // `MEMPLAN_TEST_TRACE=1`: each test's start and end on stderr, as it
    // happens, to tell which tests a hung run is stuck in (the harness
    // names a test only once it has ended).
    let trace = std::env::var_os("MEMPLAN_TEST_TRACE").is_some_and(|v| v == "1");
    tests
        .iter()
        .map(|&(name, test)| {
            let missing = missing.clone();
            Trial::ignorable_test(name, move || match missing {
                None if trace => {
                    eprintln!("trace: start {name}");
                    let result = test();
                    eprintln!("trace: end {name}");
                    result.map(|()| Completion::Completed)
                }
                None => test().map(|()| Completion::Completed),
                Some(reason) if required => Err(format!("required here: {reason}").into()),
                Some(reason) => Ok(Completion::ignored_with(reason)),
            })
        })
        .collect()
}

/// GPU 0's context, for a test.
pub fn context() -> Result<memplan::Context, Failed> {
    Ok(memplan::Context::new(0)?)
}

/// Turns a failed check into a test failure that says what was expected.
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        let holds: bool = $condition;
        if !holds {
            return Err(format!($($message)+).into());
        }
    };
}
