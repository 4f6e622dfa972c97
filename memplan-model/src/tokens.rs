//! How the macro writes a model into the user's crate: each value as the
//! Rust expression that makes it again, in the runtime's compact form
//! (`Site("copy a -> da", 22, 13).on(0, Copy(Whole(0), Whole(1)))`). The
//! expressions name the model's items unqualified; [`names_from`] brings
//! them into scope.

use crate::*;
use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens, quote};

/// The `use` that brings every name the written model uses into scope,
/// from `model`, the path the user's crate reaches this crate by.
pub fn names_from(model: &TokenStream) -> TokenStream {
    quote!(use #model::{Arg::*, BufferKind::*, Dims::*, Op::*, Place::*, Term::*, *};)
}

fn number(value: impl Into<u64>) -> Literal {
    Literal::u64_unsuffixed(value.into())
}

fn list<T: ToTokens>(items: &[T]) -> TokenStream {
    quote!(&[#(#items),*])
}

fn numbers(items: &[u16]) -> TokenStream {
    let items = items.iter().map(|&i| number(i));
    quote!(&[#(#items),*])
}

fn option<T: ToTokens>(value: &Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(Some(#value)),
        None => quote!(None),
    }
}

/// A plan with only what it has: empty lists and absent parts are left to
/// `..Plan::EMPTY`.
impl ToTokens for Plan<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let Plan {
            site,
            inputs,
            sizes,
            kernels,
            buffers,
            streams,
            events,
            ops,
            loops,
            run_inputs,
            bounds,
            per_run,
            gpus,
            ranks,
        } = self;
        let mut fields = vec![quote!(site: #site)];
        let mut field = |name: &str, present: bool, value: TokenStream| {
            if present {
                let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
                fields.push(quote!(#name: #value));
            }
        };
        field("inputs", !inputs.is_empty(), list(inputs));
        field("sizes", !sizes.is_empty(), list(sizes));
        field("kernels", !kernels.is_empty(), list(kernels));
        field("buffers", !buffers.is_empty(), list(buffers));
        field("streams", !streams.is_empty(), list(streams));
        field("events", !events.is_empty(), list(events));
        field("ops", !ops.is_empty(), list(ops));
        field("loops", !loops.is_empty(), list(loops));
        field("run_inputs", !run_inputs.is_empty(), numbers(run_inputs));
        field("bounds", !bounds.is_empty(), list(bounds));
        field("per_run", !per_run.is_empty(), numbers(per_run));
        field("gpus", gpus.is_some(), option(gpus));
        field("ranks", ranks.is_some(), option(ranks));
        tokens.extend(quote!(Plan { #(#fields,)* ..Plan::EMPTY }));
    }
}

impl ToTokens for Site<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let Site(label, line, column) = *self;
        let (line, column) = (number(line), number(column));
        tokens.extend(quote!(Site(#label, #line, #column)));
    }
}

impl ToTokens for Size<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let Size(text, program) = self;
        let program = list(program);
        tokens.extend(quote!(Size(#text, #program)));
    }
}

impl ToTokens for Term {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            Term::Input(input) => {
                let input = number(input);
                quote!(Input(#input))
            }
            Term::Literal(value) => {
                let value = number(value);
                quote!(Literal(#value))
            }
            Term::Add => quote!(Add),
            Term::Sub => quote!(Sub),
            Term::Mul => quote!(Mul),
            Term::Div => quote!(Div),
            Term::Rem => quote!(Rem),
            Term::Blocks => quote!(Blocks),
            Term::U32 => quote!(U32),
            Term::Min => quote!(Min),
        });
    }
}

impl ToTokens for KernelInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let site = self.site;
        tokens.extend(quote!(#site.kernel()));
        if !self.written.is_empty() {
            let written = numbers(self.written);
            tokens.extend(quote!(.writes(#written)));
        }
    }
}

impl ToTokens for BufferInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let BufferInfo {
            site,
            len,
            kind,
            array,
            gpu,
        } = self;
        let len = number(*len);
        tokens.extend(quote!(#site.buffer(#len, #kind)));
        placement(tokens, array, gpu);
    }
}

/// `.array(..)` and `.on(..)` of a declaration of several, or on a GPU.
fn placement(tokens: &mut TokenStream, array: &Option<Array>, gpu: &Option<Gpu>) {
    if let Some(array) = array {
        tokens.extend(quote!(.array(#array)));
    }
    if let Some(gpu) = gpu {
        tokens.extend(quote!(.on(#gpu)));
    }
}

impl ToTokens for BufferKind {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            BufferKind::Pageable => quote!(Pageable),
            BufferKind::Pinned(flags) => quote!(Pinned(#flags)),
            BufferKind::Device => quote!(Device),
            BufferKind::StreamOrdered => quote!(StreamOrdered),
            BufferKind::Param {
                mutable,
                registered,
                measured,
            } => {
                let measured = option(&measured.map(number));
                quote!(Param { mutable: #mutable, registered: #registered, measured: #measured })
            }
        });
    }
}

/// `HostAlloc::MAPPED.with(HostAlloc::PORTABLE)`, or `HostAlloc::PINNED`.
impl ToTokens for HostAlloc {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let flags: Vec<TokenStream> = [
            (HostAlloc::MAPPED, quote!(MAPPED)),
            (HostAlloc::WRITE_COMBINED, quote!(WRITE_COMBINED)),
            (HostAlloc::PORTABLE, quote!(PORTABLE)),
        ]
        .into_iter()
        .filter(|(flag, _)| self.contains(*flag))
        .map(|(_, name)| quote!(HostAlloc::#name))
        .collect();
        tokens.extend(match &flags[..] {
            [] => quote!(HostAlloc::PINNED),
            [first, rest @ ..] => quote!(#first #(.with(#rest))*),
        });
    }
}

impl ToTokens for Array {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let (count, index) = (number(self.count), number(self.index));
        tokens.extend(quote!(Array { count: #count, index: #index }));
    }
}

impl ToTokens for Gpu {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            Gpu::Each => quote!(Gpu::Each),
            Gpu::One(index) => {
                let index = number(index);
                quote!(Gpu::One(#index))
            }
        });
    }
}

impl ToTokens for StreamInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let StreamInfo {
            site,
            name,
            priority,
            array,
            gpu,
        } = self;
        tokens.extend(quote!(#site.stream(#name, #priority)));
        placement(tokens, array, gpu);
    }
}

impl ToTokens for Priority {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            Priority::Normal => quote!(Priority::Normal),
            Priority::High => quote!(Priority::High),
            Priority::Level(level) => {
                let level = Literal::i32_unsuffixed(level);
                quote!(Priority::Level(#level))
            }
        });
    }
}

impl ToTokens for EventInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let site = self.site;
        tokens.extend(quote!(#site.event()));
        placement(tokens, &self.array, &None);
    }
}

impl ToTokens for LoopInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let LoopInfo {
            site,
            count,
            input,
            first,
            end,
        } = *self;
        let [count, input, first, end] = [count, input, first, end].map(number);
        tokens.extend(quote!(#site.repeat(#count, #input, #first, #end)));
    }
}

impl ToTokens for BoundInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let BoundInfo { site, size, limit } = self;
        let (size, limit) = (number(*size), number(*limit));
        tokens.extend(quote!(BoundInfo { site: #site, size: #size, limit: #limit }));
    }
}

impl ToTokens for GpusInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let GpusInfo { site, count, peer } = self;
        let (count, peer) = (number(*count), option(peer));
        tokens.extend(quote!(GpusInfo { site: #site, count: #count, peer: #peer }));
    }
}

impl ToTokens for OpDef<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let OpDef { site, stream, op } = self;
        tokens.extend(match stream {
            Some(stream) => {
                let stream = number(*stream);
                quote!(#site.on(#stream, #op))
            }
            None => quote!(#site.on_host(#op)),
        });
    }
}

impl ToTokens for Op<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let one = |value: u16| number(value);
        tokens.extend(match self {
            Op::Copy(src, dst) => quote!(Copy(#src, #dst)),
            Op::Fill(dst) => quote!(Fill(#dst)),
            Op::Launch(launch) => quote!(Launch(#launch)),
            Op::Record(event) => {
                let event = one(*event);
                quote!(Record(#event))
            }
            Op::Wait(event) => {
                let event = one(*event);
                quote!(Wait(#event))
            }
            Op::Sync(stream) => {
                let stream = option(&stream.map(one));
                quote!(Sync(#stream))
            }
            Op::Alloc(buffer) => {
                let buffer = one(*buffer);
                quote!(Alloc(#buffer))
            }
            Op::Free(buffer) => {
                let buffer = one(*buffer);
                quote!(Free(#buffer))
            }
            Op::Host(step) => {
                let step = one(*step);
                quote!(Host(#step))
            }
            Op::Collective(collective) => quote!(Collective(#collective)),
        });
    }
}

impl ToTokens for Place {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            Place::Whole(buffer) => {
                let buffer = number(buffer);
                quote!(Whole(#buffer))
            }
            Place::Part(buffer, start, end) => {
                let [buffer, start, end] = [buffer, start, end].map(number);
                quote!(Part(#buffer, #start, #end))
            }
        });
    }
}

impl ToTokens for CollectiveInfo {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let CollectiveInfo {
            kind,
            send,
            recv,
            group,
        } = self;
        let group = number(*group);
        tokens.extend(quote! {
            CollectiveInfo { kind: #kind, send: #send, recv: #recv, group: #group }
        });
    }
}

impl ToTokens for CollectiveKind {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            CollectiveKind::AllReduce(op) => quote!(CollectiveKind::AllReduce(#op)),
            CollectiveKind::ReduceScatter(op) => quote!(CollectiveKind::ReduceScatter(#op)),
            CollectiveKind::AllGather => quote!(CollectiveKind::AllGather),
            CollectiveKind::Broadcast(root) => {
                let root = number(root);
                quote!(CollectiveKind::Broadcast(#root))
            }
            CollectiveKind::Send(peer) => {
                let peer = number(peer);
                quote!(CollectiveKind::Send(#peer))
            }
            CollectiveKind::Recv(peer) => {
                let peer = number(peer);
                quote!(CollectiveKind::Recv(#peer))
            }
        });
    }
}

impl ToTokens for ReduceOp {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match self {
            ReduceOp::Sum => quote!(ReduceOp::Sum),
            ReduceOp::Prod => quote!(ReduceOp::Prod),
            ReduceOp::Max => quote!(ReduceOp::Max),
            ReduceOp::Min => quote!(ReduceOp::Min),
            ReduceOp::Avg => quote!(ReduceOp::Avg),
        });
    }
}

impl ToTokens for LaunchInfo<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let LaunchInfo {
            kernel,
            grid,
            block,
            shared,
            args,
        } = self;
        let (kernel, shared, args) = (number(*kernel), option(shared), list(args));
        tokens.extend(quote!(launch(#kernel, #grid, #block, #shared, #args)));
    }
}

impl ToTokens for Dims<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match self {
            Dims::Sizes(sizes) => {
                let sizes = numbers(sizes);
                quote!(Sizes(#sizes))
            }
            Dims::Given => quote!(Given),
        });
    }
}

impl ToTokens for Shared {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match *self {
            Shared::Size(size) => {
                let size = number(size);
                quote!(Shared::Size(#size))
            }
            Shared::Given => quote!(Shared::Given),
        });
    }
}

impl ToTokens for Arg<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match self {
            Arg::Buffer(place) => quote!(Buffer(#place)),
            Arg::Extent(place, extent, name) => {
                let extent = number(*extent);
                quote!(Extent(#place, #extent, #name))
            }
            Arg::Measured(place, extent, name) => quote!(Measured(#place, &#extent, #name)),
            Arg::Value => quote!(Value),
            Arg::Bound(size, name) => {
                let size = number(*size);
                quote!(Bound(#size, #name))
            }
            Arg::Count(size, name) => {
                let size = number(*size);
                quote!(Count(#size, #name))
            }
        });
    }
}
