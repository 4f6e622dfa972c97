//! Sizes that `new` fixes for the life of the plan: a set's count, the
//! plan's GPU count, and a placement's GPU. `new` makes every set, and
//! every buffer and stream on its GPU, once, so none of these may change
//! from run to run: a `run` parameter, or the length of a caller's slice
//! measured at each run, cannot be one. Each says why in its own words,
//! since "a set is made once" explains nothing about a placement.

use syn::Ident;

/// What a size `new` fixes is for.
pub enum FixedAtNew<'a> {
    /// The count of a set of buffers, streams or events (`part[g]`).
    SetCount,
    /// `g` in `gpus gpu[g];`.
    GpuCount { gpus: &'a Ident },
    /// `e` in `on gpu[e]`, placing the device buffer or stream `name`.
    Placement { name: &'a Ident },
}

impl FixedAtNew<'_> {
    /// The message and help for `run` parameter `param` in the size.
    pub fn given_to_each_run(&self, param: &str) -> (String, String) {
        match self {
            FixedAtNew::SetCount => (
                format!("`{param}` is given to each run, and `new` makes a set once"),
                "count a set with sizes that `new` takes".to_owned(),
            ),
            FixedAtNew::GpuCount { gpus } => (
                format!(
                    "`{param}` is given to each run, and the plan's GPUs are fixed when `new` makes its buffers and streams on them"
                ),
                format!(
                    "count `{gpus}` with sizes of the plan's parameters, which `new` takes with as many contexts: declare `{param}: usize` without `run`"
                ),
            ),
            FixedAtNew::Placement { name } => (
                format!(
                    "`{param}` is given to each run, and `new` places `{name}` on its GPU once, when it makes it"
                ),
                format!(
                    "place `{name}` by sizes of the plan's parameters, which `new` takes: declare `{param}: usize` without `run`, or place it by another size"
                ),
            ),
        }
    }

    /// The message and help for `slice` (`xs.len()`, the length of a
    /// caller's slice declared without one) in the size.
    pub fn measured_at_each_run(&self, slice: &str) -> (String, String) {
        match self {
            FixedAtNew::SetCount => (
                format!("`{slice}` is measured at each run, and `new` makes a set once"),
                "count a set with sizes that `new` takes".to_owned(),
            ),
            FixedAtNew::GpuCount { gpus } => (
                format!(
                    "`{slice}` is measured at each run, and the plan's GPUs are fixed when `new` makes its buffers and streams on them"
                ),
                format!(
                    "count `{gpus}` with sizes of the plan's parameters, which `new` takes with as many contexts: `gpus {gpus}[g];`"
                ),
            ),
            FixedAtNew::Placement { name } => (
                format!(
                    "`{slice}` is measured at each run, and `new` places `{name}` on its GPU once, when it makes it"
                ),
                format!(
                    "place `{name}` by sizes of the plan's parameters, which `new` takes; a slice without a declared length is measured only when a run is given it"
                ),
            ),
        }
    }
}
