//! The driver, behind one layer: the only module that calls it.
//!
//! Three levels, as in cudarc (`sys` -> `result` -> safe): [`ffi`] declares
//! the driver's functions; [`error`] turns the statuses they return into
//! [`DriverError`]s; the files by topic wrap each call in a function that
//! takes and returns Rust values (out-parameters become return values) and
//! a `Result`. The rest of the crate, the safe level, calls only these
//! wrappers, so what is unsafe about a call is stated once, here, and every
//! status is checked the same way.
//!
//! Each wrapper makes exactly one driver call and is `#[inline]`: hot paths
//! (plan steps, copies, launches) compile to the call and its check, as if
//! written by hand. A wrapper is `unsafe` where its soundness rests on the
//! caller (raw pointers, handles that must be live, memory the GPU uses
//! later); its `# Safety` line says what. Special cases of a status (a
//! query's `NOT_READY`, an access already enabled) are left to the caller,
//! except where a status is an answer rather than a failure (`NOT_READY`
//! from a query is "not yet": those wrappers return `bool`).

mod context;
mod copy;
mod early;
mod error;
mod event;
mod ffi;
mod graph;
mod memory;
mod module;
mod stream;

pub(crate) use context::*;
pub(crate) use copy::*;
pub(crate) use early::*;
pub use error::DriverError;
pub(crate) use event::*;
pub(crate) use graph::*;
pub(crate) use memory::*;
pub(crate) use module::*;
pub(crate) use stream::*;
