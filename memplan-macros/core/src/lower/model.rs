//! The plan as `memplan-model` describes it: every declaration and op with
//! its label and line, every size by its number, every buffer's kind. A
//! pure mapping from the IR, once the sizes are numbered; its lists live
//! in `arena` while the plan is lowered.

use super::given::Givens;
use super::sizes::Sizes;
use crate::ir::{self, BufferKind, KernelParamKind, Lane, LaunchExtent, OpKind, Placement, Plan};
use crate::syntax::{CollectiveWord, SliceAccess};
use bumpalo::Bump;
use memplan_model as model;
use memplan_model::{Arg, CollectiveKind, Dims, HostAlloc, Op, Place, ReduceOp, Shared, Site};
use proc_macro2::Span;
use syn::RangeLimits;

/// `plan`'s model, with its sizes numbered by `sizes` and the values
/// `givens` lists left to `new` and the runs.
pub fn from_ir<'a>(
    plan: &Plan,
    sizes: &Sizes<'_>,
    givens: &Givens,
    arena: &'a Bump,
) -> syn::Result<model::Plan<'a>> {
    let map = Mapping { plan, arena };
    let buffers: Vec<_> = (plan.buffers.iter())
        .map(|buffer| map.buffer(buffer, sizes))
        .collect::<syn::Result<_>>()?;
    let streams: Vec<_> = plan
        .streams
        .iter()
        .map(|stream| map.stream(stream, sizes))
        .collect::<syn::Result<_>>()?;
    let mut events = Vec::new();
    for (event, array) in plan.events.iter().zip(&plan.event_arrays) {
        let site = map.site(&format!("event {event}"), event.span());
        events.push(model::EventInfo {
            array: array_of(array, sizes)?,
            ..site.event()
        });
    }
    let ops: Vec<_> = (0..plan.ops.len())
        .map(|index| map.op(index, sizes))
        .collect::<syn::Result<_>>()?;
    let loops: Vec<_> = plan
        .loops
        .iter()
        .enumerate()
        .map(|(index, repeat)| {
            let label = &repeat.label;
            let count = sizes.length(&repeat.count)?;
            let (first, end) = (repeat.ops.start as u16, repeat.ops.end as u16);
            let site = map.site(label, repeat.span);
            Ok(site.repeat(count, sizes.loop_input(index), first, end))
        })
        .collect::<syn::Result<_>>()?;
    let gpus = match &plan.gpus {
        None => None,
        Some(gpus) => Some(model::GpusInfo {
            site: map.site(&gpus.label, gpus.span),
            count: sizes.length(&gpus.count)?,
            peer: gpus
                .peer
                .map(|span| map.site(&format!("peer {}", gpus.name), span)),
        }),
    };
    let ranks =
        (plan.ranks.as_ref()).map(|ranks| map.site(&format!("ranks {}", ranks.name), ranks.span));
    let bounds: Vec<_> = plan
        .bounds()
        .map(|bound| {
            Ok(model::BoundInfo {
                site: map.site(&bound.label, bound.span),
                size: sizes.length(&bound.size)?,
                limit: sizes.length(&bound.limit)?,
            })
        })
        .collect::<syn::Result<_>>()?;
    let inputs = sizes.input_names();
    let inputs: Vec<&str> = inputs.iter().map(|name| map.text(name)).collect();
    let programs: Vec<_> = sizes
        .programs()
        .into_iter()
        .map(|(text, program)| model::Size(map.text(text), arena.alloc_slice_copy(&program)))
        .collect();
    Ok(model::Plan {
        site: map.site(&plan.name.to_string(), plan.name.span()),
        inputs: arena.alloc_slice_copy(&inputs),
        sizes: arena.alloc_slice_copy(&programs),
        kernels: arena.alloc_slice_copy(&map.kernels()),
        buffers: arena.alloc_slice_copy(&buffers),
        streams: arena.alloc_slice_copy(&streams),
        events: arena.alloc_slice_copy(&events),
        ops: arena.alloc_slice_copy(&ops),
        loops: arena.alloc_slice_copy(&loops),
        run_inputs: arena.alloc_slice_copy(&sizes.run_inputs()),
        bounds: arena.alloc_slice_copy(&bounds),
        per_run: arena.alloc_slice_copy(&givens.per_run()),
        gpus,
        ranks,
    })
}

/// The IR of one plan, and where its model's lists live.
struct Mapping<'p, 'a> {
    plan: &'p Plan,
    arena: &'a Bump,
}

