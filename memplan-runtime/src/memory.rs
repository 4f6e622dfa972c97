//! What every buffer has in common: the element trait, device pointers, and
//! the two views copies and kernels work on (host memory, device memory).

use crate::error::Fault;
use bytemuck::AnyBitPattern;
use cust::memory::DeviceCopy;
use cust::sys::CUdeviceptr;
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};

/// A type that can live in GPU-visible memory: plain data with no host
/// pointers inside (cust's [`DeviceCopy`]) for which every bit pattern is a
/// valid value (bytemuck's [`AnyBitPattern`]), because a kernel may write any
/// bits and the host will then read them.
///
/// Implemented for every type that is both: `f32`, `u8`, `[i32; 4]`, and
/// your own `#[repr(C)]` structs once they implement the two traits.
pub trait Element: DeviceCopy + AnyBitPattern {}
impl<T: DeviceCopy + AnyBitPattern> Element for T {}

/// A device address of `T`s, as a kernel receives it (`T*` in CUDA C++).
#[repr(transparent)]
pub struct DevicePtr<T> {
    address: CUdeviceptr,
    element: PhantomData<fn() -> T>,
}

impl<T> DevicePtr<T> {
    /// # Safety
    /// `address` is a device address of `T`s in the current context, or 0.
    pub const unsafe fn from_raw(address: CUdeviceptr) -> Self {
        Self {
            address,
            element: PhantomData,
        }
    }

    /// The address as the driver takes it (`CUdeviceptr`).
    pub const fn as_raw(self) -> CUdeviceptr {
        self.address
    }

