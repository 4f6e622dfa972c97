// The ways to get host memory the GPU can use: portable and write-combined
// pinned memory for uploads, mapped memory a kernel writes directly, and a
// `Vec` the caller already has, page-locked in place for the run
// (`registered`) instead of copied into a pinned buffer first.

#[path = "common/mod.rs"]
mod common;

use memplan::prelude::*;

memplan! {
    /// Doubles an upload buffer into mapped memory, and the caller's samples
    /// in place.
    pub plan Doubler(n: usize, samples: &mut [f32; n] registered) {
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;

        // Written by the host, read by the device: write-combined is fastest.
        host   upload: [f32; n] pinned(write_combined, portable);
        // Written by a kernel over the bus, read by the host after the run.
        host   doubled: [f32; n] pinned(mapped, portable);
        device staging: [f32; n], result: [f32; n];
        stream work;

        on work {
            copy upload -> staging;
            launch scale_by_two<<<blocks(n, 256), 256>>>(staging, doubled, n as i32);
            copy samples -> staging;
            launch scale_by_two<<<blocks(n, 256), 256>>>(staging, result, n as i32);
            copy result -> samples;
        }
    }
}

const N: usize = 1 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(Doubler::SUMMARY, Doubler::DIAGRAM)? else {
        return Ok(());
    };
    let upload: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut samples: Vec<f32> = (0..N).map(|i| 1.0 - i as f32 / N as f32).collect();
    let expected_samples: Vec<f32> = samples.iter().map(|x| 2.0 * x).collect();

    let mut plan = Doubler::new(&ctx, N)?;
    // Write-combined memory is written once, in order, and never read back.
    plan.host_mut().upload.copy_from_slice(&upload);
    plan.set_timing(true)?;

    let report = plan.run(&mut samples)?;

    let expected_doubled: Vec<f32> = upload.iter().map(|x| 2.0 * x).collect();
    common::verify(
        "kernel writing mapped memory",
        plan.host().doubled,
        &expected_doubled,
    )?;
    common::verify(
        "registered Vec, doubled in place",
        &samples,
        &expected_samples,
    )?;
    print!("{report}");
    common::save_timeline("host_alloc_flags", &Timeline::from(report))?;
    Ok(())
}
