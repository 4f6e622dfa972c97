//! Many small ops: a plan of 64 four-byte copies on one stream, against
//! the same 64 raw `cuMemcpy*Async` calls, in the same run, alternating.
//! Small copies cost the host a driver call each; this shows what memplan
//! adds to that (the median time per run of each, and their ratio), and
//! what a CUDA graph saves.
//!
//! Then plans of 1, 10 and 100 tiny kernel launches (and the two fills
//! that give them their input), which take a length and a value at each
//! run, against the same driver calls made by hand: run directly with the
//! same length and value each run (which resolves nothing again) and with
//! a value that changes each run (which resolves every launch again), and
//! replayed as CUDA graphs (`Replay::Graph`) with the same, a changing
//! value and a changing length; and the same driver calls captured by
//! hand into a graph, replayed unchanged: the driver's floor for replaying
//! them; and that graph with its value changed in place, by hand, both
//! ways the driver offers: each kernel node set (what a replayed plan
//! does), or the calls captured again and applied by `cuGraphExecUpdate`.
//! Each is timed twice: until the run is queued (the host's cost), and
//! until it is done. The by-hand calls launch through memplan's
//! `Kernel::launch`, as the plans do: memplan-kernels' saxpy waits for the
//! kernel before it first, so on GPUs of compute capability 9.0 and newer
//! both launch it early (programmatic dependent launch), and the table
//! says so.
//!
//! Run it with `cargo xtask bench`, or `benches/small_ops` in the gpu-bundle.

#[path = "../examples/common/mod.rs"]
mod common;

use common::median;
use memplan::sys as cu;
use memplan::{
    DeviceBuffer, Graph, HostAlloc, Kernel, LaunchConfig, Module, PinnedBuffer, Replay, ResultExt,
    Stream, blocks, memplan,
};
use std::time::Instant;

const OPS: usize = 64;
const REPS: usize = 2000;

memplan! {
    /// 32 single-element uploads, then 32 single-element downloads.
    plan SmallOps() {
        host   up: [u32; 32] pinned, down: [u32; 32] pinned;
        device on_gpu: [u32; 32];
        stream work;
        on work {
            copy up[0..1] -> on_gpu[0..1];
            copy up[1..2] -> on_gpu[1..2];
            copy up[2..3] -> on_gpu[2..3];
            copy up[3..4] -> on_gpu[3..4];
            copy up[4..5] -> on_gpu[4..5];
            copy up[5..6] -> on_gpu[5..6];
            copy up[6..7] -> on_gpu[6..7];
            copy up[7..8] -> on_gpu[7..8];
            copy up[8..9] -> on_gpu[8..9];
            copy up[9..10] -> on_gpu[9..10];
            copy up[10..11] -> on_gpu[10..11];
            copy up[11..12] -> on_gpu[11..12];
            copy up[12..13] -> on_gpu[12..13];
            copy up[13..14] -> on_gpu[13..14];
            copy up[14..15] -> on_gpu[14..15];
            copy up[15..16] -> on_gpu[15..16];
            copy up[16..17] -> on_gpu[16..17];
            copy up[17..18] -> on_gpu[17..18];
            copy up[18..19] -> on_gpu[18..19];
            copy up[19..20] -> on_gpu[19..20];
            copy up[20..21] -> on_gpu[20..21];
            copy up[21..22] -> on_gpu[21..22];
            copy up[22..23] -> on_gpu[22..23];
            copy up[23..24] -> on_gpu[23..24];
            copy up[24..25] -> on_gpu[24..25];
            copy up[25..26] -> on_gpu[25..26];
            copy up[26..27] -> on_gpu[26..27];
            copy up[27..28] -> on_gpu[27..28];
            copy up[28..29] -> on_gpu[28..29];
            copy up[29..30] -> on_gpu[29..30];
            copy up[30..31] -> on_gpu[30..31];
            copy up[31..32] -> on_gpu[31..32];
            copy on_gpu[0..1] -> down[0..1];
            copy on_gpu[1..2] -> down[1..2];
            copy on_gpu[2..3] -> down[2..3];
            copy on_gpu[3..4] -> down[3..4];
            copy on_gpu[4..5] -> down[4..5];
            copy on_gpu[5..6] -> down[5..6];
            copy on_gpu[6..7] -> down[6..7];
            copy on_gpu[7..8] -> down[7..8];
            copy on_gpu[8..9] -> down[8..9];
            copy on_gpu[9..10] -> down[9..10];
            copy on_gpu[10..11] -> down[10..11];
            copy on_gpu[11..12] -> down[11..12];
            copy on_gpu[12..13] -> down[12..13];
            copy on_gpu[13..14] -> down[13..14];
            copy on_gpu[14..15] -> down[14..15];
            copy on_gpu[15..16] -> down[15..16];
            copy on_gpu[16..17] -> down[16..17];
            copy on_gpu[17..18] -> down[17..18];
            copy on_gpu[18..19] -> down[18..19];
            copy on_gpu[19..20] -> down[19..20];
            copy on_gpu[20..21] -> down[20..21];
            copy on_gpu[21..22] -> down[21..22];
            copy on_gpu[22..23] -> down[22..23];
            copy on_gpu[23..24] -> down[23..24];
            copy on_gpu[24..25] -> down[24..25];
            copy on_gpu[25..26] -> down[25..26];
            copy on_gpu[26..27] -> down[26..27];
            copy on_gpu[27..28] -> down[27..28];
            copy on_gpu[28..29] -> down[28..29];
            copy on_gpu[29..30] -> down[29..30];
            copy on_gpu[30..31] -> down[30..31];
            copy on_gpu[31..32] -> down[31..32];
        }
    }
}

