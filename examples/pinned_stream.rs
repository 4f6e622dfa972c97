// Pinned host memory, asynchronous copies and a kernel on one stream: add
// one to a million floats. Pinned memory lets the copies run by DMA at full
// bus speed while the host is free; queuing all three operations on one
// stream keeps them in order without the host waiting in between.

#[path = "common/mod.rs"]
mod common;

use memplan::prelude::*;

memplan! {
    /// Adds one to every element: upload, kernel, download, all queued on
    /// one stream.
    pub plan AddOne(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;

        host   data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream work;

        on work {
            copy data -> on_gpu;
            launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
            copy on_gpu -> data;
        }
    }
}

const N: usize = 1 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(AddOne::SUMMARY, AddOne::DIAGRAM)? else {
        return Ok(());
    };
    let mut plan = AddOne::new(&ctx, N)?;
    let input: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 1000.0).collect();
    plan.host_mut().data.copy_from_slice(&input);
    plan.set_timing(true)?;

    let report = plan.run()?;

    let expected: Vec<f32> = input.iter().map(|x| x + 1.0).collect();
    common::verify("add one", plan.host().data, &expected)?;
    print!("{report}");
    common::save_timeline("pinned_stream", &Timeline::from(report))?;
    Ok(())
}
