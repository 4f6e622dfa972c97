//! Plans on a GPU: what `memplan!` generates runs correctly in every mode
//! (run, enqueue, leaked guard, graph), reports its ops, and names the
//! declaration or op that failed.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use libtest_mimic::Failed;
use memplan::memplan;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("plans::run_reports_every_op", run_reports_every_op),
    ("plans::enqueue_then_wait", enqueue_then_wait),
    (
        "plans::a_leaked_guard_is_waited_for",
        a_leaked_guard_is_waited_for,
    ),
    ("plans::graph_replays_match_runs", graph_replays_match_runs),
    (
        "plans::errors_name_the_declaration",
        errors_name_the_declaration,
    ),
    (
        "plans::registered_slices_and_length_checks",
        registered_slices_and_length_checks,
    ),
    (
        "plans::stream_ordered_memory_across_streams",
        stream_ordered_memory_across_streams,
    ),
    (
        "plans::synchronous_ops_and_host_steps",
        synchronous_ops_and_host_steps,
    ),
    (
        "plans::a_panic_mid_run_waits_before_releasing_slices",
        a_panic_mid_run_waits_before_releasing_slices,
    ),
    (
        "plans::host_fills_take_each_runs_value",
        host_fills_take_each_runs_value,
    ),
];

memplan! {
    /// Adds one on one stream.
    plan AddOne(n: usize) {
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

    /// Doubles the caller's registered slice into a result slice.
    plan Double(n: usize, input: &[f32; n] registered, output: &mut [f32; n] registered) {
        kernel scale_by_two(input: &[f32; n], output: &out [f32; n], n: i32) from memplan_kernels::SCALE;
        device from: [f32; n], to: [f32; n];
        stream work;
        on work {
            copy input -> from;
            launch scale_by_two<<<blocks(n, 256), 256>>>(from, to, n as i32);
            copy to -> output;
        }
    }

    /// Scratch memory allocated on one stream, used on another, freed on the first.
    plan Scratch(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pinned;
        stream owner, user;
        event  allocated, used;
        on owner {
            alloc tmp: [f32; n];
            record allocated;
        }
        on user {
            wait allocated;
            copy data -> tmp;
            launch process_data<<<blocks(n, 256), 256>>>(tmp, n as i32);
            copy tmp -> data;
            record used;
        }
        on owner {
            wait used;
            free tmp;
        }
    }

    /// Queues a copy into the caller's slice, then panics in a host step.
    plan PanicsMidRun(n: usize, out: &mut [f32; n] registered) {
        host   flag: [f32; 1] pageable;
        device d: [f32; n];
        stream s;
        fill d with 2.5;
        on s {
            copy d -> out;
        }
        host(&mut flag) {
            if flag[0] == 0.0 {
                panic!("a host step failed on purpose");
            }
        }
    }

    /// Synchronous copies and launches, a host step between two rounds.
    plan Rounds(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   data: [f32; n] pageable, total: [f32; 1] pageable;
        device on_gpu: [f32; n];
        copy data -> on_gpu;
        launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
        copy on_gpu -> data;
        host(&mut data, &mut total) {
            total[0] = data.iter().sum();
            for x in data.iter_mut() {
                *x *= 2.0;
            }
        }
        copy data -> on_gpu;
        launch process_data<<<blocks(n, 256), 256>>>(on_gpu, n as i32);
        copy on_gpu -> data;
    }

    /// Host memory filled by the CPU with each run's values: one of four
    /// bytes, and one of 40, more than a value keeps in place.
    plan HostFills(n: usize, run v: f32, run w: [u64; 5]) {
        host   small: [f32; n] pageable, large: [[u64; 5]; n] pinned;
        fill small[1..] with v;
        fill large[..n - 1] with w;
    }
}

const N: usize = 1 << 20;

fn plus_one(data: &[f32]) -> Vec<f32> {
    data.iter().map(|x| x + 1.0).collect()
}

fn run_reports_every_op() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = AddOne::new(&ctx, N)?;
    let data = floats(N);
    plan.host_mut().data.copy_from_slice(&data);
    plan.set_timing(true)?;
    let report = plan.run()?;
    same("add one", plan.host().data, &plus_one(&data))?;
    ensure!(
        report.ops.len() == 3,
        "{} op timings, expected 3:\n{report}",
        report.ops.len()
    );
    for timing in &report.ops {
        ensure!(
            timing.duration_ms() > 0.0,
            "{} took no time:\n{report}",
            timing.op.label
        );
    }
    let upload = report
        .op("copy data -> on_gpu")
        .ok_or("no timing for the upload")?;
    ensure!(
        upload.bytes == (N * 4) as u64,
        "upload moved {} bytes",
        upload.bytes
    );
    ensure!(
        upload.gb_per_s().is_some_and(|g| g > 1.0),
        "upload bandwidth: {:?}",
        upload.gb_per_s()
    );
    ensure!(
        report.to_chrome_trace().contains("launch process_data"),
        "trace lacks the launch"
    );
    // Each op a bar on its stream's lane, and again on its engine's (the
    // two copies and the kernel each have one).
    let svg = report.to_svg();
    ensure!(
        svg.matches(r#"<g class="op">"#).count() == 6,
        "SVG has {} op bars, expected 6",
        svg.matches(r#"<g class="op">"#).count()
    );
    Ok(())
}

fn enqueue_then_wait() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = AddOne::new(&ctx, N)?;
    let data = floats(N);
    plan.host_mut().data.copy_from_slice(&data);
    let in_flight = plan.enqueue()?;
    let report = in_flight.wait()?;
    ensure!(report.plan == "AddOne", "report of {}", report.plan);
    same("add one, enqueued", plan.host().data, &plus_one(&data))
}

fn a_leaked_guard_is_waited_for() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = AddOne::new(&ctx, N)?;
    let data = floats(N);
    plan.host_mut().data.copy_from_slice(&data);
    std::mem::forget(plan.enqueue()?);
    // `host` waits for the run the forgotten guard stood for.
    same("add one, guard leaked", plan.host().data, &plus_one(&data))?;
    // And the next run starts from a settled plan.
    plan.run()?;
    same(
        "add one twice",
        plan.host().data,
        &plus_one(&plus_one(&data)),
    )
}

