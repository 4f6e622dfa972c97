//! What timing reports are, on a GPU: where CUPTI loads, each op's span on
//! the device; else events, labelled so. Either way every op of a run is
//! there once, within the run, after the op before it on its stream; the
//! host's spans frame the run; and a timeline of two plans in turns puts
//! each run where it happened. No speed is asserted: speeds belong in
//! benchmarks (`benches/timeline.rs`).
//!
//! `MEMPLAN_REQUIRE_CUPTI=1` (set by the GPU bundle's runner, except under
//! the sanitizer) makes a fallback to events a failure.

use crate::data::{floats, same};
use crate::harness::{GpuTest, context};
use crate::reports::{CLOCK_SLACK_MS, check_clock, check_stream_order, check_stream_order_within};
use libtest_mimic::Failed;
use memplan::{Clock, Timeline, memplan};
use std::time::{Duration, Instant};

pub const TESTS: &[(&str, GpuTest)] = &[
    (
        "timing::ops_are_in_stream_order_within_the_run",
        ops_are_in_stream_order_within_the_run,
    ),
    (
        "timing::event_timing_is_asked_for_and_labelled",
        event_timing_is_asked_for_and_labelled,
    ),
    (
        "timing::host_steps_and_waits_are_host_spans",
        host_steps_and_waits_are_host_spans,
    ),
    (
        "timing::a_timeline_of_two_plans_in_turns",
        a_timeline_of_two_plans_in_turns,
    ),
    (
        "timing::timing_off_reports_the_wall_time_only",
        timing_off_reports_the_wall_time_only,
    ),
    (
        "timing::an_empty_run_beside_another_leaves_it_whole",
        an_empty_run_beside_another_leaves_it_whole,
    ),
    (
        "timing::graph_replays_report_their_wall_time_only",
        graph_replays_report_their_wall_time_only,
    ),
    (
        "timing::timed_runs_beside_threads_that_make_and_drop_plans",
        timed_runs_beside_threads_that_make_and_drop_plans,
    ),
];

memplan! {
    /// x + 1 in `k` chunks of `m`, round robin over 4 streams.
    plan Chunked(n: usize, m: usize, k: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned;
        device dx: [f32; n];
        stream lanes[4];
        for c in 0..k {
            let r = c * m..min(c * m + m, n);
            on lanes[c % 4] {
                copy x[r] -> dx[r];
                launch process_data<<<blocks(r.len(), 256), 256>>>(dx[r], r.len() as i32);
                copy dx[r] -> x[r];
            }
        }
    }

    /// A host step between two rounds, synchronous copies, and a copy
    /// between host buffers (the CPU's work, no driver call).
    plan WithHostStep(n: usize) {
        kernel process_data(data: &mut [f32; n], n: i32) from memplan_kernels::ADD_ONE;
        host   x: [f32; n] pinned, y: [f32; n] pageable;
        device dx: [f32; n];
        stream s;
        on s {
            copy x -> dx;
            launch process_data<<<blocks(n, 256), 256>>>(dx, n as i32);
            copy dx -> x;
        }
        sync s;
        host(&mut x) {
            for v in x.iter_mut() {
                *v *= 2.0;
            }
        }
        copy x -> dx;
        copy dx -> x;
        copy x -> y;
    }
}

const N: usize = 1 << 22;
const M: usize = 1 << 18;

