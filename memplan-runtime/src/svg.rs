//! A timeline drawn as an SVG: a lane for the host, one per stream of
//! each plan, then one per engine (host-to-device copies, device-to-host
//! copies, kernels); a time axis with ticks in milliseconds; a legend of
//! what the colours are; each op a bar whose label is clipped to it, with
//! the whole label, its place, time and bandwidth on hover. Bars on an
//! engine's lane are translucent, so work that overlapped there shows
//! darker, and gaps show as gaps.

use crate::layout::{Bar, BarKind, LaneKind, Layout};
use crate::op::OpKind;
use crate::report::RunReport;
use std::fmt::Write as _;

const WIDTH: f64 = 1000.0;
const RIGHT: f64 = 16.0;
const ROW: f64 = 24.0;
const BAR: f64 = 18.0;
/// The title and the clock's line above the lanes.
const TOP: f64 = 44.0;
/// The axis and the legend below them.
const BOTTOM: f64 = 70.0;

impl RunReport {
    /// The report as an SVG timeline; a [`Timeline`](crate::Timeline)
    /// draws several runs.
    ///
    /// ```
    /// # use memplan_runtime::RunReport;
    /// let report = RunReport::new("P");
    /// assert!(report.to_svg().starts_with("<svg"));
    /// ```
    pub fn to_svg(&self) -> String {
        draw(&Layout::new(std::slice::from_ref(self)))
    }
}

pub(crate) fn draw(layout: &Layout) -> String {
    let names = names_width(layout);
    let rows = layout.lanes.len();
    let clocks = layout.clocks();
    let top = TOP + 14.0 * clocks.len().saturating_sub(1) as f64;
    let height = top + ROW * rows as f64 + BOTTOM;
    let axis = Axis::new(layout.end_ms(), names);

    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = write!(
        svg,
        r#"<text x="8" y="18" font-size="14" font-weight="bold">{}</text>"#,
        xml(&title(layout.runs))
    );
    for (line, clock) in clocks.iter().enumerate() {
        let _ = write!(
            svg,
            r##"<text class="clock" x="8" y="{}" fill="#555">{}</text>"##,
            34 + 14 * line,
            xml(clock)
        );
    }
    for (row, lane) in layout.lanes.iter().enumerate() {
        let y = top + ROW * row as f64;
        let band = if row % 2 == 0 { "#f4f6f7" } else { "#ffffff" };
        let _ = write!(
            svg,
            r#"<g class="lane"><rect x="0" y="{y}" width="{WIDTH}" height="{ROW}" fill="{band}"/><text x="8" y="{:.1}">{}</text></g>"#,
            y + 16.0,
            xml(&lane.name)
        );
    }
    axis.draw(&mut svg, top, top + ROW * rows as f64);
    for bar in &layout.bars {
        draw_bar(&mut svg, layout, bar, top, &axis);
    }
    legend(&mut svg, layout, height - 18.0, names);
    svg.push_str("</svg>");
    svg
}

/// `plan P: 10.498 ms on the GPU, 10.601 ms wall`, or for several runs
/// `4 runs of Batch, Batch: 42.000 ms`.
fn title(runs: &[RunReport]) -> String {
    match runs {
        [run] => format!(
            "plan {}: {:.3} ms on the GPU, {:.3} ms wall",
            run.plan,
            run.gpu_ms(),
            run.wall.as_secs_f64() * 1e3
        ),
        _ => {
            let mut plans: Vec<&str> = Vec::new();
            for run in runs {
                if !plans.contains(&run.plan) {
                    plans.push(run.plan);
                }
            }
            format!("{} runs of {}", runs.len(), plans.join(", "))
        }
    }
}

/// The column of lane names: wide enough for the longest.
fn names_width(layout: &Layout) -> f64 {
    let longest = layout.lanes.iter().map(|l| l.name.chars().count()).max();
    (16.0 + 6.5 * longest.unwrap_or(0) as f64).clamp(100.0, 300.0)
}

/// Where times go across the page, and the ticks that mark them.
struct Axis {
    /// Where 0 ms is: after the lane names.
    left: f64,
    scale: f64,
    /// Milliseconds between ticks: 1, 2 or 5 times a power of ten.
    step: f64,
    end_ms: f64,
}