fn graph_replays_match_runs() -> Result<(), Failed> {
    let ctx = context()?;
    let mut direct = AddOne::new(&ctx, N)?;
    let mut captured = AddOne::new(&ctx, N)?;
    let mut graph = captured.graph()?;
    for replay in 0..5 {
        let data = floats(N);
        direct.host_mut().data.copy_from_slice(&data);
        graph.host_mut().data.copy_from_slice(&data);
        direct.run()?;
        graph.run()?;
        same(
            &format!("graph replay {replay}"),
            graph.host().data,
            &plus_one(&data),
        )?;
        same(
            &format!("graph against run {replay}"),
            graph.host().data,
            direct.host().data,
        )?;
    }
    // What was captured, as DOT: a graph with a kernel's node in it.
    let dot = std::env::temp_dir().join(format!("memplan-add-one-{}.dot", std::process::id()));
    graph.write_dot(&dot)?;
    let text = std::fs::read_to_string(&dot)?;
    let _ = std::fs::remove_file(&dot);
    ensure!(
        text.contains("digraph") && text.to_lowercase().contains("kernel"),
        "the DOT file: {text:.300}"
    );
    let mut rounds = Rounds::new(&ctx, 16)?;
    let refused = rounds
        .graph()
        .err()
        .ok_or("a plan with host steps was captured")?;
    ensure!(
        matches!(refused.fault(), memplan::Fault::Unsupported(_)),
        "{refused}"
    );
    Ok(())
}

