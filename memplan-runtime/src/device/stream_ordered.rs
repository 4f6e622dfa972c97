//! Stream-ordered device memory (`cuMemAllocAsync` / `cuMemFreeAsync`): the
//! allocation and the free are operations on a stream, served from the
//! device's memory pool without synchronizing the device.

use crate::context::{Context, release_in};
use crate::driver;
use crate::error::Fault;
use crate::memory::{DeviceAddress, DeviceMemory, DevicePtr, Element, byte_len};
use crate::stream::Stream;

/// Device memory allocated in stream order. It exists for work ordered
/// after its allocation and before its free; using it outside that window
/// is a bug the driver does not catch. memplan's plans check the window at
/// compile time; by hand, the two operations are `unsafe`.
///
/// Dropping a buffer that was never freed synchronizes the context and then
/// frees it, so an early return (an error between allocation and free)
/// leaks nothing.
pub struct StreamOrderedBuffer<T: Element> {
    ptr: DevicePtr<T>,
    len: usize,
    context: Context,
}

impl<T: Element> StreamOrderedBuffer<T> {
    /// Allocates `len` elements as an operation on `stream`.
    ///
    /// # Safety
    /// Work that uses the buffer must be ordered after this allocation: on
    /// `stream`, or on a stream that waited for an event recorded on
    /// `stream` after this call.
    pub unsafe fn alloc_async(stream: &Stream, len: usize) -> Result<Self, Fault> {
        let bytes = byte_len::<T>(len)?;
        let mut address = 0;
        if bytes > 0 {
            // SAFETY: a live stream; the `bytes` become valid in its order
            // (uses after it are the caller's promise) and are freed by
            // `free_async` or `Drop`.
            address = unsafe { driver::mem_alloc_async(bytes, stream.raw()) }?;
        }
        // SAFETY: the address cuMemAllocAsync returned (or 0 for no elements).
        let ptr = unsafe { DevicePtr::from_raw(address) };
        Ok(Self {
            ptr,
            len,
            context: stream.context().clone(),
        })
    }

    /// Frees the buffer as an operation on `stream`.
    ///
    /// # Safety
    /// Every operation that uses the buffer must be ordered before this
    /// point of `stream`.
    pub unsafe fn free_async(mut self, stream: &Stream) -> Result<(), Fault> {
        let address = self.ptr.as_raw();
        if address == 0 {
            return Ok(());
        }
        // SAFETY: the caller orders every use before this free.
        unsafe { driver::mem_free_async(address, stream.raw()) }?;
        // Freed: leave `Drop` nothing to free. (On failure above, `Drop`
        // synchronizes and frees instead.)
        // SAFETY: a null pointer to no elements.
        self.ptr = unsafe { DevicePtr::from_raw(0) };
        Ok(())
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
}

impl<T: Element> Drop for StreamOrderedBuffer<T> {
    fn drop(&mut self) {
        if self.ptr.as_raw() == 0 {
            return;
        }
        // cuMemFree does not wait for stream-ordered memory, so wait for all
        // work first; if that fails, leak rather than free under work that
        // may still use it.
        if self.context.synchronize().is_err() {
            return;
        }
        // SAFETY: allocated by `alloc_async`; no work can still use it.
        release_in(&self.context, || unsafe {
            driver::mem_free(self.ptr.as_raw())
        });
    }
}

unsafe impl<T: Element> DeviceAddress<T> for StreamOrderedBuffer<T> {
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), Fault> {
        Ok((self.ptr, self.len))
    }
}

// SAFETY: device memory, which no Rust reference points into.
unsafe impl<T: Element> DeviceMemory<T> for StreamOrderedBuffer<T> {}
