//! Ranges that provably leave their buffer (`a[0..=n]` of an `[f32; n]`),
//! or run backwards. Ranges the arithmetic cannot judge are checked when the
//! plan runs, where a bad one is an error naming the op.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{Arg, Launch, LaunchExtent, Loop, OpKind, ParamKind, Place, Plan};
use crate::sym::Sym;

/// A range that provably leaves its buffer (its end past the buffer's
/// length), or runs backwards.
pub fn check_ranges_inside(facts: &Facts, errors: &Errors) {
    for op in &facts.plan.ops {
        for place in op.kind.places() {
            inside(facts.plan, place, errors);
        }
    }
}

/// In a loop, a range that some iteration takes past its buffer's end.
pub fn check_loop_ranges_inside(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for (id, op) in plan.ops.iter().enumerate() {
        if let Some(repeat) = plan.loop_of(id) {
            for place in op.kind.places() {
                inside_every_iteration(plan, repeat, place, errors);
            }
        }
    }
}

/// A launch's buffer provably shorter than its parameter's extent.
pub fn check_extents_fit(facts: &Facts, errors: &Errors) {
    for op in &facts.plan.ops {
        if let OpKind::Launch(launch) = &op.kind {
            extents(facts.plan, launch, errors);
        }
    }
}

/// A buffer argument shorter than its parameter's extent, provably (`n`
/// elements of a range of `n - 1`). Extents the arithmetic cannot judge
/// are checked by `new`.
fn extents(plan: &Plan, launch: &Launch, errors: &Errors) {
    let kernel = &plan.kernels[launch.kernel];
    for (index, extent) in launch.extents.iter().enumerate() {
        let (Some(LaunchExtent::Sized { value, facts, .. }), Some(Arg::Buffer(place))) =
            (extent, launch.args.get(index))
        else {
            continue;
        };
        let range = &place.range;
        let atoms = &plan.atoms;
        if crate::ir::provably_past(atoms, place, value, facts) {
            let param = &kernel.params[index];
            let length = range.end.sub(&range.start);
            errors.at(
                place.span,
                format!(
                    "`{}` touches {} elements through `{}` (its extent), and `{}`{} has {}",
                    kernel.name,
                    value.display(atoms),
                    param.name,
                    plan.buffers[place.buffer].name,
                    if place.range_expr.is_some() {
                        "'s range"
                    } else {
                        ""
                    },
                    length.map_or_else(|| "fewer".to_owned(), |l| l.display(atoms).to_string()),
                ),
                "pass a range at least as long as the extent, or correct the extent's argument",
            );
        }
    }
}

/// In a loop, a range must lie inside its buffer for every iteration of
/// every run, provably: `new` would find one that leaves it only for the
/// counts it is given.
fn inside_every_iteration(plan: &Plan, repeat: &Loop, place: &Place, errors: &Errors) {
    let buffer = &plan.buffers[place.buffer];
    let atoms = &plan.atoms;
    let computed = &place.facts[..place.computed];
    if atoms.provably_le_thoroughly(&place.range.end, &buffer.len, &[computed, &repeat.facts]) {
        return;
    }
    let var = &repeat.var;
    let len = buffer.len.display(atoms);
    // A size the range's end reads that each run gives: a bound on it may
    // be what the plan does not say. Offered only where it makes the proof.
    let bounded = place.range_expr.as_ref().and_then(|range| {
        let end = range.end.as_deref()?;
        let unbounded = |p: &&crate::ir::Param| {
            p.per_run() && p.bound.is_none() && matches!(p.kind, ParamKind::Size)
        };
        plan.params.iter().filter(unbounded).find(|param| {
            let name = param.name.to_string();
            let Some(atom) = crate::sym::mentions(end, &name).and(atoms.named(&name)) else {
                return false;
            };
            let bound = Sym::atom(atom).sub(&buffer.len);
            bound.is_some_and(|bound| {
                let facts = [bound];
                atoms.provably_le_thoroughly(
                    &place.range.end,
                    &buffer.len,
                    &[computed, &repeat.facts, &facts],
                )
            })
        })
    });
    // The length as written, where `new` fixes it.
    let fixed = (buffer.len_expr.as_ref())
        .filter(|len| plan.run_param_in(len).is_none())
        .map(crate::text::text);
    let help = match (bounded, fixed) {
        (Some(param), Some(fixed)) => format!(
            "if each run's `{name}` is at most `{}`'s length, say so, `run {name}: usize <= {fixed}`: `run` then refuses a larger one",
            buffer.name,
            name = param.name
        ),
        // The buffer's length is fixed when `new` allocates it.
        _ if plan.run_param_in(&repeat.count).is_some() => {
            format!("end the range at `min(..., {len})`")
        }
        // A slot every iteration reuses, not a part that moves with `c`:
        // the loop's reach says nothing of its length.
        _ if !atoms.reads_var(&place.range.start, repeat.counter) => format!(
            "make `{}` as long as the longest range an iteration uses, or end the range at `min(..., {len})`",
            buffer.name
        ),
        _ => format!(
            "make the buffer as long as the loop reaches (`{} * m` for chunks of `m`), or end the range at `min(..., {len})`",
            crate::text::text(&repeat.count),
        ),
    };
    errors.at(
        place.span,
        format!(
            "in the loop, the range {} may reach past the end of `{}` ({len} elements) for some `{var}` below `{}`",
            place.shown(atoms),
            buffer.name,
            crate::text::text(&repeat.count)
        ),
        help,
    );
}

fn inside(plan: &Plan, place: &Place, errors: &Errors) {
    let buffer = &plan.buffers[place.buffer];
    let (atoms, range) = (&plan.atoms, &place.range);
    let one = Sym::constant(1);
    let past = |bound: &Sym, limit: &Sym| {
        limit
            .add(&one)
            // No facts: they say the range is inside, which is what is asked.
            .is_some_and(|beyond| atoms.provably_le(&beyond, bound, &[]))
    };
    if past(&range.end, &buffer.len) {
        errors.at(
            place.span,
            format!(
                "the range {} reaches past the end of `{}`, which has {} elements",
                place.shown(atoms),
                buffer.name,
                buffer.len.display(atoms)
            ),
            "keep ranges inside the buffer; `a[i..j]` ends before element `j`",
        );
    } else if past(&range.start, &range.end) {
        errors.at(
            place.span,
            format!("the range {} starts after it ends", place.shown(atoms)),
            "write the smaller bound first",
        );
    }
}
