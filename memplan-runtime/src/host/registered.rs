//! Caller memory page-locked in place (`cuMemHostRegister`) for as long as a
//! borrow of it lasts.

use crate::context::Context;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::host::mapped_device_ptr;
use crate::host::registry::{self, Hold};
use crate::memory::{DeviceAddress, DevicePtr, Element, HostMemory, HostMemoryMut, byte_len};
use cust::sys::CU_MEMHOSTREGISTER_DEVICEMAP;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A slice you own, page-locked by the driver until this value is dropped
/// (`cuMemHostRegister` / `cuMemHostUnregister`). Copies of it run at pinned
/// speed without copying your data into a separate pinned buffer first.
///
/// The registration borrows the slice mutably, so nothing else can touch or
/// free it while it is registered. (Leaking the registration with
/// `mem::forget` leaves the memory page-locked after the borrow ends, which
/// is safe.)
///
/// ```no_run
/// use memplan_runtime::{Context, Registered};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let mut samples = vec![0.0f32; 1 << 20];
/// let pinned = Registered::new(&ctx, &mut samples)?;
/// assert_eq!(pinned.len(), 1 << 20);
/// drop(pinned); // unregistered; `samples` is an ordinary Vec again
/// # Ok(()) }
/// ```
pub struct Registered<'a, T: Element> {
    region: Region<T>,
    slice: PhantomData<&'a mut [T]>,
}

/// A shared slice page-locked until this value is dropped: a source for
/// copies to the device. Registering does not change the data.
pub struct RegisteredRef<'a, T: Element> {
    region: Region<T>,
    slice: PhantomData<&'a [T]>,
}

/// A registered range of host memory; unregistered when its hold drops.
struct Region<T> {
    ptr: NonNull<T>,
    len: usize,
    device_ptr: Option<DevicePtr<T>>,
    _hold: Hold,
}

// SAFETY: the region stands for a borrowed slice; sending it is sending the
// borrow, which the lifetime parameter keeps honest.
unsafe impl<T: Element + Send> Send for Registered<'_, T> {}
unsafe impl<T: Element + Sync> Sync for Registered<'_, T> {}
unsafe impl<T: Element + Sync> Send for RegisteredRef<'_, T> {}
unsafe impl<T: Element + Sync> Sync for RegisteredRef<'_, T> {}

impl<'a, T: Element> Registered<'a, T> {
    /// Page-locks `slice` for as long as the returned value lives.
    #[track_caller]
    pub fn new(context: &Context, slice: &'a mut [T]) -> Result<Self> {
        let region = Region::register(context, slice.as_mut_ptr(), slice.len(), 0)?;
        Ok(Self {
            region,
            slice: PhantomData,
        })
    }

    /// Page-locks `slice` and maps it into the device's address space, so
    /// kernels can read and write it directly ([`device_ptr`](Self::device_ptr)).
    #[track_caller]
    pub fn mapped(context: &Context, slice: &'a mut [T]) -> Result<Self> {
        let region = Region::register(
            context,
            slice.as_mut_ptr(),
            slice.len(),
            CU_MEMHOSTREGISTER_DEVICEMAP,
        )?;
        Ok(Self {
            region,
            slice: PhantomData,
        })
    }

    /// The address kernels use to reach this memory, if it was mapped.
    pub fn device_ptr(&self) -> Option<DevicePtr<T>> {
        self.region.device_ptr
    }
}

impl<'a, T: Element> RegisteredRef<'a, T> {
    /// Page-locks `slice` for as long as the returned value lives.
    #[track_caller]
    pub fn new(context: &Context, slice: &'a [T]) -> Result<Self> {
        // The driver pins the pages and never writes through this pointer.
        let region = Region::register(context, slice.as_ptr().cast_mut(), slice.len(), 0)?;
        Ok(Self {
            region,
            slice: PhantomData,
        })
    }
}

impl<T: Element> Region<T> {
    #[track_caller]
    fn register(context: &Context, ptr: *mut T, len: usize, flags: u32) -> Result<Self> {
        let at = Location::caller();
        let bytes = byte_len::<T>(len).at("cuMemHostRegister", at)?;
        let ptr = NonNull::new(ptr)
            .ok_or(Fault::Unsupported("null slice"))
            .at("cuMemHostRegister", at)?;
        let start = ptr.as_ptr() as u64;
        // The slice is borrowed for as long as the region (and its hold) lives.
        let hold = registry::lock(context, start, start + bytes as u64, flags)
            .at("cuMemHostRegister", at)?;
        let mut region = Self {
            ptr,
            len,
            device_ptr: None,
            _hold: hold,
        };
        if flags & CU_MEMHOSTREGISTER_DEVICEMAP != 0 {
            region.device_ptr =
                Some(mapped_device_ptr(ptr, bytes).at("cuMemHostGetDevicePointer", at)?);
        }
        Ok(region)
    }

    fn slice(&self) -> &[T] {
        // SAFETY: the borrowed slice, `len` initialized elements.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> Deref for Registered<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.region.slice()
    }
}

impl<T: Element> DerefMut for Registered<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: the mutably borrowed slice; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.region.ptr.as_ptr(), self.region.len) }
    }
}

impl<T: Element> Deref for RegisteredRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.region.slice()
    }
}

unsafe impl<T: Element> HostMemory<T> for Registered<'_, T> {
    fn host_parts(&self) -> (*const T, usize) {
        (self.region.ptr.as_ptr(), self.region.len)
    }
    fn is_page_locked(&self) -> bool {
        true
    }
}

unsafe impl<T: Element> HostMemoryMut<T> for Registered<'_, T> {
    fn host_parts_mut(&mut self) -> (*mut T, usize) {
        (self.region.ptr.as_ptr(), self.region.len)
    }
}

unsafe impl<T: Element> DeviceAddress<T> for Registered<'_, T> {
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), Fault> {
        match self.region.device_ptr {
            Some(ptr) => Ok((ptr, self.region.len)),
            None => Err(Fault::Unsupported(
                "this registered slice is not mapped; register it with Registered::mapped \
                 for kernels to reach it",
            )),
        }
    }
}

unsafe impl<T: Element> HostMemory<T> for RegisteredRef<'_, T> {
    fn host_parts(&self) -> (*const T, usize) {
        (self.region.ptr.as_ptr(), self.region.len)
    }
    fn is_page_locked(&self) -> bool {
        true
    }
}
