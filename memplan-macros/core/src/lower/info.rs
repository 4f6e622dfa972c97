//! The plan's static description (`memplan::__private::PlanInfo`): its
//! model, written out, and beside it what only the user's crate can name,
//! each buffer's element type and each kernel's compiled code.

use super::names::{info, private};
use crate::ir::Plan;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The static `PlanInfo` of `plan`, whose model is `model` and whose
/// kernels' code is `code` (`kernels::lower`'s); nothing for a plan with
/// errors, which has no model.
pub fn plan_static(
    plan: &Plan,
    model: Option<&memplan_model::Plan<'_>>,
    code: &[TokenStream],
) -> TokenStream {
    let Some(model) = model else {
        return TokenStream::new();
    };
    let private = private();
    let names = memplan_model::names_from(&quote!(#private::model));
    let elems = plan.buffers.iter().map(|buffer| {
        let elem = &buffer.elem;
        quote_spanned!(elem.span()=> #private::elem::<#elem>())
    });
    let info = info();
    quote! {
        static #info: #private::PlanInfo = #private::PlanInfo {
            model: {
                #names
                #model
            },
            file: ::core::file!(),
            elems: &[#(#elems),*],
            code: &[#(#code),*],
        };
    }
}
