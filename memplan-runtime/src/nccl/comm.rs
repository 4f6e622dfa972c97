//! Communicators and the collectives queued on them.

use super::{Comm, nccl};
use crate::context::Context;
use crate::device::DeviceBuffer;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::memory::Element;
use crate::stream::Stream;
use std::ffi::c_int;

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

    pub fn to_bytes(&self) -> [u8; 128] {
        self.internal
    }

    pub fn from_bytes(bytes: [u8; 128]) -> UniqueId {
        UniqueId { internal: bytes }
    }
}

/// How a reduction combines the ranks' elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    /// The sum divided by the number of ranks.
    Avg = 4,
}

/// Element types NCCL reduces, with its code for each.
pub trait NcclElement: Element {
    /// `ncclDataType_t`.
    const DATATYPE: u32;
}

macro_rules! nccl_elements {
    ($($t:ty => $code:literal),* $(,)?) => {
        $(impl NcclElement for $t { const DATATYPE: u32 = $code; })*
    };
}

nccl_elements!(i8 => 0, u8 => 1, i32 => 2, u32 => 3, i64 => 4, u64 => 5, f32 => 7, f64 => 8);

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

    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the communicator has.
    pub fn count(&self) -> usize {
        self.count
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Queues `recv = op over every rank's send` on `stream`. `send` and
    /// `recv` may be one buffer (in place).
    ///
    /// # Safety
    /// Both buffers stay allocated, and nothing else touches `recv` or
    /// writes `send`, until `stream` has finished the collective; every
    /// rank queues the same collectives in the same order.
    #[track_caller]
    pub unsafe fn all_reduce<T: NcclElement>(
        &self,
        send: &DeviceBuffer<T>,
        recv: &DeviceBuffer<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclAllReduce";
        let nccl = self.ready(call, &[send, recv], stream, (send.len(), recv.len()))?;
        // SAFETY: the caller's promise; buffers and stream are this GPU's.
        let status = unsafe {
            (nccl.all_reduce)(
                pointer(send),
                pointer(recv),
                send.len(),
                T::DATATYPE,
                op as u32,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// Queues a copy of `root`'s `send` into every rank's `recv` (only
    /// `root`'s `send` is read).
    ///
    /// # Safety
    /// As for [`all_reduce`](Self::all_reduce).
    #[track_caller]
    pub unsafe fn broadcast<T: NcclElement>(
        &self,
        send: &DeviceBuffer<T>,
        recv: &DeviceBuffer<T>,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclBroadcast";
        let nccl = self.ready(call, &[send, recv], stream, (send.len(), recv.len()))?;
        if root >= self.count {
            return Err(Fault::Element {
                index: root,
                count: self.count,
            })
            .at(call, Location::caller());
        }
        // SAFETY: as in `all_reduce`.
        let status = unsafe {
            (nccl.broadcast)(
                pointer(send),
                pointer(recv),
                send.len(),
                T::DATATYPE,
                root as c_int,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// Queues `recv = every rank's send, in rank order`: `recv` holds
    /// `count()` times `send`'s elements.
    ///
    /// # Safety
    /// As for [`all_reduce`](Self::all_reduce).
    #[track_caller]
    pub unsafe fn all_gather<T: NcclElement>(
        &self,
        send: &DeviceBuffer<T>,
        recv: &DeviceBuffer<T>,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclAllGather";
        let gathered = send.len().saturating_mul(self.count);
        let nccl = self.ready(call, &[send, recv], stream, (gathered, recv.len()))?;
        // SAFETY: as in `all_reduce`.
        let status = unsafe {
            (nccl.all_gather)(
                pointer(send),
                pointer(recv),
                send.len(),
                T::DATATYPE,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// Queues `recv = this rank's block of op over every rank's send`:
    /// `send` holds `count()` blocks of `recv`'s length.
    ///
    /// # Safety
    /// As for [`all_reduce`](Self::all_reduce).
    #[track_caller]
    pub unsafe fn reduce_scatter<T: NcclElement>(
        &self,
        send: &DeviceBuffer<T>,
        recv: &DeviceBuffer<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclReduceScatter";
        let blocks = recv.len().saturating_mul(self.count);
        let nccl = self.ready(call, &[send, recv], stream, (send.len(), blocks))?;
        // SAFETY: as in `all_reduce`.
        let status = unsafe {
            (nccl.reduce_scatter)(
                pointer(send),
                pointer(recv),
                recv.len(),
                T::DATATYPE,
                op as u32,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// Queues sending all of `send` to rank `peer`, which must queue a
    /// [`recv`](Self::recv) of as many elements; pairs that would wait on
    /// each other go in one [`group`].
    ///
    /// # Safety
    /// `send` stays allocated and unwritten until `stream` has sent it.
    #[track_caller]
    pub unsafe fn send<T: NcclElement>(
        &self,
        send: &DeviceBuffer<T>,
        peer: usize,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclSend";
        let nccl = self.ready(call, &[send], stream, (0, 0))?;
        self.peer(call, peer)?;
        // SAFETY: the caller's promise.
        let status = unsafe {
            (nccl.send)(
                pointer(send),
                send.len(),
                T::DATATYPE,
                peer as c_int,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// Queues receiving `recv.len()` elements from rank `peer` into `recv`.
    ///
    /// # Safety
    /// `recv` stays allocated, and nothing else touches it, until `stream`
    /// has received it.
    #[track_caller]
    pub unsafe fn recv<T: NcclElement>(
        &self,
        recv: &DeviceBuffer<T>,
        peer: usize,
        stream: &Stream,
    ) -> Result<()> {
        let call = "ncclRecv";
        let nccl = self.ready(call, &[recv], stream, (0, 0))?;
        self.peer(call, peer)?;
        // SAFETY: the caller's promise.
        let status = unsafe {
            (nccl.recv)(
                pointer(recv),
                recv.len(),
                T::DATATYPE,
                peer as c_int,
                self.raw,
                stream.raw().cast(),
            )
        };
        nccl.check(call, status).at(call, Location::caller())
    }

    /// NCCL, once the buffers and stream are checked to be this GPU's and
    /// the two lengths to agree.
    #[track_caller]
    fn ready<T: NcclElement>(
        &self,
        call: &'static str,
        buffers: &[&DeviceBuffer<T>],
        stream: &Stream,
        (expected, actual): (usize, usize),
    ) -> Result<&'static super::Nccl> {
        let at = Location::caller();
        let ours = |context: &Context| context.ordinal() == self.context.ordinal();
        if !ours(stream.context()) || !buffers.iter().all(|b| ours(b.context())) {
            let why = "a buffer or stream of another GPU than the communicator's";
            return Err(Fault::Unsupported(why)).at(call, at);
        }
        if expected != actual {
            return Err(Fault::WrongLength { expected, actual }).at(call, at);
        }
        nccl().at(call, at)
    }

    #[track_caller]
    fn peer(&self, call: &'static str, peer: usize) -> Result<()> {
        if peer >= self.count || peer == self.rank {
            return Err(Fault::Element {
                index: peer,
                count: self.count,
            })
            .at(call, Location::caller());
        }
        Ok(())
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // Loaded, since the communicator was made. ncclCommDestroy
        // finishes the communicator's work before freeing it.
        if let Ok(nccl) = nccl() {
            let _ = self.context.bind_to_thread();
            // SAFETY: made by NCCL, destroyed once.
            unsafe { (nccl.destroy)(self.raw) };
        }
    }
}

/// Runs `queue` between `ncclGroupStart` and `ncclGroupEnd`: the
/// collectives it queues on several communicators (one thread driving
/// several GPUs) or the sends and receives that would wait on each other
/// are started together.
#[track_caller]
pub fn group<R>(queue: impl FnOnce() -> Result<R>) -> Result<R> {
    let at = Location::caller();
    let nccl = nccl().at("ncclGroupStart", at)?;
    // SAFETY: no arguments.
    nccl.check("ncclGroupStart", unsafe { (nccl.group_start)() })
        .at("ncclGroupStart", at)?;
    let queued = queue();
    // SAFETY: ends the group started above, also when `queue` failed.
    let ended = nccl
        .check("ncclGroupEnd", unsafe { (nccl.group_end)() })
        .at("ncclGroupEnd", at);
    let result = queued?;
    ended.map(|()| result)
}

fn pointer<T: Element>(buffer: &DeviceBuffer<T>) -> *mut std::ffi::c_void {
    buffer.device_ptr().as_raw() as *mut std::ffi::c_void
}