fn ops_are_in_stream_order_within_the_run() -> Result<(), Failed> {
    let ctx = context()?;
    let k = N / M;
    let mut plan = Chunked::new(&ctx, N, M, k)?;
    let x = floats(N);
    plan.host_mut().x.copy_from_slice(&x);
    plan.set_timing(true)?;
    for round in 1..=3 {
        let report = plan.run()?;
        check_clock(&report)?;
        check_stream_order(&report, 3 * k)?;
        let lanes: Vec<String> = report.ops.iter().map(|t| t.op.lane()).collect();
        ensure!(
            lanes[..4] == ["lanes[0]", "lanes[0]", "lanes[0]", "lanes[1]"][..],
            "lanes {:?}",
            &lanes[..4]
        );
        let upload = &report.ops[0];
        ensure!(
            upload.bytes == (M * 4) as u64 && upload.gb_per_s().is_some(),
            "the first upload: {} bytes",
            upload.bytes
        );
        let expected: Vec<f32> = x.iter().map(|v| v + round as f32).collect();
        same(&format!("round {round}"), plan.host().x, &expected)?;
    }
    Ok(())
}

fn event_timing_is_asked_for_and_labelled() -> Result<(), Failed> {
    let ctx = context()?;
    let k = 8;
    let mut plan = Chunked::new(&ctx, N, M, k)?;
    plan.set_timing(memplan::Timing::Events)?;
    let report = plan.run()?;
    ensure!(
        matches!(&report.clock, Clock::Events { why } if why.contains("asked for")),
        "clock {:?}",
        report.clock
    );
    check_stream_order(&report, 3 * k)?;
    ensure!(
        report.to_string().contains("queued time included"),
        "the table does not say what event times include:\n{report}"
    );
    ensure!(
        report.to_svg().contains("queued time included"),
        "the picture does not say what event times include"
    );
    // Back to the best clock, and off.
    plan.set_timing(true)?;
    check_clock(&plan.run()?)?;
    plan.set_timing(false)?;
    ensure!(plan.run()?.clock == Clock::Off, "timing stayed on");
    Ok(())
}

fn host_steps_and_waits_are_host_spans() -> Result<(), Failed> {
    let ctx = context()?;
    let n = 1 << 20;
    let mut plan = WithHostStep::new(&ctx, n)?;
    let x = floats(n);
    plan.host_mut().x.copy_from_slice(&x);
    plan.set_timing(true)?;
    let report = plan.run()?;
    let expected: Vec<f32> = x.iter().map(|v| (v + 1.0) * 2.0).collect();
    same("x", plan.host().x, &expected)?;
    same("y", plan.host().y, &expected)?;
    check_clock(&report)?;
    // Five GPU ops (the host step is the host's).
    check_stream_order(&report, 5)?;
    let labels: Vec<&str> = report.host.iter().map(|s| s.label).collect();
    ensure!(
        labels.first() == Some(&"queue")
            && labels.last() == Some(&"wait")
            && labels.iter().any(|l| l.starts_with("host"))
            && labels.contains(&"copy x -> y"),
        "host spans {labels:?}"
    );
    let wall_ms = report.wall.as_secs_f64() * 1e3;
    let mut previous_end = 0.0;
    for span in &report.host {
        ensure!(
            span.start_ms >= previous_end && span.end_ms >= span.start_ms && span.end_ms <= wall_ms,
            "host span {} at {:.4}..{:.4} ms (previous ended {previous_end:.4}, wall {wall_ms:.4})",
            span.label,
            span.start_ms,
            span.end_ms
        );
        previous_end = span.end_ms;
    }
    // The host step waited for the stream's download (its `sync`): it
    // cannot start before the download ended, give or take how far CUPTI's
    // mapping of the device's clock to the host's may be off.
    let step = report
        .host
        .iter()
        .find(|s| s.label.starts_with("host"))
        .ok_or("no host step")?;
    let download = report.op("copy dx -> x").ok_or("no download")?;
    ensure!(
        step.start_ms >= download.end_ms - CLOCK_SLACK_MS,
        "the host step started at {:.4} ms, before the download ended ({:.4})",
        step.start_ms,
        download.end_ms
    );
    Ok(())
}

