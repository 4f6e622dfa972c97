//! Where things are written: one `OpInfo` per op (`OPS`) and one per thing
//! `new` creates (`SETUP`), so run-time errors and reports name the op and
//! its line in the user's file.

use crate::ir::{BufferKind, Lane, OpKind, ParamKind, Plan};
use proc_macro2::{Span, TokenStream};
use quote::quote;

/// Indices into `SETUP` of each declaration.
pub struct Setup {
    pub entries: Vec<(String, Span)>,
    /// Per parameter (slices only).
    pub params: Vec<Option<usize>>,
    /// Per buffer (plan-owned ones only).
    pub buffers: Vec<Option<usize>>,
    pub kernels: Vec<usize>,
    pub streams: Vec<usize>,
    pub events: Vec<usize>,
}

impl Setup {
    pub fn new(plan: &Plan) -> Setup {
        let mut entries = Vec::new();
        let mut add = |label: String, span: Span| {
            entries.push((label, span));
            entries.len() - 1
        };
        let params = plan
            .params
            .iter()
            .map(|param| match param.kind {
                ParamKind::Slice(buffer) => Some(add(
                    format!("parameter {}", param.name),
                    plan.buffers[buffer].name.span(),
                )),
                _ => None,
            })
            .collect();
        let buffers = plan
            .buffers
            .iter()
            .enumerate()
            .map(|(id, buffer)| {
                if !matches!(buffer.kind, BufferKind::Host(_) | BufferKind::Device) {
                    return None;
                }
                let label = format!("{}: {}", buffer.name, super::diagram::buffer_kind(plan, id));
                Some(add(label, buffer.name.span()))
            })
            .collect();
        let kernels = plan
            .kernels
            .iter()
            .map(|k| add(format!("kernel {}", k.name), k.name.span()))
            .collect();
        let streams = plan
            .streams
            .iter()
            .map(|s| add(format!("stream {}", s.name), s.name.span()))
            .collect();
        let events = plan
            .events
            .iter()
            .map(|e| add(format!("event {e}"), e.span()))
            .collect();
        Setup {
            entries,
            params,
            buffers,
            kernels,
            streams,
            events,
        }
    }
}

/// `&Self::OPS[i]` or `&Self::SETUP[i]`.
pub fn op(index: usize) -> TokenStream {
    quote!(&Self::OPS[#index])
}

pub fn setup(index: usize) -> TokenStream {
    quote!(&Self::SETUP[#index])
}

/// The `OPS` and `SETUP` constants.
pub fn consts(plan: &Plan, setup: &Setup) -> TokenStream {
    let name = plan.name.to_string();
    let ops = plan.ops.iter().map(|op| {
        let stream = match op.lane {
            Lane::Host => quote!(::core::option::Option::None),
            Lane::Stream(stream) => {
                let stream = plan.streams[stream].name.to_string();
                quote!(::core::option::Option::Some(#stream))
            }
        };
        info(&name, &op.label, kind(plan, &op.kind), stream, op.span)
    });
    let setups = setup.entries.iter().map(|(label, span)| {
        info(
            &name,
            label,
            quote!(Declaration),
            quote!(::core::option::Option::None),
            *span,
        )
    });
    quote! {
        /// Every operation of the plan, in program order: what errors and
        /// reports name.
        pub const OPS: &'static [::memplan::OpInfo] = &[#(#ops),*];
        /// Every declaration `new` turns into a resource.
        pub const SETUP: &'static [::memplan::OpInfo] = &[#(#setups),*];
    }
}

fn info(
    plan: &str,
    label: &str,
    kind: TokenStream,
    stream: TokenStream,
    span: Span,
) -> TokenStream {
    let start = span.start();
    let (line, column) = (start.line as u32, start.column as u32 + 1);
    quote! {
        ::memplan::OpInfo {
            plan: #plan,
            label: #label,
            kind: ::memplan::OpKind::#kind,
            stream: #stream,
            location: ::memplan::Location { file: ::core::file!(), line: #line, column: #column },
        }
    }
}

fn kind(plan: &Plan, kind: &OpKind) -> TokenStream {
    match kind {
        OpKind::Copy { src, dst } => {
            let host = |place: &crate::ir::Place| plan.buffers[place.buffer].kind.is_host();
            match (host(src), host(dst)) {
                (true, false) => quote!(CopyHostToDevice),
                (false, true) => quote!(CopyDeviceToHost),
                (false, false) => quote!(CopyDeviceToDevice),
                (true, true) => quote!(CopyHostToHost),
            }
        }
        OpKind::Fill { .. } => quote!(Fill),
        OpKind::Launch(_) => quote!(Launch),
        OpKind::Record(_) => quote!(Record),
        OpKind::Wait(_) => quote!(Wait),
        OpKind::Sync(_) => quote!(Sync),
        OpKind::Alloc(_) => quote!(Alloc),
        OpKind::Free(_) => quote!(Free),
        OpKind::Host { .. } => quote!(Host),
    }
}
