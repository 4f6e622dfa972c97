// Zero-copy: a kernel reads and writes mapped host memory directly over the
// bus, against the staged way (pinned memory, a copy in, the kernel on
// device memory, a copy out), timed side by side at 4K, 1M and 16M floats.
// For data touched once, zero-copy skips the staging and overlaps the
// transfer with the computation.

#[path = "common/mod.rs"]
mod common;

use memplan::prelude::*;

memplan! {
    /// out = 2 * in, with the kernel reading and writing host memory.
    pub plan ZeroCopy(n: usize) {
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;

        host   input: [f32; n] mapped, output: [f32; n] mapped;
        stream work;

        on work {
            launch scale_by_two<<<blocks(n, 256), 256>>>(input, output, n as i32);
        }
    }

    /// out = 2 * in, staged through device memory.
    pub plan Staged(n: usize) {
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;

        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device on_gpu_in: [f32; n], on_gpu_out: [f32; n];
        stream work;

        on work {
            copy input -> on_gpu_in;
            launch scale_by_two<<<blocks(n, 256), 256>>>(on_gpu_in, on_gpu_out, n as i32);
            copy on_gpu_out -> output;
        }
    }
}

const SIZES: [usize; 3] = [4 << 10, 1 << 20, 16 << 20];
const RUNS: usize = 15;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(ZeroCopy::SUMMARY, ZeroCopy::DIAGRAM)? else {
        return Ok(());
    };
    println!(
        "{:>10} {:>14} {:>14} {:>10}",
        "floats", "zero-copy ms", "staged ms", "staged/zc"
    );
    for n in SIZES {
        let input: Vec<f32> = (0..n).map(|i| (i % 4096) as f32 - 2048.5).collect();
        let expected: Vec<f32> = input.iter().map(|x| 2.0 * x).collect();

        let mut zero_copy = ZeroCopy::new(&ctx, n)?;
        zero_copy.host_mut().input.copy_from_slice(&input);
        let zero_copy_ms = common::median_ms(RUNS, || zero_copy.run())?;
        common::verify(
            &format!("zero-copy, {n} floats"),
            zero_copy.host().output,
            &expected,
        )?;

        let mut staged = Staged::new(&ctx, n)?;
        staged.host_mut().input.copy_from_slice(&input);
        let staged_ms = common::median_ms(RUNS, || staged.run())?;
        common::verify(
            &format!("staged, {n} floats"),
            staged.host().output,
            &expected,
        )?;

        println!(
            "{n:>10} {zero_copy_ms:>14.3} {staged_ms:>14.3} {:>10.2}",
            staged_ms / zero_copy_ms
        );
        if n == SIZES[SIZES.len() - 1] {
            // One timed run of each, one after the other, in one picture.
            zero_copy.set_timing(true)?;
            staged.set_timing(true)?;
            let timeline = Timeline::from_runs([zero_copy.run()?, staged.run()?]);
            common::save_timeline("zero_copy", &timeline)?;
        }
    }
    Ok(())
}
