//! Warnings on stable Rust: a `#[deprecated]` item used at the user's span
//! makes rustc print the note as a warning there (the trick of the
//! `proc-macro-warning` crate). `#[allow(deprecated)]` silences them, and
//! `#![deny(warnings)]` makes them errors, as with any warning.

use crate::check::Warning;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

pub fn emit(warnings: &[Warning]) -> TokenStream {
    if warnings.is_empty() {
        return TokenStream::new();
    }
    let items = warnings.iter().enumerate().map(|(index, warning)| {
        let name = format!("__memplan_warning_{index}");
        let item = Ident::new(&name, Span::call_site());
        let note = &warning.message;
        // The use carries the declaration's span: rustc reports it there.
        let usage = Ident::new(&name, warning.span);
        quote! {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #item: () = ();
            let _ = #usage;
        }
    });
    quote! {
        const _: () = {
            #[allow(dead_code)]
            fn __memplan_warnings() {
                #(#items)*
            }
        };
    }
}
