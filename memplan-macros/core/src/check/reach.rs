//! Which memory each side of an op can reach: kernels need device memory or
//! mapped host memory; asynchronous copies need page-locked host memory;
//! write-combined memory is for the host to write, never to read; host
//! steps touch host memory only.

use crate::errors::Errors;
use crate::ir::{Arg, Buffer, BufferKind, Lane, OpKind, Place, Plan};

pub fn check(plan: &Plan, errors: &Errors) {
    for op in &plan.ops {
        let in_stream = matches!(op.lane, Lane::Stream(_));
        match &op.kind {
            OpKind::Launch(launch) => {
                let kernel = &plan.kernels[launch.kernel].name;
                for arg in &launch.args {
                    if let Arg::Buffer(place) = arg {
                        kernel_reaches(plan, &kernel.to_string(), place, errors);
                    }
                }
            }
            OpKind::Copy { src, dst } => {
                if in_stream {
                    for place in [src, dst] {
                        async_copy_is_page_locked(plan, &op.label, place, errors);
                    }
                }
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
            OpKind::Fill { dst, .. } if in_stream && plan.buffers[dst.buffer].kind.is_host() => {
                errors.at(
                    dst.span,
                    format!(
                        "`{}` is host memory, and a fill in a stream block writes device memory",
                        plan.buffers[dst.buffer].name
                    ),
                    "fill host memory outside stream blocks, or in a host step",
                );
            }
            OpKind::Host { params, .. } => {
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
                    } else if buffer.kind.is_write_combined() && param.reads() {
                        let place = Place {
                            buffer: param.buffer,
                            range: crate::sym::SymRange {
                                start: crate::sym::Sym::constant(0),
                                end: buffer.len.clone(),
                            },
                            facts: buffer.len_facts.clone(),
                            computed: buffer.len_facts.len(),
                            range_expr: None,
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
