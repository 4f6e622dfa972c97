//! Events: points in a stream that other streams can wait for, that the
//! host can wait for, and (for timed events) that carry a GPU timestamp.

use crate::context::{Context, release_in};
use crate::driver;
use crate::error::{Location, Result, ResultExt};
use crate::stream::Stream;
use cust::sys::{CUevent, CUevent_flags, CUstream};

/// A CUDA event.
///
/// Unlike cust's `Stream::wait_event`, [`Stream::wait`] borrows the event, so
/// one event can be recorded and waited for as often as a plan needs.
pub struct Event {
    raw: CUevent,
    context: Context,
}

// SAFETY: event handles may be used from any thread of the process.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// An event for ordering only (`CU_EVENT_DISABLE_TIMING`): the cheapest
    /// to record and wait for.
    #[track_caller]
    pub fn new(context: &Context) -> Result<Self> {
        Self::create(
            context,
            CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
            Location::caller(),
        )
    }

    /// An event that records a timestamp, for [`Event::elapsed_ms`].
    #[track_caller]
    pub fn timed(context: &Context) -> Result<Self> {
        Self::create(
            context,
            CUevent_flags::CU_EVENT_DEFAULT as u32,
            Location::caller(),
        )
    }

    fn create(context: &Context, flags: u32, at: Location) -> Result<Self> {
        context.bind_to_thread()?;
        // Destroyed in `Drop`.
        let raw = driver::event_create(flags).at("cuEventCreate", at)?;
        Ok(Self {
            raw,
            context: context.clone(),
        })
    }

    /// The driver's handle (`CUevent`), for calls memplan does not wrap; valid
    /// while the event lives.
    pub fn raw(&self) -> CUevent {
        self.raw
    }

    /// Records the event at the current end of `stream`.
    #[track_caller]
    pub fn record(&self, stream: &Stream) -> Result<()> {
        self.record_on(stream.raw())
            .at("cuEventRecord", Location::caller())
    }

    /// Records on a raw stream handle (0 is the legacy default stream).
    pub(crate) fn record_on(&self, stream: CUstream) -> Result<(), crate::DriverError> {
        // SAFETY: live event and stream handles.
        unsafe { driver::event_record(self.raw, stream) }
    }

    /// Whether the work before the last record has finished, without waiting.
    #[track_caller]
    pub fn is_complete(&self) -> Result<bool> {
        // SAFETY: a live event handle.
        unsafe { driver::event_query(self.raw) }.at("cuEventQuery", Location::caller())
    }

    /// Waits on the host until the work before the last record has finished.
    #[track_caller]
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live event handle.
        unsafe { driver::event_synchronize(self.raw) }.at("cuEventSynchronize", Location::caller())
    }

    /// Milliseconds from `start` to this event; both must be timed events
    /// whose records have completed.
    #[track_caller]
    pub fn elapsed_ms(&self, start: &Event) -> Result<f32> {
        self.elapsed_ms_raw(start)
            .at("cuEventElapsedTime", Location::caller())
    }

    pub(crate) fn elapsed_ms_raw(&self, start: &Event) -> Result<f32, crate::DriverError> {
        // SAFETY: two live events.
        unsafe { driver::event_elapsed_time(start.raw, self.raw) }
    }
}

impl Stream {
    /// Makes work queued on this stream from now on wait until `event`
    /// (as last recorded) has completed. The event stays usable.
    #[track_caller]
    pub fn wait(&self, event: &Event) -> Result<()> {
        // SAFETY: live stream and event handles; flags must be 0.
        unsafe { driver::stream_wait_event(self.raw(), event.raw(), 0) }
            .at("cuStreamWaitEvent", Location::caller())
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created in `create`, destroyed once; the driver keeps a
        // recorded event alive until its work completes.
        release_in(&self.context, || unsafe { driver::event_destroy(self.raw) });
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({:p})", self.raw)
    }
}
