//! Warnings on stable Rust: a `#[deprecated]` item used at the user's span
//! makes rustc print the note as a warning there (the trick of the
//! `proc-macro-warning` crate). `#[allow(deprecated)]` silences them, and
//! `#![deny(warnings)]` makes them errors, as with any warning.

use crate::check::Warning;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

pub fn emit(warnings: &[Warning]) -> TokenStream {
    if warnings.is_empty() {
        return TokenStream::new();
    }
    let items = warnings.iter().enumerate().map(|(index, warning)| {
        let item = Ident::new(&format!("__memplan_warning_{index}"), Span::call_site());
        let note = &warning.message;
        let usage = quote_spanned!(warning.span=> #item);
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
