//! Communicators and the collectives queued on them.

use super::{Comm, nccl};
use crate::context::Context;
use crate::device::DeviceBuffer;
use crate::error::{Error, Fault, Location, Result, ResultExt};
use crate::memory::Element;
use crate::stream::Stream;
use std::ffi::c_int;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

/// What a process hands to the others of a job so that they form one
/// communicator: made once (by rank 0, say) with [`UniqueId::new`], sent
/// as its 128 bytes by whatever the job's launcher uses, and passed to
/// [`Communicator::join`] by every rank.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniqueId {
    internal: [u8; 128],
}

impl UniqueId {
    /// A new id (`ncclGetUniqueId`).
    #[track_caller]
    pub fn new() -> Result<UniqueId> {
        let at = Location::caller();
        let nccl = nccl().at("ncclGetUniqueId", at)?;
        let mut id = UniqueId { internal: [0; 128] };
        // SAFETY: writes the 128-byte id.
        nccl.check("ncclGetUniqueId", unsafe { (nccl.get_unique_id)(&mut id) })
            .at("ncclGetUniqueId", at)?;
        Ok(id)
    }

    /// The id's 128 bytes, to hand to the job's other processes.
    pub fn to_bytes(&self) -> [u8; 128] {
        self.internal
    }

    /// The id of these 128 bytes, as another process's
    /// [`to_bytes`](UniqueId::to_bytes) gave them.
    pub fn from_bytes(bytes: [u8; 128]) -> UniqueId {
        UniqueId { internal: bytes }
    }

    /// The id its [`Display`](fmt::Display) wrote: 256 hexadecimal digits
    /// (surrounding white space ignored); anything else is an error.
    #[track_caller]
    pub fn from_hex(text: &str) -> Result<UniqueId> {
        let at = Location::caller();
        let digit = |c: u8| (c as char).to_digit(16);
        let text = text.trim().as_bytes();
        let mut internal = [0; 128];
        if text.len() != 2 * internal.len() {
            return Err(not_an_id()).at("UniqueId::from_hex", at);
        }
        for (byte, pair) in internal.iter_mut().zip(text.chunks(2)) {
            let (Some(high), Some(low)) = (digit(pair[0]), digit(pair[1])) else {
                return Err(not_an_id()).at("UniqueId::from_hex", at);
            };
            *byte = (high * 16 + low) as u8;
        }
        Ok(UniqueId { internal })
    }
}

/// The id as 256 hexadecimal digits, for an environment variable or a
/// command line; [`str::parse`] reads it back.
impl fmt::Display for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.internal.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The same as [`UniqueId::from_hex`] (whose errors name the caller's line,
/// where `parse`'s name the standard library's).
impl FromStr for UniqueId {
    type Err = Error;

    fn from_str(text: &str) -> Result<UniqueId> {
        UniqueId::from_hex(text)
    }
}

fn not_an_id() -> Fault {
    Fault::Nccl("a UniqueId is 256 hexadecimal digits, as it displays".to_owned())
}

pub use memplan_model::ReduceOp;

/// Element types NCCL reduces, with its code for each.
///
/// # Safety
/// `DATATYPE` is the `ncclDataType_t` of a type of exactly `T`'s size:
/// NCCL reads and writes as many bytes as it says elements of that type.
pub unsafe trait NcclElement: Element {
    /// `ncclDataType_t`.
    const DATATYPE: u32;
}

macro_rules! nccl_elements {
    ($($t:ty => $code:literal),* $(,)?) => {
        // SAFETY: each code is NCCL's type of the same size and kind.
        $(unsafe impl NcclElement for $t { const DATATYPE: u32 = $code; })*
    };
}

nccl_elements!(i8 => 0, u8 => 1, i32 => 2, u32 => 3, i64 => 4, u64 => 5, f32 => 7, f64 => 8);

/// Where a process stands in a job of one process per GPU: the job's id
/// (made once, by one process, and handed to every other), how many
/// ranks the job has, and which one this process is. A plan that declares
/// `ranks` takes one in `new`, which joins the job's communicator
/// ([`Communicator::join`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rank {
    /// The job's id, the same in every process of the job.
    pub id: UniqueId,
    /// How many ranks (processes) the job has.
    pub count: usize,
    /// This process's rank, below `count`.
    pub rank: usize,
}

