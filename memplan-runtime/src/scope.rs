//! Queuing GPU work safely by hand: [`scope`] lends buffers to the GPU and
//! takes them back only after the work that uses them has finished.

mod order;

use crate::copy;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::fill;
use crate::kernel::{Kernel, KernelArgs, LaunchConfig};
use crate::memory::{
    DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut, resolve,
};
use crate::stream::{Stream, wait_all};
use crate::{DeviceBuffer, PinnedBuffer, Registered, RegisteredRef};
use bytemuck::NoUninit;
use order::{Accesses, Mark, Use};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::{Range, RangeBounds};

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
/// The scope also keeps its own queued work in order: a copy or fill that
/// touches memory which unordered work on another stream of the scope
/// writes (or reads, where this one writes) is refused, with an error that
/// says where that work was queued. Order the two with
/// [`record`](Scope::record) on one stream and [`wait`](Scope::wait) on the
/// other. A buffer lent to one scope with [`lend`](Scope::lend) cannot be
/// used in another (a nested one, say), whose account would not see it. Kernels,
/// launched through the `unsafe` [`launch`](Scope::launch), are outside this
/// bookkeeping: their arguments are raw pointers.
///
/// Device buffers are lent shared, and device memory is not Rust memory: a
/// synchronous copy into a device buffer inside the scope runs on the legacy
/// stream, unordered with the queued work, and may see or leave torn data.
/// That is a logic error, not undefined behaviour (every element type takes
/// any bits); the plans of `memplan!` rule it out.
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
        accesses: RefCell::new(Accesses::default()),
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
    /// Streams with queued work, to wait for at the end. A stream's index
    /// here is its lane in `accesses`.
    streams: RefCell<Vec<&'env Stream>>,
    /// What the queued copies and fills touch, and what orders them.
    accesses: RefCell<Accesses>,
    /// Invariant in `'env`, so that loans cannot be shortened.
    env: PhantomData<&'env mut &'env ()>,
}

/// A point of a stream, marked by [`Scope::record`], that other streams of
/// the scope can [`wait`](Scope::wait) for. It keeps its event lent to the
/// scope: recording the event again, which would move the point, waits
/// until every copy of this token is gone.
#[derive(Clone, Copy, Debug)]
pub struct Recorded<'e> {
    event: &'e Event,
    mark: Mark,
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
        let (src, dst) = (src.into(), dst.into());
        // A buffer lent to an enclosing scope is in that scope's account,
        // not this one's, which could not order its use here.
        let ours = self.accesses.borrow().scope();
        if [src.scope, dst.scope]
            .iter()
            .flatten()
            .any(|&scope| scope != ours)
        {
            return Err(Fault::Unsupported(
                "the buffer is lent to another scope; use it there, or lend it to this one",
            ))
            .at("Scope::copy", at);
        }
        let (src, mut dst) = (src.side, dst.side);
        let (from, to) = (
            src.resolve(src_range).at("Scope::copy", at)?,
            dst.resolve(dst_range).at("Scope::copy", at)?,
        );
        let uses = [Use::read(src.span(&from)), Use::write(dst.span(&to))];
        self.queue(stream, &uses, "Scope::copy", at)?;
        // SAFETY: both sides are borrowed for `'env`, which outlasts the
        // wait at the end of the scope; host targets exclusively.
        let queued = unsafe {
            match (&src, &mut dst) {
                (Side::Host(src), Side::Device(dst)) => {
                    copy::htod_async(stream, src, from, dst, to)
                }
                (Side::Device(src), Side::Host(dst)) => {
                    copy::dtoh_async(stream, src, from, dst, to)
                }
                (Side::Device(src), Side::Device(dst)) => {
                    copy::dtod_async(stream, src, from, dst, to)
                }
                (Side::Host(src), Side::Host(dst)) => copy::htoh_async(stream, src, from, dst, to),
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
        let at = Location::caller();
        let side = Side::<HostView<T>, _>::Device(device_view(dst));
        self.queue(
            stream,
            &[Use::write(side.span(&(0..dst.len())))],
            "Scope::fill",
            at,
        )?;
        // SAFETY: `dst` is borrowed for `'env`, past the wait.
        unsafe { fill::fill_async(stream, dst, .., value) }
            .map(drop)
            .at("Scope::fill", at)
    }

    /// Queues a kernel launch on `stream`.
    ///
    /// # Safety
    /// As for [`Kernel::launch`]; the memory the kernel reaches must stay
    /// allocated and untouched by the host until the scope ends (borrow it
    /// for the scope, with [`lend`](Self::lend) for host memory), and be
    /// ordered with the scope's other work on it.
    #[track_caller]
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        stream: &'env Stream,
        kernel: &'env Kernel,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        self.lane(stream);
        // SAFETY: forwarded to the caller.
        unsafe { kernel.launch(stream, config, args) }.at("Scope::launch", Location::caller())
    }

    /// Records `event` at the current end of `stream`, for other streams of
    /// the scope to [`wait`](Self::wait) for. The event stays lent while the
    /// returned token lives, so nothing records it elsewhere meanwhile.
    #[track_caller]
    pub fn record<'e>(&self, event: &'e mut Event, stream: &'env Stream) -> Result<Recorded<'e>> {
        let lane = self.lane(stream);
        let event: &'e Event = event;
        event.record(stream)?;
        let mark = self.accesses.borrow_mut().record(lane);
        Ok(Recorded { event, mark })
    }

    /// Makes later work on `stream` wait until the point `recorded` marks.
    #[track_caller]
    pub fn wait(&self, stream: &'env Stream, recorded: Recorded<'_>) -> Result<()> {
        let at = Location::caller();
        let lane = self.lane(stream);
        if !self.accesses.borrow_mut().wait(lane, recorded.mark) {
            return Err(Fault::Unsupported(
                "the event was recorded in another scope",
            ))
            .at("Scope::wait", at);
        }
        stream.wait(recorded.event)
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
            scope: self.accesses.borrow().scope(),
            loan: PhantomData,
        }
    }

    /// The lane of `stream`, which the scope waits for at its end.
    fn lane(&self, stream: &'env Stream) -> usize {
        let mut streams = self.streams.borrow_mut();
        match streams.iter().position(|s| s.raw() == stream.raw()) {
            Some(lane) => lane,
            None => {
                streams.push(stream);
                streams.len() - 1
            }
        }
    }

    /// Enters an operation on `stream` making `uses` into the bookkeeping,
    /// or refuses it.
    fn queue(
        &self,
        stream: &'env Stream,
        uses: &[Use],
        operation: &'static str,
        at: Location,
    ) -> Result<()> {
        let lane = self.lane(stream);
        self.accesses
            .borrow_mut()
            .queue(lane, uses, at)
            .map_err(|other| Fault::Unordered { other })
            .at(operation, at)
    }

    fn wait_all(&self) -> Result<()> {
        wait_all(self.streams.borrow().iter().copied())
            .at("cuStreamSynchronize (end of scope)", Location::caller())
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
    /// The scope it is lent to.
    scope: u64,
    loan: PhantomData<&'env mut [T]>,
}