fn errors_name_the_declaration() -> Result<(), Failed> {
    let ctx = context()?;
    // 4 TiB of pinned memory: refused by the driver.
    let error = AddOne::new(&ctx, 1 << 40)
        .err()
        .ok_or("4 TiB of pinned memory was allocated")?;
    ensure!(error.plan() == Some("AddOne"), "plan: {:?}", error.plan());
    ensure!(
        error.operation() == "data: [f32; n] pinned",
        "operation: {}",
        error.operation()
    );
    ensure!(
        error.call() == Some("cuMemAllocHost"),
        "call: {:?}",
        error.call()
    );
    ensure!(
        error.location().file.ends_with("plans.rs"),
        "location: {}",
        error.location()
    );
    ensure!(
        error
            .to_string()
            .starts_with("plan AddOne: data: [f32; n] pinned at "),
        "message: {error}"
    );
    Ok(())
}

fn registered_slices_and_length_checks() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Double::new(&ctx, N)?;
    let input = floats(N);
    let mut output = vec![-7777.0f32; N];
    plan.run(&input, &mut output)?;
    let expected: Vec<f32> = input.iter().map(|x| 2.0 * x).collect();
    same("double into the caller's slice", &output, &expected)?;
    let short = vec![0.0f32; N - 1];
    let error = plan
        .run(&short, &mut output)
        .err()
        .ok_or("a slice one short was accepted")?;
    ensure!(
        matches!(error.fault(), memplan::Fault::WrongLength { expected: N, actual } if *actual == N - 1),
        "{error}"
    );
    Ok(())
}

fn stream_ordered_memory_across_streams() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Scratch::new(&ctx, N)?;
    for round in 0..3 {
        let data = floats(N);
        plan.host_mut().data.copy_from_slice(&data);
        plan.run()?;
        same(
            &format!("scratch round {round}"),
            plan.host().data,
            &plus_one(&data),
        )?;
    }
    let mut graph = plan.graph()?;
    let data = floats(N);
    graph.host_mut().data.copy_from_slice(&data);
    graph.run()?;
    same("scratch in a graph", graph.host().data, &plus_one(&data))
}

fn synchronous_ops_and_host_steps() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 4096;
    let mut plan = Rounds::new(&ctx, n)?;
    let data: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    plan.host_mut().data.copy_from_slice(&data);
    plan.run()?;
    let first: Vec<f32> = plus_one(&data);
    let expected: Vec<f32> = first.iter().map(|x| 2.0 * x + 1.0).collect();
    same("two rounds around a host step", plan.host().data, &expected)?;
    let total: f32 = first.iter().sum();
    ensure!(
        plan.host().total[0] == total,
        "host step total {} != {total}",
        plan.host().total[0]
    );
    Ok(())
}

fn a_panic_mid_run_waits_before_releasing_slices() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = PanicsMidRun::new(&ctx, N)?;
    let mut out = vec![0.0f32; N];
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| plan.run(&mut out)));
    ensure!(run.is_err(), "the host step did not panic");
    // The run waited for the queued copy before the panic released `out`.
    same("the copy into the caller's slice", &out, &vec![2.5; N])
}

/// Runs that change only values rewrite the host fills they resolved
/// once; a run with the same values leaves them as they are.
fn host_fills_take_each_runs_value() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 100;
    let mut plan = HostFills::new(&ctx, n)?;
    plan.host_mut().small.fill(-1.0);
    plan.host_mut().large.fill([9; 5]);
    for (v, w) in [(1.0, 3), (2.5, 3), (2.5, 3), (-7.0, u64::MAX), (1.0, 0)] {
        plan.run(v, [w, 1, 2, 3, w])?;
        let mut small = vec![v; n];
        small[0] = -1.0;
        let mut large = vec![[w, 1, 2, 3, w]; n];
        large[n - 1] = [9; 5];
        same(
            &format!("small after a run of {v}"),
            plan.host().small,
            &small,
        )?;
        same(
            &format!("large after a run of {w}"),
            plan.host().large,
            &large,
        )?;
    }
    Ok(())
}
