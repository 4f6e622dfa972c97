//! One op, as the runtime calls that carry it out.
//!
//! Ops on a stream call the runtime's queued (`unsafe`) functions; their
//! conditions are what the checks proved: each buffer stays allocated (the
//! plan owns it, or the run borrows it) and the host does not touch it until
//! the plan has waited for the stream. Ops outside stream blocks call the
//! synchronous (safe) functions. Every call reports failure as the op.

use super::names::{self, local};
use super::sites;
use crate::ir::{Arg, KernelParamKind, Lane, Launch, Op, OpKind, Place, Plan};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The statements of op `index`.
pub fn statements(plan: &Plan, index: usize) -> TokenStream {
    let this = names::this();
    let op = &plan.ops[index];
    let site = sites::op(index);
    let op_local = local("__memplan_op");
    let body = match &op.kind {
        OpKind::Copy { src, dst } => timed(plan, index, copy(plan, op, src, dst)),
        OpKind::Fill { dst, value } => timed(plan, index, fill(plan, op, dst, value)),
        OpKind::Launch(launch) => timed(plan, index, self::launch(plan, op, launch)),
        OpKind::Record(event) => {
            let (event, stream) = (&plan.events[*event], stream_of(plan, op));
            quote!(#this.#event.record(&#this.#stream).at_op(#op_local)?;)
        }
        OpKind::Wait(event) => {
            let (event, stream) = (&plan.events[*event], stream_of(plan, op));
            quote!(#this.#stream.wait(&#this.#event).at_op(#op_local)?;)
        }
        OpKind::Sync(Some(stream)) => {
            let stream = &plan.streams[*stream].name;
            quote!(#this.#stream.synchronize().at_op(#op_local)?;)
        }
        OpKind::Sync(None) => {
            let streams = plan.streams.iter().map(|s| &s.name);
            quote!(::memplan::plan::wait_all(&[#(&#this.#streams),*]).at_op(#op_local)?;)
        }
        OpKind::Alloc(buffer) => {
            let (var, stream) = (names::stream_ordered(*buffer), stream_of(plan, op));
            let elem = &plan.buffers[*buffer].elem;
            let len = &plan.buffers[*buffer].len_expr;
            // The buffer lives in the run's body, not the op's, so that later
            // ops can use it.
            return quote! {
                let #var = unsafe {
                    ::memplan::StreamOrderedBuffer::<#elem>::alloc_async(&#this.#stream, #len)
                }
                .at_op(#site)?;
            };
        }
        OpKind::Free(buffer) => {
            let (var, stream) = (names::stream_ordered(*buffer), stream_of(plan, op));
            quote!(unsafe { #var.free_async(&#this.#stream) }.at_op(#op_local)?;)
        }
        OpKind::Host { params, body } => {
            let closure_params = params.iter().map(|param| {
                let (name, elem) = (&param.name, &plan.buffers[param.buffer].elem);
                if param.mutable {
                    quote!(#name: &mut [#elem])
                } else {
                    quote!(#name: &[#elem])
                }
            });
            let args = params
                .iter()
                .map(|param| names::buffer(plan, param.buffer, param.mutable));
            let step = local("__memplan_step");
            quote! {
                let #step = |#(#closure_params),*| #body;
                #step(#(#args),*);
            }
        }
    };
    quote! {
        {
            let #op_local = #site;
            #body
        }
    }
}

/// Wraps a GPU op in timing marks (no driver calls while timing is off).
/// `op` evaluates to the bytes it moved.
fn timed(plan: &Plan, index: usize, op: TokenStream) -> TokenStream {
    let (this, core) = (names::this(), names::core());
    let (op_local, bytes) = (local("__memplan_op"), local("__memplan_bytes"));
    let stream = match plan.ops[index].lane {
        Lane::Host => quote!(::core::ptr::null_mut()),
        Lane::Stream(stream) => {
            let stream = &plan.streams[stream].name;
            quote!(#this.#stream.raw())
        }
    };
    quote! {
        #this.#core.timer.start(#index, #stream).at_op(#op_local)?;
        let #bytes = #op;
        #this.#core.timer.end(#index, #stream, #bytes).at_op(#op_local)?;
    }
}

fn copy(plan: &Plan, op: &Op, src: &Place, dst: &Place) -> TokenStream {
    let (this, op_local) = (names::this(), local("__memplan_op"));
    let (src_host, dst_host) = (
        plan.buffers[src.buffer].kind.is_host(),
        plan.buffers[dst.buffer].kind.is_host(),
    );
    let (from_range, to_range) = (range(src), range(dst));
    if src.buffer == dst.buffer && src_host {
        // One host buffer cannot be borrowed twice, once mutably: copy
        // within it (the check proved the ranges apart).
        let buffer = names::buffer(plan, src.buffer, true);
        return match op.lane {
            Lane::Host => {
                quote!(::memplan::copy::htoh_within(#buffer, #from_range, #to_range).at_op(#op_local)?)
            }
            Lane::Stream(_) => {
                let stream = stream_of(plan, op);
                quote! {
                    unsafe { ::memplan::copy::htoh_within_async(&#this.#stream, #buffer, #from_range, #to_range) }
                        .at_op(#op_local)?
                }
            }
        };
    }
    let from = names::buffer(plan, src.buffer, false);
    let to = names::buffer(plan, dst.buffer, dst_host);
    let direction = match (src_host, dst_host) {
        (true, false) => "htod",
        (false, true) => "dtoh",
        (false, false) => "dtod",
        (true, true) => "htoh",
    };
    match op.lane {
        Lane::Host => {
            let function = proc_macro2::Ident::new(direction, proc_macro2::Span::call_site());
            quote!(::memplan::copy::#function(#from, #from_range, #to, #to_range).at_op(#op_local)?)
        }
        Lane::Stream(_) => {
            let function = proc_macro2::Ident::new(
                &format!("{direction}_async"),
                proc_macro2::Span::call_site(),
            );
            let stream = stream_of(plan, op);
            quote! {
                unsafe { ::memplan::copy::#function(&#this.#stream, #from, #from_range, #to, #to_range) }
                    .at_op(#op_local)?
            }
        }
    }
}

fn fill(plan: &Plan, op: &Op, dst: &Place, value: &syn::Expr) -> TokenStream {
    let (this, op_local) = (names::this(), local("__memplan_op"));
    let buffer = &plan.buffers[dst.buffer];
    let elem = &buffer.elem;
    let value_local = local("__memplan_value");
    let value = quote_spanned!(value.span()=> { let #value_local: #elem = #value; #value_local });
    let to_range = range(dst);
    match (op.lane, buffer.kind.is_host()) {
        (Lane::Host, true) => {
            let to = names::buffer(plan, dst.buffer, true);
            quote!(::memplan::plan::fill_host(#to, #to_range, #value).at_op(#op_local)?)
        }
        (Lane::Host, false) => {
            let to = names::buffer(plan, dst.buffer, false);
            quote!(::memplan::fill::fill(#to, #to_range, #value).at_op(#op_local)?)
        }
        (Lane::Stream(_), _) => {
            let (to, stream) = (names::buffer(plan, dst.buffer, false), stream_of(plan, op));
            quote!(unsafe { ::memplan::fill::fill_async(&#this.#stream, #to, #to_range, #value) }.at_op(#op_local)?)
        }
    }
}

fn launch(plan: &Plan, op: &Op, launch: &Launch) -> TokenStream {
    let (this, op_local) = (names::this(), local("__memplan_op"));
    let kernel = &plan.kernels[launch.kernel];
    let args =
        launch
            .args
            .iter()
            .zip(&kernel.params)
            .map(|(arg, param)| match (arg, &param.kind) {
                (Arg::Buffer(place), _) => {
                    let buffer = names::buffer(plan, place.buffer, false);
                    let range = range(place);
                    quote!(::memplan::plan::device_arg(#buffer, #range).at_op(#op_local)?)
                }
                (Arg::Value(expr), KernelParamKind::Value(ty)) => {
                    let value = local("__memplan_value");
                    quote_spanned!(expr.span()=> { let #value: #ty = #expr; #value })
                }
                // A value for a slice parameter is an error the launch check reported.
                (Arg::Value(expr), KernelParamKind::Slice { .. }) => quote!(#expr),
            });
    let (grid, block) = (with_builtins(&launch.grid), with_builtins(&launch.block));
    let shared = launch
        .shared
        .as_ref()
        .map_or_else(|| quote!(0), with_builtins);
    let (config, arguments, name) = (
        local("__memplan_config"),
        local("__memplan_args"),
        &kernel.name,
    );
    let call = match op.lane {
        Lane::Stream(_) => {
            let stream = stream_of(plan, op);
            quote!(unsafe { #this.#name.launch(&#this.#stream, #config, #arguments) }.at_op(#op_local)?;)
        }
        Lane::Host => quote! {
            unsafe { #this.#name.launch_on(::core::ptr::null_mut(), #config, #arguments) }.at_op(#op_local)?;
            ::memplan::plan::sync_legacy_stream().at_op(#op_local)?;
        },
    };
    quote! {
        {
            let #config = ::memplan::LaunchConfig::new(#grid, #block, #shared);
            let #arguments = (#(#args,)*);
            #call
            0usize
        }
    }
}

/// A launch configuration expression with `blocks(n, per_block)` calls
/// (the language's one built-in function) made to call memplan's, so that
/// no name is brought into the scope of the user's code.
fn with_builtins(expr: &syn::Expr) -> TokenStream {
    use syn::visit_mut::{self, VisitMut};
    struct Builtins;
    impl VisitMut for Builtins {
        fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
            visit_mut::visit_expr_call_mut(self, call);
            let is_blocks = matches!(&*call.func, syn::Expr::Path(path) if path.qself.is_none() && path.path.is_ident("blocks"));
            if is_blocks && call.args.len() == 2 {
                let span = syn::spanned::Spanned::span(&call.func);
                *call.func = syn::parse_quote_spanned!(span=> ::memplan::blocks);
            }
        }
    }
    let mut expr = expr.clone();
    Builtins.visit_expr_mut(&mut expr);
    quote!(#expr)
}

/// The range of a place as written, or `..`.
fn range(place: &Place) -> TokenStream {
    match &place.range_expr {
        Some(range) => quote!(#range),
        None => quote!(..),
    }
}

fn stream_of<'a>(plan: &'a Plan, op: &Op) -> &'a syn::Ident {
    match op.lane {
        Lane::Stream(stream) => &plan.streams[stream].name,
        // Only stream ops ask; the IR puts records, waits, allocs and frees
        // in stream blocks only.
        Lane::Host => &plan.name,
    }
}
