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

use crate::check::Analysis;
use crate::ir::Plan;
use crate::signatures::Built;
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
    let sizes = sizes::Sizes::intern(plan)?;
    limits::check(plan, sizes.counts())?;
    let givens = Givens::from_plan(plan, &sizes)?;
    Ok(Description {
        model: model::from_ir(plan, &sizes, &givens, arena)?,
        inputs: sizes.new_inputs(),
        givens,
    })
}

/// The code of `plan`, reaching memplan by the path `krate`.
/// `built` is what the crate's build step says of its kernels, for the
/// wording of declaration errors (the runtime decides).
pub fn lower(
    krate: &TokenStream,
    plan: &Plan,
    analysis: &Analysis,
    bodies: Bodies,
    built: Option<&Built>,
) -> TokenStream {
    let arena = Bump::new();
    let description = match bodies {
        Bodies::Ops => match describe(plan, &arena) {
            Ok(description) => Some(description),
            Err(error) => return error.to_compile_error(),
        },
        Bodies::Placeholder => None,
    };
    let overview = diagram::overview(plan);
    let (kernel_checks, kernel_code) = kernels::lower(plan, built);
    let model = description.as_ref().map(|description| &description.model);
    let data = info::plan_static(plan, model, &kernel_code);
    let code = methods::code(plan, description.as_ref(), &overview);
    let warnings = warnings::emit(&analysis.warnings);
    let (attrs, vis, name, private) = (&plan.attrs, &plan.vis, &plan.name, names::private());
    let plan_doc = format!(
        "\n\n# Plan\n\n```text\n{}```\n\n`{name}::DIAGRAM` holds it as a Mermaid flowchart.",
        overview.summary
    );
    // The plan's `#[cfg]` and `#[cfg_attr]` go on the blocks too, so that a
    // plan compiled out takes its impls, views and warnings with it.
    let conditions: Vec<_> = attrs.iter().filter_map(condition).collect();
    // Lint levels too (`#[allow(unused)]` on the plan silences its
    // unused declarations, as on any item).
    let levels = attrs.iter().filter(|attr| is_lint_level(attr));
    let warnings = (!warnings.is_empty()).then(|| quote!(#(#conditions)* #(#levels)* #warnings));
    // Everything but the plan's type lives in a block of its own, so no
    // name of the user's can collide with the generated ones.
    quote! {
        #(#attrs)*
        #[doc = #plan_doc]
        #vis struct #name(#krate::__private::Engine<#name>);

        #(#conditions)*
        const _: () = {
            use #krate::__private as #private;
            #kernel_checks
            #data
            #code
        };

        #warnings
    }
}

/// What of attribute `attr` decides whether the plan is compiled: a
/// `#[cfg]` whole, and of a `#[cfg_attr]` only the `cfg`s it adds (the
/// other attributes it adds are for the type, `repr(...)` say, and would
/// not apply to a block).
/// Whether `attr` sets lint levels: `allow`, `warn`, `deny`, `forbid`,
/// `expect`.
fn is_lint_level(attr: &syn::Attribute) -> bool {
    ["allow", "warn", "deny", "forbid", "expect"]
        .iter()
        .any(|level| attr.path().is_ident(level))
}

fn condition(attr: &syn::Attribute) -> Option<syn::Attribute> {
    if attr.path().is_ident("cfg") {
        return Some(attr.clone());
    }
    if !attr.path().is_ident("cfg_attr") {
        return None;
    }
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    let (predicate, added) = only_cfgs(list)?;
    Some(syn::parse_quote!(#[cfg_attr(#predicate, #(#added),*)]))
}

/// `cfg_attr(predicate, a, b, ..)`'s predicate and its `cfg`s (nested
/// `cfg_attr`s kept for theirs); `None` if it adds no `cfg`.
fn only_cfgs(list: &syn::MetaList) -> Option<(syn::Meta, Vec<syn::Meta>)> {
    use syn::punctuated::Punctuated;
    let metas = list
        .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        .ok()?;
    let mut metas = metas.into_iter();
    let predicate = metas.next()?;
    let added: Vec<syn::Meta> = metas
        .filter_map(|meta| match &meta {
            syn::Meta::List(inner) if meta.path().is_ident("cfg_attr") => {
                let (predicate, added) = only_cfgs(inner)?;
                Some(syn::parse_quote!(cfg_attr(#predicate, #(#added),*)))
            }
            _ if meta.path().is_ident("cfg") => Some(meta),
            _ => None,
        })
        .collect();
    (!added.is_empty()).then_some((predicate, added))
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
        lower(&quote!(::memplan), &plan, &analysis, bodies, None).to_string()
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
            code.contains("pub fn new")
                && code.contains("pub fn check")
                && code.contains("plan_methods !"),
            "{code}"
        );
        assert!(!code.contains("PlanInfo"), "{code}");
        assert!(code.contains("unreachable !"), "{code}");
    }
}
