//! Host steps list the buffers they touch, each once, and write only what
//! may be written.

use crate::errors::Errors;
use crate::ir::{OpKind, Plan};
use crate::text::text;

pub fn check(plan: &Plan, errors: &Errors) {
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