impl<'a> Mapping<'_, 'a> {
    fn text(&self, text: &str) -> &'a str {
        self.arena.alloc_str(text)
    }

    /// `label`, where `span` starts.
    fn site(&self, label: &str, span: Span) -> Site<'a> {
        let start = span.start();
        Site(self.text(label), start.line as u32, start.column as u32 + 1)
    }

    fn buffer(&self, buffer: &ir::Buffer, sizes: &Sizes<'_>) -> syn::Result<model::BufferInfo<'a>> {
        let label = match buffer.kind {
            BufferKind::Param { .. } => format!("parameter {}", buffer.name),
            _ => format!("{}: {}", buffer.name, buffer.declared),
        };
        let kind = match buffer.kind {
            BufferKind::Host(kind) if kind.pageable => model::BufferKind::Pageable,
            BufferKind::Host(kind) => {
                let flags = [
                    (kind.mapped, HostAlloc::MAPPED),
                    (kind.write_combined, HostAlloc::WRITE_COMBINED),
                    (kind.portable, HostAlloc::PORTABLE),
                ];
                let flags = flags.into_iter().filter(|(set, _)| *set);
                model::BufferKind::Pinned(flags.fold(HostAlloc::PINNED, |all, (_, f)| all | f))
            }
            BufferKind::Device => model::BufferKind::Device,
            BufferKind::StreamOrdered { .. } => model::BufferKind::StreamOrdered,
            BufferKind::Param {
                mutable,
                registered,
            } => model::BufferKind::Param {
                mutable,
                registered,
                measured: buffer
                    .len_expr
                    .is_none()
                    .then(|| sizes.measured_input(&buffer.name.to_string())),
            },
        };
        Ok(model::BufferInfo {
            array: array_of(&buffer.array, sizes)?,
            gpu: gpu_of(&buffer.gpu, sizes)?,
            ..self
                .site(&label, buffer.name.span())
                .buffer(length(buffer, sizes)?, kind)
        })
    }

    fn kernels(&self) -> Vec<model::KernelInfo<'a>> {
        let kernels = self.plan.kernels.iter().map(|kernel| {
            let written: Vec<u16> = (kernel.params.iter().enumerate())
                .filter(|(_, param)| {
                    matches!(
                        param.kind,
                        KernelParamKind::Slice {
                            access: SliceAccess::Write,
                            ..
                        }
                    )
                })
                .map(|(position, _)| position as u16)
                .collect();
            let site = self.site(&format!("kernel {}", kernel.name), kernel.name.span());
            site.kernel().writes(self.arena.alloc_slice_copy(&written))
        });
        kernels.collect()
    }

    fn stream(&self, stream: &ir::Stream, sizes: &Sizes<'_>) -> syn::Result<model::StreamInfo<'a>> {
        let priority = match stream.priority {
            ir::Priority::Normal => model::Priority::Normal,
            ir::Priority::High => model::Priority::High,
            ir::Priority::Level(level) => model::Priority::Level(level),
        };
        let site = self.site(&format!("stream {}", stream.name), stream.name.span());
        Ok(model::StreamInfo {
            array: array_of(&stream.array, sizes)?,
            gpu: gpu_of(&stream.gpu, sizes)?,
            ..site.stream(self.text(&stream.name.to_string()), priority)
        })
    }

    fn op(&self, index: usize, sizes: &Sizes<'_>) -> syn::Result<model::OpDef<'a>> {
        let op = &self.plan.ops[index];
        let place = |place: &ir::Place| place_of(self.plan, place, sizes);
        let kind = match &op.kind {
            OpKind::Copy { src, dst } => Op::Copy(place(src)?, place(dst)?),
            OpKind::Fill { dst, .. } => Op::Fill(place(dst)?),
            OpKind::Launch(launch) => Op::Launch(self.launch(launch, sizes)?),
            OpKind::Record(event) => Op::Record(*event as u16),
            OpKind::Wait(event) => Op::Wait(*event as u16),
            OpKind::Sync(stream) => Op::Sync(stream.map(|s| s as u16)),
            OpKind::Alloc(buffer) => Op::Alloc(*buffer as u16),
            OpKind::Free(buffer) => Op::Free(*buffer as u16),
            OpKind::Host { .. } => Op::Host(self.plan.host_step_number(index)),
            OpKind::Collective(c) => {
                let reduce = match c.reduce.as_ref().map(|op| op.to_string()).as_deref() {
                    Some("prod") => ReduceOp::Prod,
                    Some("min") => ReduceOp::Min,
                    Some("max") => ReduceOp::Max,
                    Some("avg") => ReduceOp::Avg,
                    _ => ReduceOp::Sum,
                };
                let rank = || match &c.rank {
                    Some(expr) => sizes.length(expr),
                    None => Err(syn::Error::new(
                        op.span,
                        "a collective without its rank (a bug in memplan)",
                    )),
                };
                let kind = match c.word {
                    CollectiveWord::AllReduce => CollectiveKind::AllReduce(reduce),
                    CollectiveWord::ReduceScatter => CollectiveKind::ReduceScatter(reduce),
                    CollectiveWord::AllGather => CollectiveKind::AllGather,
                    CollectiveWord::Broadcast => CollectiveKind::Broadcast(rank()?),
                    CollectiveWord::Send => CollectiveKind::Send(rank()?),
                    CollectiveWord::Recv => CollectiveKind::Recv(rank()?),
                };
                Op::Collective(model::CollectiveInfo {
                    kind,
                    send: place(&c.send)?,
                    recv: place(&c.recv)?,
                    group: c.group as u16,
                })
            }
        };
        let site = self.site(&op.label, op.span);
        Ok(match op.lane {
            Lane::Host => site.on_host(kind),
            Lane::Stream(stream) => site.on(stream as u16, kind),
        })
    }

    fn launch(&self, launch: &ir::Launch, sizes: &Sizes<'_>) -> syn::Result<model::LaunchInfo<'a>> {
        let dims = |expr| -> syn::Result<Dims<'a>> {
            Ok(match sizes.dims(expr)? {
                Some(dims) => Dims::Sizes(self.arena.alloc_slice_copy(&dims)),
                None => Dims::Given,
            })
        };
        let shared = match &launch.shared {
            None => None,
            Some(expr) => Some(match sizes.launch(expr)? {
                Some(size) => Shared::Size(size),
                None => Shared::Given,
            }),
        };
        let kernel = &self.plan.kernels[launch.kernel];
        let mut args = Vec::with_capacity(launch.args.len());
        for (position, (arg, param)) in launch.args.iter().zip(&kernel.params).enumerate() {
            let name = self.text(&param.name.to_string());
            args.push(match arg {
                ir::Arg::Buffer(buffer) => {
                    let buffer = place_of(self.plan, buffer, sizes)?;
                    match &launch.extents[position] {
                        Some(LaunchExtent::Sized { expr, .. }) => {
                            Arg::Extent(buffer, sizes.length(expr)?, name)
                        }
                        Some(LaunchExtent::Measured(extent)) => {
                            let (text, program) = super::kernels::extent_program(extent, kernel)?;
                            let program = self.arena.alloc_slice_copy(&program);
                            let extent = self.arena.alloc(model::Size(self.text(&text), program));
                            Arg::Measured(buffer, extent, name)
                        }
                        None => Arg::Buffer(buffer),
                    }
                }
                ir::Arg::Value(_) => match &launch.counts[position] {
                    Some(count) => Arg::Count(sizes.length(&count.size)?, name),
                    None => match &launch.bound[position] {
                        Some(size) => Arg::Bound(sizes.length(size)?, name),
                        None => Arg::Value,
                    },
                },
            });
        }
        Ok(model::launch(
            launch.kernel as u16,
            dims(&launch.grid)?,
            dims(&launch.block)?,
            shared,
            self.arena.alloc_slice_copy(&args),
        ))
    }
}

/// The length of `buffer`, a size.
fn length(buffer: &ir::Buffer, sizes: &Sizes<'_>) -> syn::Result<u16> {
    match &buffer.len_expr {
        Some(len) => sizes.length(len),
        None => sizes.measured(&buffer.name.to_string()),
    }
}

/// `Part(buffer, start, end)`, or `Whole(buffer)`.
fn place_of(plan: &Plan, place: &ir::Place, sizes: &Sizes<'_>) -> syn::Result<Place> {
    let buffer = place.buffer as u16;
    let Some(range) = &place.range_expr else {
        return Ok(Place::Whole(buffer));
    };
    let start = match &range.start {
        Some(start) => sizes.length(start)?,
        None => sizes.literal(0)?,
    };
    let end = match (&range.end, &range.limits) {
        (None, _) => length(&plan.buffers[place.buffer], sizes)?,
        (Some(end), RangeLimits::HalfOpen(_)) => sizes.length(end)?,
        (Some(end), RangeLimits::Closed(_)) => sizes.closed_end(end)?,
    };
    Ok(Place::Part(buffer, start, end))
}

/// A set's count and index, if the declaration is a set.
fn array_of(array: &Option<ir::Array>, sizes: &Sizes<'_>) -> syn::Result<Option<model::Array>> {
    let Some(array) = array else {
        return Ok(None);
    };
    let index = match &array.index {
        Some((index, _)) => sizes.length(index)?,
        None => sizes.literal(0)?,
    };
    Ok(Some(model::Array {
        count: sizes.length(&array.count)?,
        index,
    }))
}

/// The GPU of a device buffer or stream, if placed.
fn gpu_of(placement: &Option<Placement>, sizes: &Sizes<'_>) -> syn::Result<Option<model::Gpu>> {
    Ok(match placement {
        None => None,
        Some(Placement::Each(_)) => Some(model::Gpu::Each),
        Some(Placement::One { index, .. }) => Some(model::Gpu::One(sizes.length(index)?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;
    use memplan_model::{Arg::*, Place::*, Term::*};

    use super::super::tests::{PLAN, checked};

    /// `text`'s one plan, lowered to its model; `then` looks at it.
    fn model_of(text: &str, then: impl FnOnce(&model::Plan<'_>)) {
        let (plan, _) = checked(text);
        let arena = Bump::new();
        then(&super::super::describe(&plan, &arena).unwrap().model);
    }

    #[test]
    fn ops_name_their_sizes_by_number() {
        model_of(PLAN, |model| {
            assert_eq!(model.inputs, ["n", "k"]);
            assert_eq!(
                model.sizes,
                [
                    model::Size("n", &[Input(0)]),
                    model::Size("k", &[Input(1)]),
                    model::Size("k + 1", &[Input(1), Literal(1), Add]),
                    model::Size("0", &[Literal(0)]),
                    model::Size("0 + 1", &[Literal(0), Literal(1), Add]),
                    model::Size("1", &[Literal(1)]),
                ]
            );
            let ops: Vec<_> = model.ops.iter().map(|def| (def.stream, def.op)).collect();
            assert_eq!(
                ops,
                [
                    (None, Op::Copy(Part(0, 1, 2), Part(1, 3, 4))),
                    (Some(0), Op::Copy(Part(1, 3, 5), Part(0, 3, 5))),
                ]
            );
            assert_eq!(model.ops[1].site, Site("copy d[..1] -> a[..1]", 6, 16));
        });
    }

    #[test]
    fn pinned_flags_become_one_allocation() {
        model_of(PLAN, |model| {
            let flags = HostAlloc::MAPPED | HostAlloc::PORTABLE;
            assert_eq!(model.buffers[0].kind, model::BufferKind::Pinned(flags));
            assert_eq!(model.buffers[1].kind, model::BufferKind::Device);
        });
    }

    #[test]
    fn launches_keep_what_new_computes_apart_from_sizes() {
        let plan = "plan P(m: usize, k: usize) {
            kernel scale(data: &mut [f32; n], n: i32) from K;
            device d: [f32; k * m];
            stream s;
            on s {
                fill d with 0.0;
                launch scale<<<blocks(k * m, 256), threads()>>>(d, (k * m) as i32);
            }
            for c in 0..k {
                on s { launch scale<<<blocks(m, 256), 256>>>(d[c * m..c * m + m], m as i32); }
            }
        }";
        model_of(plan, |model| {
            let Op::Launch(first) = model.ops[1].op else {
                panic!("{:?}", model.ops[1]);
            };
            assert!(matches!(first.grid, Dims::Sizes([_])));
            assert_eq!(first.block, Dims::Given);
            assert!(matches!(
                first.args,
                [Extent(Whole(0), _, "data"), Bound(_, "n")]
            ));
            let Op::Launch(looped) = model.ops[2].op else {
                panic!("{:?}", model.ops[2]);
            };
            assert!(matches!(
                looped.args,
                [Extent(Part(0, ..), _, "data"), Bound(_, "n")]
            ));
            assert_eq!(model.loops[0].first, 2);
            assert_eq!(model.loops[0].end, 3);
            assert_eq!(model.inputs[usize::from(model.loops[0].input)], "c");
        });
    }

    #[test]
    fn more_sizes_than_the_model_can_number_are_refused() {
        // Two new sizes an op: fewer ops than the limit, more sizes.
        let fills: String = (0..=super::super::limits::MOST / 2)
            .map(|i| format!("fill d[{}..{}] with 0.0;", 2 * i, 2 * i + 1))
            .collect();
        let text = format!("plan P() {{ device d: [f32; 140000]; {fills} }}");
        let input: crate::syntax::Input = syn::parse_str(&text).unwrap();
        let errors = Errors::new();
        let plan = crate::ir::build(&input.plans[0], &errors);
        errors.finish().unwrap();
        let error = super::super::describe(&plan, &Bump::new())
            .err()
            .expect("65,536 sizes were numbered");
        assert!(error.to_string().contains("distinct sizes"), "{error}");
    }
}
