//! `check` beside `new` on a GPU: the GPU's own limits are the ones
//! memplan's model of its compute capability holds, and a plan checked
//! against the GPU's model passes where `new` does and fails where `new`
//! fails for a reason that needs no GPU, with the same error.

use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::prelude::*;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "model_check::the_gpu_has_its_capabilitys_documented_limits",
        the_gpu_has_its_capabilitys_documented_limits,
    ),
    ("model_check::check_agrees_with_new", check_agrees_with_new),
];

memplan! {
    /// Adds one to `len` elements from `start`, in blocks of `threads`.
    plan Window(n: usize, start: usize, len: usize, threads: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream s;
        on s {
            copy data -> on_gpu;
            launch process_data<<<blocks(len, threads), threads>>>(
                on_gpu[start..start + len], len as i32
            );
            copy on_gpu -> data;
        }
    }
}

fn the_gpu_has_its_capabilitys_documented_limits() -> Result<(), Failed> {
    let ctx = context()?;
    let live = DeviceModel::of(&ctx)?;
    // A GPU newer than the table has no model to compare with.
    let Ok(listed) = DeviceModel::named(live.name()) else {
        return Ok(());
    };
    let limits = |model: &DeviceModel| {
        (
            model.compute_capability(),
            model.max_threads_per_block(),
            model.max_block_dims(),
            model.max_grid_dims(),
            model.max_shared_memory_per_block(),
        )
    };
    ensure!(
        limits(&live) == limits(&listed),
        "{} reports {:?}, and memplan's model of {} holds {:?}",
        ctx.device_name()?,
        limits(&live),
        listed.name(),
        limits(&listed)
    );
    Ok(())
}

fn check_agrees_with_new() -> Result<(), Failed> {
    let ctx = context()?;
    let model = DeviceModel::of(&ctx)?;
    let sizes = [
        // Passes.
        (1024, 0, 1024, 256),
        // The launch's range ends past the buffer.
        (1024, 1000, 100, 256),
        // Blocks of more threads than the GPU runs.
        (1024, 0, 1024, 2048),
    ];
    for (n, start, len, threads) in sizes {
        let made = Window::new(&ctx, n, start, len, threads).map(drop);
        let checked = Window::check(&model, n, start, len, threads).map(drop);
        ensure!(
            made == checked,
            "for ({n}, {start}, {len}, {threads}) `new` gave {made:?} and `check` {checked:?}"
        );
    }
    Ok(())
}
