//! Device memory that lives as long as its handle (`cuMemAlloc`).

use crate::context::{Context, release_in};
use crate::copy;
use crate::driver;
use crate::error::{Location, Result, ResultExt};
use crate::memory::{DeviceAddress, DeviceMemory, DevicePtr, Element, byte_len};

/// `len` elements of device memory (`cuMemAlloc`), freed on drop.
///
/// Its contents start as whatever the GPU memory held. Every bit pattern is
/// a valid [`Element`], so reading it is defined, if not useful; write it
/// before you read it (memplan's plans check that you do).
///
/// ```no_run
/// use memplan_runtime::{Context, DeviceBuffer};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let device = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(device.to_vec()?, [1.0, 2.0, 3.0]);
/// # Ok(()) }
/// ```
pub struct DeviceBuffer<T: Element> {
    ptr: DevicePtr<T>,
    len: usize,
    context: Context,
}

impl<T: Element> DeviceBuffer<T> {
    /// `len` elements of device memory, contents unspecified.
    #[track_caller]
    pub fn new(context: &Context, len: usize) -> Result<Self> {
        let at = Location::caller();
        let bytes = byte_len::<T>(len).at("cuMemAlloc", at)?;
        context.bind_to_thread()?;
        let mut address = 0;
        if bytes > 0 {
            // `bytes` fresh bytes, freed in `Drop`.
            address = driver::mem_alloc(bytes).at("cuMemAlloc", at)?;
        }
        // SAFETY: the address cuMemAlloc returned (or 0 for no elements).
        let ptr = unsafe { DevicePtr::from_raw(address) };
        Ok(Self {
            ptr,
            len,
            context: context.clone(),
        })
    }

    /// `len` zeroed elements.
    #[track_caller]
    pub fn zeroed(context: &Context, len: usize) -> Result<Self> {
        let buffer = Self::new(context, len)?;
        copy::zero(&buffer).at("DeviceBuffer::zeroed (cuMemsetD8)", Location::caller())?;
        Ok(buffer)
    }

    /// A device copy of `data` (synchronous).
    #[track_caller]
    pub fn from_slice(context: &Context, data: &[T]) -> Result<Self> {
        let buffer = Self::new(context, data.len())?;
        copy::htod(data, .., &buffer, ..).at(
            "DeviceBuffer::from_slice (cuMemcpyHtoD)",
            Location::caller(),
        )?;
        Ok(buffer)
    }

    /// The contents, copied back to the host (synchronous).
    #[track_caller]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut host = vec![T::zeroed(); self.len];
        copy::dtoh(self, .., host.as_mut_slice(), ..)
            .at("DeviceBuffer::to_vec (cuMemcpyDtoH)", Location::caller())?;
        Ok(host)
    }

    /// The buffer's address in the device's memory.
    pub fn device_ptr(&self) -> DevicePtr<T> {
        self.ptr
    }

    /// Its length, in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context it was allocated in.
    pub fn context(&self) -> &Context {
        &self.context
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr.as_raw() == 0 {
            return;
        }
        // SAFETY: allocated by cuMemAlloc in this context. Asynchronous work
        // that uses it holds a borrow of it (safe API) or was synchronized by
        // its plan, so nothing still uses it.
        release_in(&self.context, || unsafe {
            driver::mem_free(self.ptr.as_raw())
        });
    }
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

unsafe impl<T: Element> DeviceAddress<T> for DeviceBuffer<T> {
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), crate::Fault> {
        Ok((self.ptr, self.len))
    }
}

// SAFETY: device memory, which no Rust reference points into.
unsafe impl<T: Element> DeviceMemory<T> for DeviceBuffer<T> {}
