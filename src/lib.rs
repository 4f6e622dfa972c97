//! memplan: declare a CUDA transfer plan once, have it checked while the
//! program compiles, and run it as plain driver calls.
//!
//! This crate is the facade: the [`memplan!`] macro and everything of
//! [memplan-runtime](memplan_runtime) (buffers, streams, events, kernels,
//! graphs, errors), which plans are lowered to and which you can also use by
//! hand.

pub use memplan_macros::memplan;
pub use memplan_runtime::*;

/// The names a program that writes plans needs: `use memplan::prelude::*;`.
pub mod prelude {
    pub use crate::memplan;
    pub use memplan_runtime::{
        Context, DeviceBuffer, Error, Event, HostAlloc, PinnedBuffer, Priority, Registered, Result,
        RunReport, Stream,
    };
}
