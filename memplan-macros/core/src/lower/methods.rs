//! The plan type's code: `new`, which evaluates the user's expressions and
//! allocates the host buffers, the methods that forward to the runtime's
//! engine, and the `Plan` impl with the host views and host steps.

use super::diagram::Overview;
use super::given::Given;
use super::names::{host_step, info, local, number, private, state};
use super::sizes::is_blocks;
use super::{Bodies, Description};
use crate::ir::{BufferKind, OpKind, ParamKind, Plan};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The types of the host buffers' views: `VectorAddHost`, `VectorAddHostMut`.
fn host_views(plan: &Plan) -> (Ident, Ident) {
    (
        format_ident!("{}Host", plan.name),
        format_ident!("{}HostMut", plan.name),
    )
}

/// The host buffers the plan allocates: the fields of its state.
fn host_buffers(plan: &Plan) -> impl Iterator<Item = (usize, &crate::ir::Buffer)> {
    plan.buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b.kind, BufferKind::Host(_)))
}

/// The struct of the host buffers, and of the sizes and values when host
/// steps read them.
fn state_struct(plan: &Plan) -> TokenStream {
    let name = state();
    let buffers = host_buffers(plan).map(|(_, buffer)| {
        let (field, elem) = (&buffer.name, &buffer.elem);
        match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => quote!(#field: ::std::vec::Vec<#elem>),
            _ => quote!(#field: __memplan::PinnedBuffer<#elem>),
        }
    });
    let scalars = keeps_scalars(plan)
        .then(|| scalar_params(plan).map(|(name, ty)| quote!(#name: #ty)))
        .into_iter()
        .flatten();
    quote! {
        pub struct #name {
            #(#buffers,)*
            #(#scalars,)*
        }
    }
}

/// Whether the state keeps the plan's sizes and values: for host steps,
/// and for the expressions each run computes.
fn keeps_scalars(plan: &Plan) -> bool {
    plan.has_host_steps() || plan.params.iter().any(|p| p.per_run())
}

/// The plan type's code: the state of its host buffers, its inherent
/// methods, its host views and `impl memplan::Plan`; `description` is
/// `None` for a plan with errors, whose type only keeps its shape.
pub fn code(plan: &Plan, description: Option<&Description>, overview: &Overview) -> TokenStream {
    let (state, bodies) = match description {
        Some(_) => (Some(state_struct(plan)), Bodies::Ops),
        None => (None, Bodies::Placeholder),
    };
    let (inputs, given, run_given) = match description {
        Some(description) => (
            &description.inputs[..],
            &description.givens.new[..],
            &description.givens.run[..],
        ),
        None => (&[][..], &[][..], &[][..]),
    };
    let impl_block = impl_block(plan, (inputs, given, run_given), overview, bodies);
    let views = views(plan, bodies);
    quote! {
        #state
        #impl_block
        #views
    }
}

/// The inherent methods: constants, `new`, and what forwards to the engine.
fn impl_block(
    plan: &Plan,
    (inputs, given, run_given): (&[TokenStream], &[Given], &[Given]),
    overview: &Overview,
    bodies: Bodies,
) -> TokenStream {
    let name = &plan.name;
    let fields: Vec<String> = host_buffers(plan)
        .map(|(_, b)| format!("`{}: [{}]`", b.name, crate::text::text(&b.elem)))
        .collect();
    let listed = match fields.len() {
        0 => "none".to_owned(),
        _ => fields.join(", "),
    };

    let (summary, diagram) = (&overview.summary, &overview.mermaid);
    let new = new(plan, inputs, given, bodies);
    let check = check(plan, inputs, given, bodies);
    let slices: Vec<_> = plan
        .params
        .iter()
        .filter_map(|param| match param.kind {
            ParamKind::Slice(buffer) => Some((param, &plan.buffers[buffer])),
            _ => None,
        })
        .collect();
    // What `run` takes: the `run` parameters and the caller's slices, in
    // the order the plan declares them.
    let params: Vec<TokenStream> = plan
        .params
        .iter()
        .filter_map(|param| {
            let name = &param.name;
            match &param.kind {
                ParamKind::Slice(buffer) => {
                    let buffer = &plan.buffers[*buffer];
                    let elem = &buffer.elem;
                    Some(match buffer.kind {
                        BufferKind::Param { mutable: true, .. } => quote!(#name: &mut [#elem]),
                        _ => quote!(#name: &[#elem]),
                    })
                }
                _ if !param.per_run() => None,
                ParamKind::Size => Some(quote!(#name: usize)),
                ParamKind::Value(ty) => Some(quote!(#name: #ty)),
            }
        })
        .collect();
    let lent = slices.iter().map(|(param, buffer)| {
        let name = &param.name;
        match buffer.kind {
            BufferKind::Param { mutable: true, .. } => {
                quote!(__memplan::Slice::new_mut(#name))
            }
            _ => quote!(__memplan::Slice::new(#name)),
        }
    });
    let run_given = run_closure(plan, run_given, bodies);
    let lent = match slices.is_empty() {
        true => quote!(),
        false => quote!([#(#lent),*],),
    };
    quote! {
        impl #name {
            #new
            #check
            __memplan::plan_methods!(
                |#(#params),*| #run_given,
                #lent
                #listed,
                #summary,
                #diagram,
            );
        }
    }
}

/// What a run of a plan with `run` parameters gives the engine: a closure
/// that, from the plan's state (its sizes and values), writes the run's
/// sizes and the values of the expressions that read `run` parameters
/// into the `RunGiven` it is handed, evaluated in safe code at the user's
/// tokens; `None` for a plan without.
fn run_closure(plan: &Plan, run_given: &[Given], bodies: Bodies) -> TokenStream {
    if !plan.params.iter().any(|p| p.per_run()) {
        return quote!(::core::option::Option::None);
    }
    let (private, state, this, run) = (private(), state(), local("state"), local("given"));
    if bodies == Bodies::Placeholder {
        // The plan has errors and is never run: the parameters are used.
        let names = run_params(plan).map(|(name, _)| name);
        return quote!({
            let _ = (#(#names,)*);
            ::core::option::Option::None
        });
    }
    let scalars = scalar_params(plan).map(|(name, ty)| {
        let copied = quote_spanned!(ty.span()=> #private::copied::<#ty>(&#this.#name));
        quote!(#[allow(unused_variables)] let #name = #copied;)
    });
    let sizes = plan
        .params
        .iter()
        .filter(|p| p.per_run() && matches!(p.kind, ParamKind::Size))
        .map(|p| &p.name);
    let givens = run_given.iter().map(|given| given_call(&run, given));
    quote! {
        ::core::option::Option::Some(&|#this: &#state, #run: &mut #private::RunGiven| {
            #(#scalars)*
            #run.sizes(&[#(#sizes),*]);
            #(#givens)*
        })
    }
}

/// `new`: the size inputs, the host buffers, the user's values, then the
/// engine. Every user expression is evaluated here, in safe code, at the
/// user's tokens; the one `unsafe` block holds only locals.
fn new(plan: &Plan, inputs: &[TokenStream], given: &[Given], bodies: Bodies) -> TokenStream {
    let (context, builder, state_local) = (local("context"), local("plan"), local("state"));
    let params = scalar_params(plan).map(|(name, ty)| quote!(#name: #ty));
    let (doc, context_type) = match &plan.gpus {
        None => (
            quote! {
                /// Makes the plan's memory, kernels, streams and events, and checks its sizes.
            },
            quote!(&__memplan::Context),
        ),
        Some(gpus) => {
            let doc = format!(
                " Makes the plan's memory, kernels, streams and events on the GPUs of                  the contexts given (`{0}[i]` is the `i`th), as many as `{0}` declares,                  and checks its sizes.",
                gpus.name
            );
            (quote!(#[doc = #doc]), quote!(&[__memplan::Context]))
        }
    };
    let (ranks, rank_param, rank_arg) = rank_parameter(plan);
    let start = match (&plan.gpus, &plan.ranks) {
        (Some(_), _) => quote!(__memplan::Builder::on_gpus),
        (None, Some(_)) => quote!(__memplan::Builder::joining),
        (None, None) => quote!(__memplan::Builder::new),
    };
    let doc = match ranks {
        None => doc,
        Some(ranks) => {
            let more = format!(
                " `{}` says where this process stands in its job (the job's id, how many ranks it has, and which one this is); `new` joins the job's communicator, and returns once every rank has.",
                ranks.name
            );
            quote!(#doc #[doc = ""] #[doc = #more])
        }
    };
    if bodies == Bodies::Placeholder {
        let names = scalar_params(plan).map(|(name, _)| name);
        return quote! {
            #doc
            pub fn new(#context: #context_type, #rank_param #(#params),*) -> __memplan::Result<Self> {
                let _ = (#context, #rank_arg #(#names),*);
                ::core::unreachable!("memplan: this plan has errors")
            }
        };
    }
    let (private, info, state) = (private(), info(), state());
    let buffers = host_buffers(plan).map(|(id, buffer)| {
        let (field, id) = (&buffer.name, number(id));
        match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => quote!(#field: #builder.pageable(#id)?),
            _ => quote!(#field: #builder.pinned(#id)?),
        }
    });
    let host_steps = plan.has_host_steps();
    let scalars: Vec<_> = if keeps_scalars(plan) {
        scalar_params(plan).map(|(name, _)| quote!(#name)).collect()
    } else {
        Vec::new()
    };
    // Value parameters are copied into each host step: say so at their
    // type (once: host steps check it themselves).
    let copy_checks = plan
        .params
        .iter()
        .filter(|param| !host_steps && !param.per_run())
        .filter_map(|param| match &param.kind {
            ParamKind::Value(ty) => {
                let name = &param.name;
                Some(quote_spanned!(ty.span()=> let _ = #private::copied::<#ty>(&#name);))
            }
            _ => None,
        });
    let givens = given.iter().map(|given| given_call(&builder, given));
    quote! {
        #doc
        pub fn new(#context: #context_type, #rank_param #(#params),*) -> __memplan::Result<Self> {
            #(#copy_checks)*
            let mut #builder = #start(#context, #rank_arg &#info, &[#(#inputs),*])?;
            let #state_local = #state { #(#buffers,)* #(#scalars,)* };
            #(#givens)*
            // SAFETY: memplan! checked the plan, and the state holds what the builder allocated.
            ::core::result::Result::Ok(Self(unsafe { #private::Engine::new(#builder, #state_local) }?))
        }
    }
}

/// The `ranks` declaration of a plan that is one rank of a job, which takes
/// where it stands in the job: its parameter of `new` and `check`, and the
/// argument passing it on. One that declares `gpus` beside `ranks` does not
/// compile (`check/gpu_placement.rs`), and its type keeps the interface of
/// a plan on several GPUs, which code using it is written for.
fn rank_parameter(
    plan: &Plan,
) -> (
    Option<&crate::ir::Ranks>,
    Option<TokenStream>,
    Option<TokenStream>,
) {
    let ranks = plan.ranks.as_ref().filter(|_| plan.gpus.is_none());
    let param = ranks.map(|ranks| {
        let name = &ranks.name;
        quote!(#name: &__memplan::Rank,)
    });
    let arg = ranks.map(|ranks| {
        let name = &ranks.name;
        quote!(#name,)
    });
    (ranks, param, arg)
}

/// `check`: the checks of `new` that need no GPU, against device models.
/// It takes what `new` takes, a model for each context, and hands the
/// same size inputs and the values of the same expressions to a
/// `Checker`, which allocates and loads nothing.
fn check(plan: &Plan, inputs: &[TokenStream], given: &[Given], bodies: Bodies) -> TokenStream {
    let model = local(if plan.gpus.is_some() {
        "models"
    } else {
        "model"
    });
    let checker = local("plan");
    let params: Vec<_> = scalar_params(plan)
        .map(|(name, ty)| quote!(#name: #ty))
        .collect();
    let (mut doc, model_type) = match &plan.gpus {
        None => (
            " Checks the plan's sizes and values against `model`, a kind of GPU's \
             limits (`DeviceModel::named(\"sm_90\")`), without a GPU: every check \
             `new` makes that needs none, with its errors."
                .to_owned(),
            quote!(&__memplan::DeviceModel),
        ),
        Some(gpus) => (
            format!(
                " Checks the plan's sizes and values against `models`, a kind of \
                 GPU's limits (`DeviceModel::named(\"sm_90\")`) for each of the GPUs \
                 (`{0}[i]` is the `i`th), as many as `{0}` declares, without a GPU: \
                 every check `new` makes that needs none, with its errors.",
                gpus.name
            ),
            quote!(&[__memplan::DeviceModel]),
        ),
    };
    let (ranks, rank_param, rank_arg) = rank_parameter(plan);
    if let Some(ranks) = ranks {
        doc.push_str(&format!(
            " `{}` is the rank's place in its job; what its ranks compare when `new` \
             joins them is returned, for `Checked::agrees_with`.",
            ranks.name
        ));
    }
    let start = match (&plan.gpus, &plan.ranks) {
        (Some(_), _) => quote!(__memplan::Checker::on_gpus),
        (None, Some(_)) => quote!(__memplan::Checker::joining),
        (None, None) => quote!(__memplan::Checker::new),
    };
    let signature = quote! {
        #[doc = #doc]
        pub fn check(
            #model: #model_type,
            #rank_param
            #(#params),*
        ) -> __memplan::Result<__memplan::Checked>
    };
    if bodies == Bodies::Placeholder {
        let names = scalar_params(plan).map(|(name, _)| name);
        return quote! {
            #signature {
                let _ = (#model, #rank_arg #(#names),*);
                ::core::unreachable!("memplan: this plan has errors")
            }
        };
    }
    let info = info();
    let buffers = host_buffers(plan).map(|(id, buffer)| {
        let (elem, id) = (&buffer.elem, number(id));
        quote!(#checker.host::<#elem>(#id)?;)
    });
    // A value only host steps read is not read here.
    let unread = plan
        .params
        .iter()
        .filter(|param| !param.per_run() && matches!(param.kind, ParamKind::Value(_)))
        .map(|param| &param.name)
        .filter(|name| {
            let name = name.to_string();
            !given
                .iter()
                .any(|given| crate::sym::mentions(given.expr(), &name).is_some())
        });
    let givens = given.iter().map(|given| given_call(&checker, given));
    quote! {
        #signature {
            #(let _ = &#unread;)*
            let mut #checker = #start(#model, #rank_arg &#info, &[#(#inputs),*])?;
            #(#buffers)*
            #(#givens)*
            #checker.finish()
        }
    }
}

/// The call handing over what `given`'s expression computes, to
/// `receiver` (the `Builder` in `new`, the `RunGiven` in a run). Each
/// expression goes into a local of its declared type, so that a mismatch
/// is rustc's own error, at the user's expression, pointing at the
/// declaration that wants the type.
fn given_call(receiver: &syn::Ident, given: &Given) -> TokenStream {
    let value = local("value");
    match given {
        Given::Fill {
            op,
            ty,
            value: expr,
        } => {
            let op = number(*op);
            let typed = quote_spanned!(expr.span()=> { let #value: #ty = #expr; #value });
            quote!(#receiver.fill(#op, #typed);)
        }
        Given::Value {
            op,
            arg,
            ty,
            value: expr,
        } => {
            let (op, arg) = (number(*op), number(*arg));
            let typed = quote_spanned!(expr.span()=> { let #value: #ty = #expr; #value });
            let call = quote_spanned!(ty.span()=> #receiver.value::<#ty>);
            quote!(#call(#op, #arg, #typed);)
        }
        Given::Grid { op, value: expr } => {
            let (op, expr) = (number(*op), with_builtins(expr));
            quote!(#receiver.grid(#op, #expr);)
        }
        Given::Block { op, value: expr } => {
            let (op, expr) = (number(*op), with_builtins(expr));
            quote!(#receiver.block(#op, #expr);)
        }
        Given::Shared { op, value: expr } => {
            let (op, expr) = (number(*op), with_builtins(expr));
            quote!(#receiver.shared(#op, #expr);)
        }
    }
}

/// The host views and `impl memplan::Plan`, by the runtime's
/// `plan_views!`: the views' types, and the host steps.
fn views(plan: &Plan, bodies: Bodies) -> TokenStream {
    let name = &plan.name;
    let (view, view_mut) = host_views(plan);
    let fields = host_buffers(plan).map(|(_, b)| {
        let (field, elem) = (&b.name, &b.elem);
        quote!(#field: #elem)
    });
    match bodies {
        Bodies::Ops => {
            let state = state();
            // The steps' code is written out here, before the views: so
            // rustc reports its errors in the order the plan's code reads.
            let (steps, named) = match plan.has_host_steps() {
                true => (
                    Some(host_steps(plan)),
                    Some({
                        let host_step = host_step();
                        quote!(, #host_step)
                    }),
                ),
                false => (None, None),
            };
            quote! {
                #steps
                __memplan::plan_views!(#name, #state, #view, #view_mut, [#(#fields),*] #named);
            }
        }
        Bodies::Placeholder => {
            quote!(__memplan::plan_views!(placeholder #name, #view, #view_mut, [#(#fields),*]);)
        }
    }
}

/// `__memplan_host_step`: each host step's code, as a closure over the buffers it
/// lists, with the plan's sizes and values in scope and nothing else.
fn host_steps(plan: &Plan) -> TokenStream {
    let (state, private, host_step) = (state(), private(), host_step());
    let (this, step, slices, closure) = (
        local("state"),
        local("step"),
        local("slices"),
        local("host_step"),
    );
    let scalars = scalar_params(plan).map(|(name, ty)| {
        let copied = quote_spanned!(ty.span()=> #private::copied::<#ty>(&#this.#name));
        quote!(#[allow(unused_variables)] let #name = #copied;)
    });
    let slice_of = |buffer: usize| {
        plan.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Slice(_)))
            .position(|p| matches!(p.kind, ParamKind::Slice(b) if b == buffer))
    };
    let arms = plan.ops.iter().enumerate().filter_map(|(index, op)| {
        let OpKind::Host { params, body } = &op.kind else {
            return None;
        };
        let step_number = number(plan.host_step_number(index));
        let picked: Vec<usize> = params.iter().filter_map(|p| slice_of(p.buffer)).collect();
        let handles: Vec<_> = (0..picked.len())
            .map(|i| local(&format!("slice_{i}")))
            .collect();
        let pick = (!picked.is_empty()).then(|| {
            let picked = picked.iter().map(|&p| number(p));
            quote!(let [#(#handles),*] = #private::pick(#slices, [#(#picked),*])?;)
        });
        let mut handles_left = handles.iter();
        let mut closure_params = Vec::new();
        let mut args = Vec::new();
        for param in params {
            let (name, elem) = (&param.name, &plan.buffers[param.buffer].elem);
            let reference = if param.writes() {
                quote!(&mut)
            } else {
                quote!(&)
            };
            closure_params.push(quote!(#name: #reference [#elem]));
            let handle = match plan.buffers[param.buffer].kind {
                BufferKind::Param { .. } => handles_left.next(),
                _ => None,
            };
            args.push(match (handle, param.writes()) {
                (Some(handle), true) => quote!(#handle.get_mut()?),
                (Some(handle), false) => quote!(#handle.get()?),
                (None, _) => quote!(#reference #this.#name),
            });
        }
        Some(quote! {
            #step_number => {
                #pick
                let #closure = |#(#closure_params),*| #body;
                #closure(#(#args),*);
            }
        })
    });
    // An associated function of the plan's type, as the steps were a
    // method of `impl memplan::Plan`: their code names the plan as `Self`.
    let name = &plan.name;
    quote! {
        impl #name {
            fn #host_step(
                #this: &mut #state,
                #step: u16,
                #slices: &mut [#private::Slice<'_>],
            ) -> ::core::result::Result<(), #private::Fault> {
                #(#scalars)*
                match #step {
                    #(#arms)*
                    _ => {}
                }
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// `blocks(n, per_block)` in a launch dimension computed by `new` calls
/// memplan's, so that no name is brought into the scope of the user's code.
fn with_builtins(expr: &syn::Expr) -> TokenStream {
    use syn::visit_mut::{self, VisitMut};
    struct Builtins;
    impl VisitMut for Builtins {
        fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
            visit_mut::visit_expr_call_mut(self, call);
            if is_blocks(call) {
                let span = call.func.span();
                *call.func = syn::parse_quote_spanned!(span=> __memplan::blocks);
            }
        }
    }
    let mut expr = expr.clone();
    Builtins.visit_expr_mut(&mut expr);
    quote!(#expr)
}

/// The plan's size and value parameters `new` takes, in order.
fn scalar_params(plan: &Plan) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    scalars(plan, false)
}

/// The plan's `run` size and value parameters, in order.
fn run_params(plan: &Plan) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    scalars(plan, true)
}

fn scalars(plan: &Plan, per_run: bool) -> impl Iterator<Item = (&syn::Ident, TokenStream)> {
    let params = plan.params.iter().filter(move |p| p.per_run() == per_run);
    params.filter_map(|param| match &param.kind {
        ParamKind::Size => Some((&param.name, quote!(usize))),
        ParamKind::Value(ty) => Some((&param.name, quote!(#ty))),
        ParamKind::Slice(_) => None,
    })
}
