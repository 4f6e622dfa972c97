//! The plan's static description (`memplan::__private::PlanInfo`): its
//! model, written out, and beside it what only the user's crate can name,
//! each buffer's element type and each kernel's compiled code.

use super::names::private;
use crate::ir::{KernelParamKind, Plan};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The `PlanInfo` value of `plan`, whose model is `model`.
pub fn value(plan: &Plan, model: &memplan_model::Plan<'_>) -> TokenStream {
    let private = private();
    let names = memplan_model::names_from(&quote!(#private::model));
    let elems = plan.buffers.iter().map(|buffer| {
        let elem = &buffer.elem;
        quote_spanned!(elem.span()=> #private::elem::<#elem>())
    });
    let code = plan.kernels.iter().enumerate().map(|(index, kernel)| {
        let entry = super::kernels::symbol(plan, index);
        let path = &plan.modules[kernel.module];
        let module = quote_spanned!(path.span()=> &#path);
        let params = kernel.params.iter().map(|param| match &param.kind {
            KernelParamKind::Slice { .. } => quote!(#private::ParamType::POINTER),
            KernelParamKind::Value(ty) => {
                quote_spanned!(ty.span()=> #private::ParamType::of::<#ty>())
            }
        });
        quote!(#private::KernelCode::new(#entry, #module, &[#(#params),*]))
    });
    quote! {
        #private::PlanInfo {
            model: {
                #names
                #model
            },
            file: ::core::file!(),
            elems: &[#(#elems),*],
            code: &[#(#code),*],
        }
    }
}
