//! memplan: declare a CUDA transfer plan once, have it checked while the
//! program compiles, and run it as plain driver calls.
//!
//! This crate is the facade: the [`memplan!`] macro (its language is
//! described in [`language`]) and everything of
//! [memplan-runtime](memplan_runtime) (buffers, streams, events, kernels,
//! graphs, errors), which plans are lowered to and which you can also use by
//! hand.

#![warn(missing_docs)]

pub mod language;

pub use memplan_runtime::*;

/// Declares one or more transfer plans; the language is described in
/// [`language`].
///
/// It hands the plans to memplan's procedural macro with the path to this
/// crate as `$crate` sees it, which no other crate can rename: the code a
/// plan becomes reaches memplan's items through it, whatever the invoking
/// crate calls `memplan`.
#[macro_export]
macro_rules! memplan {
    ($($plans:tt)*) => {
        $crate::__private::expand_plans! { $crate; $($plans)* }
    };
}

/// What the code `memplan!` generates calls; see `memplan_runtime::__private`.
#[doc(hidden)]
pub mod __private {
    pub use memplan_macros::expand_plans;
    pub use memplan_runtime::__private::*;
}

/// The names a program that writes plans needs: `use memplan::prelude::*;`.
pub mod prelude {
    pub use crate::memplan;
    pub use memplan_runtime::{
        Context, DeviceBuffer, DeviceModel, Error, Event, HostAlloc, PinnedBuffer, Priority,
        Registered, Replay, Result, RunReport, Stream, Timeline,
    };
}
