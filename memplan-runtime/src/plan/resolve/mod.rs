//! From an op as written to a [`Step`]: sizes computed, ranges checked to
//! lie inside their buffers, byte counts and addresses worked out, launch
//! configurations checked against the GPU, argument values laid out. Every
//! number of the plan's description is checked here before it is used, so
//! that nothing the compile-time checks assume goes unchecked at run time:
//! ranges lie inside their buffers, copies have equal lengths, and no size
//! wraps.

mod collective;
mod launch;

use super::address::{Addr, Base, Home, Placed};
use super::given::{Givens, Value, Which};
use super::info::{
    Arg, Array, BufferKind, CollectiveInfo, CollectiveKind, Dims, Elem, LaunchInfo, MALFORMED, Op,
    OpDef, OrBug, Place, PlanInfo, Shared, Size, Term,
};
use super::launch::{Arguments, LaunchStep, MAX_ALIGN, check_limits};
use super::sizes::Sizes;
use super::step::Step;
use crate::copy::{Direction, apart, overlap};
use crate::device_model::DeviceModel;
use crate::error::Fault;
use crate::fill::Pattern;
use crate::kernel::{Dim3, Kernel, LaunchConfig};
use crate::nccl::{Call, Kind, NcclElement};
use crate::op::{OpInfo, OpKind};
use memplan_model::RustScalar;

/// Which side of a buffer an op uses: its host memory (copies and fills of
/// host buffers) or its device address (device buffers, kernel arguments).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Host,
    Device,
}

/// A range of a buffer, resolved.
struct Span {
    addr: Addr,
    bytes: usize,
    elements: usize,
    buffer: u16,
    placed: Placed,
    /// The GPU its device memory is on; `None` for host memory.
    gpu: Option<u16>,
}

/// What a plan's ops are checked against as they are resolved.
#[derive(Clone, Copy)]
pub(crate) enum Against<'a> {
    /// The GPUs `new` made the plan on, with each kernel loaded on each
    /// (kernel `k` on GPU `g` at `k * gpus + g`): launches keep the
    /// kernels' own limits too, and collectives the NCCL loaded.
    Gpus(&'a [Kernel]),
    /// Device models, with nothing loaded: what `check` resolves against.
    /// A kernel's own limits and NCCL's version are unknown, and go
    /// unchecked; the steps made are never queued.
    Models,
}

/// What resolving an op reads: the plan's description and sizes, where its
/// buffers are, what `new` gave, and what it is checked against.
pub(crate) struct Resolver<'a> {
    pub info: &'static PlanInfo,
    /// The limits of the plan's GPUs, by number.
    pub devices: &'a [DeviceModel],
    pub against: Against<'a>,
    pub sizes: &'a mut Sizes,
    pub placed: &'a [Placed],
    /// The addresses of the elements of sets placed on each GPU.
    pub element_bases: &'a [u64],
    /// The GPU of each stream-ordered allocation, once known.
    pub scratch_gpus: &'a [Option<u16>],
    pub given: &'a Givens,
    /// By stream declaration: its first stream among the plan's streams
    /// (a set of streams has several), then the total.
    pub streams: &'a [u16],
    /// The GPU of each stream.
    pub stream_gpus: &'a [u16],
    /// The same for events.
    pub events: &'a [u16],
    /// With collectives: how many ranks the communicator has, and the
    /// rank of the plan's first GPU (the others follow it).
    pub ranks: Option<(usize, usize)>,
    /// A launch resolved before for the op being resolved again, whose
    /// allocations a launch takes over: an op resolved at every run then
    /// allocates nothing.
    pub spare: Option<Box<LaunchStep>>,
}

