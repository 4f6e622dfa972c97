//! What a plan makes at `new` and keeps for its lifetime: its GPUs'
//! contexts (with peer access where it asks), its device memory, its
//! kernels loaded on every GPU, its streams and events, and its NCCL
//! communicators. Everything is counted and checked before it is made, and
//! what was made before a failure is dropped with it.

use super::address::{Base, Home, Placed};
use super::builder::HostBuffer;
use super::fingerprint::Joined;
use super::info::{Array, BufferKind, Gpu, MALFORMED, Op, ParamType, PlanInfo, Site};
use super::sizes::Sizes;
use crate::context::Context;
use crate::device::DeviceBuffer;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::image::Image;
use crate::kernel::{Kernel, Module};
use crate::nccl::Communicator;
use crate::param::ParamLayout;
use crate::stream::Stream;

pub(crate) struct Made {
    pub info: &'static PlanInfo,
    /// The GPUs the plan runs on, by number (one, unless it declares
    /// `gpus`); the first is bound while a run is queued, and each op binds
    /// its own where it is on another.
    pub contexts: Vec<Context>,
    /// With collectives, the plan's communicator on each GPU (one, for a
    /// plan that is one rank of a job).
    pub comms: Vec<Communicator>,
    /// Where each buffer's memory is.
    pub placed: Vec<Placed>,
    /// The device addresses of the elements of sets placed one element on
    /// each GPU (`on gpu`), each set's after the last's.
    pub element_bases: Vec<u64>,
    /// Each kernel on each GPU: kernel `k` on GPU `g` at `k * gpus + g`.
    pub kernels: Vec<Kernel>,
    pub streams: Vec<Stream>,
    /// The GPU each stream is on.
    pub stream_gpus: Vec<u16>,
    /// By stream declaration, its first stream in `streams`; then the
    /// count (a set of streams is several).
    pub stream_starts: Vec<u16>,
    /// Each event once for each GPU (event `e`'s on GPU `g` at `e * gpus
    /// + g`), since an event is recorded on streams of its own GPU only:
    /// a `record` uses its stream's GPU's, a `wait` the one last recorded.
    pub events: Vec<Event>,
    /// The same as `stream_starts`, for events.
    pub event_starts: Vec<u16>,
    /// How many buffers the plan allocates in stream order.
    pub scratch_buffers: u16,
    /// How many caller slices each run passes.
    pub caller_slices: u16,
    /// The plan's device memory.
    device: Vec<DeviceBuffer<u8>>,
}

impl Made {
    /// Makes everything the plan declares besides its host buffers
    /// (`host`, made by the builder), on `contexts`, with the plan's sizes;
    /// a plan that declares `ranks` takes its communicator from `joined`
    /// once everything else is made (before that, a failure leaves it
    /// there, to tell the other ranks).
    pub fn make(
        info: &'static PlanInfo,
        contexts: Vec<Context>,
        sizes: &mut Sizes,
        host: &[Option<HostBuffer>],
        joined: &mut Option<Joined>,
    ) -> Result<Made> {
        let mut made = Made {
            info,
            contexts,
            comms: Vec::new(),
            placed: Vec::with_capacity(info.buffers.len()),
            element_bases: Vec::new(),
            kernels: Vec::new(),
            streams: Vec::new(),
            stream_gpus: Vec::new(),
            stream_starts: Vec::new(),
            events: Vec::new(),
            event_starts: Vec::new(),
            scratch_buffers: 0,
            caller_slices: 0,
            device: Vec::new(),
        };
        made.enable_peers()?;
        made.place_buffers(sizes, host)?;
        made.load_kernels()?;
        let streams = info.streams.iter().map(|s| (s.site, s.array, s.gpu));
        (made.streams, made.stream_starts, made.stream_gpus) =
            made.make_members(sizes, streams, |contexts, gpu, i| {
                Stream::with_priority(&contexts[gpu], info.streams[i].priority)
            })?;
        // Each event on every GPU: a `record`'s stream picks one.
        made.check_event_copies(sizes)?;
        let events = info.events.iter().map(|e| (e.site, e.array, None));
        let (events, event_starts, _) = made.make_members(sizes, events, |contexts, _, _| {
            contexts.iter().map(Event::new).collect::<Result<Vec<_>>>()
        })?;
        (made.events, made.event_starts) = (events.into_iter().flatten().collect(), event_starts);
        made.comms = made.communicators(joined)?;
        Ok(made)
    }

