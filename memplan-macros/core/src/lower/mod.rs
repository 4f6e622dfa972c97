//! From IR to Rust: the plan becomes a struct holding the runtime's
//! engine, a static description of the plan that the engine builds and
//! runs it from, its host buffers as a typed struct, and the code that
//! evaluates the user's expressions. Everything else (running, waiting,
//! graphs, reports) lives once, in `memplan-runtime`.
//!
//! The description is made in two pure steps, then written: the sizes are
//! numbered (`sizes.rs`), then the IR is mapped to a `memplan_model::Plan`
//! (`model.rs`), which `info.rs` writes out with `quote`.

mod diagram;
mod given;
mod info;
mod kernels;
mod limits;
mod methods;
mod model;
mod names;
mod sizes;
mod warnings;

pub use diagram::{mermaid, summary};

use crate::check::Analysis;
use crate::ir::Plan;
use bumpalo::Bump;
use given::Givens;
use proc_macro2::TokenStream;
use quote::quote;

/// What the generated code holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// The plan.
    Ops,
    /// Nothing that runs: the plan has errors, so the program will not be
    /// built, but its type (methods, views) still exists for the code that
    /// uses it.
    Placeholder,
}

/// The plan's description: its model, and what `new` and each run give.
struct Description<'a> {
    model: memplan_model::Plan<'a>,
    /// The size inputs `new` passes.
    inputs: Vec<TokenStream>,
    givens: Givens,
}

fn describe<'a>(plan: &Plan, arena: &'a Bump) -> syn::Result<Description<'a>> {
    limits::check(plan)?;
    let sizes = sizes::Sizes::intern(plan)?;
    let givens = given::collect(plan, &sizes)?;
    Ok(Description {
        model: model::map(plan, &sizes, &givens, arena)?,
        inputs: sizes.new_inputs(),
        givens,
    })
}

/// The code of `plan`, reaching memplan by the path `krate`.
pub fn lower(krate: &TokenStream, plan: &Plan, analysis: &Analysis, bodies: Bodies) -> TokenStream {
    let (attrs, vis, name) = (&plan.attrs, &plan.vis, &plan.name);
    let arena = Bump::new();
    let description = match bodies {
        Bodies::Ops => match describe(plan, &arena) {
            Ok(description) => Some(description),
            Err(error) => return error.to_compile_error(),
        },
        Bodies::Placeholder => None,
    };
    let plan_doc = format!(
        "\n\n# Plan\n\n```text\n{}```\n\n`{name}::DIAGRAM` holds it as a Mermaid flowchart.",
        diagram::summary(plan)
    );
    let views = methods::views(plan, bodies);
    let (inputs, given, run_given) = match &description {
        Some(description) => (
            &description.inputs[..],
            &description.givens.new[..],
            &description.givens.run[..],
        ),
        None => (&[][..], &[][..], &[][..]),
    };
    let impl_block = methods::impl_block(plan, inputs, given, run_given, bodies);
    let private = names::private();
    let data = description.as_ref().map(|description| {
        let (state, info, value) = (
            methods::state_struct(plan),
            names::info(),
            info::value(plan, &description.model),
        );
        quote! {
            #state
            static #info: #private::PlanInfo = #value;
        }
    });
    let kernel_checks = kernels::checks(plan);
    let warnings = warnings::emit(&analysis.warnings);
    // Everything but the plan's type lives in a block of its own, so no
    // name of the user's can collide with the generated ones.
    let items = with_conditions(
        attrs,
        quote! {
            const _: () = {
                use #krate::__private as #private;
                #kernel_checks
                #data
                #impl_block
                #views
            };

            #warnings
        },
    );
    quote! {
        #(#attrs)*
        #[doc = #plan_doc]
        #vis struct #name(#krate::__private::Engine<#name>);

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

    /// `text`'s one plan, checked: its IR and what the checks found.
    pub(super) fn checked(text: &str) -> (Plan, Analysis) {
        let input: crate::syntax::Input = syn::parse_str(text).unwrap();
        let errors = Errors::new();
        let plan = crate::ir::build(&input.plans[0], &errors);
        let analysis = crate::check::run(&plan, &errors);
        errors.finish().unwrap();
        (plan, analysis)
    }

    fn lowered(text: &str, bodies: Bodies) -> String {
        let (plan, analysis) = checked(text);
        lower(&quote!(::memplan), &plan, &analysis, bodies).to_string()
    }

    pub(super) const PLAN: &str = "plan P(n: usize, k: usize) {
        host a: [f32; n] pinned(mapped, portable);
        device d: [f32; n];
        stream s;
        copy a[k..k + 1] -> d[..=0];
        on s { copy d[..1] -> a[..1]; }
    }";

    #[test]
    fn the_only_unsafe_block_holds_only_locals() {
        let code = lowered(PLAN, Bodies::Ops);
        assert_eq!(code.matches("unsafe").count(), 1, "{code}");
        assert!(
            code.contains("unsafe { __memplan :: Engine :: new (plan , state) }"),
            "{code}"
        );
    }

    #[test]
    fn a_placeholder_keeps_the_type_and_drops_the_plan() {
        let code = lowered(PLAN, Bodies::Placeholder);
        assert!(
            code.contains("pub fn new") && code.contains("plan_methods !"),
            "{code}"
        );
        assert!(!code.contains("PlanInfo"), "{code}");
        assert!(code.contains("unreachable !"), "{code}");
    }
}
