//! Declared and never used: warnings, not errors (an unused buffer still
//! costs an allocation, an unused stream a driver object).

use crate::ir::{Access, Lane, OpKind, Plan};

/// A declaration nothing uses, warned of at its name.
pub struct Warning {
    /// The declaration's name, where the warning points.
    pub name: syn::Ident,
    /// A kernel's: rustc's warning is an unused function's, not an unused
    /// variable's, whose help (prefix it with `_`) would rename the C++
    /// symbol.
    pub is_kernel: bool,
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
    let mut warn = |used: &[bool], names: &mut dyn Iterator<Item = &syn::Ident>, is_kernel| {
        for (name, &used) in names.zip(used) {
            // `_name`: unused on purpose, as with a Rust variable.
            if !used && !name.to_string().starts_with('_') {
                warnings.push(Warning {
                    name: name.clone(),
                    is_kernel,
                });
            }
        }
    };
    warn(
        &buffer_used,
        &mut plan.buffers.iter().map(|b| &b.name),
        false,
    );
    warn(
        &stream_used,
        &mut plan.streams.iter().map(|s| &s.name),
        false,
    );
    warn(&event_used, &mut plan.events.iter(), false);
    warn(
        &kernel_used,
        &mut plan.kernels.iter().map(|k| &k.name),
        true,
    );
    warnings
}
