//! The methods every plan type has, written once: `memplan!` invokes
//! [`plan_methods!`](crate::__plan_methods) inside the plan's `impl` (as
//! `plan_methods!(|run params| run's values, [lent slices], host buffers,
//! summary, diagram)`), with
//! what differs from plan to plan (the parameters each run takes, the
//! closure that evaluates the run's values, the caller's slices, its host
//! buffers for the views' docs, its summary and diagram), and each method forwards
//! to the plan's engine.

/// The methods of a plan type; see `memplan-runtime/src/plan/methods.rs`.
#[doc(hidden)]
#[macro_export]
macro_rules! __plan_methods {
    // A plan whose runs borrow the caller's slices (`lent`): each run
    // waits for its work before it gives them back.
    (
        |$($param:ident: $ty:ty),*| $given:expr, [$($lent:expr),*],
        $buffers:literal, $summary:literal, $diagram:literal $(,)?
    ) => {
        /// Runs the plan once on the caller's slices, waits, and reports.
        pub fn run(&mut self, $($param: $ty),*) -> $crate::Result<$crate::RunReport> {
            self.0.run_given($given, &mut [$($lent),*])
        }

        /// Refused: a CUDA graph would keep the first run's slices.
        pub fn graph(&mut self, $($param: $ty),*) -> $crate::Result<$crate::PlanGraph<'_, Self>> {
            self.0.graph_given($given)
        }

        $crate::__plan_methods!(@every $buffers, $summary, $diagram);
    };
    // A plan whose runs take no caller slices: it may be queued and
    // waited for later.
    (
        |$($param:ident: $ty:ty),*| $given:expr,
        $buffers:literal, $summary:literal, $diagram:literal $(,)?
    ) => {
        /// Runs the plan once, waits for all of it, and reports on the run.
        pub fn run(&mut self, $($param: $ty),*) -> $crate::Result<$crate::RunReport> {
            self.0.run_given($given, &mut [])
        }

        /// Queues the plan's work; the plan stays borrowed until the guard waits.
        pub fn enqueue(&mut self, $($param: $ty),*) -> $crate::Result<$crate::InFlight<'_>> {
            self.0.enqueue_given($given)
        }

        /// Queues the plan's work and returns at once, for a loop over
        /// batches: the run stays on the GPU until `wait`, and
        /// `host()`/`host_mut()` wait for it before they lend the buffers.
        pub fn submit(&mut self, $($param: $ty),*) -> $crate::Result<()> {
            self.0.submit_given($given)
        }

        /// Waits for the run `submit` queued and reports on it; `None`
        /// if none is on the GPU.
        pub fn wait(&mut self) -> $crate::Result<::core::option::Option<$crate::RunReport>> {
            self.0.wait()
        }

        /// Captures the plan as a CUDA graph, with this run's sizes and values where it takes any (checked as `run` checks them, for a plan a graph can hold), replayed as it is with one launch per run; `set_replay` replays runs of other sizes and values.
        pub fn graph(&mut self, $($param: $ty),*) -> $crate::Result<$crate::PlanGraph<'_, Self>> {
            self.0.graph_given($given)
        }

        $crate::__plan_methods!(@every $buffers, $summary, $diagram);
    };
    (@every $buffers:literal, $summary:literal, $diagram:literal) => {
        /// What the plan declares and does, in order.
        pub const SUMMARY: &'static str = $summary;

        /// The plan as a Mermaid flowchart, a lane per stream.
        pub const DIAGRAM: &'static str = $diagram;

        /// Replays each later run from a CUDA graph (`Replay::Graph`), changed in place to the run's sizes and values, or queues its ops one by one (`Replay::Direct`, the default).
        pub fn set_replay(&mut self, replay: $crate::Replay) -> $crate::Result<()> {
            self.0.set_replay(replay)
        }

        #[doc = concat!(" The host buffers (", $buffers, "), to read, after waiting for a run in flight.")]
        pub fn host(&self) -> $crate::HostView<'_, Self> {
            self.0.host()
        }

        #[doc = concat!(" The host buffers (", $buffers, "), to write, after waiting for a run in flight.")]
        pub fn host_mut(&mut self) -> $crate::HostViewMut<'_, Self> {
            self.0.host_mut()
        }

        /// Times each operation of later runs (`true`, or `Timing::Events`); off by default, free when off
        /// until a plan of the process is timed by CUPTI, which then records the process's driver calls
        /// until it exits (see `Engine::set_timing`).
        pub fn set_timing(
            &mut self,
            timing: impl ::core::convert::Into<$crate::Timing>,
        ) -> $crate::Result<()> {
            self.0.set_timing(timing)
        }
    };
}
