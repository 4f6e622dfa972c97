//! Copies: host to device, device to host, device to device (one GPU or
//! two), and between host buffers.
//!
//! The synchronous calls run on the legacy default stream and may return
//! before the copy is done (from pageable memory, once the data is staged;
//! between device memories, at once): `crate::copy` waits where they do.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUcontext, CUdeviceptr, CUstream};
use std::ffi::c_void;

/// Copies `bytes` from host memory to device memory (`cuMemcpyHtoD`).
///
/// # Safety
/// Both ranges are allocated memory of their kinds, and nothing else
/// writes them (or reads the destination) until the copy is done.
#[inline]
pub(crate) unsafe fn memcpy_htod(
    dst: CUdeviceptr,
    src: *const c_void,
    bytes: usize,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyHtoD_v2(dst, src, bytes) })
}

/// Copies `bytes` from device memory to host memory (`cuMemcpyDtoH`).
///
/// # Safety
/// As for [`memcpy_htod`].
#[inline]
pub(crate) unsafe fn memcpy_dtoh(
    dst: *mut c_void,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyDtoH_v2(dst, src, bytes) })
}

/// Copies `bytes` between device memories (`cuMemcpyDtoD`).
///
/// # Safety
/// As for [`memcpy_htod`], and the ranges do not overlap.
#[inline]
pub(crate) unsafe fn memcpy_dtod(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyDtoD_v2(dst, src, bytes) })
}

/// Queues a copy of `bytes` from host memory to device memory on `stream`
/// (`cuMemcpyHtoDAsync`).
///
/// # Safety
/// `stream` is live (or the legacy stream); both ranges stay allocated,
/// and the host does not write the source, until `stream` has finished
/// the copy.
#[inline]
pub(crate) unsafe fn memcpy_htod_async(
    dst: CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyHtoDAsync_v2(dst, src, bytes, stream) })
}

/// Queues a copy of `bytes` from device memory to host memory on `stream`
/// (`cuMemcpyDtoHAsync`).
///
/// # Safety
/// `stream` is live (or the legacy stream); both ranges stay allocated,
/// and the host neither reads nor writes the destination, until `stream`
/// has finished the copy.
#[inline]
pub(crate) unsafe fn memcpy_dtoh_async(
    dst: *mut c_void,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyDtoHAsync_v2(dst, src, bytes, stream) })
}

/// Queues a copy of `bytes` between device memories on `stream`
/// (`cuMemcpyDtoDAsync`).
///
/// # Safety
/// `stream` is live (or the legacy stream); the ranges do not overlap and
/// stay allocated until `stream` has finished the copy.
#[inline]
pub(crate) unsafe fn memcpy_dtod_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream) })
}

/// Queues a copy of `bytes` between any two memories of one address space
/// on `stream` (`cuMemcpyAsync`): with unified addressing, host pointers
/// are valid `CUdeviceptr`s.
///
/// # Safety
/// `stream` is live (or the legacy stream); the ranges do not overlap and
/// stay allocated, and the host off them, until `stream` has finished the
/// copy.
#[inline]
pub(crate) unsafe fn memcpy_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyAsync(dst, src, bytes, stream) })
}

/// Copies `bytes` from device memory of `src_context`'s GPU to device
/// memory of `dst_context`'s (`cuMemcpyPeer`); it may return before the
/// copy is done, as `cuMemcpyDtoD` may.
///
/// # Safety
/// Both contexts are live; both ranges are device memory of their GPUs,
/// do not overlap, and stay allocated (and untouched by other work) until
/// the copy is done.
#[inline]
pub(crate) unsafe fn memcpy_peer(
    dst: CUdeviceptr,
    dst_context: CUcontext,
    src: CUdeviceptr,
    src_context: CUcontext,
    bytes: usize,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemcpyPeer(dst, dst_context, src, src_context, bytes) })
}
