//! The guard of a run that is queued on the GPU and not yet waited for.

use super::runner::Runner;
use crate::error::Result;
use crate::report::RunReport;

/// A run of a plan that is queued on the GPU and not yet waited for.
///
/// It borrows the plan mutably, so host code cannot touch the plan's buffers
/// until [`wait`](Self::wait) (or the guard's drop) has waited for the GPU:
/// touching them is a borrow error. Leaking the guard with `mem::forget` is
/// safe too: the plan remembers the run is in flight and waits before its
/// buffers are touched again.
#[must_use = "the run is on the GPU until this guard is waited for"]
pub struct InFlight<'p> {
    runner: &'p mut Runner,
    waited: bool,
}

impl<'p> InFlight<'p> {
    pub(crate) fn new(runner: &'p mut Runner) -> Self {
        Self {
            runner,
            waited: false,
        }
    }

    /// Waits for the run to finish and reports on it.
    pub fn wait(mut self) -> Result<RunReport> {
        self.waited = true;
        self.runner.finish()
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.waited
            && let Err(error) = self.runner.finish()
        {
            self.runner.defer(error);
        }
    }
}
