//! What a plan declares: buffers, kernels, streams, events, loops and its
//! GPUs. Each is numbered by its position in the plan's list, and the ops
//! name it by that number.

use crate::HostAlloc;
use crate::site::Site;

/// `kernel name(...) from MODULE;`. The symbol, the compiled module and
/// the parameters' layouts are named only in the user's crate: the
/// runtime's `PlanInfo` holds them, kernel by kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo<'a> {
    /// Where the kernel is declared, its name as the label.
    pub site: Site<'a>,
    /// The parameters declared `&out`, by position: the checks count a
    /// launch as writing all of each one's range, so a launch whose grid is
    /// empty, which runs nothing, must give them empty ranges.
    pub written: &'a [u16],
}

impl<'a> KernelInfo<'a> {
    /// The kernel, whose parameters at `positions` are declared `&out`.
    pub const fn writes(self, positions: &'a [u16]) -> KernelInfo<'a> {
        KernelInfo {
            written: positions,
            ..self
        }
    }
}

/// A buffer: declared, a caller's slice, or allocated in stream order. Its
/// element type is named only in the user's crate (the runtime's
/// `PlanInfo` holds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferInfo<'a> {
    /// Where the buffer is declared (`data: [f32; n] pinned`).
    pub site: Site<'a>,
    /// Its length, a size (of each element, for a set of buffers).
    pub len: u16,
    /// Where its memory comes from, and for a caller's slice how it is passed.
    pub kind: BufferKind,
    /// For `device ring[r]: [f32; m];`: a set of buffers.
    pub array: Option<Array>,
    /// The GPU a device buffer is on, in a plan on several.
    pub gpu: Option<Gpu>,
}

impl<'a> BufferInfo<'a> {
    /// The same declaration, as a set of buffers.
    pub const fn array(self, array: Array) -> BufferInfo<'a> {
        BufferInfo {
            array: Some(array),
            ..self
        }
    }

    /// The same declaration, on `gpu`.
    pub const fn on(self, gpu: Gpu) -> BufferInfo<'a> {
        BufferInfo {
            gpu: Some(gpu),
            ..self
        }
    }
}

/// Where a buffer's memory comes from.
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
        /// Whether each run borrows the slice mutably (`&mut`), so that ops
        /// may write it.
        mutable: bool,
        /// Whether the slice is registered with the driver (page-locked in
        /// place) for the time of each run, so that copies to and from it are
        /// asynchronous.
        registered: bool,
        /// The input that each run sets to the slice's length, for a slice
        /// declared without one; `None` for a slice with a stated length,
        /// which each run checks.
        measured: Option<u16>,
    },
}

/// A declaration of several (`stream lanes[s];`, `event done[r];`,
/// `device ring[r]: [f32; m];`): how many, and which one the ops of the
/// plan's loop use, both sizes (the index reads the loop's variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Array {
    /// How many there are, a size.
    pub count: u16,
    /// Which one an op of the plan's loop names, a size: the index expression,
    /// which reads the loop's variable.
    pub index: u16,
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

/// `stream name priority p;`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamInfo<'a> {
    /// Where the stream is declared.
    pub site: Site<'a>,
    /// The stream's name in the plan, for messages and timelines.
    pub name: &'a str,
    /// The priority it is created with.
    pub priority: Priority,
    /// For `stream lanes[s];`: a set of streams.
    pub array: Option<Array>,
    /// The GPU the stream is on, in a plan on several.
    pub gpu: Option<Gpu>,
}

impl<'a> StreamInfo<'a> {
    /// The same declaration, as a set of streams.
    pub const fn array(self, array: Array) -> StreamInfo<'a> {
        StreamInfo {
            array: Some(array),
            ..self
        }
    }

    /// The same declaration, on `gpu`.
    pub const fn on(self, gpu: Gpu) -> StreamInfo<'a> {
        StreamInfo {
            gpu: Some(gpu),
            ..self
        }
    }
}

/// A stream's scheduling priority. CUDA counts priorities down (0 is the
/// lowest, -5 the highest on an H200); these names spare you the sign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Priority {
    /// The device's default, which is also its lowest.
    #[default]
    Normal,
    /// The highest priority the device offers.
    High,
    /// A raw CUDA priority; the driver clamps it to the device's range.
    Level(i32),
}

/// `event name;`, or a set of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventInfo<'a> {
    /// Where the event is declared.
    pub site: Site<'a>,
    /// For `event done[r];`: a set of events.
    pub array: Option<Array>,
}

impl<'a> EventInfo<'a> {
    /// The same declaration, as a set of events.
    pub const fn array(self, array: Array) -> EventInfo<'a> {
        EventInfo {
            array: Some(array),
            ..self
        }
    }
}

/// `for c in 0..k { ... }`: ops `first..end` (each in a stream block),
/// resolved once for each `c` by `new`, with input `input` set to `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopInfo<'a> {
    /// Where the loop is written (`for c in 0..k`).
    pub site: Site<'a>,
    /// How many times, a size.
    pub count: u16,
    /// The input that holds the loop's variable, set to each value in turn
    /// while `new` resolves the loop's ops.
    pub input: u16,
    /// The first op the loop repeats, by its position in the plan's ops.
    pub first: u16,
    /// The position after the loop's last op.
    pub end: u16,
}

/// `run len: usize <= cap`: size `size` (the parameter) is at most size
/// `limit`, checked by `new` and by each run before anything reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundInfo<'a> {
    /// `len <= cap`, where the parameter is written.
    pub site: Site<'a>,
    /// The parameter, a size (the input the run gives).
    pub size: u16,
    /// Its limit, a size (`cap`, computed by `new`).
    pub limit: u16,
}

/// `gpus gpu[g];`, and `peer gpu;` if the plan declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpusInfo<'a> {
    /// Where `gpus` is declared.
    pub site: Site<'a>,
    /// How many GPUs, a size: `new` must be given as many contexts.
    pub count: u16,
    /// `peer gpu;`: `new` turns peer access on between every two of them.
    pub peer: Option<Site<'a>>,
}

impl<'a> Site<'a> {
    /// The buffer declared here: `len` long (a size), of `kind`.
    pub const fn buffer(self, len: u16, kind: BufferKind) -> BufferInfo<'a> {
        BufferInfo {
            site: self,
            len,
            kind,
            array: None,
            gpu: None,
        }
    }

    /// The event declared here.
    pub const fn event(self) -> EventInfo<'a> {
        EventInfo {
            site: self,
            array: None,
        }
    }

    /// The loop written here: ops `first..end` repeated for each value of
    /// input `input` below size `count`.
    pub const fn repeat(self, count: u16, input: u16, first: u16, end: u16) -> LoopInfo<'a> {
        LoopInfo {
            site: self,
            count,
            input,
            first,
            end,
        }
    }

    /// The kernel declared here.
    pub const fn kernel(self) -> KernelInfo<'a> {
        KernelInfo {
            site: self,
            written: &[],
        }
    }

    /// The stream declared here.
    pub const fn stream(self, name: &'a str, priority: Priority) -> StreamInfo<'a> {
        StreamInfo {
            site: self,
            name,
            priority,
            array: None,
            gpu: None,
        }
    }
}
