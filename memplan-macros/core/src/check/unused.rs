//! Declared and never used: warnings, not errors (an unused buffer still
//! costs an allocation, an unused stream a driver object).

use crate::ir::{Access, Lane, OpKind, Plan};
use proc_macro2::Span;

/// A warning at the user's declaration.
pub struct Warning {
    /// The declaration the warning points at.
    pub span: Span,
    /// What the warning says.
    pub message: String,
}

pub fn find(plan: &Plan, accesses: &[Vec<Access>]) -> Vec<Warning> {
    let mut buffer_used = vec![false; plan.buffers.len()];
    let mut stream_used = vec![false; plan.streams.len()];
    let mut event_used = vec![false; plan.events.len()];
    let mut kernel_used = vec![false; plan.kernels.len()];
    for (op, op_accesses) in plan.ops.iter().zip(accesses) {
        for access in op_accesses {
            buffer_used[access.buffer] = true;
        }
        if let Lane::Stream(stream) = op.lane {
            stream_used[stream] = true;
        }
        match &op.kind {
            OpKind::Record(event) | OpKind::Wait(event) => event_used[*event] = true,
            OpKind::Launch(launch) => kernel_used[launch.kernel] = true,
            _ => {}
        }
    }

    let mut warnings = Vec::new();
    let mut warn = |used: &[bool], names: &mut dyn Iterator<Item = &syn::Ident>, what: &str| {
        for (name, &used) in names.zip(used) {
            if !used {
                warnings.push(Warning {
                    span: name.span(),
                    message: format!("{what} `{name}` is declared but never used"),
                });
            }
        }
    };
    warn(
        &buffer_used,
        &mut plan.buffers.iter().map(|b| &b.name),
        "buffer",
    );
    warn(
        &stream_used,
        &mut plan.streams.iter().map(|s| &s.name),
        "stream",
    );
    warn(&event_used, &mut plan.events.iter(), "event");
    warn(
        &kernel_used,
        &mut plan.kernels.iter().map(|k| &k.name),
        "kernel",
    );
    warnings
}
