//! A built plan's runs: what each run gives (its sizes, values and the
//! caller's slices), the steps resolved for it, queued in order, waited
//! for and reported on, or captured as a CUDA graph. What the plan made at
//! `new` is [`Made`]'s; its steps are [`Steps`]'. [`Engine`](super::Engine)
//! adds the typed host buffers.

use super::bound::Bound;
use super::builder::Builder;
use super::fingerprint::Agreement;
use super::given::{Givens, RunGiven};
use super::group::{group_at, queue_group};
use super::info::{BufferKind, MALFORMED, Op, PlanInfo};
use super::made::Made;
use super::replay::{Replay, Replays, Target};
use super::resolve::Against;
use super::sizes::Sizes;
use super::slices::{Lock, Registrations, Slice};
use super::step::{Resources, Step};
use super::steps::{Inputs, Resolved, Steps};
use crate::context::release_in;
use crate::driver;
use crate::error::{Error, Fault, Location, Result};
use crate::graph::{Capture, Graph, tried_again_if_invalidated};
use crate::op::OpResultExt;
use crate::report::{Replayed, RunReport};
use crate::stream::{LEGACY, Stream, wait_all};
use crate::timer::{Timer, Timing};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// The next plan's number, for reports.
static NEXT_INSTANCE: AtomicU32 = AtomicU32::new(1);

pub(crate) struct Runner {
    info: &'static PlanInfo,
    /// The graphs each run is replayed from, under `Replay::Graph`. Before
    /// `made`: dropped first, while the kernels and memory their nodes
    /// name are still there.
    replays: Option<Replays>,
    /// How the run in flight was replayed, for its report.
    replayed: Option<Replayed>,
    /// What the last run gave, kept for the next to fill in.
    spare: RunGiven,
    made: Made,
    sizes: Sizes,
    /// The values `new` gave (kept: ops resolved at each run need them).
    given: Givens,
    steps: Steps,
    /// For one rank of a job whose runs can differ (it has `run`
    /// parameters or caller slices): the plan's fingerprint and the run
    /// inputs its collectives depend on, which each run agrees on with the
    /// other ranks, with whether it is ready, before it queues anything.
    agree_each_run: Option<(u64, Vec<u16>)>,
    /// Stream-ordered allocations during a run; 0 when not allocated.
    scratch: Vec<u64>,
    /// The caller slices' addresses during a run.
    params: Vec<u64>,
    timer: Timer,
    /// This plan's number among the plans of the process, for reports.
    instance: u32,
    /// Whether `steps` are resolved for the sizes and values the plan
    /// holds now: a run that gives the same again resolves nothing.
    resolved: bool,
    /// Whether `steps` are resolved for the sizes the plan holds now, and
    /// only values differ: the run writes them into its steps.
    values_only: bool,
    /// Whether a run may still be on the GPU. A `Cell`, because the host
    /// views (`&self`) must settle such a run first.
    in_flight: Cell<bool>,
    /// An error a dropped guard could not return, for the next call.
    deferred: RefCell<Option<Error>>,
    started: Instant,
}

impl Runner {
    /// Makes everything the plan declares besides its host buffers, and
    /// resolves every op; a failure frees what was made before it.
    pub fn new(builder: Builder) -> Result<Runner> {
        let Builder {
            contexts,
            info,
            mut sizes,
            host,
            given,
            mut joined,
        } = builder;
        // A failure here drops `joined`, which tells the other ranks.
        let made = Made::make(info, contexts, &mut sizes, &host, &mut joined)?;
        let inputs = Inputs {
            layout: &made.layout,
            against: Against::Gpus(&made.kernels),
            sizes: &mut sizes,
            given: &given,
        };
        let steps = Steps::new(inputs);
        let agree_each_run = agree_at_new(&made, &sizes, steps.is_ok())?;
        Ok(Runner {
            info,
            scratch: vec![0; usize::from(made.layout.scratch_buffers)],
            params: vec![0; usize::from(made.layout.caller_slices)],
            made,
            sizes,
            given,
            steps: steps?,
            resolved: false,
            values_only: false,
            agree_each_run,
            timer: Timer::default(),
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
            in_flight: Cell::new(false),
            deferred: RefCell::new(None),
            started: Instant::now(),
            replays: None,
            replayed: None,
            spare: RunGiven::default(),
        })
    }

    /// What the next run gives, to fill in: the one the last run gave,
    /// emptied (its room kept, so that giving a run allocates no room for
    /// its sizes and values).
    pub fn run_given(&mut self) -> RunGiven {
        let mut run = std::mem::take(&mut self.spare);
        run.clear();
        run
    }

