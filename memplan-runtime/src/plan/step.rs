//! An op resolved for running: addresses, byte counts and launch
//! configurations computed (and checked) once, so that running it is the
//! one driver call a careful person would write.

use super::address::{Addr, Base};
use super::info::{OrBug, UNRESOLVED};
use super::launch::LaunchStep;
use crate::context::Context;
use crate::copy::{self, Direction};
use crate::driver;
use crate::error::Fault;
use crate::event::Event;
use crate::fill::Pattern;
use crate::kernel::Kernel;
use crate::nccl::{Call, Comm, Communicator, Nccl};
use crate::stream::{LEGACY, Stream, synchronize_legacy, wait_all};
use crate::timer::GroupPart;
use cust::sys::CUstream;

/// An op resolved for running: over the model's `Op` (what the plan says)
/// it adds what only the run knows, the addresses, byte counts, launch
/// configurations and argument values, computed and checked, and the
/// handles (streams, events, kernels, communicators) by number.
pub(crate) enum Step {
    /// Resolved at each run: it reads a size the run gives.
    Pending,
    Copy {
        direction: Direction,
        src: Addr,
        dst: Addr,
        bytes: usize,
        /// `None`: synchronous, on the host's turn.
        stream: Option<u16>,
        src_page_locked: bool,
    },
    /// A copy from one GPU's memory to another's (`cuMemcpyAsync`, or
    /// `cuMemcpyPeer` on the host's turn): direct with peer access, else
    /// staged by the driver through host memory.
    CopyBetweenGpus {
        src: Addr,
        dst: Addr,
        bytes: usize,
        stream: Option<u16>,
        /// The source's GPU, then the destination's.
        gpus: (u16, u16),
    },
    /// Device memory set to a repeated pattern.
    Fill {
        dst: Addr,
        pattern: Pattern,
        bytes: usize,
        stream: Option<u16>,
    },
    /// Host memory set to a repeated value, by the CPU.
    FillHost {
        dst: Addr,
        value: Box<[u8]>,
        bytes: usize,
    },
    Launch {
        launch: Box<LaunchStep>,
        stream: Option<u16>,
    },
    Record {
        event: u16,
        stream: u16,
    },
    Wait {
        event: u16,
        stream: u16,
    },
    /// `sync` of the streams `first..end`, or of all (`None`).
    Sync(Option<(u16, u16)>),
    Alloc {
        scratch: u16,
        bytes: usize,
        stream: u16,
    },
    Free {
        scratch: u16,
        stream: u16,
    },
    Host(u16),
    /// One rank's part of an NCCL collective: `call`, with its buffers'
    /// addresses filled in when it is queued.
    Collective {
        call: Call,
        send: Addr,
        recv: Addr,
        /// The larger of the two buffers, in bytes, for reports.
        bytes: usize,
        stream: u16,
        /// The plan's communicator on the stream's GPU.
        comm: u16,
    },
}

/// What steps act on during a run.
pub(crate) struct Resources<'a> {
    /// The plan's GPUs, by number.
    pub contexts: &'a [Context],
    pub streams: &'a [Stream],
    pub events: &'a [Event],
    pub kernels: &'a [Kernel],
    /// The plan's communicators, by GPU; none without collectives.
    pub comms: &'a [Communicator],
    /// Stream-ordered allocations, 0 when not allocated.
    pub scratch: &'a mut [u64],
    /// The run's caller slices.
    pub params: &'a [u64],
}

impl Resources<'_> {
    /// The address `addr` stands for now; an error where its base is not
    /// there (a caller slice outside a run). A stream-ordered buffer of no
    /// bytes, like a device buffer of none, is at 0, which nothing reads.
    pub fn address(&self, addr: Addr) -> Result<u64, Fault> {
        address_in(addr, self.scratch, self.params)
    }

    pub fn stream(&self, stream: Option<u16>) -> Result<CUstream, Fault> {
        match stream {
            None => Ok(LEGACY),
            Some(index) => Ok(self.streams.get(usize::from(index)).or_unresolved()?.raw()),
        }
    }
}

/// The address `addr` stands for with the stream-ordered allocations
/// `scratch` and the caller slices `params`.
pub(crate) fn address_in(addr: Addr, scratch: &[u64], params: &[u64]) -> Result<u64, Fault> {
    let base = match addr.base {
        Base::Fixed(base) => Some(base),
        Base::Param(param) => params
            .get(usize::from(param))
            .copied()
            .filter(|&base| base != 0),
        Base::Scratch(slot) => scratch.get(usize::from(slot)).copied(),
        // Resolved to the element's own base when the op was.
        Base::Elements(_) => None,
    };
    base.and_then(|base| base.checked_add(addr.offset))
        .or_unresolved()
}

