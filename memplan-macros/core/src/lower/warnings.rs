//! Warnings on stable Rust, as rustc's own: a buffer, stream or event
//! nothing uses is an unused variable of its name, at its name (`unused
//! variable: `spare``, with rustc's help to prefix it with `_`, which the
//! plan honours), and a kernel nothing launches an unused function
//! (`function `process_data` is never used`). `#[allow(unused)]` silences
//! them, and `#![deny(warnings)]` makes them errors, as with any warning.
//!
//! They live in a module without the prelude, where no name is in scope:
//! `let ref spare = ();` there binds `spare` even where the user's module
//! has a constant of that name (or the plan a buffer named `None`). The
//! bindings are in a module of their own inside it, so that no kernel's
//! function can collide with the function that holds them.

use crate::check::Warning;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

pub fn emit(warnings: &[Warning]) -> TokenStream {
    if warnings.is_empty() {
        return TokenStream::new();
    }
    // Every token at the declaration's name: rustc does not lint an item
    // that a macro of another crate made. `ref`: a binding, where for a
    // name such as `A` rustc would suggest a constant.
    let item = |warning: &Warning| {
        let name = &warning.name;
        match warning.is_kernel {
            true => quote_spanned!(name.span()=> fn #name() {}),
            false => quote_spanned!(name.span()=> let ref #name = ();),
        }
    };
    let kernels = warnings.iter().filter(|w| w.is_kernel).map(item);
    let others = warnings.iter().filter(|w| !w.is_kernel).map(item);
    // A name such as `A` is a declaration's like any other, not a style
    // mistake of a variable's: allowed, where there is one (an allow the
    // user's `forbid` refuses would be an error of its own).
    let snake_case = |w: &Warning| {
        let name = w.name.to_string();
        name.chars().all(|c| !c.is_uppercase())
    };
    let case = (!warnings.iter().all(snake_case)).then(|| quote!(#[allow(non_snake_case)]));
    quote! {
        const _: () = {
            #case
            mod __memplan_unused {
                #![no_implicit_prelude]
                #(#kernels)*
                mod declared {
                    #[allow(dead_code, clippy::toplevel_ref_arg)]
                    fn declared() {
                        #(#others)*
                    }
                }
            }
        };
    }
}
