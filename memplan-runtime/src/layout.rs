//! Runs laid out for drawing: the lanes (host, each stream of each plan,
//! each engine), and a bar for each op and host span, timed from the
//! first run's start. The picture (`svg.rs`) and the trace (`trace.rs`)
//! show the same layout.

use crate::op::OpKind;
use crate::report::{Clock, RunReport};

/// What a lane shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneKind {
    /// The host's spans: queuing, host steps, waiting.
    Host,
    /// One stream of one plan.
    Stream,
    /// Every op of these kinds, whichever plan and stream queued it.
    Engine(&'static [OpKind]),
}

/// The engine lanes, after the streams', in the order data flows. NCCL's
/// collectives run as kernels of NCCL's own, moving data between GPUs:
/// a lane of their own, where each GPU's part shows.
const ENGINES: [(&str, &[OpKind]); 4] = [
    ("H2D copies", &[OpKind::CopyHostToDevice]),
    ("kernels", &[OpKind::Launch]),
    ("collectives", &[OpKind::Collective]),
    ("D2H copies", &[OpKind::CopyDeviceToHost]),
];

pub(crate) struct Lane {
    pub name: String,
    pub kind: LaneKind,
}

/// What a bar is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarKind {
    Op(OpKind),
    /// A host span: `queue`, `wait`, or a host step (its op's label).
    Host(&'static str),
}

pub(crate) struct Bar<'a> {
    pub lane: usize,
    pub kind: BarKind,
    pub label: &'a str,
    /// The run, and the op of it (`None` for a host span).
    pub run: usize,
    pub op: Option<usize>,
    /// Milliseconds from the first run's start.
    pub start_ms: f64,
    pub end_ms: f64,
    pub bytes: u64,
}

impl Bar<'_> {
    pub fn duration_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }

    /// GB/s (10^9 bytes a second), for bars that moved bytes.
    pub fn gb_per_s(&self) -> Option<f64> {
        let seconds = self.duration_ms() / 1e3;
        (self.bytes > 0 && seconds > 0.0).then(|| self.bytes as f64 / seconds / 1e9)
    }
}

/// The runs laid out: the lanes (host, each stream of each plan, each
/// engine used), and a bar for each host span, and for each op on its
/// stream's lane and again on its engine's, timed from the first run's
/// start.
pub(crate) struct Layout<'a> {
    pub runs: &'a [RunReport],
    pub lanes: Vec<Lane>,
    pub bars: Vec<Bar<'a>>,
    /// Where each op ran, named as its stream's lane is, by run and op.
    places: Vec<Vec<String>>,
}

impl<'a> Layout<'a> {
    pub fn new(runs: &'a [RunReport]) -> Layout<'a> {
        let places: Vec<Vec<String>> = runs
            .iter()
            .zip(owners(runs))
            .map(|(run, owner)| {
                let place = |lane: String| match &owner {
                    Some(owner) => format!("{owner} {lane}"),
                    None => lane,
                };
                run.ops.iter().map(|t| place(t.op.lane())).collect()
            })
            .collect();
        let mut lanes = Vec::new();
        if runs.iter().any(|r| !r.host.is_empty()) {
            lanes.push(Lane {
                name: "host".to_owned(),
                kind: LaneKind::Host,
            });
        }
        for place in places.iter().flatten() {
            if !lanes
                .iter()
                .any(|l| l.kind == LaneKind::Stream && &l.name == place)
            {
                lanes.push(Lane {
                    name: place.clone(),
                    kind: LaneKind::Stream,
                });
            }
        }
        for (name, kinds) in ENGINES {
            if runs
                .iter()
                .flat_map(|r| &r.ops)
                .any(|t| kinds.contains(&t.op.kind))
            {
                lanes.push(Lane {
                    name: name.to_owned(),
                    kind: LaneKind::Engine(kinds),
                });
            }
        }
        let bars = bars(runs, &lanes, &places);
        Layout {
            runs,
            lanes,
            bars,
            places,
        }
    }

    /// Where op `op` of run `run` ran, as its stream's lane is named.
    pub fn place(&self, run: usize, op: usize) -> &str {
        self.places
            .get(run)
            .and_then(|ops| ops.get(op))
            .map_or("", String::as_str)
    }

    /// From the first run's start to the last bar's end.
    pub fn end_ms(&self) -> f64 {
        self.bars.iter().map(|b| b.end_ms).fold(0.0, f64::max)
    }

    /// Where the times come from: one line per kind of clock the runs used.
    pub fn clocks(&self) -> Vec<String> {
        let mut clocks: Vec<&Clock> = Vec::new();
        for run in self.runs {
            if !clocks.contains(&&run.clock) {
                clocks.push(&run.clock);
            }
        }
        clocks.into_iter().map(Clock::describe).collect()
    }
}

fn bars<'a>(runs: &'a [RunReport], lanes: &[Lane], places: &[Vec<String>]) -> Vec<Bar<'a>> {
    let first = runs.iter().map(|r| r.started).min();
    let host = lanes.iter().position(|l| l.kind == LaneKind::Host);
    let mut bars = Vec::new();
    for (run_index, run) in runs.iter().enumerate() {
        let at = first.map_or(0.0, |first| {
            run.started.saturating_duration_since(first).as_secs_f64() * 1e3
        });
        for span in &run.host {
            bars.push(Bar {
                lane: host.unwrap_or(0),
                kind: BarKind::Host(span.label),
                label: span.label,
                run: run_index,
                op: None,
                start_ms: at + span.start_ms,
                end_ms: at + span.end_ms,
                bytes: 0,
            });
        }
        for (op_index, timing) in run.ops.iter().enumerate() {
            let place = &places[run_index][op_index];
            let stream = lanes
                .iter()
                .position(|l| l.kind == LaneKind::Stream && &l.name == place);
            let engine = lanes.iter().position(
                |l| matches!(l.kind, LaneKind::Engine(kinds) if kinds.contains(&timing.op.kind)),
            );
            for lane in stream.into_iter().chain(engine) {
                bars.push(Bar {
                    lane,
                    kind: BarKind::Op(timing.op.kind),
                    label: timing.op.label,
                    run: run_index,
                    op: Some(op_index),
                    start_ms: at + timing.start_ms,
                    end_ms: at + timing.end_ms,
                    bytes: timing.bytes,
                });
            }
        }
    }
    bars
}

