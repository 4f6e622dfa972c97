//! Events: points in a stream to wait for, and their timestamps.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUevent, CUstream};
use std::ffi::c_uint;

/// An event of the current context (`cuEventCreate`).
#[inline]
pub(crate) fn event_create(flags: c_uint) -> Result<CUevent, DriverError> {
    let mut event = std::ptr::null_mut();
    // SAFETY: writes the new event's handle.
    check(unsafe { cu::cuEventCreate(&mut event, flags) })?;
    Ok(event)
}

/// Destroys an event (`cuEventDestroy`); the driver keeps a recorded event
/// alive until its work completes.
///
/// # Safety
/// `event` is live and destroyed once, never used again.
#[inline]
pub(crate) unsafe fn event_destroy(event: CUevent) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuEventDestroy_v2(event) })
}

/// Records `event` at the current end of `stream` (`cuEventRecord`).
///
/// # Safety
/// `event` is live; `stream` is live, or the legacy stream (null).
#[inline]
pub(crate) unsafe fn event_record(event: CUevent, stream: CUstream) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuEventRecord(event, stream) })
}

/// Whether the work before the event's last record has finished, without
/// waiting (`cuEventQuery`): `CUDA_ERROR_NOT_READY` is `false`, not an
/// error.
///
/// # Safety
/// `event` is live.
#[inline]
pub(crate) unsafe fn event_query(event: CUevent) -> Result<bool, DriverError> {
    // SAFETY: forwarded to the caller.
    match check(unsafe { cu::cuEventQuery(event) }) {
        Err(DriverError::NOT_READY) => Ok(false),
        done => done.map(|()| true),
    }
}

/// Waits on the host until the work before the event's last record has
/// finished (`cuEventSynchronize`).
///
/// # Safety
/// `event` is live.
#[inline]
pub(crate) unsafe fn event_synchronize(event: CUevent) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuEventSynchronize(event) })
}

/// Milliseconds from `start` to `end` (`cuEventElapsedTime`).
///
/// # Safety
/// Both events are live.
#[inline]
pub(crate) unsafe fn event_elapsed_time(start: CUevent, end: CUevent) -> Result<f32, DriverError> {
    let mut ms = 0.0;
    // SAFETY: writes the time; the events are the caller's promise.
    check(unsafe { cu::cuEventElapsedTime(&mut ms, start, end) })?;
    Ok(ms)
}
