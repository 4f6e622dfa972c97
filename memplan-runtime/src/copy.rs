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
    // SAFETY: synchronous; `&` keeps both buffers alive for the call.
    unsafe { transfer(Host(src), src_range, Device(dst), dst_range, None) }
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
    // SAFETY: synchronous; `&mut` keeps the host side ours.
    unsafe { transfer(Device(src), src_range, HostMut(dst), dst_range, None) }
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
    // SAFETY: synchronous; `&` keeps both buffers alive for the call.
    unsafe { transfer(Device(src), src_range, Device(dst), dst_range, None) }
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
    // SAFETY: synchronous; `&mut` keeps the destination ours.
    unsafe { transfer(Host(src), src_range, HostMut(dst), dst_range, None) }
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
    // SAFETY: the caller's promise.
    unsafe { transfer(Host(src), src_range, Device(dst), dst_range, Some(stream)) }
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
    // SAFETY: the caller's promise.
    unsafe {
        transfer(
            Device(src),
            src_range,
            HostMut(dst),
            dst_range,
            Some(stream),
        )
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
    // SAFETY: the caller's promise.
    unsafe { transfer(Device(src), src_range, Device(dst), dst_range, Some(stream)) }
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
    // SAFETY: the caller's promise.
    unsafe { transfer(Host(src), src_range, HostMut(dst), dst_range, Some(stream)) }
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
    // SAFETY: `&mut` makes the buffer ours for the call; the rest is the
    // caller's promise.
    unsafe {
        transfer(
            Within(ptr, len),
            src_range,
            Within(ptr, len),
            dst_range,
            Some(stream),
        )
    }
}

/// One side of a copy, before its range is resolved: host or device
/// memory, which decides the driver call, and where a range of it lies.
trait Side<T: Element> {
    /// Device memory, reached by device pointers; else host memory.
    const ON_DEVICE: bool;

    /// The address of `range`'s first element (a host or device pointer)
    /// and the range's length in elements; a fault for a range outside the
    /// memory, or memory with no address of this side's kind.
    fn part(&mut self, range: impl RangeBounds<usize>) -> Result<(u64, usize), Fault>;

    /// Whether the memory is page-locked; asked only of the source of a
    /// synchronous host-to-device copy, whose wait it decides.
    fn is_page_locked(&self) -> bool {
        false
    }
}

/// Host memory a copy reads.
struct Host<'a, M: ?Sized>(&'a M);
/// Host memory a copy writes.
struct HostMut<'a, M: ?Sized>(&'a mut M);
/// Device memory, read or written (through `&`: no Rust reference points
/// into it).
struct Device<'a, M: ?Sized>(&'a M);
/// A host buffer's elements, by pointer and length: both sides of a copy
/// within one buffer, which cannot both borrow it.
struct Within<T>(*mut T, usize);

impl<T: Element, M: HostMemory<T> + ?Sized> Side<T> for Host<'_, M> {
    const ON_DEVICE: bool = false;

    fn part(&mut self, range: impl RangeBounds<usize>) -> Result<(u64, usize), Fault> {
        let (ptr, len) = self.0.host_parts();
        let range = resolve(range, len)?;
        // SAFETY: `range.start <= len`, so the pointer stays inside (or one past) the buffer.
        Ok((unsafe { ptr.add(range.start) } as u64, range.len()))
    }

    fn is_page_locked(&self) -> bool {
        self.0.is_page_locked()
    }
}

impl<T: Element, M: HostMemoryMut<T> + ?Sized> Side<T> for HostMut<'_, M> {
    const ON_DEVICE: bool = false;

    fn part(&mut self, range: impl RangeBounds<usize>) -> Result<(u64, usize), Fault> {
        let (ptr, len) = self.0.host_parts_mut();
        let range = resolve(range, len)?;
        // SAFETY: as for `Host`.
        Ok((unsafe { ptr.add(range.start) } as u64, range.len()))
    }
}

impl<T: Element, M: DeviceMemory<T> + ?Sized> Side<T> for Device<'_, M> {
    const ON_DEVICE: bool = true;

    fn part(&mut self, range: impl RangeBounds<usize>) -> Result<(u64, usize), Fault> {
        let (ptr, len) = device_part(self.0, range)?;
        Ok((ptr.as_raw(), len))
    }
}

impl<T: Element> Side<T> for Within<T> {
    const ON_DEVICE: bool = false;

    fn part(&mut self, range: impl RangeBounds<usize>) -> Result<(u64, usize), Fault> {
        let range = resolve(range, self.1)?;
        Ok((self.0.wrapping_add(range.start) as u64, range.len()))
    }
}