    /// The address `count` elements further on. (Wrapping: the runtime only
    /// computes addresses inside buffers, after checking the range.)
    pub const fn add(self, count: usize) -> Self {
        let offset = count.wrapping_mul(size_of::<T>()) as CUdeviceptr;
        Self {
            address: self.address.wrapping_add(offset),
            element: PhantomData,
        }
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> std::fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevicePtr({:#x})", self.address)
    }
}

// SAFETY: a device address is a plain 64-bit integer on both sides.
unsafe impl<T> DeviceCopy for DevicePtr<T> {}

/// Memory on the host side of the bus: plain slices and `Vec`s (pageable),
/// and the page-locked kinds ([`PinnedBuffer`](crate::PinnedBuffer),
/// [`Registered`](crate::Registered)).
///
/// # Safety
/// `host_parts` returns a pointer to `len` initialized `T`s that stays valid
/// as long as `self` is neither moved out of, dropped nor mutated.
pub unsafe trait HostMemory<T: Element> {
    /// Pointer and length.
    fn host_parts(&self) -> (*const T, usize);

    /// Whether the memory is page-locked. The driver copies page-locked
    /// memory asynchronously; pageable memory it stages through a bounce
    /// buffer, and an "async" copy of it waits.
    fn is_page_locked(&self) -> bool;
}

/// Host memory that copies may write.
///
/// # Safety
/// As for [`HostMemory`], and the pointer may be written through.
pub unsafe trait HostMemoryMut<T: Element>: HostMemory<T> {
    /// The start and length of the memory, in elements, for writing.
    fn host_parts_mut(&mut self) -> (*mut T, usize);
}

/// Memory with a device address, which a kernel can reach: device buffers,
/// and mapped host memory.
///
/// # Safety
/// `device_parts` returns the device address of `len` `T`s that stays valid
/// as long as `self` is not dropped.
pub unsafe trait DeviceAddress<T: Element> {
    /// Device pointer and length; a fault for host memory that is not mapped.
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), Fault>;
}

/// Device memory proper: memory that is not also a host slice, so copies and
/// fills may write it through a shared borrow without breaking any Rust
/// reference. Mapped host memory has a device address but is not this.
///
/// # Safety
/// No Rust reference points into the memory.
pub unsafe trait DeviceMemory<T: Element>: DeviceAddress<T> {}

unsafe impl<T: Element> HostMemory<T> for [T] {
    fn host_parts(&self) -> (*const T, usize) {
        (self.as_ptr(), self.len())
    }
    fn is_page_locked(&self) -> bool {
        false
    }
}

unsafe impl<T: Element> HostMemoryMut<T> for [T] {
    fn host_parts_mut(&mut self) -> (*mut T, usize) {
        (self.as_mut_ptr(), self.len())
    }
}

unsafe impl<T: Element> HostMemory<T> for Vec<T> {
    fn host_parts(&self) -> (*const T, usize) {
        self.as_slice().host_parts()
    }
    fn is_page_locked(&self) -> bool {
        false
    }
}

unsafe impl<T: Element> HostMemoryMut<T> for Vec<T> {
    fn host_parts_mut(&mut self) -> (*mut T, usize) {
        // Not through `as_mut_slice`: a pointer derived from a reference
        // would die with the next `&mut` borrow of the `Vec`, and plans keep
        // this one across borrows.
        (self.as_mut_ptr(), self.len())
    }
}

/// Bytes in `len` elements of `T`, or a fault if that overflows.
#[inline]
pub fn byte_len<T>(len: usize) -> Result<usize, Fault> {
    len.checked_mul(size_of::<T>()).ok_or(Fault::SizeOverflow {
        len,
        element_size: size_of::<T>(),
    })
}

/// Turns a range over a buffer of `len` elements into `start..end`, like
/// slice indexing does, but with a fault instead of a panic.
pub fn resolve(range: impl RangeBounds<usize>, len: usize) -> Result<Range<usize>, Fault> {
    let start = match range.start_bound() {
        Bound::Included(&start) => start,
        Bound::Excluded(&start) => start.checked_add(1).ok_or(Fault::OutOfBounds {
            start,
            end: len,
            len,
        })?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => {
            end.checked_add(1)
                .ok_or(Fault::OutOfBounds { start, end, len })?
        }
        Bound::Excluded(&end) => end,
        Bound::Unbounded => len,
    };
    if start > end {
        return Err(Fault::ReversedRange { start, end });
    }
    if end > len {
        return Err(Fault::OutOfBounds { start, end, len });
    }
    Ok(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_range_form() {
        assert_eq!(resolve(.., 10), Ok(0..10));
        assert_eq!(resolve(2.., 10), Ok(2..10));
        assert_eq!(resolve(..3, 10), Ok(0..3));
        assert_eq!(resolve(..=3, 10), Ok(0..4));
        assert_eq!(resolve(4..6, 10), Ok(4..6));
        assert_eq!(resolve(10..10, 10), Ok(10..10));
    }

    #[test]
    fn refuses_ranges_outside_the_buffer() {
        assert_eq!(
            resolve(8..11, 10),
            Err(Fault::OutOfBounds {
                start: 8,
                end: 11,
                len: 10
            })
        );
        assert_eq!(
            resolve(11.., 10),
            Err(Fault::ReversedRange { start: 11, end: 10 })
        );
        let (start, end) = (5, 4);
        assert_eq!(
            resolve(start..end, 10),
            Err(Fault::ReversedRange { start, end })
        );
        assert!(resolve(..=usize::MAX, 10).is_err());
    }

    #[test]
    fn buffers_and_handles_can_move_between_threads() {
        fn send_and_sync<T: Send + Sync>() {}
        send_and_sync::<DevicePtr<f32>>();
        send_and_sync::<crate::DeviceBuffer<f32>>();
        send_and_sync::<crate::PinnedBuffer<f32>>();
        send_and_sync::<crate::Stream>();
        send_and_sync::<crate::Event>();
        send_and_sync::<crate::Kernel>();
        // Send only: CUDA does not synchronize calls on one graph.
        fn send<T: Send>() {}
        send::<crate::Graph>();
    }

    #[test]
    fn device_pointers_step_by_whole_elements() {
        // SAFETY: never dereferenced.
        let base = unsafe { DevicePtr::<f32>::from_raw(0x1000) };
        assert_eq!(base.add(4).as_raw(), 0x1010);
    }
}
