//! What every timed report must be, whatever the plan: a clock that says
//! where its times come from (the engine's, where CUPTI is required), and
//! each op once, within the run, in its stream's order. Shared by the
//! single-GPU suite and tests/multi_gpu.

use libtest_mimic::Failed;
use memplan::{Clock, RunReport};

/// Where CUPTI is required, the clock must be the engine's; either way it
/// says where times come from, and no op ran unrecorded.
pub fn check_clock(report: &RunReport) -> Result<(), Failed> {
    match &report.clock {
        Clock::Engine {
            unrecorded: 0,
            problem: None,
        } => Ok(()),
        Clock::Events { why } if std::env::var_os("MEMPLAN_REQUIRE_CUPTI").is_none() => {
            eprintln!("timing by events: {why}");
            Ok(())
        }
        clock => Err(format!("clock {clock:?}:\n{report}").into()),
    }
}

/// How far the device's clock, as CUPTI maps it to the host's, may be from
/// the host's own (see `check_stream_order`).
pub const CLOCK_SLACK_MS: f64 = 5e-2;

/// Each op once, inside the run's wall time, no earlier than the previous
/// op on its stream ended (streams run in order, so the device's spans
/// must too: a correlation gone wrong breaks this).
pub fn check_stream_order(report: &RunReport, expected_ops: usize) -> Result<(), Failed> {
    check_stream_order_within(report, expected_ops, CLOCK_SLACK_MS)
}

/// [`check_stream_order`], with `slack_ms` for how far CUPTI's mapping of
/// the device's clock to the host's may be off.
pub fn check_stream_order_within(
    report: &RunReport,
    expected_ops: usize,
    slack_ms: f64,
) -> Result<(), Failed> {
    ensure!(
        report.ops.len() == expected_ops,
        "{} ops timed, expected {expected_ops}:\n{report}",
        report.ops.len()
    );
    let wall_ms = report.wall.as_secs_f64() * 1e3;
    let mut last_end: Vec<(String, f64)> = Vec::new();
    for timing in &report.ops {
        ensure!(
            // 50 us of slack: CUPTI maps the device's clock to the host's,
            // and with 16 tests at once that mapping was seen up to 16 us
            // off (`notes/gpu-run-cupti-deadlock-one-gpu.log`); a record
            // of another run would be a run's length off.
            timing.start_ms >= 0.0
                && timing.end_ms >= timing.start_ms
                && timing.end_ms <= wall_ms + slack_ms,
            "{} at {:.4}..{:.4} ms, outside the run's {wall_ms:.4} ms:\n{report}",
            timing.op.label,
            timing.start_ms,
            timing.end_ms
        );
        let lane = timing.op.lane();
        match last_end.iter_mut().find(|(l, _)| *l == lane) {
            Some((_, end)) => {
                // A microsecond of slack for the clocks' rounding.
                ensure!(
                    timing.start_ms >= *end - 1e-3,
                    "{} on {lane} starts at {:.4} ms, before the op before it ended ({end:.4}):\n{report}",
                    timing.op.label,
                    timing.start_ms
                );
                *end = timing.end_ms;
            }
            None => last_end.push((lane, timing.end_ms)),
        }
    }
    Ok(())
}
