//! The `memplan!` macro. This crate is a shell: the language lives in
//! `memplan-macros-core`, a plain library that is tested without a compiler.
//! The language reference is the `memplan` crate's
//! [`language`](https://docs.rs/memplan/latest/memplan/language/index.html).

#![warn(missing_docs)]

use proc_macro::TokenStream;

/// What the `memplan` crate's `memplan!` forwards to, with the path to
/// itself first (`$crate; plans...`); see the `memplan` crate's docs.
#[doc(hidden)]
#[proc_macro]
pub fn expand_plans(input: TokenStream) -> TokenStream {
    memplan_macros_core::expand_plans(input.into()).into()
}
