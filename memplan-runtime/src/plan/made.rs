//! What a plan makes at `new` and keeps for its lifetime: its GPUs'
//! contexts (with peer access where it asks), its device memory, its
//! kernels loaded on every GPU, its streams and events, and its NCCL
//! communicators. Everything is counted and checked before it is made (by
//! its [`Layout`]), and what was made before a failure is dropped with it.

use super::builder::HostBuffer;
use super::fingerprint::Joined;
use super::info::{MALFORMED, ParamType, PlanInfo};
use super::layout::Layout;
use super::sizes::Sizes;
use crate::context::Context;
use crate::device::DeviceBuffer;
use crate::device_model::DeviceModel;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::image::Image;
use crate::kernel::{Kernel, Module};
use crate::nccl::Communicator;
use crate::stream::Stream;
use memplan_model::ParamLayout;

pub(crate) struct Made {
    /// Where everything is, and each GPU's limits.
    pub layout: Layout,
    /// The GPUs the plan runs on, by number (one, unless it declares
    /// `gpus`); the first is bound while a run is queued, and each op binds
    /// its own where it is on another.
    pub contexts: Vec<Context>,
    /// With collectives, the plan's communicator on each GPU (one, for a
    /// plan that is one rank of a job).
    pub comms: Vec<Communicator>,
    /// Each kernel on each GPU: kernel `k` on GPU `g` at `k * gpus + g`.
    pub kernels: Vec<Kernel>,
    pub streams: Vec<Stream>,
    /// Each event once for each GPU (event `e`'s on GPU `g` at `e * gpus
    /// + g`), since an event is recorded on streams of its own GPU only:
    /// a `record` uses its stream's GPU's, a `wait` the one last recorded.
    pub events: Vec<Event>,
    /// The plan's device memory, held and never read: it is freed with
    /// the plan.
    #[expect(dead_code, reason = "held for its drop")]
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
        enable_peers(info, &contexts)?;
        let devices = contexts
            .iter()
            .map(|context| DeviceModel::of(context).map_err(|e| info.within(info.site, e)))
            .collect::<Result<Vec<_>>>()?;
        let job = joined.as_ref().and_then(Joined::job);
        let mut device = Vec::new();
        let layout = Layout::new(info, devices, sizes, host, job, &mut |site, gpu, bytes| {
            let context = contexts.get(usize::from(gpu));
            let context = context.ok_or_else(|| info.error(site, MALFORMED))?;
            let memory =
                DeviceBuffer::<u8>::new(context, bytes).map_err(|e| info.within(site, e))?;
            let address = memory.device_ptr().as_raw();
            device.push(memory);
            Ok(address)
        })?;
        let kernels = load_kernels(info, &contexts)?;
        let streams = layout
            .streams()
            .map(|(declaration, gpu)| {
                let stream = &info.streams[declaration];
                Stream::with_priority(&contexts[usize::from(gpu)], stream.priority)
                    .map_err(|e| info.within(stream.site, e))
            })
            .collect::<Result<Vec<_>>>()?;
        // Each event on every GPU: a `record`'s stream picks one.
        let mut events = Vec::with_capacity(layout.events() * contexts.len());
        for (event, pair) in info.events.iter().zip(layout.event_starts.windows(2)) {
            for _ in pair[0]..pair[1] {
                for context in &contexts {
                    events.push(Event::new(context).map_err(|e| info.within(event.site, e))?);
                }
            }
        }
        let comms = communicators(info, &contexts, &layout, joined)?;
        Ok(Made {
            layout,
            contexts,
            comms,
            kernels,
            streams,
            events,
            device,
        })
    }

    pub fn info(&self) -> &'static PlanInfo {
        self.layout.info
    }
}

/// `peer gpu;`: lets every GPU of the plan reach every other's memory,
/// or says, at the declaration, why it cannot.
fn enable_peers(info: &PlanInfo, contexts: &[Context]) -> Result<()> {
    let Some(site) = info.gpus.and_then(|gpus| gpus.peer) else {
        return Ok(());
    };
    for (a, one) in contexts.iter().enumerate() {
        for (b, other) in contexts.iter().enumerate() {
            // The same GPU twice (two contexts of one device) reaches itself.
            if a != b && one.ordinal() != other.ordinal() {
                one.enable_peer_access(other)
                    .map_err(|e| info.within(site, e))?;
            }
        }
    }
    let first = contexts
        .first()
        .ok_or_else(|| info.error(site, MALFORMED))?;
    first.bind_to_thread().map_err(|e| info.within(site, e))
}

/// The plan's communicators, as many as `layout` counts: one on each of
/// its GPUs (`ncclCommInitAll`), or, for a plan that declares `ranks`, its
/// rank of the job, joined already; none without collectives.
fn communicators(
    info: &PlanInfo,
    contexts: &[Context],
    layout: &Layout,
    joined: &mut Option<Joined>,
) -> Result<Vec<Communicator>> {
    if layout.communicators == 0 {
        return Ok(Vec::new());
    }
    let made = match (joined.take(), info.ranks, info.gpus) {
        // The ranks agree (or are told) right after: see `Runner::new`.
        (Some(joined), Some(_), _) => Ok(vec![joined.into_agreed()]),
        (None, None, Some(gpus)) => {
            Communicator::all(contexts).map_err(|e| info.within(gpus.site, e))
        }
        _ => Err(info.error(info.site, MALFORMED)),
    }?;
    if made.len() != layout.communicators {
        return Err(info.error(info.site, MALFORMED));
    }
    // NCCL set its own current device while it made them.
    contexts[0]
        .bind_to_thread()
        .map_err(|e| info.within(info.site, e))?;
    Ok(made)
}

/// Loads each module once on each GPU, at its first kernel, and finds
/// every kernel on every GPU (kernel `k` on GPU `g` at `k * gpus + g`);
/// their count was checked by the layout.
fn load_kernels(info: &PlanInfo, contexts: &[Context]) -> Result<Vec<Kernel>> {
    let mut modules: Vec<(&'static Image, usize, Module)> = Vec::new();
    let mut kernels = Vec::with_capacity(info.kernels.len() * contexts.len());
    for (index, kernel) in info.kernels.iter().enumerate() {
        let code = (info.kernel_code(index as u16)).map_err(|f| info.error(kernel.site, f))?;
        for (gpu, context) in contexts.iter().enumerate() {
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
    Ok(kernels)
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
