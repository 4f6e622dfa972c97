//! The plan's static description (`memplan::__private::PlanInfo`): every
//! declaration and op with its label and line, every size as a program,
//! every buffer's kind and element type. The runtime builds and runs the
//! plan from it. What the user's expressions give (fill values, kernel
//! arguments, launch dimensions outside the size arithmetic) is left to
//! `new`, which evaluates them in safe code: see [`Given`].

use super::diagram::buffer_kind;
use super::names::number;
use super::sizes::{Sizes, is_blocks};
use crate::ir::{
    Arg, BufferKind, KernelParamKind, Lane, LaunchExtent, OpKind, ParamKind, Place, Placement,
    Plan, Priority,
};
use crate::syntax::SliceAccess;
use crate::text::text;
use proc_macro2::{Literal, Span, TokenStream};
use quote::ToTokens;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, RangeLimits};

/// A value the user's code gives, which `new` evaluates.
pub enum Given {
    /// The value fill op `op` writes, of the buffer's element type.
    Fill {
        op: u16,
        ty: syn::Type,
        value: Expr,
    },
    /// Kernel value argument `arg` of launch `op`, of the parameter's type.
    Value {
        op: u16,
        arg: u16,
        ty: syn::Type,
        value: Expr,
    },
    Grid {
        op: u16,
        value: Expr,
    },
    Block {
        op: u16,
        value: Expr,
    },
    Shared {
        op: u16,
        value: Expr,
    },
}

/// The description, and what `new` and each run must give besides.
pub struct Description {
    /// The `PlanInfo` value.
    pub info: TokenStream,
    /// The size inputs `new` passes.
    pub inputs: Vec<TokenStream>,
    pub given: Vec<Given>,
    /// What each run computes: the expressions that read `run` parameters.
    pub run_given: Vec<Given>,
}

/// The most declarations, ops, sizes or arguments of one kind a plan may
/// have: the description numbers them with `u16`s.
const MOST: usize = u16::MAX as usize;

