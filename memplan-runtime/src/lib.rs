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
//! - [`Stream`], [`Event`], [`Module`] (from an [`Image`]), [`Kernel`],
//!   [`Graph`].
//! - Several GPUs: [`Context::enable_peer_access`], [`copy_peer`] and
//!   [`copy_peer_async`]; [`nccl`]'s communicators and collectives.
//! - [`Error`]: every failure names its operation and source location.
//! - [`Plan`], [`InFlight`], [`PlanGraph`]: what the plan types of
//!   `memplan!` are built on.
//!
//! It calls the driver from one module, through typed wrappers over its own
//! declarations of the driver's functions (with the types of `cust::sys`,
//! cust 0.3.2's raw bindings), and uses cust's
//! [`DeviceCopy`](cust::memory::DeviceCopy). cust's safe
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
//! kernel's C++ signature is your promise), stream-ordered allocation,
//! graph capture and launch, and module images of unknown origin. Each says
//! what its caller promises.

#![warn(missing_docs)]

mod context;
pub mod copy;
mod cupti;
mod declaration;
mod device;
mod device_model;
mod driver;
mod dynamic;
mod error;
mod event;
pub mod fill;
mod graph;
mod host;
mod image;
mod kernel;
mod layout;
mod memory;
pub mod nccl;
mod op;
mod peer;
mod plan;
mod report;
mod scope;
mod stream;
mod svg;
mod timeline;
mod timer;
mod trace;
mod vector;

pub use context::Context;
pub use device::{DeviceBuffer, StreamOrderedBuffer};
pub use device_model::DeviceModel;
pub use driver::DriverError;
pub use error::{Error, Fault, Location, Result, ResultExt};
pub use event::Event;
pub use graph::{Capture, Graph};
pub use host::{HostAlloc, PinnedBuffer, Registered, RegisteredRef};
pub use image::{Aligned, Image};
pub use kernel::{Dim3, Kernel, KernelArgs, KernelValue, LaunchConfig, Module, blocks};
pub use memory::{DeviceAddress, DeviceMemory, DevicePtr, Element, HostMemory, HostMemoryMut};
pub use memplan_model::{
    CParam, CScalar, Contract, ContractAccess, ExtentTerm, KernelSignature, WaitsFirst,
};
pub use memplan_model::{ParamLayout, ParamSlot};
pub use op::{OpInfo, OpKind};
pub use peer::{copy_peer, copy_peer_async};
pub use plan::{Checked, GRAPHS_KEPT, HostView, HostViewMut, InFlight, Plan, PlanGraph, Replay};
pub use report::{Clock, HostSpan, OpTiming, Replayed, RunReport};
pub use scope::{Lent, Recorded, Scope, Source, Target, scope};
pub use stream::{Priority, Stream};
pub use timeline::Timeline;
pub use timer::Timing;
pub use vector::{Double2, Float2, Float4, Int2, Int4, UInt2, UInt4};

/// Includes the kernels `memplan-build` compiled for this crate: a
/// `pub static` [`Image`] per `.cu` file, named after it (`blur.cu` becomes
/// `BLUR`), with its kernels' signatures and contracts. Write it where the
/// images should live, at a module's top level:
///
/// ```text
/// memplan::include_kernels!();
/// ```
///
/// Each image is made with `unsafe` ([`Image::from_build`]: the build
/// step's promise that nvcc wrote its bytes), which the generated code
/// states in your crate, where `#![forbid(unsafe_code)]` sees it. A crate
/// that forbids `unsafe` keeps its kernels in a sibling crate whose
/// `lib.rs` is this one line (as `memplan-kernels` is, beside memplan) and
/// depends on it; its plans then name the images through it
/// (`my_kernels::BLUR`).
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/memplan_kernels.rs"));
    };
}

/// The traits behind [`Element`].
pub use bytemuck;
/// The driver bindings memplan calls, for what it does not wrap.
pub use cust::sys;

/// What the code `memplan!` generates calls: not public API, outside
/// semver, hidden from the documentation. Everything here is safe to call
/// from any code in any order, except [`Engine::new`](plan::Engine::new),
/// whose promise only the macro can keep.
#[doc(hidden)]
pub mod __private {
    pub use crate::__plan_methods as plan_methods;
    pub use crate::__plan_views as plan_views;
    pub use crate::declaration::{
        Access, Declared, DeclaredParam, Message, RustScalar, RustType, Verdict, check_kernel,
        fails_with, kernel_symbol, promise_kernel_matches, rust_type, str_eq,
    };
    pub use crate::host::HostAlloc;
    pub use crate::kernel::KernelValue;
    pub use crate::nccl::{Rank, ReduceOp};
    pub use crate::plan::{
        Builder, Checker, Elem, Engine, KernelCode, ParamType, PlanInfo, RunGiven, Slice, copied,
        elem, pick,
    };
    /// The public items generated code names: through this module, which
    /// the generated code reaches by the path its macro was invoked with.
    pub use crate::{
        Checked, Context, DeviceModel, HostView, HostViewMut, Image, InFlight, PinnedBuffer, Plan,
        PlanGraph, RunReport, Timing, blocks,
    };
    pub use crate::{Fault, Result};
    /// The plan's model, which the generated `PlanInfo` holds.
    pub use memplan_model as model;
    pub use memplan_model::ExtentTerm;
    pub use memplan_model::ParamLayout;
}