    /// Where a declaration's streams or events start among the `made`
    /// so far, and how many it makes; counted before any is made, so that
    /// a huge count is an error rather than a hang.
    fn members(
        &self,
        sizes: &mut Sizes,
        site: Site,
        array: Option<Array>,
        made: usize,
    ) -> Result<(u16, usize)> {
        let count = count(self.info, sizes, site, array)?;
        self.start(site, made.saturating_add(count))?;
        Ok((self.start(site, made)?, count))
    }

    /// Makes the members of each declaration (`(site, set, gpu)`: a set's
    /// count of them, else one) with `make(contexts, gpu, declaration)`;
    /// returns them, where each declaration's start (then their count),
    /// and the GPU of each. What was made before a failure is dropped
    /// with it.
    fn make_members<T>(
        &self,
        sizes: &mut Sizes,
        declarations: impl Iterator<Item = (Site, Option<Array>, Option<Gpu>)>,
        make: impl Fn(&[Context], usize, usize) -> Result<T>,
    ) -> Result<(Vec<T>, Vec<u16>, Vec<u16>)> {
        let (mut made, mut starts, mut gpus) = (Vec::new(), Vec::new(), Vec::new());
        for (declaration, (site, array, gpu)) in declarations.enumerate() {
            let (start, count) = self.members(sizes, site, array, made.len())?;
            starts.push(start);
            for member in 0..count {
                let gpu = self.gpu_of(sizes, site, gpu, member)?;
                let one = make(&self.contexts, usize::from(gpu), declaration);
                made.push(one.map_err(|e| self.info.within(site, e))?);
                gpus.push(gpu);
            }
        }
        starts.push(self.start(self.info.site, made.len())?);
        Ok((made, starts, gpus))
    }

