//! A plan captured as a CUDA graph.

use super::Plan;
use super::engine::{Engine, GiveRun};
use super::in_flight::InFlight;
use crate::error::{Fault, Result};
use crate::graph::Graph;
use crate::report::RunReport;

/// A plan captured as a CUDA graph ([`Graph`]): each run replays all of its
/// stream work with one launch. It borrows the plan, and gives access to its
/// host buffers only (through [`host`](Self::host) and
/// [`host_mut`](Self::host_mut)): the graph holds the addresses of the
/// plan's buffers, so the plan itself must stay as it is.
pub struct PlanGraph<'p, P: Plan> {
    engine: &'p mut Engine<P>,
    graph: Graph,
}

impl<P: Plan> Engine<P> {
    /// Captures the plan's ops as a CUDA graph, replayed with one launch per
    /// run. Errors for plans with synchronous ops, host steps or caller
    /// slices, which a graph cannot hold.
    pub fn graph(&mut self) -> Result<PlanGraph<'_, P>> {
        self.graph_given(None)
    }

    /// [`graph`](Self::graph), with what a run gives, for a plan that
    /// takes sizes or values at each run: the graph holds the ops as that
    /// run would queue them, its sizes and values checked as `run` checks
    /// them (and refused with the same errors, for a plan a graph can
    /// hold), and replays them as they are.
    pub fn graph_given(&mut self, given: Option<GiveRun<'_, P>>) -> Result<PlanGraph<'_, P>> {
        self.runner().settle();
        // Before the run's values: a plan a graph cannot hold is refused
        // before anything is resolved or agreed with other ranks.
        self.runner().check_graphable()?;
        match given {
            Some(given) => self.prepare_run(given)?,
            // Its steps are the last run's, or none: not a graph of a run.
            None if self.runner().takes_run_inputs() => {
                let why = "this plan takes sizes or values at each run: `graph` takes them too";
                return Err(self
                    .runner()
                    .error_at_plan("graph", Fault::Unsupported(why)));
            }
            None => {}
        }
        let graph = self.runner().capture()?;
        Ok(PlanGraph::new(self, graph))
    }
}

impl<'p, P: Plan> PlanGraph<'p, P> {
    /// The graph captured from `engine`'s ops.
    pub(crate) fn new(engine: &'p mut Engine<P>, graph: Graph) -> Self {
        Self { engine, graph }
    }

    /// Replays the plan and waits for it.
    pub fn run(&mut self) -> Result<RunReport> {
        let launched = self.launch();
        let report = self.engine.runner().finish();
        launched?;
        report
    }

    /// Replays the plan; the guard waits for it.
    pub fn enqueue(&mut self) -> Result<InFlight<'_>> {
        if let Err(error) = self.launch() {
            let _ = self.engine.runner().finish();
            return Err(error);
        }
        Ok(InFlight::new(self.engine.runner()))
    }

    /// Writes the captured graph to `path` in Graphviz's DOT language
    /// ([`Graph::write_dot`]): each op's node with its parameters.
    #[track_caller]
    pub fn write_dot(&self, path: &std::path::Path) -> Result<()> {
        self.graph.write_dot(path)
    }

    /// The plan's host buffers, to read between replays.
    pub fn host(&self) -> P::Host<'_> {
        self.engine.host()
    }

    /// The plan's host buffers, to change between replays.
    pub fn host_mut(&mut self) -> P::HostMut<'_> {
        self.engine.host_mut()
    }

    fn launch(&mut self) -> Result<()> {
        let runner = self.engine.runner();
        // A run nobody waited for (a leaked guard) is finished first: the
        // graph reuses the same buffers.
        if runner.is_in_flight()
            && let Err(error) = runner.finish()
        {
            runner.defer(error);
        }
        runner.begin()?;
        runner.set_in_flight();
        let stream = runner.graph_stream()?;
        // SAFETY: the graph holds addresses of the plan's own memory, which
        // the plan (borrowed by `self`) keeps alive; the host reaches it only
        // through the plan, which waits for its streams first.
        unsafe { self.graph.launch(stream) }
            .map_err(|e| e.within(runner.name(), "graph launch", runner.plan_location()))
    }
}
