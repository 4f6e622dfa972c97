//! Where everything a plan declares goes, counted and checked before any
//! of it is made: each buffer's GPU and bytes, how many streams, events
//! and kernels there are and on which GPU, and the ranks of its
//! collectives. `new` lays a plan out on its GPUs, allocating each buffer
//! as it is placed; `check` lays it out on device models, allocating
//! nothing. Both resolve the plan's ops against the layout, so a check
//! makes `new`'s checks, with its errors.

use super::address::{Base, Home, Placed};
use super::builder::HostBuffer;
use super::info::{Array, BufferKind, Gpu, MALFORMED, Op, PlanInfo, Site};
use super::sizes::Sizes;
use crate::device_model::DeviceModel;
use crate::error::{Fault, Result};

/// A plan laid out on its GPUs.
pub(crate) struct Layout {
    pub info: &'static PlanInfo,
    /// The limits of each GPU the plan runs on, by number: its own where
    /// the plan is made, a model's where it is checked.
    pub devices: Vec<DeviceModel>,
    /// Where each buffer's memory is.
    pub placed: Vec<Placed>,
    /// The device addresses of the elements of sets placed one element on
    /// each GPU (`on gpu`), each set's after the last's.
    pub element_bases: Vec<u64>,
    /// By stream declaration, its first stream (a set of streams is
    /// several); then the count.
    pub stream_starts: Vec<u16>,
    /// The GPU of each stream.
    pub stream_gpus: Vec<u16>,
    /// The same as `stream_starts`, for events; each event is made once on
    /// every GPU (see [`Made`](super::made::Made)).
    pub event_starts: Vec<u16>,
    /// How many buffers the plan allocates in stream order.
    pub scratch_buffers: u16,
    /// How many caller slices each run passes.
    pub caller_slices: u16,
    /// With collectives: how many ranks the plan's communicators have,
    /// and the rank of its first GPU (the others follow it).
    pub ranks: Option<(usize, usize)>,
    /// How many communicators the plan has: one on each GPU, one for a
    /// plan that is a rank of a job, none without collectives.
    pub communicators: usize,
}

/// Where device memory comes from as buffers are placed: `(site, gpu,
/// bytes)` to the address of `bytes` on GPU `gpu`, for the plan's
/// lifetime.
pub(crate) type Allocate<'a> = dyn FnMut(Site, u16, usize) -> Result<u64> + 'a;

impl Layout {
    /// Lays `info` out on `devices` (GPU `g` is `devices[g]`) with its
    /// sizes: `host` holds where the host buffers are, `job` the job's
    /// (ranks, this rank) for a plan that is one rank of one, and
    /// `allocate` gives each device buffer its memory as it is placed.
    /// Every count is checked before anything of it is allocated.
    pub fn new(
        info: &'static PlanInfo,
        devices: Vec<DeviceModel>,
        sizes: &mut Sizes,
        host: &[Option<HostBuffer>],
        job: Option<(usize, usize)>,
        allocate: &mut Allocate<'_>,
    ) -> Result<Layout> {
        let (ranks, communicators) = ranks(info, devices.len(), job)?;
        let mut layout = Layout {
            info,
            devices,
            placed: Vec::with_capacity(info.buffers.len()),
            element_bases: Vec::new(),
            stream_starts: Vec::new(),
            stream_gpus: Vec::new(),
            event_starts: Vec::new(),
            scratch_buffers: 0,
            caller_slices: 0,
            ranks,
            communicators,
        };
        layout.place_buffers(sizes, host, allocate)?;
        layout.count_kernels()?;
        let streams = info.streams.iter().map(|s| (s.site, s.array, s.gpu));
        (layout.stream_starts, layout.stream_gpus) = layout.number_members(sizes, streams)?;
        // Each event on every GPU: a `record`'s stream picks one.
        layout.check_event_copies(sizes)?;
        let events = info.events.iter().map(|e| (e.site, e.array, None));
        (layout.event_starts, _) = layout.number_members(sizes, events)?;
        Ok(layout)
    }

    /// How many GPUs the plan runs on.
    pub fn gpus(&self) -> usize {
        self.devices.len()
    }

