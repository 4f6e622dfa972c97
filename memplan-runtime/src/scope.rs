//! Queuing GPU work safely by hand: [`scope`] lends buffers to the GPU and
//! takes them back only after the work that uses them has finished.

use crate::context::Context;
use crate::copy;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::fill;
use crate::kernel::{Kernel, KernelArgs, LaunchConfig};
use crate::memory::{DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut};
use crate::stream::Stream;
use crate::{DeviceBuffer, PinnedBuffer, Registered, RegisteredRef};
use bytemuck::NoUninit;
use cust::sys::CUstream;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// Runs `work`, which queues copies, fills and launches on streams, then
/// waits for every stream it used, and only then returns.
///
/// Everything queued in the scope borrows its buffers for the whole scope
/// (`'env`): sources shared, host destinations exclusively. So no host code
/// can change, read back, free or drop a host buffer while queued work may
/// still use it, and no device buffer can be freed; the borrow checker says
/// so. To read and write one host buffer in the same scope,
/// [`lend`](Scope::lend) it. The wait happens also when `work` fails or
/// panics, as with `std::thread::scope`.
///
/// Device buffers are lent shared, and device memory is not Rust memory: a
/// synchronous copy into a device buffer inside the scope runs on the legacy
/// stream, unordered with the queued work, and may see or leave torn data.
/// That is a logic error, not undefined behaviour; the plans of `memplan!`
/// rule it out.
///
/// ```no_run
/// use memplan_runtime::{scope, Context, DeviceBuffer, PinnedBuffer, Stream};
/// # fn main() -> memplan_runtime::Result<()> {
/// let ctx = Context::new(0)?;
/// let stream = Stream::new(&ctx)?;
/// let input = PinnedBuffer::from_slice(&ctx, &[1.0f32; 1024], Default::default())?;
/// let device = DeviceBuffer::<f32>::new(&ctx, 1024)?;
/// let mut output = PinnedBuffer::<f32>::new(&ctx, 1024)?;
/// scope(|s| {
///     s.copy(&stream, &input, &device)?;
///     s.copy(&stream, &device, &mut output)?;
///     // output[0] here would not compile: it is lent until the scope ends
///     Ok(())
/// })?;
/// assert_eq!(output[0], 1.0);
/// # Ok(()) }
/// ```
pub fn scope<'env, R>(work: impl FnOnce(&Scope<'env>) -> Result<R>) -> Result<R> {
    let scope = Scope {
        streams: RefCell::new(Vec::new()),
        env: PhantomData,
    };
    // Waits on every path out, panics included; the normal path below waits
    // first and reports what the wait found.
    let waiter = WaitOnDrop(&scope);
    let result = work(&scope);
    std::mem::forget(waiter);
    let waited = scope.wait_all();
    let value = result?;
    waited?;
    Ok(value)
}

/// The handle [`scope`] gives its closure.
pub struct Scope<'env> {
    /// Streams with queued work, to wait for at the end.
    streams: RefCell<Vec<(CUstream, Context)>>,
    /// Invariant in `'env`, so that loans cannot be shortened.
    env: PhantomData<&'env mut &'env ()>,
}

impl<'env> Scope<'env> {
    /// Queues a copy of all of `src` into all of `dst` on `stream`. The
    /// direction follows from the two sides: host or device.
    #[track_caller]
    pub fn copy<T: Element>(
        &self,
        stream: &'env Stream,
        src: impl Into<Source<'env, T>>,
        dst: impl Into<Target<'env, T>>,
    ) -> Result<()> {
        self.copy_range(stream, src, .., dst, ..)
    }

    /// Queues a copy of `src[src_range]` into `dst[dst_range]` on `stream`.
    #[track_caller]
    pub fn copy_range<T: Element>(
        &self,
        stream: &'env Stream,
        src: impl Into<Source<'env, T>>,
        src_range: impl RangeBounds<usize>,
        dst: impl Into<Target<'env, T>>,
        dst_range: impl RangeBounds<usize>,
    ) -> Result<()> {
        let at = Location::caller();
        self.uses(stream);
        let (src, mut dst) = (src.into().side, dst.into().side);
        // SAFETY: both sides are borrowed for `'env`, which outlasts the
        // wait at the end of the scope; host targets exclusively.
        let queued = unsafe {
            match (&src, &mut dst) {
                (Side::Host(from), Side::Device(to)) => {
                    copy::htod_async(stream, from, src_range, to, dst_range)
                }
                (Side::Device(from), Side::Host(to)) => {
                    copy::dtoh_async(stream, from, src_range, to, dst_range)
                }
                (Side::Device(from), Side::Device(to)) => {
                    copy::dtod_async(stream, from, src_range, to, dst_range)
                }
                (Side::Host(from), Side::Host(to)) => {
                    copy::htoh_async(stream, from, src_range, to, dst_range)
                }
            }
        };
        queued.map(drop).at("Scope::copy", at)
    }

