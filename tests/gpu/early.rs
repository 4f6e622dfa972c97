//! Kernels that wait for the work before them first launch early
//! (programmatic dependent launch) where memplan-build proved it and the
//! GPU can: a long chain of them on one stream, run directly, replayed
//! from graphs whose nodes change in place, and queued by hand, gives
//! exactly what the CPU computes; kernels not proved launch as before.

use crate::data::same;
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{DeviceBuffer, LaunchConfig, Module, Replay, Stream, blocks, memplan};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "early::only_kernels_proved_to_wait_launch_early",
        only_kernels_proved_to_wait_launch_early,
    ),
    (
        "early::a_chain_of_early_launches_adds_up",
        a_chain_of_early_launches_adds_up,
    ),
];

memplan! {
    /// `k` launches of saxpy one after another on one stream, each adding
    /// `a * x` to `y`, after a fill: every launch but the first follows a
    /// kernel it may start beside.
    pub plan Chain(n: usize, k: usize, run len: usize <= n, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        host   x: [f32; n] pinned, y: [f32; n] pinned;
        device dx: [f32; n], dy: [f32; n];
        stream s;
        on s {
            copy x -> dx;
            copy y -> dy;
        }
        for i in 0..k {
            on s {
                launch saxpy<<<blocks(len, 256), 256>>>(len as i32, a, dx[..len], dy[..len]);
            }
        }
        on s {
            copy dy -> y;
        }
    }
}

fn only_kernels_proved_to_wait_launch_early() -> Result<(), Failed> {
    let ctx = context()?;
    let (major, minor) = ctx.compute_capability()?;
    let can = major >= 9;
    let saxpy = Module::from_image(&ctx, &memplan_kernels::SAXPY)?;
    for name in ["saxpy", "saxpy_rounds"] {
        let early = saxpy.kernel(name)?.launches_early();
        if early != can {
            return Err(format!("{name} on a {major}.{minor} GPU: launches early {early}").into());
        }
    }
    // A kernel that never waits, one that reads before it waits, and the
    // same fatbin's bytes loaded without memplan-build's signatures: never.
    let vadd = Module::from_image(&ctx, &memplan_kernels::VECTOR_ADD)?.kernel("vadd")?;
    let checks = Module::from_image(&ctx, &memplan_kernels::CHECKS)?;
    if checks.kernel("reads_then_waits")?.launches_early() {
        return Err("a kernel that reads before it waits launches early".into());
    }
    // SAFETY: nvcc's fatbin, as the image holds it.
    let bare = unsafe { Module::from_bytes(&ctx, memplan_kernels::SAXPY.bytes())? };
    if vadd.launches_early() || bare.kernel("saxpy")?.launches_early() {
        return Err("a kernel not proved to wait first launches early".into());
    }
    Ok(())
}

/// Small integers, so that every sum is exact in `f32`.
fn start(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let y = (0..n).map(|i| (i % 5) as f32).collect();
    (x, y)
}

/// `y + k * a * x` over the first `len` elements.
fn chained(x: &[f32], y: &[f32], k: usize, a: f32, len: usize) -> Vec<f32> {
    let mut out = y.to_vec();
    for (out, x) in out[..len].iter_mut().zip(x) {
        for _ in 0..k {
            *out += a * x;
        }
    }
    out
}

fn a_chain_of_early_launches_adds_up() -> Result<(), Failed> {
    let ctx = context()?;
    let (n, k) = (4096, 200);
    let (x, y) = start(n);
    for replay in [Replay::Direct, Replay::Graph] {
        let mut plan = Chain::new(&ctx, n, k)?;
        plan.set_replay(replay)?;
        // Lengths and values that change (nodes changed in place), the
        // same run again, an empty run.
        for (len, a) in [
            (n, 1.0),
            (n, 2.0),
            (n - 100, 2.0),
            (n - 100, 2.0),
            (0, 1.0),
            (n, -1.0),
        ] {
            plan.host_mut().x.copy_from_slice(&x);
            plan.host_mut().y.copy_from_slice(&y);
            plan.run(len, a)?;
            let what = format!("{replay:?}, {k} launches of length {len}, a = {a}");
            same(&what, plan.host().y, &chained(&x, &y, k, a, len))?;
        }
    }

    // By hand through `Kernel::launch`, which launches early too.
    let module = Module::from_image(&ctx, &memplan_kernels::SAXPY)?;
    let saxpy = module.kernel("saxpy")?;
    let stream = Stream::new(&ctx)?;
    let dx = DeviceBuffer::from_slice(&ctx, &x)?;
    let dy = DeviceBuffer::from_slice(&ctx, &y)?;
    for _ in 0..k {
        // SAFETY: saxpy(n, a, x, y) over `n` elements of both buffers,
        // which outlive the wait below.
        unsafe {
            saxpy.launch(
                &stream,
                LaunchConfig::new(blocks(n, 256), 256, 0),
                (n as i32, 0.5f32, dx.device_ptr(), dy.device_ptr()),
            )?;
        }
    }
    stream.synchronize()?;
    same("by hand", &dy.to_vec()?, &chained(&x, &y, k, 0.5, n))
}
