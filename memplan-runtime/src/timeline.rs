//! A run report drawn as an SVG timeline: a lane per stream, then a lane
//! per engine (host-to-device copies, device-to-host copies, kernels), a
//! time axis with ticks in milliseconds, a legend of the op kinds, and
//! each op a bar whose label is clipped to it, with the whole label, its
//! time and its bandwidth on hover.

use crate::op::OpKind;
use crate::report::{OpTiming, RunReport};
use std::fmt::Write as _;

const WIDTH: f64 = 1000.0;
/// The column of lane names.
const NAMES: f64 = 130.0;
const RIGHT: f64 = 16.0;
const ROW: f64 = 24.0;
const BAR: f64 = 18.0;
/// The title above the lanes.
const TOP: f64 = 40.0;
/// The axis and legend below them.
const BOTTOM: f64 = 70.0;

/// The engine lanes: each op of these kinds is drawn on its stream's lane
/// and again on its engine's.
const ENGINES: [(&str, &[OpKind]); 3] = [
    ("H2D copies", &[OpKind::CopyHostToDevice]),
    ("D2H copies", &[OpKind::CopyDeviceToHost]),
    ("kernels", &[OpKind::Launch]),
];

impl RunReport {
    /// The report as an SVG timeline.
    ///
    /// ```
    /// # use memplan_runtime::RunReport;
    /// let report = RunReport { plan: "P", wall: Default::default(), ops: vec![] };
    /// assert!(report.to_svg().starts_with("<svg"));
    /// ```
    pub fn to_svg(&self) -> String {
        let streams = self.lanes();
        let engines: Vec<&(&str, &[OpKind])> = ENGINES
            .iter()
            .filter(|(_, kinds)| self.ops.iter().any(|t| kinds.contains(&t.op.kind)))
            .collect();
        let rows = streams.len() + engines.len();
        let height = TOP + ROW * rows as f64 + BOTTOM;
        let end_ms = self.ops.iter().map(|t| t.end_ms).fold(0.0, f64::max);
        let axis = Axis::new(end_ms);

        let mut svg = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#ffffff"/>"##
        );
        let _ = write!(
            svg,
            r##"<text x="8" y="18" font-size="14" font-weight="bold">plan {}: {:.3} ms on the GPU</text><text x="8" y="33" fill="#555">times from CUDA events: an op starts when its stream reaches it, queued time included</text>"##,
            xml(self.plan),
            self.gpu_ms()
        );
        // Lanes: a band and a name each; engine lanes after a gap line.
        let names = streams
            .iter()
            .map(String::as_str)
            .chain(engines.iter().map(|(name, _)| *name));
        for (row, name) in names.enumerate() {
            let y = TOP + ROW * row as f64;
            let band = if row % 2 == 0 { "#f4f6f7" } else { "#ffffff" };
            let _ = write!(
                svg,
                r#"<g class="lane"><rect x="0" y="{y}" width="{WIDTH}" height="{ROW}" fill="{band}"/><text x="8" y="{:.1}">{}</text></g>"#,
                y + 16.0,
                xml(name)
            );
        }
        axis.draw(&mut svg, TOP, TOP + ROW * rows as f64);
        for timing in &self.ops {
            let row = super::trace::lane_index(&streams, &timing.op.lane());
            bar(&mut svg, timing, row, &axis);
            if let Some(engine) = engines
                .iter()
                .position(|(_, kinds)| kinds.contains(&timing.op.kind))
            {
                bar(&mut svg, timing, streams.len() + engine, &axis);
            }
        }
        legend(&mut svg, self, height - 18.0);
        svg.push_str("</svg>");
        svg
    }
}

/// Where times go across the page, and the ticks that mark them.
struct Axis {
    scale: f64,
    /// Milliseconds between ticks: 1, 2 or 5 times a power of ten.
    step: f64,
    end_ms: f64,
}

impl Axis {
    fn new(end_ms: f64) -> Axis {
        let end_ms = end_ms.max(1e-3);
        let raw = end_ms / 8.0;
        let power = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * power)
            .find(|&s| s >= raw)
            .unwrap_or(10.0 * power);
        let end_ms = (end_ms / step).ceil() * step;
        Axis {
            scale: (WIDTH - NAMES - RIGHT) / end_ms,
            step,
            end_ms,
        }
    }

    fn x(&self, ms: f64) -> f64 {
        NAMES + ms * self.scale
    }

    /// Grid lines across the lanes, ticks and their labels below.
    fn draw(&self, svg: &mut String, top: f64, bottom: f64) {
        let _ = write!(
            svg,
            r##"<g class="axis"><line x1="{NAMES}" y1="{bottom}" x2="{:.1}" y2="{bottom}" stroke="#333"/>"##,
            self.x(self.end_ms)
        );
        let ticks = (self.end_ms / self.step).round() as usize;
        for tick in 0..=ticks {
            let ms = tick as f64 * self.step;
            let x = self.x(ms);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#d0d3d4"/><line x1="{x:.1}" y1="{bottom}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 4.0,
                bottom + 16.0,
                tick_label(ms, self.step)
            );
        }
        svg.push_str("</g>");
    }
}

/// `2.5 ms`, with as many decimals as the step needs.
fn tick_label(ms: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{ms:.decimals$} ms")
}

