//! The plan type's fields, and how `new` creates each one.

use super::names;
use super::sites::{Setup, setup};
use crate::ir::{BufferKind, ParamKind, Plan, Priority};
use proc_macro2::TokenStream;
use quote::quote;

/// `name: Type` for every field of the plan struct.
pub fn declarations(plan: &Plan) -> Vec<TokenStream> {
    let mut fields = Vec::new();
    for param in &plan.params {
        let name = &param.name;
        match &param.kind {
            ParamKind::Size => fields.push(quote!(#name: usize)),
            ParamKind::Value(ty) => fields.push(quote!(#name: #ty)),
            ParamKind::Slice(_) => {}
        }
    }
    for buffer in &plan.buffers {
        let (name, elem) = (&buffer.name, &buffer.elem);
        match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => {
                fields.push(quote!(#name: ::std::vec::Vec<#elem>))
            }
            BufferKind::Host(_) => fields.push(quote!(#name: ::memplan::PinnedBuffer<#elem>)),
            BufferKind::Device => fields.push(quote!(#name: ::memplan::DeviceBuffer<#elem>)),
            BufferKind::Param { .. } | BufferKind::StreamOrdered { .. } => {}
        }
    }
    for kernel in &plan.kernels {
        let name = &kernel.name;
        fields.push(quote!(#name: ::memplan::Kernel));
    }
    for stream in &plan.streams {
        let name = &stream.name;
        fields.push(quote!(#name: ::memplan::Stream));
    }
    for event in &plan.events {
        fields.push(quote!(#event: ::memplan::Event));
    }
    let core = names::core();
    fields.push(quote!(#core: ::memplan::plan::PlanCore));
    fields
}

/// The body of `new`: loads each module once, then builds the struct,
/// field by field; a failure drops what was made before it.
pub fn constructor(plan: &Plan, setup_sites: &Setup) -> TokenStream {
    let context = names::local("__memplan_context");
    let modules: Vec<_> = (0..plan.modules.len())
        .map(|m| names::local(&format!("__memplan_module_{m}")))
        .collect();
    let loads = plan.modules.iter().zip(&modules).map(|(path, local)| {
        // A module's load errors are reported at its first kernel.
        let first = plan
            .kernels
            .iter()
            .position(|k| plan.modules[k.module] == *path)
            .unwrap_or(0);
        let site = setup(setup_sites.kernels.get(first).copied().unwrap_or(0));
        quote!(let #local = ::memplan::Module::from_fatbin(#context, #path).at_op(#site)?;)
    });

    let mut inits = Vec::new();
    for (id, buffer) in plan.buffers.iter().enumerate() {
        let (name, elem) = (&buffer.name, &buffer.elem);
        let Some(len) = &buffer.len_expr else {
            continue;
        };
        let Some(site) = setup_sites.buffers[id].map(setup) else {
            continue;
        };
        let create = match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => {
                quote!(::core::result::Result::<_, ::memplan::Error>::Ok(::memplan::plan::pageable::<#elem>(#len)))
            }
            BufferKind::Host(kind) => {
                let mut flags = Vec::new();
                for (set, flag) in [
                    (kind.mapped, "MAPPED"),
                    (kind.write_combined, "WRITE_COMBINED"),
                    (kind.portable, "PORTABLE"),
                ] {
                    if set {
                        let flag = proc_macro2::Ident::new(flag, proc_macro2::Span::call_site());
                        flags.push(quote!(::memplan::HostAlloc::#flag));
                    }
                }
                let flags = if flags.is_empty() {
                    quote!(::memplan::HostAlloc::PINNED)
                } else {
                    quote!(#(#flags)|*)
                };
                quote!(::memplan::PinnedBuffer::<#elem>::with_flags(#context, #len, #flags))
            }
            BufferKind::Device => quote!(::memplan::DeviceBuffer::<#elem>::new(#context, #len)),
            BufferKind::Param { .. } | BufferKind::StreamOrdered { .. } => continue,
        };
        inits.push(quote!(#name: #create.at_op(#site)?));
    }
    for (kernel, site) in plan.kernels.iter().zip(&setup_sites.kernels) {
        let (name, module, site) = (&kernel.name, &modules[kernel.module], setup(*site));
        // The kernel's symbol: `r#loop` is `loop`.
        let entry = syn::ext::IdentExt::unraw(name).to_string();
        inits.push(quote!(#name: #module.kernel(#entry).at_op(#site)?));
    }
    for (stream, site) in plan.streams.iter().zip(&setup_sites.streams) {
        let (name, site) = (&stream.name, setup(*site));
        let priority = match stream.priority {
            Priority::Normal => quote!(::memplan::Priority::Normal),
            Priority::High => quote!(::memplan::Priority::High),
            Priority::Level(level) => quote!(::memplan::Priority::Level(#level)),
        };
        inits.push(
            quote!(#name: ::memplan::Stream::with_priority(#context, #priority).at_op(#site)?),
        );
    }
    for (event, site) in plan.events.iter().zip(&setup_sites.events) {
        let site = setup(*site);
        inits.push(quote!(#event: ::memplan::Event::new(#context).at_op(#site)?));
    }
    let core = names::core();
    let plan_name = plan.name.to_string();
    inits.push(quote!(#core: ::memplan::plan::PlanCore::new(#plan_name, #context)));
    // Parameters last: lengths above may read them.
    for param in &plan.params {
        if !matches!(param.kind, ParamKind::Slice(_)) {
            let name = &param.name;
            inits.push(quote!(#name));
        }
    }
    // Value parameters are copied into every run; say so at their type.
    let copy_checks = plan.params.iter().filter_map(|param| match &param.kind {
        ParamKind::Value(ty) => {
            let span = syn::spanned::Spanned::span(ty);
            Some(quote::quote_spanned!(span=> ::memplan::plan::assert_copy::<#ty>();))
        }
        _ => None,
    });
    quote! {
        #(#copy_checks)*
        #(#loads)*
        ::core::result::Result::Ok(Self { #(#inits,)* })
    }
}
