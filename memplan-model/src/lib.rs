//! What a plan is, as one vocabulary for both sides of memplan: the macro
//! (`memplan-macros-core`) checks a plan and maps it to a [`Plan`] value,
//! which it writes into the user's crate as a `static` (through
//! `ToTokens`, behind the `tokens` feature); the runtime
//! (`memplan-runtime`) builds and runs the plan from that `static`.
//!
//! Everything here is plain data: declarations and ops numbered by their
//! position, every size as a small program over the plan's inputs
//! ([`Size`]), every op with the label and line it was written at
//! ([`Site`]). What only the user's crate can name (element types, the
//! compiled kernels) is not here: the runtime's `PlanInfo` holds it beside
//! the model. Nothing in a model is trusted by the runtime beyond what its
//! constructor checks: a model names declarations and sizes by number, and
//! every number is checked before it is used.
//!
//! A model borrows its lists (`'a`): the macro's for as long as it lowers
//! one plan, the runtime's for `'static`.
//!
//! Kernels' C++ signatures, as `memplan-build` reads them from nvcc
//! ([`KernelSignature`]), and the check of a plan's `kernel` declarations
//! against them ([`declaration`]) are here too: the runtime evaluates the
//! check in a constant of the user's crate, and the macro runs it on the
//! signatures the build step wrote, to word its errors.

#![warn(missing_docs)]

pub mod declaration;
mod declarations;
mod host_alloc;
mod op;
mod param;
mod plan;
mod rust_scalar;
mod signature;
pub mod signatures_file;
mod site;
mod size;
#[cfg(feature = "tokens")]
mod tokens;
#[cfg(feature = "tokens")]
pub use tokens::names_from;

pub use declarations::{
    Array, BoundInfo, BufferInfo, BufferKind, EventInfo, Gpu, GpusInfo, KernelInfo, LoopInfo,
    Priority, StreamInfo,
};
pub use host_alloc::HostAlloc;
pub use op::{
    Arg, CollectiveInfo, CollectiveKind, Dims, LaunchInfo, Op, OpDef, Place, ReduceOp, Shared,
    launch,
};
pub use param::{ParamLayout, ParamSlot};
pub use plan::Plan;
pub use rust_scalar::RustScalar;
pub use signature::{
    CParam, CScalar, Contract, ContractAccess, ExtentTerm, KernelSignature, WaitsFirst,
};
pub use site::Site;
pub use size::{Size, Term};
