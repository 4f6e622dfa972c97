//! Where each device buffer and stream is placed, in a plan that declares
//! `gpus`: every one on a GPU of the plan, a set element by element. The
//! IR keeps each placement as written; the checks of what runs where
//! (`gpus.rs`) take these rules for granted.

use crate::errors::Errors;
use crate::ir::{Array, BufferKind, Placement, Plan};
use crate::sym::Sym;
use crate::text::text;
use syn::Ident;

/// In a plan on several GPUs: a device buffer or stream not placed, host
/// memory placed, one buffer or stream placed as a set (a set may be
/// placed on one GPU, every element on it), a placement past the plan's
/// GPUs, a count of GPUs that is 0 as written;
/// `ranks` beside `gpus`.
pub fn check_gpu_placement(plan: &Plan, errors: &Errors) {
    if let (Some(gpus), Some(ranks)) = (&plan.gpus, &plan.ranks) {
        errors.at(
            ranks.span,
            format!(
                "this plan runs on the GPUs `{}`, and its collectives span them; `ranks` is for a plan that is one rank of a job of one process per GPU",
                gpus.name
            ),
            "remove `ranks`, or write the plan for one GPU of the job, without `gpus`",
        );
    }
    if let Some(gpus) = &plan.gpus
        && !changes_at_each_run(plan, &gpus.count)
        && gpus.count_value.as_constant() == Some(0)
    {
        let written = text(&gpus.count);
        let why = match written.as_str() {
            "0" => String::new(),
            _ => format!(" (`{written}` is 0)"),
        };
        errors.over(
            &gpus.count,
            format!(
                "`gpus {}[{written}]` declares no GPUs{why}, and a plan on none can never run",
                gpus.name
            ),
            format!(
                "declare at least one GPU, `gpus {}[g];` with `g` a size `new` takes (and as many contexts), or leave out `gpus` and the placements for a plan on one GPU",
                gpus.name
            ),
        );
    }
    for buffer in &plan.buffers {
        // Stream-ordered memory is on its stream's GPU.
        if matches!(buffer.kind, BufferKind::StreamOrdered { .. }) && buffer.gpu.is_none() {
            continue;
        }
        let placed = Placed {
            name: &buffer.name,
            array: &buffer.array,
            placement: &buffer.gpu,
        };
        placed.check(plan, buffer.kind == BufferKind::Device, errors);
    }
    for stream in &plan.streams {
        let placed = Placed {
            name: &stream.name,
            array: &stream.array,
            placement: &stream.gpu,
        };
        placed.check(plan, true, errors);
    }
}

/// A declaration that may be placed: a buffer or a stream.
struct Placed<'a> {
    name: &'a Ident,
    array: &'a Option<Array>,
    placement: &'a Option<Placement>,
}

impl Placed<'_> {
    /// `on_gpu`: whether it is on a GPU (device memory, a stream).
    fn check(&self, plan: &Plan, on_gpu: bool, errors: &Errors) {
        let name = self.name;
        // Memory on no GPU, placed: one error, whatever GPUs the placement
        // names and whether or not the plan declares any (the IR keeps
        // such a placement unread, `ir/build/gpus.rs`).
        if let (Some(placement), false) = (self.placement, on_gpu) {
            errors.at(
                placement.span(),
                format!("`{name}` is host memory, which is on no GPU"),
                "every GPU of the plan reaches pinned host memory (it is made portable); place device buffers and streams",
            );
            return;
        }
        let Some(gpus) = &plan.gpus else {
            return;
        };
        let placement = match self.placement {
            None if on_gpu => {
                let (what, example) = match self.array {
                    Some(_) => (
                        "set",
                        format!("`{name}[...] ... on {}` (element i on GPU i)", gpus.name),
                    ),
                    None => ("declaration", format!("`{name} ... on {}[0]`", gpus.name)),
                };
                errors.at(
                    name.span(),
                    format!("in a plan on several GPUs, say which GPU `{name}` is on"),
                    format!("place the {what} on one: {example}"),
                );
                return;
            }
            None => return,
            Some(placement) => placement,
        };
        let gpus_name = &gpus.name;
        match (placement, self.array) {
            (Placement::Each(_), Some(_)) => {}
            (Placement::Each(span), None) => errors.at(
                *span,
                format!("`{name}` is one, and `on {gpus_name}` places a set, element i on GPU i"),
                format!("say which GPU: `on {gpus_name}[0]`"),
            ),
            (Placement::One { index, value, .. }, _) => {
                // Past the last GPU for every size (a count of 0 is an
                // error of its own, and so is a count or an index `new`
                // cannot fix, `check/fixed_at_new.rs`).
                let count = &gpus.count_value;
                if changes_at_each_run(plan, index) || changes_at_each_run(plan, &gpus.count) {
                    return;
                }
                if !plan.atoms.provably_le(count, &Sym::constant(0), &[])
                    && plan.atoms.provably_le(count, value, &[])
                {
                    let written = text(&gpus.count);
                    let last = match count.as_constant() {
                        Some(count) => (count - 1).to_string(),
                        None => format!("{written} - 1"),
                    };
                    errors.over(
                        index,
                        format!(
                            "`{name}` is placed on `{gpus_name}[{}]`, past the plan's GPUs (`gpus {gpus_name}[{written}]`, the last `{gpus_name}[{last}]`)",
                            text(index)
                        ),
                        format!("place it on one of them, `{gpus_name}[0]` to `{gpus_name}[{last}]`"),
                    );
                }
            }
        }
    }
}

/// Whether `size` reads what a run gives or measures: a size `new` cannot
/// fix, one error already (`check/fixed_at_new.rs`), and not one to say
/// more of.
fn changes_at_each_run(plan: &Plan, size: &syn::Expr) -> bool {
    plan.run_param_in(size).is_some() || plan.measured_slice_in(size).is_some()
}