impl Axis {
    fn new(end_ms: f64, left: f64) -> Axis {
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
            left,
            scale: (WIDTH - left - RIGHT) / end_ms,
            step,
            end_ms,
        }
    }

    fn x(&self, ms: f64) -> f64 {
        self.left + ms * self.scale
    }

    /// Grid lines across the lanes, ticks and their labels below.
    fn draw(&self, svg: &mut String, top: f64, bottom: f64) {
        let _ = write!(
            svg,
            r##"<g class="axis"><line x1="{:.1}" y1="{bottom}" x2="{:.1}" y2="{bottom}" stroke="#333"/>"##,
            self.left,
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

/// One bar: a rectangle, its label clipped to it (a nested `svg` clips
/// what overflows), and the whole story on hover.
fn draw_bar(svg: &mut String, layout: &Layout, bar: &Bar, top: f64, axis: &Axis) {
    let x = axis.x(bar.start_ms);
    let width = (bar.duration_ms() * axis.scale).max(1.0);
    let y = top + ROW * bar.lane as f64 + (ROW - BAR) / 2.0;
    let bandwidth = bar
        .gb_per_s()
        .map(|g| format!(", {g:.1} GB/s"))
        .unwrap_or_default();
    let (class, place) = match bar.op {
        Some(op) => ("op", layout.place(bar.run, op)),
        None => ("host", "host"),
    };
    let engine = matches!(layout.lanes[bar.lane].kind, LaneKind::Engine(_));
    let _ = write!(
        svg,
        r##"<g class="{class}"><title>{} on {}: {:.3} ms from {:.3} ms{bandwidth}</title><rect x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{BAR}" rx="2" fill="{}" stroke="#ffffff" stroke-width="0.6"{}/>"##,
        xml(bar.label),
        xml(place),
        bar.duration_ms(),
        bar.start_ms,
        look(bar.kind).1,
        if engine { r#" fill-opacity="0.7""# } else { "" }
    );
    if width > 24.0 {
        let _ = write!(
            svg,
            r#"<svg x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{BAR}"><text x="3" y="13">{}</text></svg>"#,
            xml(bar.label)
        );
    }
    svg.push_str("</g>");
}

/// A box and a name for each kind of bar drawn.
fn legend(svg: &mut String, layout: &Layout, y: f64, left: f64) {
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for bar in &layout.bars {
        let entry = look(bar.kind);
        if !kinds.contains(&entry) {
            kinds.push(entry);
        }
    }
    svg.push_str(r#"<g class="legend">"#);
    let mut x = left;
    for (name, colour) in kinds {
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{y:.1}">{name}</text>"#,
            y - 10.0,
            x + 16.0
        );
        x += 24.0 + 6.5 * name.len() as f64;
    }
    svg.push_str("</g>");
}

/// What the legend calls a kind of bar, and its colour.
fn look(kind: BarKind) -> (&'static str, &'static str) {
    match kind {
        BarKind::Host("queue") => ("queuing", "#85929e"),
        BarKind::Host("wait") => ("waiting", "#d5d8dc"),
        BarKind::Host(_) => ("host step", "#f1948a"),
        BarKind::Op(OpKind::CopyHostToDevice) => ("copy host to device", "#7fb3d5"),
        BarKind::Op(OpKind::CopyDeviceToHost) => ("copy device to host", "#f5b041"),
        BarKind::Op(OpKind::CopyDeviceToDevice) => ("copy device to device", "#bb8fce"),
        BarKind::Op(OpKind::CopyHostToHost) => ("copy host to host", "#bb8fce"),
        BarKind::Op(OpKind::Launch) => ("kernel", "#82e0aa"),
        BarKind::Op(OpKind::Fill) => ("fill", "#d5dbdb"),
        BarKind::Op(OpKind::Collective) => ("NCCL collective", "#48c9b0"),
        BarKind::Op(_) => ("other", "#aab7b8"),
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
            ..RunReport::new("P")
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
            ["up", "work", "H2D copies", "kernels", "D2H copies"],
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

    #[test]
    fn the_clock_is_said_and_an_event_fallback_is_labelled() {
        let engine = RunReport {
            clock: crate::Clock::Engine {
                unrecorded: 0,
                problem: None,
            },
            ..report()
        };
        assert!(engine.to_svg().contains(
            r##"<text class="clock" x="8" y="34" fill="#555">times on the device, from CUPTI"##
        ));
        let events = RunReport {
            clock: crate::Clock::Events {
                why: "CUPTI could not be loaded".to_owned(),
            },
            ..report()
        };
        let svg = events.to_svg();
        let clock = svg.split(r#"<text class="clock""#).nth(1).unwrap();
        assert!(clock.contains("queued time included"), "{clock}");
        assert!(clock.contains("CUPTI could not be loaded"), "{clock}");
    }

    #[test]
    fn a_timeline_of_two_plans_has_a_host_lane_and_translucent_engines() {
        let timeline = crate::Timeline::from_runs(crate::layout::fixtures::two_batches());
        let svg = timeline.to_svg();
        assert!(svg.contains(">4 runs of Batch</text>"), "{svg}");
        let lanes: Vec<&str> = svg
            .split(r#"<g class="lane">"#)
            .skip(1)
            .map(|lane| {
                lane.split("</text>")
                    .next()
                    .unwrap()
                    .rsplit('>')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(lanes[..3], ["host", "Batch#1 s", "Batch#2 s"]);
        // Queue and wait of each run on the host lane.
        assert_eq!(svg.matches(r#"<g class="host">"#).count(), 8);
        // Each op's bar on its engine's lane is see-through, on its stream's not.
        assert_eq!(svg.matches(r#"fill-opacity="0.7""#).count(), 12);
        assert_eq!(svg.matches(r#"<g class="op">"#).count(), 24);
        let legend = svg.split(r#"<g class="legend">"#).nth(1).unwrap();
        for entry in [">queuing<", ">waiting<", ">kernel<"] {
            assert_eq!(legend.matches(entry).count(), 1, "{legend}");
        }
        // The hover names the plan's stream, also on an engine lane.
        assert!(
            svg.contains("<title>launch saxpy on Batch#2 s: 0.700 ms from 3.300 ms</title>"),
            "{svg}"
        );
    }
}
