//! The `memplan!` language as a plain library: grammar, IR, checks and
//! lowering. The proc-macro crate `memplan-macros` is a thin shell around
//! [`expand`]; everything here runs (and is tested) without a compiler.
//!
//! The stages, each in its own module:
//! 1. [`syntax`]: syn parsers, one syntax tree node per construct;
//! 2. [`ir`]: names resolved, ops in program order, ranges symbolic ([`sym`]);
//! 3. [`check`]: every compile-time check, errors collected by [`errors`];
//! 4. [`lower`]: the plan type and its methods, as runtime calls.

// Syntax and IR nodes are built once per macro call; boxing their large
// variants would buy nothing.
#![allow(clippy::large_enum_variant)]

pub mod check;
pub mod errors;
pub mod ir;
pub mod lower;
pub mod sym;
pub mod syntax;
pub mod text;

use proc_macro2::TokenStream;
use quote::quote;

/// The whole macro: parse, build the IR, check, lower. Never panics: every
/// problem becomes a `compile_error!` at the user's tokens.
pub fn expand(input: TokenStream) -> TokenStream {
    let input: syntax::Input = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    input.plans.iter().map(expand_plan).collect()
}

/// One plan: its code, or its errors and as much of its type as can be made
/// (so that code using the plan does not add errors of its own).
fn expand_plan(def: &syntax::PlanDef) -> TokenStream {
    let errors = errors::Errors::new();
    let plan = ir::build(def, &errors);
    if !errors.is_empty() {
        // Names did not resolve: only the type's name can be given.
        let (vis, name, errors) = (
            &def.vis,
            &def.name,
            errors.finish().err().map(|e| e.to_compile_error()),
        );
        return quote! {
            #errors
            #vis struct #name;
        };
    }
    let analysis = check::run(&plan, &errors);
    match errors.finish() {
        Ok(()) => lower::lower(&plan, &analysis, lower::Bodies::Ops),
        Err(error) => {
            let errors = error.to_compile_error();
            let interface = lower::lower(&plan, &analysis, lower::Bodies::Placeholder);
            quote!(#errors #interface)
        }
    }
}

/// Builds the IR and runs every check; all errors of the plan together.
pub fn analyze(def: &syntax::PlanDef) -> syn::Result<(ir::Plan, check::Analysis)> {
    let errors = errors::Errors::new();
    let plan = ir::build(def, &errors);
    // The checks need every name resolved: report resolution errors alone.
    let analysis = errors.is_empty().then(|| check::run(&plan, &errors));
    errors.finish()?;
    Ok((plan, analysis.unwrap_or_default()))
}
