//! Which GPU each op's memory is on, in a plan that declares `gpus`: a
//! kernel reaches the memory of its stream's GPU (and, with `peer gpu;`,
//! every GPU's); a copy, fill or collective touches device memory of its
//! stream's GPU, except that a copy between two GPUs' memories may have
//! its other end elsewhere. Mapped host memory is reached from every GPU.
//!
//! Ordering needs nothing of its own: streams of different GPUs are
//! ordered by events as streams of one are (`cuStreamWaitEvent` takes
//! another GPU's event), so the race checks hold across GPUs unchanged.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{Arg, BufferId, BufferKind, Lane, Op, OpKind, Place, Placement, Plan};
use crate::sym::Sym;
use proc_macro2::Span;

/// In a plan on several GPUs: a kernel given another GPU's memory without
/// `peer`, a copy, fill or collective on a stream of another GPU than its
/// memory's, stream-ordered memory reached from another GPU, a launch
/// outside stream blocks.
pub fn check_gpu_reach(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
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
        // Stream-ordered memory stays on its GPU: peer access
        // (`cuCtxEnablePeerAccess`) does not open a pool's memory to other
        // GPUs, so neither kernels nor copies of another GPU may touch it.
        let pooled = |place: &Place| {
            matches!(
                plan.buffers[place.buffer].kind,
                BufferKind::StreamOrdered { .. }
            )
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
            (OpKind::Launch(launch), Lane::Stream(_)) => {
                let kernel = &plan.kernels[launch.kernel].name;
                let who = match gpus.peer {
                    None => format!("kernel `{kernel}`"),
                    Some(_) => format!("kernel `{kernel}` (stream-ordered memory stays on its GPU, `peer` or not)"),
                };
                for arg in &launch.args {
                    if let Arg::Buffer(place) = arg
                        && (gpus.peer.is_none() || pooled(place))
                    {
                        on.reached(op, place.buffer, place.span, &who, errors);
                    }
                }
            }
            (OpKind::Copy { src, dst }, Lane::Stream(_)) => {
                let device = |place: &Place| on.device_gpu(place.buffer).is_some();
                let near =
                    |place: &Place| on.same(on.lane_gpu(op), on.device_gpu(place.buffer));
                // Between GPUs: one end on the stream's GPU, and memory
                // from a pool only there.
                let between = device(src) && device(dst);
                if between && !near(src) && !near(dst) {
                    on.reached(op, dst.buffer, dst.span, "this copy", errors);
                }
                for place in [src, dst] {
                    if !between || pooled(place) {
                        on.reached(op, place.buffer, place.span, "this copy", errors);
                    }
                }
            }
            (OpKind::Fill { dst, .. }, Lane::Stream(_)) => {
                on.reached(op, dst.buffer, dst.span, "this fill", errors)
            }
            // A rank's buffers are on the rank's GPU, its stream's.
            (OpKind::Collective(collective), Lane::Stream(_)) => {
                for place in collective.places() {
                    on.reached(op, place.buffer, place.span, "this collective", errors);
                }
            }
            // Freed on a stream of the GPU whose pool it came from.
            (&OpKind::Free(buffer), Lane::Stream(_)) => {
                on.reached(op, buffer, op.span, "this free", errors)
            }
            _ => {}
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

    /// The GPU of `buffer`'s device memory; `None` for host memory,
    /// which mapped is reached from every GPU.
    fn device_gpu(&self, buffer: BufferId) -> Option<At> {
        let buffer = &self.plan.buffers[buffer];
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

    /// Reports `buffer` (written at `span`) if it is device memory that
    /// `who`, on the op's stream, cannot be shown to be on the GPU of.
    fn reached(&self, op: &Op, buffer_id: BufferId, span: Span, who: &str, errors: &Errors) {
        let Some(memory) = self.device_gpu(buffer_id) else {
            return;
        };
        let Some(stream) = self.lane_gpu(op) else {
            // The stream is unplaced: reported where it is declared.
            return;
        };
        let (memory_text, stream_text) = (memory.text.clone(), stream.text.clone());
        let buffer = self.plan.buffer_name(buffer_id);
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
        let pooled = matches!(
            self.plan.buffers[buffer_id].kind,
            BufferKind::StreamOrdered { .. }
        );
        let help = match (matches!(op.kind, OpKind::Launch(_)), pooled) {
            (true, false) => format!(
                "give the kernel memory of its own GPU (copy it over first), or declare `peer {};` to let kernels reach every GPU's memory (`new` fails where the hardware cannot)",
                self.name
            ),
            (true, true) => "allocate it on a stream of the kernel's GPU, or copy it into that GPU's memory first".to_owned(),
            (false, _) if matches!(op.kind, OpKind::Collective(_)) => "queue each rank's part on a stream of its buffers' GPU: `on s[i] { ... }` with `s` and the buffers placed `on gpu`".to_owned(),
            (false, _) => "queue it on a stream of the memory's GPU; a copy between two GPUs' memories may be queued on either GPU's stream".to_owned(),
        };
        errors.at(span, what, help);
    }
}
