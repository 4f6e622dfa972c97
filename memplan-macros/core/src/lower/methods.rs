//! The plan type's methods: `new`, `run`, `enqueue`, `graph`, the host
//! views, timing, and the `Plan` trait the runtime's guards use.

use super::names::{self, local};
use super::sites::{Setup, setup};
use super::{Bodies, diagram, fields, ops, sites};
use crate::ir::{BufferKind, Lane, ParamKind, Plan};
use proc_macro2::TokenStream;
use quote::quote;

/// Why a plan cannot be captured as a CUDA graph, if it cannot.
pub fn graph_obstacle(plan: &Plan) -> Option<&'static str> {
    if plan
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Slice(_)))
    {
        Some(
            "this plan borrows the caller's slices for each run, and a CUDA graph would keep the first run's addresses",
        )
    } else if plan.ops.iter().any(|op| op.lane == Lane::Host) {
        Some(
            "this plan has synchronous operations or host steps, which a CUDA graph cannot capture; \
             only plans whose operations all run in stream blocks replay as graphs",
        )
    } else if plan.streams.is_empty() {
        Some("this plan has no stream, so there is no work to capture")
    } else {
        None
    }
}

fn has_slice_params(plan: &Plan) -> bool {
    plan.params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Slice(_)))
}

pub fn impl_block(plan: &Plan, setup_sites: &Setup, bodies: Bodies) -> TokenStream {
    let name = &plan.name;
    let core = names::core();
    let context = local("__memplan_context");
    let new_params = plan.params.iter().filter_map(|param| {
        let name = &param.name;
        match &param.kind {
            ParamKind::Size => Some(quote!(#name: usize)),
            ParamKind::Value(ty) => Some(quote!(#name: #ty)),
            ParamKind::Slice(_) => None,
        }
    });
    let constructor = fields::constructor(plan, setup_sites);
    let site_consts = sites::consts(plan, setup_sites);
    let documentation = diagram::consts(plan);
    let runs = if has_slice_params(plan) {
        run_with_slices(plan, setup_sites)
    } else {
        run_and_enqueue()
    };
    let graph = graph(plan);
    let views = host_view_methods(plan);
    let op_count = plan.ops.len();
    let ops_params = slice_params(plan, true);
    let slice_names: Vec<_> = plan
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.kind, ParamKind::Slice(_)))
        .map(|(index, _)| names::slice(index))
        .collect();
    let this = names::this();
    let bind_params = bind_params(plan, &quote!(#this));
    let ops_body = match bodies {
        Bodies::Ops => {
            let statements = (0..plan.ops.len()).map(|index| ops::statements(plan, index));
            quote! {
                use ::memplan::OpResultExt as _;
                #bind_params
                #(#statements)*
                ::core::result::Result::Ok(())
            }
        }
        Bodies::Placeholder => quote! {
            let _ = (#(#slice_names),*);
            ::core::unreachable!("memplan: this plan has errors")
        },
    };
    let streams = plan.streams.iter().map(|s| &s.name);
    quote! {
        impl #name {
            #site_consts
            #documentation

            /// Creates every buffer, stream, event and kernel of the plan,
            /// once; runs reuse them. A failure frees what was made before it.
            pub fn new(#context: &::memplan::Context, #(#new_params),*) -> ::memplan::Result<Self> {
                use ::memplan::OpResultExt as _;
                #constructor
            }

            #runs
            #graph
            #views

            /// Times each GPU operation of later runs with CUDA events, so
            /// that reports list them; off by default, and free when off.
            pub fn set_timing(&mut self, on: bool) -> ::memplan::Result<()> {
                self.__memplan_settle();
                self.#core.set_timing(on, #op_count)
            }

            /// Queues every operation, in program order.
            fn __memplan_ops(#this: &mut Self, #(#ops_params),*) -> ::memplan::Result<()> {
                #ops_body
            }

            /// If a run is still in flight (its guard was leaked), waits for it.
            fn __memplan_settle(&self) {
                self.#core.settle(|| ::memplan::plan::wait_all(&[#(&self.#streams),*]));
            }
        }
    }
}

/// The plan's size and value parameters as locals of a method body, so
/// that lengths, ranges and launch arguments can name them.
fn bind_params(plan: &Plan, receiver: &TokenStream) -> TokenStream {
    let bindings = plan
        .params
        .iter()
        .filter(|p| !matches!(p.kind, ParamKind::Slice(_)))
        .map(|param| {
            let name = &param.name;
            quote!(#[allow(unused_variables)] let #name = #receiver.#name;)
        });
    quote!(#(#bindings)*)
}

/// `xs: &[f32]` for `run`; for the ops, the same under a hidden name, as
/// `&::memplan::RegisteredRef<'_, f32>` when registered.
fn slice_params(plan: &Plan, for_ops: bool) -> Vec<TokenStream> {
    let registered_types = for_ops;
    plan.params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| {
            let ParamKind::Slice(buffer) = param.kind else {
                return None;
            };
            let name = if for_ops {
                names::slice(index)
            } else {
                param.name.clone()
            };
            let elem = &plan.buffers[buffer].elem;
            let BufferKind::Param {
                mutable,
                registered,
            } = plan.buffers[buffer].kind
            else {
                return None;
            };
            Some(match (mutable, registered && registered_types) {
                (false, false) => quote!(#name: &[#elem]),
                (true, false) => quote!(#name: &mut [#elem]),
                (false, true) => quote!(#name: &::memplan::RegisteredRef<'_, #elem>),
                (true, true) => quote!(#name: &mut ::memplan::Registered<'_, #elem>),
            })
        })
        .collect()
}

fn run_and_enqueue() -> TokenStream {
    let core = names::core();
    let (queued, finished) = (local("__memplan_queued"), local("__memplan_finished"));
    quote! {
        /// Runs the plan once: queues every operation, waits for all of
        /// them (also when one fails), and reports on the run.
        pub fn run(&mut self) -> ::memplan::Result<::memplan::RunReport> {
            let #queued = self.__memplan_queue();
            let #finished = <Self as ::memplan::plan::Plan>::finish(self);
            #queued?;
            #finished
        }

        /// Queues every operation and returns at once. Until the guard is
        /// waited for (or dropped), the plan stays borrowed: host code cannot
        /// touch its buffers while the GPU may use them.
        pub fn enqueue(&mut self) -> ::memplan::Result<::memplan::plan::InFlight<'_, Self>> {
            self.__memplan_queue()?;
            ::core::result::Result::Ok(::memplan::plan::InFlight::new(self))
        }

        fn __memplan_queue(&mut self) -> ::memplan::Result<()> {
            self.__memplan_settle();
            self.#core.begin()?;
            self.#core.set_in_flight();
            Self::__memplan_ops(self)
        }
    }
}

/// `run(xs, out)`: the caller's slices are borrowed for the run, so a plan
/// that takes them waits before returning and has no `enqueue`.
fn run_with_slices(plan: &Plan, setup_sites: &Setup) -> TokenStream {
    let core = names::core();
    let params = slice_params(plan, false);
    let bind_params = bind_params(plan, &quote!(self));
    let mut prepare = Vec::new();
    let mut args = Vec::new();
    for (index, param) in plan.params.iter().enumerate() {
        let ParamKind::Slice(buffer) = param.kind else {
            continue;
        };
        let (name, site) = (&param.name, setup(setup_sites.params[index].unwrap_or(0)));
        let BufferKind::Param {
            mutable,
            registered,
        } = plan.buffers[buffer].kind
        else {
            continue;
        };
        if let Some(len) = &plan.buffers[buffer].len_expr {
            prepare.push(quote!(::memplan::plan::expect_len(#name.len(), #len).at_op(#site)?;));
        }
        if registered {
            let kind = if mutable {
                quote!(Registered)
            } else {
                quote!(RegisteredRef)
            };
            let borrow = if mutable { quote!(mut) } else { quote!() };
            prepare.push(quote! {
                let #borrow #name = ::memplan::#kind::new(self.#core.context(), #name).at_op(#site)?;
            });
        }
        args.push(match (mutable, registered) {
            (false, false) => quote!(#name),
            (true, false) => quote!(&mut *#name),
            (false, true) => quote!(&#name),
            (true, true) => quote!(&mut #name),
        });
    }
    let (queued, finished, panic) = (
        local("__memplan_queued"),
        local("__memplan_finished"),
        local("__memplan_panic"),
    );
    quote! {
        /// Runs the plan once on the caller's slices: queues every
        /// operation, waits for all of them (also when one fails), and
        /// reports on the run.
        pub fn run(&mut self, #(#params),*) -> ::memplan::Result<::memplan::RunReport> {
            use ::memplan::OpResultExt as _;
            #bind_params
            #(#prepare)*
            self.__memplan_settle();
            self.#core.begin()?;
            self.#core.set_in_flight();
            // A panic in the plan's own code (a host step) unwinds past the
            // caller's slices: wait for the streams before they are released.
            let #queued = ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| {
                Self::__memplan_ops(self, #(#args),*)
            }));
            let #finished = <Self as ::memplan::plan::Plan>::finish(self);
            match #queued {
                ::core::result::Result::Ok(#queued) => #queued?,
                ::core::result::Result::Err(#panic) => ::std::panic::resume_unwind(#panic),
            }
            #finished
        }
    }
}

fn graph(plan: &Plan) -> TokenStream {
    let core = names::core();
    let name = plan.name.to_string();
    let start = plan.name.span().start();
    let (line, column) = (start.line as u32, start.column as u32 + 1);
    let location =
        quote!(::memplan::Location { file: ::core::file!(), line: #line, column: #column });
    let doc = "Captures the plan's work as a CUDA graph: each run of the graph replays \
               every operation with one launch. Errors for plans with synchronous \
               operations, host steps or borrowed slices, which a graph cannot hold.";
    let body = match graph_obstacle(plan) {
        Some(why) => quote! {
            ::core::result::Result::Err(
                ::memplan::Error::new(::memplan::Fault::Unsupported(#why), "graph", #location).in_plan(#name),
            )
        },
        None => {
            let streams = plan.streams.iter().map(|s| &s.name);
            let (timer, capture, graph) = (
                local("__memplan_timer"),
                local("__memplan_capture"),
                local("__memplan_graph"),
            );
            let (queued, error) = (local("__memplan_queued"), local("__memplan_error"));
            quote! {
                self.__memplan_settle();
                // Timing records events on the legacy stream, which a capture forbids.
                let #timer = ::core::mem::take(&mut self.#core.timer);
                // SAFETY: the graph holds addresses of buffers the plan owns, and
                // `PlanGraph` borrows the plan for as long as the graph lives.
                let #graph = match unsafe { ::memplan::Capture::begin(&[#(&self.#streams),*]) } {
                    ::core::result::Result::Ok(#capture) => {
                        let #queued = Self::__memplan_ops(self);
                        #capture.end(#queued)
                    }
                    ::core::result::Result::Err(#error) => ::core::result::Result::Err(#error),
                };
                self.#core.timer = #timer;
                let #graph = #graph.map_err(|#error| #error.within(#name, "graph", #location))?;
                // SAFETY: the graph was captured from this plan's own ops, and
                // `finish` waits for every stream of the plan.
                ::core::result::Result::Ok(unsafe { ::memplan::plan::PlanGraph::new(self, #graph) })
            }
        }
    };
    quote! {
        #[doc = #doc]
        pub fn graph(&mut self) -> ::memplan::Result<::memplan::plan::PlanGraph<'_, Self>> {
            #body
        }
    }
}

fn host_buffers(plan: &Plan) -> impl Iterator<Item = &crate::ir::Buffer> {
    plan.buffers
        .iter()
        .filter(|b| matches!(b.kind, BufferKind::Host(_)))
}

fn host_view_methods(plan: &Plan) -> TokenStream {
    let (view, view_mut) = names::host_views(plan);
    let names: Vec<_> = host_buffers(plan).map(|b| &b.name).collect();
    quote! {
        /// The plan's host buffers, to read (after a run has finished).
        pub fn host(&self) -> #view<'_> {
            self.__memplan_settle();
            #view { #(#names: &self.#names,)* __memplan_plan: ::core::marker::PhantomData }
        }

        /// The plan's host buffers, to fill before a run or change between runs.
        pub fn host_mut(&mut self) -> #view_mut<'_> {
            self.__memplan_settle();
            #view_mut { #(#names: &mut self.#names,)* __memplan_plan: ::core::marker::PhantomData }
        }
    }
}

/// The two view structs of the host buffers.
pub fn host_view_types(plan: &Plan) -> TokenStream {
    let (view, view_mut) = names::host_views(plan);
    let vis = &plan.vis;
    let name = &plan.name;
    let fields: Vec<_> = host_buffers(plan).map(|b| (&b.name, &b.elem)).collect();
    let read = fields
        .iter()
        .map(|(name, elem)| quote!(pub #name: &'p [#elem]));
    let write = fields
        .iter()
        .map(|(name, elem)| quote!(pub #name: &'p mut [#elem]));
    let (doc, doc_mut) = (
        format!("The host buffers of [`{name}`], borrowed to read; from [`{name}::host`]."),
        format!("The host buffers of [`{name}`], borrowed to write; from [`{name}::host_mut`]."),
    );
    quote! {
        #[doc = #doc]
        #vis struct #view<'p> {
            #(#read,)*
            __memplan_plan: ::core::marker::PhantomData<&'p ()>,
        }

        #[doc = #doc_mut]
        #vis struct #view_mut<'p> {
            #(#write,)*
            __memplan_plan: ::core::marker::PhantomData<&'p mut ()>,
        }
    }
}

/// `Plan` (for the runtime's guards) and `Drop` (a leaked guard's run is
/// waited for before the buffers go).
pub fn trait_impls(plan: &Plan) -> TokenStream {
    let name = &plan.name;
    let core = names::core();
    let streams: Vec<_> = plan.streams.iter().map(|s| &s.name).collect();
    let (waited, report) = (local("__memplan_waited"), local("__memplan_report"));
    let launch_stream = match streams.first() {
        Some(first) => quote!(::core::option::Option::Some(&self.#first)),
        None => quote!(::core::option::Option::None),
    };
    let (view, view_mut) = names::host_views(plan);
    quote! {
        impl ::memplan::plan::Plan for #name {
            type Host<'a> = #view<'a>;
            type HostMut<'a> = #view_mut<'a>;

            fn host_view(&self) -> #view<'_> {
                self.host()
            }

            fn host_view_mut(&mut self) -> #view_mut<'_> {
                self.host_mut()
            }

            fn finish(&mut self) -> ::memplan::Result<::memplan::RunReport> {
                let #waited = ::memplan::plan::wait_all(&[#(&self.#streams),*]);
                let #report = self.#core.end(Self::OPS);
                #waited?;
                #report
            }

            fn defer(&mut self, error: ::memplan::Error) {
                self.#core.defer(error);
            }

            fn core_mut(&mut self) -> &mut ::memplan::plan::PlanCore {
                &mut self.#core
            }

            fn launch_stream(&self) -> ::core::option::Option<&::memplan::Stream> {
                #launch_stream
            }
        }

        impl ::core::ops::Drop for #name {
            fn drop(&mut self) {
                self.__memplan_settle();
            }
        }
    }
}
