//! What the types `memplan!` generates are built on: the state every plan
//! carries, and the guard of a run that is still on the GPU.
//!
//! You rarely name these yourself; they are public so that generated code
//! (which you can read, see `tests/expand/`) only uses public API.

use crate::context::Context;
use crate::copy::device_part;
use crate::driver::check;
use crate::error::{DriverError, Error, Fault, Location, Result};
use crate::graph::Graph;
use crate::memory::{DeviceAddress, DevicePtr, Element, HostMemoryMut, resolve};
use crate::stream::Stream;
use crate::timing::{OpInfo, RunReport, Timer};
use std::cell::{Cell, RefCell};
use std::ops::RangeBounds;
use std::time::Instant;

/// A plan type, as `memplan!` generates it.
pub trait Plan {
    /// The struct of the plan's host buffers, borrowed to read.
    type Host<'a>
    where
        Self: 'a;
    /// The struct of the plan's host buffers, borrowed to write.
    type HostMut<'a>
    where
        Self: 'a;

    /// The host buffers (after waiting for a run in flight).
    fn host_view(&self) -> Self::Host<'_>;

    /// The host buffers, to write (after waiting for a run in flight).
    fn host_view_mut(&mut self) -> Self::HostMut<'_>;

    /// Waits for every stream of the run in flight, then reports on it.
    fn finish(&mut self) -> Result<RunReport>;

    /// Keeps an error that could not be returned (from a dropped
    /// [`InFlight`]) for the plan's next call to return.
    fn defer(&mut self, error: Error);

    fn core_mut(&mut self) -> &mut PlanCore;

    /// The stream a captured graph of the plan is launched on.
    fn launch_stream(&self) -> Option<&Stream>;
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
    #[track_caller]
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

    /// Switches event timing of the plan's `op_count` ops on or off.
    #[track_caller]
    pub fn set_timing(&mut self, on: bool, op_count: usize) -> Result<()> {
        if on {
            self.timer.enable(&self.context, op_count)
        } else {
            self.timer.disable();
            Ok(())
        }
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

/// A plan captured as a CUDA graph ([`Graph`]): each run replays all of its
/// stream work with one launch. It borrows the plan, and gives access to its
/// host buffers only (through [`host`](Self::host) and
/// [`host_mut`](Self::host_mut)): the graph holds the addresses of the
/// plan's buffers, so the plan itself must stay as it is.
pub struct PlanGraph<'p, P: Plan> {
    plan: &'p mut P,
    graph: Graph,
}

impl<'p, P: Plan> PlanGraph<'p, P> {
    /// Wraps the graph captured from `plan`'s work.
    ///
    /// # Safety
    /// `graph` was captured from `plan`'s own stream work (as the generated
    /// `graph()` does), so it touches only memory the plan owns, and
    /// `P::finish` waits for every stream that work runs on.
    pub unsafe fn new(plan: &'p mut P, graph: Graph) -> Self {
        Self { plan, graph }
    }

    /// Replays the plan and waits for it.
    pub fn run(&mut self) -> Result<RunReport> {
        let launched = self.launch();
        let report = self.plan.finish();
        launched?;
        report
    }

    /// Replays the plan; the guard waits for it.
    pub fn enqueue(&mut self) -> Result<InFlight<'_, P>> {
        self.launch()?;
        Ok(InFlight::new(&mut *self.plan))
    }

    /// The plan's host buffers, to read between replays.
    pub fn host(&self) -> P::Host<'_> {
        self.plan.host_view()
    }

    /// The plan's host buffers, to change between replays.
    pub fn host_mut(&mut self) -> P::HostMut<'_> {
        self.plan.host_view_mut()
    }

    fn launch(&mut self) -> Result<()> {
        // A run the plan queued and nobody waited for (a leaked guard) is
        // finished first: the graph reuses the same buffers.
        if self.plan.core_mut().is_in_flight()
            && let Err(error) = self.plan.finish()
        {
            self.plan.defer(error);
        }
        let core = self.plan.core_mut();
        core.begin()?;
        core.set_in_flight();
        let name = core.name();
        let Some(stream) = self.plan.launch_stream() else {
            let fault = Fault::Unsupported("the plan has no stream to launch its graph on");
            return Err(Error::new(fault, "graph launch", Location::caller()).in_plan(name));
        };
        // SAFETY: the graph holds addresses of the plan's own buffers, which
        // the plan (borrowed by `self`) keeps alive; the host reaches them
        // only through the plan, which waits first.
        unsafe { self.graph.launch(stream) }
            .map_err(|e| e.within(name, "graph launch", Location::caller()))
    }
}

/// Waits for every stream; the first failure, after waiting for all.
///
/// A failed wait has not waited: if a stream's wait fails, the whole context
/// is waited for before the error is returned, since the caller is about to
/// let the host touch the memory the stream used.
pub fn wait_all(streams: &[&Stream]) -> Result<()> {
    let mut first = Ok(());
    for stream in streams {
        if let Err(error) = stream.synchronize() {
            let _ = stream.context().synchronize();
            first = first.and(Err(error));
        }
    }
    first
}

/// Waits for the legacy default stream, on which synchronous launches run.
pub fn sync_legacy_stream() -> Result<(), DriverError> {
    // SAFETY: the legacy stream needs no handle.
    check(unsafe { crate::driver::cu::cuStreamSynchronize(std::ptr::null_mut()) })
}

/// The device address of `range` of `memory`, as a kernel argument.
pub fn device_arg<T: Element, M: DeviceAddress<T> + ?Sized>(
    memory: &M,
    range: impl RangeBounds<usize>,
) -> Result<DevicePtr<T>, Fault> {
    Ok(device_part(memory, range)?.0)
}

/// Fills `range` of host memory with `value`, on the CPU.
pub fn fill_host<T: Element, M: HostMemoryMut<T> + ?Sized>(
    memory: &mut M,
    range: impl RangeBounds<usize>,
    value: T,
) -> Result<usize, Fault> {
    let (ptr, len) = memory.host_parts_mut();
    let range = resolve(range, len)?;
    // SAFETY: `len` initialized elements owned by `memory`, borrowed mutably.
    let slice = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
    slice[range.clone()].fill(value);
    Ok(range.len() * size_of::<T>())
}

/// Compiles only for `Copy` types: the plan's value parameters are copied
/// into each run.
pub fn assert_copy<T: Copy>() {}

/// `len` zeroed elements of pageable host memory.
pub fn pageable<T: Element>(len: usize) -> Vec<T> {
    vec![T::zeroed(); len]
}

/// Checks that a caller's slice has the length the plan declares for it.
pub fn expect_len(actual: usize, expected: usize) -> Result<(), Fault> {
    if actual == expected {
        Ok(())
    } else {
        Err(Fault::WrongLength { expected, actual })
    }
}
