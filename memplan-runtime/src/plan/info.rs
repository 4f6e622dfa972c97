//! What `memplan!` emits for each plan: a static description of its
//! declarations and ops, with every size written as a small program. The
//! engine builds the plan from it and runs it; nothing in it is trusted
//! beyond what [`Engine::new`](super::Engine::new) promises, and every
//! number in it is checked before it is used.

use crate::error::Fault;
use crate::host::HostAlloc;
use crate::image::Image;
use crate::memory::Element;
use crate::param::ParamLayout;
use crate::stream::Priority;
use std::any::TypeId;

/// A plan, as written.
pub struct PlanInfo {
    /// The plan's name, where it is written.
    pub site: Site,
    /// The file the plan is written in (`file!()`): with each [`Site`]'s
    /// line and column, where errors point.
    pub file: &'static str,
    /// The names of the size inputs: those `new` passes (sizes, constants),
    /// then the lengths of caller slices declared without one, which each
    /// run measures. For messages.
    pub inputs: &'static [&'static str],
    /// Every length, range bound and launch dimension.
    pub sizes: &'static [Size],
    pub kernels: &'static [KernelInfo],
    pub buffers: &'static [BufferInfo],
    pub streams: &'static [StreamInfo],
    pub events: &'static [EventInfo],
    /// In program order.
    pub ops: &'static [OpDef],
    /// The `for` loops: each repeats a run of consecutive ops.
    pub loops: &'static [LoopInfo],
    /// The inputs each run gives: the plan's `run` size parameters.
    pub run_inputs: &'static [u16],
    /// The ops whose values each run gives (`run` value parameters).
    pub per_run: &'static [u16],
    /// `gpus gpu[g];`: the plan runs on the GPUs `new` is given; `None`
    /// for a plan on the one GPU of its context.
    pub gpus: Option<GpusInfo>,
    /// `ranks world;`: the plan is one rank of a job of one process per
    /// GPU, and `new` joins the job's communicator.
    pub ranks: Option<Site>,
}

/// `gpus gpu[g];`, and `peer gpu;` if the plan declares it.
#[derive(Clone, Copy, Debug)]
pub struct GpusInfo {
    pub site: Site,
    /// How many GPUs, a size: `new` must be given as many contexts.
    pub count: u16,
    /// `peer gpu;`: `new` turns peer access on between every two of them.
    pub peer: Option<Site>,
}

/// Which GPU a device buffer or a stream is on, in a plan that declares
/// `gpus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpu {
    /// `on gpu`, for a set: element `i` on GPU `i`.
    Each,
    /// `on gpu[e]`: on GPU `e`, a size.
    One(u16),
}

impl PlanInfo {
    pub fn name(&self) -> &'static str {
        self.site.0
    }
}

/// Where something is written: its label (`copy a -> da`, `data: [f32; n]
/// pinned`), line and column.
#[derive(Clone, Copy, Debug)]
pub struct Site(pub &'static str, pub u32, pub u32);

/// A size as written (`n / 2 + 1`), and the postfix program that computes it.
#[derive(Debug)]
pub struct Size(pub &'static str, pub &'static [Term]);

/// One step of a size program, on a stack of `usize`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// Pushes input `i`.
    Input(u16),
    Literal(u64),
    /// Pops `b`, then `a`; pushes `a + b` (and so on); every step checked.
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `blocks(n, per_block)`: `n / per_block` rounded up.
    Blocks,
    /// `as u32` in a launch configuration: the value must fit.
    U32,
    /// Pops `b`, then `a`; pushes the smaller.
    Min,
}

/// An element type: its size, and which type it is. Only [`Elem::of`]
/// makes one, so the two always agree.
#[derive(Clone, Copy)]
pub struct Elem {
    size: usize,
    type_id: fn() -> TypeId,
    type_name: fn() -> &'static str,
}

impl Elem {
    pub const fn of<T: Element>() -> Elem {
        Elem {
            size: size_of::<T>(),
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
        }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The type's name, as Rust spells it (`f32`, `my_crate::Pixel`).
    pub(crate) fn name(&self) -> &'static str {
        (self.type_name)()
    }

    pub(crate) fn is<T: 'static>(&self) -> bool {
        (self.type_id)() == TypeId::of::<T>()
    }

    pub(crate) fn same_as(&self, other: &Elem) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

impl std::fmt::Debug for Elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Elem({} bytes)", self.size)
    }
}

/// The element type `T`, for a [`BufferInfo`].
pub const fn elem<T: Element>() -> Elem {
    Elem::of::<T>()
}

impl Site {
    /// The buffer declared here: `elem`s, `len` long (a size), of `kind`.
    pub const fn buffer(self, elem: Elem, len: u16, kind: BufferKind) -> BufferInfo {
        BufferInfo {
            site: self,
            elem,
            len,
            kind,
            array: None,
            gpu: None,
        }
    }

