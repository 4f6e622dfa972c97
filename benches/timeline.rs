//! What timing shows and what it costs, on the 4-stream x 16-chunk vector
//! add (64M floats, `RoundRobin` of `examples/common/pipeline.rs`), in one
//! process:
//!
//! 1. A 16 MiB pinned upload alone, timed the way `benches/bandwidth`
//!    times it (host clock around the copy and a stream sync), and a
//!    256 MiB one: the bandwidth an upload gets on an idle engine.
//! 2. The plan's report with CUPTI timing: the uploads that ran alone on
//!    the host-to-device engine (no other upload overlapping), their
//!    bandwidth against (1), and how busy the engine was. Then the same
//!    uploads timed by events, which count queued time.
//! 3. The plan's `run` call untimed, timed by CUPTI and timed by events
//!    (the report made included): medians of `RUNS` runs taken in turns,
//!    and the ratios. CUPTI, once on, records the untimed runs' driver
//!    calls too: the ratio is what building the report adds, not what
//!    CUPTI's recording costs (`benches/small_ops` measures that).
//!
//! It writes the CUPTI-timed runs' pictures and traces under
//! `MEMPLAN_DEMO_DIR` (or `target/memplan-demo`). Run it with
//! `cargo xtask bench`, or `benches/timeline` in the gpu-bundle.

#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../examples/common/pipeline.rs"]
mod pipeline;

use common::median;

use memplan::{
    Clock, Context, DeviceBuffer, OpKind, OpTiming, PinnedBuffer, ResultExt, RunReport, Stream,
    Timeline, Timing, copy,
};
use pipeline::{Pipelined, RoundRobin};
use std::time::Instant;