impl Resolver<'_> {
    /// Op `index`, resolved, and the GPU whose context it is queued in:
    /// its stream's, or for a synchronous copy or fill, its device
    /// memory's.
    pub(crate) fn resolve(&mut self, index: usize) -> Result<(Step, u16), Fault> {
        let info = self.info;
        let def = info.ops.get(index).or_malformed()?;
        let stream = match def.stream {
            Some(stream) => Some(self.stream(stream)?),
            None => None,
        };
        let mut gpu = match stream {
            Some(stream) => *self.stream_gpus.get(usize::from(stream)).or_malformed()?,
            None => 0,
        };
        let on_stream = || stream.or_malformed();
        let step = match &def.op {
            &Op::Copy(src, dst) => self.copy(src, dst, stream, &mut gpu)?,
            &Op::Fill(dst) => self.fill(index, dst, stream, &mut gpu)?,
            Op::Launch(launch) => self.launch(index, launch, stream, gpu)?,
            &Op::Record(event) => Step::Record {
                event: self.event(event)?,
                stream: on_stream()?,
            },
            &Op::Wait(event) => Step::Wait {
                event: self.event(event)?,
                stream: on_stream()?,
            },
            &Op::Sync(target) => {
                if stream.is_some() {
                    return Err(MALFORMED);
                }
                // `sync lanes` of a set of streams waits for all of them.
                let target = match target {
                    None => None,
                    Some(decl) => {
                        let first = *self.streams.get(usize::from(decl)).or_malformed()?;
                        let end = *self.streams.get(usize::from(decl) + 1).or_malformed()?;
                        Some((first, end))
                    }
                };
                Step::Sync(target)
            }
            &Op::Alloc(buffer) => {
                let (scratch, bytes) = self.scratch(buffer)?;
                Step::Alloc {
                    scratch,
                    bytes,
                    stream: on_stream()?,
                }
            }
            &Op::Free(buffer) => Step::Free {
                scratch: self.scratch(buffer)?.0,
                stream: on_stream()?,
            },
            Op::Collective(collective) => self.collective(collective, on_stream()?, gpu)?,
            &Op::Host(step) if stream.is_none() => Step::Host(step),
            Op::Host(_) => return Err(MALFORMED),
        };
        Ok((step, gpu))
    }
}