    /// The event declared here.
    pub const fn event(self) -> EventInfo {
        EventInfo {
            site: self,
            array: None,
        }
    }

    /// The loop written here: ops `first..end` repeated for each value of
    /// input `input` below size `count`.
    pub const fn repeat(self, count: u16, input: u16, first: u16, end: u16) -> LoopInfo {
        LoopInfo {
            site: self,
            count,
            input,
            first,
            end,
        }
    }

    /// The kernel declared here: symbol `entry` of `module`, taking
    /// parameters of `params`' layouts.
    pub const fn kernel(
        self,
        entry: &'static str,
        module: &'static Image,
        params: &'static [ParamLayout],
    ) -> KernelInfo {
        KernelInfo {
            site: self,
            entry,
            module,
            params,
            written: &[],
        }
    }

    /// The stream declared here.
    pub const fn stream(self, name: &'static str, priority: Priority) -> StreamInfo {
        StreamInfo {
            site: self,
            name,
            priority,
            array: None,
            gpu: None,
        }
    }

    /// The op written here, queued on stream `stream`.
    pub const fn on(self, stream: u16, op: Op) -> OpDef {
        OpDef {
            site: self,
            stream: Some(stream),
            op,
        }
    }

    /// The op written here, run by the host in program order.
    pub const fn on_host(self, op: Op) -> OpDef {
        OpDef {
            site: self,
            stream: None,
            op,
        }
    }
}

/// A launch of kernel `kernel`.
pub const fn launch(
    kernel: u16,
    grid: Dims,
    block: Dims,
    shared: Option<Shared>,
    args: &'static [Arg],
) -> LaunchInfo {
    LaunchInfo {
        kernel,
        grid,
        block,
        shared,
        args,
    }
}

/// `kernel name(...) from MODULE;`
#[derive(Debug)]
pub struct KernelInfo {
    pub site: Site,
    /// The symbol in the module.
    pub entry: &'static str,
    /// The compiled module; kernels of one module share one load.
    pub module: &'static Image,
    /// How the plan passes each parameter, checked at `new` against the
    /// compiled kernel.
    pub params: &'static [ParamLayout],
    /// The parameters declared `&out`, by position: the checks count a
    /// launch as writing all of each one's range, so a launch whose grid is
    /// empty, which runs nothing, must give them empty ranges.
    pub written: &'static [u16],
}

impl KernelInfo {
    /// The kernel, whose parameters at `positions` are declared `&out`.
    pub const fn writes(self, positions: &'static [u16]) -> KernelInfo {
        KernelInfo {
            written: positions,
            ..self
        }
    }
}

/// A buffer: declared, a caller's slice, or allocated in stream order.
#[derive(Debug)]
pub struct BufferInfo {
    pub site: Site,
    pub elem: Elem,
    /// Its length, a size (of each element, for a set of buffers).
    pub len: u16,
    pub kind: BufferKind,
    /// For `device ring[r]: [f32; m];`: a set of buffers.
    pub array: Option<Array>,
    /// The GPU a device buffer is on, in a plan on several.
    pub gpu: Option<Gpu>,
}

impl BufferInfo {
    /// The same declaration, as a set of buffers.
    pub const fn array(self, array: Array) -> BufferInfo {
        BufferInfo {
            array: Some(array),
            ..self
        }
    }

    /// The same declaration, on `gpu`.
    pub const fn on(self, gpu: Gpu) -> BufferInfo {
        BufferInfo {
            gpu: Some(gpu),
            ..self
        }
    }
}

/// A declaration of several (`stream lanes[s];`, `event done[r];`,
/// `device ring[r]: [f32; m];`): how many, and which one the ops of the
/// plan's loop use, both sizes (the index reads the loop's variable).
#[derive(Clone, Copy, Debug)]
pub struct Array {
    pub count: u16,
    pub index: u16,
}

/// `event name;`, or a set of events.
#[derive(Clone, Copy, Debug)]
pub struct EventInfo {
    pub site: Site,
    pub array: Option<Array>,
}

impl EventInfo {
    pub const fn array(self, array: Array) -> EventInfo {
        EventInfo {
            array: Some(array),
            ..self
        }
    }
}

/// `for c in 0..k { ... }`: ops `first..end` (each in a stream block),
/// resolved once for each `c` by `new`, with input `input` set to `c`.
#[derive(Clone, Copy, Debug)]
pub struct LoopInfo {
    pub site: Site,
    /// How many times, a size.
    pub count: u16,
    pub input: u16,
    pub first: u16,
    pub end: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// Host memory in a `Vec`.
    Pageable,
    /// Page-locked host memory, allocated with these flags.
    Pinned(HostAlloc),
    /// `cuMemAlloc`, for the plan's lifetime.
    Device,
    /// `alloc` in a stream block: allocated and freed by ops of each run.
    StreamOrdered,
    /// A caller's slice, passed to each run. `measured`: the input its
    /// length sets, for a slice declared without one.
    Param {
        mutable: bool,
        registered: bool,
        measured: Option<u16>,
    },
}