    /// Queues a fill of all of `dst` with `value` on `stream`.
    #[track_caller]
    pub fn fill<T: Element + NoUninit>(
        &self,
        stream: &'env Stream,
        dst: &'env DeviceBuffer<T>,
        value: T,
    ) -> Result<()> {
        self.uses(stream);
        // SAFETY: `dst` is borrowed for `'env`, past the wait.
        unsafe { fill::fill_async(stream, dst, .., value) }
            .map(drop)
            .at("Scope::fill", Location::caller())
    }

    /// Queues a kernel launch on `stream`.
    ///
    /// # Safety
    /// As for [`Kernel::launch`]; the memory the kernel reaches must stay
    /// allocated and untouched by the host until the scope ends (borrow it
    /// for the scope, with [`lend`](Self::lend) for host memory).
    #[track_caller]
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        stream: &'env Stream,
        kernel: &'env Kernel,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        self.uses(stream);
        // SAFETY: forwarded to the caller.
        unsafe { kernel.launch(stream, config, args) }.at("Scope::launch", Location::caller())
    }

    /// Records `event` on `stream`.
    #[track_caller]
    pub fn record(&self, event: &Event, stream: &'env Stream) -> Result<()> {
        self.uses(stream);
        event.record(stream)
    }

    /// Makes later work on `stream` wait for `event`.
    #[track_caller]
    pub fn wait(&self, stream: &'env Stream, event: &Event) -> Result<()> {
        self.uses(stream);
        stream.wait(event)
    }

    /// Lends a host buffer to the GPU for the rest of the scope, as a handle
    /// that can be both a source and a target, and the host cannot use.
    pub fn lend<T: Element, B: HostMemoryMut<T> + ?Sized>(
        &self,
        buffer: &'env mut B,
    ) -> Lent<'env, T> {
        let locked = buffer.is_page_locked();
        let (ptr, len) = buffer.host_parts_mut();
        Lent {
            view: HostView { ptr, len, locked },
            loan: PhantomData,
        }
    }

    fn uses(&self, stream: &Stream) {
        let mut streams = self.streams.borrow_mut();
        if !streams.iter().any(|(raw, _)| *raw == stream.raw()) {
            streams.push((stream.raw(), stream.context().clone()));
        }
    }

    fn wait_all(&self) -> Result<()> {
        let mut first_error = None;
        for (stream, context) in self.streams.borrow().iter() {
            // SAFETY: each stream is borrowed for `'env`, so still alive.
            let status =
                crate::driver::check(unsafe { crate::driver::cu::cuStreamSynchronize(*stream) });
            if let Err(error) = status.at("cuStreamSynchronize (end of scope)", Location::caller())
            {
                // The loans end after this: if the stream could not be waited
                // for, wait for everything in its context.
                let _ = context.synchronize();
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

struct WaitOnDrop<'a, 'env>(&'a Scope<'env>);

impl Drop for WaitOnDrop<'_, '_> {
    fn drop(&mut self) {
        // Unwinding out of the scope: the loans end now, so the GPU must be
        // done with them. The error, if any, cannot be reported from here.
        let _ = self.0.wait_all();
    }
}

/// A host buffer lent to the GPU for the rest of a scope; see [`Scope::lend`].
#[derive(Clone, Copy)]
pub struct Lent<'env, T> {
    view: HostView<T>,
    loan: PhantomData<&'env mut [T]>,
}

/// The source of a queued copy: a host or device buffer borrowed for the scope.
pub struct Source<'env, T> {
    side: Side<HostView<T>, DeviceView<T>>,
    loan: PhantomData<&'env [T]>,
}

/// The target of a queued copy: a host buffer borrowed exclusively for the
/// scope, or a device buffer.
pub struct Target<'env, T> {
    side: Side<HostView<T>, DeviceView<T>>,
    loan: PhantomData<&'env mut [T]>,
}

