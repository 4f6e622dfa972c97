//! The 64M-float vector add against the copy bound, in one process: the
//! one-stream plan, the 4-stream x 16-chunk round-robin loop, the pipelined
//! loop (a stream for each engine; 32 chunks) run directly and as a CUDA
//! graph, the same 4x16 schedule written with raw driver calls, and the
//! copy bound itself: 512 MiB host-to-device while 256 MiB goes
//! device-to-host on another stream, raw. Then the same with a kernel whose
//! time matches the copies, against max(copy bound, kernel time).
//!
//! Last, the batch loop of two plans in turns (`examples/batches`) over
//! small batches, where the host's share of a batch shows: each run queued
//! op by op, and each replayed from a CUDA graph changed to its batch's
//! length and scale; the time per batch of each.
//!
//! Each is the median of `RUNS` runs taken in turns (one of each, then the
//! next round), printed as milliseconds and as a ratio to the bound.
//!
//! Run it with `cargo xtask bench`, or `benches/pipeline` in the gpu-bundle.

#[path = "../examples/common/batches.rs"]
mod batch_loop;
#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../examples/common/pipeline.rs"]
mod pipeline;

use common::median;

use memplan::sys as cu;
use memplan::{
    Context, DeviceBuffer, Kernel, LaunchConfig, Module, PinnedBuffer, ResultExt, Stream, blocks,
    memplan,
};
use pipeline::{OneStream, Pipelined, RoundRobin};
use std::time::Instant;

const N: usize = 64 << 20;
const RUNS: usize = 9;

