//! Copies and fills: same element type, same length, no overlap between
//! source and destination, no writes into a caller's read-only slice.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{BufferKind, OpKind, Place, Plan};
use crate::text::text as type_text;

/// A copy between different element types, or ranges of different
/// lengths (compared symbolically).
pub fn check_copy_shapes(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        if let OpKind::Copy { src, dst } = &op.kind {
            element_types(plan, src, dst, errors);
            lengths(plan, &op.label, src, dst, errors);
        }
    }
}

/// A copy whose source and destination may overlap.
pub fn check_copy_overlap(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        if let OpKind::Copy { src, dst } = &op.kind {
            overlap(plan, src, dst, errors);
        }
    }
}

/// A copy or fill into a caller's read-only slice.
pub fn check_writes_to_read_only(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        if let OpKind::Copy { dst, .. } | OpKind::Fill { dst, .. } = &op.kind {
            writable(plan, dst, errors);
        }
    }
}

fn element_types(plan: &Plan, src: &Place, dst: &Place, errors: &Errors) {
    let (from, to) = (&plan.buffers[src.buffer], &plan.buffers[dst.buffer]);
    let (from_type, to_type) = (type_text(&from.elem), type_text(&to.elem));
    if from_type != to_type {
        errors.at(
            dst.span,
            format!(
                "copy from `{}` (`{from_type}`) into `{}` (`{to_type}`): the element types differ",
                from.name, to.name
            ),
            "copy between buffers of one element type; convert in a kernel or a host step",
        );
    }
}

fn lengths(plan: &Plan, label: &str, src: &Place, dst: &Place, errors: &Errors) {
    let (Some(from), Some(to)) = (src.range.len(), dst.range.len()) else {
        // Bounds beyond `usize` were reported where they were read.
        return;
    };
    if from.sub(&to).is_some_and(|difference| difference.is_zero()) {
        return;
    }
    let unknown_length = [src, dst].into_iter().find_map(|place| {
        let buffer = &plan.buffers[place.buffer];
        (matches!(buffer.kind, BufferKind::Param { .. }) && buffer.len_expr.is_none())
            .then_some(&buffer.name)
    });
    let help = match unknown_length {
        Some(name) => {
            format!("give `{name}` a length in the plan's parameters, such as `{name}: &[T; n]`")
        }
        None => "copy ranges of one length, such as `a[0..k] -> b[k..2 * k]`".to_owned(),
    };
    errors.at(
        dst.span,
        format!(
            "`{label}` copies {} elements into {} elements",
            from.display(&plan.atoms),
            to.display(&plan.atoms)
        ),
        help,
    );
}

fn overlap(plan: &Plan, src: &Place, dst: &Place, errors: &Errors) {
    let facts = [src.facts.as_slice(), &dst.facts];
    if src.buffer == dst.buffer && plan.atoms.may_overlap(&src.range, &dst.range, &facts) {
        errors.at(
            dst.span,
            format!(
                "the source and destination of this copy may overlap: both are `{}`, at {} and {}",
                plan.buffers[src.buffer].name,
                src.shown(&plan.atoms),
                dst.shown(&plan.atoms)
            ),
            "copy between ranges that cannot overlap, or through a second buffer",
        );
    }
}

fn writable(plan: &Plan, dst: &Place, errors: &Errors) {
    let buffer = &plan.buffers[dst.buffer];
    if !buffer.kind.is_writable() {
        errors.at(
            dst.span,
            format!(
                "`{}` is the caller's read-only slice (`&[{}]`), and this writes it",
                buffer.name,
                type_text(&buffer.elem)
            ),
            format!(
                "borrow it mutably in the plan's parameters: `{}: &mut [{}]`",
                buffer.name,
                type_text(&buffer.elem)
            ),
        );
    }
}
