//! The driver itself, its devices and their contexts.

use super::error::{DriverError, check};
use super::ffi as cu;
use cust::sys::{CUcontext, CUdevice, CUdevice_attribute};
use std::ffi::{CStr, c_char, c_int, c_uint};

/// Starts the driver (`cuInit`); idempotent.
#[inline]
pub(crate) fn init(flags: c_uint) -> Result<(), DriverError> {
    // SAFETY: no pointers.
    check(unsafe { cu::cuInit(flags) })
}

/// How many GPUs the driver sees (`cuDeviceGetCount`).
#[inline]
pub(crate) fn device_get_count() -> Result<c_int, DriverError> {
    let mut count = 0;
    // SAFETY: writes the count.
    check(unsafe { cu::cuDeviceGetCount(&mut count) })?;
    Ok(count)
}

/// The device handle of GPU `ordinal` (`cuDeviceGet`).
#[inline]
pub(crate) fn device_get(ordinal: c_int) -> Result<CUdevice, DriverError> {
    let mut device = 0;
    // SAFETY: writes the device handle; the driver checks the ordinal.
    check(unsafe { cu::cuDeviceGet(&mut device, ordinal) })?;
    Ok(device)
}

/// The GPU's name (`cuDeviceGetName`), at most 255 bytes of it.
#[inline]
pub(crate) fn device_get_name(device: CUdevice) -> Result<String, DriverError> {
    let mut name = [0 as c_char; 256];
    // SAFETY: the driver writes at most `name.len()` bytes, NUL-terminated;
    // a device handle is a number the driver checks.
    check(unsafe { cu::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, device) })?;
    // SAFETY: NUL-terminated by the driver, inside the buffer.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) };
    Ok(name.to_string_lossy().into_owned())
}

/// The GPU's memory in bytes (`cuDeviceTotalMem`).
#[inline]
pub(crate) fn device_total_mem(device: CUdevice) -> Result<usize, DriverError> {
    let mut bytes = 0;
    // SAFETY: writes the byte count.
    check(unsafe { cu::cuDeviceTotalMem_v2(&mut bytes, device) })?;
    Ok(bytes)
}

/// One of the GPU's attributes (`cuDeviceGetAttribute`).
#[inline]
pub(crate) fn device_get_attribute(
    attribute: CUdevice_attribute,
    device: CUdevice,
) -> Result<c_int, DriverError> {
    let mut value = 0;
    // SAFETY: writes the attribute's value.
    check(unsafe { cu::cuDeviceGetAttribute(&mut value, attribute, device) })?;
    Ok(value)
}

/// Whether `device` can reach `peer`'s memory directly
/// (`cuDeviceCanAccessPeer`).
#[inline]
pub(crate) fn device_can_access_peer(
    device: CUdevice,
    peer: CUdevice,
) -> Result<bool, DriverError> {
    let mut can = 0;
    // SAFETY: writes one int; device handles are numbers the driver checks.
    check(unsafe { cu::cuDeviceCanAccessPeer(&mut can, device, peer) })?;
    Ok(can != 0)
}

/// Retains the GPU's primary context (`cuDevicePrimaryCtxRetain`); each
/// retain is balanced by a [`device_primary_ctx_release`].
#[inline]
pub(crate) fn device_primary_ctx_retain(device: CUdevice) -> Result<CUcontext, DriverError> {
    let mut context = std::ptr::null_mut();
    // SAFETY: writes the primary context's handle.
    check(unsafe { cu::cuDevicePrimaryCtxRetain(&mut context, device) })?;
    Ok(context)
}

/// Releases a retain of the GPU's primary context
/// (`cuDevicePrimaryCtxRelease`).
///
/// # Safety
/// Balances an earlier retain: the last release destroys the context with
/// everything made in it, so nothing of it may be in use.
#[inline]
pub(crate) unsafe fn device_primary_ctx_release(device: CUdevice) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuDevicePrimaryCtxRelease_v2(device) })
}

/// Makes `context` current on the calling thread (`cuCtxSetCurrent`).
///
/// # Safety
/// `context` is live (retained) or null.
#[inline]
pub(crate) unsafe fn ctx_set_current(context: CUcontext) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuCtxSetCurrent(context) })
}

/// Pushes `context` on the calling thread's stack (`cuCtxPushCurrent`).
///
/// # Safety
/// `context` is live (retained).
#[inline]
pub(crate) unsafe fn ctx_push_current(context: CUcontext) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuCtxPushCurrent_v2(context) })
}

/// Pops the calling thread's current context (`cuCtxPopCurrent`) and
/// returns it.
#[inline]
pub(crate) fn ctx_pop_current() -> Result<CUcontext, DriverError> {
    let mut popped = std::ptr::null_mut();
    // SAFETY: writes the popped handle.
    check(unsafe { cu::cuCtxPopCurrent_v2(&mut popped) })?;
    Ok(popped)
}

/// Waits until all work in the current context has finished
/// (`cuCtxSynchronize`).
#[inline]
pub(crate) fn ctx_synchronize() -> Result<(), DriverError> {
    // SAFETY: no arguments; acts on the current context.
    check(unsafe { cu::cuCtxSynchronize() })
}

/// The current context's stream priorities, as (lowest, highest)
/// (`cuCtxGetStreamPriorityRange`).
#[inline]
pub(crate) fn ctx_get_stream_priority_range() -> Result<(c_int, c_int), DriverError> {
    let (mut lowest, mut highest) = (0, 0);
    // SAFETY: writes both bounds for the current context.
    check(unsafe { cu::cuCtxGetStreamPriorityRange(&mut lowest, &mut highest) })?;
    Ok((lowest, highest))
}

/// Lets the current context reach `peer`'s memory
/// (`cuCtxEnablePeerAccess`).
///
/// # Safety
/// `peer` is live (retained).
#[inline]
pub(crate) unsafe fn ctx_enable_peer_access(
    peer: CUcontext,
    flags: c_uint,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check(unsafe { cu::cuCtxEnablePeerAccess(peer, flags) })
}