/// How errors and reports name op `def`: its label, where it is written,
/// and its kind (a copy's by its direction).
pub(super) fn op_info(info: &'static PlanInfo, def: &'static OpDef) -> OpInfo {
    let host = |buffer: u16| {
        info.buffers.get(usize::from(buffer)).is_some_and(|b| {
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
        plan: info.name(),
        label: def.site.0,
        kind,
        stream: def
            .stream
            .and_then(|s| info.streams.get(usize::from(s)))
            .map(|s| s.name),
        element: None,
        location: info.location(def.site),
    }
}

/// The sizes op `index` of `info` reads, the lengths of its buffers included.
pub(crate) fn sizes_of(info: &PlanInfo, index: usize) -> Vec<u16> {
    let mut sizes = Vec::new();
    let place = |place: &Place, sizes: &mut Vec<u16>| {
        if let Some(buffer) = info.buffers.get(usize::from(place.buffer())) {
            sizes.push(buffer.len);
            sizes.extend(buffer.array.map(|array| array.index));
        }
        if let &Place::Part(_, start, end) = place {
            sizes.extend([start, end]);
        }
    };
    let def = info.ops.get(index);
    // The element of a set of streams or events the op uses.
    let stream = def.and_then(|def| def.stream);
    let stream_set = stream.and_then(|s| info.streams.get(usize::from(s))?.array);
    sizes.extend(stream_set.map(|array| array.index));
    if let Some(Op::Record(event) | Op::Wait(event)) = def.map(|def| &def.op) {
        let event_set = info.events.get(usize::from(*event)).and_then(|e| e.array);
        sizes.extend(event_set.map(|array| array.index));
    }
    match def.map(|def| &def.op) {
        Some(Op::Copy(src, dst)) => {
            place(src, &mut sizes);
            place(dst, &mut sizes);
        }
        Some(Op::Fill(dst)) => place(dst, &mut sizes),
        Some(Op::Launch(launch)) => {
            for dims in [launch.grid, launch.block] {
                if let Dims::Sizes(list) = dims {
                    sizes.extend(list);
                }
            }
            if let Some(Shared::Size(size)) = launch.shared {
                sizes.push(size);
            }
            for arg in launch.args {
                match arg {
                    Arg::Buffer(p) => place(p, &mut sizes),
                    &Arg::Extent(ref p, extent, _) => {
                        place(p, &mut sizes);
                        sizes.push(extent);
                    }
                    Arg::Measured(p, ..) => place(p, &mut sizes),
                    &Arg::Bound(size, _) | &Arg::Count(size, ..) => sizes.push(size),
                    Arg::Value => {}
                }
            }
        }
        Some(Op::Collective(collective)) => {
            place(&collective.send, &mut sizes);
            place(&collective.recv, &mut sizes);
            if let CollectiveKind::Broadcast(rank)
            | CollectiveKind::Send(rank)
            | CollectiveKind::Recv(rank) = collective.kind
            {
                sizes.push(rank);
            }
        }
        Some(Op::Alloc(buffer) | Op::Free(buffer)) => {
            if let Some(buffer) = info.buffers.get(usize::from(*buffer)) {
                sizes.push(buffer.len);
            }
        }
        _ => {}
    }
    sizes
}

impl Resolver<'_> {
    /// A copy; `gpu` is its stream's GPU, or set to its device memory's
    /// for a synchronous copy.
    fn copy(
        &mut self,
        src: Place,
        dst: Place,
        stream: Option<u16>,
        gpu: &mut u16,
    ) -> Result<Step, Fault> {
        let (from_host, to_host) = (self.is_host(src.buffer())?, self.is_host(dst.buffer())?);
        let side = |host: bool| if host { Side::Host } else { Side::Device };
        let (from, to) = (
            self.span(src, side(from_host))?,
            self.span(dst, side(to_host))?,
        );
        self.same_elements(&from, &to)?;
        if from.elements != to.elements {
            return Err(Fault::LengthMismatch {
                source: from.elements,
                destination: to.elements,
            });
        }
        writable(&to)?;
        if from.buffer == to.buffer {
            apart(from.addr.offset, to.addr.offset, from.bytes)?;
        }
        let direction = Direction::between(!from_host, !to_host);
        // Device memory on the stream's GPU: a copy between GPUs at one
        // end of it (the checks refuse the rest at compile time).
        let device = [from.gpu, to.gpu].into_iter().flatten();
        match stream {
            Some(_) if !device.clone().any(|on| on == *gpu) && device.clone().next().is_some() => {
                return Err(Fault::Unsupported(ANOTHER_GPUS));
            }
            Some(_) => {}
            None => *gpu = device.clone().next().unwrap_or(0),
        }
        if matches!(direction, Direction::HostToDevice | Direction::DeviceToHost)
            && device.clone().any(|on| on != *gpu)
        {
            return Err(Fault::Unsupported(ANOTHER_GPUS));
        }
        if let (Some(src_gpu), Some(dst_gpu)) = (from.gpu, to.gpu)
            && src_gpu != dst_gpu
        {
            return Ok(Step::CopyBetweenGpus {
                src: from.addr,
                dst: to.addr,
                bytes: from.bytes,
                stream,
                gpus: (src_gpu, dst_gpu),
            });
        }
        Ok(Step::Copy {
            direction,
            src: from.addr,
            dst: to.addr,
            bytes: from.bytes,
            stream,
            src_page_locked: from.placed.page_locked,
        })
    }

    fn fill(
        &mut self,
        index: usize,
        dst: Place,
        stream: Option<u16>,
        gpu: &mut u16,
    ) -> Result<Step, Fault> {
        let host = self.is_host(dst.buffer())?;
        let to = self.span(dst, if host { Side::Host } else { Side::Device })?;
        match (stream, to.gpu) {
            (Some(_), Some(on)) if on != *gpu => return Err(Fault::Unsupported(ANOTHER_GPUS)),
            (None, Some(on)) => *gpu = on,
            _ => {}
        }
        writable(&to)?;
        let value = self
            .given
            .fills
            .iter()
            .find(|given| usize::from(given.op) == index)
            .or_malformed()?;
        let elem = self.info.elem(to.buffer)?;
        if !value.value.elem.same_as(&elem) {
            return Err(MALFORMED);
        }
        if host {
            if stream.is_some() {
                return Err(Fault::Unsupported(
                    "a fill in a stream block writes device memory, and this buffer is host memory",
                ));
            }
            return Ok(Step::FillHost {
                dst: to.addr,
                value: Box::from(&*value.value.bytes),
                bytes: to.bytes,
            });
        }
        let pattern = Pattern::of(&value.value.bytes).ok_or(Fault::UnsupportedFill {
            element_size: elem.size(),
        })?;
        Ok(Step::Fill {
            dst: to.addr,
            pattern,
            bytes: to.bytes,
            stream,
        })
    }

    /// Range `place` of its buffer, on `side`.
    fn span(&mut self, place: Place, side: Side) -> Result<Span, Fault> {
        let index = usize::from(place.buffer());
        let buffer = self.info.buffers.get(index).or_malformed()?;
        let element_size = self.info.elem(place.buffer())?.size();
        let placed = *self.placed.get(index).or_malformed()?;
        let len = self.sizes.get(buffer.len)?;
        // In a set of buffers, the element the loop is at.
        let slot = match buffer.array {
            Some(array) => self.element(array)?,
            None => 0,
        };
        let (start, end) = match place {
            Place::Whole(_) => (0, len),
            Place::Part(_, start, end) => (self.sizes.get(start)?, self.sizes.get(end)?),
        };
        if start > end {
            return Err(Fault::ReversedRange { start, end });
        }
        if end > len {
            return Err(Fault::OutOfBounds { start, end, len });
        }
        // Errors made only when they happen (not `ok_or`): a span is
        // resolved for every buffer argument at every run that changes it,
        // and an unused `Fault` still costs its drop.
        let bytes = |elements: usize| match elements.checked_mul(element_size) {
            Some(bytes) => Ok(bytes),
            None => Err(Fault::SizeOverflow {
                len: elements,
                element_size,
            }),
        };
        let base = match side {
            Side::Host => placed.host,
            Side::Device => placed.device,
        };
        let Some(mut base) = base else {
            return Err(match side {
                Side::Host => MALFORMED,
                Side::Device => Fault::Unsupported(
                    "a kernel cannot reach this buffer: it is host memory that is not mapped",
                ),
            });
        };
        // Each element its own allocation: the element's, from its start.
        let mut slot_in_base = slot;
        if let Base::Elements(first) = base {
            let at = usize::from(first) + slot;
            base = Base::Fixed(*self.element_bases.get(at).or_malformed()?);
            slot_in_base = 0;
        }
        let gpu = match (side, placed.home) {
            (Side::Host, _) | (_, Home::Host) => None,
            (_, Home::Gpu(gpu)) => Some(gpu),
            (_, Home::EachElement) => Some(u16::try_from(slot).map_err(|_| MALFORMED)?),
            // Unknown only to its own `alloc`, which comes first.
            (_, Home::Scratch(scratch)) => self
                .scratch_gpus
                .get(usize::from(scratch))
                .copied()
                .flatten(),
        };
        let first = slot_in_base
            .checked_mul(len)
            .and_then(|skip| skip.checked_add(start));
        let Some(first) = first else {
            return Err(Fault::SizeOverflow {
                len: slot,
                element_size: len,
            });
        };
        Ok(Span {
            addr: Addr {
                base,
                offset: bytes(first)? as u64,
            },
            bytes: bytes(end - start)?,
            elements: end - start,
            buffer: place.buffer(),
            placed,
            gpu,
        })
    }

    fn same_elements(&self, a: &Span, b: &Span) -> Result<(), Fault> {
        if self
            .info
            .elem(a.buffer)?
            .same_as(&self.info.elem(b.buffer)?)
        {
            Ok(())
        } else {
            Err(Fault::Unsupported(
                "a copy between buffers of different element types",
            ))
        }
    }

    fn is_host(&self, buffer: u16) -> Result<bool, Fault> {
        let buffer = self.info.buffers.get(usize::from(buffer)).or_malformed()?;
        Ok(matches!(
            buffer.kind,
            BufferKind::Pageable | BufferKind::Pinned(_) | BufferKind::Param { .. }
        ))
    }

    /// The plan's event that declaration `event` stands for here.
    fn event(&mut self, event: u16) -> Result<u16, Fault> {
        let array = self
            .info
            .events
            .get(usize::from(event))
            .or_malformed()?
            .array;
        let first = *self.events.get(usize::from(event)).or_malformed()?;
        self.member(first, array)
    }

    /// The plan's stream that declaration `stream` stands for here.
    fn stream(&mut self, stream: u16) -> Result<u16, Fault> {
        let array = self
            .info
            .streams
            .get(usize::from(stream))
            .or_malformed()?
            .array;
        let first = *self.streams.get(usize::from(stream)).or_malformed()?;
        self.member(first, array)
    }

    /// The declaration's stream or event that starts at `first` (`array`:
    /// its set), at the element the loop is at.
    fn member(&mut self, first: u16, array: Option<Array>) -> Result<u16, Fault> {
        let element = match array {
            Some(array) => self.element(array)?,
            None => 0,
        };
        u16::try_from(usize::from(first) + element).map_err(|_| MALFORMED)
    }

    /// Which element of a set the loop is at: its index, checked against
    /// the set's size.
    fn element(&mut self, array: Array) -> Result<usize, Fault> {
        let (index, count) = (self.sizes.get(array.index)?, self.sizes.get(array.count)?);
        if index < count {
            Ok(index)
        } else {
            Err(Fault::Element { index, count })
        }
    }

    /// The slot and size of stream-ordered buffer `buffer`.
    fn scratch(&mut self, buffer: u16) -> Result<(u16, usize), Fault> {
        let placed = *self.placed.get(usize::from(buffer)).or_malformed()?;
        let Some(Base::Scratch(slot)) = placed.device else {
            return Err(MALFORMED);
        };
        let span = self.span(Place::Whole(buffer), Side::Device)?;
        Ok((slot, span.bytes))
    }
}

/// An op given memory of a GPU other than its stream's, which the checks
/// refuse at compile time; checked again here, as every promise is.
const ANOTHER_GPUS: &str = "this op's stream is on one GPU and its device memory on another: \
     copies and fills touch memory of their stream's GPU (a copy between GPUs, at one end)";

fn writable(span: &Span) -> Result<(), Fault> {
    if span.placed.writable {
        Ok(())
    } else {
        Err(Fault::Unsupported(
            "this writes the caller's read-only slice",
        ))
    }
}

fn to_u32(value: usize, what: &str) -> Result<u32, Fault> {
    u32::try_from(value).map_err(|_| Fault::Launch(format!("{what}, {value}, does not fit a u32")))
}
