//! What the types `memplan!` generates are built on: the [`Plan`] trait
//! they implement, the guard of a run still on the GPU ([`InFlight`]), and
//! a plan captured as a CUDA graph ([`PlanGraph`]).
//!
//! The plan's logic lives here, once, not in the generated code: a plan
//! type holds an `Engine`, made by its `new` from a static description of
//! the plan (the `__private` items), and every method forwards to it.

mod address;
mod bound;
mod builder;
mod check;
mod collectives;
mod engine;
mod fingerprint;
mod given;
mod graph;
mod group;
mod in_flight;
mod info;
mod launch;
mod layout;
mod made;
mod methods;
mod replay;
mod resolve;
mod runner;
mod schedule;
mod sizes;
mod slices;
mod step;
mod steps;
mod views;

pub use builder::Builder;
pub use check::{Checked, Checker};
pub use engine::Engine;
pub use given::RunGiven;
pub use graph::PlanGraph;
pub use in_flight::InFlight;
pub use info::{Elem, KernelCode, ParamType, PlanInfo, elem};
pub use replay::{GRAPHS_KEPT, Replay};
pub use slices::{Slice, copied, pick};

use crate::error::Fault;

/// The host buffers of plan `P`, borrowed to read: a struct with a field
/// per host buffer, `plan.host().data`.
pub type HostView<'p, P> = <P as Plan>::Host<'p>;

/// The host buffers of plan `P`, borrowed to write.
pub type HostViewMut<'p, P> = <P as Plan>::HostMut<'p>;

/// A plan type, as `memplan!` generates it: the views of its host buffers,
/// and what its engine calls back into.
///
/// You rarely name it, except to write code that works with any plan:
///
/// ```
/// use memplan_runtime::{Plan, PlanGraph, Result};
///
/// /// Replays a captured plan `times` times.
/// fn replay<P: Plan>(graph: &mut PlanGraph<'_, P>, times: usize) -> Result<()> {
///     for _ in 0..times {
///         graph.run()?;
///     }
///     Ok(())
/// }
/// ```
pub trait Plan: Sized + 'static {
    /// The plan's host buffers, borrowed to read.
    type Host<'a>;
    /// The plan's host buffers, borrowed to write.
    type HostMut<'a>;

    /// The plan's host buffers and parameters, typed.
    #[doc(hidden)]
    type State;

    #[doc(hidden)]
    fn host(state: &Self::State) -> Self::Host<'_>;

    #[doc(hidden)]
    fn host_mut(state: &mut Self::State) -> Self::HostMut<'_>;

    /// Runs host step `step` of the plan.
    #[doc(hidden)]
    fn host_step(
        state: &mut Self::State,
        step: u16,
        slices: &mut [Slice<'_>],
    ) -> Result<(), Fault> {
        let _ = (state, step, slices);
        Ok(())
    }
}