    /// The GPU of element `member` of a declaration placed on `gpu`
    /// (`None`: the first), checked to be one the plan runs on.
    fn gpu_of(
        &self,
        sizes: &mut Sizes,
        site: Site,
        gpu: Option<Gpu>,
        member: usize,
    ) -> Result<u16> {
        let gpu = match gpu {
            None => 0,
            Some(Gpu::Each) => member,
            Some(Gpu::One(size)) => sizes.get(size).map_err(|f| self.info.error(site, f))?,
        };
        let count = self.contexts.len();
        match u16::try_from(gpu) {
            Ok(number) if gpu < count => Ok(number),
            _ => Err(self.info.error(site, Fault::NoSuchGpu { gpu, count })),
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
                        .map_err(|e| self.info.within(site, e))?;
                }
            }
        }
        self.contexts[0]
            .bind_to_thread()
            .map_err(|e| self.info.within(site, e))
    }

    /// The copies of the plan's events, one on each GPU, are numbered with
    /// `u16`s as the events are: checked before any is made.
    fn check_event_copies(&self, sizes: &mut Sizes) -> Result<()> {
        let gpus = self.contexts.len();
        let mut members = 0usize;
        for event in self.info.events {
            members = members.saturating_add(count(self.info, sizes, event.site, event.array)?);
            if members.saturating_mul(gpus) > usize::from(u16::MAX) {
                let why = "a plan may have at most 65535 events, each counted once for each of its GPUs (an event is recorded on streams of its own GPU, so it is made on every one)";
                return Err(self.info.error(event.site, Fault::Unsupported(why)));
            }
        }
        Ok(())
    }

    /// Where a declaration's streams or events start, numbered with `u16`s.
    fn start(&self, site: Site, start: usize) -> Result<u16> {
        u16::try_from(start).map_err(|_| {
            let why = "a plan may have at most 65535 streams and as many events";
            self.info.error(site, Fault::Unsupported(why))
        })
    }

    /// The plan's communicators, if it has collectives: one on each of its
    /// GPUs (`ncclCommInitAll`), or, for a plan that declares `ranks`, its
    /// rank of the job, joined already.
    fn communicators(&self, joined: &mut Option<Joined>) -> Result<Vec<Communicator>> {
        let info = self.info;
        if !info
            .ops
            .iter()
            .any(|def| matches!(def.op, Op::Collective(_)))
        {
            return Ok(Vec::new());
        }
        let made = match (joined.take(), info.ranks, info.gpus) {
            // The ranks agree (or are told) right after: see `Runner::new`.
            (Some(joined), Some(_), _) => Ok(vec![joined.into_agreed()]),
            (None, None, Some(gpus)) => {
                Communicator::all(&self.contexts).map_err(|e| info.within(gpus.site, e))
            }
            _ => Err(info.error(info.site, MALFORMED)),
        }?;
        // NCCL set its own current device while it made them.
        self.contexts[0]
            .bind_to_thread()
            .map_err(|e| info.within(info.site, e))?;
        Ok(made)
    }

    fn place_buffers(&mut self, sizes: &mut Sizes, host: &[Option<HostBuffer>]) -> Result<()> {
        let info = self.info;
        let (mut scratch, mut params) = (0u16, 0u16);
        for (index, buffer) in info.buffers.iter().enumerate() {
            let placed = match buffer.kind {
                BufferKind::Pageable | BufferKind::Pinned(_) => {
                    let made = host
                        .get(index)
                        .copied()
                        .flatten()
                        .ok_or_else(|| info.error(buffer.site, MALFORMED))?;
                    Placed {
                        host: Some(Base::Fixed(made.host)),
                        device: made.device.map(Base::Fixed),
                        page_locked: made.page_locked,
                        writable: true,
                        home: Home::Host,
                    }
                }
                BufferKind::Device => {
                    let count = count(info, sizes, buffer.site, buffer.array)?;
                    let len = sizes
                        .get(buffer.len)
                        .map_err(|f| info.error(buffer.site, f))?;
                    let element_size = info
                        .elem(index as u16)
                        .map_err(|f| info.error(buffer.site, f))?
                        .size();
                    let bytes = |len: usize| {
                        len.checked_mul(element_size).ok_or_else(|| {
                            let fault = Fault::SizeOverflow { len, element_size };
                            info.error(buffer.site, fault)
                        })
                    };
                    if buffer.gpu == Some(Gpu::Each) {
                        // Element `e` on GPU `e`: an allocation each.
                        let (first, bytes) = (self.element_bases.len(), bytes(len)?);
                        let first = u16::try_from(first).map_err(|_| {
                            let why = "a plan may place at most 65535 elements on GPUs one by one";
                            info.error(buffer.site, Fault::Unsupported(why))
                        })?;
                        for element in 0..count {
                            let gpu = self.gpu_of(sizes, buffer.site, buffer.gpu, element)?;
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
                            info.error(buffer.site, fault)
                        })?;
                        let bytes = bytes(len)?;
                        let gpu = self.gpu_of(sizes, buffer.site, buffer.gpu, 0)?;
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
        (self.scratch_buffers, self.caller_slices) = (scratch, params);
        Ok(())
    }

    /// `bytes` of device memory on GPU `gpu`, for the plan's lifetime.
    fn allocate(&mut self, site: Site, gpu: u16, bytes: usize) -> Result<u64> {
        let memory = DeviceBuffer::<u8>::new(&self.contexts[usize::from(gpu)], bytes)
            .map_err(|e| self.info.within(site, e))?;
        let address = memory.device_ptr().as_raw();
        self.device.push(memory);
        Ok(address)
    }

    /// Loads each module once on each GPU, at its first kernel, and finds
    /// every kernel on every GPU.
    fn load_kernels(&mut self) -> Result<()> {
        let (info, gpus) = (self.info, self.contexts.len());
        // Launches name a kernel's copy on their GPU with a `u16`.
        for (index, kernel) in info.kernels.iter().enumerate() {
            if (index + 1).saturating_mul(gpus) > usize::from(u16::MAX) {
                let why = "a plan may load at most 65535 kernels, each counted once for each of its GPUs (a kernel is loaded on every one)";
                return Err(info.error(kernel.site, Fault::Unsupported(why)));
            }
        }
        let mut modules: Vec<(&'static Image, usize, Module)> = Vec::new();
        let mut kernels = Vec::with_capacity(info.kernels.len() * gpus);
        for (index, kernel) in info.kernels.iter().enumerate() {
            let code = (info.kernel_code(index as u16)).map_err(|f| info.error(kernel.site, f))?;
            for (gpu, context) in self.contexts.iter().enumerate() {
                let loaded = modules
                    .iter()
                    .find(|(image, on, _)| std::ptr::eq(*image, code.module) && *on == gpu);
                let module = match loaded {
                    Some((.., module)) => module.clone(),
                    None => {
                        let module = Module::from_image(context, code.module)
                            .map_err(|e| info.within(kernel.site, e))?;
                        modules.push((code.module, gpu, module.clone()));
                        module
                    }
                };
                let found = module
                    .kernel(code.entry)
                    .and_then(|found| check_parameters(&found, code.params).map(|()| found));
                kernels.push(found.map_err(|e| info.within(kernel.site, e))?);
            }
        }
        self.kernels = kernels;
        Ok(())
    }
}

/// How many streams, events or buffers a declaration makes.
fn count(info: &PlanInfo, sizes: &mut Sizes, site: Site, array: Option<Array>) -> Result<usize> {
    match array {
        None => Ok(1),
        Some(array) => sizes.get(array.count).map_err(|f| info.error(site, f)),
    }
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
