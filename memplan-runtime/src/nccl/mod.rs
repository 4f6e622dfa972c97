//! NCCL, NVIDIA's collectives (all-reduce, broadcast, all-gather,
//! reduce-scatter, send and receive) across the GPUs of a host or of many,
//! loaded at run time: `libnccl.so.2` from the loader's path, or the file
//! `MEMPLAN_NCCL` names (NVIDIA's `nvidia-nccl-cu13` wheel has one, and so
//! does PyTorch's). Nothing is loaded until a communicator is made.
//!
//! NVLink SHARP (NCCL's use of multicast memory) can take a host's GPUs
//! out of service when it goes wrong, so memplan starts NCCL only once the
//! choice is explicit: `NCCL_NVLS_ENABLE` set, to `0` (off) or `1`.
//!
//! A job of one process per GPU, as the launchers sites run start it
//! (`srun`, `mpirun`, `mpiexec`, `torchrun`), places each process with
//! [`Job::from_env`]: its rank, the rank count, its GPU
//! ([`Job::device`]). Its ranks meet through NCCL's own bootstrap, at
//! `NCCL_COMM_ID=host:port` ([`Job::meeting`] says where the address comes
//! from), and [`Job::nccl_rank`] is what a plan that declares `ranks`
//! takes.
//!
//! A collective is made, checked, by a [`Communicator`] method, then
//! queued (`unsafe`: the buffers must outlive the GPU's use of them, and
//! every rank must take part), alone or with the parts of the other ranks
//! one thread drives:
//!
//! ```no_run
//! # use memplan_runtime::{Context, DeviceBuffer, Stream};
//! # use memplan_runtime::nccl::{queue_together, Communicator, ReduceOp};
//! # fn main() -> memplan_runtime::Result<()> {
//! let gpus = [Context::new(0)?, Context::new(1)?];
//! let comms = Communicator::all(&gpus)?;
//! let streams = [Stream::new(&gpus[0])?, Stream::new(&gpus[1])?];
//! let grads = [DeviceBuffer::<f32>::zeroed(&gpus[0], 1 << 20)?, DeviceBuffer::zeroed(&gpus[1], 1 << 20)?];
//! let parts = (0..2)
//!     .map(|i| comms[i].all_reduce(&grads[i], &grads[i], ReduceOp::Sum, &streams[i]))
//!     .collect::<memplan_runtime::Result<Vec<_>>>()?;
//! // SAFETY: `grads` outlive the synchronize below, and nothing else uses them.
//! unsafe { queue_together(parts)? };
//! for stream in &streams {
//!     stream.synchronize()?;
//! }
//! # Ok(()) }
//! ```

mod comm;
mod job;
mod launcher;
mod meeting;

pub(crate) use comm::{Call, Kind};
pub use comm::{Collective, Communicator, NcclElement, Rank, ReduceOp, UniqueId, queue_together};
pub use job::Job;
pub use launcher::{Launcher, Variables};
pub use meeting::Meeting;

use crate::error::Fault;
use libloading::Library;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

type Status = u32;
const SUCCESS: Status = 0;
pub(crate) type Comm = *mut c_void;
type Stream = *mut c_void;

/// The NCCL functions memplan calls (types as in `nccl.h` since 2.7), and
/// the library that keeps them valid.
pub(crate) struct Nccl {
    _library: Library,
    version: c_int,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    pub get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> Status,
    pub init_rank: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> Status,
    pub init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Status,
    pub destroy: unsafe extern "C" fn(Comm) -> Status,
    pub all_reduce:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, u32, u32, Comm, Stream) -> Status,
    pub broadcast:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, u32, c_int, Comm, Stream) -> Status,
    pub all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, u32, Comm, Stream) -> Status,
    pub reduce_scatter:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, u32, u32, Comm, Stream) -> Status,
    pub send: unsafe extern "C" fn(*const c_void, usize, u32, c_int, Comm, Stream) -> Status,
    pub recv: unsafe extern "C" fn(*mut c_void, usize, u32, c_int, Comm, Stream) -> Status,
    pub group_start: unsafe extern "C" fn() -> Status,
    pub group_end: unsafe extern "C" fn() -> Status,
}

