//! What the model can number: it names declarations, ops, arguments,
//! inputs and sizes with `u16`s, so a plan of more of one kind is refused,
//! at its name, before any number is used (the sizes are counted once
//! numbered, so this runs right after `Sizes::intern`).

use crate::ir::{OpKind, Plan};

/// The most of one kind a plan may have.
pub const MOST: usize = u16::MAX as usize;

/// An error for a plan with more declarations or ops of one kind than
/// the model can number.
/// `sizes` is how many distinct sizes (`Sizes::counts`) the plan has, and
/// how many inputs they read.
pub fn check(plan: &Plan, (sizes, inputs): (usize, usize)) -> syn::Result<()> {
    let counts = [
        (plan.ops.len(), "operations"),
        (plan.buffers.len(), "buffers"),
        (plan.kernels.len(), "kernels"),
        (plan.streams.len(), "streams"),
        (plan.events.len(), "events"),
        (
            sizes,
            "distinct sizes (lengths, range bounds, launch dimensions)",
        ),
        (inputs, "size inputs"),
    ];
    if let Some((_, what)) = counts.iter().find(|(count, _)| *count > MOST) {
        return Err(too_many(plan, what));
    }
    let longest_launch = plan.ops.iter().map(|op| match &op.kind {
        OpKind::Launch(launch) => launch.args.len(),
        _ => 0,
    });
    if longest_launch.max().unwrap_or(0) > MOST {
        return Err(too_many(plan, "arguments in one launch"));
    }
    Ok(())
}

fn too_many(plan: &Plan, what: &str) -> syn::Error {
    syn::Error::new(
        plan.name.span(),
        format!(
            "plan `{}` has more {what} than the {MOST} one plan may have\n\nhelp: split it into several plans",
            plan.name
        ),
    )
}