    /// The streams to make: each one's declaration and GPU, in order.
    pub fn streams(&self) -> impl Iterator<Item = (usize, u16)> + '_ {
        let starts = self.stream_starts.windows(2).enumerate();
        starts.flat_map(move |(declaration, pair)| {
            let members = usize::from(pair[0])..usize::from(pair[1]);
            members.map(move |member| (declaration, self.stream_gpus[member]))
        })
    }

    /// How many events the plan makes on each GPU.
    pub fn events(&self) -> usize {
        self.event_starts
            .last()
            .map_or(0, |&count| usize::from(count))
    }

    /// Where each declaration's streams or events start (then their
    /// count), and the GPU of each (`None`: the first); counted before
    /// anything is made of them, so that a huge count is an error rather
    /// than a hang.
    fn number_members(
        &self,
        sizes: &mut Sizes,
        declarations: impl Iterator<Item = (Site, Option<Array>, Option<Gpu>)>,
    ) -> Result<(Vec<u16>, Vec<u16>)> {
        let (mut starts, mut gpus) = (Vec::new(), Vec::new());
        for (site, array, gpu) in declarations {
            let count = count(self.info, sizes, site, array)?;
            self.start(site, gpus.len().saturating_add(count))?;
            starts.push(self.start(site, gpus.len())?);
            for member in 0..count {
                gpus.push(self.gpu_of(sizes, site, gpu, member)?);
            }
        }
        starts.push(self.start(self.info.site, gpus.len())?);
        Ok((starts, gpus))
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
        let count = self.gpus();
        match u16::try_from(gpu) {
            Ok(number) if gpu < count => Ok(number),
            _ => Err(self.info.error(site, Fault::NoSuchGpu { gpu, count })),
        }
    }

    /// The copies of the plan's events, one on each GPU, are numbered with
    /// `u16`s as the events are: checked before any is made.
    fn check_event_copies(&self, sizes: &mut Sizes) -> Result<()> {
        let gpus = self.gpus();
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

    /// Launches name a kernel's copy on their GPU with a `u16`: checked
    /// before any is loaded.
    fn count_kernels(&self) -> Result<()> {
        let gpus = self.gpus();
        for (index, kernel) in self.info.kernels.iter().enumerate() {
            if (index + 1).saturating_mul(gpus) > usize::from(u16::MAX) {
                let why = "a plan may load at most 65535 kernels, each counted once for each of its GPUs (a kernel is loaded on every one)";
                return Err(self.info.error(kernel.site, Fault::Unsupported(why)));
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

    fn place_buffers(
        &mut self,
        sizes: &mut Sizes,
        host: &[Option<HostBuffer>],
        allocate: &mut Allocate<'_>,
    ) -> Result<()> {
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
                            let address = allocate(buffer.site, gpu, bytes)?;
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
                        let address = allocate(buffer.site, gpu, bytes)?;
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
}

/// How many streams, events or buffers a declaration makes.
fn count(info: &PlanInfo, sizes: &mut Sizes, site: Site, array: Option<Array>) -> Result<usize> {
    match array {
        None => Ok(1),
        Some(array) => sizes.get(array.count).map_err(|f| info.error(site, f)),
    }
}

/// The ranks of the plan's collectives and how many communicators it has:
/// none without collectives; for a plan that is one rank of a job, the
/// job's (`job`); else one rank for each of its `gpus`, the first GPU's
/// rank 0.
fn ranks(
    info: &PlanInfo,
    gpus: usize,
    job: Option<(usize, usize)>,
) -> Result<(Option<(usize, usize)>, usize)> {
    let collectives = info
        .ops
        .iter()
        .any(|def| matches!(def.op, Op::Collective(_)));
    if !collectives {
        return Ok((None, 0));
    }
    match (job, info.ranks, info.gpus) {
        (Some(job), Some(_), _) => Ok((Some(job), 1)),
        (None, None, Some(_)) => Ok((Some((gpus, 0)), gpus)),
        _ => Err(info.error(info.site, MALFORMED)),
    }
}
