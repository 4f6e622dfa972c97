//! What the types `memplan!` generates are built on: the state every plan
//! carries, and the guard of a run that is still on the GPU.
//!
//! You rarely name these yourself; they are public so that generated code
//! (which you can read, see `tests/expand/`) only uses public API.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::timing::{OpInfo, RunReport, Timer};
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// A plan type, as `memplan!` generates it.
pub trait Plan {
    /// Waits for every stream of the run in flight, then reports on it.
    fn finish(&mut self) -> Result<RunReport>;

    /// Keeps an error that could not be returned (from a dropped
    /// [`InFlight`]) for the plan's next call to return.
    fn defer(&mut self, error: Error);
}

/// The state every generated plan carries besides its buffers.
pub struct PlanCore {
    name: &'static str,
    context: Context,
    /// Event timing of each op, when switched on.
    pub timer: Timer,
    /// Whether an enqueued run may still be on the GPU. A `Cell`, because
    /// the host-buffer accessors (`&self`) must settle such a run first.
    in_flight: Cell<bool>,
    deferred: RefCell<Option<Error>>,
    started: Instant,
}

impl PlanCore {
    pub fn new(name: &'static str, context: &Context) -> Self {
        Self {
            name,
            context: context.clone(),
            timer: Timer::default(),
            in_flight: Cell::new(false),
            deferred: RefCell::new(None),
            started: Instant::now(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Starts a run: returns an error kept from before, if any, binds the
    /// context to this thread (a plan may move between threads), and starts
    /// the clocks.
    pub fn begin(&mut self) -> Result<()> {
        if let Some(error) = self.deferred.get_mut().take() {
            return Err(error);
        }
        self.context.bind_to_thread()?;
        self.started = Instant::now();
        self.timer.begin().map_err(|e| {
            Error::new(e.into(), "start op timing", crate::Location::caller()).in_plan(self.name)
        })
    }

    /// Marks a run as queued and not waited for.
    pub fn set_in_flight(&self) {
        self.in_flight.set(true);
    }

    pub fn is_in_flight(&self) -> bool {
        self.in_flight.get()
    }

    /// Ends a run whose streams have been waited for.
    pub fn end(&self, ops: &'static [OpInfo]) -> Result<RunReport> {
        self.in_flight.set(false);
        self.timer.report(self.name, ops, self.started.elapsed())
    }

    /// If a run is in flight (its guard was leaked with `mem::forget`),
    /// waits for it with `wait_for_streams` before the host touches buffers.
    pub fn settle(&self, wait_for_streams: impl FnOnce() -> Result<()>) {
        if self.in_flight.replace(false)
            && let Err(error) = wait_for_streams()
        {
            self.deferred.borrow_mut().get_or_insert(error);
        }
    }

    pub fn defer(&mut self, error: Error) {
        self.deferred.get_mut().get_or_insert(error);
    }
}

/// A run of a plan that is queued on the GPU and not yet waited for.
///
/// It borrows the plan mutably, so host code cannot touch the plan's buffers
/// until [`wait`](Self::wait) (or the guard's drop) has waited for the GPU:
/// touching them is a borrow error. Leaking the guard with `mem::forget` is
/// safe too: the plan remembers the run is in flight and waits before its
/// buffers are touched again.
#[must_use = "the run is on the GPU until this guard is waited for"]
pub struct InFlight<'p, P: Plan + ?Sized> {
    plan: &'p mut P,
    waited: bool,
}

impl<'p, P: Plan + ?Sized> InFlight<'p, P> {
    /// Guards a run that `plan` has just queued.
    pub fn new(plan: &'p mut P) -> Self {
        Self {
            plan,
            waited: false,
        }
    }

    /// Waits for the run to finish and reports on it.
    pub fn wait(mut self) -> Result<RunReport> {
        self.waited = true;
        self.plan.finish()
    }
}

impl<P: Plan + ?Sized> Drop for InFlight<'_, P> {
    fn drop(&mut self) {
        if !self.waited
            && let Err(error) = self.plan.finish()
        {
            self.plan.defer(error);
        }
    }
}
