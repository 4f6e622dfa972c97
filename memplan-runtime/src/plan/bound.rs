//! Which GPU's context is bound to this thread while a run's steps are
//! queued, captured or their graph nodes changed: each step needs its own
//! GPU's (launches, synchronous copies, events, kernel nodes), and binding
//! costs a driver call, so it is made only when the GPU changes.

use super::info::OrBug;
use super::steps::Resolved;
use crate::context::Context;
use crate::error::Result;
use crate::op::OpResultExt;

/// The GPU whose context is bound to this thread; `None`: not known (the
/// next step binds its own).
#[derive(Default)]
pub(crate) struct Bound(Option<u16>);

impl Bound {
    /// GPU `gpu`'s context is bound (`begin` binds the first GPU's).
    pub fn on(gpu: u16) -> Bound {
        Bound(Some(gpu))
    }

    /// Binds `resolved`'s GPU's context, unless it is bound already, and
    /// returns it.
    pub fn to<'c>(&mut self, resolved: &Resolved, contexts: &'c [Context]) -> Result<&'c Context> {
        let context = contexts.get(usize::from(resolved.gpu));
        let context = context.or_malformed().at_op(&resolved.op)?;
        if self.0 != Some(resolved.gpu) {
            let op = &resolved.op;
            (context.bind_to_thread()).map_err(|e| e.within(op.plan, op.label, op.location))?;
            self.0 = Some(resolved.gpu);
        }
        Ok(context)
    }

    /// Something else may have bound another context (a host step's code,
    /// NCCL, which sets the current device of its calls).
    pub fn forget(&mut self) {
        self.0 = None;
    }
}
