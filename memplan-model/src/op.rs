//! What a plan does: its ops, in program order, each on a stream or on the
//! host's turn, naming buffers, kernels, events and sizes by number.

use crate::site::Site;
use crate::size::Size;

/// One op: where it is written, the stream it is queued on (`None`: it
/// runs on the host, in program order), and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpDef<'a> {
    pub site: Site<'a>,
    pub stream: Option<u16>,
    pub op: Op<'a>,
}

/// What an op does, with every buffer, kernel, event and size resolved to
/// its number. Over the IR's ops it adds the size programs; it drops the
/// user's expressions, which `new` and each run evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    Copy(Place, Place),
    /// The value comes from `new`.
    Fill(Place),
    Launch(LaunchInfo<'a>),
    Record(u16),
    Wait(u16),
    /// `sync s`, or `sync all` (`None`).
    Sync(Option<u16>),
    Alloc(u16),
    Free(u16),
    /// Host step `i` of the plan.
    Host(u16),
    /// One rank's part of an NCCL collective, on the op's stream.
    Collective(CollectiveInfo),
}

/// A buffer, or a range of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// `all_reduce sum part[i];` and the like: what the rank sends (reads)
/// and receives (writes), the same place when it works in place, and
/// for `send` and `recv` their one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    AllReduce(ReduceOp),
    Broadcast(u16),
    AllGather,
    ReduceScatter(ReduceOp),
    Send(u16),
    Recv(u16),
}

/// How a reduction combines the ranks' elements; the numbers are NCCL's
/// (`ncclRedOp_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    /// The sum divided by the number of ranks.
    Avg = 4,
}

/// A launch of kernel `kernel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchInfo<'a> {
    pub kernel: u16,
    pub grid: Dims<'a>,
    pub block: Dims<'a>,
    /// Dynamic shared memory bytes, a size; `None` for 0, or given by `new`.
    pub shared: Option<Shared>,
    pub args: &'a [Arg<'a>],
}

/// A launch of kernel `kernel`.
pub const fn launch<'a>(
    kernel: u16,
    grid: Dims<'a>,
    block: Dims<'a>,
    shared: Option<Shared>,
    args: &'a [Arg<'a>],
) -> LaunchInfo<'a> {
    LaunchInfo {
        kernel,
        grid,
        block,
        shared,
        args,
    }
}

/// Launch dimensions: one to three sizes, or a value `new` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dims<'a> {
    Sizes(&'a [u16]),
    Given,
}

/// Dynamic shared memory: a size, or a value `new` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    Size(u16),
    Given,
}

/// A kernel argument: a buffer (or a range of one), or a value `new` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg<'a> {
    Buffer(Place),
    /// A buffer of which the kernel touches `extent` (a size) elements from
    /// its start, by the declaration of parameter `name`.
    Extent(Place, u16, &'a str),
    /// A buffer of which the kernel touches as many elements as `extent`
    /// computes from the launch's value arguments (input `i` is argument
    /// `i`, a negative one refused), by the declaration of parameter
    /// `name`: an extent whose values the plan's sizes cannot follow.
    Measured(Place, &'a Size<'a>, &'a str),
    Value,
    /// A value that an extent names, which must equal the size (`len` of
    /// `len as i32`) the extent was computed from: parameter `name`.
    Bound(u16, &'a str),
    /// An integer the plan computes from a size at each iteration of its
    /// loop (`(n - c * m) as i32`): parameter `name`, in the parameter's
    /// own integer type (the runtime reads it from the declared type, never
    /// from a spelling); a value that does not fit the type is an error,
    /// never truncated.
    Count(u16, &'a str),
}

impl<'a> Site<'a> {
    /// The op written here, queued on stream `stream`.
    pub const fn on(self, stream: u16, op: Op<'a>) -> OpDef<'a> {
        OpDef {
            site: self,
            stream: Some(stream),
            op,
        }
    }

    /// The op written here, run by the host in program order.
    pub const fn on_host(self, op: Op<'a>) -> OpDef<'a> {
        OpDef {
            site: self,
            stream: None,
            op,
        }
    }
}
