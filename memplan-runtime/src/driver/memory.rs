//! Allocating, freeing, page-locking and setting memory.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUdeviceptr, CUstream};
use std::ffi::{c_uint, c_void};

/// `bytes` of device memory in the current context (`cuMemAlloc`).
#[inline]
pub(crate) fn mem_alloc(bytes: usize) -> Result<CUdeviceptr, DriverError> {
    let mut address = 0;
    // SAFETY: writes the address of `bytes` fresh bytes.
    check(unsafe { cu::cuMemAlloc_v2(&mut address, bytes) })?;
    Ok(address)
}

/// Frees device memory (`cuMemFree`).
///
/// # Safety
/// `address` came from [`mem_alloc`] (or [`mem_alloc_async`]), is freed
/// once, and no queued work still uses it.
#[inline]
pub(crate) unsafe fn mem_free(address: CUdeviceptr) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemFree_v2(address) })
}

/// `bytes` of device memory that become valid in `stream`'s order
/// (`cuMemAllocAsync`).
///
/// # Safety
/// `stream` is live; work that uses the memory is ordered after this point
/// of `stream`.
#[inline]
pub(crate) unsafe fn mem_alloc_async(
    bytes: usize,
    stream: CUstream,
) -> Result<CUdeviceptr, DriverError> {
    let mut address = 0;
    // SAFETY: writes the address; the rest is forwarded to the caller.
    check(unsafe { cu::cuMemAllocAsync(&mut address, bytes, stream) })?;
    Ok(address)
}

/// Frees device memory in `stream`'s order (`cuMemFreeAsync`).
///
/// # Safety
/// `stream` is live; `address` came from [`mem_alloc_async`], is freed
/// once, and every use of it is ordered before this point of `stream`.
#[inline]
pub(crate) unsafe fn mem_free_async(
    address: CUdeviceptr,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemFreeAsync(address, stream) })
}

/// `bytes` of page-locked host memory (`cuMemAllocHost`).
#[inline]
pub(crate) fn mem_alloc_host(bytes: usize) -> Result<*mut c_void, DriverError> {
    let mut host = std::ptr::null_mut();
    // SAFETY: writes the address of `bytes` fresh bytes.
    check(unsafe { cu::cuMemAllocHost_v2(&mut host, bytes) })?;
    Ok(host)
}

/// `bytes` of page-locked host memory allocated with `flags`
/// (`cuMemHostAlloc`).
#[inline]
pub(crate) fn mem_host_alloc(bytes: usize, flags: c_uint) -> Result<*mut c_void, DriverError> {
    let mut host = std::ptr::null_mut();
    // SAFETY: writes the address of `bytes` fresh bytes.
    check(unsafe { cu::cuMemHostAlloc(&mut host, bytes, flags) })?;
    Ok(host)
}

/// Frees page-locked host memory (`cuMemFreeHost`).
///
/// # Safety
/// `host` came from [`mem_alloc_host`] or [`mem_host_alloc`], is freed
/// once, and nothing (host or queued work) still uses it.
#[inline]
pub(crate) unsafe fn mem_free_host(host: *mut c_void) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemFreeHost(host) })
}

/// The device address of mapped page-locked host memory
/// (`cuMemHostGetDevicePointer`).
///
/// # Safety
/// `host` points into live host memory of the current context.
#[inline]
pub(crate) unsafe fn mem_host_get_device_pointer(
    host: *mut c_void,
    flags: c_uint,
) -> Result<CUdeviceptr, DriverError> {
    let mut address = 0;
    // SAFETY: writes the address; the rest is forwarded to the caller.
    check(unsafe { cu::cuMemHostGetDevicePointer_v2(&mut address, host, flags) })?;
    Ok(address)
}

/// Page-locks `bytes` of caller memory from `host` (`cuMemHostRegister`).
///
/// # Safety
/// The memory stays allocated until [`mem_host_unregister`] unlocks it.
#[inline]
pub(crate) unsafe fn mem_host_register(
    host: *mut c_void,
    bytes: usize,
    flags: c_uint,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemHostRegister_v2(host, bytes, flags) })
}

/// Unlocks memory page-locked by [`mem_host_register`]
/// (`cuMemHostUnregister`).
///
/// # Safety
/// `host` is the start of a registration, and no queued work still uses
/// its memory.
#[inline]
pub(crate) unsafe fn mem_host_unregister(host: *mut c_void) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemHostUnregister(host) })
}

/// Sets `count` bytes from `to` to `value`, on the legacy default stream
/// (`cuMemsetD8`); for device memory it may return before it is done.
///
/// # Safety
/// The bytes are device memory, allocated until the memset is done.
#[inline]
pub(crate) unsafe fn memset_d8(
    to: CUdeviceptr,
    value: u8,
    count: usize,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemsetD8_v2(to, value, count) })
}

/// Queues `count` bytes from `to` set to `value` on `stream`
/// (`cuMemsetD8Async`).
///
/// # Safety
/// `stream` is live (or the legacy stream); the bytes are device memory
/// that stays allocated until `stream` has finished the memset.
#[inline]
pub(crate) unsafe fn memset_d8_async(
    to: CUdeviceptr,
    value: u8,
    count: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemsetD8Async(to, value, count, stream) })
}

/// Queues `count` 16-bit values from `to` set to `value` on `stream`
/// (`cuMemsetD16Async`).
///
/// # Safety
/// As for [`memset_d8_async`], over `2 * count` bytes.
#[inline]
pub(crate) unsafe fn memset_d16_async(
    to: CUdeviceptr,
    value: u16,
    count: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemsetD16Async(to, value, count, stream) })
}

/// Queues `count` 32-bit values from `to` set to `value` on `stream`
/// (`cuMemsetD32Async`).
///
/// # Safety
/// As for [`memset_d8_async`], over `4 * count` bytes.
#[inline]
pub(crate) unsafe fn memset_d32_async(
    to: CUdeviceptr,
    value: u32,
    count: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuMemsetD32Async(to, value, count, stream) })
}
