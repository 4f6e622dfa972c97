//! Which memory each side of an op can reach: kernels need device memory or
//! mapped host memory; asynchronous copies need page-locked host memory;
//! write-combined memory is for the host to write, never to read; host
//! steps touch host memory only.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{Arg, Buffer, BufferKind, Lane, OpKind, Place, Plan};

/// A kernel given memory it cannot reach: pageable, pinned but not
/// mapped, or a caller's slice.
pub fn check_kernels_reach_their_memory(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        if let OpKind::Launch(launch) = &op.kind {
            let kernel = plan.kernels[launch.kernel].name.to_string();
            for arg in &launch.args {
                if let Arg::Buffer(place) = arg {
                    kernel_reaches(plan, &kernel, place, errors);
                }
            }
        }
    }
}

/// A copy in a stream block of memory that is not page-locked (it would
/// silently block), and a fill in a stream block of host memory (which
/// writes device memory only).
pub fn check_stream_ops_on_their_memory(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        if !matches!(op.lane, Lane::Stream(_)) {
            continue;
        }
        match &op.kind {
            OpKind::Copy { src, dst } => {
                for place in [src, dst] {
                    async_copy_is_page_locked(plan, &op.label, place, errors);
                }
            }
            OpKind::Fill { dst, .. } if plan.buffers[dst.buffer].kind.is_host() => {
                errors.at(
                    dst.span,
                    format!(
                        "`{}` is host memory, and a fill in a stream block writes device memory",
                        plan.buffers[dst.buffer].name
                    ),
                    "fill host memory outside stream blocks, or in a host step",
                );
            }
            _ => {}
        }
    }
}

/// A host step given device memory, which the CPU cannot touch.
pub fn check_host_steps_on_host_memory(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        let OpKind::Host { params, .. } = &op.kind else {
            continue;
        };
        for param in params {
            let buffer = &plan.buffers[param.buffer];
            if !buffer.kind.is_host() {
                errors.at(
                    param.name.span(),
                    format!(
                        "`{}` is device memory, which the CPU cannot touch",
                        buffer.name
                    ),
                    "copy it to a host buffer, then pass that buffer to the host step",
                );
            }
        }
    }
}

/// Write-combined memory read by the CPU: results copied into it from
/// the device, a synchronous copy out of it, a host step borrowing it `&`
/// or `&mut` (a step that only writes it borrows it `&out`).
pub fn check_write_combined_memory_is_not_read(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    for op in &plan.ops {
        let in_stream = matches!(op.lane, Lane::Stream(_));
        match &op.kind {
            OpKind::Copy { src, dst } => {
                let (from, to) = (&plan.buffers[src.buffer], &plan.buffers[dst.buffer]);
                if to.kind.is_write_combined() && !from.kind.is_host() {
                    errors.at(
                        dst.span,
                        format!(
                            "`{}` is write-combined, and this copies results from the device into it: \
                             the host reads write-combined memory uncached, tens of times slower",
                            to.name
                        ),
                        "copy results into plain `pinned` memory; keep write-combined memory for uploads",
                    );
                }
                if from.kind.is_write_combined() && to.kind.is_host() && !in_stream {
                    read_of_write_combined(src, from, "this copy, done by the CPU,", errors);
                }
            }
            OpKind::Host { params, .. } => {
                for param in params {
                    let buffer = &plan.buffers[param.buffer];
                    if !(buffer.kind.is_host() && buffer.kind.is_write_combined() && param.reads())
                    {
                        continue;
                    }
                    let place = Place {
                        buffer: param.buffer,
                        range: crate::sym::SymRange {
                            start: crate::sym::Sym::constant(0),
                            end: buffer.len.clone(),
                        },
                        facts: buffer.len_facts.clone(),
                        computed: buffer.len_facts.len(),
                        range_expr: None,
                        written: None,
                        span: param.name.span(),
                    };
                    if param.writes() {
                        errors.at(
                            param.name.span(),
                            format!(
                                "this host step borrows `{0}` `&mut`, so it may read it, and `{0}` is \
                                 write-combined: the host reads it uncached, tens of times slower",
                                buffer.name
                            ),
                            format!(
                                "if the step only writes `{}`, borrow it `&out`; to read it too, use plain `pinned` memory",
                                buffer.name
                            ),
                        );
                    } else {
                        read_of_write_combined(&place, buffer, "this host step", errors);
                    }
                }
            }
            _ => {}
        }
    }
}

fn kernel_reaches(plan: &Plan, kernel: &str, place: &Place, errors: &Errors) {
    let buffer = &plan.buffers[place.buffer];
    if buffer.kind.is_device_reachable() {
        return;
    }
    let (what, help) = match buffer.kind {
        BufferKind::Host(kind) if kind.pageable => (
            "pageable host memory",
            "copy it to a device buffer first, or declare it `mapped` to let kernels read it over the bus"
                .to_owned(),
        ),
        BufferKind::Host(_) => (
            "pinned host memory that is not mapped into the device's address space",
            "copy it to a device buffer first, or declare it `pinned(mapped)` to let kernels read it over the bus".to_owned(),
        ),
        _ => (
            "the caller's memory",
            "copy it to a device buffer first".to_owned(),
        ),
    };
    errors.at(
        place.span,
        format!(
            "kernel `{kernel}` cannot reach `{}`: it is {what}",
            buffer.name
        ),
        help,
    );
}

fn async_copy_is_page_locked(plan: &Plan, label: &str, place: &Place, errors: &Errors) {
    let buffer = &plan.buffers[place.buffer];
    if !buffer.kind.is_host() || buffer.kind.is_page_locked() {
        return;
    }
    let fix = match buffer.kind {
        BufferKind::Param { .. } => format!(
            "mark the parameter `registered` (`{}: &[...] registered`)",
            buffer.name
        ),
        _ => format!("declare `{}` `pinned`", buffer.name),
    };
    errors.at(
        place.span,
        format!(
            "`{label}` in a stream block would not be asynchronous: `{}` is pageable, so the driver \
             stages it through a bounce buffer and the copy blocks",
            buffer.name
        ),
        format!("{fix}, or move the copy out of the stream block to make it plainly synchronous"),
    );
}

fn read_of_write_combined(place: &Place, buffer: &Buffer, reader: &str, errors: &Errors) {
    errors.at(
        place.span,
        format!(
            "{reader} reads `{}`, which is write-combined: the host reads it uncached, tens of times slower",
            buffer.name
        ),
        "read from plain `pinned` memory; a host step that only writes it borrows it `&out`",
    );
}
