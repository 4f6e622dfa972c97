//! Sizes that `new` fixes for the life of the plan: a buffer's length, a
//! set's count, the plan's GPU count, and a placement's GPU. `new` makes
//! every buffer and set, and every buffer and stream on its GPU, once, so
//! none of these may change from run to run: a `run` parameter, or the
//! length of a caller's slice measured at each run, cannot be one. Each
//! says why in its own words, since "a set is made once" explains nothing
//! about a placement.

use crate::errors::Errors;
use crate::ir::{Buffer, BufferKind, Placement, Plan};
use crate::sym::read;
use crate::text::{rename_word, text};
use syn::{Expr, Ident};

/// A size `new` fixes that a `run` parameter gives or a run measures.
pub fn check_sizes_fixed_at_new(plan: &Plan, errors: &Errors) {
    let fixed = |size: &Expr, what: FixedAtNew| {
        if let Some(slice) = plan.measured_slice_in(size) {
            let (message, help) = what.message(Changes::Measured(&text(&slice)));
            errors.over(&slice, message, help);
        }
        if let Some(path) = plan.run_param_in(size) {
            let (message, help) = what.message(Changes::Given(&text(&path)));
            errors.at(syn::spanned::Spanned::span(&path), message, help);
        }
    };
    if let Some(gpus) = &plan.gpus {
        fixed(&gpus.count, FixedAtNew::GpuCount { gpus: &gpus.name });
    }
    for buffer in &plan.buffers {
        // A caller's slice is given to each run: its length is the run's.
        if matches!(buffer.kind, BufferKind::Param { .. }) {
            continue;
        }
        if let Some(len) = &buffer.len_expr {
            fixed(
                len,
                FixedAtNew::Length {
                    buffer: &buffer.name,
                    written: text(len),
                    capacity: capacity(plan, buffer, len),
                    bounded: plan
                        .params
                        .iter()
                        .filter(|p| crate::sym::mentions(len, &p.name.to_string()).is_some())
                        .all(|p| !p.per_run() || p.bound.is_some()),
                    each_run: matches!(buffer.kind, BufferKind::StreamOrdered { .. }),
                },
            );
        }
        // Only device memory comes in sets (`formation.rs`).
        if let (Some(array), BufferKind::Device) = (&buffer.array, buffer.kind) {
            fixed(&array.count, FixedAtNew::SetCount);
        }
        // Only device memory is placed (`gpu_placement.rs`): the
        // placement of other memory is one error, whatever it reads.
        if let (Some(Placement::One { index, .. }), BufferKind::Device) = (&buffer.gpu, buffer.kind)
        {
            fixed(index, FixedAtNew::Placement { name: &buffer.name });
        }
    }
    for stream in &plan.streams {
        if let Some(array) = &stream.array {
            fixed(&array.count, FixedAtNew::SetCount);
        }
        if let Some(Placement::One { index, .. }) = &stream.gpu {
            fixed(index, FixedAtNew::Placement { name: &stream.name });
        }
    }
    for array in plan.event_arrays.iter().flatten() {
        fixed(&array.count, FixedAtNew::SetCount);
    }
}

/// `len`, the length of `buffer`, with every `run` parameter in it
/// replaced by the bound the plan states of it, where that length is
/// provably at least `len` for every run: the capacity to size the buffer
/// by (`(cap + m - 1) / m` for `(len + m - 1) / m` with `len <= cap`).
fn capacity(plan: &Plan, buffer: &Buffer, len: &Expr) -> Option<String> {
    let mut capacity = text(len);
    for param in plan.params.iter().filter(|p| p.per_run()) {
        let name = param.name.to_string();
        if crate::sym::mentions(len, &name).is_none() {
            continue;
        }
        let limit = &param.bound.as_ref()?.limit;
        let limit = match limit {
            Expr::Path(_) | Expr::Lit(_) | Expr::Paren(_) | Expr::Call(_) => text(limit),
            other => format!("({})", text(other)),
        };
        capacity = rename_word(&capacity, &name, &limit);
    }
    let expr: Expr = syn::parse_str(&capacity).ok()?;
    if plan.run_param_in(&expr).is_some() {
        return None;
    }
    let mut atoms = plan.atoms.clone();
    let reading = read(&expr, &mut atoms).ok()?;
    atoms
        .provably_le_thoroughly(
            &buffer.len,
            &reading.value,
            &[&buffer.len_facts, &reading.facts],
        )
        .then_some(capacity)
}