    /// Takes what this run gives: its sizes and its values; `run` is kept
    /// for the next (see [`run_given`](Self::run_given)).
    pub fn apply(&mut self, run: RunGiven) -> Result<()> {
        let applied = self.apply_given(&run);
        self.spare = run;
        applied
    }

    fn apply_given(&mut self, run: &RunGiven) -> Result<()> {
        if run.sizes.len() != self.info.run_inputs.len() {
            return Err(self.info.error(self.info.site, MALFORMED));
        }
        // Values only for what each run gives: an argument or a fill of an
        // op the description lists, never one `new` gave.
        let info = self.info;
        let per_run = |op: u16| info.per_run.contains(&op);
        let run_argument = |op: u16, arg: u16| {
            per_run(op)
                && matches!(
                    info.ops.get(usize::from(op)).map(|def| &def.op),
                    Some(Op::Launch(launch)) if matches!(
                        launch.args.get(usize::from(arg)),
                        Some(super::info::Arg::Value | super::info::Arg::Bound(..))
                    )
                )
        };
        let fill = |op: u16| {
            per_run(op)
                && matches!(
                    info.ops.get(usize::from(op)).map(|def| &def.op),
                    Some(Op::Fill(_))
                )
        };
        if !run.given.values.iter().all(|g| run_argument(g.op, g.arg))
            || !run.given.fills.iter().all(|g| fill(g.op))
            || !run.given.dims.is_empty()
            || !run.given.shared.is_empty()
        {
            return Err(self.info.error(info.site, MALFORMED));
        }
        // The same sizes and values as the run the steps were resolved
        // for (a loop of equal batches): nothing to resolve again.
        let sizes_kept = (self.info.run_inputs.iter())
            .zip(&run.sizes)
            .all(|(&input, &value)| self.sizes.input(input) == Some(value));
        let values_changed = self.given.replace(&run.given);
        if self.resolved && sizes_kept && !values_changed {
            return Ok(());
        }
        // The same sizes, new values: steps resolved for the sizes stand,
        // with the values written into them.
        self.values_only = (self.resolved || self.values_only) && sizes_kept;
        self.resolved = false;
        for (&input, &value) in self.info.run_inputs.iter().zip(&run.sizes) {
            self.sizes.set_run_input(input, value);
        }
        Ok(())
    }

    /// For one rank of a job, before a run queues anything: agrees with the
    /// other ranks on the sizes its collectives depend on and on whether
    /// every rank is `ready` (made it this far), so that all queue the run
    /// or none does; a rank that disagreed, or stopped, would leave the
    /// others waiting in a collective for ever.
    pub fn agree_for_run(&self, ready: bool) -> Result<()> {
        let (Some((plan, inputs)), [comm]) = (&self.agree_each_run, &self.made.comms[..]) else {
            return Ok(());
        };
        let sizes = self.sizes.inputs_of(inputs);
        super::fingerprint::agree(comm, *plan, &sizes, ready)
            .map_err(|e| self.info.within(self.info.site, e))
    }

    /// Resolves what reads this run's sizes and values (given by
    /// `prepare` and `apply`): the ops that do, or the whole plan again
    /// when a loop does.
    pub fn resolve_for_run(&mut self) -> Result<()> {
        // Resolved for these sizes and values, bounds checked, by the last
        // run; the caller's slices differ from run to run.
        if self.resolved && !self.has_caller_slices() {
            return Ok(());
        }
        // Only values changed since the steps were resolved: written into
        // them, checked as resolving checks them; where that cannot be
        // done, resolved as usual below.
        if std::mem::take(&mut self.values_only)
            && !self.has_caller_slices()
            && (self.steps).rewrite_values(self.info, &mut self.sizes, &self.given)
        {
            self.resolved = true;
            return Ok(());
        }
        self.resolved = false;
        // The bounds first: the checks took them as true of every size.
        self.sizes
            .check_bounds(false)
            .map_err(|(site, fault)| self.info.error(site, fault))?;
        self.steps.resolve_for_run(Inputs {
            layout: &self.made.layout,
            against: Against::Gpus(&self.made.kernels),
            sizes: &mut self.sizes,
            given: &self.given,
        })?;
        self.resolved = true;
        Ok(())
    }

    pub fn has_caller_slices(&self) -> bool {
        !self.params.is_empty()
    }