static NCCL: OnceLock<Result<Nccl, String>> = OnceLock::new();

/// The NCCL that memplan loads, as (major, minor, patch).
#[track_caller]
pub fn version() -> crate::Result<(u32, u32, u32)> {
    use crate::error::ResultExt;
    let code = nccl()
        .at("ncclGetVersion", crate::Location::caller())?
        .version as u32;
    // 2.9 on: major * 10000 + minor * 100 + patch; before: * 1000.
    let (major, rest) = if code >= 10000 {
        (code / 10000, code % 10000)
    } else {
        (code / 1000, code % 1000)
    };
    Ok((major, rest / 100, rest % 100))
}

/// NCCL, loaded once; the error says why it cannot be.
pub(crate) fn nccl() -> Result<&'static Nccl, Fault> {
    // NCCL reads an empty value as unset, and then its default (on where
    // the hardware has NVLink SHARP).
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none_or(|value| value.is_empty()) {
        return Err(Fault::Nccl(
            "set NCCL_NVLS_ENABLE (0 turns NVLink SHARP, NCCL's use of multicast memory, off; 1 allows it) before using NCCL: memplan does not start NCCL with that choice left open".to_owned(),
        ));
    }
    NCCL.get_or_init(load)
        .as_ref()
        .map_err(|why| Fault::Nccl(why.clone()))
}

impl Nccl {
    /// `Ok` for `ncclSuccess`; else the call and NCCL's words for the code.
    pub fn check(&self, call: &str, status: Status) -> Result<(), Fault> {
        if status == SUCCESS {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any code.
        let text = unsafe { (self.error_string)(status) };
        let text = if text.is_null() {
            "unknown error".into()
        } else {
            // SAFETY: NUL-terminated and static.
            unsafe { CStr::from_ptr(text) }.to_string_lossy()
        };
        Err(Fault::Nccl(format!("{call} failed: {text} ({status})")))
    }
}

fn load() -> Result<Nccl, String> {
    let candidates = vec!["libnccl.so.2".to_owned(), "libnccl.so".to_owned()];
    let loaded = crate::dynamic::open("NCCL", "MEMPLAN_NCCL", candidates)?;
    // SAFETY (each lookup): the type is the function's in nccl.h (2.7 on).
    let get_version: unsafe extern "C" fn(*mut c_int) -> Status =
        unsafe { loaded.function("ncclGetVersion")? };
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { get_version(&mut version) };
    // Send and receive came with 2.7.
    if version < 2700 {
        return Err(format!(
            "{} is NCCL {version}; memplan needs 2.7 or later",
            loaded.path
        ));
    }
    unsafe {
        Ok(Nccl {
            version,
            error_string: loaded.function("ncclGetErrorString")?,
            get_unique_id: loaded.function("ncclGetUniqueId")?,
            init_rank: loaded.function("ncclCommInitRank")?,
            init_all: loaded.function("ncclCommInitAll")?,
            destroy: loaded.function("ncclCommDestroy")?,
            all_reduce: loaded.function("ncclAllReduce")?,
            broadcast: loaded.function("ncclBroadcast")?,
            all_gather: loaded.function("ncclAllGather")?,
            reduce_scatter: loaded.function("ncclReduceScatter")?,
            send: loaded.function("ncclSend")?,
            recv: loaded.function("ncclRecv")?,
            group_start: loaded.function("ncclGroupStart")?,
            group_end: loaded.function("ncclGroupEnd")?,
            _library: loaded.library,
        })
    }
}

/// `ncclGroupStart`: NCCL calls until [`group_end`] are queued together.
pub(crate) fn group_start() -> Result<(), Fault> {
    let nccl = nccl()?;
    // SAFETY: no arguments.
    nccl.check("ncclGroupStart", unsafe { (nccl.group_start)() })
}

/// `ncclGroupEnd`: queues the calls since [`group_start`].
pub(crate) fn group_end() -> Result<(), Fault> {
    let nccl = nccl()?;
    // SAFETY: no arguments; ends the group the caller started.
    nccl.check("ncclGroupEnd", unsafe { (nccl.group_end)() })
}
