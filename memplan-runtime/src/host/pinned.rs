//! Page-locked host memory allocated by the driver: pinned, mapped,
//! write-combined and portable.

use crate::context::{Context, release_in};
use crate::driver;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::host::HostAlloc;
use crate::memory::{DeviceAddress, DevicePtr, Element, HostMemory, HostMemoryMut, byte_len};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Page-locked host memory (`cuMemAllocHost`, or `cuMemHostAlloc` with
/// [`HostAlloc`] flags). Derefs to a slice; starts zeroed.
///
/// The driver copies page-locked memory by DMA, so copies of it are truly
/// asynchronous and run at full bus speed. A [`HostAlloc::MAPPED`] buffer
/// also has a device address ([`device_ptr`](Self::device_ptr)) that
/// kernels read and write directly.
///
/// ```no_run
/// use memplan_runtime::{Context, HostAlloc, PinnedBuffer};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let mut staging = PinnedBuffer::<f32>::new(&ctx, 1 << 20)?;
/// staging.fill(1.0);
/// let zero_copy = PinnedBuffer::<f32>::with_flags(&ctx, 1 << 20, HostAlloc::MAPPED)?;
/// assert!(zero_copy.device_ptr().is_some());
/// # Ok(()) }
/// ```
pub struct PinnedBuffer<T: Element> {
    ptr: NonNull<T>,
    len: usize,
    flags: HostAlloc,
    /// The mapped device address, for `HostAlloc::MAPPED` buffers.
    device_ptr: Option<DevicePtr<T>>,
    context: Context,
}

// SAFETY: the buffer owns its memory like a `Vec`; the handle is usable from
// any thread once the context is bound there.
unsafe impl<T: Element + Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Element + Sync> Sync for PinnedBuffer<T> {}

impl<T: Element> PinnedBuffer<T> {
    /// `len` zeroed elements of plain pinned memory (`cuMemAllocHost`).
    #[track_caller]
    pub fn new(context: &Context, len: usize) -> Result<Self> {
        Self::with_flags(context, len, HostAlloc::PINNED)
    }

    /// `len` zeroed elements allocated with `flags` (`cuMemHostAlloc`).
    #[track_caller]
    pub fn with_flags(context: &Context, len: usize, flags: HostAlloc) -> Result<Self> {
        let at = Location::caller();
        let operation = if flags == HostAlloc::PINNED {
            "cuMemAllocHost"
        } else {
            "cuMemHostAlloc"
        };
        let bytes = byte_len::<T>(len).at(operation, at)?;
        context.bind_to_thread()?;
        let ptr = if bytes == 0 {
            NonNull::dangling()
        } else {
            // `bytes` fresh bytes, freed in `Drop`.
            let raw = if flags == HostAlloc::PINNED {
                driver::mem_alloc_host(bytes)
            } else {
                driver::mem_host_alloc(bytes, flags.bits())
            };
            let raw = raw.at(operation, at)?;
            let ptr =
                NonNull::new(raw.cast::<T>()).ok_or(Fault::Unsupported("null host allocation"));
            let ptr = ptr.at(operation, at)?;
            // SAFETY: `bytes` writable bytes; zero is a valid `T` (AnyBitPattern).
            unsafe { ptr.as_ptr().write_bytes(0, len) };
            ptr
        };
        let mut buffer = Self {
            ptr,
            len,
            flags,
            device_ptr: None,
            context: context.clone(),
        };
        if flags.is_mapped() {
            buffer.device_ptr =
                Some(mapped_device_ptr(buffer.ptr, bytes).at("cuMemHostGetDevicePointer", at)?);
        }
        Ok(buffer)
    }

    /// A pinned copy of `data`, allocated with `flags`.
    #[track_caller]
    pub fn from_slice(context: &Context, data: &[T], flags: HostAlloc) -> Result<Self> {
        let mut buffer = Self::with_flags(context, data.len(), flags)?;
        buffer.copy_from_slice(data);
        Ok(buffer)
    }

    /// The flags the buffer was allocated with.
    pub fn flags(&self) -> HostAlloc {
        self.flags
    }

    /// The address kernels use to reach this memory, if it is mapped.
    pub fn device_ptr(&self) -> Option<DevicePtr<T>> {
        self.device_ptr
    }

    /// The context it was allocated in.
    pub fn context(&self) -> &Context {
        &self.context
    }
}

/// The device address of mapped host memory (`cuMemHostGetDevicePointer`).
pub(crate) fn mapped_device_ptr<T>(host: NonNull<T>, bytes: usize) -> Result<DevicePtr<T>, Fault> {
    if bytes == 0 {
        // SAFETY: a null device pointer to no elements is never dereferenced.
        return Ok(unsafe { DevicePtr::from_raw(0) });
    }
    // SAFETY: `host` is mapped memory of the current context; flags must be 0.
    let address = unsafe { driver::mem_host_get_device_pointer(host.as_ptr().cast(), 0) }?;
    // SAFETY: the driver's address for this allocation.
    Ok(unsafe { DevicePtr::from_raw(address) })
}

impl<T: Element> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized elements, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if self.len == 0 || size_of::<T>() == 0 {
            return;
        }
        // SAFETY: allocated by cuMemAllocHost/cuMemHostAlloc in this context.
        // No copy can still use it: the safe API keeps it borrowed until its
        // scope has synchronized, and plans synchronize before they drop.
        release_in(&self.context, || unsafe {
            driver::mem_free_host(self.ptr.as_ptr().cast())
        });
    }
}

impl<T: Element + std::fmt::Debug> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("flags", &self.flags)
            .finish_non_exhaustive()
    }
}

unsafe impl<T: Element> HostMemory<T> for PinnedBuffer<T> {
    fn host_parts(&self) -> (*const T, usize) {
        (self.ptr.as_ptr(), self.len)
    }
    fn is_page_locked(&self) -> bool {
        true
    }
}

unsafe impl<T: Element> HostMemoryMut<T> for PinnedBuffer<T> {
    fn host_parts_mut(&mut self) -> (*mut T, usize) {
        (self.ptr.as_ptr(), self.len)
    }
}

unsafe impl<T: Element> DeviceAddress<T> for PinnedBuffer<T> {
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), Fault> {
        match self.device_ptr {
            Some(ptr) => Ok((ptr, self.len)),
            None => Err(Fault::Unsupported(
                "this pinned buffer is not mapped into the device's address space; \
                 allocate it with HostAlloc::MAPPED for kernels to reach it",
            )),
        }
    }
}