    /// Checks the caller's slices against the plan, page-locks those the
    /// plan registers, and resolves the ops that read their lengths.
    pub fn prepare(&mut self, slices: &[Slice<'_>]) -> Result<Registrations> {
        // Most plans take no slices: nothing to check or lock.
        if slices.is_empty() && !self.has_caller_slices() {
            return Ok(Registrations::default());
        }
        let info = self.info;
        // The slices' lengths are inputs too: the steps are resolved again.
        if !slices.is_empty() {
            self.resolved = false;
            self.values_only = false;
        }
        let declared: Vec<(usize, &super::info::BufferInfo)> = info
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b.kind, BufferKind::Param { .. }))
            .collect();
        if declared.len() != slices.len() {
            let fault = Fault::Unsupported(if declared.is_empty() {
                "this plan takes no caller slices"
            } else {
                "this plan takes the caller's slices: pass them to `run`"
            });
            return Err(self.info.error(info.site, fault));
        }
        let mut locks = Vec::new();
        for (param, ((index, buffer), slice)) in declared.iter().zip(slices).enumerate() {
            let BufferKind::Param {
                mutable,
                registered,
                measured,
            } = buffer.kind
            else {
                return Err(self.info.error(buffer.site, MALFORMED));
            };
            let elem = info
                .elem(*index as u16)
                .map_err(|f| self.info.error(buffer.site, f))?;
            if !elem.same_as(&slice.elem()) || (mutable && !slice.is_mutable()) {
                let fault = Fault::Unsupported("a slice of another type than the plan declares");
                return Err(self.info.error(buffer.site, fault));
            }
            match measured {
                Some(input) => self.sizes.set_run_input(input, slice.len()),
                None => {
                    let expected = self
                        .sizes
                        .get(buffer.len)
                        .map_err(|f| self.info.error(buffer.site, f))?;
                    if slice.len() != expected {
                        let fault = Fault::WrongLength {
                            expected,
                            actual: slice.len(),
                        };
                        return Err(self.info.error(buffer.site, fault));
                    }
                }
            }
            self.params[param] = slice.address();
            if registered {
                let bytes = (slice.len() * elem.size()) as u64;
                locks.push(Lock {
                    start: slice.address(),
                    end: slice.address() + bytes,
                    param,
                });
            }
        }
        // Pinned for every GPU of the plan, not only the first.
        let portable = self.made.contexts.len() > 1;
        let registrations = Registrations::lock(&self.made.contexts[0], &locks, portable).map_err(
            |(param, fault)| {
                let site = declared[param].1.site;
                Error::new(fault, "cuMemHostRegister", self.info.location(site)).within(
                    info.name(),
                    site.0,
                    self.info.location(site),
                )
            },
        )?;
        Ok(registrations)
    }

    /// Forgets the caller's slices, after the run that used them.
    pub fn release_slices(&mut self) {
        self.params.fill(0);
    }

    /// Starts a run: returns an error kept from before, if any, binds the
    /// context to this thread (a plan may move between threads), and starts
    /// the clocks.
    pub fn begin(&mut self) -> Result<()> {
        self.bind()?;
        self.started = Instant::now();
        self.timer
            .begin(self.started)
            .map_err(|code| self.error_at_plan("start op timing", code.into()))
    }

    /// Returns an error kept from before, if any, and binds the context to
    /// this thread (a plan may move between threads).
    pub fn bind(&mut self) -> Result<()> {
        if let Some(error) = self.deferred.get_mut().take() {
            return Err(error);
        }
        self.made.contexts[0]
            .bind_to_thread()
            .map_err(|e| self.info.within(self.info.site, e))
    }

    pub fn set_in_flight(&self) {
        self.in_flight.set(true);
    }

    pub fn is_in_flight(&self) -> bool {
        self.in_flight.get()
    }

    /// Queues the run: replays its graph under `Replay::Graph`, else
    /// queues every op (host steps through `host`).
    pub fn queue(&mut self, host: &mut dyn FnMut(u16) -> Result<(), Fault>) -> Result<()> {
        if self.replays.is_some() {
            self.replay()
        } else {
            self.queue_steps(host)
        }
    }

    /// Queues every op, in program order; host steps run through `host`.
    fn queue_steps(&mut self, host: &mut dyn FnMut(u16) -> Result<(), Fault>) -> Result<()> {
        let Runner {
            made,
            steps,
            scratch,
            params,
            timer,
            ..
        } = self;
        let steps = steps.for_queue();
        let (contexts, streams) = (&made.contexts, &made.streams);
        timer.queue(&contexts[0], steps.len())?;
        let mut on = Resources {
            contexts,
            streams,
            events: &made.events,
            kernels: &made.kernels,
            comms: &made.comms,
            scratch,
            params,
        };
        // The common plan (one GPU, untimed, no host step, no collective)
        // needs none of the bookkeeping of the loop below: no context to
        // bind again (nothing but a host step or NCCL binds another), no
        // group, no marks. A fifth of a run's own host cost at one launch
        // (`cargo xtask host-cost --count 1`: 39.55M -> 35.06M instructions).
        let plain = contexts.len() == 1
            && !timer.is_on()
            && steps.iter().all(|resolved| {
                resolved.gpu == 0
                    && !matches!(resolved.step, Step::Host(_) | Step::Collective { .. })
            });
        if plain {
            for Resolved { step, op, .. } in steps.iter_mut() {
                // SAFETY: as for the loop below.
                unsafe { step.run(&mut on, host) }.at_op(op)?;
            }
            return Ok(());
        }
        let raw = |stream: Option<u16>| match stream {
            Some(index) => streams.get(usize::from(index)).map_or(LEGACY, Stream::raw),
            None => LEGACY,
        };
        // `begin` bound the first GPU's context.
        let mut bound = Bound::on(0);
        let mut index = 0;
        while index < steps.len() {
            if let Some(end) = group_at(steps, index)? {
                queue_group(&steps[index..=end], index, &on, timer)?;
                // NCCL sets the current device of the calls it queues.
                bound.forget();
                index = end + 1;
                continue;
            }
            // Each op in its GPU's context: launches, synchronous copies
            // and events need the current context to be theirs.
            if !steps[index].step.runs_on_host() {
                bound.to(&steps[index], contexts)?;
            }
            let Resolved { step, op, .. } = &mut steps[index];
            let timed = step.timed_on();
            if let Some(stream) = timed {
                timer.start(index, raw(stream)).at_op(op)?;
            }
            let host_step = step.runs_on_host().then(|| timer.host_step());
            // SAFETY: every step was resolved from a plan memplan checked
            // (`Engine::new`'s promise), against memory the plan owns or
            // borrows for the run; `finish` waits before any of it is
            // touched by the host or freed.
            let ran = unsafe { step.run(&mut on, host) };
            if let Some(began) = host_step {
                timer.host_step_done(op, began);
            }
            // A host step's code may bind another context (another plan's
            // run), and NCCL sets the current device of its calls: bind
            // again before the next op.
            if step.runs_on_host() || matches!(step, Step::Collective { .. }) {
                bound.forget();
            }
            // The op's mark ends even when it failed: CUPTI's id for it
            // must not stay on this thread.
            let ended = timed.map(|stream| {
                let bytes = *ran.as_ref().unwrap_or(&0);
                let gave_work = ran.is_ok() && step.gave_work(bytes);
                timer.end(index, raw(stream), bytes, gave_work)
            });
            ran.at_op(op)?;
            if let Some(ended) = ended {
                ended.at_op(op)?;
            }
            index += 1;
        }
        timer.queued();
        Ok(())
    }

    /// Waits for every stream of the run, then reports on it.
    pub fn finish(&mut self) -> Result<RunReport> {
        let began = self.timer.is_on().then(Instant::now);
        let waited = wait_all(&self.made.streams)
            .map_err(|code| self.error_at_plan("wait for the run", code.into()));
        if let Some(began) = began {
            self.timer.waited(began);
        }
        self.release_scratch(waited.is_ok());
        self.in_flight.set(false);
        // A failed run's records may never complete: not waited for.
        let report = self.timer.report(
            self.info.name(),
            self.instance,
            &|index| self.steps.list().get(index).map(|resolved| &resolved.op),
            (self.started, self.started.elapsed()),
            waited.is_ok(),
        );
        let replayed = self.replayed.take();
        waited?;
        report.map(|report| RunReport { replayed, ..report })
    }

    /// If a run is in flight (its guard was leaked with `mem::forget`),
    /// waits for it before the host touches the plan's buffers.
    pub fn settle(&self) {
        if self.in_flight.replace(false)
            && let Err(code) = wait_all(&self.made.streams)
        {
            let error = self.error_at_plan("wait for the run in flight", code.into());
            self.deferred.borrow_mut().get_or_insert(error);
        }
    }

    /// An error kept for the next call, if any.
    pub fn take_deferred(&mut self) -> Option<Error> {
        self.deferred.get_mut().take()
    }

    /// Keeps an error that could not be returned, for the next call.
    pub fn defer(&mut self, error: Error) {
        self.deferred.get_mut().get_or_insert(error);
    }

    /// Switches timing of every op on, by the clock asked for, or off.
    pub fn set_timing(&mut self, timing: Timing) -> Result<()> {
        match timing {
            Timing::Off => {
                self.timer.disable();
                Ok(())
            }
            on => self
                .timer
                .enable(&self.made.contexts, on == Timing::Events)
                .map_err(|e| self.info.within(self.info.site, e)),
        }
    }

    /// Replays the run from the graph of its shape (see `replay.rs`).
    fn replay(&mut self) -> Result<()> {
        self.replayed = None;
        let info = self.info;
        let Runner {
            made,
            steps,
            scratch,
            params,
            replays: Some(replays),
            ..
        } = self
        else {
            return Err(info.error(info.site, MALFORMED));
        };
        let mut on = Resources {
            contexts: &made.contexts,
            streams: &made.streams,
            events: &made.events,
            kernels: &made.kernels,
            comms: &made.comms,
            scratch,
            params,
        };
        let target = Target {
            on: &mut on,
            streams: &made.streams,
        };
        let plan_error = |operation, fault| info.error_at_plan(operation, fault);
        let (steps, changes) = steps.for_replay();
        // SAFETY: as for `queue_steps`: every step was resolved from a plan
        // memplan checked, and `finish` waits for the streams before the
        // host touches the memory or it is freed; `set_replay` refused
        // plans with host steps, caller slices or collectives of several
        // GPUs.
        let replayed = unsafe { replays.replay(steps, changes, target, &plan_error) }?;
        self.replayed = Some(replayed);
        Ok(())
    }

    /// Replays later runs from CUDA graphs (`Replay::Graph`) or queues
    /// their ops (`Replay::Direct`); see `replay.rs`.
    pub fn set_replay(&mut self, replay: Replay) -> Result<()> {
        match replay {
            Replay::Direct => self.replays = None,
            Replay::Graph => {
                if let Some(why) = self.graph_obstacle(true) {
                    return Err(self.error_at_plan("set_replay", Fault::Unsupported(why)));
                }
                self.replays.get_or_insert_with(Replays::default);
            }
        }
        Ok(())
    }

    /// Captures every op as a CUDA graph; a capture another thread
    /// invalidated (by synchronizing the context) is tried again, as a
    /// replay's is.
    pub fn capture(&mut self) -> Result<Graph> {
        self.check_graphable()?;
        tried_again_if_invalidated(|| self.capture_once())
            .map_err(|e| self.info.within(self.info.site, e))
    }

    fn capture_once(&mut self) -> Result<Graph> {
        // Timing records events on the legacy stream, which a capture forbids.
        let timer = std::mem::take(&mut self.timer);
        let capture = {
            let streams: Vec<&Stream> = self.made.streams.iter().collect();
            // SAFETY: the streams outlive the capture (the plan owns them),
            // this thread alone queues on them while the plan is borrowed,
            // and the graph's users keep the plan, and its memory, alive.
            unsafe { Capture::begin(&streams) }
        }
        // `queue_steps` starts in the first GPU's context, as a run does;
        // the capture bound its first stream's, which may be another GPU's.
        .and_then(|capture| {
            self.made.contexts[0].bind_to_thread()?;
            Ok(capture)
        });
        let graph = match capture {
            Ok(capture) => {
                let queued = self.queue_steps(&mut |_| Err(MALFORMED));
                capture.end(queued)
            }
            Err(error) => Err(error),
        };
        self.timer = timer;
        // What the capture allocated in stream order belongs to the graph
        // (or, for a capture that failed, to no one).
        self.scratch.fill(0);
        graph
    }

    /// Whether runs give the plan sizes or values.
    pub fn takes_run_inputs(&self) -> bool {
        !self.info.run_inputs.is_empty() || !self.info.per_run.is_empty()
    }

    /// Refuses, with the reason, a plan `graph()` cannot capture.
    pub fn check_graphable(&self) -> Result<()> {
        match self.graph_obstacle(false) {
            Some(why) => Err(self.error_at_plan("graph", Fault::Unsupported(why))),
            None => Ok(()),
        }
    }

    /// Why the plan cannot be captured as a CUDA graph, if it cannot:
    /// one graph for every run, or, `per_run`, one replayed with each run's
    /// sizes and values.
    fn graph_obstacle(&self, per_run: bool) -> Option<&'static str> {
        if self.made.contexts.len() > 1 && !self.made.comms.is_empty() {
            // NCCL's own warning ("Using NCCL with CUDA Graphs"): a graph
            // launch may block until every GPU's part is launched, which
            // one thread launching them in turn never does.
            Some(
                "this plan has NCCL collectives between several GPUs of one process, which NCCL \
                 warns may deadlock in CUDA graphs (a graph's launch may wait for the other GPUs' \
                 parts); a plan per GPU, one rank each (`ranks`), replays its collectives",
            )
        } else if !per_run && !self.made.comms.is_empty() {
            Some(
                "this plan has NCCL collectives, which `graph()` does not capture: \
                 `set_replay(Replay::Graph)` replays each run from a graph, collectives included",
            )
        } else if self.has_caller_slices() {
            Some(
                "this plan borrows the caller's slices for each run, and a CUDA graph would keep the first run's addresses",
            )
        } else if self.info.ops.iter().any(|op| op.stream.is_none()) {
            Some(
                "this plan has synchronous operations or host steps, which a CUDA graph cannot capture; \
                 only plans whose operations all run in stream blocks replay as graphs",
            )
        } else if self.made.streams.is_empty() {
            Some("this plan has no stream, so there is no work to capture")
        } else {
            None
        }
    }

    /// The stream a captured graph launches on, with its GPU's context
    /// bound: a plan's first stream may be of another GPU than the first,
    /// whose context `begin` binds.
    pub fn graph_stream(&self) -> Result<&Stream> {
        let Some(stream) = self.made.streams.first() else {
            let fault = Fault::Unsupported("the plan has no stream to launch its graph on");
            return Err(self.error_at_plan("graph launch", fault));
        };
        if self.made.contexts.len() > 1 {
            (stream.context().bind_to_thread()).map_err(|e| self.info.within(self.info.site, e))?;
        }
        Ok(stream)
    }

    /// Frees what a failed run allocated in stream order and did not free,
    /// once `streams_done`: every stream of the plan, the only ones its
    /// work on that memory is queued on, waited for (`cuMemFree` does not
    /// wait for stream-ordered memory). Otherwise the memory is leaked
    /// rather than freed under work that may still use it. Not the whole
    /// context: synchronizing it ends every capture on the GPU, other
    /// threads' too.
    fn release_scratch(&mut self, streams_done: bool) {
        if self.scratch.iter().all(|&slot| slot == 0) {
            return;
        }
        for (slot, gpu) in self.scratch.iter_mut().zip(&self.steps.scratch_gpus) {
            let address = std::mem::take(slot);
            let context = &self.made.contexts[usize::from(gpu.unwrap_or(0))];
            if address != 0 && streams_done {
                // SAFETY: allocated by the run, whose work is done: every
                // stream it was queued on has finished.
                release_in(context, || unsafe { driver::mem_free(address) });
            }
        }
    }

    pub fn name(&self) -> &'static str {
        self.info.name()
    }

    /// Where the plan is written.
    pub fn plan_location(&self) -> Location {
        self.info.location(self.info.site)
    }

    /// An error of the plan as a whole, doing `operation`.
    pub fn error_at_plan(&self, operation: &'static str, fault: Fault) -> Error {
        self.info.error_at_plan(operation, fault)
    }
}

/// For one rank of a job, once its plan is made (or failed to be, `ready`
/// false): agrees with the other ranks on the plan, the sizes its
/// collectives depend on and whether every rank made it, before any
/// collective (see [`super::fingerprint`]); returns what each run agrees
/// on, for a plan whose runs can differ from rank to rank.
fn agree_at_new(made: &Made, sizes: &Sizes, ready: bool) -> Result<Option<(u64, Vec<u16>)>> {
    let info = made.info();
    let (Some(site), [comm]) = (info.ranks, &made.comms[..]) else {
        return Ok(None);
    };
    let Agreement {
        plan,
        at_new,
        at_run,
    } = Agreement::at_new(info, sizes);
    super::fingerprint::agree(comm, plan, &at_new, ready).map_err(|e| info.within(site, e))?;
    // Runs that can differ (sizes, values or slices a run gives) may fail on
    // one rank alone: every run first agrees that all are ready.
    let runs_differ = !info.run_inputs.is_empty() || !info.per_run.is_empty();
    Ok((runs_differ || made.layout.caller_slices > 0).then_some((plan, at_run)))
}
