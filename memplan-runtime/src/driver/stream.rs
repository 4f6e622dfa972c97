//! Streams: creating them, waiting for them, and ordering them after events.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUevent, CUstream};
use std::ffi::{c_int, c_uint};

/// A stream of the current context (`cuStreamCreateWithPriority`).
#[inline]
pub(crate) fn stream_create_with_priority(
    flags: c_uint,
    priority: c_int,
) -> Result<CUstream, DriverError> {
    let mut stream = std::ptr::null_mut();
    // SAFETY: writes the new stream's handle.
    check(unsafe { cu::cuStreamCreateWithPriority(&mut stream, flags, priority) })?;
    Ok(stream)
}

/// Destroys a stream (`cuStreamDestroy`); work still queued on it
/// completes, and the driver frees it afterwards.
///
/// # Safety
/// `stream` is live and destroyed once, never used again.
#[inline]
pub(crate) unsafe fn stream_destroy(stream: CUstream) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuStreamDestroy_v2(stream) })
}

/// Waits until all work queued on `stream` has finished
/// (`cuStreamSynchronize`).
///
/// # Safety
/// `stream` is live, or the legacy stream (null).
#[inline]
pub(crate) unsafe fn stream_synchronize(stream: CUstream) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuStreamSynchronize(stream) })
}

/// Whether all work queued on `stream` has finished, without waiting
/// (`cuStreamQuery`): `CUDA_ERROR_NOT_READY` is `false`, not an error.
///
/// # Safety
/// `stream` is live, or the legacy stream (null).
#[inline]
pub(crate) unsafe fn stream_query(stream: CUstream) -> Result<bool, DriverError> {
    // SAFETY: forwarded to the caller.
    match check(unsafe { cu::cuStreamQuery(stream) }) {
        Err(DriverError::NOT_READY) => Ok(false),
        done => done.map(|()| true),
    }
}

/// The stream's priority as CUDA counts it (`cuStreamGetPriority`).
///
/// # Safety
/// `stream` is live.
#[inline]
pub(crate) unsafe fn stream_get_priority(stream: CUstream) -> Result<c_int, DriverError> {
    let mut priority = 0;
    // SAFETY: writes the priority; the stream is the caller's promise.
    check(unsafe { cu::cuStreamGetPriority(stream, &mut priority) })?;
    Ok(priority)
}

/// Makes work queued on `stream` from now on wait until `event` (as last
/// recorded) has completed (`cuStreamWaitEvent`).
///
/// # Safety
/// `stream` and `event` are live.
#[inline]
pub(crate) unsafe fn stream_wait_event(
    stream: CUstream,
    event: CUevent,
    flags: c_uint,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuStreamWaitEvent(stream, event, flags) })
}