memplan! {
    /// `Pipelined` with a kernel of `rounds` multiply-adds per element.
    plan PipelinedHeavy(n: usize, m: usize, k: usize, rounds: i32) {
        kernel vadd_heavy(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32, rounds: i32) from memplan_kernels::VECTOR_ADD;
        host   a: [f32; n] pinned, b: [f32; n] pinned, c: [f32; n] pinned;
        device da: [f32; n], db: [f32; n], dc: [f32; n];
        stream up, add, down;
        event  loaded, added;
        for i in 0..k {
            let r = i * m..min(i * m + m, n);
            on up   { copy a[r] -> da[r]; copy b[r] -> db[r]; record loaded; }
            on add  { wait loaded; launch vadd_heavy<<<blocks(r.len(), 256), 256>>>(da[r], db[r], dc[r], r.len() as i32, rounds); record added; }
            on down { wait added; copy dc[r] -> c[r]; }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_skip("pipeline")? else {
        return Ok(());
    };
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..N).map(|i| 1000.0 - (i % 777) as f32).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();

    let mut one = OneStream::new(&ctx, N)?;
    one.host_mut().a.copy_from_slice(&a);
    one.host_mut().b.copy_from_slice(&b);
    let mut round_robin = RoundRobin::new(&ctx, N, N / 16, 16, 4)?;
    round_robin.host_mut().a.copy_from_slice(&a);
    round_robin.host_mut().b.copy_from_slice(&b);
    let (m, k) = (N / 32, 32);
    let mut pipelined = Pipelined::new(&ctx, N, m, k)?;
    pipelined.host_mut().a.copy_from_slice(&a);
    pipelined.host_mut().b.copy_from_slice(&b);
    let mut captured = Pipelined::new(&ctx, N, m, k)?;
    captured.host_mut().a.copy_from_slice(&a);
    captured.host_mut().b.copy_from_slice(&b);
    let mut graph = captured.graph()?;
    let mut raw = Raw::new(&ctx, &a, &b)?;

    let mut times = vec![Vec::new(); 6];
    for round in 0..RUNS + 1 {
        for turn in 0..6 {
            let which = (round + turn) % 6;
            let start = Instant::now();
            match which {
                0 => drop(one.run()?),
                1 => drop(round_robin.run()?),
                2 => drop(pipelined.run()?),
                3 => drop(graph.run()?),
                4 => raw.round_robin(16, 4)?,
                _ => raw.copy_bound()?,
            }
            if round > 0 {
                times[which].push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    drop(graph);
    for (what, got) in [
        ("one stream", one.host().c),
        ("round robin", round_robin.host().c),
        ("pipelined", pipelined.host().c),
        ("pipelined, graph", captured.host().c),
    ] {
        if got != expected.as_slice() {
            return Err(format!("{what}: the sums differ from the CPU's").into());
        }
    }
    raw.check(&expected)?;
    let medians: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
    let bound = medians[5];
    println!(
        "pipeline on {}: vector add of {N} floats, median of {RUNS} alternating runs, results checked",
        ctx.device_name()?
    );
    let rows = [
        ("copy bound (raw: 512 MiB up | 256 MiB down)", bound),
        ("one stream (memplan)", medians[0]),
        ("raw driver calls, 4 streams x 16 chunks", medians[4]),
        ("memplan loop, 4 streams x 16 chunks", medians[1]),
        ("memplan loop, stream per engine, 32 chunks", medians[2]),
        ("  the same as a CUDA graph", medians[3]),
    ];
    for (what, ms) in rows {
        println!("  {what:<46} {ms:8.3} ms  {:.3}x bound", ms / bound);
    }
    drop((one, round_robin, pipelined, captured));

    chunk_counts(&ctx, &a, &b, &expected, &mut raw)?;
    heavy(&ctx, &a, &b, &expected, &mut raw)?;
    batches(&ctx)?;
    Ok(())
}

/// The batch loop of two plans in turns over 64 batches of 64K floats
/// (the last shorter, each with its own scale), run directly and replayed
/// from graphs, in turns: the median time per batch of each.
fn batches(ctx: &Context) -> Result<(), Box<dyn std::error::Error>> {
    use batch_loop::{Saxpy, in_turns};
    use memplan::Replay;
    const BATCH: usize = 1 << 16;
    const BATCHES: usize = 64;
    let total = BATCHES * BATCH - BATCH / 3;
    let x: Vec<f32> = (0..total).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..total).map(|i| (i % 333) as f32).collect();
    let a = |k: usize| 1.0 + (k % 4) as f32;
    let expected: Vec<f32> = (0..total).map(|i| a(i / BATCH) * x[i] + y[i]).collect();
    let mut direct = [Saxpy::new(ctx, BATCH, 1)?, Saxpy::new(ctx, BATCH, 1)?];
    let mut replayed = [Saxpy::new(ctx, BATCH, 1)?, Saxpy::new(ctx, BATCH, 1)?];
    for plan in &mut replayed {
        plan.set_replay(Replay::Graph)?;
    }
    let mut times = [Vec::new(), Vec::new()];
    let mut outs = [vec![f32::NAN; total], vec![f32::NAN; total]];
    for round in 0..RUNS + 1 {
        for turn in 0..2 {
            let which = (round + turn) % 2;
            let plans = if which == 0 {
                &mut direct
            } else {
                &mut replayed
            };
            let start = Instant::now();
            in_turns(plans, &x, &y, a, &mut outs[which])?;
            if round > 0 {
                times[which].push(start.elapsed().as_secs_f64() * 1e3 / BATCHES as f64);
            }
        }
    }
    common::verify("batches in turns", &outs[0], &expected)?;
    common::verify("batches in turns, replayed", &outs[1], &expected)?;
    let [direct_ms, replayed_ms] = times.map(|mut t| median(&mut t));
    println!(
        "batches: two plans in turns, {BATCHES} batches of up to {BATCH} floats, median of {RUNS} loops:"
    );
    println!("  each run queued op by op       {direct_ms:8.4} ms a batch");
    println!(
        "  each run replayed as a graph   {replayed_ms:8.4} ms a batch, {:.3}x",
        replayed_ms / direct_ms
    );
    Ok(())
}

/// The pipelined loop with 16 to 256 chunks: fewer chunks leave more time
/// in which only one engine works (the first upload, the last download),
/// more pay a gap between copies each.
fn chunk_counts(
    ctx: &Context,
    a: &[f32],
    b: &[f32],
    expected: &[f32],
    raw: &mut Raw,
) -> Result<(), Box<dyn std::error::Error>> {
    let counts = [16, 32, 64, 128, 256];
    let mut plans = Vec::new();
    for k in counts {
        let mut plan = Pipelined::new(ctx, N, N.div_ceil(k), k)?;
        plan.host_mut().a.copy_from_slice(a);
        plan.host_mut().b.copy_from_slice(b);
        plans.push(plan);
    }
    let mut times = vec![Vec::new(); counts.len() + 1];
    for round in 0..RUNS + 1 {
        for turn in 0..=counts.len() {
            let which = (round + turn) % (counts.len() + 1);
            let ms = match plans.get_mut(which) {
                Some(plan) => {
                    let start = Instant::now();
                    plan.run()?;
                    start.elapsed().as_secs_f64() * 1e3
                }
                None => raw.timed(|r| r.copy_bound())?,
            };
            if round > 0 {
                times[which].push(ms);
            }
        }
    }
    for (k, plan) in counts.iter().zip(&plans) {
        if plan.host().c != expected {
            return Err(format!("pipelined, {k} chunks: the sums differ from the CPU's").into());
        }
    }
    let medians: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
    let bound = medians[counts.len()];
    println!(
        "the pipelined loop by chunk count, median of {RUNS} alternating runs (bound {bound:.3} ms):"
    );
    for (k, ms) in counts.iter().zip(&medians) {
        println!("  {k:>4} chunks {ms:8.3} ms  {:.3}x bound", ms / bound);
    }
    Ok(())
}

/// The pipelined loop with a kernel as slow as the copies.
fn heavy(
    ctx: &Context,
    a: &[f32],
    b: &[f32],
    expected: &[f32],
    raw: &mut Raw,
) -> Result<(), Box<dyn std::error::Error>> {
    // Rounds for a kernel over all N elements about as long as the copies.
    let bound = median(
        &mut (0..5)
            .map(|_| raw.timed(|r| r.copy_bound()))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let probe = 256;
    let probe_ms = median(
        &mut (0..5)
            .map(|_| raw.timed(|r| r.heavy_kernel(probe)))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let rounds = ((probe as f64 * bound / probe_ms) as i32).max(1);
    let (m, k) = (N / 32, 32);
    let mut plan = PipelinedHeavy::new(ctx, N, m, k, rounds)?;
    plan.host_mut().a.copy_from_slice(a);
    plan.host_mut().b.copy_from_slice(b);
    let (mut plan_ms, mut kernel_ms, mut bound_ms) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..RUNS + 1 {
        for turn in 0..3 {
            let ms = match (round + turn) % 3 {
                0 => {
                    let start = Instant::now();
                    plan.run()?;
                    start.elapsed().as_secs_f64() * 1e3
                }
                1 => raw.timed(|r| r.heavy_kernel(rounds))?,
                _ => raw.timed(|r| r.copy_bound())?,
            };
            if round > 0 {
                [&mut plan_ms, &mut kernel_ms, &mut bound_ms][(round + turn) % 3].push(ms);
            }
        }
    }
    if plan.host().c != expected {
        return Err("heavy pipelined: the sums differ from the CPU's".into());
    }
    let (plan_ms, kernel_ms, bound_ms) = (
        median(&mut plan_ms),
        median(&mut kernel_ms),
        median(&mut bound_ms),
    );
    let limit = kernel_ms.max(bound_ms);
    println!(
        "with a kernel of {rounds} multiply-adds per element, median of {RUNS} alternating runs:"
    );
    println!("  copy bound                                      {bound_ms:8.3} ms");
    println!("  kernel alone, all {N} elements (raw)        {kernel_ms:8.3} ms");
    println!(
        "  memplan loop, stream per engine, 32 chunks      {plan_ms:8.3} ms  {:.3}x max(bound, kernel)",
        plan_ms / limit
    );
    Ok(())
}

/// The baselines, with raw driver calls on buffers of their own.
struct Raw {
    a: PinnedBuffer<f32>,
    b: PinnedBuffer<f32>,
    c: PinnedBuffer<f32>,
    da: DeviceBuffer<f32>,
    db: DeviceBuffer<f32>,
    dc: DeviceBuffer<f32>,
    /// 512 MiB for the copy bound's upload.
    up: DeviceBuffer<f32>,
    up_from: PinnedBuffer<f32>,
    streams: Vec<Stream>,
    vadd: Kernel,
    heavy: Kernel,
}

impl Raw {
    fn new(ctx: &Context, a: &[f32], b: &[f32]) -> memplan::Result<Raw> {
        let module = Module::from_image(ctx, &memplan_kernels::VECTOR_ADD)?;
        let pinned = |data: &[f32]| PinnedBuffer::from_slice(ctx, data, memplan::HostAlloc::PINNED);
        Ok(Raw {
            a: pinned(a)?,
            b: pinned(b)?,
            c: PinnedBuffer::new(ctx, N)?,
            da: DeviceBuffer::new(ctx, N)?,
            db: DeviceBuffer::new(ctx, N)?,
            dc: DeviceBuffer::zeroed(ctx, N)?,
            up: DeviceBuffer::new(ctx, 2 * N)?,
            up_from: PinnedBuffer::new(ctx, 2 * N)?,
            streams: (0..4)
                .map(|_| Stream::new(ctx))
                .collect::<memplan::Result<_>>()?,
            vadd: module.kernel("vadd")?,
            heavy: module.kernel("vadd_heavy")?,
        })
    }

    /// Milliseconds `work` takes.
    fn timed(
        &mut self,
        work: impl FnOnce(&mut Self) -> memplan::Result<()>,
    ) -> memplan::Result<f64> {
        let start = Instant::now();
        work(self)?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    /// `chunks` chunks round robin over `streams` streams, each uploaded,
    /// added and downloaded on its stream.
    fn round_robin(&mut self, chunks: usize, streams: usize) -> memplan::Result<()> {
        let m = N / chunks;
        let at = memplan::Location::caller();
        for i in 0..chunks {
            let stream = &self.streams[i % streams];
            let offset = (i * m * 4) as u64;
            let bytes = m * 4;
            // SAFETY: chunk `i` of buffers of N floats, alive past the wait.
            unsafe {
                check(
                    cu::cuMemcpyHtoDAsync_v2(
                        self.da.device_ptr().as_raw() + offset,
                        self.a.as_ptr().add(i * m).cast(),
                        bytes,
                        stream.raw(),
                    ),
                    at,
                )?;
                check(
                    cu::cuMemcpyHtoDAsync_v2(
                        self.db.device_ptr().as_raw() + offset,
                        self.b.as_ptr().add(i * m).cast(),
                        bytes,
                        stream.raw(),
                    ),
                    at,
                )?;
                self.vadd
                    .launch(
                        stream,
                        LaunchConfig::new(blocks(m, 256), 256, 0),
                        (
                            self.da.device_ptr().as_raw() + offset,
                            self.db.device_ptr().as_raw() + offset,
                            self.dc.device_ptr().as_raw() + offset,
                            m as i32,
                        ),
                    )
                    .at("cuLaunchKernel", at)?;
                check(
                    cu::cuMemcpyDtoHAsync_v2(
                        self.c.as_mut_ptr().add(i * m).cast(),
                        self.dc.device_ptr().as_raw() + offset,
                        bytes,
                        stream.raw(),
                    ),
                    at,
                )?;
            }
        }
        self.streams.iter().try_for_each(Stream::synchronize)
    }

    /// 512 MiB up on one stream while 256 MiB goes down on another.
    fn copy_bound(&mut self) -> memplan::Result<()> {
        let at = memplan::Location::caller();
        // SAFETY: whole buffers of the right sizes, alive past the wait.
        unsafe {
            check(
                cu::cuMemcpyHtoDAsync_v2(
                    self.up.device_ptr().as_raw(),
                    self.up_from.as_ptr().cast(),
                    2 * N * 4,
                    self.streams[0].raw(),
                ),
                at,
            )?;
            check(
                cu::cuMemcpyDtoHAsync_v2(
                    self.c.as_mut_ptr().cast(),
                    self.dc.device_ptr().as_raw(),
                    N * 4,
                    self.streams[1].raw(),
                ),
                at,
            )?;
        }
        self.streams[0].synchronize()?;
        self.streams[1].synchronize()
    }

    /// The heavy kernel over all N elements, alone.
    fn heavy_kernel(&mut self, rounds: i32) -> memplan::Result<()> {
        // SAFETY: vadd_heavy(const float*, const float*, float*, int, int)
        // over buffers of N floats.
        unsafe {
            self.heavy
                .launch(
                    &self.streams[2],
                    LaunchConfig::new(blocks(N, 256), 256, 0),
                    (
                        self.da.device_ptr().as_raw(),
                        self.db.device_ptr().as_raw(),
                        self.dc.device_ptr().as_raw(),
                        N as i32,
                        rounds,
                    ),
                )
                .at("cuLaunchKernel", memplan::Location::caller())?;
        }
        self.streams[2].synchronize()
    }

    /// The raw round robin's sums, against the CPU's.
    fn check(&mut self, expected: &[f32]) -> Result<(), String> {
        self.round_robin(16, 4).map_err(|e| e.to_string())?;
        if &self.c[..] == expected {
            Ok(())
        } else {
            Err("raw round robin: the sums differ from the CPU's".into())
        }
    }
}

fn check(status: cu::CUresult, at: memplan::Location) -> memplan::Result<()> {
    if status == cu::cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(memplan::Fault::Driver(memplan::DriverError(status as u32))).at("raw call", at)
    }
}