/// What a size `new` fixes is for.
enum FixedAtNew<'a> {
    /// The length of the buffer `buffer`, written `written`, which `new`
    /// allocates (or fixes for each run's `alloc`, `each_run`); the
    /// capacity that holds it for every run, where the plan's bounds give
    /// one; whether every `run` parameter in it has a bound.
    Length {
        buffer: &'a Ident,
        written: String,
        capacity: Option<String>,
        bounded: bool,
        each_run: bool,
    },
    /// The count of a set of buffers, streams or events (`part[g]`).
    SetCount,
    /// `g` in `gpus gpu[g];`.
    GpuCount { gpus: &'a Ident },
    /// `e` in `on gpu[e]`, placing the device buffer or stream `name`.
    Placement { name: &'a Ident },
}

/// What changes from run to run in a size: a `run` parameter, or the
/// length of a caller's slice declared without one (`xs.len()`).
#[derive(Clone, Copy)]
enum Changes<'a> {
    Given(&'a str),
    Measured(&'a str),
}

impl FixedAtNew<'_> {
    /// Why `new` cannot fix the size (the part of the message after what
    /// changes), for each kind of size alike.
    fn fixed_once(&self) -> String {
        match self {
            FixedAtNew::Length {
                buffer,
                each_run: false,
                ..
            } => format!("`new` allocates `{buffer}` once"),
            FixedAtNew::Length { buffer, .. } => {
                format!("each run's `alloc` allocates `{buffer}` with the length `new` fixes")
            }
            FixedAtNew::SetCount => "`new` makes a set once".to_owned(),
            FixedAtNew::GpuCount { .. } => {
                "the plan's GPUs are fixed when `new` makes its buffers and streams on them"
                    .to_owned()
            }
            FixedAtNew::Placement { name } => {
                format!("`new` places `{name}` on its GPU once, when it makes it")
            }
        }
    }

    /// The message and help for what `changes` in the size.
    fn message(&self, changes: Changes) -> (String, String) {
        let (what, verb) = match changes {
            Changes::Given(param) => (param, "is given to each run"),
            Changes::Measured(slice) => (slice, "is measured at each run"),
        };
        let message = format!("`{what}` {verb}, and {}", self.fixed_once());
        let help = match (self, changes) {
            (
                FixedAtNew::Length {
                    buffer,
                    written,
                    capacity: Some(capacity),
                    ..
                },
                Changes::Given(param),
            ) => format!(
                "size `{buffer}` by what it is for the largest `{param}`, `{capacity}`, and use a range of it, `{buffer}[..{written}]`"
            ),
            (
                FixedAtNew::Length {
                    buffer,
                    written,
                    bounded: true,
                    ..
                },
                Changes::Given(_),
            ) => format!(
                "size `{buffer}` by a capacity that `new` takes, and use a range of it, `{buffer}[..{written}]`"
            ),
            (
                FixedAtNew::Length {
                    buffer, written, ..
                },
                Changes::Given(param),
            ) => format!(
                "size `{buffer}` by a capacity that `new` takes, and use a range of it, `{buffer}[..{written}]`; \
                 `run {param}: usize <= cap` says each run's `{param}` is at most `cap`"
            ),
            (FixedAtNew::Length { .. }, Changes::Measured(_)) => {
                "give the slice a length in the plan's sizes, `xs: &[f32; n]`, or size the buffer by one"
                    .to_owned()
            }
            (FixedAtNew::SetCount, _) => "count a set with sizes that `new` takes".to_owned(),
            (FixedAtNew::GpuCount { gpus }, Changes::Given(param)) => format!(
                "count `{gpus}` with sizes of the plan's parameters, which `new` takes with as many contexts: declare `{param}: usize` without `run`"
            ),
            (FixedAtNew::GpuCount { gpus }, Changes::Measured(_)) => format!(
                "count `{gpus}` with sizes of the plan's parameters, which `new` takes with as many contexts: `gpus {gpus}[g];`"
            ),
            (FixedAtNew::Placement { name }, Changes::Given(param)) => format!(
                "place `{name}` by sizes of the plan's parameters, which `new` takes: declare `{param}: usize` without `run`, or place it by another size"
            ),
            (FixedAtNew::Placement { name }, Changes::Measured(_)) => format!(
                "place `{name}` by sizes of the plan's parameters, which `new` takes; a slice without a declared length is measured only when a run is given it"
            ),
        };
        (message, help)
    }
}
