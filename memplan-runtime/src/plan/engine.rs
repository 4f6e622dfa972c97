//! A built plan: what every type `memplan!` generates holds, and what its
//! methods forward to.

use super::Plan;
use super::builder::Builder;
use super::given::RunGiven;
use super::in_flight::InFlight;
use super::runner::Runner;
use super::slices::{Registrations, Slice};
use crate::error::{Fault, Result};
use crate::report::RunReport;
use crate::timer::Timing;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// What a plan with `run` parameters computes for each run, from its
/// state (the sizes and values `new` took): the run's sizes and values,
/// written into the [`RunGiven`] it is handed.
pub type GiveRun<'a, P> = &'a dyn Fn(&<P as Plan>::State, &mut RunGiven);

/// A built plan: its resources, its resolved ops and its typed host
/// buffers. Every method is safe to call in any order; each waits for a run
/// still in flight before the host touches the plan's memory.
pub struct Engine<P: Plan> {
    runner: Runner,
    state: P::State,
}

impl<P: Plan> Engine<P> {
    /// Finishes building the plan: allocates its device memory, loads its
    /// kernels, creates its streams and events, and resolves every op,
    /// checking every range, length and launch configuration. A failure
    /// frees what was made before it.
    ///
    /// # Safety
    /// `builder`'s description passed memplan's compile-time checks: no two
    /// of its ops touch memory unordered, no op reads memory before it is
    /// written or touches stream-ordered memory outside its allocation, host
    /// steps touch only the buffers they list, and each kernel's declaration
    /// matches its C++ parameters. `state` holds the host buffers `builder`
    /// allocated, and `P`'s host views and host steps touch only those.
    pub unsafe fn new(builder: Builder, state: P::State) -> Result<Self> {
        Ok(Engine {
            runner: Runner::new(builder)?,
            state,
        })
    }

    /// Runs the plan once: queues every op, waits for all of them (also
    /// when one fails), and reports on the run.
    pub fn run(&mut self) -> Result<RunReport> {
        self.run_with(&mut [])
    }

    /// Runs the plan once on the caller's slices, borrowed for the run.
    pub fn run_with(&mut self, slices: &mut [Slice<'_>]) -> Result<RunReport> {
        self.run_given(None, slices)
    }

    /// Runs the plan once with what this run gives (the plan's `run`
    /// parameters, computed by `given` from the plan's state) on the
    /// caller's slices.
    pub fn run_given(
        &mut self,
        given: Option<GiveRun<'_, P>>,
        slices: &mut [Slice<'_>],
    ) -> Result<RunReport> {
        self.runner.settle();
        self.begin()?;
        // The run's sizes first: a slice's length may be one.
        if let Some(given) = given {
            self.give(given)?;
        }
        let (registrations, resolved) = self.prepare_and_agree(slices);
        let registrations = registrations?;
        resolved?;
        self.runner.set_in_flight();
        let (runner, state) = (&mut self.runner, &mut self.state);
        // A panic in the plan's own code (a host step) unwinds past the
        // caller's slices: wait for the streams before they are released.
        let queued = catch_unwind(AssertUnwindSafe(|| {
            runner.queue(&mut |step| P::host_step(state, step, slices))
        }));
        let finished = self.runner.finish();
        drop(registrations);
        self.runner.release_slices();
        match queued {
            Ok(queued) => queued?,
            Err(panic) => resume_unwind(panic),
        }
        finished
    }

    /// Queues every op and returns at once; the guard waits. Plans that
    /// borrow the caller's slices cannot be enqueued: a guard can be leaked,
    /// and the slices must not be.
    pub fn enqueue(&mut self) -> Result<InFlight<'_>> {
        self.enqueue_given(None)
    }

    /// [`enqueue`](Self::enqueue) with what this run gives.
    pub fn enqueue_given(&mut self, given: Option<GiveRun<'_, P>>) -> Result<InFlight<'_>> {
        self.runner.settle();
        if self.runner.has_caller_slices() {
            let why = "this plan borrows the caller's slices, so it cannot run past `run`";
            return Err(self
                .runner
                .error_at_plan("enqueue", Fault::Unsupported(why)));
        }
        self.begin()?;
        if let Some(given) = given {
            self.give(given)?;
        }
        let (prepared, resolved) = self.prepare_and_agree(&[]);
        prepared?;
        resolved?;
        self.runner.set_in_flight();
        let state = &mut self.state;
        let queued = catch_unwind(AssertUnwindSafe(|| {
            self.runner
                .queue(&mut |step| P::host_step(state, step, &mut []))
        }));
        match queued {
            Ok(Ok(())) => Ok(InFlight::new(&mut self.runner)),
            Ok(Err(error)) => {
                let _ = self.runner.finish();
                Err(error)
            }
            Err(panic) => {
                let _ = self.runner.finish();
                resume_unwind(panic)
            }
        }
    }

    /// Queues every op and returns at once, without a guard: the run
    /// stays in flight until [`wait`](Self::wait), or until host code
    /// touches the plan's buffers, which waits for it first. For a loop
    /// over batches: fill one plan's buffers while another plan's run is on
    /// the GPU.
    pub fn submit_given(&mut self, given: Option<GiveRun<'_, P>>) -> Result<()> {
        let in_flight = self.enqueue_given(given)?;
        // Its run stays in flight; the plan waits for it before its memory
        // is touched (as for any guard leaked).
        std::mem::forget(in_flight);
        Ok(())
    }

    /// Waits for a run [`submit`](Self::submit_given)ted, and reports on it;
    /// `None` if none is in flight (a host view waited for it already, and
    /// its report is gone, but not its error, which comes here).
    pub fn wait(&mut self) -> Result<Option<RunReport>> {
        if self.runner.is_in_flight() {
            return self.runner.finish().map(Some);
        }
        match self.runner.take_deferred() {
            Some(error) => Err(error),
            None => Ok(None),
        }
    }

    /// The plan's host buffers, to read (after waiting for a run in flight).
    pub fn host(&self) -> P::Host<'_> {
        self.runner.settle();
        P::host(&self.state)
    }

    /// The plan's host buffers, to write (after waiting for a run in flight).
    pub fn host_mut(&mut self) -> P::HostMut<'_> {
        self.runner.settle();
        P::host_mut(&mut self.state)
    }