memplan! {
    /// `k` launches of a one-block saxpy over the run's first `len`
    /// elements, with the run's `a`, after two fills.
    plan Launches(n: usize, k: usize, run len: usize <= n, run a: f32) {
        kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from memplan_kernels::SAXPY;
        device x: [f32; n], y: [f32; n];
        stream work;
        on work {
            fill x with 1.0;
            fill y with 0.0;
        }
        for i in 0..k {
            on work {
                launch saxpy<<<blocks(len, 256), 256>>>(len as i32, a, x[..len], y[..len]);
            }
        }
    }
}

/// Elements each launch reads and writes: one block.
const ELEMENTS: usize = 256;

fn main() -> Result<(), memplan::Error> {
    // `--host-only [launches...]`: the loops of one way each alone (so
    // that a driver that does nothing can stand in for the GPU's, to
    // profile memplan's own host cost).
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--dot DIR`: the 100 launches' graph by hand and the plan's, as
    // DOT files, to compare what each captured; nothing is timed.
    if let [flag, dir] = &args[..]
        && flag == "--dot"
    {
        return write_dots(std::path::Path::new(dir));
    }
    let host_only = args.first().is_some_and(|arg| arg == "--host-only");
    let mut alone: Vec<usize> = args.iter().skip(1).filter_map(|k| k.parse().ok()).collect();
    if alone.is_empty() {
        alone = vec![0, 1, 10, 100];
    }
    if !host_only {
        small_ops()?;
        // No launch: the two fills alone, where a run's fixed cost shows most.
        for launches in [0, 1, 10, 100] {
            tiny_launches(launches)?;
        }
        calls_each_run_makes()?;
    }
    for launches in &alone {
        each_way_alone(*launches)?;
    }
    if !host_only {
        // Once a plan is timed, CUPTI records the rest of the process's
        // driver calls (turning it off again raced in NVIDIA's code): what
        // that costs the runs after it.
        cupti_left_on()?;
        for launches in [1, 100] {
            each_way_alone(launches)?;
        }
    }
    Ok(())
}

/// Writes `by-hand-100.dot` and `plan-100.dot` into `dir`: the graph of
/// 100 launches and the two fills captured by hand, and the plan's.
fn write_dots(dir: &std::path::Path) -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    let k = 100;
    let raw = RawLaunches::new(&ctx, ELEMENTS)?;
    // SAFETY: `raw` outlives the graph, dropped at the end of this function.
    let by_hand = unsafe { InPlace::new(&raw, k)? };
    let path = dir.join("by-hand-100.dot");
    let c_path = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap_or_default();
    // SAFETY: a live graph; a NUL-terminated path read during the call.
    driver(
        unsafe { cu::cuGraphDebugDotPrint(by_hand.graph, c_path.as_ptr(), 1) },
        "cuGraphDebugDotPrint",
    )?;
    let mut plan = Launches::new(&ctx, ELEMENTS, k)?;
    plan.graph(ELEMENTS, 1.0)?
        .write_dot(&dir.join("plan-100.dot"))?;
    println!("wrote {} and plan-100.dot beside it", path.display());
    Ok(())
}

/// Times one run of a plan by CUPTI, which leaves CUPTI recording.
fn cupti_left_on() -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    let mut plan = Launches::new(&ctx, ELEMENTS, 1)?;
    plan.set_timing(true)?;
    let report = plan.run(ELEMENTS, 1.0)?;
    println!(
        "one run timed ({:?}): from here on, CUPTI records every driver call of the process",
        report.clock
    );
    Ok(())
}

/// How long queuing `k` tiny launches (and the two fills) takes the host,
/// by hand and through `run`, and replaying them as a graph by hand and
/// by a plan, each way in a loop of its own: blocks of
/// runs of one way, the ways in turns, so that each finds its own code
/// and data in the caches as a loop of runs does (the rows above, which
/// change way at every run, do not).
fn each_way_alone(k: usize) -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    const BLOCKS: usize = 30;
    const RUNS: usize = 200;
    let n = ELEMENTS;
    // Each graph way in copies, made in turn, each launched on a stream of
    // its own: on an H200 how fast a graph of these launches runs is a
    // draw, 0.71 to 0.83 us a node for copies of one graph
    // (notes/gpu-run-graph-placement-one-gpu.log), 0.705 and 0.760 for two
    // graphs of one run on the same stream
    // (notes/gpu-run-plan-graph-in-place-probe-one-gpu.log), so a graph way
    // is shown by its fastest copy, the slowest beside it.
    let (mut raws, mut graphed, mut replayed) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..COPIES {
        raws.push(RawLaunches::new(&ctx, n)?);
        graphed.push(Launches::new(&ctx, n, k)?);
        for _ in 0..2 {
            let mut plan = Launches::new(&ctx, n, k)?;
            plan.set_replay(Replay::Graph)?;
            replayed.push(plan);
        }
    }
    let raw = &raws[0];
    let mut same = Launches::new(&ctx, n, k)?;
    let mut changing = Launches::new(&ctx, n, k)?;
    // SAFETY: each graph holds the addresses of its `raws` buffers, which
    // outlive it (the graphs are dropped first), and every launch of it
    // is waited for before the next.
    let by_hand: Vec<Graph> = (raws.iter())
        .map(|raw| unsafe { Graph::capture(&[&raw.stream], || raw.queue(k, 1.0)) })
        .collect::<Result<_, _>>()?;
    // SAFETY: as for `by_hand`.
    let in_place: Vec<InPlace> = (raws.iter())
        .map(|raw| unsafe { InPlace::new(raw, k) })
        .collect::<Result<_, _>>()?;
    let mut plan_graphs: Vec<_> = (graphed.iter_mut())
        .map(|plan| plan.graph(n, 1.0))
        .collect::<Result<_, _>>()?;
    use Way::*;
    let mut ways = vec![ByHand, Same, Changing, HandGraphBound];
    for copy in 0..COPIES {
        ways.extend([
            HandGraph(copy),
            HandGraphChanging(copy),
            PlanGraph(copy),
            Replayed(copy),
            ReplayedChanging(copy),
        ]);
    }
    let (mut queued, mut done) = (vec![Vec::new(); ways.len()], vec![Vec::new(); ways.len()]);
    for block in 0..BLOCKS + 1 {
        for (at, way) in ways.iter().enumerate() {
            let (mut queuing, mut total) = (0.0, 0.0);
            for run in 0..RUNS {
                let value = 1.0 + (run % 2) as f32;
                let start = Instant::now();
                let (in_flight, stream) = match *way {
                    ByHand => {
                        raw.queue(k, 1.0)?;
                        (None, &raw.stream)
                    }
                    Same => (Some(same.enqueue(n, 1.0)?), &raw.stream),
                    Changing => (Some(changing.enqueue(n, value)?), &raw.stream),
                    HandGraph(copy) => {
                        // SAFETY: as for its capture.
                        unsafe { by_hand[copy].launch(&raws[copy].stream)? };
                        (None, &raws[copy].stream)
                    }
                    HandGraphChanging(copy) => {
                        in_place[copy].set_each_node(&raws[copy], value)?;
                        in_place[copy].launch(&raws[copy])?;
                        (None, &raws[copy].stream)
                    }
                    HandGraphBound => {
                        // As a plan's run starts: its context bound.
                        ctx.bind_to_thread()?;
                        // SAFETY: as for its capture.
                        unsafe { by_hand[0].launch(&raw.stream)? };
                        (None, &raw.stream)
                    }
                    PlanGraph(copy) => (Some(plan_graphs[copy].enqueue()?), &raw.stream),
                    Replayed(copy) => (Some(replayed[2 * copy].enqueue(n, 1.0)?), &raw.stream),
                    ReplayedChanging(copy) => {
                        let plan = &mut replayed[2 * copy + 1];
                        (Some(plan.enqueue(n, value)?), &raw.stream)
                    }
                };
                queuing += start.elapsed().as_secs_f64();
                match in_flight {
                    Some(in_flight) => drop(in_flight.wait()?),
                    None => stream.synchronize()?,
                }
                total += start.elapsed().as_secs_f64();
            }
            // The first block warms up.
            if block > 0 {
                queued[at].push(queuing / RUNS as f64);
                done[at].push(total / RUNS as f64);
            }
        }
    }
    let queued: Vec<f64> = queued.into_iter().map(|mut t| median(&mut t)).collect();
    let done: Vec<f64> = done.into_iter().map(|mut t| median(&mut t)).collect();
    let ops = (k + 2) as f64;
    println!(
        "{k} launches and 2 fills on {}, each way alone ({RUNS} runs a block, median of {BLOCKS} blocks), us per op; graphs: the fastest of {COPIES} copies, each on a stream of its own:",
        ctx.device_name()?
    );
    println!(
        "  {:<28} {:>8} {:>8} {:>8} {:>8} {:>9}   against",
        "", "queued", "x", "done", "x", "slowest"
    );
    // By row (`Way::row`): its name, the row it is compared with, and the
    // fastest copy's queued and done times with the slowest's done.
    let rows = [
        ("by hand (Kernel::launch)", 0),
        ("plan.run(), same run", 0),
        ("plan.run(), value changes", 0),
        ("by hand, as a graph", 3),
        ("  context bound each run", 3),
        ("  value set node by node", 3),
        ("graph() of one run, replayed", 3),
        ("replayed, same run", 3),
        ("replayed, value changes", 3),
    ];
    let mut figures = [((f64::MAX, f64::MAX), 0.0f64); 9];
    for (at, way) in ways.iter().enumerate() {
        let (fastest, slowest) = &mut figures[way.row()];
        if done[at] < fastest.1 {
            *fastest = (queued[at], done[at]);
        }
        *slowest = slowest.max(done[at]);
    }
    for ((name, against), ((queued, done), slowest)) in rows.iter().zip(&figures) {
        let ((base_queued, base_done), _) = figures[*against];
        let spread = if slowest > done {
            format!("{:>9.3}", slowest * 1e6 / ops)
        } else {
            String::new()
        };
        println!(
            "  {name:<28} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {spread:>9}   {}",
            queued * 1e6 / ops,
            queued / base_queued,
            done * 1e6 / ops,
            done / base_done,
            rows[*against].0
        );
    }
    Ok(())
}

/// How many copies of each graph way `each_way_alone` times.
const COPIES: usize = 3;

/// One way `each_way_alone` times; a graph way's copy is its index.
#[derive(Clone, Copy)]
enum Way {
    ByHand,
    Same,
    Changing,
    HandGraph(usize),
    HandGraphBound,
    HandGraphChanging(usize),
    PlanGraph(usize),
    Replayed(usize),
    ReplayedChanging(usize),
}

impl Way {
    /// The row of `each_way_alone`'s table the way is shown in.
    fn row(self) -> usize {
        match self {
            Way::ByHand => 0,
            Way::Same => 1,
            Way::Changing => 2,
            Way::HandGraph(_) => 3,
            Way::HandGraphBound => 4,
            Way::HandGraphChanging(_) => 5,
            Way::PlanGraph(_) => 6,
            Way::Replayed(_) => 7,
            Way::ReplayedChanging(_) => 8,
        }
    }
}

/// What the calls every run makes, whatever its ops, cost the host:
/// binding the plan's context to the thread (`cuCtxSetCurrent`, at the
/// start of each run), asking which is bound (`cuCtxGetCurrent`), and
/// reading the clock (a run reads it twice); and the two memsets
/// a zero fill of floats can be queued with.
fn calls_each_run_makes() -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    const CALLS: usize = 100_000;
    let time = |call: &mut dyn FnMut() -> memplan::Result<()>| -> memplan::Result<f64> {
        let start = Instant::now();
        for _ in 0..CALLS {
            call()?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e6 / CALLS as f64)
    };
    let set = time(&mut || ctx.bind_to_thread())?;
    let get = time(&mut || {
        let mut current = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        driver(
            unsafe { cu::cuCtxGetCurrent(&mut current) },
            "cuCtxGetCurrent",
        )
    })?;
    let clock = time(&mut || {
        std::hint::black_box(Instant::now());
        Ok(())
    })?;
    println!(
        "calls each run makes, us per call: cuCtxSetCurrent {set:.3}, cuCtxGetCurrent {get:.3}, Instant::now {clock:.3}"
    );
    // A zero fill of floats: memplan picks the byte memset (the smallest
    // unit that repeats), by hand the word one. The host's cost of each
    // call, in blocks that the GPU finishes before the next, so that no
    // call waits for room in the stream's queue.
    let stream = Stream::new(&ctx)?;
    let y = DeviceBuffer::<f32>::new(&ctx, ELEMENTS)?;
    let memset = |word: bool| -> memplan::Result<f64> {
        const BLOCK: usize = 100;
        let mut seconds = 0.0;
        for _ in 0..CALLS / BLOCK {
            let start = Instant::now();
            for _ in 0..BLOCK {
                let (to, stream) = (y.device_ptr().as_raw(), stream.raw());
                // SAFETY: `ELEMENTS` floats of `y`, which outlives the sync below.
                let status = unsafe {
                    if word {
                        cu::cuMemsetD32Async(to, 0, ELEMENTS, stream)
                    } else {
                        cu::cuMemsetD8Async(to, 0, ELEMENTS * 4, stream)
                    }
                };
                driver(status, "cuMemset*Async")?;
            }
            seconds += start.elapsed().as_secs_f64();
            stream.synchronize()?;
        }
        Ok(seconds * 1e6 / CALLS as f64)
    };
    let (bytes, words) = (memset(false)?, memset(true)?);
    let (bytes_again, words_again) = (memset(false)?, memset(true)?);
    println!(
        "a zero fill of {ELEMENTS} floats, us per call to queue: cuMemsetD8Async {bytes:.3} then {bytes_again:.3}, cuMemsetD32Async {words:.3} then {words_again:.3}"
    );
    Ok(())
}

fn small_ops() -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    let mut plan = SmallOps::new(&ctx)?;
    let mut captured = SmallOps::new(&ctx)?;
    let mut graph = captured.graph()?;
    let stream = Stream::new(&ctx)?;
    let up = PinnedBuffer::<u32>::with_flags(&ctx, 32, HostAlloc::PINNED)?;
    let mut down = PinnedBuffer::<u32>::new(&ctx, 32)?;
    let device = DeviceBuffer::<u32>::new(&ctx, 32)?;

    let (mut raw, mut ours, mut replays) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..REPS + 10 {
        let mut samples = [0.0; 3];
        // Which goes first rotates, so that none is favoured.
        for turn in 0..3 {
            let which = (rep + turn) % 3;
            let start = Instant::now();
            match which {
                0 => raw_ops(&stream, &up, &mut down, &device)?,
                1 => drop(plan.run()?),
                _ => drop(graph.run()?),
            }
            samples[which] = start.elapsed().as_secs_f64();
        }
        if rep >= 10 {
            raw.push(samples[0]);
            ours.push(samples[1]);
            replays.push(samples[2]);
        }
    }
    let (raw, ours, replays) = (median(&mut raw), median(&mut ours), median(&mut replays));
    let per_op = |seconds: f64| seconds * 1e6 / OPS as f64;
    println!(
        "small_ops on {}: {OPS} four-byte copies on one stream, median of {REPS} runs each",
        ctx.device_name()?
    );
    println!(
        "  raw cuMemcpy*Async   {:>8.1} us per run, {:.2} us per op",
        raw * 1e6,
        per_op(raw)
    );
    println!(
        "  memplan plan.run()   {:>8.1} us per run, {:.2} us per op, {:.3}x raw",
        ours * 1e6,
        per_op(ours),
        ours / raw
    );
    println!(
        "  memplan graph replay {:>8.1} us per run, {:.2} us per op, {:.3}x raw",
        replays * 1e6,
        per_op(replays),
        replays / raw
    );
    Ok(())
}

/// `k` tiny launches: by hand, run directly, and replayed with the same,
/// a changing value and a changing length.
fn tiny_launches(k: usize) -> Result<(), memplan::Error> {
    let Some(ctx) = common::context_or_skip("small_ops")? else {
        return Ok(());
    };
    let n = ELEMENTS;
    let raw = RawLaunches::new(&ctx, n)?;
    let mut direct = [Launches::new(&ctx, n, k)?, Launches::new(&ctx, n, k)?];
    let mut replayed = [
        Launches::new(&ctx, n, k)?,
        Launches::new(&ctx, n, k)?,
        Launches::new(&ctx, n, k)?,
    ];
    for plan in &mut replayed {
        plan.set_replay(Replay::Graph)?;
    }
    // SAFETY: the graph holds the addresses of `raw`'s buffers, which
    // outlive it (it is dropped first, below), and every launch of it
    // is waited for before the next run.
    let by_hand_graph = unsafe { Graph::capture(&[&raw.stream], || raw.queue(k, 1.0))? };
    // SAFETY: as for `by_hand_graph`.
    let in_place = unsafe { InPlace::new(&raw, k)? };
    // One run captured by `graph()` and replayed as it is: the plan's own
    // graph without the work of replaying runs.
    let mut graphed = Launches::new(&ctx, n, k)?;
    let mut plan_graph = graphed.graph(n, 1.0)?;
    const WAYS: usize = 10;
    let (mut queued, mut done) = ([const { Vec::new() }; WAYS], [const { Vec::new() }; WAYS]);
    for rep in 0..REPS + 10 {
        for turn in 0..WAYS {
            let which = (rep + turn) % WAYS;
            let start = Instant::now();
            let in_flight = match which {
                0 => {
                    raw.queue(k, 1.0)?;
                    None
                }
                1 => Some(direct[0].enqueue(n, 1.0)?),
                2 => Some(direct[1].enqueue(n, 1.0 + (rep % 2) as f32)?),
                3 => Some(replayed[0].enqueue(n, 1.0)?),
                4 => Some(replayed[1].enqueue(n, 1.0 + (rep % 2) as f32)?),
                5 => Some(replayed[2].enqueue(n - rep % 2, 1.0)?),
                6 => {
                    // SAFETY: as for its capture.
                    unsafe { by_hand_graph.launch(&raw.stream)? };
                    None
                }
                7 => {
                    in_place.set_each_node(&raw, 1.0 + (rep % 2) as f32)?;
                    in_place.launch(&raw)?;
                    None
                }
                9 => Some(plan_graph.enqueue()?),
                _ => {
                    in_place.update_whole(&raw, k, 1.0 + (rep % 2) as f32)?;
                    in_place.launch(&raw)?;
                    None
                }
            };
            let queuing = start.elapsed().as_secs_f64();
            match in_flight {
                Some(in_flight) => drop(in_flight.wait()?),
                None => raw.stream.synchronize()?,
            }
            if rep >= 10 {
                queued[which].push(queuing);
                done[which].push(start.elapsed().as_secs_f64());
            }
        }
    }
    let queued = queued.map(|mut t| median(&mut t));
    let done = done.map(|mut t| median(&mut t));
    let ops = (k + 2) as f64;
    println!(
        "{k} launches and 2 fills on {}, a length and a value each run, median of {REPS} runs, us per op{}:",
        ctx.device_name()?,
        if RawLaunches::new(&ctx, ELEMENTS)?.saxpy.launches_early() {
            " (saxpy launched early, by hand and by plans)"
        } else {
            ""
        }
    );
    println!(
        "  {:<28} {:>8} {:>10} {:>8} {:>10}",
        "", "queued", "x by hand", "done", "x by hand"
    );
    let names = [
        "by hand (Kernel::launch)",
        "plan.run(), same run",
        "plan.run(), value changes",
        "replayed, same run",
        "replayed, value changes",
        "replayed, length changes",
        "by hand, as a graph",
        "  value set node by node",
        "  value by cuGraphExecUpdate",
        "graph() of one run, replayed",
    ];
    for (at, name) in names.iter().enumerate() {
        println!(
            "  {name:<28} {:>8.2} {:>10.3} {:>8.2} {:>10.3}",
            queued[at] * 1e6 / ops,
            queued[at] / queued[0],
            done[at] * 1e6 / ops,
            done[at] / done[0]
        );
    }
    println!(
        "  replayed with a value changed: {:.3}x the same run replayed; with a length changed: {:.3}x",
        done[4] / done[3],
        done[5] / done[3]
    );
    println!(
        "  replayed, same run: {:.3}x the driver calls replayed as a graph by hand; graph() of one run: {:.3}x (one copy each, on streams of their own: a draw; best against best below)",
        done[3] / done[6],
        done[9] / done[6]
    );
    println!(
        "  a graph by hand with a value changed in place: node by node {:.3}x, by cuGraphExecUpdate {:.3}x the graph unchanged",
        done[7] / done[6],
        done[8] / done[6]
    );
    drop(by_hand_graph);
    drop(in_place);
    Ok(())
}

/// `raw`'s calls captured and instantiated by hand, changed in place in
/// the two ways the driver offers: each kernel node's parameters set
/// (`cuGraphExecKernelNodeSetParams`, what a replayed plan does), or the
/// calls captured again into a new graph that `cuGraphExecUpdate` applies
/// to the executable one.
struct InPlace {
    graph: cu::CUgraph,
    exec: cu::CUgraphExec,
    /// Each kernel node, with the parameters it was captured with.
    kernels: Vec<(cu::CUgraphNode, cu::CUDA_KERNEL_NODE_PARAMS)>,
}

impl InPlace {
    /// # Safety
    /// As for [`Graph::capture`]: `raw`'s buffers outlive the graph.
    unsafe fn new(raw: &RawLaunches, k: usize) -> memplan::Result<InPlace> {
        let graph = capture(raw, k, 1.0)?;
        let mut exec = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a graph just captured; the out-pointers are locals.
        unsafe {
            driver(
                cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                "cuGraphInstantiateWithFlags",
            )?;
            driver(
                cu::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count),
                "cuGraphGetNodes",
            )?;
        }
        let mut nodes = vec![std::ptr::null_mut(); count];
        // SAFETY: room for `count` nodes.
        unsafe {
            driver(
                cu::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count),
                "cuGraphGetNodes",
            )?
        };
        let mut kernels = Vec::new();
        for node in nodes {
            let mut kind = cu::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of `graph`; the out-pointers are locals.
            unsafe {
                driver(
                    cu::cuGraphNodeGetType(node, &mut kind),
                    "cuGraphNodeGetType",
                )?;
                if kind == cu::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
                    let mut params = std::mem::zeroed();
                    driver(
                        cu::cuGraphKernelNodeGetParams(node, &mut params),
                        "cuGraphKernelNodeGetParams",
                    )?;
                    kernels.push((node, params));
                }
            }
        }
        Ok(InPlace {
            graph,
            exec,
            kernels,
        })
    }

    /// Sets `a` in every kernel node, one call each.
    fn set_each_node(&self, raw: &RawLaunches, a: f32) -> memplan::Result<()> {
        let (n, x, y) = (
            raw.n as i32,
            raw.x.device_ptr().as_raw(),
            raw.y.device_ptr().as_raw(),
        );
        let mut args = [
            (&raw const n).cast_mut().cast(),
            (&raw const a).cast_mut().cast(),
            (&raw const x).cast_mut().cast(),
            (&raw const y).cast_mut().cast(),
        ];
        for (node, params) in &self.kernels {
            let params = cu::CUDA_KERNEL_NODE_PARAMS {
                kernelParams: args.as_mut_ptr(),
                ..*params
            };
            // SAFETY: a kernel node of the graph `exec` was made from; the
            // arguments are saxpy's, read during the call.
            unsafe {
                driver(
                    cu::cuGraphExecKernelNodeSetParams(self.exec, *node, &params),
                    "cuGraphExecKernelNodeSetParams",
                )?
            };
        }
        Ok(())
    }

    /// Captures the calls again with `a` and applies the new graph.
    fn update_whole(&self, raw: &RawLaunches, k: usize, a: f32) -> memplan::Result<()> {
        let graph = capture(raw, k, a)?;
        let mut error_node = std::ptr::null_mut();
        let mut result = cu::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS;
        // SAFETY: both graphs are live and of one shape; the new one is
        // not used after it is destroyed.
        unsafe {
            let status = cu::cuGraphExecUpdate(self.exec, graph, &mut error_node, &mut result);
            driver(cu::cuGraphDestroy(graph), "cuGraphDestroy")?;
            driver(status, "cuGraphExecUpdate")
        }
    }

    fn launch(&self, raw: &RawLaunches) -> memplan::Result<()> {
        // SAFETY: the memory is `raw`'s, waited for after each run.
        unsafe {
            driver(
                cu::cuGraphLaunch(self.exec, raw.stream.raw()),
                "cuGraphLaunch",
            )
        }
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        // SAFETY: made in `new`, destroyed once, after the last run's wait.
        unsafe {
            cu::cuGraphExecDestroy(self.exec);
            cu::cuGraphDestroy(self.graph);
        }
    }
}

/// `raw`'s calls with value `a`, captured into a new graph.
fn capture(raw: &RawLaunches, k: usize, a: f32) -> memplan::Result<cu::CUgraph> {
    let stream = raw.stream.raw();
    let mut graph = std::ptr::null_mut();
    // SAFETY: a stream of ours, captured by this thread alone; the capture
    // ends whether queuing failed or not.
    unsafe {
        driver(
            cu::cuStreamBeginCapture_v2(
                stream,
                cu::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            ),
            "cuStreamBeginCapture",
        )?;
        let queued = raw.queue(k, a);
        driver(
            cu::cuStreamEndCapture(stream, &mut graph),
            "cuStreamEndCapture",
        )?;
        queued?;
    }
    Ok(graph)
}

/// A driver call's status as a result.
#[track_caller]
fn driver(status: cu::CUresult, call: &'static str) -> memplan::Result<()> {
    if status == cu::cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(memplan::Fault::Driver(memplan::DriverError(status as u32)))
            .at(call, memplan::Location::caller())
    }
}

/// The launches plan's work as driver calls made by hand.
struct RawLaunches {
    stream: Stream,
    x: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    saxpy: Kernel,
    n: usize,
}

impl RawLaunches {
    fn new(ctx: &memplan::Context, n: usize) -> memplan::Result<RawLaunches> {
        let module = Module::from_image(ctx, &memplan_kernels::SAXPY)?;
        Ok(RawLaunches {
            stream: Stream::new(ctx)?,
            x: DeviceBuffer::new(ctx, n)?,
            y: DeviceBuffer::new(ctx, n)?,
            saxpy: module.kernel("saxpy")?,
            n,
        })
    }

    /// Queues the two fills and `k` launches.
    fn queue(&self, k: usize, a: f32) -> memplan::Result<()> {
        let at = memplan::Location::caller();
        let (x, y) = (self.x.device_ptr().as_raw(), self.y.device_ptr().as_raw());
        // SAFETY: both buffers hold `n` elements and outlive the sync that
        // follows each run.
        let statuses = unsafe {
            [
                cu::cuMemsetD32Async(x, 1.0f32.to_bits(), self.n, self.stream.raw()),
                cu::cuMemsetD32Async(y, 0, self.n, self.stream.raw()),
            ]
        };
        if let Some(&error) = statuses
            .iter()
            .find(|&&s| s != cu::cudaError_enum::CUDA_SUCCESS)
        {
            return Err(memplan::Fault::Driver(memplan::DriverError(error as u32)))
                .at("cuMemsetD32Async", at);
        }
        for _ in 0..k {
            // SAFETY: saxpy(n, a, x, y) over `n` elements of both buffers.
            unsafe {
                self.saxpy.launch(
                    &self.stream,
                    LaunchConfig::new(blocks(self.n, 256), 256, 0),
                    (self.n as i32, a, x, y),
                )
            }
            .at("Kernel::launch", at)?;
        }
        Ok(())
    }
}

/// The plan's 64 copies as raw driver calls, then the wait: the baseline.
fn raw_ops(
    stream: &Stream,
    up: &PinnedBuffer<u32>,
    down: &mut PinnedBuffer<u32>,
    device: &DeviceBuffer<u32>,
) -> memplan::Result<()> {
    let (up, down, device) = (up.as_ptr(), down.as_mut_ptr(), device.device_ptr().as_raw());
    let mut statuses = Vec::with_capacity(OPS);
    for i in 0..32 {
        // SAFETY: element `i` of each 32-element buffer, alive past the sync.
        statuses.push(unsafe {
            cu::cuMemcpyHtoDAsync_v2(device + 4 * i as u64, up.add(i).cast(), 4, stream.raw())
        });
    }
    for i in 0..32 {
        // SAFETY: as above.
        statuses.push(unsafe {
            cu::cuMemcpyDtoHAsync_v2(down.add(i).cast(), device + 4 * i as u64, 4, stream.raw())
        });
    }
    if let Some(&error) = statuses
        .iter()
        .find(|&&s| s != cu::cudaError_enum::CUDA_SUCCESS)
    {
        return Err(memplan::Fault::Driver(memplan::DriverError(error as u32)))
            .at("raw copy", memplan::Location::caller());
    }
    stream.synchronize()
}
