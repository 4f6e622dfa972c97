//! Which GPU each op's memory is on, in a plan that declares `gpus`: a
//! kernel reaches the memory of its stream's GPU (and, with `peer gpu;`,
//! every GPU's); a copy or fill touches device memory of its stream's GPU,
//! except that a copy between two GPUs' memories may have its other end
//! elsewhere. Mapped host memory is reached from every GPU.
//!
//! Ordering needs nothing of its own: streams of different GPUs are
//! ordered by events as streams of one are (`cuStreamWaitEvent` takes
//! another GPU's event), so the race checks hold across GPUs unchanged.

use crate::errors::Errors;
use crate::ir::{Arg, BufferKind, Lane, Op, OpKind, Place, Placement, Plan};
use crate::sym::Sym;

pub fn check(plan: &Plan, errors: &Errors) {
    let Some(gpus) = &plan.gpus else {
        return;
    };
    let name = gpus.name.to_string();
    for (id, op) in plan.ops.iter().enumerate() {
        let facts: Vec<Sym> = plan
            .loop_of(id)
            .map(|repeat| repeat.facts.clone())
            .unwrap_or_default();
        let on = Gpus {
            plan,
            name: &name,
            facts: &facts,
        };
        match (&op.kind, op.lane) {
            (OpKind::Launch(_), Lane::Host) => errors.at(
                op.span,
                format!(
                    "`{}` is outside stream blocks, and in a plan on several GPUs a launch runs on its stream's GPU",
                    op.label
                ),
                format!("launch in a stream block, on a stream placed on one of `{name}`"),
            ),
            (OpKind::Launch(launch), Lane::Stream(_)) if gpus.peer.is_none() => {
                let kernel = &plan.kernels[launch.kernel].name;
                for arg in &launch.args {
                    if let Arg::Buffer(place) = arg {
                        on.reached(op, place, &format!("kernel `{kernel}`"), errors);
                    }
                }
            }
            (OpKind::Copy { src, dst }, Lane::Stream(_)) => {
                let device = |place: &Place| on.device_gpu(place).is_some();
                if device(src) && device(dst) {
                    // Between GPUs: one end on the stream's GPU.
                    let near = |place: &Place| on.same(on.lane_gpu(op), on.device_gpu(place));
                    if !near(src) && !near(dst) {
                        on.reached(op, dst, "this copy", errors);
                    }
                } else {
                    for place in [src, dst] {
                        on.reached(op, place, "this copy", errors);
                    }
                }
            }
            (OpKind::Fill { dst, .. }, Lane::Stream(_)) => on.reached(op, dst, "this fill", errors),
            // Freed on a stream of the GPU whose pool it came from.
            (OpKind::Free(buffer), Lane::Stream(_)) => {
                let whole = plan.ops[id].span;
                let at = Place {
                    buffer: *buffer,
                    range: crate::sym::SymRange {
                        start: Sym::constant(0),
                        end: Sym::constant(0),
                    },
                    facts: Vec::new(),
                    computed: 0,
                    range_expr: None,
                    span: whole,
                };
                on.reached(op, &at, "this free", errors);
            }
            _ => {}
        }
        // Stream-ordered memory stays on its GPU: peer access
        // (`cuCtxEnablePeerAccess`) does not open a pool's memory to other
        // GPUs, so neither kernels nor copies of another GPU may touch it.
        if gpus.peer.is_some()
            && let OpKind::Launch(launch) = &op.kind
            && let Lane::Stream(_) = op.lane
        {
            for arg in &launch.args {
                if let Arg::Buffer(place) = arg
                    && matches!(
                        plan.buffers[place.buffer].kind,
                        BufferKind::StreamOrdered { .. }
                    )
                {
                    on.reached(
                        op,
                        place,
                        "this launch (stream-ordered memory stays on its GPU, `peer` or not)",
                        errors,
                    );
                }
            }
        }
        if let (OpKind::Copy { src, dst }, Lane::Stream(_)) = (&op.kind, op.lane) {
            for place in [src, dst] {
                if matches!(
                    plan.buffers[place.buffer].kind,
                    BufferKind::StreamOrdered { .. }
                ) {
                    on.reached(
                        op,
                        place,
                        "this copy (stream-ordered memory stays on its GPU)",
                        errors,
                    );
                }
            }
        }
    }
}