const N: usize = 64 << 20;
const CHUNKS: usize = 16;
const STREAMS: usize = 4;
const RUNS: usize = 9;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_skip("timeline")? else {
        return Ok(());
    };
    println!("timeline on {}", ctx.device_name()?);
    let m = N / CHUNKS;
    let chunk_bytes = m * 4;

    // 1. An upload alone.
    let alone = upload_alone(&ctx, chunk_bytes)?;
    let alone_large = upload_alone(&ctx, 256 << 20)?;
    println!(
        "upload alone, pinned, host clock around copy + sync (as benches/bandwidth): {} MiB {alone:.2} GB/s, 256 MiB {alone_large:.2} GB/s",
        chunk_bytes >> 20
    );

    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..N).map(|i| 1000.0 - (i % 777) as f32).collect();
    let mut plans = [
        RoundRobin::new(&ctx, N, m, CHUNKS, STREAMS)?,
        RoundRobin::new(&ctx, N, m, CHUNKS, STREAMS)?,
        RoundRobin::new(&ctx, N, m, CHUNKS, STREAMS)?,
    ];
    for plan in &mut plans {
        plan.host_mut().a.copy_from_slice(&a);
        plan.host_mut().b.copy_from_slice(&b);
    }
    let [untimed, by_engine, by_events] = &mut plans;
    by_engine.set_timing(true)?;
    by_events.set_timing(Timing::Events)?;

    // 3 (measured first, so that 2 reads the last, warm runs).
    let mut walls = [Vec::new(), Vec::new(), Vec::new()];
    let mut last = [None, None, None];
    for round in 0..=RUNS {
        for turn in 0..3 {
            let which = (round + turn) % 3;
            // The whole call, report included (CUPTI's records are read
            // before `run` returns).
            let started = Instant::now();
            let report = match which {
                0 => untimed.run()?,
                1 => by_engine.run()?,
                _ => by_events.run()?,
            };
            if round > 0 {
                walls[which].push(started.elapsed().as_secs_f64() * 1e3);
            }
            last[which] = Some(report);
        }
    }
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    common::verify("c", by_engine.host().c, &expected)?;
    let [_, engine, events] = last.map(|r| r.expect("each plan ran"));
    match &engine.clock {
        Clock::Engine { .. } => {}
        clock => println!("CUPTI did not time the runs: {}", clock.describe()),
    }

    // 2. What the reports show of the uploads.
    let uploads = alone_on_engine(&engine, OpKind::CopyHostToDevice);
    let all_uploads = engine
        .ops
        .iter()
        .filter(|t| t.op.kind == OpKind::CopyHostToDevice)
        .count();
    if uploads.is_empty() {
        println!("no upload ran alone on its engine");
    } else {
        let mut rates: Vec<f64> = uploads.iter().filter_map(|t| t.gb_per_s()).collect();
        let rate = median(&mut rates);
        println!(
            "{} of {all_uploads} uploads ran alone on the H2D engine: median {rate:.2} GB/s = {:.3}x the upload alone ({}), {:.3}x 256 MiB",
            uploads.len(),
            rate / alone,
            engine.clock.describe(),
            rate / alone_large
        );
    }
    let busy = engine.busy_share(OpKind::CopyHostToDevice);
    println!(
        "H2D engine busy {:.1}% of the time from the first upload's start to the last's end",
        busy * 100.0
    );
    let mut event_rates: Vec<f64> = events
        .ops
        .iter()
        .filter(|t| t.op.kind == OpKind::CopyHostToDevice)
        .filter_map(|t| t.gb_per_s())
        .collect();
    let event_rate = median(&mut event_rates);
    println!(
        "the same uploads timed by events (queued time included): median {event_rate:.2} GB/s"
    );

    // 3, printed.
    let [plain, engine_ms, events_ms] = walls.map(|mut ms| median(&mut ms));
    println!("run time, median of {RUNS} runs in turns:");
    println!("  untimed            {plain:8.3} ms (CUPTI recording the process)");
    println!(
        "  timed by CUPTI     {engine_ms:8.3} ms  {:.3}x untimed",
        engine_ms / plain
    );
    println!(
        "  timed by events    {events_ms:8.3} ms  {:.3}x untimed",
        events_ms / plain
    );

    // The pictures: the round-robin run, and three runs of the pipelined
    // schedule in one timeline.
    common::save_timeline("round_robin_4x16", &Timeline::from(engine))?;
    let mut pipelined = Pipelined::new(&ctx, N, N / 32, 32)?;
    pipelined.host_mut().a.copy_from_slice(&a);
    pipelined.host_mut().b.copy_from_slice(&b);
    pipelined.set_timing(true)?;
    pipelined.run()?;
    let mut timeline = Timeline::new();
    for _ in 0..3 {
        timeline.add(pipelined.run()?);
    }
    common::save_timeline("pipelined_3_runs", &timeline)?;
    Ok(())
}

/// GB/s of a pinned upload of `bytes`, as benches/bandwidth times it: the
/// median of 30 copies, host clock around the copy and a sync.
fn upload_alone(ctx: &Context, bytes: usize) -> Result<f64, memplan::Error> {
    let stream = Stream::new(ctx)?;
    let mut host = PinnedBuffer::<u8>::new(ctx, bytes)?;
    host.fill(1);
    let device = DeviceBuffer::<u8>::new(ctx, bytes)?;
    let mut times = Vec::new();
    for rep in 0..32 {
        let start = Instant::now();
        // SAFETY: both buffers outlive the sync below.
        unsafe { copy::htod_async(&stream, &host, .., &device, ..) }
            .at("upload", memplan::Location::caller())?;
        stream.synchronize()?;
        if rep >= 2 {
            times.push(start.elapsed().as_secs_f64());
        }
    }
    Ok(bytes as f64 / median(&mut times) / 1e9)
}

/// The ops of `kind` that no other op of that kind overlapped.
fn alone_on_engine(report: &RunReport, kind: OpKind) -> Vec<&OpTiming> {
    let ops: Vec<&OpTiming> = report.ops.iter().filter(|t| t.op.kind == kind).collect();
    ops.iter()
        .filter(|op| {
            !ops.iter().any(|other| {
                !std::ptr::eq(**op, *other)
                    && other.start_ms < op.end_ms
                    && op.start_ms < other.end_ms
            })
        })
        .copied()
        .collect()
}
