//! Streams: ordered queues of GPU work. memplan's streams are always
//! non-blocking (they never wait for the legacy default stream), which cust's
//! `Stream::new` silently drops, so they are created here directly.

use crate::context::{Context, release_in};
use crate::driver::{self, DriverError};
use crate::error::{Location, Result, ResultExt};
use cust::sys::{CUstream, CUstream_flags};

pub use memplan_model::Priority;

/// A non-blocking CUDA stream.
///
/// ```no_run
/// use memplan_runtime::{Context, Event, Priority, Stream};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let copies = Stream::new(&ctx)?;
/// let compute = Stream::with_priority(&ctx, Priority::High)?;
/// let loaded = Event::new(&ctx)?;
/// loaded.record(&copies)?;
/// compute.wait(&loaded)?; // later work on `compute` waits for `copies`
/// compute.synchronize()?;
/// # Ok(()) }
/// ```
pub struct Stream {
    raw: CUstream,
    context: Context,
}

// SAFETY: stream handles may be used from any thread of the process.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A non-blocking stream of normal priority.
    #[track_caller]
    pub fn new(context: &Context) -> Result<Self> {
        Self::with_priority(context, Priority::Normal)
    }

    /// A non-blocking stream of the given priority.
    #[track_caller]
    pub fn with_priority(context: &Context, priority: Priority) -> Result<Self> {
        let at = Location::caller();
        let level = match priority {
            Priority::Normal => 0,
            Priority::High => context.stream_priority_range()?.1,
            Priority::Level(level) => level,
        };
        context.bind_to_thread()?;
        let flags = CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // Destroyed in `Drop`.
        let raw = driver::stream_create_with_priority(flags, level)
            .at("cuStreamCreateWithPriority", at)?;
        Ok(Self {
            raw,
            context: context.clone(),
        })
    }

    /// The driver's handle, for calls memplan does not wrap.
    pub fn raw(&self) -> CUstream {
        self.raw
    }

    /// The context the stream was created in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Waits until all work queued on this stream has finished.
    #[track_caller]
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live stream handle.
        unsafe { driver::stream_synchronize(self.raw) }
            .at("cuStreamSynchronize", Location::caller())
    }

    /// Whether all work queued so far has finished, without waiting.
    #[track_caller]
    pub fn is_idle(&self) -> Result<bool> {
        // SAFETY: a live stream handle.
        unsafe { driver::stream_query(self.raw) }.at("cuStreamQuery", Location::caller())
    }

    /// The stream's priority as CUDA counts it.
    #[track_caller]
    pub fn priority(&self) -> Result<i32> {
        // SAFETY: a live stream handle.
        unsafe { driver::stream_get_priority(self.raw) }
            .at("cuStreamGetPriority", Location::caller())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created in `with_priority`, destroyed once. Work still
        // queued completes; the driver frees the stream afterwards.
        release_in(&self.context, || unsafe {
            driver::stream_destroy(self.raw)
        });
    }
}

/// The legacy default stream, on which synchronous copies, fills and
/// launches run. memplan's own streams never wait for it, so work on it is
/// ordered with theirs only by waiting on the host.
pub(crate) const LEGACY: CUstream = std::ptr::null_mut();

/// Waits on the host for the legacy default stream.
pub(crate) fn synchronize_legacy() -> Result<(), DriverError> {
    // SAFETY: the legacy stream needs no handle.
    unsafe { driver::stream_synchronize(LEGACY) }
}

/// Waits for every stream; the first failure, after waiting for all.
///
/// A failed wait has not waited: if a stream's wait fails, its whole
/// context is waited for before the error is returned, since the caller is
/// about to let the host touch (or free) the memory the stream used.
pub(crate) fn wait_all<'s>(
    streams: impl IntoIterator<Item = &'s Stream>,
) -> Result<(), DriverError> {
    let mut first = Ok(());
    for stream in streams {
        // SAFETY: a live stream handle.
        if let Err(code) = unsafe { driver::stream_synchronize(stream.raw) } {
            let _ = stream.context().synchronize();
            first = first.and(Err(code));
        }
    }
    first
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({:p})", self.raw)
    }
}