enum Side<H, D> {
    Host(H),
    Device(D),
}

/// Host memory as a pointer and length.
struct HostView<T> {
    ptr: *mut T,
    len: usize,
    locked: bool,
}

impl<T> Clone for HostView<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for HostView<T> {}

/// Device memory as a pointer and length.
struct DeviceView<T> {
    ptr: DevicePtr<T>,
    len: usize,
}

// SAFETY (the four impls below): the views hold the parts of a buffer that
// is borrowed for the scope, so the pointers stay valid while they are used.
unsafe impl<T: Element> HostMemory<T> for HostView<T> {
    fn host_parts(&self) -> (*const T, usize) {
        (self.ptr, self.len)
    }
    fn is_page_locked(&self) -> bool {
        self.locked
    }
}

unsafe impl<T: Element> HostMemoryMut<T> for HostView<T> {
    fn host_parts_mut(&mut self) -> (*mut T, usize) {
        (self.ptr, self.len)
    }
}

unsafe impl<T: Element> DeviceAddress<T> for DeviceView<T> {
    fn device_parts(&self) -> Result<(DevicePtr<T>, usize), Fault> {
        Ok((self.ptr, self.len))
    }
}

// SAFETY: device memory, which no Rust reference points into.
unsafe impl<T: Element> DeviceMemory<T> for DeviceView<T> {}

fn host_view<T: Element, B: HostMemory<T> + ?Sized>(buffer: &B) -> HostView<T> {
    let (ptr, len) = buffer.host_parts();
    // Only written through when it came from a `&mut` (see `Target`).
    HostView {
        ptr: ptr.cast_mut(),
        len,
        locked: buffer.is_page_locked(),
    }
}

fn host_view_mut<T: Element, B: HostMemoryMut<T> + ?Sized>(buffer: &mut B) -> HostView<T> {
    let locked = buffer.is_page_locked();
    let (ptr, len) = buffer.host_parts_mut();
    HostView { ptr, len, locked }
}

fn device_view<T: Element>(buffer: &DeviceBuffer<T>) -> DeviceView<T> {
    DeviceView {
        ptr: buffer.device_ptr(),
        len: buffer.len(),
    }
}

macro_rules! host_sources {
    ($($buffer:ty),*) => {$(
        impl<'env, T: Element> From<&'env $buffer> for Source<'env, T> {
            fn from(buffer: &'env $buffer) -> Self {
                Source { side: Side::Host(host_view(buffer)), loan: PhantomData }
            }
        }
    )*};
}
host_sources!(
    [T],
    Vec<T>,
    PinnedBuffer<T>,
    Registered<'_, T>,
    RegisteredRef<'_, T>
);

macro_rules! host_targets {
    ($($buffer:ty),*) => {$(
        impl<'env, T: Element> From<&'env mut $buffer> for Target<'env, T> {
            fn from(buffer: &'env mut $buffer) -> Self {
                Target { side: Side::Host(host_view_mut(buffer)), loan: PhantomData }
            }
        }
    )*};
}
host_targets!([T], Vec<T>, PinnedBuffer<T>, Registered<'_, T>);

impl<'env, T: Element> From<&'env DeviceBuffer<T>> for Source<'env, T> {
    fn from(buffer: &'env DeviceBuffer<T>) -> Self {
        Source {
            side: Side::Device(device_view(buffer)),
            loan: PhantomData,
        }
    }
}

// Device memory is not host memory: the GPU writing it through a shared
// borrow cannot break any Rust reference.
impl<'env, T: Element> From<&'env DeviceBuffer<T>> for Target<'env, T> {
    fn from(buffer: &'env DeviceBuffer<T>) -> Self {
        Target {
            side: Side::Device(device_view(buffer)),
            loan: PhantomData,
        }
    }
}

impl<'env, T: Element> From<Lent<'env, T>> for Source<'env, T> {
    fn from(lent: Lent<'env, T>) -> Self {
        Source {
            side: Side::Host(lent.view),
            loan: PhantomData,
        }
    }
}

impl<'env, T: Element> From<Lent<'env, T>> for Target<'env, T> {
    fn from(lent: Lent<'env, T>) -> Self {
        Target {
            side: Side::Host(lent.view),
            loan: PhantomData,
        }
    }
}