/// One GPU's member of a group of GPUs that run collectives together.
/// Collectives are queued on a stream of the member's GPU; NCCL runs them
/// once every member has queued its part.
pub struct Communicator {
    raw: Comm,
    context: Context,
    rank: usize,
    count: usize,
}

// SAFETY: a communicator may move to another thread (one process per GPU
// often means one thread per GPU). It is not `Sync`: NCCL's calls on one
// communicator must not run at once.
unsafe impl Send for Communicator {}

impl Communicator {
    /// One communicator for each of `contexts`' GPUs, all driven by this
    /// process (`ncclCommInitAll`); rank `i` is `contexts[i]`'s. Each GPU
    /// may appear once.
    #[track_caller]
    pub fn all(contexts: &[Context]) -> Result<Vec<Communicator>> {
        let at = Location::caller();
        let nccl = nccl().at("ncclCommInitAll", at)?;
        let devices: Vec<c_int> = contexts.iter().map(|c| c.ordinal() as c_int).collect();
        if devices.is_empty() {
            return Ok(Vec::new());
        }
        if (1..devices.len()).any(|i| devices[..i].contains(&devices[i])) {
            let why = "a GPU appears twice among the contexts: NCCL needs one rank per GPU";
            return Err(Fault::Unsupported(why)).at("ncclCommInitAll", at);
        }
        let mut raw = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: writes one communicator for each of `devices`.
        let status =
            unsafe { (nccl.init_all)(raw.as_mut_ptr(), devices.len() as c_int, devices.as_ptr()) };
        nccl.check("ncclCommInitAll", status)
            .at("ncclCommInitAll", at)?;
        let count = contexts.len();
        Ok(raw
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(rank, (raw, context))| Communicator {
                raw,
                context: context.clone(),
                rank,
                count,
            })
            .collect())
    }

    /// Joins the communicator of `count` ranks that `id` names, as `rank`
    /// on `context`'s GPU (`ncclCommInitRank`): each process of a job calls
    /// this with the same id, and it returns when all `count` have.
    #[track_caller]
    pub fn join(
        context: &Context,
        id: &UniqueId,
        count: usize,
        rank: usize,
    ) -> Result<Communicator> {
        let at = Location::caller();
        let nccl = nccl().at("ncclCommInitRank", at)?;
        if rank >= count || count > c_int::MAX as usize {
            return Err(Fault::Element { index: rank, count }).at("ncclCommInitRank", at);
        }
        context.bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: writes the communicator; NCCL uses the current device.
        let status = unsafe { (nccl.init_rank)(&mut raw, count as c_int, *id, rank as c_int) };
        nccl.check("ncclCommInitRank", status)
            .at("ncclCommInitRank", at)?;
        Ok(Communicator {
            raw,
            context: context.clone(),
            rank,
            count,
        })
    }

    /// This process's rank in the communicator, below
    /// [`count`](Communicator::count).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the communicator has.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The context the communicator's GPU work runs in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    pub(crate) fn raw(&self) -> Comm {
        self.raw
    }

    /// `recv = op over every rank's send`, elementwise. `send` and `recv`
    /// may be one buffer (in place).
    #[track_caller]
    pub fn all_reduce<'a, T: NcclElement>(
        &'a self,
        send: &'a DeviceBuffer<T>,
        recv: &'a DeviceBuffer<T>,
        op: ReduceOp,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclAllReduce", Kind::AllReduce(op), stream);
        part.with(send, recv)
    }

    /// `recv = root's send` on every rank (only `root`'s `send` is read).
    #[track_caller]
    pub fn broadcast<'a, T: NcclElement>(
        &'a self,
        send: &'a DeviceBuffer<T>,
        recv: &'a DeviceBuffer<T>,
        root: usize,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclBroadcast", Kind::Broadcast(root), stream);
        part.with(send, recv)
    }

    /// `recv = every rank's send, in rank order`: `recv` holds `count()`
    /// times `send`'s elements.
    #[track_caller]
    pub fn all_gather<'a, T: NcclElement>(
        &'a self,
        send: &'a DeviceBuffer<T>,
        recv: &'a DeviceBuffer<T>,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclAllGather", Kind::AllGather, stream);
        part.with(send, recv)
    }

    /// `recv = this rank's block of op over every rank's send`: `send`
    /// holds `count()` blocks of `recv`'s length.
    #[track_caller]
    pub fn reduce_scatter<'a, T: NcclElement>(
        &'a self,
        send: &'a DeviceBuffer<T>,
        recv: &'a DeviceBuffer<T>,
        op: ReduceOp,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclReduceScatter", Kind::ReduceScatter(op), stream);
        part.with(send, recv)
    }

    /// All of `send` to rank `peer`, which receives as many elements.
    #[track_caller]
    pub fn send<'a, T: NcclElement>(
        &'a self,
        send: &'a DeviceBuffer<T>,
        peer: usize,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclSend", Kind::Send(peer), stream);
        part.with(send, send)
    }

    /// `recv.len()` elements from rank `peer` into `recv`.
    #[track_caller]
    pub fn recv<'a, T: NcclElement>(
        &'a self,
        recv: &'a DeviceBuffer<T>,
        peer: usize,
        stream: &'a Stream,
    ) -> Result<Collective<'a>> {
        let part = self.part("ncclRecv", Kind::Recv(peer), stream);
        part.with(recv, recv)
    }

    #[track_caller]
    fn part<'a>(&'a self, call: &'static str, kind: Kind, stream: &'a Stream) -> Part<'a> {
        Part {
            comm: self,
            call,
            kind,
            stream,
            at: Location::caller(),
        }
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // Loaded, since the communicator was made. ncclCommDestroy
        // finishes the communicator's work (waiting for the other ranks'
        // parts of it) and sets its GPU itself.
        if let Some(Ok(nccl)) = super::NCCL.get() {
            // SAFETY: made by NCCL, destroyed once.
            unsafe { (nccl.destroy)(self.raw) };
        }
    }
}

