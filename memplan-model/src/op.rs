//! What a plan does: its ops, in program order, each on a stream or on the
//! host's turn, naming buffers, kernels, events and sizes by number.

use crate::site::Site;
use crate::size::Size;

/// One op: where it is written, the stream it is queued on (`None`: it
/// runs on the host, in program order), and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpDef<'a> {
    /// Where the op is written, its text as the label.
    pub site: Site<'a>,
    /// The stream the op is queued on, by number; `None` for an op the host
    /// runs in program order.
    pub stream: Option<u16>,
    /// What the op does.
    pub op: Op<'a>,
}

/// What an op does, with every buffer, kernel, event and size resolved to
/// its number. Over the IR's ops it adds the size programs; it drops the
/// user's expressions, which `new` and each run evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// `copy from -> to`: copies the first place into the second.
    Copy(Place, Place),
    /// The value comes from `new`.
    Fill(Place),
    /// `launch k<<<grid, block>>>(args)`.
    Launch(LaunchInfo<'a>),
    /// `record e`: records event `e` on the op's stream.
    Record(u16),
    /// `wait e`: the op's stream waits for event `e`.
    Wait(u16),
    /// `sync s`, or `sync all` (`None`).
    Sync(Option<u16>),
    /// `alloc b`: allocates stream-ordered buffer `b` on the op's stream.
    Alloc(u16),
    /// `free b`: frees stream-ordered buffer `b` on the op's stream.
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
    /// The buffer the place is in.
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
    /// The collective.
    pub kind: CollectiveKind,
    /// The place the rank sends from.
    pub send: Place,
    /// The place the rank receives into.
    pub recv: Place,
    /// Consecutive collectives of one stream block share a number: each
    /// rank's parts of them are queued as one NCCL group.
    pub group: u16,
}

/// What a collective does; a root or peer is a rank, a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// `all_reduce op`: every rank receives the elements of all ranks combined
    /// by the operation.
    AllReduce(ReduceOp),
    /// `broadcast root`: every rank receives the root's elements.
    Broadcast(u16),
    /// `all_gather`: every rank receives the elements of all ranks, one after
    /// the other in rank order.
    AllGather,
    /// `reduce_scatter op`: the elements of all ranks, combined by the
    /// operation, with each rank receiving its own part.
    ReduceScatter(ReduceOp),
    /// `send peer`: sends the buffer to the peer rank.
    Send(u16),
    /// `recv peer`: receives the buffer from the peer rank.
    Recv(u16),
}

/// How a reduction combines the ranks' elements; the numbers are NCCL's
/// (`ncclRedOp_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The elements added.
    Sum = 0,
    /// The elements multiplied.
    Prod = 1,
    /// The largest element.
    Max = 2,
    /// The smallest element.
    Min = 3,
    /// The sum divided by the number of ranks.
    Avg = 4,
}

/// A launch of kernel `kernel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchInfo<'a> {
    /// The kernel, by its position in the plan's kernels.
    pub kernel: u16,
    /// The grid's dimensions.
    pub grid: Dims<'a>,
    /// The block's dimensions.
    pub block: Dims<'a>,
    /// Dynamic shared memory bytes, a size; `None` for 0, or given by `new`.
    pub shared: Option<Shared>,
    /// The arguments, in the order of the kernel's parameters.
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
    /// One to three sizes: x, then y, then z.
    Sizes(&'a [u16]),
    /// A value of the user's expression (`grid`, a `Dim3`), which `new`
    /// computes.
    Given,
}

/// Dynamic shared memory: a size, or a value `new` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// Bytes, a size.
    Size(u16),
    /// A value of the user's expression, which `new` computes.
    Given,
}

/// A kernel argument: a buffer (or a range of one), or a value `new` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg<'a> {
    /// A whole buffer or a range of one, which the kernel may touch all of.
    Buffer(Place),
    /// A buffer of which the kernel touches `extent` (a size) elements from
    /// its start, by the declaration of parameter `name`.
    Extent(Place, u16, &'a str),
    /// A buffer of which the kernel touches as many elements as `extent`
    /// computes from the launch's value arguments (input `i` is argument
    /// `i`, a negative one refused), by the declaration of parameter
    /// `name`: an extent whose values the plan's sizes cannot follow.
    Measured(Place, &'a Size<'a>, &'a str),
    /// A value of the user's expression, which the checks do not read.
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
