//! A timeline as a Chrome trace (open it in ui.perfetto.dev or
//! chrome://tracing): the lanes of the picture (`svg.rs`), in its order,
//! each bar a complete event with its bytes and bandwidth.

use crate::layout::{BarKind, LaneKind, Layout};
use crate::report::RunReport;
use std::fmt::Write as _;

impl RunReport {
    /// The report in Chrome's trace event format; a
    /// [`Timeline`](crate::Timeline) writes several runs.
    ///
    /// ```
    /// # use memplan_runtime::RunReport;
    /// let report = RunReport::new("P");
    /// assert!(report.to_chrome_trace().starts_with("{\"traceEvents\":["));
    /// ```
    pub fn to_chrome_trace(&self) -> String {
        write(&Layout::new(std::slice::from_ref(self)))
    }
}

pub(crate) fn write(layout: &Layout) -> String {
    let (tracks, names) = tracks(layout);
    let mut events = Vec::new();
    events.push(r#"{"name":"process_name","ph":"M","pid":1,"args":{"name":"memplan"}}"#.to_owned());
    for (tid, name) in names.iter().enumerate() {
        events.push(format!(
            r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{tid},"args":{{"name":"{}"}}}}"#,
            json(name)
        ));
        events.push(format!(
            r#"{{"name":"thread_sort_index","ph":"M","pid":1,"tid":{tid},"args":{{"sort_index":{tid}}}}}"#
        ));
    }
    for (bar, tid) in layout.bars.iter().zip(tracks) {
        let category = match (bar.kind, layout.lanes[bar.lane].kind) {
            (BarKind::Host(_), _) => "host".to_owned(),
            (BarKind::Op(kind), LaneKind::Engine(_)) => format!("{kind:?},engine"),
            (BarKind::Op(kind), _) => format!("{kind:?}"),
        };
        let run = &layout.runs[bar.run];
        let mut args = format!(r#""plan":"{}","run":{}"#, json(run.plan), bar.run);
        if let Some(op) = bar.op {
            let _ = write!(args, r#","stream":"{}""#, json(layout.place(bar.run, op)));
        }
        if bar.bytes > 0 {
            let _ = write!(args, r#","bytes":{}"#, bar.bytes);
        }
        if let Some(gb) = bar.gb_per_s() {
            let _ = write!(args, r#","GB/s":{gb:.3}"#);
        }
        events.push(format!(
            r#"{{"name":"{}","cat":"{category}","ph":"X","pid":1,"tid":{tid},"ts":{:.3},"dur":{:.3},"args":{{{args}}}}}"#,
            json(bar.label),
            bar.start_ms * 1e3,
            bar.duration_ms() * 1e3,
        ));
    }
    let clocks: Vec<String> = layout
        .clocks()
        .iter()
        .map(|c| format!(r#""{}""#, json(c)))
        .collect();
    format!(
        r#"{{"traceEvents":[{}],"displayTimeUnit":"ms","otherData":{{"clock":[{}]}}}}"#,
        events.join(","),
        clocks.join(",")
    )
}

/// A track for each bar: the trace format nests bars of one track, so
/// bars of a lane that overlap without nesting (copies on two copy
/// engines, kernels at once, runs of two threads on the host lane) go on
/// extra tracks of their lane, `H2D copies (2)`; with the tracks' names.
fn tracks(layout: &Layout) -> (Vec<usize>, Vec<String>) {
    let mut order: Vec<usize> = (0..layout.bars.len()).collect();
    order.sort_by(|&a, &b| layout.bars[a].start_ms.total_cmp(&layout.bars[b].start_ms));
    // Each lane's tracks, as the end of the last bar on each.
    let mut ends: Vec<Vec<f64>> = vec![Vec::new(); layout.lanes.len()];
    let mut row = vec![0; layout.bars.len()];
    for index in order {
        let bar = &layout.bars[index];
        let lane = &mut ends[bar.lane];
        let free = lane.iter().position(|&end| end <= bar.start_ms);
        row[index] = free.unwrap_or(lane.len());
        match free {
            Some(track) => lane[track] = bar.end_ms,
            None => lane.push(bar.end_ms),
        }
    }
    let mut first = Vec::with_capacity(layout.lanes.len());
    let mut names = Vec::new();
    for (lane, tracks) in layout.lanes.iter().zip(&ends) {
        first.push(names.len());
        for track in 0..tracks.len().max(1) {
            names.push(match track {
                0 => lane.name.clone(),
                _ => format!("{} ({})", lane.name, track + 1),
            });
        }
    }
    let tids = layout
        .bars
        .iter()
        .zip(row)
        .map(|(bar, row)| first[bar.lane] + row)
        .collect();
    (tids, names)
}

/// Escapes text for a JSON string.
fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::op::{OpInfo, OpKind};
    use crate::report::{OpTiming, RunReport};

    const COPY: OpInfo = OpInfo::on_stream("copy dc -> c", OpKind::CopyDeviceToHost, "s2");

    fn report() -> RunReport {
        RunReport {
            ops: vec![OpTiming {
                op: COPY,
                start_ms: 0.5,
                end_ms: 1.5,
                bytes: 64,
            }],
            ..RunReport::new("P")
        }
    }

    #[test]
    fn chrome_trace_names_the_stream_and_times_in_microseconds() {
        let trace = report().to_chrome_trace();
        assert!(trace.contains(r#""args":{"name":"s2"}"#), "{trace}");
        assert!(trace.contains(r#""name":"copy dc -> c""#), "{trace}");
        assert!(trace.contains(r#""ts":500.000,"dur":1000.000"#), "{trace}");
    }

    #[test]
    fn each_stream_of_a_set_has_its_own_lane() {
        let on = |element, start_ms| OpTiming {
            op: OpInfo {
                stream: Some("lanes"),
                element: Some(element),
                ..COPY
            },
            start_ms,
            end_ms: start_ms + 1.0,
            bytes: 4,
        };
        let report = RunReport {
            ops: vec![on(0, 0.0), on(1, 0.5), on(0, 1.0)],
            ..report()
        };
        let trace = report.to_chrome_trace();
        assert!(trace.contains(r#""args":{"name":"lanes[0]"}"#), "{trace}");
        assert!(trace.contains(r#""args":{"name":"lanes[1]"}"#), "{trace}");
        // Two stream lanes, then the engine's, two tracks for its overlap.
        assert_eq!(trace.matches("thread_name").count(), 4, "{trace}");
        assert!(
            trace.contains(r#""tid":2,"args":{"name":"D2H copies"}"#),
            "{trace}"
        );
    }

    /// The trace of a timeline, parsed: every event well formed, the
    /// lanes named in the picture's order, each bar on a named lane, times
    /// in microseconds from the first run's start.
    #[test]
    fn a_timeline_is_valid_json_with_the_pictures_lanes() {
        let timeline = crate::Timeline::from_runs(crate::layout::fixtures::two_batches());
        let trace: serde_json::Value = serde_json::from_str(&timeline.to_chrome_trace()).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let lanes: Vec<(u64, &str)> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| {
                (
                    e["tid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            lanes,
            [
                (0, "host"),
                (1, "Batch#1 s"),
                (2, "Batch#2 s"),
                (3, "H2D copies"),
                (4, "kernels"),
                (5, "D2H copies")
            ]
        );
        let bars: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(bars.len(), 32);
        for bar in &bars {
            assert!(bar["tid"].as_u64().unwrap() < 6);
            assert!(bar["dur"].as_f64().unwrap() > 0.0);
            assert!(bar["ts"].as_f64().unwrap() >= 0.0);
        }
        let upload = bars
            .iter()
            .find(|b| b["name"] == "copy x -> dx" && b["tid"] == 2)
            .unwrap();
        assert_eq!(upload["ts"].as_f64(), Some(2100.0));
        assert_eq!(upload["args"]["bytes"].as_u64(), Some(64 << 20));
        assert_eq!(upload["cat"], "CopyHostToDevice");
        let gb = upload["args"]["GB/s"].as_f64().unwrap();
        assert!((gb - (64u64 << 20) as f64 / 1.2e6).abs() < 1e-2, "{gb}");
        assert_eq!(
            trace["otherData"]["clock"][0],
            "times on the device, from CUPTI's activity records"
        );
    }

    #[test]
    fn labels_are_escaped() {
        let report = RunReport {
            ops: vec![OpTiming {
                op: OpInfo::on_stream("host \"x\" \\ y", OpKind::Host, "s"),
                ..report().ops[0]
            }],
            ..report()
        };
        let trace: serde_json::Value = serde_json::from_str(&report.to_chrome_trace()).unwrap();
        let bar = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "X")
            .unwrap();
        assert_eq!(bar["name"], "host \"x\" \\ y");
    }

    /// Bars of one lane that overlap go on tracks of their own, named
    /// after the lane; a track's bars never overlap.
    #[test]
    fn overlapping_bars_of_a_lane_get_tracks_of_their_own() {
        let upload = |stream, start_ms, end_ms| OpTiming {
            op: OpInfo::on_stream("copy a -> da", OpKind::CopyHostToDevice, stream),
            start_ms,
            end_ms,
            bytes: 64,
        };
        let report = RunReport {
            ops: vec![
                upload("s1", 0.0, 2.0),
                upload("s2", 1.0, 3.0),
                upload("s3", 2.0, 4.0),
            ],
            ..report()
        };
        let trace: serde_json::Value = serde_json::from_str(&report.to_chrome_trace()).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["s1", "s2", "s3", "H2D copies", "H2D copies (2)"]);
        let mut tracks: Vec<Vec<(f64, f64)>> = vec![Vec::new(); names.len()];
        for bar in events.iter().filter(|e| e["ph"] == "X") {
            let (ts, dur) = (bar["ts"].as_f64().unwrap(), bar["dur"].as_f64().unwrap());
            tracks[bar["tid"].as_u64().unwrap() as usize].push((ts, ts + dur));
        }
        assert_eq!(tracks[3].len() + tracks[4].len(), 3);
        for track in &tracks {
            for (i, a) in track.iter().enumerate() {
                for b in &track[i + 1..] {
                    assert!(
                        a.1 <= b.0 || b.1 <= a.0,
                        "{a:?} and {b:?} overlap on one track"
                    );
                }
            }
        }
    }
}
