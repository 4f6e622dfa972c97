//! From IR to Rust: the plan becomes a struct that owns every buffer,
//! stream, event and kernel, with `new`, `run`, `enqueue`, `graph` and host
//! views, calling only memplan-runtime's public API.

mod diagram;
mod fields;
mod methods;
mod names;
mod ops;
mod sites;
mod warnings;

pub use diagram::{mermaid, summary};

use crate::check::Analysis;
use crate::ir::Plan;
use proc_macro2::TokenStream;
use quote::quote;

/// What the function that queues the ops holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// The ops.
    Ops,
    /// Nothing that runs: the plan has errors, so the program will not be
    /// built, but its type (fields, methods, views) still exists for the
    /// code that uses it.
    Placeholder,
}

pub fn lower(plan: &Plan, analysis: &Analysis, bodies: Bodies) -> TokenStream {
    let setup = sites::Setup::new(plan);
    let (attrs, vis, name) = (&plan.attrs, &plan.vis, &plan.name);
    let fields = fields::declarations(plan);
    let plan_doc = format!(
        "\n\n# Plan\n\n```text\n{}```\n\n`{name}::DIAGRAM` holds it as a Mermaid flowchart.",
        diagram::summary(plan)
    );
    let views = methods::host_view_types(plan);
    let impl_block = methods::impl_block(plan, &setup, bodies);
    let traits = methods::trait_impls(plan);
    let warnings = warnings::emit(&analysis.warnings);
    let items = with_conditions(attrs, quote!(#views #impl_block #traits #warnings));
    quote! {
        #(#attrs)*
        #[doc = #plan_doc]
        #vis struct #name {
            #(#fields,)*
        }

        #items
    }
}

/// `items`, each under the plan's `#[cfg]` and `#[cfg_attr]` attributes, so
/// that a plan compiled out takes its impls and views with it.
fn with_conditions(attrs: &[syn::Attribute], items: TokenStream) -> TokenStream {
    let conditions: Vec<&syn::Attribute> = attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"))
        .collect();
    if conditions.is_empty() {
        return items;
    }
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(mut file) => {
            for item in &mut file.items {
                if let Some(item_attrs) = item_attrs(item) {
                    item_attrs.extend(conditions.iter().map(|&a| a.clone()));
                }
            }
            quote!(#file)
        }
        Err(_) => items,
    }
}

fn item_attrs(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        syn::Item::Struct(item) => Some(&mut item.attrs),
        syn::Item::Impl(item) => Some(&mut item.attrs),
        syn::Item::Const(item) => Some(&mut item.attrs),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;

    fn lowered(text: &str, bodies: Bodies) -> String {
        let input: crate::syntax::Input = syn::parse_str(text).unwrap();
        let errors = Errors::new();
        let plan = crate::ir::build(&input.plans[0], &errors);
        let analysis = crate::check::run(&plan, &errors);
        errors.finish().unwrap();
        lower(&plan, &analysis, bodies).to_string()
    }

    const PLAN: &str = "plan P(n: usize) {
        host a: [f32; n] pinned(mapped, portable);
        device d: [f32; n];
        stream s;
        copy a -> d;
        on s { copy d -> a; }
    }";

    #[test]
    fn stream_ops_queue_and_host_ops_wait() {
        let code = lowered(PLAN, Bodies::Ops);
        assert!(
            code.contains(":: memplan :: copy :: htod (& __memplan_this . a"),
            "{code}"
        );
        assert!(
            code.contains(":: memplan :: copy :: dtoh_async (& __memplan_this . s"),
            "{code}"
        );
    }

    #[test]
    fn flags_become_one_allocation() {
        let code = lowered(PLAN, Bodies::Ops);
        assert!(
            code.contains("HostAlloc :: MAPPED | :: memplan :: HostAlloc :: PORTABLE"),
            "{code}"
        );
    }

    #[test]
    fn plans_with_host_ops_are_not_captured() {
        let code = lowered(PLAN, Bodies::Ops);
        assert!(
            code.contains("Fault :: Unsupported"),
            "graph() should refuse: {code}"
        );
    }

    #[test]
    fn a_placeholder_keeps_the_type_and_drops_the_ops() {
        let code = lowered(PLAN, Bodies::Placeholder);
        assert!(
            code.contains("pub fn new") && code.contains("pub fn host_mut"),
            "{code}"
        );
        assert!(!code.contains("htod"), "{code}");
        assert!(code.contains("unreachable !"), "{code}");
    }
}