fn a_timeline_of_two_plans_in_turns() -> Result<(), Failed> {
    let ctx = context()?;
    let k = 8;
    let mut plans = [Chunked::new(&ctx, N, M, k)?, Chunked::new(&ctx, N, M, k)?];
    let mut timeline = Timeline::new();
    for plan in &mut plans {
        plan.set_timing(true)?;
    }
    for round in 0..4 {
        let plan = &mut plans[round % 2];
        plan.submit()?;
        if round > 0 {
            let other = &mut plans[(round + 1) % 2];
            timeline.add(other.wait()?.ok_or("the other plan had no run in flight")?);
        }
    }
    timeline.add(plans[1].wait()?.ok_or("no last run")?);
    ensure!(timeline.runs().len() == 4, "{} runs", timeline.runs().len());
    for report in timeline.runs() {
        check_clock(report)?;
        ensure!(
            report.ops.len() == 3 * k,
            "{} ops:\n{report}",
            report.ops.len()
        );
    }
    let svg = timeline.to_svg();
    for lane in [
        "host",
        "Chunked#1 lanes[0]",
        "Chunked#2 lanes[3]",
        "H2D copies",
        "kernels",
        "D2H copies",
    ] {
        ensure!(
            svg.contains(&format!(">{lane}</text>")),
            "no lane {lane} in the picture"
        );
    }
    ensure!(
        svg.matches(r#"<g class="op">"#).count() == 4 * 3 * k * 2,
        "{} op bars",
        svg.matches(r#"<g class="op">"#).count()
    );
    let trace = timeline.to_chrome_trace();
    ensure!(
        trace.starts_with(r#"{"traceEvents":["#)
            && trace.contains(r#""name":"Chunked#2 lanes[0]""#),
        "the trace lacks the second plan's lanes"
    );
    Ok(())
}

fn timing_off_reports_the_wall_time_only() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Chunked::new(&ctx, N, M, 4)?;
    let report = plan.run()?;
    ensure!(
        report.clock == Clock::Off && report.ops.is_empty() && report.host.is_empty(),
        "an untimed run reported {report}"
    );
    ensure!(report.to_string().contains("op timing off"), "{report}");
    Ok(())
}

fn an_empty_run_beside_another_leaves_it_whole() -> Result<(), Failed> {
    let ctx = context()?;
    let mut empty = Chunked::new(&ctx, N, M, 0)?;
    let mut full = Chunked::new(&ctx, N, M, 8)?;
    empty.set_timing(true)?;
    full.set_timing(true)?;
    empty.submit()?;
    full.submit()?;
    let nothing = empty.wait()?.ok_or("no empty run")?;
    ensure!(
        nothing.ops.is_empty(),
        "an empty loop timed {:?}",
        nothing.ops
    );
    let report = full.wait()?.ok_or("no full run")?;
    check_clock(&report)?;
    check_stream_order(&report, 3 * 8)
}

fn graph_replays_report_their_wall_time_only() -> Result<(), Failed> {
    let ctx = context()?;
    let mut plan = Chunked::new(&ctx, N, M, 8)?;
    let x = floats(N);
    plan.host_mut().x.copy_from_slice(&x);
    plan.set_timing(true)?;
    check_stream_order(&plan.run()?, 3 * 8)?;
    let mut graph = plan.graph()?;
    let report = graph.run()?;
    ensure!(
        report.clock == Clock::Off && report.ops.is_empty(),
        "a graph replay reported ops it did not time:\n{report}"
    );
    drop(graph);
    // Two runs of 8 chunks: the first 8 * M elements got 2.
    let expected: Vec<f32> = x
        .iter()
        .enumerate()
        .map(|(i, v)| if i < 8 * M { v + 2.0 } else { *v })
        .collect();
    same("x", plan.host().x, &expected)?;
    // Runs after the replay are timed again.
    check_stream_order(&plan.run()?, 3 * 8)
}

/// Timed runs while other threads make plans (modules loaded, streams,
/// events, page-locked memory), run them, capture and replay their graphs
/// and drop it all again: each report must still have every op, in order,
/// and the process must live. CUPTI 13 with a buffer of records per thread
/// (its default) crashed inside its driver callbacks when records were
/// collected beside such threads in a stress test of NVIDIA's libraries
/// alone (`notes/cupti-toggle-stress.c`), so memplan has every thread
/// share buffers; this test, at memplan's pace, passed with either (4
/// runs each, `notes/gpu-run-cupti-kinds-one-gpu.log`): it guards timing
/// beside churn, and does not reproduce that crash.
fn timed_runs_beside_threads_that_make_and_drop_plans() -> Result<(), Failed> {
    const CHURNERS: usize = 6;
    const FOR: Duration = Duration::from_secs(3);
    let (n, m, k) = (1 << 20, 1 << 16, 16);
    let ctx = context()?;
    let mut plan = Chunked::new(&ctx, n, m, k)?;
    plan.set_timing(true)?;
    // Recording starts before this test's own churn (other tests of the
    // binary may be busy beside it: turning it on beside busy threads is
    // its own hazard, in the notes).
    let first = plan.run()?;
    check_stream_order(&first, 3 * k)?;
    // Timed by events, CUPTI is not on (under compute-sanitizer, which
    // holds it): there the churners leave graphs out, since the
    // sanitizer's own synchronization from another thread invalidates a
    // capture in progress.
    let capture = matches!(first.clock, Clock::Engine { .. });
    let deadline = Instant::now() + FOR;
    let churn = || -> Result<usize, Failed> {
        let ctx = context()?;
        let mut made = 0;
        while Instant::now() < deadline {
            let mut small = Chunked::new(&ctx, 4096, 1024, 4)?;
            small.run()?;
            if capture && made % 2 == 0 {
                small.graph()?.run()?;
            }
            made += 1;
        }
        Ok(made)
    };
    // Beside six threads busy in the driver, CUPTI's mapping of the
    // device's clock to the host's was seen 50 us off, every op of a run
    // late by as much (`notes/gpu-run-churn-clock-one-gpu.log`), and, with
    // the binary's other tests beside them on one host, 250 us, the last
    // ops of a run stretched late (`notes/gpu-run-written-steps-one-gpu.log`;
    // alone there: 3 us at most). The spans' order and count are what this
    // test is about; an op's end is allowed half its run's length past the
    // run's wait, which still refuses a record of another run (a whole run
    // off, and an earlier run's would start before this one).
    let timed_beside = |plan: &mut Chunked| -> Result<(usize, f64), Failed> {
        let (mut timed, mut late_ms) = (0, 0.0_f64);
        while Instant::now() < deadline {
            let report = plan.run()?;
            check_clock(&report)?;
            let wall_ms = report.wall.as_secs_f64() * 1e3;
            check_stream_order_within(&report, 3 * k, wall_ms / 2.0)?;
            for op in &report.ops {
                late_ms = late_ms.max(op.end_ms - wall_ms);
            }
            timed += 1;
        }
        Ok((timed, late_ms))
    };
    let (timed, churned) = std::thread::scope(|scope| {
        let churners: Vec<_> = (0..CHURNERS).map(|_| scope.spawn(churn)).collect();
        let timed = timed_beside(&mut plan);
        let churned: Result<Vec<usize>, Failed> = churners
            .into_iter()
            .map(|c| {
                c.join()
                    .unwrap_or_else(|_| Err("a churning thread panicked".into()))
            })
            .collect();
        (timed, churned)
    });
    let ((timed, late_ms), churned) = (timed?, churned?);
    eprintln!(
        "{timed} timed runs beside {} plans made and dropped; the latest op ended {:.1} us \
         after its run's wait",
        churned.iter().sum::<usize>(),
        late_ms * 1e3
    );
    ensure!(
        timed > 0 && churned.iter().all(|&c| c > 0),
        "no overlap: {timed} timed, {churned:?} made"
    );
    Ok(())
}