    /// Times each op of later runs, so that reports list them:
    /// `set_timing(true)` takes copies and kernels on the device from
    /// CUPTI where it loads (else from CUDA events, and the report says
    /// why), and the host's spans; `set_timing(Timing::Events)` uses
    /// events even where CUPTI loads. Off by default, and free when off
    /// until a plan of the process is timed by CUPTI: CUPTI is loaded then
    /// and records the process's driver calls and work from then on (turned
    /// off again, it deadlocked inside NVIDIA's libraries with other
    /// threads' driver calls). That recording made each driver call about
    /// 2 us slower on an H100 (the README's "Timelines"): time plans in a
    /// process of their own, or last. Beside threads that load modules and
    /// make and drop streams, events and graphs hard, use
    /// `Timing::Events`: turning CUPTI 13.0's recording off and on again
    /// beside such threads hung NVIDIA's libraries
    /// (`notes/gpu-run-cupti-kinds-one-gpu.log`).
    pub fn set_timing(&mut self, timing: impl Into<Timing>) -> Result<()> {
        self.runner.settle();
        self.runner.set_timing(timing.into())
    }

    /// Replays later runs from CUDA graphs, or queues their ops again; see
    /// [`Replay`](super::Replay). Errors where a graph cannot hold the plan:
    /// collectives between several GPUs of one process, the caller's
    /// slices, host steps and synchronous ops. A replayed run's report has
    /// its wall time only, as a [`PlanGraph`](super::PlanGraph)'s, and says
    /// how the run was replayed
    /// ([`RunReport::replayed`](crate::RunReport::replayed)).
    pub fn set_replay(&mut self, replay: super::Replay) -> Result<()> {
        self.runner.settle();
        self.runner.set_replay(replay)
    }

    /// Takes what a run gives and resolves the ops that read it, as a run
    /// does before it queues them: for a graph of that run.
    pub(crate) fn prepare_run(&mut self, given: GiveRun<'_, P>) -> Result<()> {
        self.runner.bind()?;
        self.give(given)?;
        let (prepared, resolved) = self.prepare_and_agree(&[]);
        drop(prepared?);
        resolved
    }

    /// Starts a run ([`Runner::begin`]). Where that fails (an error kept
    /// from a run nobody waited for, a context that cannot be bound), a
    /// rank of a job first tells the other ranks, which are about to agree
    /// on this run, as `give` does: they fail it too instead of waiting
    /// for ever.
    #[inline(always)]
    fn begin(&mut self) -> Result<()> {
        let begun = self.runner.begin();
        if begun.is_err() {
            let _ = self.runner.agree_for_run(false);
        }
        begun
    }

    /// Takes what `given` computes this run gives. Where that fails (or
    /// the user's expressions in it panic), a rank of a job first tells
    /// the other ranks, which are waiting to agree on this run: they fail
    /// it too, instead of waiting for ever.
    // Inlined into every run path (as `prepare_and_agree` is): left to
    // LLVM, a program that calls both `run` and `enqueue` got them out of
    // line, and handing their results back through memory cost about 90
    // instructions a run (callgrind, `small_ops --host-only 1`).
    #[inline(always)]
    fn give(&mut self, given: GiveRun<'_, P>) -> Result<()> {
        let mut run = self.runner.run_given();
        let state = &self.state;
        let gave = catch_unwind(AssertUnwindSafe(|| given(state, &mut run)));
        let applied = match gave {
            // The closure evaluates the caller's expressions, which may
            // run code that binds another context (another GPU's plan):
            // the plan's is bound again before anything is queued.
            Ok(()) => self.runner.apply(run).and_then(|()| self.runner.bind()),
            Err(panic) => {
                let _ = self.runner.agree_for_run(false);
                resume_unwind(panic)
            }
        };
        if applied.is_err() {
            let _ = self.runner.agree_for_run(false);
        }
        applied
    }

    /// Prepares a run (the caller's slices, and the ops that read this
    /// run's sizes) and, for one rank of a job, agrees with the other ranks
    /// that every one is ready before any queues it: the preparation, and
    /// what else failed (the resolution, or another rank).
    #[inline(always)]
    fn prepare_and_agree(&mut self, slices: &[Slice<'_>]) -> (Result<Registrations>, Result<()>) {
        let prepared = self.runner.prepare(slices);
        let resolved = match prepared {
            Ok(_) => self.runner.resolve_for_run(),
            Err(_) => Ok(()),
        };
        let ready = prepared.is_ok() && resolved.is_ok();
        match self.runner.agree_for_run(ready) {
            Err(error) if ready => (prepared, Err(error)),
            _ => (prepared, resolved),
        }
    }

    pub(crate) fn runner(&mut self) -> &mut Runner {
        &mut self.runner
    }
}

impl<P: Plan> Drop for Engine<P> {
    fn drop(&mut self) {
        // A leaked guard's run is waited for before the buffers go.
        self.runner.settle();
    }
}
