//! The report of a run: its wall time and, with timing on, each op's.

use crate::op::{OpInfo, OpKind};
use std::fmt;
use std::time::{Duration, Instant};

/// One op's time on the GPU.
#[derive(Clone, Debug)]
pub struct OpTiming {
    /// The op.
    pub op: OpInfo,
    /// Milliseconds from the start of the run.
    pub start_ms: f64,
    /// Milliseconds from the start of the run to the op's end.
    pub end_ms: f64,
    /// Bytes the op moved (0 for launches).
    pub bytes: u64,
}

impl OpTiming {
    /// How long the op took, in milliseconds.
    pub fn duration_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }

    /// Bytes per second over the op's duration, in GB/s (10^9 bytes).
    pub fn gb_per_s(&self) -> Option<f64> {
        let seconds = self.duration_ms() / 1e3;
        (self.bytes > 0 && seconds > 0.0).then(|| self.bytes as f64 / seconds / 1e9)
    }
}

/// A span of the host's time during a run: queuing ops (`queue`), a
/// host step (its op, as written), or waiting for the GPU (`wait`).
#[derive(Clone, Debug)]
pub struct HostSpan {
    /// What the host did: `queue`, `wait`, or the host step as written.
    pub label: &'static str,
    /// Milliseconds from the start of the run.
    pub start_ms: f64,
    /// Milliseconds from the start of the run to the span's end.
    pub end_ms: f64,
}

/// Where a report's op times come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Timing is off: the report has the wall time only.
    Off,
    /// Each copy's and kernel's start and end on the device, from CUPTI's
    /// activity records. `unrecorded` ops ran but no record of them came
    /// (they are left out), and `problem` says what CUPTI reported, if
    /// anything went wrong.
    Engine {
        /// How many ops ran without a record.
        unrecorded: usize,
        /// What CUPTI reported, if anything went wrong.
        problem: Option<String>,
    },
    /// CUDA events recorded on each op's stream around it, because CUPTI
    /// could not be used (`why`) or events were asked for. An op starts
    /// when its stream reaches it, so time spent queued behind other
    /// streams' work on its engine counts as its own.
    Events {
        /// Why CUPTI was not used.
        why: String,
    },
}

impl Clock {
    /// One line on where the times come from, for tables and pictures.
    pub fn describe(&self) -> String {
        match self {
            Clock::Off => "op timing off".to_owned(),
            Clock::Engine {
                unrecorded: 0,
                problem: None,
            } => "times on the device, from CUPTI's activity records".to_owned(),
            Clock::Engine {
                unrecorded,
                problem,
            } => format!(
                "times on the device, from CUPTI's activity records; {unrecorded} ops had no record{}",
                problem
                    .as_ref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default()
            ),
            Clock::Events { why } => format!(
                "times from CUDA events, queued time included: an op starts when its stream reaches it ({why})"
            ),
        }
    }
}

/// What one run of a plan did and how long it took. Op timings are there
/// when timing is on (`set_timing(true)` on the plan); the wall time always.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The plan's name.
    pub plan: &'static str,
    /// The plan's number among the plans of the process (from 1, in the
    /// order `new` made them): a [`Timeline`](crate::Timeline) of two plans
    /// of one type tells them apart by it.
    pub instance: u32,
    /// When the run started on the host; op and host times count from it.
    pub started: Instant,
    /// Host time from the start of `run` to the end of its wait.
    pub wall: Duration,
    /// Where the op times come from.
    pub clock: Clock,
    /// Each op's time on the GPU, when timing is on.
    pub ops: Vec<OpTiming>,
    /// The host's spans, when timing is on.
    pub host: Vec<HostSpan>,
    /// How a run replayed from CUDA graphs (`set_replay(Replay::Graph)`)
    /// reached the GPU; `None` for a run queued op by op, and for a
    /// [`PlanGraph`](crate::PlanGraph)'s replays, which launch their graph
    /// as it is.
    pub replayed: Option<Replayed>,
}

/// How a replayed run reached the GPU: the graph of its shape, kept and
/// changed in place, or captured first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// No graph kept had the run's shape, or the driver refused to change
    /// one kept to it: the run was captured into a graph first.
    Captured,
    /// The graph of the run's shape was launched after some of its nodes
    /// were changed in place.
    Changed {
        /// The nodes changed: none where the run gave what the last replay
        /// of that graph gave.
        nodes: usize,
    },
}

impl RunReport {
    /// The report of a run of `plan` that started now and timed nothing.
    pub fn new(plan: &'static str) -> RunReport {
        RunReport::untimed(plan, 1, Instant::now(), Duration::ZERO)
    }

    /// The report of run `instance` of `plan`, which started at `started`
    /// and took `wall`, with no op timed.
    pub(crate) fn untimed(
        plan: &'static str,
        instance: u32,
        started: Instant,
        wall: Duration,
    ) -> RunReport {
        RunReport {
            plan,
            instance,
            started,
            wall,
            clock: Clock::Off,
            ops: Vec::new(),
            host: Vec::new(),
            replayed: None,
        }
    }

    /// From the first op's start to the last op's end.
    pub fn gpu_ms(&self) -> f64 {
        let start = self
            .ops
            .iter()
            .map(|t| t.start_ms)
            .fold(f64::INFINITY, f64::min);
        let end = self.ops.iter().map(|t| t.end_ms).fold(0.0, f64::max);
        if self.ops.is_empty() {
            0.0
        } else {
            end - start
        }
    }

    /// The sum of all ops' durations.
    pub fn busy_ms(&self) -> f64 {
        self.ops.iter().map(OpTiming::duration_ms).sum()
    }