impl Step {
    /// The stream a step timed on the GPU runs on: `Some(None)` for the
    /// legacy stream, `None` for steps that are not (only copies, fills
    /// of device memory and launches are).
    pub fn timed_on(&self) -> Option<Option<u16>> {
        match self {
            _ if self.runs_on_host() => None,
            Step::Copy { stream, .. }
            | Step::CopyBetweenGpus { stream, .. }
            | Step::Fill { stream, .. }
            | Step::Launch { stream, .. } => Some(*stream),
            _ => None,
        }
    }

    /// The stream the step is queued on; `None` for the host's turn (and
    /// a step resolved at each run, which keeps its place).
    pub fn queued_on(&self) -> Option<u16> {
        match *self {
            Step::Copy { stream, .. }
            | Step::CopyBetweenGpus { stream, .. }
            | Step::Fill { stream, .. }
            | Step::Launch { stream, .. } => stream,
            Step::Record { stream, .. }
            | Step::Wait { stream, .. }
            | Step::Alloc { stream, .. }
            | Step::Free { stream, .. }
            | Step::Collective { stream, .. } => Some(stream),
            Step::Pending | Step::FillHost { .. } | Step::Sync(_) | Step::Host(_) => None,
        }
    }

    /// The event the step records or waits for.
    pub fn event(&self) -> Option<u16> {
        match *self {
            Step::Record { event, .. } | Step::Wait { event, .. } => Some(event),
            _ => None,
        }
    }

    /// Whether the step is the host's own work (a host step, a fill of
    /// host memory, a copy between host buffers), timed on the host.
    pub fn runs_on_host(&self) -> bool {
        matches!(
            self,
            Step::Host(_)
                | Step::FillHost { .. }
                | Step::Copy {
                    direction: Direction::HostToHost,
                    stream: None,
                    ..
                }
        )
    }

    /// Whether running the step, which moved `bytes`, gave the GPU work:
    /// a copy or fill of no bytes makes no driver call.
    pub fn gave_work(&self, bytes: usize) -> bool {
        match self {
            Step::Launch { .. } => true,
            Step::Copy { .. } | Step::CopyBetweenGpus { .. } | Step::Fill { .. } => bytes > 0,
            _ => false,
        }
    }

    /// Runs the step (host steps through `host`); returns the bytes it
    /// moved.
    ///
    /// # Safety
    /// The step was resolved from a plan memplan checked, against the
    /// memory `on` describes: every address is inside memory that stays
    /// allocated, and untouched by the host, until the streams the plan
    /// orders after this step have finished.
    pub unsafe fn run(
        &mut self,
        on: &mut Resources,
        host: &mut dyn FnMut(u16) -> Result<(), Fault>,
    ) -> Result<usize, Fault> {
        // SAFETY (every driver call below): the caller's promise.
        match self {
            Step::Pending => Err(UNRESOLVED),
            &mut Step::Copy {
                direction,
                src,
                dst,
                bytes,
                stream,
                src_page_locked,
            } => {
                if bytes == 0 {
                    return Ok(0);
                }
                let (src, dst) = (on.address(src)?, on.address(dst)?);
                let stream = match stream {
                    Some(_) => Some(on.stream(stream)?),
                    None => None,
                };
                unsafe { copy::copy_bytes(direction, src, dst, bytes, stream, src_page_locked)? };
                Ok(bytes)
            }
            &mut Step::CopyBetweenGpus {
                src,
                dst,
                bytes,
                stream,
                gpus: (src_gpu, dst_gpu),
            } => {
                if bytes == 0 {
                    return Ok(0);
                }
                let context = |gpu: u16| on.contexts.get(usize::from(gpu)).or_unresolved();
                let (from, to) = (context(src_gpu)?, context(dst_gpu)?);
                let (src, dst) = (on.address(src)?, on.address(dst)?);
                let stream = match stream {
                    Some(_) => Some(on.stream(stream)?),
                    None => None,
                };
                unsafe { copy::between_gpus(src, from, dst, to, bytes, stream)? };
                Ok(bytes)
            }
            &mut Step::Fill {
                dst,
                pattern,
                bytes,
                stream,
            } => {
                if bytes == 0 {
                    return Ok(0);
                }
                unsafe { pattern.write(on.address(dst)?, bytes, on.stream(stream)?)? };
                if stream.is_none() {
                    synchronize_legacy()?;
                }
                Ok(bytes)
            }
            Step::FillHost { dst, value, bytes } => {
                if *bytes > 0 && !value.is_empty() {
                    let start = on.address(*dst)? as *mut u8;
                    // SAFETY: `bytes` of host memory the plan owns or
                    // borrows, which nothing else touches meanwhile.
                    let memory = unsafe { std::slice::from_raw_parts_mut(start, *bytes) };
                    for element in memory.chunks_exact_mut(value.len()) {
                        element.copy_from_slice(value);
                    }
                }
                Ok(*bytes)
            }
            Step::Launch { launch, stream } => {
                let kernel = on.kernels.get(usize::from(launch.kernel)).or_unresolved()?;
                let raw = on.stream(*stream)?;
                unsafe { launch.launch(kernel, raw, |addr| on.address(addr))? };
                if stream.is_none() {
                    synchronize_legacy()?;
                }
                Ok(0)
            }
            &mut Step::Record { event, stream } => {
                let event = on.events.get(usize::from(event)).or_unresolved()?;
                event.record_on(on.stream(Some(stream))?)?;
                Ok(0)
            }
            &mut Step::Wait { event, stream } => {
                let event = on.events.get(usize::from(event)).or_unresolved()?;
                unsafe { driver::stream_wait_event(on.stream(Some(stream))?, event.raw(), 0)? };
                Ok(0)
            }
            &mut Step::Sync(streams) => {
                match streams {
                    Some((first, end)) => {
                        let range = usize::from(first)..usize::from(end);
                        wait_all(on.streams.get(range).or_unresolved()?)?
                    }
                    None => wait_all(on.streams)?,
                }
                Ok(0)
            }
            &mut Step::Alloc {
                scratch,
                bytes,
                stream,
            } => {
                let raw = on.stream(Some(stream))?;
                let slot = on.scratch.get_mut(usize::from(scratch)).or_unresolved()?;
                if bytes > 0 {
                    *slot = unsafe { driver::mem_alloc_async(bytes, raw)? };
                }
                Ok(0)
            }
            &mut Step::Free { scratch, stream } => {
                let raw = on.stream(Some(stream))?;
                let slot = on.scratch.get_mut(usize::from(scratch)).or_unresolved()?;
                if *slot != 0 {
                    unsafe { driver::mem_free_async(*slot, raw)? };
                    *slot = 0;
                }
                Ok(0)
            }
            &mut Step::Host(step) => {
                host(step)?;
                Ok(0)
            }
            Step::Collective { .. } => {
                let part = self.nccl_part(on)?.or_unresolved()?;
                unsafe { part.queue()? };
                Ok(0)
            }
        }
    }

