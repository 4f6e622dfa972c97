//! Host steps list the buffers they touch, each once, and write only what
//! may be written.

use super::Facts;
use crate::errors::Errors;
use crate::ir::OpKind;
use crate::text::text;

/// A host step that lists a buffer twice, or borrows a read-only slice
/// `&mut` or `&out`.
pub fn check_host_step_borrows(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        let OpKind::Host { params, .. } = &op.kind else {
            continue;
        };
        for (index, param) in params.iter().enumerate() {
            let buffer = &plan.buffers[param.buffer];
            if params[..index]
                .iter()
                .any(|earlier| earlier.buffer == param.buffer)
            {
                errors.at(
                    param.name.span(),
                    format!("`{}` is listed twice in this host step", buffer.name),
                    "list each buffer once: `&mut` if the step writes it, `&` if it only reads it",
                );
            }
            if param.writes() && !buffer.kind.is_writable() {
                let borrow = if param.reads() { "&mut" } else { "&out" };
                errors.at(
                    param.name.span(),
                    format!("`{}` is the caller's read-only slice, and this host step borrows it `{borrow}`", buffer.name),
                    format!(
                        "borrow it `&` here, or mutably in the plan's parameters: `{}: &mut [{}]`",
                        buffer.name,
                        text(&buffer.elem)
                    ),
                );
            }
        }
    }
}
