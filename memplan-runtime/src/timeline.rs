//! Runs of several plans on one time axis: the recorder. `layout.rs`
//! puts its runs in lanes; `svg.rs` draws them, `trace.rs` writes them.

use crate::layout::Layout;
use crate::report::RunReport;

/// The reports of several runs, of one plan or several, on one time
/// axis: the two plans of a double-buffered batch loop, or successive
/// runs of a pipeline. Turn timing on for each plan, add each run's
/// report, and draw the whole.
///
/// ```
/// # use memplan_runtime::{RunReport, Timeline};
/// let mut timeline = Timeline::new();
/// # let (even, odd) = (RunReport::new("Batch"), RunReport::new("Batch"));
/// // let even = plan.run()?; let odd = other.run()?; ...
/// timeline.add(even);
/// timeline.add(odd);
/// assert_eq!(timeline.runs().len(), 2);
/// let svg = timeline.to_svg(); // or .to_chrome_trace(), for ui.perfetto.dev
/// # assert!(svg.starts_with("<svg"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    runs: Vec<RunReport>,
}

impl Timeline {
    /// A timeline of no runs yet.
    pub fn new() -> Timeline {
        Timeline::default()
    }

    /// A timeline of these runs.
    pub fn from_runs(runs: impl IntoIterator<Item = RunReport>) -> Timeline {
        Timeline {
            runs: runs.into_iter().collect(),
        }
    }

    /// Adds a run's report; it is placed by when it started.
    pub fn add(&mut self, report: RunReport) {
        self.runs.push(report);
    }

    /// The runs' reports, in the order they were added.
    pub fn runs(&self) -> &[RunReport] {
        &self.runs
    }

    /// The timeline as an SVG picture (see [`RunReport::to_svg`]).
    pub fn to_svg(&self) -> String {
        crate::svg::draw(&Layout::new(&self.runs))
    }

    /// The timeline in Chrome's trace event format, for ui.perfetto.dev
    /// or chrome://tracing: the same lanes as the picture.
    pub fn to_chrome_trace(&self) -> String {
        crate::trace::write(&Layout::new(&self.runs))
    }
}

impl From<RunReport> for Timeline {
    fn from(report: RunReport) -> Timeline {
        Timeline { runs: vec![report] }
    }
}
