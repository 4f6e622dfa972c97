//! Loops on a GPU: every iteration runs, with its own chunk, stream, ring
//! buffer and events; the last chunk may be shorter; a loop of no
//! iterations runs nothing; graphs capture loops; a set indexed past its
//! end is an error of `new` naming the op.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::memplan;

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "loops::round_robin_chunks_with_a_short_last_one",
        round_robin_chunks_with_a_short_last_one,
    ),
    (
        "loops::a_ring_smaller_than_the_input",
        a_ring_smaller_than_the_input,
    ),
    ("loops::graphs_capture_loops", graphs_capture_loops),
    (
        "loops::no_iterations_run_nothing",
        no_iterations_run_nothing,
    ),
    ("loops::an_empty_loop_is_no_loop", an_empty_loop_is_no_loop),
    (
        "loops::an_index_past_its_set_fails_at_new",
        an_index_past_its_set_fails_at_new,
    ),
];

memplan! {
    /// Adds one in chunks of `m`, chunk `c` on stream `c % s`.
    plan Chunked(n: usize, m: usize, k: usize, s: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream lanes[s];
        for c in 0..k {
            on lanes[c % s] {
                copy data[c * m..min(c * m + m, n)] -> on_gpu[c * m..min(c * m + m, n)];
                launch process_data<<<blocks(min(c * m + m, n) - c * m, 64), 64>>>(
                    on_gpu[c * m..min(c * m + m, n)], (min(c * m + m, n) - c * m) as i32);
                copy on_gpu[c * m..min(c * m + m, n)] -> data[c * m..min(c * m + m, n)];
            }
        }
    }

    /// output = input + 1 through a ring of `r` buffers of `m`, with named
    /// ranges.
    plan Ring(n: usize, m: usize, k: usize, r: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   input: [f32; n] pinned, output: [f32; n] pinned;
        device ring[r]: [f32; m];
        stream up, lanes[r];
        event  loaded[r], freed[r];
        for c in 0..k {
            let chunk = c * m..min(c * m + m, n);
            let used = 0..chunk.len();
            on up {
                wait freed[c % r];
                copy input[chunk] -> ring[c % r][used];
                record loaded[c % r];
            }
            on lanes[c % r] {
                wait loaded[c % r];
                launch process_data<<<blocks(chunk.len(), 64), 64>>>(ring[c % r][used], chunk.len() as i32);
                copy ring[c % r][used] -> output[chunk];
                record freed[c % r];
            }
        }
    }

    /// A loop with nothing in it, between an upload and a download.
    plan EmptyLoop(n: usize, k: usize) {
        host   a: [f32; n] pinned;
        device d: [f32; n];
        stream s;
        on s { copy a -> d; }
        for c in 0..k { }
        sync all;
        copy d -> a;
    }

    /// Chunk `c` on stream `c` of a set of `s`: past its end when `k > s`.
    plan OneStreamEach(n: usize, k: usize, s: usize) {
        host   data: [f32; n] pinned;
        device on_gpu: [f32; n];
        stream lanes[s];
        for c in 0..k {
            on lanes[c] {
                copy data[c * (n / k)..(c + 1) * (n / k)] -> on_gpu[c * (n / k)..(c + 1) * (n / k)];
            }
        }
    }
}

const N: usize = 10_000;

fn round_robin_chunks_with_a_short_last_one() -> Result<(), Failed> {
    let ctx = context()?;
    let input = floats(N);
    let expected: Vec<f32> = input.iter().map(|x| x + 1.0).collect();
    // 1024 does not divide 10,000: ten chunks, the last of 784.
    for (m, s) in [(1024, 3), (N, 1), (1, 7)] {
        let k = N.div_ceil(m);
        let mut plan = Chunked::new(&ctx, N, m, k, s)?;
        plan.host_mut().data.copy_from_slice(&input);
        plan.set_timing(true)?;
        let report = plan.run()?;
        same(
            &format!("chunks of {m} on {s} streams"),
            plan.host().data,
            &expected,
        )?;
        // Each chunk's ops on its own stream of the set, as reports say.
        for (chunk, ops) in report.ops.chunks(3).enumerate() {
            let lane = format!("lanes[{}]", chunk % s);
            ensure!(
                ops.iter().all(|op| op.op.lane() == lane),
                "chunk {chunk} reported on {:?}, not {lane}",
                ops.iter().map(|op| op.op.lane()).collect::<Vec<_>>()
            );
        }
        ensure!(
            report.ops.len() == 3 * k,
            "{} ops timed for {k} chunks",
            report.ops.len()
        );
    }
    Ok(())
}

fn a_ring_smaller_than_the_input() -> Result<(), Failed> {
    let ctx = context()?;
    let input = floats(N);
    let expected: Vec<f32> = input.iter().map(|x| x + 1.0).collect();
    for (m, r) in [(1000, 3), (999, 2), (N, 1), (64, 5)] {
        let k = N.div_ceil(m);
        let mut plan = Ring::new(&ctx, N, m, k, r)?;
        plan.host_mut().input.copy_from_slice(&input);
        for run in 0..2 {
            plan.run()?;
            same(
                &format!("ring of {r} x {m}, run {run}"),
                plan.host().output,
                &expected,
            )?;
        }
    }
    Ok(())
}

fn graphs_capture_loops() -> Result<(), Failed> {
    let ctx = context()?;
    let input = floats(N);
    let expected: Vec<f32> = input.iter().map(|x| x + 1.0).collect();
    let mut plan = Ring::new(&ctx, N, 1000, 10, 3)?;
    plan.host_mut().input.copy_from_slice(&input);
    {
        let mut graph = plan.graph()?;
        graph.run()?;
        graph.run()?;
    }
    same("ring as a graph", plan.host().output, &expected)
}

fn no_iterations_run_nothing() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Ring::new(&ctx, N, 1000, 0, 3)?;
    plan.host_mut().output.fill(-5.0);
    plan.run()?;
    same("no iterations", plan.host().output, &vec![-5.0; N])
}

fn an_empty_loop_is_no_loop() -> Result<(), Failed> {
    let ctx = context()?;
    let input = floats(N);
    let mut plan = EmptyLoop::new(&ctx, N, 7)?;
    plan.host_mut().a.copy_from_slice(&input);
    plan.run()?;
    same("through an empty loop", plan.host().a, &input)
}

fn an_index_past_its_set_fails_at_new() -> Result<(), Failed> {
    let ctx = context()?;
    OneStreamEach::new(&ctx, 100, 4, 4)?;
    let error = OneStreamEach::new(&ctx, 100, 5, 4)
        .err()
        .ok_or("stream 4 of a set of 4 was used")?;
    let message = error.to_string();
    ensure!(
        message.contains("copy data[c * (n / k)..(c + 1) * (n / k)]")
            && message.contains("index 4 is past the end of a set of 4"),
        "message: {message}"
    );
    Ok(())
}
