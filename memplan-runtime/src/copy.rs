//! Copies between host and device memory, whole buffers or ranges of them.
//!
//! The synchronous functions are safe: each has finished, on the GPU too,
//! when it returns. The `_async` functions only queue the copy on a stream,
//! so they are `unsafe`: the caller keeps both sides alive and the host off
//! them until the stream has passed the copy. [`scope`](crate::scope) is the
//! safe way to queue copies by hand, and memplan's plans prove these
//! conditions at compile time before they call the `_async` functions.
//!
//! Each returns the number of bytes it moved (or queued). Empty ranges make
//! no driver call.
//!
//! Ranges are anything `a[range]` accepts (`..`, `2..`, `..n`, `i..j`); a
//! range outside its buffer, or two ranges of different lengths, is a
//! [`Fault`], never a panic.

use crate::driver::cu;
use crate::driver::{byte_len, check};
use crate::error::Fault;
use crate::memory::{
    DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut, resolve,
};
use crate::stream::Stream;
use cust::sys::CUstream;
use std::ops::RangeBounds;

/// The legacy default stream, on which synchronous copies run.
const LEGACY_STREAM: CUstream = std::ptr::null_mut();

/// Host to device; returns when the data is on the device.
pub fn htod<T, S, D>(
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: HostMemory<T> + ?Sized,
    D: DeviceMemory<T> + ?Sized,
{
    let (from, len) = host_part(src, src_range)?;
    let (to, dst_len) = device_part(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: both ranges are inside their buffers, which `&` keeps alive for
    // the call; the synchronization below finishes the copy before we return.
    check(unsafe { cu::cuMemcpyHtoD_v2(to.as_raw(), from.cast(), bytes) })?;
    // From pageable memory the driver returns once the data is staged, before
    // it reaches the device; wait for it, so "synchronous" means done.
    if !src.is_page_locked() {
        // SAFETY: the legacy stream needs no handle.
        check(unsafe { cu::cuStreamSynchronize(LEGACY_STREAM) })?;
    }
    Ok(bytes)
}

/// Device to host; returns when the data is in host memory.
pub fn dtoh<T, S, D>(
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &mut D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: DeviceMemory<T> + ?Sized,
    D: HostMemoryMut<T> + ?Sized,
{
    let (from, len) = device_part(src, src_range)?;
    let (to, dst_len) = host_part_mut(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: both ranges are inside their buffers; `&mut` keeps the host
    // side ours; cuMemcpyDtoH returns once the copy is complete.
    check(unsafe { cu::cuMemcpyDtoH_v2(to.cast(), from.as_raw(), bytes) })?;
    Ok(bytes)
}

/// Device to device; returns when the copy has finished.
pub fn dtod<T, S, D>(
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: DeviceMemory<T> + ?Sized,
    D: DeviceMemory<T> + ?Sized,
{
    let (from, len) = device_part(src, src_range)?;
    let (to, dst_len) = device_part(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: both ranges are inside their buffers. cuMemcpyDtoD returns
    // before the copy finishes; the synchronization below waits for it.
    unsafe {
        check(cu::cuMemcpyDtoD_v2(to.as_raw(), from.as_raw(), bytes))?;
        check(cu::cuStreamSynchronize(LEGACY_STREAM))?;
    }
    Ok(bytes)
}

/// Host to host, by the CPU.
pub fn htoh<T, S, D>(
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &mut D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: HostMemory<T> + ?Sized,
    D: HostMemoryMut<T> + ?Sized,
{
    let (from, len) = host_part(src, src_range)?;
    let (to, dst_len) = host_part_mut(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: both ranges are inside their buffers; `&` and `&mut` of two
    // different values cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(from, to, len) };
    Ok(bytes)
}

/// Sets every byte of a device buffer to zero; returns when done.
pub fn zero<T: Element, D: DeviceMemory<T> + ?Sized>(dst: &D) -> Result<usize, Fault> {
    let (to, len) = device_part(dst, ..)?;
    let bytes = byte_len::<T>(len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: the whole buffer; the memset is asynchronous for device memory,
    // so wait for it.
    unsafe {
        check(cu::cuMemsetD8_v2(to.as_raw(), 0, bytes))?;
        check(cu::cuStreamSynchronize(LEGACY_STREAM))?;
    }
    Ok(bytes)
}

/// Queues a host-to-device copy on `stream`.
///
/// # Safety
/// Until `stream` has finished the copy: `src` stays allocated and the host
/// does not write it, and `dst` stays allocated.
pub unsafe fn htod_async<T, S, D>(
    stream: &Stream,
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: HostMemory<T> + ?Sized,
    D: DeviceMemory<T> + ?Sized,
{
    let (from, len) = host_part(src, src_range)?;
    let (to, dst_len) = device_part(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: ranges checked above; lifetimes are the caller's promise.
    check(unsafe { cu::cuMemcpyHtoDAsync_v2(to.as_raw(), from.cast(), bytes, stream.raw()) })?;
    Ok(bytes)
}

/// Queues a device-to-host copy on `stream`.
///
/// # Safety
/// Until `stream` has finished the copy: `src` stays allocated, and `dst`
/// stays allocated and the host neither reads nor writes it.
pub unsafe fn dtoh_async<T, S, D>(
    stream: &Stream,
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &mut D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: DeviceMemory<T> + ?Sized,
    D: HostMemoryMut<T> + ?Sized,
{
    let (from, len) = device_part(src, src_range)?;
    let (to, dst_len) = host_part_mut(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: ranges checked above; lifetimes are the caller's promise.
    check(unsafe { cu::cuMemcpyDtoHAsync_v2(to.cast(), from.as_raw(), bytes, stream.raw()) })?;
    Ok(bytes)
}

/// Queues a device-to-device copy on `stream`.
///
/// # Safety
/// Both buffers stay allocated until `stream` has finished the copy.
pub unsafe fn dtod_async<T, S, D>(
    stream: &Stream,
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: DeviceMemory<T> + ?Sized,
    D: DeviceMemory<T> + ?Sized,
{
    let (from, len) = device_part(src, src_range)?;
    let (to, dst_len) = device_part(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: ranges checked above; lifetimes are the caller's promise.
    check(unsafe { cu::cuMemcpyDtoDAsync_v2(to.as_raw(), from.as_raw(), bytes, stream.raw()) })?;
    Ok(bytes)
}

/// Queues a host-to-host copy on `stream` (`cuMemcpyAsync`), for ordering a
/// copy between page-locked buffers with other work on the stream.
///
/// # Safety
/// Until `stream` has finished the copy: both buffers stay allocated, the
/// host does not write `src`, and neither reads nor writes `dst`.
pub unsafe fn htoh_async<T, S, D>(
    stream: &Stream,
    src: &S,
    src_range: impl RangeBounds<usize>,
    dst: &mut D,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    S: HostMemory<T> + ?Sized,
    D: HostMemoryMut<T> + ?Sized,
{
    let (from, len) = host_part(src, src_range)?;
    let (to, dst_len) = host_part_mut(dst, dst_range)?;
    let bytes = same_bytes::<T>(len, dst_len)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: ranges checked above; with unified addressing host pointers
    // are valid `CUdeviceptr`s; lifetimes are the caller's promise.
    check(unsafe { cu::cuMemcpyAsync(to as u64, from as u64, bytes, stream.raw()) })?;
    Ok(bytes)
}

/// From one range of a host buffer to another, by the CPU.
pub fn htoh_within<T, B>(
    buffer: &mut B,
    src_range: impl RangeBounds<usize>,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    B: HostMemoryMut<T> + ?Sized,
{
    let (ptr, len) = buffer.host_parts_mut();
    let (from, to) = (resolve(src_range, len)?, resolve(dst_range, len)?);
    let bytes = same_bytes::<T>(from.len(), to.len())?;
    // SAFETY: `len` initialized elements, borrowed mutably; both ranges are
    // inside them, and `copy_within` allows them to overlap.
    unsafe { std::slice::from_raw_parts_mut(ptr, len) }.copy_within(from, to.start);
    Ok(bytes)
}

/// Queues a copy from one range of a page-locked host buffer to another, on
/// `stream` (`cuMemcpyAsync`). The ranges may not overlap.
///
/// # Safety
/// Until `stream` has finished the copy, `buffer` stays allocated and the
/// host neither reads nor writes it.
pub unsafe fn htoh_within_async<T, B>(
    stream: &Stream,
    buffer: &mut B,
    src_range: impl RangeBounds<usize>,
    dst_range: impl RangeBounds<usize>,
) -> Result<usize, Fault>
where
    T: Element,
    B: HostMemoryMut<T> + ?Sized,
{
    let (ptr, len) = buffer.host_parts_mut();
    let (from, to) = (resolve(src_range, len)?, resolve(dst_range, len)?);
    let bytes = same_bytes::<T>(from.len(), to.len())?;
    if from.start < to.end && to.start < from.end {
        return Err(Fault::Unsupported(
            "a queued copy between overlapping ranges of one buffer",
        ));
    }
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: both ranges are inside the buffer and apart; with unified
    // addressing host pointers are valid `CUdeviceptr`s; lifetime and host
    // access are the caller's promise.
    let (source, target) = unsafe { (ptr.add(from.start) as u64, ptr.add(to.start) as u64) };
    check(unsafe { cu::cuMemcpyAsync(target, source, bytes, stream.raw()) })?;
    Ok(bytes)
}

fn host_part<T: Element, M: HostMemory<T> + ?Sized>(
    memory: &M,
    range: impl RangeBounds<usize>,
) -> Result<(*const T, usize), Fault> {
    let (ptr, len) = memory.host_parts();
    let range = resolve(range, len)?;
    // SAFETY: `range.start <= len`, so the pointer stays inside (or one past) the buffer.
    Ok((unsafe { ptr.add(range.start) }, range.len()))
}

fn host_part_mut<T: Element, M: HostMemoryMut<T> + ?Sized>(
    memory: &mut M,
    range: impl RangeBounds<usize>,
) -> Result<(*mut T, usize), Fault> {
    let (ptr, len) = memory.host_parts_mut();
    let range = resolve(range, len)?;
    // SAFETY: as in `host_part`.
    Ok((unsafe { ptr.add(range.start) }, range.len()))
}

/// The device pointer and length of `range` of `memory`.
pub(crate) fn device_part<T: Element, M: DeviceAddress<T> + ?Sized>(
    memory: &M,
    range: impl RangeBounds<usize>,
) -> Result<(DevicePtr<T>, usize), Fault> {
    let (ptr, len) = memory.device_parts()?;
    let range = resolve(range, len)?;
    Ok((ptr.add(range.start), range.len()))
}

fn same_bytes<T>(source: usize, destination: usize) -> Result<usize, Fault> {
    if source != destination {
        return Err(Fault::LengthMismatch {
            source,
            destination,
        });
    }
    byte_len::<T>(source)
}