/// What a collective does, with its own argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    AllReduce(ReduceOp),
    Broadcast(usize),
    AllGather,
    ReduceScatter(ReduceOp),
    Send(usize),
    Recv(usize),
}

/// A collective being checked.
struct Part<'a> {
    comm: &'a Communicator,
    call: &'static str,
    kind: Kind,
    stream: &'a Stream,
    at: Location,
}

impl<'a> Part<'a> {
    /// The collective over `buffers` (send first), once each is the
    /// communicator's GPU's, as is the stream, the two lengths agree, a
    /// root or peer is a rank, and NCCL can do the reduction.
    fn with<T: NcclElement>(
        self,
        send: &'a DeviceBuffer<T>,
        recv: &'a DeviceBuffer<T>,
    ) -> Result<Collective<'a>> {
        let (call, at) = (self.call, self.at);
        let nccl = nccl().at(call, at)?;
        let ours = |context: &Context| context.ordinal() == self.comm.context.ordinal();
        if !ours(self.stream.context()) || !ours(send.context()) || !ours(recv.context()) {
            let why = "a buffer or stream of another GPU than the communicator's";
            return Err(Fault::Unsupported(why)).at(call, at);
        }
        let ((expected, actual), elements) =
            self.kind.lengths(send.len(), recv.len(), self.comm.count);
        if expected != actual {
            return Err(Fault::WrongLength { expected, actual }).at(call, at);
        }
        let argument = self
            .kind
            .argument(Some(nccl), self.comm.count, self.comm.rank)
            .at(call, at)?;
        Ok(Collective {
            nccl,
            comm: self.comm.raw,
            name: call,
            at,
            call: Call {
                kind: self.kind,
                argument,
                send: pointer(send),
                recv: pointer(recv),
                elements,
                datatype: T::DATATYPE,
            },
            stream: self.stream.raw().cast(),
            _borrows: PhantomData,
        })
    }
}

impl Kind {
    /// For buffers of `send` and `recv` elements among `count` ranks: the
    /// two lengths that must agree, and the element count NCCL is given.
    pub(crate) fn lengths(self, send: usize, recv: usize, count: usize) -> ((usize, usize), usize) {
        match self {
            Kind::AllReduce(_) | Kind::Broadcast(_) => ((send, recv), send),
            // `recv` holds every rank's `send`, in rank order.
            Kind::AllGather => ((send.saturating_mul(count), recv), send),
            // `send` holds a block of `recv`'s length for every rank.
            Kind::ReduceScatter(_) => ((send, recv.saturating_mul(count)), recv),
            Kind::Send(_) => ((send, send), send),
            Kind::Recv(_) => ((recv, recv), recv),
        }
    }