pub fn describe(plan: &Plan) -> syn::Result<Description> {
    let too_many = |what: &str| {
        syn::Error::new(
            plan.name.span(),
            format!(
                "plan `{}` has more {what} than the {MOST} one plan may have\n\nhelp: split it into several plans",
                plan.name
            ),
        )
    };
    let counts = [
        (plan.ops.len(), "operations"),
        (plan.buffers.len(), "buffers"),
        (plan.kernels.len(), "kernels"),
        (plan.streams.len(), "streams"),
        (plan.events.len(), "events"),
    ];
    if let Some((_, what)) = counts.iter().find(|(count, _)| *count > MOST) {
        return Err(too_many(what));
    }
    let longest_launch = plan.ops.iter().map(|op| match &op.kind {
        OpKind::Launch(launch) => launch.args.len(),
        _ => 0,
    });
    if longest_launch.max().unwrap_or(0) > MOST {
        return Err(too_many("arguments in one launch"));
    }
    let mut sizes = Sizes::new(plan);
    let mut given = Vec::new();
    let mut run_given = Vec::new();

    // Buffer lengths first: a range without an end ends at its buffer's.
    let mut lengths = Vec::new();
    for buffer in &plan.buffers {
        lengths.push(match &buffer.len_expr {
            Some(len) => sizes.length(len, plan)?,
            None => sizes.measured(&buffer.name.to_string()),
        });
    }

    // Every size of sets and loops too, before any input is numbered
    // (`measured_input` below): an opaque term in one adds an input.
    for array in plan.arrays() {
        sizes.length(&array.count, plan)?;
        if let Some((index, _)) = &array.index {
            sizes.length(index, plan)?;
        }
    }
    for repeat in &plan.loops {
        sizes.length(&repeat.count, plan)?;
    }
    if let Some(gpus) = &plan.gpus {
        sizes.length(&gpus.count, plan)?;
    }
    let placements = plan.buffers.iter().map(|b| &b.gpu);
    for placement in placements
        .chain(plan.streams.iter().map(|s| &s.gpu))
        .flatten()
    {
        if let Placement::One { index, .. } = placement {
            sizes.length(index, plan)?;
        }
    }

    let mut ops = Vec::new();
    let mut per_run = Vec::new();
    for (index, op) in plan.ops.iter().enumerate() {
        let index = index as u16;
        let place = |place: &Place, sizes: &mut Sizes| -> syn::Result<TokenStream> {
            place_tokens(plan, place, &lengths, sizes)
        };
        let kind = match &op.kind {
            OpKind::Copy { src, dst } => {
                let (src, dst) = (place(src, &mut sizes)?, place(dst, &mut sizes)?);
                quote!(Copy(#src, #dst))
            }
            OpKind::Fill { dst, value } => {
                once(plan, index as usize, value)?;
                let fill = Given::Fill {
                    op: index,
                    ty: plan.buffers[dst.buffer].elem.clone(),
                    value: value.clone(),
                };
                match plan.run_param_in(value) {
                    Some(_) => {
                        per_run.push(index);
                        run_given.push(fill);
                    }
                    None => given.push(fill),
                }
                let dst = place(dst, &mut sizes)?;
                quote!(Fill(#dst))
            }
            OpKind::Launch(launch) => {
                let kernel = number(launch.kernel);
                let grid = dims(&launch.grid, plan, &mut sizes);
                let block = dims(&launch.block, plan, &mut sizes);
                if grid.is_none() {
                    once(plan, index as usize, &launch.grid)?;
                    at_new(plan, &launch.grid)?;
                }
                if block.is_none() {
                    once(plan, index as usize, &launch.block)?;
                    at_new(plan, &launch.block)?;
                }
                let grid = grid.unwrap_or_else(|| {
                    given.push(Given::Grid {
                        op: index,
                        value: launch.grid.clone(),
                    });
                    quote!(Given)
                });
                let block = block.unwrap_or_else(|| {
                    given.push(Given::Block {
                        op: index,
                        value: launch.block.clone(),
                    });
                    quote!(Given)
                });
                let shared = match &launch.shared {
                    None => quote!(None),
                    Some(expr) => match sizes.launch(expr, plan) {
                        Some(size) => {
                            let size = number(size);
                            quote!(Some(Shared::Size(#size)))
                        }
                        None => {
                            once(plan, index as usize, expr)?;
                            at_new(plan, expr)?;
                            given.push(Given::Shared {
                                op: index,
                                value: expr.clone(),
                            });
                            quote!(Some(Shared::Given))
                        }
                    },
                };
                let params = &plan.kernels[launch.kernel].params;
                let mut args = Vec::new();
                for (position, (arg, param)) in launch.args.iter().zip(params).enumerate() {
                    let name = param.name.to_string();
                    args.push(match arg {
                        Arg::Buffer(p) => {
                            let p = place(p, &mut sizes)?;
                            match &launch.extents[position] {
                                Some(LaunchExtent::Sized { expr, .. }) => {
                                    let extent = number(sizes.length(expr, plan)?);
                                    quote!(Extent(#p, #extent, #name))
                                }
                                Some(LaunchExtent::Measured(extent)) => {
                                    let kernel = &plan.kernels[launch.kernel];
                                    let program = super::kernels::extent_program(extent, kernel)?;
                                    quote!(Measured(#p, &#program, #name))
                                }
                                None => quote!(Buffer(#p)),
                            }
                        }
                        Arg::Value(value) => {
                            let KernelParamKind::Value(ty) = &param.kind else {
                                return Err(syn::Error::new_spanned(
                                    value,
                                    "a value for a slice parameter",
                                ));
                            };
                            if let Some((size, int)) = counted(plan, index as usize, value)? {
                                let size = number(sizes.length(&size, plan)?);
                                args.push(quote!(Count(#size, #int, #name)));
                                continue;
                            }
                            let given_value = Given::Value {
                                op: index,
                                arg: position as u16,
                                ty: ty.clone(),
                                value: value.clone(),
                            };
                            match plan.run_param_in(value) {
                                Some(_) => {
                                    if !per_run.contains(&index) {
                                        per_run.push(index);
                                    }
                                    run_given.push(given_value);
                                }
                                None => given.push(given_value),
                            }
                            match &launch.bound[position] {
                                Some(size) => {
                                    let size = number(sizes.length(size, plan)?);
                                    quote!(Bound(#size, #name))
                                }
                                None => quote!(Value),
                            }
                        }
                    });
                }
                quote!(Launch(launch(#kernel, #grid, #block, #shared, &[#(#args),*])))
            }
            OpKind::Record(event) => {
                let event = number(*event);
                quote!(Record(#event))
            }
            OpKind::Wait(event) => {
                let event = number(*event);
                quote!(Wait(#event))
            }
            OpKind::Sync(None) => quote!(Sync(None)),
            OpKind::Sync(Some(stream)) => {
                let stream = number(*stream);
                quote!(Sync(Some(#stream)))
            }
            OpKind::Alloc(buffer) => {
                let buffer = number(*buffer);
                quote!(Alloc(#buffer))
            }
            OpKind::Free(buffer) => {
                let buffer = number(*buffer);
                quote!(Free(#buffer))
            }
            OpKind::Host { .. } => {
                let step = number(host_step_number(plan, index as usize));
                quote!(Host(#step))
            }
            OpKind::Collective(c) => {
                use crate::syntax::CollectiveWord as W;
                let (send, recv) = (place(&c.send, &mut sizes)?, place(&c.recv, &mut sizes)?);
                let reduce = || {
                    let op = match c.reduce.as_ref().map(|op| op.to_string()).as_deref() {
                        Some("prod") => quote!(Prod),
                        Some("min") => quote!(Min),
                        Some("max") => quote!(Max),
                        Some("avg") => quote!(Avg),
                        _ => quote!(Sum),
                    };
                    quote!(ReduceOp::#op)
                };
                let mut rank = || -> syn::Result<TokenStream> {
                    let expr = c.rank.as_ref().ok_or_else(|| {
                        syn::Error::new(op.span, "a collective without its rank (a bug in memplan)")
                    })?;
                    Ok(number(sizes.length(expr, plan)?).to_token_stream())
                };
                let kind = match c.word {
                    W::AllReduce => {
                        let op = reduce();
                        quote!(AllReduce(#op))
                    }
                    W::ReduceScatter => {
                        let op = reduce();
                        quote!(ReduceScatter(#op))
                    }
                    W::AllGather => quote!(AllGather),
                    W::Broadcast => {
                        let root = rank()?;
                        quote!(Broadcast(#root))
                    }
                    W::Send => {
                        let peer = rank()?;
                        quote!(Send(#peer))
                    }
                    W::Recv => {
                        let peer = rank()?;
                        quote!(Recv(#peer))
                    }
                };
                let group = number(c.group);
                quote!(Collective(CollectiveInfo {
                    kind: CollectiveKind::#kind,
                    send: #send,
                    recv: #recv,
                    group: #group,
                }))
            }
        };
        let site = site(&op.label, op.span);
        ops.push(match op.lane {
            Lane::Host => quote!(#site.on_host(#kind)),
            Lane::Stream(stream) => {
                let stream = number(stream);
                quote!(#site.on(#stream, #kind))
            }
        });
    }

    let buffers = plan.buffers.iter().enumerate().map(|(id, buffer)| -> syn::Result<TokenStream> {
        let label = match buffer.kind {
            BufferKind::Param { .. } => format!("parameter {}", buffer.name),
            _ => format!("{}: {}", buffer.name, buffer_kind(plan, id)),
        };
        let site = site(&label, buffer.name.span());
        let kind = match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => quote!(Pageable),
            BufferKind::Host(kind) => {
                let flags: Vec<TokenStream> = [
                    (kind.mapped, quote!(MAPPED)),
                    (kind.write_combined, quote!(WRITE_COMBINED)),
                    (kind.portable, quote!(PORTABLE)),
                ]
                .into_iter()
                .filter_map(|(set, flag)| set.then(|| quote!(HostAlloc::#flag)))
                .collect();
                match &flags[..] {
                    [] => quote!(Pinned(HostAlloc::PINNED)),
                    [first, rest @ ..] => quote!(Pinned(#first #(.with(#rest))*)),
                }
            }
            BufferKind::Device => quote!(Device),
            BufferKind::StreamOrdered { .. } => quote!(StreamOrdered),
            BufferKind::Param {
                mutable,
                registered,
            } => {
                let measured = match buffer.len_expr {
                    Some(_) => quote!(None),
                    None => {
                        let input = number(sizes.measured_input(&buffer.name.to_string()));
                        quote!(Some(#input))
                    }
                };
                quote!(Param { mutable: #mutable, registered: #registered, measured: #measured })
            }
        };
        let len = number(lengths[id]);
        let elem = &buffer.elem;
        let elem = quote_spanned!(elem.span()=> elem::<#elem>());
        let array = array_tokens(&buffer.array, plan, &mut sizes)?;
        let gpu = placement_tokens(&buffer.gpu, plan, &mut sizes)?;
        Ok(quote!(#site.buffer(#elem, #len, #kind)#array #gpu))
    });
    let buffers: Vec<TokenStream> = buffers.collect::<syn::Result<_>>()?;

    let kernels = plan.kernels.iter().enumerate().map(|(index, kernel)| {
        let site = site(&format!("kernel {}", kernel.name), kernel.name.span());
        let entry = super::kernels::symbol(plan, index);
        let path = &plan.modules[kernel.module];
        let module = quote_spanned!(path.span()=> &#path);
        let params = kernel.params.iter().map(|param| match &param.kind {
            KernelParamKind::Slice { .. } => quote!(ParamLayout::POINTER),
            KernelParamKind::Value(ty) => quote_spanned!(ty.span()=> ParamLayout::of::<#ty>()),
        });
        let written: Vec<Literal> = kernel
            .params
            .iter()
            .enumerate()
            .filter(|(_, param)| {
                matches!(
                    param.kind,
                    KernelParamKind::Slice {
                        access: SliceAccess::Write,
                        ..
                    }
                )
            })
            .map(|(position, _)| Literal::usize_unsuffixed(position))
            .collect();
        let writes = (!written.is_empty()).then(|| quote!(.writes(&[#(#written),*])));
        quote!(#site.kernel(#entry, #module, &[#(#params),*])#writes)
    });
    let streams = plan
        .streams
        .iter()
        .map(|stream| -> syn::Result<TokenStream> {
            let site = site(&format!("stream {}", stream.name), stream.name.span());
            let name = stream.name.to_string();
            let priority = match stream.priority {
                Priority::Normal => quote!(Priority::Normal),
                Priority::High => quote!(Priority::High),
                Priority::Level(level) => {
                    let level = proc_macro2::Literal::i32_unsuffixed(level);
                    quote!(Priority::Level(#level))
                }
            };
            let array = array_tokens(&stream.array, plan, &mut sizes)?;
            let gpu = placement_tokens(&stream.gpu, plan, &mut sizes)?;
            Ok(quote!(#site.stream(#name, #priority)#array #gpu))
        });
    let streams: Vec<TokenStream> = streams.collect::<syn::Result<_>>()?;
    let mut events = Vec::new();
    for (event, array) in plan.events.iter().zip(&plan.event_arrays) {
        let site = site(&format!("event {event}"), event.span());
        let array = array_tokens(array, plan, &mut sizes)?;
        events.push(quote!(#site.event()#array));
    }
    let loops: Vec<TokenStream> = plan
        .loops
        .iter()
        .enumerate()
        .map(|(index, repeat)| {
            let site = site(
                &format!("for {} in 0..{}", repeat.var, text(&repeat.count)),
                repeat.span,
            );
            let count = number(sizes.length(&repeat.count, plan)?);
            let input = number(sizes.loop_input(index));
            let (first, end) = (number(repeat.ops.start), number(repeat.ops.end));
            Ok(quote!(#site.repeat(#count, #input, #first, #end)))
        })
        .collect::<syn::Result<_>>()?;

    // Checked last: each distinct size is numbered as it is met.
    if sizes.count() > MOST {
        return Err(too_many(
            "distinct sizes (lengths, range bounds, launch dimensions)",
        ));
    }
    let gpus = match &plan.gpus {
        None => quote!(None),
        Some(gpus) => {
            let gpus_site = site(
                &format!("gpus {}[{}]", gpus.name, text(&gpus.count)),
                gpus.span,
            );
            let count = number(sizes.length(&gpus.count, plan)?);
            let peer = match gpus.peer {
                None => quote!(None),
                Some(span) => {
                    let peer_site = site(&format!("peer {}", gpus.name), span);
                    quote!(Some(#peer_site))
                }
            };
            quote!(Some(GpusInfo { site: #gpus_site, count: #count, peer: #peer }))
        }
    };
    let ranks = match &plan.ranks {
        None => quote!(None),
        Some(ranks) => {
            let ranks_site = site(&format!("ranks {}", ranks.name), ranks.span);
            quote!(Some(#ranks_site))
        }
    };
    let plan_site = site(&plan.name.to_string(), plan.name.span());
    let inputs = sizes.input_names();
    if inputs.len() > MOST {
        return Err(too_many("size inputs"));
    }
    let programs = sizes.programs();
    let run_inputs = sizes.run_inputs().into_iter().map(number);
    let per_run = per_run.into_iter().map(number);
    let info = quote! {{
        use ::memplan::__private::{Arg::*, BufferKind::*, Dims::*, Op::*, Place::*, Term::*, *};
        PlanInfo {
            site: #plan_site,
            file: ::core::file!(),
            inputs: &[#(#inputs),*],
            sizes: &[#(#programs),*],
            kernels: &[#(#kernels),*],
            buffers: &[#(#buffers),*],
            streams: &[#(#streams),*],
            events: &[#(#events),*],
            ops: &[#(#ops),*],
            loops: &[#(#loops),*],
            run_inputs: &[#(#run_inputs),*],
            per_run: &[#(#per_run),*],
            gpus: #gpus,
            ranks: #ranks,
        }
    }};
    Ok(Description {
        info,
        inputs: sizes.new_inputs(plan),
        given,
        run_given,
    })
}

/// An expression `new` evaluates once may not read a loop's variable.
fn once(plan: &Plan, op: usize, expr: &Expr) -> syn::Result<()> {
    let Some(repeat) = plan.loop_of(op) else {
        return Ok(());
    };
    let var = repeat.var.to_string();
    match crate::sym::mentions(expr, &var) {
        None => Ok(()),
        Some(path) => Err(syn::Error::new_spanned(
            path,
            format!(
                "`{}` reads the loop variable `{var}`, and `new` computes it once\n\n\
                 help: a launch argument that changes with `{var}` is a size cast to the kernel's integer type, \
                 `(n - {var} * m) as i32`; launch dimensions are sizes, `blocks(min(m, n - {var} * m), 256)`",
                text(expr)
            ),
        )),
    }
}

/// A launch dimension `new` computes may not read a `run` parameter
/// (one written in the size arithmetic may: the runtime computes it).
fn at_new(plan: &Plan, expr: &Expr) -> syn::Result<()> {
    match plan.run_param_in(expr) {
        None => Ok(()),
        Some(path) => Err(syn::Error::new_spanned(
            &path,
            format!(
                "`{}` is given to each run, and `new` computes `{}` once\n\n\
                 help: write launch dimensions that change from run to run as sizes, `blocks(len, 256)`",
                text(&path),
                text(expr)
            ),
        )),
    }
}

/// For a value argument of launch `op` that reads the loop's variable:
/// the size it casts to an integer type (`(n - c * m) as i32`), which the
/// runtime computes at each iteration.
fn counted(plan: &Plan, op: usize, value: &Expr) -> syn::Result<Option<(Expr, TokenStream)>> {
    let Some(repeat) = plan.loop_of(op) else {
        return Ok(None);
    };
    if crate::sym::mentions(value, &repeat.var.to_string()).is_none() {
        return Ok(None);
    }
    let mut inner = value;
    while let Expr::Paren(paren) = inner {
        inner = &paren.expr;
    }
    let (size, ty) = match inner {
        Expr::Cast(cast) => (&*cast.expr, text(&cast.ty)),
        other => (other, "usize".to_owned()),
    };
    let int = match ty.as_str() {
        "i32" => quote!(Int::I32),
        "u32" => quote!(Int::U32),
        "i64" | "isize" => quote!(Int::I64),
        "u64" | "usize" => quote!(Int::U64),
        _ => {
            return once(plan, op, value).map(|()| None);
        }
    };
    if !crate::sym::is_pure(size, &plan.atoms) {
        return once(plan, op, value).map(|()| None);
    }
    Ok(Some((size.clone(), int)))
}

/// `Part(buffer, start, end)`, or `Whole(buffer)`.
fn place_tokens(
    plan: &Plan,
    place: &Place,
    lengths: &[u16],
    sizes: &mut Sizes,
) -> syn::Result<TokenStream> {
    let buffer = number(place.buffer);
    let Some(range) = &place.range_expr else {
        return Ok(quote!(Whole(#buffer)));
    };
    let start = match &range.start {
        Some(start) => sizes.length(start, plan)?,
        None => sizes.literal(0),
    };
    let end = match (&range.end, &range.limits) {
        (None, _) => lengths[place.buffer],
        (Some(end), RangeLimits::HalfOpen(_)) => sizes.length(end, plan)?,
        (Some(end), RangeLimits::Closed(_)) => {
            let last = sizes.length(end, plan)?;
            sizes.plus_one(last)
        }
    };
    let (start, end) = (number(start), number(end));
    Ok(quote!(Part(#buffer, #start, #end)))
}

/// `.array(Array { count, index })` of a set's declaration, or nothing.
fn array_tokens(
    array: &Option<crate::ir::Array>,
    plan: &Plan,
    sizes: &mut Sizes,
) -> syn::Result<TokenStream> {
    let Some(array) = array else {
        return Ok(TokenStream::new());
    };
    let count = number(sizes.length(&array.count, plan)?);
    let index = match &array.index {
        Some((index, _)) => sizes.length(index, plan)?,
        None => sizes.literal(0),
    };
    let index = number(index);
    Ok(quote!(.array(Array { count: #count, index: #index })))
}

/// `.on(Gpu::..)`: the GPU of a device buffer or stream, if placed.
fn placement_tokens(
    placement: &Option<Placement>,
    plan: &Plan,
    sizes: &mut Sizes,
) -> syn::Result<TokenStream> {
    Ok(match placement {
        None => TokenStream::new(),
        Some(Placement::Each(_)) => quote!(.on(Gpu::Each)),
        Some(Placement::One { index, .. }) => {
            let index = number(sizes.length(index, plan)?);
            quote!(.on(Gpu::One(#index)))
        }
    })
}

/// `Sizes(&[..])` when every dimension is written in the size arithmetic;
/// `None` when `new` must compute them.
fn dims(expr: &Expr, plan: &Plan, sizes: &mut Sizes) -> Option<TokenStream> {
    let parts: Vec<&Expr> = match expr {
        Expr::Tuple(tuple) if (1..=3).contains(&tuple.elems.len()) => tuple.elems.iter().collect(),
        Expr::Paren(inner) => return dims(&inner.expr, plan, sizes),
        other => vec![other],
    };
    let mut indices = Vec::new();
    for part in parts {
        indices.push(number(sizes.launch(part, plan)?));
    }
    Some(quote!(Sizes(&[#(#indices),*])))
}

/// The number of the host step op `index` is, among the plan's host steps.
pub fn host_step_number(plan: &Plan, index: usize) -> u16 {
    plan.ops[..index]
        .iter()
        .filter(|op| matches!(op.kind, OpKind::Host { .. }))
        .count() as u16
}

/// `Site("copy a -> da", 22, 13)`.
fn site(label: &str, span: Span) -> TokenStream {
    let start = span.start();
    let (line, column) = (number(start.line), number(start.column + 1));
    quote!(Site(#label, #line, #column))
}

/// `blocks(n, per_block)` in a launch dimension computed by `new` calls
/// memplan's, so that no name is brought into the scope of the user's code.
pub fn with_builtins(expr: &Expr) -> TokenStream {
    use syn::visit_mut::{self, VisitMut};
    struct Builtins;
    impl VisitMut for Builtins {
        fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
            visit_mut::visit_expr_call_mut(self, call);
            if is_blocks(call) {
                let span = call.func.span();
                *call.func = syn::parse_quote_spanned!(span=> ::memplan::blocks);
            }
        }
    }
    let mut expr = expr.clone();
    Builtins.visit_expr_mut(&mut expr);
    quote!(#expr)
}

/// Whether the plan has host steps that may read its sizes and values.
pub fn has_host_steps(plan: &Plan) -> bool {
    plan.ops
        .iter()
        .any(|op| matches!(op.kind, OpKind::Host { .. }))
}

/// The plan's size and value parameters `new` takes, in order.
pub fn scalar_params(plan: &Plan) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    scalars(plan, false)
}

/// The plan's `run` size and value parameters, in order.
pub fn run_params(plan: &Plan) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    scalars(plan, true)
}

fn scalars(plan: &Plan, per_run: bool) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    let params = plan.params.iter().filter(move |p| p.per_run == per_run);
    params.filter_map(|param| match &param.kind {
        ParamKind::Size => Some((&param.name, quote!(usize))),
        ParamKind::Value(ty) => Some((&param.name, quote!(#ty))),
        ParamKind::Slice(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;

    #[test]
    fn more_sizes_than_the_description_can_number_are_refused() {
        // Two new sizes an op: fewer ops than the limit, more sizes.
        let fills: String = (0..=MOST / 2)
            .map(|i| format!("fill d[{}..{}] with 0.0;", 2 * i, 2 * i + 1))
            .collect();
        let text = format!("plan P() {{ device d: [f32; 140000]; {fills} }}");
        let input: crate::syntax::Input = syn::parse_str(&text).unwrap();
        let errors = Errors::new();
        let plan = crate::ir::build(&input.plans[0], &errors);
        errors.finish().unwrap();
        let error = describe(&plan).err().expect("65,536 sizes were numbered");
        assert!(error.to_string().contains("distinct sizes"), "{error}");
    }
}