    /// Time saved by ops running at once: busy time minus the time during
    /// which at least one op ran. Zero for a plan that overlaps nothing.
    pub fn overlap_ms(&self) -> f64 {
        let covered = covered_ms(self.ops.iter().map(|t| (t.start_ms, t.end_ms)).collect());
        (self.busy_ms() - covered).max(0.0)
    }

    /// How busy the ops of `kind` kept their engine: the share of the time
    /// from the first one's start to the last one's end during which one
    /// ran (1.0: back to back); 0.0 where there are none.
    pub fn busy_share(&self, kind: OpKind) -> f64 {
        let spans: Vec<(f64, f64)> = self
            .ops
            .iter()
            .filter(|t| t.op.kind == kind)
            .map(|t| (t.start_ms, t.end_ms))
            .collect();
        let from = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        let to = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
        if to > from {
            covered_ms(spans) / (to - from)
        } else {
            0.0
        }
    }

    /// The timing of the first op labelled `label`.
    pub fn op(&self, label: &str) -> Option<&OpTiming> {
        self.ops.iter().find(|t| t.op.label == label)
    }
}

/// The time during which at least one of `spans` ran.
fn covered_ms(mut spans: Vec<(f64, f64)>) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut covered = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (start, end) in spans {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                covered += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    covered + current.map_or(0.0, |(s, e)| e - s)
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plan {}: {:.3} ms wall",
            self.plan,
            self.wall.as_secs_f64() * 1e3
        )?;
        if self.clock == Clock::Off {
            return writeln!(f, " (op timing off)");
        }
        writeln!(
            f,
            // Not "of it": with three lanes or more at once, the time
            // overlap saves can be more than the time on the GPU.
            ", {:.3} ms on the GPU, {:.3} ms saved by overlap",
            self.gpu_ms(),
            self.overlap_ms()
        )?;
        writeln!(f, "  {}", self.clock.describe())?;
        writeln!(
            f,
            "  {:<36} {:<8} {:>10} {:>10} {:>9}",
            "op", "stream", "start ms", "time ms", "GB/s"
        )?;
        for timing in &self.ops {
            let bandwidth = match timing.gb_per_s() {
                None => "-".to_owned(),
                // A tiny copy would print as 0.0.
                Some(g) if g < 0.1 => format!("{g:.4}"),
                Some(g) => format!("{g:.1}"),
            };
            writeln!(
                f,
                "  {:<36} {:<8} {:>10.3} {:>10.3} {:>9}",
                timing.op.label,
                timing.op.lane(),
                timing.start_ms,
                timing.duration_ms(),
                bandwidth
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COPY: OpInfo = OpInfo::on_stream("copy a -> da", OpKind::CopyHostToDevice, "s1");
    const LAUNCH: OpInfo = OpInfo::on_stream("launch k", OpKind::Launch, "s2");

    fn report(spans: &[(OpInfo, f64, f64, u64)]) -> RunReport {
        RunReport {
            wall: Duration::from_millis(5),
            ops: spans
                .iter()
                .map(|&(op, start_ms, end_ms, bytes)| OpTiming {
                    op,
                    start_ms,
                    end_ms,
                    bytes,
                })
                .collect(),
            clock: Clock::Engine {
                unrecorded: 0,
                problem: None,
            },
            ..RunReport::new("P")
        }
    }

    #[test]
    fn overlap_is_busy_time_beyond_the_covered_time() {
        let overlapping = report(&[(COPY, 0.0, 2.0, 0), (LAUNCH, 1.0, 3.0, 0)]);
        assert_eq!(overlapping.busy_ms(), 4.0);
        assert_eq!(overlapping.gpu_ms(), 3.0);
        assert_eq!(overlapping.overlap_ms(), 1.0);
        let serial = report(&[(COPY, 0.0, 1.0, 0), (LAUNCH, 2.0, 3.0, 0)]);
        assert_eq!(serial.overlap_ms(), 0.0);
        // Four GPUs' copies at once (a data-parallel step) save three
        // times the time they take together.
        let four = report(&[(COPY, 0.0, 1.0, 0); 4]);
        assert_eq!((four.gpu_ms(), four.overlap_ms()), (1.0, 3.0));
    }

    #[test]
    fn an_engine_is_busy_while_any_op_of_its_kind_runs() {
        let upload = |start, end| (COPY, start, end, 0);
        let back_to_back = report(&[upload(0.0, 1.0), upload(1.0, 2.0), (LAUNCH, 5.0, 9.0, 0)]);
        assert_eq!(back_to_back.busy_share(OpKind::CopyHostToDevice), 1.0);
        let gaps = report(&[upload(0.0, 1.0), upload(0.5, 1.5), upload(3.0, 4.0)]);
        assert_eq!(gaps.busy_share(OpKind::CopyHostToDevice), 0.625);
        assert_eq!(gaps.busy_share(OpKind::Launch), 0.0);
    }

    #[test]
    fn bandwidth_counts_bytes_over_the_op_time() {
        let timing = OpTiming {
            op: COPY,
            start_ms: 0.0,
            end_ms: 2.0,
            bytes: 100_000_000,
        };
        assert_eq!(timing.gb_per_s(), Some(50.0));
        let launch = OpTiming {
            op: LAUNCH,
            start_ms: 0.0,
            end_ms: 2.0,
            bytes: 0,
        };
        assert_eq!(launch.gb_per_s(), None);
    }

    #[test]
    fn the_table_lists_every_op() {
        let text = report(&[(COPY, 0.0, 2.0, 100_000_000), (LAUNCH, 1.0, 3.0, 0)]).to_string();
        assert!(
            text.starts_with(
                "plan P: 5.000 ms wall, 3.000 ms on the GPU, 1.000 ms saved by overlap"
            )
        );
        assert!(text.contains("copy a -> da"), "{text}");
        assert!(text.contains("50.0"), "{text}");
    }
}
