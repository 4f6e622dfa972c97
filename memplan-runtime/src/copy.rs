//! Copies between host and device memory, whole buffers or ranges of them.
//!
//! The synchronous functions are safe: each has finished, on the GPU too,
//! when it returns. The `_async` functions only queue the copy on a stream,
//! so they are `unsafe`: the caller keeps both sides alive and the host off
//! them until the stream has passed the copy. [`scope`](crate::scope) is the
//! safe way to queue copies by hand, and memplan's plans prove these
//! conditions at compile time before they queue copies.
//!
//! Each returns the number of bytes it moved (or queued). Empty ranges make
//! no driver call.
//!
//! Ranges are anything `a[range]` accepts (`..`, `2..`, `..n`, `i..j`); a
//! range outside its buffer, two ranges of different lengths, or a source
//! and destination that share memory is a [`Fault`], never a panic.

use crate::context::Context;
use crate::driver::{self, DriverError};
use crate::error::Fault;
use crate::memory::{
    DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut, byte_len, resolve,
};
use crate::stream::{Stream, synchronize_legacy};
use cust::sys::CUstream;
use std::ops::RangeBounds;

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
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // SAFETY: both ranges are inside their buffers, which `&` keeps alive for
    // the call, and the call returns when the copy is done.
    unsafe {
        now(
            Direction::HostToDevice,
            from.0 as u64,
            to.0.as_raw(),
            bytes,
            src.is_page_locked(),
        )?
    };
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
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // SAFETY: both ranges are inside their buffers; `&mut` keeps the host
    // side ours; the call returns when the copy is done.
    unsafe {
        now(
            Direction::DeviceToHost,
            from.0.as_raw(),
            to.0 as u64,
            bytes,
            false,
        )?
    };
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
    let (from, to) = (device_part(src, src_range)?, device_part(dst, dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    apart(from.0.as_raw(), to.0.as_raw(), bytes)?;
    // SAFETY: both ranges are inside their buffers, and apart; the call
    // returns when the copy is done.
    unsafe {
        now(
            Direction::DeviceToDevice,
            from.0.as_raw(),
            to.0.as_raw(),
            bytes,
            false,
        )?
    };
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
    apart(from.0 as u64, to.0 as u64, bytes)?;
    // SAFETY: both ranges are inside their buffers, and apart.
    unsafe {
        now(
            Direction::HostToHost,
            from.0 as u64,
            to.0 as u64,
            bytes,
            true,
        )?
    };
    Ok(bytes)
}

/// From one range of a host buffer to another, by the CPU. The ranges may
/// overlap, as with `slice::copy_within`.
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
        unsafe { driver::memset_d8(to.as_raw(), 0, bytes)? };
        synchronize_legacy()?;
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
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // SAFETY: ranges checked; lifetimes are the caller's promise.
    unsafe {
        queue(
            Direction::HostToDevice,
            from.0 as u64,
            to.0.as_raw(),
            bytes,
            stream.raw(),
        )?
    };
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
    let (from, to) = (device_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // SAFETY: ranges checked; lifetimes are the caller's promise.
    unsafe {
        queue(
            Direction::DeviceToHost,
            from.0.as_raw(),
            to.0 as u64,
            bytes,
            stream.raw(),
        )?
    };
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
    let (from, to) = (device_part(src, src_range)?, device_part(dst, dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    apart(from.0.as_raw(), to.0.as_raw(), bytes)?;
    // SAFETY: ranges checked and apart; lifetimes are the caller's promise.
    unsafe {
        queue(
            Direction::DeviceToDevice,
            from.0.as_raw(),
            to.0.as_raw(),
            bytes,
            stream.raw(),
        )?
    };
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
    let (from, to) = (host_part(src, src_range)?, host_part_mut(dst, dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    apart(from.0 as u64, to.0 as u64, bytes)?;
    // SAFETY: ranges checked and apart; lifetimes are the caller's promise.
    unsafe {
        queue(
            Direction::HostToHost,
            from.0 as u64,
            to.0 as u64,
            bytes,
            stream.raw(),
        )?
    };
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
    let (src, dst) = (ptr.wrapping_add(from.start), ptr.wrapping_add(to.start));
    apart(src as u64, dst as u64, bytes)?;
    // SAFETY: both ranges are inside the buffer, and apart; lifetimes are
    // the caller's promise.
    unsafe {
        queue(
            Direction::HostToHost,
            src as u64,
            dst as u64,
            bytes,
            stream.raw(),
        )?
    };
    Ok(bytes)
}

/// Which way a copy goes, which decides the driver call that carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

/// Queues a copy of `bytes` from `src` to `dst` on `stream` (addresses:
/// host pointers for host memory, device pointers for device memory).
/// No driver call for 0 bytes.
///
/// # Safety
/// Both ranges are memory of the kinds `direction` names, do not overlap,
/// and stay allocated (and the host off them) until `stream` has finished
/// the copy.
pub(crate) unsafe fn queue(
    direction: Direction,
    src: u64,
    dst: u64,
    bytes: usize,
    stream: CUstream,
) -> Result<(), DriverError> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: forwarded to the caller.
    unsafe {
        match direction {
            Direction::HostToDevice => {
                driver::memcpy_htod_async(dst, src as *const _, bytes, stream)
            }
            Direction::DeviceToHost => driver::memcpy_dtoh_async(dst as *mut _, src, bytes, stream),
            Direction::DeviceToDevice => driver::memcpy_dtod_async(dst, src, bytes, stream),
            // With unified addressing, host pointers are valid `CUdeviceptr`s.
            Direction::HostToHost => driver::memcpy_async(dst, src, bytes, stream),
        }
    }
}

/// Copies `bytes` from `src` to `dst` and returns when the copy is done:
/// device copies go through the legacy default stream and are waited for
/// where the driver returns early (from pageable memory, the driver returns
/// once the data is staged; device-to-device copies return at once); host
/// copies are done by the CPU. No driver call for 0 bytes.
///
/// # Safety
/// Both ranges are memory of the kinds `direction` names, do not overlap,
/// stay allocated during the call, and nothing else touches them.
pub(crate) unsafe fn now(
    direction: Direction,
    src: u64,
    dst: u64,
    bytes: usize,
    src_page_locked: bool,
) -> Result<(), DriverError> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: forwarded to the caller.
    unsafe {
        match direction {
            Direction::HostToDevice => {
                driver::memcpy_htod(dst, src as *const _, bytes)?;
                if !src_page_locked {
                    synchronize_legacy()?;
                }
            }
            Direction::DeviceToHost => driver::memcpy_dtoh(dst as *mut _, src, bytes)?,
            Direction::DeviceToDevice => {
                driver::memcpy_dtod(dst, src, bytes)?;
                synchronize_legacy()?;
            }
            Direction::HostToHost => {
                std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes)
            }
        }
    }
    Ok(())
}

/// Copies `bytes` from `src`, device memory of `from`'s GPU, to `dst`,
/// device memory of `to`'s: queued on `stream` (`cuMemcpyPeerAsync`), or
/// done before returning (`cuMemcpyPeer`, then waited for: it may return
/// early, as `cuMemcpyDtoD` may). No driver call for 0 bytes.
///
/// # Safety
/// Both ranges are device memory of the GPUs named, do not overlap, and
/// stay allocated (and untouched by other work) until the copy is done.
pub(crate) unsafe fn between_gpus(
    src: u64,
    from: &Context,
    dst: u64,
    to: &Context,
    bytes: usize,
    stream: Option<CUstream>,
) -> Result<(), DriverError> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: forwarded to the caller; the contexts are retained.
    unsafe {
        match stream {
            Some(stream) => {
                driver::memcpy_peer_async(dst, to.raw(), src, from.raw(), bytes, stream)
            }
            None => {
                driver::memcpy_peer(dst, to.raw(), src, from.raw(), bytes)?;
                synchronize_legacy()
            }
        }
    }
}

/// `Ok` if `bytes` from `from` and from `to` (addresses in one address
/// space) do not overlap: the driver's copies, like `memcpy`, are undefined
/// for overlapping ranges.
pub(crate) fn apart(from: u64, to: u64, bytes: usize) -> Result<(), Fault> {
    if overlap((from, bytes), (to, bytes)) {
        return Err(Fault::OverlappingCopy);
    }
    Ok(())
}

/// Whether `(start, bytes)` ranges `a` and `b` share a byte.
pub(crate) fn overlap(a: (u64, usize), b: (u64, usize)) -> bool {
    let ((a, a_bytes), (b, b_bytes)) = (a, b);
    a_bytes > 0
        && b_bytes > 0
        && a < b.saturating_add(b_bytes as u64)
        && b < a.saturating_add(a_bytes as u64)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_ranges_are_refused() {
        assert_eq!(apart(0, 8, 8), Ok(()));
        assert_eq!(apart(8, 0, 8), Ok(()));
        assert_eq!(apart(0, 4, 8), Err(Fault::OverlappingCopy));
        assert_eq!(apart(4, 0, 8), Err(Fault::OverlappingCopy));
        assert_eq!(apart(4, 4, 1), Err(Fault::OverlappingCopy));
        assert_eq!(apart(4, 4, 0), Ok(()), "empty copies touch nothing");
        assert_eq!(
            apart(u64::MAX - 2, u64::MAX - 4, 4),
            Err(Fault::OverlappingCopy)
        );
    }
}
