//! memplan: declare a CUDA transfer plan once, have it checked while the
//! program compiles, and run it as plain driver calls.
//!
//! This crate is the facade: the [`memplan!`] macro (its language is
//! described in [`language`]) and everything of
//! [memplan-runtime](memplan_runtime) (buffers, streams, events, kernels,
//! graphs, errors), which plans are lowered to and which you can also use by
//! hand.

pub mod language;

/// Declares one or more transfer plans; the language is described in
/// [`language`].
pub use memplan_macros::memplan;
pub use memplan_runtime::*;

/// The names a program that writes plans needs: `use memplan::prelude::*;`.
pub mod prelude {
    pub use crate::memplan;
    pub use memplan_runtime::{
        Context, DeviceBuffer, Error, Event, HostAlloc, PinnedBuffer, Priority, Registered, Result,
        RunReport, Stream, Timeline,
    };
}
