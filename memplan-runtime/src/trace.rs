//! A run report drawn two ways: a Chrome trace (open it in
//! chrome://tracing or ui.perfetto.dev) and an SVG timeline of the streams.

use crate::op::OpKind;
use crate::report::RunReport;
use std::fmt::Write as _;

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

    /// The report as an SVG timeline: one row per stream, one bar per op.
    pub fn to_svg(&self) -> String {
        const WIDTH: f64 = 960.0;
        const LABELS: f64 = 90.0;
        const ROW: f64 = 28.0;
        let lanes = self.lanes();
        let end_ms = self
            .ops
            .iter()
            .map(|t| t.end_ms)
            .fold(0.0, f64::max)
            .max(1e-6);
        let scale = (WIDTH - LABELS - 10.0) / end_ms;
        let height = ROW * lanes.len() as f64 + 30.0;

        let mut svg = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" font-size="11">"#
        );
        let _ = write!(
            svg,
            r#"<text x="4" y="{}">plan {} — {:.3} ms</text>"#,
            height - 8.0,
            xml(self.plan),
            end_ms
        );
        for (row, lane) in lanes.iter().enumerate() {
            let y = row as f64 * ROW + 4.0;
            let _ = write!(svg, r#"<text x="4" y="{}">{}</text>"#, y + 16.0, xml(lane));
        }
        for timing in &self.ops {
            let row = lane_index(&lanes, &timing.op.lane());
            let x = LABELS + timing.start_ms * scale;
            let width = (timing.duration_ms() * scale).max(1.0);
            let y = row as f64 * ROW + 4.0;
            let _ = write!(
                svg,
                r#"<g><title>{} ({:.3} ms)</title><rect x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{}" fill="{}"/>"#,
                xml(timing.op.label),
                timing.duration_ms(),
                ROW - 6.0,
                colour(timing.op.kind)
            );
            if width > 60.0 {
                let _ = write!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    x + 3.0,
                    y + 15.0,
                    xml(timing.op.label)
                );
            }
            svg.push_str("</g>");
        }
        svg.push_str("</svg>");
        svg
    }

    /// Lanes in order of first use: streams (`lanes[2]` for one of a
    /// set), "sync" for synchronous ops.
    fn lanes(&self) -> Vec<String> {
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

fn lane_index(lanes: &[String], lane: &str) -> usize {
    lanes.iter().position(|l| l == lane).unwrap_or(0)
}

fn colour(kind: OpKind) -> &'static str {
    match kind {
        OpKind::CopyHostToDevice => "#7fb3d5",
        OpKind::CopyDeviceToHost => "#f5b041",
        OpKind::CopyDeviceToDevice | OpKind::CopyHostToHost => "#bb8fce",
        OpKind::Launch => "#82e0aa",
        OpKind::Fill => "#d5dbdb",
        _ => "#aab7b8",
    }
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

/// Escapes text for XML.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use crate::Location;
    use crate::op::{OpInfo, OpKind};
    use crate::report::{OpTiming, RunReport};

    const COPY: OpInfo = OpInfo {
        plan: "P",
        label: "copy dc -> c",
        kind: OpKind::CopyDeviceToHost,
        stream: Some("s2"),
        element: None,
        location: Location {
            file: "p.rs",
            line: 3,
            column: 5,
        },
    };

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
        let svg = report.to_svg();
        assert!(svg.contains(">lanes[1]</text>"), "{svg}");
    }

    #[test]
    fn svg_has_a_row_per_stream_and_a_bar_per_op() {
        let svg = report().to_svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 1);
        assert!(svg.contains(">s2</text>"));
    }
}
