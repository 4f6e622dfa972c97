//! Names of generated things, and how generated code writes numbers.
//!
//! Generated locals and parameters use `Span::mixed_site()`, so user code
//! inside the plan (lengths, fill values, launch arguments, host steps) can
//! neither see nor shadow them. Generated items start with `__memplan` or
//! `__Memplan`, which plans may not use for their own names.

use proc_macro2::{Ident, Span};

/// A hygienic local of the generated code.
pub fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The struct of the plan's host buffers (and, for host steps, its sizes
/// and values), inside the plan's `const _` block.
pub fn state() -> Ident {
    Ident::new("__MemplanState", Span::call_site())
}

/// The function that runs the plan's host steps, inside its `const _`
/// block, beside the `impl memplan::Plan` that calls it.
pub fn host_step() -> Ident {
    Ident::new("__memplan_host_step", Span::call_site())
}

/// The plan's static description, inside its `const _` block.
pub fn info() -> Ident {
    Ident::new("__MEMPLAN_PLAN", Span::call_site())
}

/// `memplan::__private`, as the `const _` block imports it.
pub fn private() -> Ident {
    Ident::new("__memplan", Span::call_site())
}

/// A number as it would be written by hand: `3`, not `3u16`.
pub fn number(value: impl TryInto<u64>) -> proc_macro2::Literal {
    proc_macro2::Literal::u64_unsuffixed(value.try_into().unwrap_or(u64::MAX))
}
