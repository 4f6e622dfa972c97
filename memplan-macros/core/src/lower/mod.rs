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
    quote! {
        #(#attrs)*
        #[doc = #plan_doc]
        #vis struct #name {
            #(#fields,)*
        }

        #views
        #impl_block
        #traits
        #warnings
    }
}