    /// NCCL's argument besides the buffers (the reduction, root or peer),
    /// once the root or peer is one of `count` ranks (a peer not `rank`
    /// itself) and NCCL has the reduction (`nccl`: the NCCL loaded; `None`
    /// where a plan is checked without one, so that only the ranks are).
    pub(crate) fn argument(
        self,
        nccl: Option<&super::Nccl>,
        count: usize,
        rank: usize,
    ) -> Result<c_int, Fault> {
        let rank_of = |index: usize, itself: bool| {
            if index >= count || (!itself && index == rank) || index > c_int::MAX as usize {
                Err(Fault::Element { index, count })
            } else {
                Ok(index as c_int)
            }
        };
        match self {
            Kind::AllReduce(op) | Kind::ReduceScatter(op) => {
                // NCCL's version code for 2.10.3, where `ncclAvg` came.
                if op == ReduceOp::Avg && nccl.is_some_and(|nccl| nccl.version < 21003) {
                    let why = "ReduceOp::Avg needs NCCL 2.10.3 or later";
                    return Err(Fault::Nccl(why.to_owned()));
                }
                Ok(op as c_int)
            }
            Kind::Broadcast(root) => rank_of(root, true),
            Kind::Send(peer) | Kind::Recv(peer) => rank_of(peer, false),
            Kind::AllGather => Ok(0),
        }
    }
}

/// One rank's part of a collective, checked and not yet queued: queue it
/// with [`queue`](Self::queue), or with the parts of the other ranks this
/// thread drives with [`queue_together`]. Nothing is queued when any
/// check fails, so no rank waits for a part that never comes from that.
#[must_use = "a collective does nothing until it is queued"]
pub struct Collective<'a> {
    nccl: &'static super::Nccl,
    comm: Comm,
    /// NCCL's name for the call, and where it was made, for errors.
    name: &'static str,
    at: Location,
    call: Call,
    stream: *mut std::ffi::c_void,
    /// The communicator, buffers and stream, borrowed until it is queued.
    _borrows: PhantomData<&'a ()>,
}

/// One NCCL call's arguments, checked, but for the communicator and the
/// stream: what a plan keeps for each rank's part of a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub kind: Kind,
    /// The op, root or peer.
    pub argument: c_int,
    pub send: *mut std::ffi::c_void,
    pub recv: *mut std::ffi::c_void,
    pub elements: usize,
    /// `ncclDataType_t`.
    pub datatype: u32,
}

// SAFETY: `send` and `recv` are addresses of GPU memory, data that NCCL
// reads on whichever thread queues the call; they own nothing, and no
// thread holds anything of them.
unsafe impl Send for Call {}

impl Call {
    /// NCCL's name for the call.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::AllReduce(_) => "ncclAllReduce",
            Kind::Broadcast(_) => "ncclBroadcast",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter(_) => "ncclReduceScatter",
            Kind::Send(_) => "ncclSend",
            Kind::Recv(_) => "ncclRecv",
        }
    }

    /// Queues the call on `stream` for `comm`; NCCL's status.
    ///
    /// # Safety
    /// As for [`Collective::queue`]; `comm` is a live communicator and
    /// `stream` a stream of its GPU.
    pub unsafe fn issue(
        &self,
        nccl: &super::Nccl,
        comm: Comm,
        stream: *mut std::ffi::c_void,
    ) -> u32 {
        let (send, recv, count, kind, argument) = (
            self.send,
            self.recv,
            self.elements,
            self.datatype,
            self.argument,
        );
        // SAFETY: the caller's promise.
        unsafe {
            match self.kind {
                Kind::AllReduce(_) => {
                    (nccl.all_reduce)(send, recv, count, kind, argument as u32, comm, stream)
                }
                Kind::Broadcast(_) => {
                    (nccl.broadcast)(send, recv, count, kind, argument, comm, stream)
                }
                Kind::AllGather => (nccl.all_gather)(send, recv, count, kind, comm, stream),
                Kind::ReduceScatter(_) => {
                    (nccl.reduce_scatter)(send, recv, count, kind, argument as u32, comm, stream)
                }
                Kind::Send(_) => (nccl.send)(send, count, kind, argument, comm, stream),
                Kind::Recv(_) => (nccl.recv)(recv, count, kind, argument, comm, stream),
            }
        }
    }
}

