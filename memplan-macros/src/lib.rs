//! The `memplan!` macro. This crate is a shell: the language lives in
//! `memplan-macros-core`, a plain library that is tested without a compiler.
//! See the `memplan` crate for the language reference.

use proc_macro::TokenStream;

/// Declares one or more transfer plans; see the `memplan` crate's docs.
#[proc_macro]
pub fn memplan(input: TokenStream) -> TokenStream {
    memplan_macros_core::expand(input.into()).into()
}