/// `stream name priority p;`
#[derive(Debug)]
pub struct StreamInfo {
    pub site: Site,
    pub name: &'static str,
    pub priority: Priority,
    /// For `stream lanes[s];`: a set of streams.
    pub array: Option<Array>,
    /// The GPU the stream is on, in a plan on several.
    pub gpu: Option<Gpu>,
}

impl StreamInfo {
    pub const fn array(self, array: Array) -> StreamInfo {
        StreamInfo {
            array: Some(array),
            ..self
        }
    }

    /// The same declaration, on `gpu`.
    pub const fn on(self, gpu: Gpu) -> StreamInfo {
        StreamInfo {
            gpu: Some(gpu),
            ..self
        }
    }
}

/// One op: where it is written, the stream it is queued on (`None`: it
/// runs on the host, in program order), and what it does.
#[derive(Debug)]
pub struct OpDef {
    pub site: Site,
    pub stream: Option<u16>,
    pub op: Op,
}

#[derive(Debug)]
pub enum Op {
    Copy(Place, Place),
    /// The value comes from `new` ([`Builder::fill`](super::Builder::fill)).
    Fill(Place),
    Launch(LaunchInfo),
    Record(u16),
    Wait(u16),
    /// `sync s`, or `sync all` (`None`).
    Sync(Option<u16>),
    Alloc(u16),
    Free(u16),
    /// Host step `i` of the plan ([`Plan::host_step`](crate::Plan::host_step)).
    Host(u16),
    /// One rank's part of an NCCL collective, on the op's stream.
    Collective(CollectiveInfo),
}

/// `all_reduce sum part[i];` and the like: what the rank sends (reads)
/// and receives (writes), the same place when it works in place, and
/// for `send` and `recv` their one buffer.
#[derive(Debug)]
pub struct CollectiveInfo {
    pub kind: CollectiveKind,
    pub send: Place,
    pub recv: Place,
    /// Consecutive collectives of one stream block share a number: each
    /// rank's parts of them are queued as one NCCL group.
    pub group: u16,
}

/// What a collective does; a root or peer is a rank, a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    AllReduce(crate::nccl::ReduceOp),
    Broadcast(u16),
    AllGather,
    ReduceScatter(crate::nccl::ReduceOp),
    Send(u16),
    Recv(u16),
}

/// A buffer, or a range of one.
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// All of buffer `b`.
    Whole(u16),
    /// `start..end` of buffer `b` (two sizes).
    Part(u16, u16, u16),
}

impl Place {
    pub fn buffer(self) -> u16 {
        match self {
            Place::Whole(buffer) | Place::Part(buffer, ..) => buffer,
        }
    }
}

#[derive(Debug)]
pub struct LaunchInfo {
    pub kernel: u16,
    pub grid: Dims,
    pub block: Dims,
    /// Dynamic shared memory bytes, a size; `None` for 0, or given by `new`.
    pub shared: Option<Shared>,
    pub args: &'static [Arg],
}

/// Launch dimensions: one to three sizes, or a value `new` computes.
#[derive(Clone, Copy, Debug)]
pub enum Dims {
    Sizes(&'static [u16]),
    Given,
}

#[derive(Clone, Copy, Debug)]
pub enum Shared {
    Size(u16),
    Given,
}

/// A kernel argument: a buffer (or a range of one), or a value `new` gives.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Buffer(Place),
    /// A buffer of which the kernel touches `extent` (a size) elements from
    /// its start, by the declaration of parameter `name`.
    Extent(Place, u16, &'static str),
    /// A buffer of which the kernel touches as many elements as `extent`
    /// computes from the launch's value arguments (input `i` is argument
    /// `i`, a negative one refused), by the declaration of parameter
    /// `name`: an extent whose values the plan's sizes cannot follow.
    Measured(Place, &'static Size, &'static str),
    Value,
    /// A value that an extent names, which must equal the size (`len` of
    /// `len as i32`) the extent was computed from: parameter `name`.
    Bound(u16, &'static str),
    /// An integer the plan computes from a size at each iteration of its
    /// loop (`(n - c * m) as i32`): parameter `name`, of type `Int`; a
    /// value that does not fit the type is an error, never truncated.
    Count(u16, Int, &'static str),
}

/// The integer types a size can be passed to a kernel as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int {
    I32,
    U32,
    I64,
    U64,
}

/// The description disagrees with itself: a bug of memplan's, reported
/// rather than trusted.
pub(crate) const MALFORMED: Fault = Fault::Unsupported(
    "the plan's description is inconsistent (a bug in memplan; please report it)",
);