impl Collective<'_> {
    /// Queues this part on its stream.
    ///
    /// # Safety
    /// Until the stream has finished it, its buffers stay allocated, and
    /// nothing else touches the buffer it writes or writes the one it
    /// reads. Every rank queues its part of the same collectives in the
    /// same order (a send's peer a receive of as many elements), or their
    /// GPUs wait for ever; parts of ranks that one thread drives are
    /// queued together ([`queue_together`]), or the first waits on the
    /// host for the others.
    pub unsafe fn queue(self) -> Result<()> {
        // SAFETY: the caller's promise; everything else was checked.
        let status = unsafe { self.issue() };
        self.nccl.check(self.name, status).at(self.name, self.at)
    }

    /// The NCCL call, with arguments checked when the part was made.
    ///
    /// # Safety
    /// As for [`queue`](Self::queue).
    unsafe fn issue(&self) -> u32 {
        // SAFETY: the caller's promise.
        unsafe { self.call.issue(self.nccl, self.comm, self.stream) }
    }
}

/// Queues `parts` as one NCCL group (`ncclGroupStart` ... `ncclGroupEnd`):
/// each rank's part of the collectives that one thread drives for several
/// GPUs, or sends and receives that would otherwise wait for each other.
/// Every part was checked when it was made, so the group is never left
/// half queued by memplan; if NCCL refuses a call, it drops the group.
///
/// # Safety
/// As for [`Collective::queue`], for each part.
#[track_caller]
pub unsafe fn queue_together<'a>(parts: impl IntoIterator<Item = Collective<'a>>) -> Result<()> {
    let at = Location::caller();
    let parts: Vec<Collective<'a>> = parts.into_iter().collect();
    let Some(first) = parts.first() else {
        return Ok(());
    };
    let nccl = first.nccl;
    // SAFETY: no arguments.
    nccl.check("ncclGroupStart", unsafe { (nccl.group_start)() })
        .at("ncclGroupStart", at)?;
    let mut failed = Ok(());
    for part in &parts {
        // SAFETY: the caller's promise.
        let status = unsafe { part.issue() };
        if failed.is_ok() {
            failed = nccl.check(part.name, status).at(part.name, part.at);
        }
    }
    // SAFETY: ends the group started above; after a failed call NCCL
    // drops the group's work.
    let ended = nccl
        .check("ncclGroupEnd", unsafe { (nccl.group_end)() })
        .at("ncclGroupEnd", at);
    failed.and(ended)
}

fn pointer<T: Element>(buffer: &DeviceBuffer<T>) -> *mut std::ffi::c_void {
    buffer.device_ptr().as_raw() as *mut std::ffi::c_void
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_goes_through_text_and_back() {
        let mut bytes = [0u8; 128];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37) as u8;
        }
        let id = UniqueId::from_bytes(bytes);
        let text = id.to_string();
        assert_eq!(text.len(), 256);
        assert!(text.starts_with("00254a6f"), "{text}");
        assert_eq!(text.parse::<UniqueId>().unwrap(), id);
        assert_eq!(format!(" {text}\n").parse::<UniqueId>().unwrap(), id);
    }

    #[test]
    fn text_that_is_not_an_id_is_an_error_not_a_panic() {
        let good = UniqueId::from_bytes([7; 128]).to_string();
        let wrong = [
            String::new(),
            good[..255].to_owned(),
            format!("{good}0"),
            good.replacen('0', "g", 1),
            good.replacen("07", "é", 1),
            "é".repeat(128),
        ];
        for text in wrong {
            let error = text.parse::<UniqueId>().unwrap_err();
            assert!(
                error.to_string().contains("256 hexadecimal digits"),
                "{error}"
            );
        }
    }
}
