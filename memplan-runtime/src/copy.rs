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

use crate::driver::{Status, byte_len, check, cu};
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
    let (from, to) = (host_part(src, src_range)?, device_part(dst, dst_range)?);
    // SAFETY: both ranges are inside their buffers, which `&` keeps alive for
    // the call. From pinned memory the copy is done when it returns; from
    // pageable memory the driver returns once the data is staged, so wait
    // for the rest: "synchronous" means done.
    let bytes = unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyHtoD_v2(to.as_raw(), from.cast(), bytes)
        })?
    };
    if bytes > 0 && !src.is_page_locked() {
        wait_for_legacy_stream()?;
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
    let (from, to) = (device_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    // SAFETY: both ranges are inside their buffers; `&mut` keeps the host
    // side ours; cuMemcpyDtoH returns once the copy is complete.
    unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyDtoH_v2(to.cast(), from.as_raw(), bytes)
        })
    }
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
    let (from, to) = (device_part(src, src_range)?, device_part(dst, dst_range)?);
    // SAFETY: both ranges are inside their buffers. cuMemcpyDtoD returns
    // before the copy finishes; the wait below finishes it.
    let bytes = unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyDtoD_v2(to.as_raw(), from.as_raw(), bytes)
        })?
    };
    if bytes > 0 {
        wait_for_legacy_stream()?;
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
    let (from, to) = (host_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // SAFETY: both ranges are inside their buffers; `&` and `&mut` of two
    // different values cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(from.0, to.0, from.1) };
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

/// Sets every byte of a device buffer to zero; returns when done.
pub fn zero<T: Element, D: DeviceMemory<T> + ?Sized>(dst: &D) -> Result<usize, Fault> {
    let (to, len) = device_part(dst, ..)?;
    let bytes = byte_len::<T>(len)?;
    if bytes > 0 {
        // SAFETY: the whole buffer; the memset is asynchronous for device
        // memory, so wait for it.
        check(unsafe { cu::cuMemsetD8_v2(to.as_raw(), 0, bytes) })?;
        wait_for_legacy_stream()?;
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
    let (from, to) = (host_part(src, src_range)?, device_part(dst, dst_range)?);
    // SAFETY: ranges checked; lifetimes are the caller's promise.
    unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyHtoDAsync_v2(to.as_raw(), from.cast(), bytes, stream.raw())
        })
    }
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
    let (from, to) = (device_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    // SAFETY: ranges checked; lifetimes are the caller's promise.
    unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyDtoHAsync_v2(to.cast(), from.as_raw(), bytes, stream.raw())
        })
    }
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
    let (from, to) = (device_part(src, src_range)?, device_part(dst, dst_range)?);
    // SAFETY: ranges checked; lifetimes are the caller's promise.
    unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyDtoDAsync_v2(to.as_raw(), from.as_raw(), bytes, stream.raw())
        })
    }
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
    let (from, to) = (host_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    // SAFETY: ranges checked; with unified addressing host pointers are valid
    // `CUdeviceptr`s; lifetimes are the caller's promise.
    unsafe {
        transfer::<T, _, _>(from, to, |from, to, bytes| {
            cu::cuMemcpyAsync(to as u64, from as u64, bytes, stream.raw())
        })
    }
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
    if from.start < to.end && to.start < from.end {
        return Err(Fault::Unsupported(
            "a queued copy between overlapping ranges of one buffer",
        ));
    }
    // SAFETY: both ranges are inside the buffer, and apart.
    let parts = unsafe {
        (
            (ptr.add(from.start), from.len()),
            (ptr.add(to.start), to.len()),
        )
    };
    // SAFETY: as for `htoh_async`.
    unsafe {
        transfer::<T, _, _>(parts.0, parts.1, |from, to, bytes| {
            cu::cuMemcpyAsync(to as u64, from as u64, bytes, stream.raw())
        })
    }
}

/// Checks that the two sides have the same length, then makes the driver
/// call for their byte count, unless it is zero.
///
/// # Safety
/// `call` is sound for the two sides and the byte count.
unsafe fn transfer<T, From, To>(
    (from, from_len): (From, usize),
    (to, to_len): (To, usize),
    call: impl FnOnce(From, To, usize) -> Status,
) -> Result<usize, Fault> {
    let bytes = same_bytes::<T>(from_len, to_len)?;
    if bytes > 0 {
        check(call(from, to, bytes))?;
    }
    Ok(bytes)
}

fn wait_for_legacy_stream() -> Result<(), Fault> {
    // SAFETY: the legacy stream needs no handle.
    Ok(check(unsafe { cu::cuStreamSynchronize(LEGACY_STREAM) })?)
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