/// One op's bar on lane `row`: a rectangle, its label clipped to it (a
/// nested `svg` clips what overflows), and the whole story on hover.
fn bar(svg: &mut String, timing: &OpTiming, row: usize, axis: &Axis) {
    let x = axis.x(timing.start_ms);
    let width = (timing.duration_ms() * axis.scale).max(1.0);
    let y = TOP + ROW * row as f64 + (ROW - BAR) / 2.0;
    let bandwidth = timing
        .gb_per_s()
        .map(|g| format!(", {g:.1} GB/s"))
        .unwrap_or_default();
    let _ = write!(
        svg,
        r#"<g class="op"><title>{} on {}: {:.3} ms from {:.3} ms{bandwidth}</title><rect x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{BAR}" rx="2" fill="{}"/>"#,
        xml(timing.op.label),
        xml(&timing.op.lane()),
        timing.duration_ms(),
        timing.start_ms,
        colour(timing.op.kind)
    );
    if width > 24.0 {
        let _ = write!(
            svg,
            r#"<svg x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{BAR}"><text x="3" y="13">{}</text></svg>"#,
            xml(timing.op.label)
        );
    }
    svg.push_str("</g>");
}

/// A box and a name for each kind of op the report has.
fn legend(svg: &mut String, report: &RunReport, y: f64) {
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for timing in &report.ops {
        let entry = (kind_name(timing.op.kind), colour(timing.op.kind));
        if !kinds.contains(&entry) {
            kinds.push(entry);
        }
    }
    svg.push_str(r#"<g class="legend">"#);
    let mut x = NAMES;
    for (name, colour) in kinds {
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{y:.1}">{name}</text>"#,
            y - 10.0,
            x + 16.0
        );
        x += 24.0 + 7.0 * name.len() as f64;
    }
    svg.push_str("</g>");
}

fn kind_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::CopyHostToDevice => "copy host to device",
        OpKind::CopyDeviceToHost => "copy device to host",
        OpKind::CopyDeviceToDevice => "copy device to device",
        OpKind::CopyHostToHost => "copy host to host",
        OpKind::Launch => "kernel",
        OpKind::Fill => "fill",
        _ => "other",
    }
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

/// Escapes text for XML.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use crate::op::{OpInfo, OpKind};
    use crate::report::{OpTiming, RunReport};

    fn timed(op: OpInfo, start_ms: f64, end_ms: f64, bytes: u64) -> OpTiming {
        OpTiming {
            op,
            start_ms,
            end_ms,
            bytes,
        }
    }

    /// Two streams: an upload, a kernel and a download with a long label.
    fn report() -> RunReport {
        RunReport {
            plan: "P",
            wall: Default::default(),
            ops: vec![
                timed(
                    OpInfo::on_stream("copy a -> da", OpKind::CopyHostToDevice, "up"),
                    0.0,
                    2.0,
                    1 << 20,
                ),
                timed(
                    OpInfo::on_stream("launch vadd", OpKind::Launch, "work"),
                    2.0,
                    2.5,
                    0,
                ),
                timed(
                    OpInfo::on_stream(
                        "copy dc[i * m..min(i * m + m, n)] -> c[i * m..min(i * m + m, n)]",
                        OpKind::CopyDeviceToHost,
                        "work",
                    ),
                    2.5,
                    2.6,
                    1 << 20,
                ),
            ],
        }
    }

    #[test]
    fn a_lane_per_stream_then_per_engine() {
        let svg = report().to_svg();
        let lanes: Vec<&str> = svg
            .split(r#"<g class="lane">"#)
            .skip(1)
            .map(|lane| {
                let text = lane.split("</text>").next().unwrap_or("");
                text.rsplit('>').next().unwrap_or("")
            })
            .collect();
        assert_eq!(
            lanes,
            ["up", "work", "H2D copies", "D2H copies", "kernels"],
            "{svg}"
        );
        // Every op on its stream and its engine: two bars each.
        assert_eq!(svg.matches(r#"<g class="op">"#).count(), 6);
    }

    #[test]
    fn the_axis_has_ticks_in_milliseconds_to_past_the_end() {
        let svg = report().to_svg();
        let ticks: Vec<&str> = svg
            .split(r#"<text class="tick""#)
            .skip(1)
            .map(|t| t.split('>').nth(1).unwrap_or("").trim_end_matches("</text"))
            .collect();
        assert_eq!(ticks.first(), Some(&"0.0 ms"), "{ticks:?}");
        assert!(ticks.len() >= 4 && ticks.len() <= 12, "{ticks:?}");
        let last: f64 = ticks
            .last()
            .unwrap()
            .trim_end_matches(" ms")
            .parse()
            .unwrap();
        assert!(last >= 2.6, "the axis ends at {last}, before the last op");
    }

    #[test]
    fn labels_are_clipped_to_their_bars_and_whole_on_hover() {
        let svg = report().to_svg();
        let long = "copy dc[i * m..min(i * m + m, n)] -&gt; c[i * m..min(i * m + m, n)]";
        // The whole label in the hover title, with time and bandwidth.
        assert!(
            svg.contains(&format!("<title>{long} on work: 0.100 ms")),
            "{svg}"
        );
        // Each drawn label sits in a nested svg of its bar's width.
        for label in svg.split("<svg x=").skip(1) {
            let width: f64 = label
                .split("width=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(width > 24.0, "a label drawn in a bar {width} wide");
        }
        assert!(svg.matches("<svg x=").count() >= 2, "{svg}");
    }

    #[test]
    fn the_legend_names_each_kind_once() {
        let svg = report().to_svg();
        let legend = svg.split(r#"<g class="legend">"#).nth(1).unwrap();
        for kind in ["copy host to device", "kernel", "copy device to host"] {
            assert_eq!(legend.matches(&format!(">{kind}<")).count(), 1, "{legend}");
        }
    }

    #[test]
    fn an_empty_report_is_a_picture_too() {
        let report = RunReport {
            ops: Vec::new(),
            ..report()
        };
        let svg = report.to_svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}