/// The source of a queued copy: a host or device buffer borrowed for the scope.
pub struct Source<'env, T> {
    side: Side<HostView<T>, DeviceView<T>>,
    /// The scope a lent buffer belongs to.
    scope: Option<u64>,
    loan: PhantomData<&'env [T]>,
}

/// The target of a queued copy: a host buffer borrowed exclusively for the
/// scope, or a device buffer.
pub struct Target<'env, T> {
    side: Side<HostView<T>, DeviceView<T>>,
    /// The scope a lent buffer belongs to.
    scope: Option<u64>,
    loan: PhantomData<&'env mut [T]>,
}

enum Side<H, D> {
    Host(H),
    Device(D),
}

impl<T: Element> Side<HostView<T>, DeviceView<T>> {
    /// `range` of this side as `start..end`, checked against its length.
    fn resolve(&self, range: impl RangeBounds<usize>) -> Result<Range<usize>, Fault> {
        let len = match self {
            Side::Host(host) => host.len,
            Side::Device(device) => device.len,
        };
        resolve(range, len)
    }

    /// The addresses `range` (resolved) covers: host addresses for host
    /// memory, device addresses for device memory, which unified
    /// addressing keeps apart.
    fn span(&self, range: &Range<usize>) -> Range<u64> {
        let base = match self {
            Side::Host(host) => host.ptr as u64,
            Side::Device(device) => device.ptr.as_raw(),
        };
        let size = size_of::<T>() as u64;
        base + range.start as u64 * size..base + range.end as u64 * size
    }
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
                Source { side: Side::Host(host_view(buffer)), scope: None, loan: PhantomData }
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
                Target { side: Side::Host(host_view_mut(buffer)), scope: None, loan: PhantomData }
            }
        }
    )*};
}
host_targets!([T], Vec<T>, PinnedBuffer<T>, Registered<'_, T>);

impl<'env, T: Element> From<&'env DeviceBuffer<T>> for Source<'env, T> {
    fn from(buffer: &'env DeviceBuffer<T>) -> Self {
        Source {
            side: Side::Device(device_view(buffer)),
            scope: None,
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
            scope: None,
            loan: PhantomData,
        }
    }
}

impl<'env, T: Element> From<Lent<'env, T>> for Source<'env, T> {
    fn from(lent: Lent<'env, T>) -> Self {
        Source {
            side: Side::Host(lent.view),
            scope: Some(lent.scope),
            loan: PhantomData,
        }
    }
}

impl<'env, T: Element> From<Lent<'env, T>> for Target<'env, T> {
    fn from(lent: Lent<'env, T>) -> Self {
        Target {
            side: Side::Host(lent.view),
            scope: Some(lent.scope),
            loan: PhantomData,
        }
    }
}
