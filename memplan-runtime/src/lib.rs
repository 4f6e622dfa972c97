//! memplan-runtime: the CUDA calls memplan's plans are made of, usable by
//! hand too.
//!
//! - Host memory: pageable (`[T]`, `Vec<T>`), [`PinnedBuffer`] (pinned,
//!   mapped, write-combined, portable), [`Registered`] (your slice,
//!   page-locked for a while).
//! - Device memory: [`DeviceBuffer`] (`cuMemAlloc`) and
//!   [`StreamOrderedBuffer`] (`cuMemAllocAsync`).
//! - [`copy`] and [`fill`]: synchronous (safe) and queued (`unsafe`)
//!   transfers; [`scope`] queues them safely.
//! - [`Stream`], [`Event`], [`Module`], [`Kernel`], [`Graph`].
//! - [`Error`]: every failure names its operation and source location.
//!
//! It calls the driver through `cust::sys` (cust 0.3.2's raw bindings) and
//! uses cust's [`DeviceCopy`](cust::memory::DeviceCopy). cust's safe
//! wrappers are not used, for reasons that are also traps for anyone writing
//! CUDA in Rust: `Stream::new` drops `CU_STREAM_NON_BLOCKING`,
//! `Stream::wait_event` consumes the event, errors lose codes newer than
//! cust (a stub driver's `CUDA_ERROR_STUB_LIBRARY` becomes `UnknownError`),
//! and `Function` borrows its `Module`, which a plan that owns both cannot
//! express.
//!
//! # Keeping queued work sound
//! A queued copy reads or writes host memory after the call that queued it
//! returns. The bug that follows (freeing, dropping or changing a host buffer
//! while a copy still uses it, as in cudarc's issues 314 and 340) is ruled
//! out by borrowing: [`scope`] lends every buffer it queues work on for the
//! whole scope, and waits for the work before the loans end, as
//! `std::thread::scope` does for threads. Plans do the same at compile time
//! and own their buffers. What stays `unsafe` is what the borrow checker
//! cannot see: the raw `_async` copies and fills, kernel launches (the
//! kernel's C++ signature is your promise), stream-ordered allocation, and
//! graph capture and launch. Each says what its caller promises.

mod context;
pub mod copy;
mod device;
mod driver;
mod error;
mod event;
pub mod fill;
mod graph;
mod host;
mod image;
mod kernel;
mod memory;
pub mod plan;
mod scope;
mod stream;
mod timing;
mod trace;

pub use context::Context;
pub use device::{DeviceBuffer, StreamOrderedBuffer};
pub use error::{DriverError, Error, Fault, Location, Result, ResultExt};
pub use event::Event;
pub use graph::{Capture, Graph};
pub use host::{HostAlloc, PinnedBuffer, Registered, RegisteredRef};
pub use kernel::{Dim3, Kernel, KernelArgs, LaunchConfig, Module, blocks};
pub use memory::{
    DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut, resolve,
};
pub use scope::{Lent, Scope, Source, Target, scope};
pub use stream::{Priority, Stream};
pub use timing::{IntoOpError, OpInfo, OpKind, OpResultExt, OpTiming, RunReport, Timer};

/// The traits behind [`Element`].
pub use bytemuck;
/// The driver bindings memplan calls, for what it does not wrap.
pub use cust::sys;
