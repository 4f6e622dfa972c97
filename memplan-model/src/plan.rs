//! A plan, as written: everything it declares and does.

use crate::declarations::{
    BoundInfo, BufferInfo, EventInfo, GpusInfo, KernelInfo, LoopInfo, StreamInfo,
};
use crate::op::OpDef;
use crate::site::Site;
use crate::size::Size;

/// A plan: its declarations and ops, with every size written as a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan<'a> {
    /// The plan's name, where it is written.
    pub site: Site<'a>,
    /// The names of the size inputs: those `new` passes (sizes, constants),
    /// then the lengths of caller slices declared without one, which each
    /// run measures, then the sizes each run gives, then the loops'
    /// variables. For messages.
    pub inputs: &'a [&'a str],
    /// Every length, range bound and launch dimension.
    pub sizes: &'a [Size<'a>],
    /// The kernels it declares; launches name them by position.
    pub kernels: &'a [KernelInfo<'a>],
    /// The buffers it declares; ops name them by position.
    pub buffers: &'a [BufferInfo<'a>],
    /// The streams it declares; ops name them by position.
    pub streams: &'a [StreamInfo<'a>],
    /// The events it declares; `record` and `wait` name them by position.
    pub events: &'a [EventInfo<'a>],
    /// In program order.
    pub ops: &'a [OpDef<'a>],
    /// The `for` loops: each repeats a run of consecutive ops.
    pub loops: &'a [LoopInfo<'a>],
    /// The inputs each run gives: the plan's `run` size parameters.
    pub run_inputs: &'a [u16],
    /// The bounds the plan states of its size parameters.
    pub bounds: &'a [BoundInfo<'a>],
    /// The ops whose values each run gives (`run` value parameters).
    pub per_run: &'a [u16],
    /// `gpus gpu[g];`: the plan runs on the GPUs `new` is given; `None`
    /// for a plan on the one GPU of its context.
    pub gpus: Option<GpusInfo<'a>>,
    /// `ranks world;`: the plan is one rank of a job of one process per
    /// GPU, and `new` joins the job's communicator.
    pub ranks: Option<Site<'a>>,
}

impl Plan<'static> {
    /// A plan of nothing, which a written plan's fields replace: the model
    /// of a plan is written with only what it has (`..Plan::EMPTY`).
    pub const EMPTY: Plan<'static> = Plan {
        site: Site("", 0, 0),
        inputs: &[],
        sizes: &[],
        kernels: &[],
        buffers: &[],
        streams: &[],
        events: &[],
        ops: &[],
        loops: &[],
        run_inputs: &[],
        bounds: &[],
        per_run: &[],
        gpus: None,
        ranks: None,
    };
}

impl<'a> Plan<'a> {
    /// The plan's name.
    pub fn name(&self) -> &'a str {
        self.site.0
    }
}
