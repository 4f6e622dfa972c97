//! The report of a run: its wall time and, with timing on, each op's.

use crate::op::OpInfo;
use std::fmt;
use std::time::Duration;

/// One op's time on the GPU.
#[derive(Clone, Debug)]
pub struct OpTiming {
    pub op: OpInfo,
    /// Milliseconds from the start of the run.
    pub start_ms: f64,
    pub end_ms: f64,
    /// Bytes the op moved (0 for launches).
    pub bytes: u64,
}

impl OpTiming {
    pub fn duration_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }

    /// Bytes per second over the op's duration, in GB/s (10^9 bytes).
    pub fn gb_per_s(&self) -> Option<f64> {
        let seconds = self.duration_ms() / 1e3;
        (self.bytes > 0 && seconds > 0.0).then(|| self.bytes as f64 / seconds / 1e9)
    }
}

/// What one run of a plan did and how long it took. Op timings are there
/// when timing is on (`set_timing(true)` on the plan); the wall time always.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub plan: &'static str,
    /// Host time from the start of `run` to the end of its wait.
    pub wall: Duration,
    pub ops: Vec<OpTiming>,
}

impl RunReport {
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
        let mut spans: Vec<(f64, f64)> = self.ops.iter().map(|t| (t.start_ms, t.end_ms)).collect();
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
        if let Some((s, e)) = current {
            covered += e - s;
        }
        (self.busy_ms() - covered).max(0.0)
    }

    /// The timing of the first op labelled `label`.
    pub fn op(&self, label: &str) -> Option<&OpTiming> {
        self.ops.iter().find(|t| t.op.label == label)
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plan {}: {:.3} ms wall",
            self.plan,
            self.wall.as_secs_f64() * 1e3
        )?;
        if self.ops.is_empty() {
            return writeln!(f, " (op timing off)");
        }
        writeln!(
            f,
            ", {:.3} ms on the GPU, {:.3} ms of it overlapped",
            self.gpu_ms(),
            self.overlap_ms()
        )?;
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
    use crate::op::OpKind;

    const COPY: OpInfo = OpInfo::on_stream("copy a -> da", OpKind::CopyHostToDevice, "s1");
    const LAUNCH: OpInfo = OpInfo::on_stream("launch k", OpKind::Launch, "s2");

    fn report(spans: &[(OpInfo, f64, f64, u64)]) -> RunReport {
        RunReport {
            plan: "P",
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
                "plan P: 5.000 ms wall, 3.000 ms on the GPU, 1.000 ms of it overlapped"
            )
        );
        assert!(text.contains("copy a -> da"), "{text}");
        assert!(text.contains("50.0"), "{text}");
    }
}
