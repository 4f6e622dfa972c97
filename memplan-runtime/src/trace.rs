//! A run report as a Chrome trace (open it in chrome://tracing or
//! ui.perfetto.dev); `timeline.rs` draws it as an SVG.

use crate::report::RunReport;

impl RunReport {
    /// The report in Chrome's trace event format: one row per stream.
    ///
    /// ```
    /// # use memplan_runtime::RunReport;
    /// let report = RunReport { plan: "P", wall: Default::default(), ops: vec![] };
    /// assert!(report.to_chrome_trace().starts_with("{\"traceEvents\":["));
    /// ```
    pub fn to_chrome_trace(&self) -> String {
        let lanes = self.lanes();
        let mut events = Vec::new();
        for (tid, lane) in lanes.iter().enumerate() {
            events.push(format!(
                r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{tid},"args":{{"name":"{}"}}}}"#,
                json(lane)
            ));
        }
        for timing in &self.ops {
            let tid = lane_index(&lanes, &timing.op.lane());
            events.push(format!(
                r#"{{"name":"{}","cat":"{:?}","ph":"X","pid":1,"tid":{tid},"ts":{:.3},"dur":{:.3},"args":{{"bytes":{}}}}}"#,
                json(timing.op.label),
                timing.op.kind,
                timing.start_ms * 1e3,
                timing.duration_ms() * 1e3,
                timing.bytes
            ));
        }
        format!(
            r#"{{"traceEvents":[{}],"displayTimeUnit":"ms","otherData":{{"plan":"{}"}}}}"#,
            events.join(","),
            json(self.plan)
        )
    }

    /// Lanes in order of first use: streams (`lanes[2]` for one of a
    /// set), "sync" for synchronous ops.
    pub(crate) fn lanes(&self) -> Vec<String> {
        let mut lanes = Vec::new();
        for timing in &self.ops {
            let lane = timing.op.lane();
            if !lanes.contains(&lane) {
                lanes.push(lane);
            }
        }
        lanes
    }
}

pub(crate) fn lane_index(lanes: &[String], lane: &str) -> usize {
    lanes.iter().position(|l| l == lane).unwrap_or(0)
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
            plan: "P",
            wall: Default::default(),
            ops: vec![OpTiming {
                op: COPY,
                start_ms: 0.5,
                end_ms: 1.5,
                bytes: 64,
            }],
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
        let on = |element| OpTiming {
            op: OpInfo {
                stream: Some("lanes"),
                element: Some(element),
                ..COPY
            },
            start_ms: 0.0,
            end_ms: 1.0,
            bytes: 4,
        };
        let report = RunReport {
            ops: vec![on(0), on(1), on(0)],
            ..report()
        };
        let trace = report.to_chrome_trace();
        assert!(trace.contains(r#""args":{"name":"lanes[0]"}"#), "{trace}");
        assert!(trace.contains(r#""args":{"name":"lanes[1]"}"#), "{trace}");
        assert_eq!(trace.matches("thread_name").count(), 2, "{trace}");
    }
}
