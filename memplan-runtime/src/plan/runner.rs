//! A built plan without its host buffers: device memory, kernels, streams
//! and events, every op resolved to a step, and the state of its runs.
//! [`Engine`](super::Engine) adds the typed host buffers.

use super::address::{Base, Home, Placed};
use super::builder::{Builder, Givens};
use super::info::{BufferKind, Gpu, MALFORMED, Op, ParamType, PlanInfo, Site};
use super::resolve::{Resolver, sizes_of};
use super::sizes::Sizes;
use super::slices::{Lock, Registrations, Slice};
use super::step::{Resources, Step};
use crate::context::{Context, release_in};
use crate::device::DeviceBuffer;
use crate::driver::cu;
use crate::error::{Error, Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::graph::{Capture, Graph};
use crate::image::Image;
use crate::kernel::{Kernel, Module};
use crate::nccl::{Communicator, Rank};
use crate::op::{OpInfo, OpKind, OpResultExt};
use crate::param::ParamLayout;
use crate::report::RunReport;
use crate::stream::{LEGACY, Stream, wait_all};
use crate::timer::{GroupPart, Timer, Timing};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// The most ops a plan's loops may unroll into: more would be a run of
/// hours of driver calls, and gigabytes of steps.
const MAX_STEPS: usize = 1 << 22;

/// The next plan's number, for reports.
static NEXT_INSTANCE: AtomicU32 = AtomicU32::new(1);

pub(crate) struct Runner {
    info: &'static PlanInfo,
    /// The GPUs the plan runs on, by number (one, unless it declares
    /// `gpus`); the first is bound while a run is queued, and each op binds
    /// its own where it is on another.
    contexts: Vec<Context>,
    /// With collectives, the plan's communicator on each GPU (one, for a
    /// plan that is one rank of a job).
    comms: Vec<Communicator>,
    /// For one rank of a job whose runs can differ (it has `run`
    /// parameters or caller slices): the plan's fingerprint and the run
    /// inputs its collectives depend on, which each run agrees on with the
    /// other ranks, with whether it is ready, before it queues anything.
    agree_each_run: Option<(u64, Vec<u16>)>,
    sizes: Sizes,
    /// Where each buffer's memory is.
    placed: Vec<Placed>,
    /// The device addresses of the elements of sets placed one element on
    /// each GPU (`on gpu`), each set's after the last's.
    element_bases: Vec<u64>,
    /// The values `new` gave (kept: ops resolved at each run need them).
    given: Givens,
    /// Each kernel on each GPU: kernel `k` on GPU `g` at `k * gpus + g`.
    kernels: Vec<Kernel>,
    streams: Vec<Stream>,
    /// The GPU each stream is on.
    stream_gpus: Vec<u16>,
    /// Each event once for each GPU (event `e`'s on GPU `g` at `e * gpus
    /// + g`), since an event is recorded on streams of its own GPU only:
    /// a `record` uses its stream's GPU's, a `wait` the one last recorded.
    events: Vec<Event>,
    /// By stream declaration, its first stream in `streams`; then the
    /// count (a set of streams is several).
    stream_starts: Vec<u16>,
    /// The same for events.
    event_starts: Vec<u16>,
    /// Each step's op, as errors and reports name it.
    ops: Vec<OpInfo>,
    /// The ops in the order they run, loops unrolled.
    steps: Vec<Step>,
    /// The GPU whose context each step is queued in.
    step_gpus: Vec<u16>,
    /// Each step's op, by its number in the plan's description.
    step_sites: Vec<u16>,
    /// For each step that is a rank's part of a collective: whether it
    /// opens the NCCL group of its collective's parts, and whether it
    /// closes it.
    step_groups: Vec<Option<(bool, bool)>>,
    /// Steps resolved at each run, since they read sizes or values the
    /// run gives, and their ops.
    dynamic: Vec<(usize, usize)>,
    /// Whether a loop reads what each run gives: then each run unrolls
    /// the plan anew, once it has given it.
    unroll_each_run: bool,

    /// Stream-ordered allocations during a run; 0 when not allocated.
    scratch: Vec<u64>,
    /// The GPU each stream-ordered allocation is made on (its `alloc`'s
    /// stream's), once an `alloc` of it is resolved.
    scratch_gpus: Vec<Option<u16>>,
    /// The caller slices' addresses during a run.
    params: Vec<u64>,
    /// The plan's device memory.
    device: Vec<DeviceBuffer<u8>>,
    timer: Timer,
    /// This plan's number among the plans of the process, for reports.
    instance: u32,
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
            sizes,
            host,
            given,
            joining,
        } = builder;
        let mut runner = Runner {
            info,
            contexts,
            comms: Vec::new(),
            agree_each_run: None,
            sizes,
            placed: Vec::with_capacity(info.buffers.len()),
            element_bases: Vec::new(),
            given,
            kernels: Vec::new(),
            streams: Vec::new(),
            stream_gpus: Vec::new(),
            events: Vec::new(),
            stream_starts: Vec::new(),
            event_starts: Vec::new(),
            ops: Vec::new(),
            steps: Vec::new(),
            step_gpus: Vec::new(),
            step_sites: Vec::new(),
            step_groups: Vec::new(),
            dynamic: Vec::new(),
            unroll_each_run: false,
            scratch: Vec::new(),
            scratch_gpus: Vec::new(),
            params: Vec::new(),
            device: Vec::new(),
            timer: Timer::default(),
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
            in_flight: Cell::new(false),
            deferred: RefCell::new(None),
            started: Instant::now(),
        };
        runner.enable_peers()?;
        runner.place_buffers(&host)?;
        runner.load_kernels()?;
        let streams = info.streams.iter().map(|s| (s.site, s.array, s.gpu));
        (runner.streams, runner.stream_starts, runner.stream_gpus) = runner
            .make_members(streams, |contexts, gpu, i| {
                Stream::with_priority(&contexts[gpu], info.streams[i].priority)
            })?;
        // Each event on every GPU: a `record`'s stream picks one.
        runner.check_event_copies()?;
        let events = info.events.iter().map(|e| (e.site, e.array, None));
        let (events, event_starts, _) = runner.make_members(events, |contexts, _, _| {
            contexts.iter().map(Event::new).collect::<Result<Vec<_>>>()
        })?;
        (runner.events, runner.event_starts) =
            (events.into_iter().flatten().collect(), event_starts);
        runner.comms = runner.communicators(joining)?;
        runner.unroll_each_run = info.loops.iter().any(|l| {
            runner.sizes.is_dynamic(l.count)
                || (l.first..l.end).any(|op| runner.is_dynamic(usize::from(op)))
        });
        let unrolled = match runner.unroll_each_run {
            true => Ok(()),
            false => runner.unroll(),
        };
        runner.agree_at_new(unrolled.is_ok())?;
        unrolled?;
        Ok(runner)
    }

    /// For one rank of a job, once its plan is made (or failed to be):
    /// agrees with the other ranks on the plan, the sizes its collectives
    /// depend on and whether every rank made it, before any collective
    /// (see [`super::fingerprint`]); and notes what each run agrees on.
    fn agree_at_new(&mut self, ready: bool) -> Result<()> {
        let info = self.info;
        let (Some(site), [comm]) = (info.ranks, &self.comms[..]) else {
            return Ok(());
        };
        let plan = super::fingerprint::fingerprint(info);
        // A `run` size and a caller slice's length are each run's: the ranks
        // agree on them when the run gives them.
        let (at_new, at_run): (Vec<u16>, Vec<u16>) = super::fingerprint::collective_inputs(info)
            .into_iter()
            .partition(|&input| self.sizes.given_at_new(input));
        super::fingerprint::agree(comm, plan, &self.sizes.inputs_of(&at_new), ready)
            .map_err(|e| self.within(site, e))?;
        if !info.run_inputs.is_empty() || self.has_caller_slices() {
            self.agree_each_run = Some((plan, at_run));
        }
        Ok(())
    }

    /// Whether op `index` reads sizes or values each run gives.
    fn is_dynamic(&self, index: usize) -> bool {
        self.info.per_run.contains(&(index as u16))
            || sizes_of(self.info, index)
                .iter()
                .any(|&size| self.sizes.is_dynamic(size))
    }

    /// Takes what this run gives: its sizes and its values.
    pub fn apply(&mut self, run: super::builder::RunGiven) -> Result<()> {
        if run.sizes.len() != self.info.run_inputs.len() {
            return Err(self.error(self.info.site, MALFORMED));
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
            return Err(self.error(info.site, MALFORMED));
        }
        for (&input, &value) in self.info.run_inputs.iter().zip(&run.sizes) {
            self.sizes.set_run_input(input, value);
        }
        self.given.replace(run.given);
        Ok(())
    }

    /// For one rank of a job, before a run queues anything: agrees with the
    /// other ranks on the sizes its collectives depend on and on whether
    /// every rank is `ready` (made it this far), so that all queue the run
    /// or none does; a rank that disagreed, or stopped, would leave the
    /// others waiting in a collective for ever.
    pub fn agree_for_run(&self, ready: bool) -> Result<()> {
        let (Some((plan, inputs)), [comm]) = (&self.agree_each_run, &self.comms[..]) else {
            return Ok(());
        };
        let sizes = self.sizes.inputs_of(inputs);
        super::fingerprint::agree(comm, *plan, &sizes, ready)
            .map_err(|e| self.within(self.info.site, e))
    }

    /// Resolves what reads this run's sizes and values (given by
    /// `prepare` and `apply`): the ops that do, or the whole plan again
    /// when a loop does.
    pub fn resolve_for_run(&mut self) -> Result<()> {
        if self.unroll_each_run {
            self.steps.clear();
            self.step_gpus.clear();
            self.step_sites.clear();
            self.step_groups.clear();
            self.ops.clear();
            self.dynamic.clear();
            self.unroll()?;
            return Ok(());
        }
        for (step, index) in self.dynamic.clone() {
            let (resolved, gpu) = self.resolver().resolve(index).at_op(&self.ops[step])?;
            match resolved {
                // Events are resolved once, in program order: they read no
                // size a run gives.
                Step::Record { .. } | Step::Wait { .. } => {
                    return Err(self.ops[step].error(MALFORMED));
                }
                Step::Alloc { scratch, .. } => {
                    let slot = self.scratch_gpus.get_mut(usize::from(scratch));
                    *slot.ok_or_else(|| self.ops[step].error(MALFORMED))? = Some(gpu);
                }
                _ => {}
            }
            (self.steps[step], self.step_gpus[step]) = (resolved, gpu);
        }
        Ok(())
    }

    /// Where a declaration's streams or events start among the `made`
    /// so far, and how many it makes; counted before any is made, so that
    /// a huge count is an error rather than a hang.
    fn members(
        &mut self,
        site: Site,
        array: Option<super::info::Array>,
        made: usize,
    ) -> Result<(u16, usize)> {
        let count = self.count(site, array)?;
        self.start(site, made.saturating_add(count))?;
        Ok((self.start(site, made)?, count))
    }

    /// Makes the members of each declaration (`(site, set, gpu)`: a set's
    /// count of them, else one) with `make(contexts, gpu, declaration)`;
    /// returns them, where each declaration's start (then their count),
    /// and the GPU of each. What was made before a failure is dropped
    /// with it.
    fn make_members<T>(
        &mut self,
        declarations: impl Iterator<Item = (Site, Option<super::info::Array>, Option<Gpu>)>,
        make: impl Fn(&[Context], usize, usize) -> Result<T>,
    ) -> Result<(Vec<T>, Vec<u16>, Vec<u16>)> {
        let (mut made, mut starts, mut gpus) = (Vec::new(), Vec::new(), Vec::new());
        for (declaration, (site, array, gpu)) in declarations.enumerate() {
            let (start, count) = self.members(site, array, made.len())?;
            starts.push(start);
            for member in 0..count {
                let gpu = self.gpu_of(site, gpu, member)?;
                let one = make(&self.contexts, usize::from(gpu), declaration);
                made.push(one.map_err(|e| self.within(site, e))?);
                gpus.push(gpu);
            }
        }
        starts.push(self.start(self.info.site, made.len())?);
        Ok((made, starts, gpus))
    }

    /// The GPU of element `member` of a declaration placed on `gpu`
    /// (`None`: the first), checked to be one the plan runs on.
    fn gpu_of(&mut self, site: Site, gpu: Option<Gpu>, member: usize) -> Result<u16> {
        let gpu = match gpu {
            None => 0,
            Some(Gpu::Each) => member,
            Some(Gpu::One(size)) => self.sizes.get(size).map_err(|f| self.error(site, f))?,
        };
        let count = self.contexts.len();
        match u16::try_from(gpu) {
            Ok(number) if gpu < count => Ok(number),
            _ => Err(self.error(site, Fault::NoSuchGpu { gpu, count })),
        }
    }

    /// `peer gpu;`: lets every GPU of the plan reach every other's memory,
    /// or says, at the declaration, why it cannot.
    fn enable_peers(&mut self) -> Result<()> {
        let Some(site) = self.info.gpus.and_then(|gpus| gpus.peer) else {
            return Ok(());
        };
        for (a, one) in self.contexts.iter().enumerate() {
            for (b, other) in self.contexts.iter().enumerate() {
                // The same GPU twice (two contexts of one device) reaches itself.
                if a != b && one.ordinal() != other.ordinal() {
                    one.enable_peer_access(other)
                        .map_err(|e| self.within(site, e))?;
                }
            }
        }
        self.contexts[0]
            .bind_to_thread()
            .map_err(|e| self.within(site, e))
    }

    /// How many streams, events or buffers a declaration makes.
    fn count(&mut self, site: Site, array: Option<super::info::Array>) -> Result<usize> {
        match array {
            None => Ok(1),
            Some(array) => self.sizes.get(array.count).map_err(|f| self.error(site, f)),
        }
    }

    /// The copies of the plan's events, one on each GPU, are numbered with
    /// `u16`s as the events are: checked before any is made.
    fn check_event_copies(&mut self) -> Result<()> {
        let gpus = self.contexts.len();
        let mut members = 0usize;
        for event in self.info.events {
            members = members.saturating_add(self.count(event.site, event.array)?);
            if members.saturating_mul(gpus) > usize::from(u16::MAX) {
                let why = "a plan may have at most 65535 events, each counted once for each of its GPUs (an event is recorded on streams of its own GPU, so it is made on every one)";
                return Err(self.error(event.site, Fault::Unsupported(why)));
            }
        }
        Ok(())
    }

    /// Where a declaration's streams or events start, numbered with `u16`s.
    fn start(&self, site: Site, start: usize) -> Result<u16> {
        u16::try_from(start).map_err(|_| {
            let why = "a plan may have at most 65535 streams and as many events";
            self.error(site, Fault::Unsupported(why))
        })
    }

    /// Resolves every op into the steps of a run, in program order, each
    /// loop's ops once for each value of its variable. A `wait` for an
    /// event nothing recorded yet in the run waits for nothing, so it is
    /// left out (the first iterations of a ring wait for slots never used;
    /// a graph capture refuses waits for events recorded outside it).
    fn unroll(&mut self) -> Result<()> {
        let info = self.info;
        // By event, the GPU whose copy of it was last recorded.
        let events = self
            .event_starts
            .last()
            .map_or(0, |&count| usize::from(count));
        let mut recorded = vec![None; events];
        let mut index = 0;
        while index < info.ops.len() {
            let Some(repeat) = info.loops.iter().find(|l| usize::from(l.first) == index) else {
                self.add_step(index, None, &mut recorded)?;
                index += 1;
                continue;
            };
            let body = usize::from(repeat.first)..usize::from(repeat.end);
            if body.is_empty() || body.end > info.ops.len() {
                return Err(self.error(repeat.site, MALFORMED));
            }
            let count = self
                .sizes
                .get(repeat.count)
                .map_err(|f| self.error(repeat.site, f))?;
            let steps = count.checked_mul(body.len());
            if steps.is_none_or(|steps| self.steps.len() + steps > MAX_STEPS) {
                let fault = Fault::Unsupported(
                    "the loop would unroll into more than 2^22 ops: use fewer, longer chunks",
                );
                return Err(self.error(repeat.site, fault));
            }
            let unrolled = (0..count).try_for_each(|iteration| {
                self.sizes.set_loop_input(repeat.input, Some(iteration));
                body.clone()
                    .try_for_each(|op| self.add_step(op, Some(iteration), &mut recorded))
            });
            self.sizes.set_loop_input(repeat.input, None);
            unrolled?;
            index = body.end;
        }
        self.gather_collectives()
    }

    /// Resolves op `index` (in loop iteration `iteration`) as the next step.
    fn add_step(
        &mut self,
        index: usize,
        iteration: Option<usize>,
        recorded: &mut [Option<u16>],
    ) -> Result<()> {
        let mut op = self.op_info(&self.info.ops[index]);
        // Reports put an op on its stream of a set: `lanes[2]`.
        let def = &self.info.ops[index];
        let set = def
            .stream
            .and_then(|stream| self.info.streams.get(usize::from(stream))?.array);
        if let Some(set) = set {
            let element = self.sizes.get(set.index).at_op(&op)?;
            op.element = u16::try_from(element).ok();
        }
        // Unrolled at each run, the run's sizes and values are given.
        let dynamic = self.is_dynamic(index) && !self.unroll_each_run;
        let (mut step, gpu) = match (dynamic, iteration) {
            (false, _) => self.resolver().resolve(index).at_op(&op)?,
            (true, None) => {
                self.dynamic.push((self.steps.len(), index));
                (Step::Pending, 0)
            }
            (true, Some(_)) => return Err(op.error(MALFORMED)),
        };
        let gpus = self.contexts.len();
        match &mut step {
            // The event's copy on the stream's GPU.
            Step::Record { event, .. } => {
                let last = recorded.get_mut(usize::from(*event));
                *last.ok_or_else(|| op.error(MALFORMED))? = Some(gpu);
                *event = self.event_on(*event, gpu).at_op(&op)?;
            }
            // The copy last recorded; none yet: nothing to wait for.
            Step::Wait { event, .. } => {
                let last = recorded.get(usize::from(*event));
                let Some(on) = *last.ok_or_else(|| op.error(MALFORMED))? else {
                    return Ok(());
                };
                *event = self.event_on(*event, on).at_op(&op)?;
            }
            &mut Step::Alloc { scratch, .. } => {
                let slot = self.scratch_gpus.get_mut(usize::from(scratch));
                *slot.ok_or_else(|| op.error(MALFORMED))? = Some(gpu);
            }
            _ => {}
        }
        debug_assert!(usize::from(gpu) < gpus);
        self.steps.push(step);
        self.step_gpus.push(gpu);
        self.step_sites.push(index as u16);
        self.step_groups.push(None);
        self.ops.push(op);
        Ok(())
    }

    /// The plan's communicators, if it has collectives: one on each of its
    /// GPUs (`ncclCommInitAll`), or, for a plan that declares `ranks`, its
    /// rank of the job (`ncclCommInitRank`, which returns once every rank
    /// has joined).
    fn communicators(&self, joining: Option<Rank>) -> Result<Vec<Communicator>> {
        let info = self.info;
        if !info
            .ops
            .iter()
            .any(|def| matches!(def.op, Op::Collective(_)))
        {
            return Ok(Vec::new());
        }
        let made = match (joining, info.ranks, info.gpus) {
            (Some(rank), Some(site), _) => {
                Communicator::join(&self.contexts[0], &rank.id, rank.count, rank.rank)
                    .map(|comm| vec![comm])
                    .map_err(|e| self.within(site, e))
            }
            (None, None, Some(gpus)) => {
                Communicator::all(&self.contexts).map_err(|e| self.within(gpus.site, e))
            }
            _ => Err(self.error(info.site, MALFORMED)),
        }?;
        // NCCL set its own current device while it made them.
        self.contexts[0]
            .bind_to_thread()
            .map_err(|e| self.within(info.site, e))?;
        Ok(made)
    }

    /// Orders the run's steps so that each collective's parts are queued
    /// together, once each is checked to have one part on every GPU.
    fn gather_collectives(&mut self) -> Result<()> {
        let ranks = self.comms.len();
        let gpus: Vec<u16> = (0..self.steps.len())
            .map(|step| self.gpu_of_step(step))
            .collect();
        let gathered =
            super::collectives::gather(self.info, &self.steps, &self.step_sites, &gpus, ranks)
                .map_err(|(step, fault)| self.ops[step].error(fault))?;
        let order = gathered.order;
        if order.iter().enumerate().all(|(at, &step)| at == step) {
            self.step_groups = gathered.groups;
            return Ok(());
        }
        let malformed = || self.error(self.info.site, MALFORMED);
        let mut position = vec![usize::MAX; order.len()];
        for (at, &step) in order.iter().enumerate() {
            *position.get_mut(step).ok_or_else(malformed)? = at;
        }
        if position.contains(&usize::MAX) || order.len() != self.steps.len() {
            return Err(malformed());
        }
        self.steps = reorder(std::mem::take(&mut self.steps), &order);
        self.step_gpus = reorder(std::mem::take(&mut self.step_gpus), &order);
        self.step_sites = reorder(std::mem::take(&mut self.step_sites), &order);
        self.ops = reorder(std::mem::take(&mut self.ops), &order);
        self.step_groups = gathered.groups;
        for (step, _) in &mut self.dynamic {
            *step = position[*step];
        }
        Ok(())
    }

    /// The GPU of step `step`: of its stream, for one resolved at each run.
    fn gpu_of_step(&self, step: usize) -> u16 {
        if !matches!(self.steps[step], Step::Pending) {
            return self.step_gpus[step];
        }
        let def = self.info.ops.get(usize::from(self.step_sites[step]));
        def.and_then(|def| def.stream)
            .and_then(|decl| self.stream_starts.get(usize::from(decl)))
            .and_then(|&first| self.stream_gpus.get(usize::from(first)))
            .copied()
            .unwrap_or(0)
    }

    /// Where event `event`'s copy on GPU `gpu` is among the plan's events.
    fn event_on(&self, event: u16, gpu: u16) -> Result<u16, Fault> {
        let at = usize::from(event) * self.contexts.len() + usize::from(gpu);
        u16::try_from(at)
            .ok()
            .filter(|&at| usize::from(at) < self.events.len())
            .ok_or(MALFORMED)
    }

    fn place_buffers(&mut self, host: &[Option<super::builder::HostBuffer>]) -> Result<()> {
        let info = self.info;
        let (mut scratch, mut params) = (0u16, 0u16);
        for (index, buffer) in info.buffers.iter().enumerate() {
            let placed = match buffer.kind {
                BufferKind::Pageable | BufferKind::Pinned(_) => {
                    let made = host
                        .get(index)
                        .copied()
                        .flatten()
                        .ok_or_else(|| self.error(buffer.site, MALFORMED))?;
                    Placed {
                        host: Some(Base::Fixed(made.host)),
                        device: made.device.map(Base::Fixed),
                        page_locked: made.page_locked,
                        writable: true,
                        home: Home::Host,
                    }
                }
                BufferKind::Device => {
                    let count = self.count(buffer.site, buffer.array)?;
                    let len = self
                        .sizes
                        .get(buffer.len)
                        .map_err(|f| self.error(buffer.site, f))?;
                    let element_size = info
                        .elem(index as u16)
                        .map_err(|f| self.error(buffer.site, f))?
                        .size();
                    let bytes = |len: usize| {
                        len.checked_mul(element_size).ok_or_else(|| {
                            let fault = Fault::SizeOverflow { len, element_size };
                            self.error(buffer.site, fault)
                        })
                    };
                    if buffer.gpu == Some(Gpu::Each) {
                        // Element `e` on GPU `e`: an allocation each.
                        let (first, bytes) = (self.element_bases.len(), bytes(len)?);
                        let first = u16::try_from(first).map_err(|_| {
                            let why = "a plan may place at most 65535 elements on GPUs one by one";
                            self.error(buffer.site, Fault::Unsupported(why))
                        })?;
                        for element in 0..count {
                            let gpu = self.gpu_of(buffer.site, buffer.gpu, element)?;
                            let address = self.allocate(buffer.site, gpu, bytes)?;
                            self.element_bases.push(address);
                        }
                        Placed {
                            host: None,
                            device: Some(Base::Elements(first)),
                            page_locked: false,
                            writable: true,
                            home: Home::EachElement,
                        }
                    } else {
                        // A set of buffers is one allocation, element after element.
                        let len = len.checked_mul(count).ok_or_else(|| {
                            let fault = Fault::SizeOverflow {
                                len,
                                element_size: count,
                            };
                            self.error(buffer.site, fault)
                        })?;
                        let bytes = bytes(len)?;
                        let gpu = self.gpu_of(buffer.site, buffer.gpu, 0)?;
                        let address = self.allocate(buffer.site, gpu, bytes)?;
                        Placed {
                            host: None,
                            device: Some(Base::Fixed(address)),
                            page_locked: false,
                            writable: true,
                            home: Home::Gpu(gpu),
                        }
                    }
                }
                BufferKind::StreamOrdered => {
                    scratch += 1;
                    Placed {
                        host: None,
                        device: Some(Base::Scratch(scratch - 1)),
                        page_locked: false,
                        writable: true,
                        home: Home::Scratch(scratch - 1),
                    }
                }
                BufferKind::Param {
                    mutable,
                    registered,
                    ..
                } => {
                    params += 1;
                    Placed {
                        host: Some(Base::Param(params - 1)),
                        device: None,
                        page_locked: registered,
                        writable: mutable,
                        home: Home::Host,
                    }
                }
            };
            self.placed.push(placed);
        }
        self.scratch = vec![0; usize::from(scratch)];
        self.scratch_gpus = vec![None; usize::from(scratch)];
        self.params = vec![0; usize::from(params)];
        Ok(())
    }

    /// `bytes` of device memory on GPU `gpu`, for the plan's lifetime.
    fn allocate(&mut self, site: Site, gpu: u16, bytes: usize) -> Result<u64> {
        let memory = DeviceBuffer::<u8>::new(&self.contexts[usize::from(gpu)], bytes)
            .map_err(|e| self.within(site, e))?;
        let address = memory.device_ptr().as_raw();
        self.device.push(memory);
        Ok(address)
    }

    /// Loads each module once on each GPU, at its first kernel, and finds
    /// every kernel on every GPU.
    fn load_kernels(&mut self) -> Result<()> {
        let gpus = self.contexts.len();
        // Launches name a kernel's copy on their GPU with a `u16`.
        for (index, kernel) in self.info.kernels.iter().enumerate() {
            if (index + 1).saturating_mul(gpus) > usize::from(u16::MAX) {
                let why = "a plan may load at most 65535 kernels, each counted once for each of its GPUs (a kernel is loaded on every one)";
                return Err(self.error(kernel.site, Fault::Unsupported(why)));
            }
        }
        let mut modules: Vec<(&'static Image, usize, Module)> = Vec::new();
        let mut kernels = Vec::with_capacity(self.info.kernels.len() * gpus);
        for (index, kernel) in self.info.kernels.iter().enumerate() {
            let code =
                (self.info.kernel_code(index as u16)).map_err(|f| self.error(kernel.site, f))?;
            for (gpu, context) in self.contexts.iter().enumerate() {
                let loaded = modules
                    .iter()
                    .find(|(image, on, _)| std::ptr::eq(*image, code.module) && *on == gpu);
                let module = match loaded {
                    Some((.., module)) => module.clone(),
                    None => {
                        let module = Module::from_image(context, code.module)
                            .map_err(|e| self.within(kernel.site, e))?;
                        modules.push((code.module, gpu, module.clone()));
                        module
                    }
                };
                let found = module
                    .kernel(code.entry)
                    .and_then(|found| check_parameters(&found, code.params).map(|()| found));
                kernels.push(found.map_err(|e| self.within(kernel.site, e))?);
            }
        }
        self.kernels = kernels;
        Ok(())
    }

    fn op_info(&self, def: &super::info::OpDef) -> OpInfo {
        let host = |buffer: u16| {
            self.info.buffers.get(usize::from(buffer)).is_some_and(|b| {
                matches!(
                    b.kind,
                    BufferKind::Pageable | BufferKind::Pinned(_) | BufferKind::Param { .. }
                )
            })
        };
        let kind = match &def.op {
            Op::Copy(src, dst) => match (host(src.buffer()), host(dst.buffer())) {
                (true, false) => OpKind::CopyHostToDevice,
                (false, true) => OpKind::CopyDeviceToHost,
                (false, false) => OpKind::CopyDeviceToDevice,
                (true, true) => OpKind::CopyHostToHost,
            },
            Op::Fill(_) => OpKind::Fill,
            Op::Launch(_) => OpKind::Launch,
            Op::Record(_) => OpKind::Record,
            Op::Wait(_) => OpKind::Wait,
            Op::Sync(_) => OpKind::Sync,
            Op::Alloc(_) => OpKind::Alloc,
            Op::Free(_) => OpKind::Free,
            Op::Host(_) => OpKind::Host,
            Op::Collective(_) => OpKind::Collective,
        };
        OpInfo {
            plan: self.info.name(),
            label: def.site.0,
            kind,
            stream: def
                .stream
                .and_then(|s| self.info.streams.get(usize::from(s)))
                .map(|s| s.name),
            element: None,
            location: self.location(def.site),
        }
    }

    pub fn has_caller_slices(&self) -> bool {
        !self.params.is_empty()
    }

    /// Checks the caller's slices against the plan, page-locks those the
    /// plan registers, and resolves the ops that read their lengths.
    pub fn prepare(&mut self, slices: &[Slice<'_>]) -> Result<Registrations> {
        let info = self.info;
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
            return Err(self.error(info.site, fault));
        }
        let mut locks = Vec::new();
        for (param, ((index, buffer), slice)) in declared.iter().zip(slices).enumerate() {
            let BufferKind::Param {
                mutable,
                registered,
                measured,
            } = buffer.kind
            else {
                return Err(self.error(buffer.site, MALFORMED));
            };
            let elem = info
                .elem(*index as u16)
                .map_err(|f| self.error(buffer.site, f))?;
            if !elem.same_as(&slice.elem()) || (mutable && !slice.is_mutable()) {
                let fault = Fault::Unsupported("a slice of another type than the plan declares");
                return Err(self.error(buffer.site, fault));
            }
            match measured {
                Some(input) => self.sizes.set_run_input(input, slice.len()),
                None => {
                    let expected = self
                        .sizes
                        .get(buffer.len)
                        .map_err(|f| self.error(buffer.site, f))?;
                    if slice.len() != expected {
                        let fault = Fault::WrongLength {
                            expected,
                            actual: slice.len(),
                        };
                        return Err(self.error(buffer.site, fault));
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
        let portable = self.contexts.len() > 1;
        let registrations = Registrations::lock(&self.contexts[0], &locks, portable).map_err(
            |(param, fault)| {
                let site = declared[param].1.site;
                Error::new(fault, "cuMemHostRegister", self.location(site)).within(
                    info.name(),
                    site.0,
                    self.location(site),
                )
            },
        )?;
        Ok(registrations)
    }

    /// What resolving an op reads.
    fn resolver(&mut self) -> Resolver<'_> {
        Resolver {
            info: self.info,
            contexts: &self.contexts,
            sizes: &mut self.sizes,
            placed: &self.placed,
            element_bases: &self.element_bases,
            scratch_gpus: &self.scratch_gpus,
            given: &self.given,
            kernels: &self.kernels,
            streams: &self.stream_starts,
            stream_gpus: &self.stream_gpus,
            events: &self.event_starts,
            ranks: self.comms.first().map(|comm| (comm.count(), comm.rank())),
        }
    }

    /// Forgets the caller's slices, after the run that used them.
    pub fn release_slices(&mut self) {
        self.params.fill(0);
    }

    /// Starts a run: returns an error kept from before, if any, binds the
    /// context to this thread (a plan may move between threads), and starts
    /// the clocks.
    pub fn begin(&mut self) -> Result<()> {
        if let Some(error) = self.deferred.get_mut().take() {
            return Err(error);
        }
        self.contexts[0]
            .bind_to_thread()
            .map_err(|e| self.within(self.info.site, e))?;
        self.started = Instant::now();
        self.timer
            .begin(self.started)
            .map_err(|code| self.error_at_plan("start op timing", code.into()))
    }

    pub fn set_in_flight(&self) {
        self.in_flight.set(true);
    }

    pub fn is_in_flight(&self) -> bool {
        self.in_flight.get()
    }

    /// Queues every op, in program order; host steps run through `host`.
    pub fn queue(&mut self, host: &mut dyn FnMut(u16) -> Result<(), Fault>) -> Result<()> {
        let Runner {
            ops,
            steps,
            step_gpus,
            step_groups,
            comms,
            streams,
            events,
            kernels,
            scratch,
            params,
            timer,
            contexts,
            ..
        } = self;
        timer.queue(&contexts[0], ops.len())?;
        let mut on = Resources {
            contexts,
            streams,
            events,
            kernels,
            comms,
            scratch,
            params,
        };
        let raw = |stream: Option<u16>| match stream {
            Some(index) => streams.get(usize::from(index)).map_or(LEGACY, Stream::raw),
            None => LEGACY,
        };
        // `begin` bound the first GPU's context.
        let mut bound = 0;
        let mut index = 0;
        while index < steps.len() {
            if let Some((true, _)) = step_groups[index] {
                let end = (index..steps.len())
                    .find(|&at| matches!(step_groups[at], Some((_, true))))
                    .ok_or_else(|| ops[index].error(MALFORMED))?;
                queue_group(&steps[index..=end], &ops[index..=end], index, &on, timer)?;
                // NCCL sets the current device of the calls it queues.
                bound = u16::MAX;
                index = end + 1;
                continue;
            }
            let (step, op, gpu) = (&mut steps[index], &ops[index], step_gpus[index]);
            // Each op in its GPU's context: launches, synchronous copies
            // and events need the current context to be theirs.
            if gpu != bound && !step.runs_on_host() {
                let context = contexts
                    .get(usize::from(gpu))
                    .ok_or_else(|| op.error(MALFORMED))?;
                context
                    .bind_to_thread()
                    .map_err(|e| e.within(op.plan, op.label, op.location))?;
                bound = gpu;
            }
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
                bound = u16::MAX;
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
        let began = Instant::now();
        let waited = wait_all(&self.streams)
            .map_err(|code| self.error_at_plan("wait for the run", code.into()));
        self.timer.waited(began);
        self.release_scratch();
        self.in_flight.set(false);
        // A failed run's records may never complete: not waited for.
        let report = self.timer.report(
            self.info.name(),
            self.instance,
            &self.ops,
            (self.started, self.started.elapsed()),
            waited.is_ok(),
        );
        waited?;
        report
    }

    /// If a run is in flight (its guard was leaked with `mem::forget`),
    /// waits for it before the host touches the plan's buffers.
    pub fn settle(&self) {
        if self.in_flight.replace(false)
            && let Err(code) = wait_all(&self.streams)
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
                .enable(&self.contexts, on == Timing::Events)
                .map_err(|e| self.within(self.info.site, e)),
        }
    }

    /// Captures every op as a CUDA graph.
    pub fn capture(&mut self) -> Result<Graph> {
        if let Some(why) = self.graph_obstacle() {
            return Err(self.error_at_plan("graph", Fault::Unsupported(why)));
        }
        // Timing records events on the legacy stream, which a capture forbids.
        let timer = std::mem::take(&mut self.timer);
        let capture = {
            let streams: Vec<&Stream> = self.streams.iter().collect();
            // SAFETY: the streams outlive the capture (the plan owns them),
            // this thread alone queues on them while the plan is borrowed,
            // and the graph's users keep the plan, and its memory, alive.
            unsafe { Capture::begin(&streams) }
        };
        let graph = match capture {
            Ok(capture) => {
                let queued = self.queue(&mut |_| Err(MALFORMED));
                capture.end(queued)
            }
            Err(error) => Err(error),
        };
        self.timer = timer;
        // What the capture allocated in stream order belongs to the graph.
        self.scratch.fill(0);
        graph.map_err(|e| self.within(self.info.site, e))
    }

    /// Why the plan cannot be captured as a CUDA graph, if it cannot.
    fn graph_obstacle(&self) -> Option<&'static str> {
        if self.contexts.len() > 1 {
            Some("this plan runs on several GPUs, and memplan captures plans on one GPU only")
        } else if !self.comms.is_empty() {
            Some("this plan has NCCL collectives, which memplan does not capture in CUDA graphs")
        } else if self.has_caller_slices() {
            Some(
                "this plan borrows the caller's slices for each run, and a CUDA graph would keep the first run's addresses",
            )
        } else if !self.info.run_inputs.is_empty() || !self.info.per_run.is_empty() {
            Some(
                "this plan takes sizes or values at each run, and a CUDA graph would keep the first run's",
            )
        } else if self.info.ops.iter().any(|op| op.stream.is_none()) {
            Some(
                "this plan has synchronous operations or host steps, which a CUDA graph cannot capture; \
                 only plans whose operations all run in stream blocks replay as graphs",
            )
        } else if self.streams.is_empty() {
            Some("this plan has no stream, so there is no work to capture")
        } else {
            None
        }
    }

    /// The stream a captured graph launches on.
    pub fn first_stream(&self) -> Option<&Stream> {
        self.streams.first()
    }

    /// Frees what a failed run allocated in stream order and did not free.
    /// `cuMemFree` does not wait for stream-ordered memory, so the context
    /// is synchronized first; if that fails, the memory is leaked rather than
    /// freed under work that may still use it.
    fn release_scratch(&mut self) {
        if self.scratch.iter().all(|&slot| slot == 0) {
            return;
        }
        let synchronized = self.contexts.iter().all(|c| c.synchronize().is_ok());
        for (slot, gpu) in self.scratch.iter_mut().zip(&self.scratch_gpus) {
            let address = std::mem::take(slot);
            let context = &self.contexts[usize::from(gpu.unwrap_or(0))];
            if address != 0 && synchronized {
                // SAFETY: allocated by the run, whose work is done.
                release_in(context, || unsafe { cu::cuMemFree_v2(address) });
            }
        }
    }

    pub fn name(&self) -> &'static str {
        self.info.name()
    }

    fn location(&self, site: Site) -> Location {
        Location {
            file: self.info.file,
            line: site.1,
            column: site.2,
        }
    }

    /// An error of the declaration at `site`.
    fn error(&self, site: Site, fault: Fault) -> Error {
        Error::new(fault, site.0, self.location(site)).in_plan(self.info.name())
    }

    /// A runtime call's error, as the declaration at `site`'s.
    fn within(&self, site: Site, error: Error) -> Error {
        error.within(self.info.name(), site.0, self.location(site))
    }

    /// Where the plan is written.
    pub fn plan_location(&self) -> Location {
        self.location(self.info.site)
    }

    /// An error of the plan as a whole, doing `operation`.
    pub fn error_at_plan(&self, operation: &'static str, fault: Fault) -> Error {
        Error::new(fault, operation, self.plan_location()).in_plan(self.info.name())
    }
}

/// Queues one NCCL group: the parts of a collective on every GPU, or
/// sends and receives that meet (ops `first..`, `steps`). Every part is
/// made before the group starts, so that nothing of memplan's fails
/// inside it: a failure there, after some parts were handed over, would
/// leave NCCL to launch those alone at `ncclGroupEnd`, and their GPUs to
/// wait for ever for the rest. When NCCL refuses a call, it drops the
/// whole group at `ncclGroupEnd`.
fn queue_group(
    steps: &[Step],
    ops: &[OpInfo],
    first: usize,
    on: &Resources,
    timer: &mut Timer,
) -> Result<()> {
    let (Some(first_op), Some(last_op)) = (ops.first(), ops.last()) else {
        return Ok(());
    };
    let mut parts = Vec::with_capacity(steps.len());
    for (step, op) in steps.iter().zip(ops) {
        let part = step.nccl_part(on).and_then(|part| part.ok_or(MALFORMED));
        parts.push(part.at_op(op)?);
    }
    let timed: Vec<GroupPart> = (parts.iter().enumerate())
        .map(|(at, part)| part.timed_as(first + at))
        .collect();
    timer.start_group(&timed).at_op(first_op)?;
    let mut queued = crate::nccl::group_start().at_op(first_op);
    if queued.is_ok() {
        for (part, op) in parts.iter().zip(ops) {
            // SAFETY: as for `Step::run`, which `Runner::queue` promises.
            queued = unsafe { part.queue() }.at_op(op);
            if queued.is_err() {
                break;
            }
        }
        let ended = crate::nccl::group_end().at_op(last_op);
        queued = queued.and(ended);
    }
    // The mark ends even when the group failed: CUPTI's id for it must
    // not stay on this thread.
    let marked = timer.end_group(&timed, queued.is_ok()).at_op(last_op);
    queued.and(marked)
}

/// `items` in `order` (a permutation of their positions).
fn reorder<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut items: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&at| items.get_mut(at)?.take())
        .collect()
}

/// Compares where the plan passes a kernel's parameters with where the
/// compiled kernel reads them, when the driver can tell: a wrong `unsafe
/// kernel` declaration (or a module rebuilt behind a checked one) stops
/// here instead of making the kernel read past its arguments.
#[track_caller]
fn check_parameters(kernel: &Kernel, declared: &[ParamType]) -> Result<()> {
    let at = Location::caller();
    let Some(compiled) = kernel.parameters().at("cuFuncGetParamInfo", at)? else {
        return Ok(());
    };
    let declared: Vec<ParamLayout> = declared.iter().map(ParamType::layout).collect();
    let declared = ParamLayout::slots(&declared);
    if declared == compiled {
        return Ok(());
    }
    Err(Fault::KernelParameters { declared, compiled }).at("cuFuncGetParamInfo", at)
}