    /// A collective step's call, ready for NCCL; `None` for other steps.
    /// Everything of memplan's that can fail is done here, so that a
    /// group's parts can all be made before `ncclGroupStart`.
    pub fn nccl_part(&self, on: &Resources) -> Result<Option<NcclPart>, Fault> {
        let &Step::Collective {
            call,
            send,
            recv,
            bytes,
            stream,
            comm,
        } = self
        else {
            return Ok(None);
        };
        let comm = on.comms.get(usize::from(comm)).or_unresolved()?;
        let (send, recv) = (on.address(send)?, on.address(recv)?);
        Ok(Some(NcclPart {
            nccl: crate::nccl::nccl()?,
            call: Call {
                send: send as *mut std::ffi::c_void,
                recv: recv as *mut std::ffi::c_void,
                ..call
            },
            comm: comm.raw(),
            stream: on.stream(Some(stream))?,
            device: u32::try_from(comm.context().ordinal()).map_err(|_| UNRESOLVED)?,
            bytes,
            // Out of place, the data moves on the GPU, whatever the rank
            // count; in place, a rank alone may be left as it is.
            gives_work: comm.count() > 1 || send != recv,
        }))
    }
}

/// One rank's part of a collective with its addresses, communicator and
/// stream looked up: what is left is NCCL's call.
pub(crate) struct NcclPart {
    nccl: &'static Nccl,
    call: Call,
    comm: Comm,
    stream: CUstream,
    /// Its GPU, as CUDA numbers devices.
    device: u32,
    bytes: usize,
    gives_work: bool,
}

impl NcclPart {
    /// Hands the call to NCCL (inside a group, NCCL queues it at
    /// `ncclGroupEnd`).
    ///
    /// # Safety
    /// As for [`Step::run`].
    pub unsafe fn queue(&self) -> Result<(), Fault> {
        // SAFETY: the caller's promise; the communicator is the plan's,
        // alive while the plan is, and the stream is of its GPU.
        let status = unsafe { self.call.issue(self.nccl, self.comm, self.stream.cast()) };
        self.nccl.check(self.call.name(), status)
    }

    /// The part as timing sees it, as op `index` of the run.
    pub fn timed_as(&self, index: usize) -> GroupPart {
        GroupPart {
            index,
            stream: self.stream,
            device: self.device,
            bytes: self.bytes,
            gives_work: self.gives_work,
        }
    }
}