/// Where things are, for one op.
struct Gpus<'a> {
    plan: &'a Plan,
    name: &'a str,
    /// What holds where the op runs (its loop's facts).
    facts: &'a [Sym],
}

/// A GPU, as a size: GPU `value`.
struct At {
    value: Sym,
    /// As written: `gpu[1]`, `gpu[i]`.
    text: String,
}

impl Gpus<'_> {
    /// The GPU of the op's stream.
    fn lane_gpu(&self, op: &Op) -> Option<At> {
        let Lane::Stream(stream) = op.lane else {
            return None;
        };
        let stream = &self.plan.streams[stream];
        self.placed(stream.gpu.as_ref()?, stream.array.as_ref())
    }

    /// The GPU of the device memory `place` names; `None` for host memory,
    /// which mapped is reached from every GPU.
    fn device_gpu(&self, place: &Place) -> Option<At> {
        let buffer = &self.plan.buffers[place.buffer];
        match buffer.kind {
            BufferKind::Device => self.placed(buffer.gpu.as_ref()?, buffer.array.as_ref()),
            // On the GPU of the stream that allocates it.
            BufferKind::StreamOrdered { alloc } => self.lane_gpu(&self.plan.ops[alloc]),
            BufferKind::Host(_) | BufferKind::Param { .. } => None,
        }
    }

    fn placed(&self, placement: &Placement, array: Option<&crate::ir::Array>) -> Option<At> {
        let (value, index) = match placement {
            Placement::One { index, value, .. } => (value.clone(), crate::text::text(index)),
            Placement::Each(_) => {
                let (index, value) = array?.index.as_ref()?;
                (value.clone(), crate::text::text(index))
            }
        };
        Some(At {
            value,
            text: format!("{}[{index}]", self.name),
        })
    }

    /// Whether the two are provably one GPU; an unknown side is no GPU
    /// (host memory), which is not.
    fn same(&self, a: Option<At>, b: Option<At>) -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        let facts: &[&[Sym]] = &[self.facts];
        a.value == b.value
            || (self.plan.atoms.provably_le(&a.value, &b.value, facts)
                && self.plan.atoms.provably_le(&b.value, &a.value, facts))
    }

    /// Reports `place` if it is device memory that `who`, on the op's
    /// stream, cannot be shown to be on the GPU of.
    fn reached(&self, op: &Op, place: &Place, who: &str, errors: &Errors) {
        let Some(memory) = self.device_gpu(place) else {
            return;
        };
        let Some(stream) = self.lane_gpu(op) else {
            // The stream is unplaced: reported where it is declared.
            return;
        };
        let (memory_text, stream_text) = (memory.text.clone(), stream.text.clone());
        let buffer = self.plan.buffer_name(place.buffer);
        let lane = self.plan.lane_name(op.lane);
        let constants = (memory.value.as_constant(), stream.value.as_constant());
        if self.same(Some(memory), Some(stream)) {
            return;
        }
        let what = match constants {
            (Some(_), Some(_)) => {
                format!("{who} runs on {stream_text} ({lane}), and `{buffer}` is on {memory_text}")
            }
            _ => format!(
                "{who} runs on {stream_text} ({lane}), and memplan cannot show that `{buffer}`, on {memory_text}, is on the same GPU"
            ),
        };
        let help = if who.starts_with("kernel") {
            format!(
                "give the kernel memory of its own GPU (copy it over first), or declare `peer {};` to let kernels reach every GPU's memory (`new` fails where the hardware cannot)",
                self.name
            )
        } else {
            "queue it on a stream of the memory's GPU; a copy between two GPUs' memories may be queued on either GPU's stream".to_owned()
        };
        errors.at(place.span, what, help);
    }
}