/// The copies of this module but `htoh_within` (which may overlap):
/// resolves both ranges (the source's first), checks that their lengths
/// match and, within one kind of memory, that they do not overlap, then
/// copies: queued on `stream`, or done before returning. Returns the bytes
/// moved (or queued).
///
/// # Safety
/// With a stream, as for the `_async` function that calls this: both sides
/// stay allocated, and the host off them, until `stream` has finished the
/// copy. Without, the sides' borrows last the call, which is enough.
#[inline]
unsafe fn transfer<T: Element, S: Side<T>, D: Side<T>>(
    mut src: S,
    src_range: impl RangeBounds<usize>,
    mut dst: D,
    dst_range: impl RangeBounds<usize>,
    stream: Option<&Stream>,
) -> Result<usize, Fault> {
    let (from, to) = (src.part(src_range)?, dst.part(dst_range)?);
    let bytes = same_bytes::<T>(from.1, to.1)?;
    // Device memory proper is never host memory (`DeviceMemory`'s promise):
    // only copies within one kind of memory can overlap.
    if S::ON_DEVICE == D::ON_DEVICE {
        apart(from.0, to.0, bytes)?;
    }
    let direction = Direction::between(S::ON_DEVICE, D::ON_DEVICE);
    let src_page_locked =
        stream.is_none() && direction == Direction::HostToDevice && src.is_page_locked();
    // SAFETY: both ranges are inside their memory, of the kinds `direction`
    // names, and apart; their lifetimes are the caller's promise.
    unsafe {
        copy_bytes(
            direction,
            from.0,
            to.0,
            bytes,
            stream.map(Stream::raw),
            src_page_locked,
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

impl Direction {
    /// The direction from memory of one kind to memory of the other
    /// (`true`: device memory).
    pub(crate) const fn between(src_on_device: bool, dst_on_device: bool) -> Direction {
        match (src_on_device, dst_on_device) {
            (false, true) => Direction::HostToDevice,
            (true, false) => Direction::DeviceToHost,
            (true, true) => Direction::DeviceToDevice,
            (false, false) => Direction::HostToHost,
        }
    }
}

/// Copies `bytes` from `src` to `dst` (addresses: host pointers for host
/// memory, device pointers for device memory), the one place that picks
/// the driver call. No driver call for 0 bytes.
///
/// Queued on `stream`, or done before returning: device copies go through
/// the legacy default stream and are waited for where the driver returns
/// early (from pageable memory, the driver returns once the data is
/// staged; device-to-device copies return at once); host copies are done
/// by the CPU. `src_page_locked` matters only then, for host to device.
///
/// # Safety
/// Both ranges are memory of the kinds `direction` names, do not overlap,
/// and stay allocated (and the host off them) until the copy is done: the
/// call's end, or `stream`'s.
// Always inlined: plan steps and the functions above then make the driver
// call directly, and where the direction is known the match folds away.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(
    direction: Direction,
    src: u64,
    dst: u64,
    bytes: usize,
    stream: Option<CUstream>,
    src_page_locked: bool,
) -> Result<(), DriverError> {
    use Direction::*;
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: forwarded to the caller.
    unsafe {
        match (direction, stream) {
            (HostToDevice, Some(stream)) => {
                driver::memcpy_htod_async(dst, src as *const _, bytes, stream)
            }
            (DeviceToHost, Some(stream)) => {
                driver::memcpy_dtoh_async(dst as *mut _, src, bytes, stream)
            }
            (DeviceToDevice, Some(stream)) => driver::memcpy_dtod_async(dst, src, bytes, stream),
            // With unified addressing, host pointers are valid `CUdeviceptr`s.
            (HostToHost, Some(stream)) => driver::memcpy_async(dst, src, bytes, stream),
            (HostToDevice, None) => {
                driver::memcpy_htod(dst, src as *const _, bytes)?;
                if !src_page_locked {
                    synchronize_legacy()?;
                }
                Ok(())
            }
            (DeviceToHost, None) => driver::memcpy_dtoh(dst as *mut _, src, bytes),
            (DeviceToDevice, None) => {
                driver::memcpy_dtod(dst, src, bytes)?;
                synchronize_legacy()
            }
            (HostToHost, None) => {
                std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes);
                Ok(())
            }
        }
    }
}

/// Copies `bytes` from `src`, device memory of `from`'s GPU, to `dst`,
/// device memory of `to`'s: queued on `stream`, or done before returning
/// (`cuMemcpyPeer`, then waited for: it may return early, as `cuMemcpyDtoD`
/// may). No driver call for 0 bytes.
///
/// Queued by `cuMemcpyAsync`, which finds both GPUs from the addresses
/// (unified addressing) and copies as `cuMemcpyPeerAsync` does, directly
/// with peer access and staged through the host without: unlike
/// `cuMemcpyPeerAsync`, a stream capture can hold it
/// (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`), so plans on several GPUs
/// replay as graphs. `benches/multi_gpu` times it against
/// `cuMemcpyPeerAsync`.
///
/// # Safety
/// Both ranges are device memory of the GPUs named, do not overlap, and
/// stay allocated (and untouched by other work) until the copy is done.
// Always inlined, as `copy_bytes` is: plan steps make the driver call
// directly.
#[inline(always)]
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
            Some(stream) => driver::memcpy_async(dst, src, bytes, stream),
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
