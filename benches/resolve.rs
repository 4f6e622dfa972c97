//! The host's work for a launch that reads a run's inputs, without a GPU:
//! `check` unrolls and resolves a plan of 200 000 launches as `new` and
//! each run do (sizes, ranges, limits, the arguments laid out), and this
//! prints the time per launch. On an H100 machine, a launch resolved at
//! each run cost 0.31 us there against 3.3 to 4.1 us for
//! `cuLaunchKernel` itself (`notes/gpu-run-replay-one-gpu.log`); this runs
//! anywhere, so that the resolver can be profiled (`perf record`) without
//! one. A `check` allocates each step afresh, which a run reusing its
//! steps does not: read the numbers as an upper bound.
//!
//! Run it with `cargo bench --bench resolve`.

use memplan::prelude::*;
use std::time::Instant;

memplan! {
    /// `k` launches of saxpy after two fills.
    plan Launches(n: usize, k: usize) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        device x: [f32; n], y: [f32; n];
        stream work;
        on work {
            fill x with 1.0;
            fill y with 0.0;
        }
        for i in 0..k {
            on work {
                launch saxpy<<<blocks(n, 256), 256>>>(n as i32, 2.0, x[..n], y[..n]);
            }
        }
    }
}

fn main() -> memplan::Result<()> {
    let model = DeviceModel::named("sm_90")?;
    let launches = 200_000;
    let mut times = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        Launches::check(&model, 256, launches)?;
        times.push(start.elapsed().as_secs_f64() * 1e9 / launches as f64);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "resolve: {launches} launches checked against an sm_90 model, median of 7: {:.0} ns a launch (fastest {:.0})",
        times[3], times[0]
    );
    Ok(())
}