/// How each run's lanes are prefixed: nothing where the timeline holds one
/// plan; the plan's name where each name is one plan; `name#k` where
/// several plans share a name (k counts them in order of first run).
fn owners(runs: &[RunReport]) -> Vec<Option<String>> {
    let mut plans: Vec<(&str, u32)> = Vec::new();
    for run in runs {
        if !plans.contains(&(run.plan, run.instance)) {
            plans.push((run.plan, run.instance));
        }
    }
    runs.iter()
        .map(|run| {
            if plans.len() < 2 {
                return None;
            }
            let same_name: Vec<u32> = plans
                .iter()
                .filter(|(name, _)| *name == run.plan)
                .map(|&(_, instance)| instance)
                .collect();
            Some(if same_name.len() < 2 {
                run.plan.to_owned()
            } else {
                let k = same_name
                    .iter()
                    .position(|&i| i == run.instance)
                    .unwrap_or(0)
                    + 1;
                format!("{}#{k}", run.plan)
            })
        })
        .collect()
}

/// Runs to draw, for the tests of the layout, the picture and the trace.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::op::{OpInfo, OpKind};
    use crate::report::{Clock, HostSpan, OpTiming, RunReport};
    use std::time::Duration;

    fn timed(
        label: &'static str,
        kind: OpKind,
        stream: &'static str,
        span: (f64, f64),
    ) -> OpTiming {
        OpTiming {
            op: OpInfo {
                plan: "Batch",
                ..OpInfo::on_stream(label, kind, stream)
            },
            start_ms: span.0,
            end_ms: span.1,
            bytes: if kind == OpKind::Launch { 0 } else { 64 << 20 },
        }
    }

    /// A batch: queue, upload, kernel, download, wait; as plan `instance`,
    /// started `at_ms` after the first.
    pub fn batch(instance: u32, at_ms: u64, first: &RunReport) -> RunReport {
        RunReport {
            plan: "Batch",
            instance,
            started: first.started + Duration::from_millis(at_ms),
            clock: Clock::Engine {
                unrecorded: 0,
                problem: None,
            },
            ops: vec![
                timed("copy x -> dx", OpKind::CopyHostToDevice, "s", (0.1, 1.3)),
                timed("launch saxpy", OpKind::Launch, "s", (1.3, 2.0)),
                timed("copy dx -> x", OpKind::CopyDeviceToHost, "s", (2.0, 3.2)),
            ],
            host: vec![
                HostSpan {
                    label: "queue",
                    start_ms: 0.0,
                    end_ms: 0.05,
                },
                HostSpan {
                    label: "wait",
                    start_ms: 2.5,
                    end_ms: 3.3,
                },
            ],
            ..RunReport::new("Batch")
        }
    }

    /// Two plans of one type taking turns, twice each.
    pub fn two_batches() -> Vec<RunReport> {
        let first = RunReport::new("Batch");
        vec![
            batch(7, 0, &first),
            batch(9, 2, &first),
            batch(7, 4, &first),
            batch(9, 6, &first),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{batch, two_batches};
    use super::*;
    use crate::op::OpInfo;
    use crate::report::OpTiming;

    fn lane_names(layout: &Layout) -> Vec<String> {
        layout.lanes.iter().map(|l| l.name.clone()).collect()
    }

    #[test]
    fn host_then_each_plans_streams_then_engines() {
        let runs = two_batches();
        let layout = Layout::new(&runs);
        assert_eq!(
            lane_names(&layout),
            [
                "host",
                "Batch#1 s",
                "Batch#2 s",
                "H2D copies",
                "kernels",
                "D2H copies"
            ]
            .map(str::to_owned)
        );
    }

    #[test]
    fn one_plan_keeps_its_stream_names() {
        let first = RunReport::new("Batch");
        let runs = [batch(3, 0, &first), batch(3, 4, &first)];
        let layout = Layout::new(&runs);
        assert_eq!(lane_names(&layout)[1], "s");
        assert_eq!(layout.lanes.len(), 5);
    }

    #[test]
    fn runs_are_placed_by_when_they_started() {
        let runs = two_batches();
        let layout = Layout::new(&runs);
        let uploads: Vec<f64> = layout
            .bars
            .iter()
            .filter(|b| b.label == "copy x -> dx" && layout.lanes[b.lane].kind == LaneKind::Stream)
            .map(|b| b.start_ms)
            .collect();
        let expected = [0.1, 2.1, 4.1, 6.1];
        assert_eq!(uploads.len(), 4);
        for (got, want) in uploads.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "{uploads:?}");
        }
        assert!((layout.end_ms() - 9.3).abs() < 1e-9);
    }

    #[test]
    fn each_op_is_on_its_stream_and_its_engine_and_host_spans_on_the_host() {
        let runs = two_batches();
        let layout = Layout::new(&runs);
        // 4 runs: 3 ops twice each, 2 host spans.
        assert_eq!(layout.bars.len(), 4 * (3 * 2 + 2));
        for bar in &layout.bars {
            let lane = &layout.lanes[bar.lane];
            match (bar.kind, lane.kind) {
                (BarKind::Host(_), LaneKind::Host) => {}
                (BarKind::Op(kind), LaneKind::Engine(kinds)) => assert!(kinds.contains(&kind)),
                (BarKind::Op(_), LaneKind::Stream) => {
                    assert_eq!(lane.name, layout.place(bar.run, bar.op.unwrap()))
                }
                other => panic!("{other:?} for {}", bar.label),
            }
        }
    }

    #[test]
    fn each_gpus_part_of_a_collective_is_on_its_stream_and_the_collectives_lane() {
        let part = |element: u16, span: (f64, f64)| OpTiming {
            op: OpInfo {
                element: Some(element),
                ..OpInfo::on_stream("all_reduce sum grads[i]", OpKind::Collective, "s")
            },
            start_ms: span.0,
            end_ms: span.1,
            bytes: 16 << 20,
        };
        let run = RunReport {
            ops: vec![part(0, (1.0, 1.4)), part(1, (1.1, 1.5))],
            ..RunReport::new("DataParallel")
        };
        let runs = [run];
        let layout = Layout::new(&runs);
        assert_eq!(
            lane_names(&layout),
            ["s[0]", "s[1]", "collectives"].map(str::to_owned)
        );
        let on = |lane: usize| -> Vec<(f64, f64)> {
            (layout.bars.iter())
                .filter(|bar| bar.lane == lane)
                .map(|bar| (bar.start_ms, bar.end_ms))
                .collect()
        };
        assert_eq!(on(0), [(1.0, 1.4)]);
        assert_eq!(on(1), [(1.1, 1.5)]);
        assert_eq!(on(2), [(1.0, 1.4), (1.1, 1.5)]);
    }

    #[test]
    fn an_empty_timeline_has_no_lanes() {
        let layout = Layout::new(&[]);
        assert!(layout.lanes.is_empty() && layout.bars.is_empty());
        assert_eq!(layout.end_ms(), 0.0);
        assert!(crate::Timeline::new().to_svg().ends_with("</svg>"));
    }
}
