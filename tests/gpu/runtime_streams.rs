//! memplan-runtime on a GPU: streams, events and graphs order work the way
//! they promise.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::{
    DeviceBuffer, Event, Graph, HostAlloc, LaunchConfig, Module, PinnedBuffer, Priority, Stream,
    blocks, copy, scope,
};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "runtime::streams::events_order_streams_and_can_be_waited_twice",
        events_order_streams_and_can_be_waited_twice,
    ),
    (
        "runtime::streams::timed_events_time_a_copy",
        timed_events_time_a_copy,
    ),
    ("runtime::streams::priorities", priorities),
    (
        "runtime::streams::graph_replays_match_the_direct_stream",
        graph_replays_match_the_direct_stream,
    ),
    (
        "runtime::streams::a_failed_scope_still_waits",
        a_failed_scope_still_waits,
    ),
];

const N: usize = 1 << 20;

fn events_order_streams_and_can_be_waited_twice() -> Result<(), Failed> {
    let ctx = context()?;
    let kernel = Module::from_image(&ctx, &memplan_kernels::ADD_ONE)?.kernel("process_data")?;
    let (copies, compute) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let mut loaded = Event::new(&ctx)?;
    let first = floats(N);
    let second = floats(N);
    let inputs = [
        PinnedBuffer::from_slice(&ctx, &first, HostAlloc::PINNED)?,
        PinnedBuffer::from_slice(&ctx, &second, HostAlloc::PINNED)?,
    ];
    let devices = [
        DeviceBuffer::<f32>::new(&ctx, N)?,
        DeviceBuffer::<f32>::new(&ctx, N)?,
    ];
    let config = LaunchConfig::new(blocks(N, 256), 256, 0);
    scope(|s| {
        for (input, device) in inputs.iter().zip(&devices) {
            s.copy(&copies, input, device)?;
            let copied = s.record(&mut loaded, &copies)?; // the same event, recorded twice
            s.wait(&compute, copied)?;
            s.wait(&compute, copied)?; // and a record waited for twice
            // SAFETY: process_data over the N floats of `device`, borrowed past the scope.
            unsafe { s.launch(&compute, &kernel, config, (device.device_ptr(), N as i32))? };
        }
        Ok(())
    })?;
    for (device, data) in devices.iter().zip([&first, &second]) {
        let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
        same(
            "copy on one stream, add one on another",
            &device.to_vec()?,
            &expected,
        )?;
    }
    ensure!(
        loaded.is_complete()?,
        "the event is not complete after its stream finished"
    );
    Ok(())
}

fn timed_events_time_a_copy() -> Result<(), Failed> {
    let ctx = context()?;
    let bytes = 64 << 20;
    let host = PinnedBuffer::<u8>::new(&ctx, bytes)?;
    let device = DeviceBuffer::<u8>::new(&ctx, bytes)?;
    let stream = Stream::new(&ctx)?;
    let (mut start, mut end) = (Event::timed(&ctx)?, Event::timed(&ctx)?);
    scope(|s| {
        s.record(&mut start, &stream)?;
        s.copy(&stream, &host, &device)?;
        s.record(&mut end, &stream).map(drop)
    })?;
    let ms = end.elapsed_ms(&start)?;
    // What a timing is, not how fast the copy was: speeds belong in the
    // benchmarks, where nothing shares the copy engine with them.
    ensure!(
        ms.is_finite() && ms > 0.0,
        "64 MiB timed as {ms} ms between two completed events"
    );
    ensure!(
        start.is_complete()? && end.is_complete()?,
        "an event of a finished stream is not complete"
    );
    Ok(())
}

fn priorities() -> Result<(), Failed> {
    let ctx = context()?;
    let (lowest, highest) = ctx.stream_priority_range()?;
    ensure!(
        highest <= lowest,
        "CUDA counts priorities down, got range ({lowest}, {highest})"
    );
    let urgent = Stream::with_priority(&ctx, Priority::High)?;
    let normal = Stream::new(&ctx)?;
    ensure!(
        urgent.priority()? == highest,
        "high priority is {}, expected {highest}",
        urgent.priority()?
    );
    ensure!(
        normal.priority()? == 0,
        "normal priority is {}",
        normal.priority()?
    );
    ensure!(urgent.is_idle()?, "a new stream is busy");
    Ok(())
}

fn graph_replays_match_the_direct_stream() -> Result<(), Failed> {
    let ctx = context()?;
    let kernel = Module::from_image(&ctx, &memplan_kernels::ADD_ONE)?.kernel("process_data")?;
    let (copies, compute) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let loaded = Event::new(&ctx)?;
    let mut input = PinnedBuffer::<f32>::new(&ctx, N)?;
    let mut output = PinnedBuffer::<f32>::new(&ctx, N)?;
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let config = LaunchConfig::new(blocks(N, 256), 256, 0);

    // The work, queued on two streams: upload, then add one and download.
    // SAFETY (both uses): the buffers outlive the graph and every queued
    // run, and the host touches them only after synchronizing `compute`.
    let queue =
        |input: &PinnedBuffer<f32>, output: &mut PinnedBuffer<f32>| -> memplan::Result<()> {
            unsafe {
                let at = memplan::Location::caller();
                use memplan::ResultExt;
                copy::htod_async(&copies, input, .., &device, ..).at("upload", at)?;
                loaded.record(&copies)?;
                compute.wait(&loaded)?;
                kernel
                    .launch(&compute, config, (device.device_ptr(), N as i32))
                    .at("add one", at)?;
                copy::dtoh_async(&compute, &device, .., output, ..)
                    .map(drop)
                    .at("download", at)
            }
        };

    let data = floats(N);
    input.copy_from_slice(&data);
    queue(&input, &mut output)?;
    compute.synchronize()?;
    let direct = output.to_vec();

    let graph = unsafe { Graph::capture(&[&copies, &compute], || queue(&input, &mut output))? };
    for replay in 0..5 {
        let data = if replay == 0 { data.clone() } else { floats(N) };
        input.copy_from_slice(&data);
        output.fill(-7777.0);
        // SAFETY: the host touches the buffers again only after the sync.
        unsafe { graph.launch(&copies)? };
        copies.synchronize()?;
        let expected: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
        same(&format!("graph replay {replay}"), &output, &expected)?;
        if replay == 0 {
            same("graph against direct stream", &output, &direct)?;
        }
    }
    Ok(())
}

fn a_failed_scope_still_waits() -> Result<(), Failed> {
    let ctx = context()?;
    let data = floats(N);
    let input = PinnedBuffer::from_slice(&ctx, &data, HostAlloc::PINNED)?;
    let device = DeviceBuffer::<f32>::new(&ctx, N)?;
    let stream = Stream::new(&ctx)?;
    let result = scope(|s| {
        s.copy(&stream, &input, &device)?;
        s.copy_range(&stream, &input, .., &device, 1..) // one element short: refused
    });
    let error = result
        .err()
        .ok_or("a copy into a shorter range was accepted")?;
    ensure!(
        matches!(error.fault(), memplan::Fault::LengthMismatch { source: N, destination } if *destination == N - 1),
        "unexpected error: {error}"
    );
    ensure!(
        stream.is_idle()?,
        "the scope returned before its stream finished"
    );
    same("the copy before the failure", &device.to_vec()?, &data)
}
