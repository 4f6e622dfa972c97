//! Names of generated things, and how generated code refers to the plan's.
//!
//! Generated locals use `Span::mixed_site()`, so user code inside the plan
//! (lengths, ranges, launch arguments, host steps) can neither see nor
//! shadow them. Generated fields and methods start with `__memplan`, which
//! plans may not use for their own names.

use crate::ir::{BufferId, BufferKind, ParamKind, Plan};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// A hygienic local of the generated code.
pub fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The plan, inside the function that queues its ops. Not `self`: code of
/// the user's inside the plan (host steps, launch arguments, fill values)
/// must see only what the plan gives it, and cannot name a hygienic local.
pub fn this() -> Ident {
    local("__memplan_this")
}

/// The local holding caller slice parameter `index` inside the ops, hidden
/// from the user's code for the same reason.
pub fn slice(index: usize) -> Ident {
    local(&format!("__memplan_slice_{index}"))
}

/// The field holding the plan's `PlanCore`.
pub fn core() -> Ident {
    Ident::new("__memplan_core", Span::call_site())
}

/// The local holding stream-ordered buffer `id` during a run.
pub fn stream_ordered(id: BufferId) -> Ident {
    Ident::new(&format!("__memplan_buffer_{id}"), Span::mixed_site())
}

/// The types of the host buffers' views: `VectorAddHost`, `VectorAddHostMut`.
pub fn host_views(plan: &Plan) -> (Ident, Ident) {
    (
        format_ident!("{}Host", plan.name),
        format_ident!("{}HostMut", plan.name),
    )
}

/// An expression borrowing buffer `id` for an op: `&this.a`, `&mut *slice`,
/// `&__memplan_buffer_3`.
pub fn buffer(plan: &Plan, id: BufferId, mutable: bool) -> TokenStream {
    let buffer = &plan.buffers[id];
    let name = &buffer.name;
    let reference = if mutable { quote!(&mut) } else { quote!(&) };
    let this = this();
    match buffer.kind {
        BufferKind::Host(_) | BufferKind::Device => quote!(#reference #this.#name),
        // Inside the ops, parameters are references (to a slice, or to its
        // registration): reborrow what they point to.
        BufferKind::Param { .. } => {
            let index = plan
                .params
                .iter()
                .position(|p| matches!(p.kind, ParamKind::Slice(b) if b == id));
            let local = slice(index.unwrap_or(0));
            quote!(#reference *#local)
        }
        BufferKind::StreamOrdered { .. } => {
            let local = stream_ordered(id);
            quote!(&#local)
        }
    }
}
