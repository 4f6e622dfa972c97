//! What the user's code gives the plan: fill values, kernel arguments and
//! launch dimensions outside the size arithmetic. `new` evaluates them in
//! safe code, once; those that read a `run` parameter, each run.

use super::sizes::Sizes;
use crate::ir::{Arg, KernelParamKind, OpKind, Plan};
use crate::text::text;
use syn::Expr;

/// A value the user's code gives, which `new` (or a run) evaluates.
pub enum Given {
    /// The value fill op `op` writes, of the buffer's element type.
    Fill {
        op: u16,
        ty: syn::Type,
        value: Expr,
    },
    /// Kernel value argument `arg` of launch `op`, of the parameter's type.
    Value {
        op: u16,
        arg: u16,
        ty: syn::Type,
        value: Expr,
    },
    Grid {
        op: u16,
        value: Expr,
    },
    Block {
        op: u16,
        value: Expr,
    },
    Shared {
        op: u16,
        value: Expr,
    },
}

impl Given {
    /// The user's expression that computes it.
    pub fn expr(&self) -> &Expr {
        match self {
            Given::Fill { value, .. }
            | Given::Value { value, .. }
            | Given::Grid { value, .. }
            | Given::Block { value, .. }
            | Given::Shared { value, .. } => value,
        }
    }
}

/// What `new` evaluates, and what each run does.
#[derive(Default)]
pub struct Givens {
    pub new: Vec<Given>,
    pub run: Vec<Given>,
}

impl Givens {
    /// The ops whose values each run gives, in order.
    pub fn per_run(&self) -> Vec<u16> {
        let mut ops: Vec<u16> = self
            .run
            .iter()
            .map(|given| match *given {
                Given::Fill { op, .. }
                | Given::Value { op, .. }
                | Given::Grid { op, .. }
                | Given::Block { op, .. }
                | Given::Shared { op, .. } => op,
            })
            .collect();
        ops.dedup();
        ops
    }

    /// `given` goes to each run if `value` reads a `run` parameter, else
    /// to `new`.
    fn push(&mut self, plan: &Plan, value: &Expr, given: Given) {
        match plan.run_param_in(value) {
            Some(_) => self.run.push(given),
            None => self.new.push(given),
        }
    }

    /// Everything `plan`'s code gives, in program order; an error for an
    /// expression that `new` computes once but that changes with a loop's
    /// variable or a run's parameters.
    pub fn from_plan(plan: &Plan, sizes: &Sizes<'_>) -> syn::Result<Givens> {
        let mut givens = Givens::default();
        for (index, op) in plan.ops.iter().enumerate() {
            let at = index as u16;
            match &op.kind {
                OpKind::Fill { dst, value } => {
                    once(plan, index, value, Once::FillValue)?;
                    let ty = plan.buffers[dst.buffer].elem.clone();
                    let given = Given::Fill {
                        op: at,
                        ty,
                        value: value.clone(),
                    };
                    givens.push(plan, value, given);
                }
                OpKind::Launch(launch) => {
                    if sizes.dims(&launch.grid)?.is_none() {
                        computed_by_new(plan, index, &launch.grid)?;
                        let value = launch.grid.clone();
                        givens.new.push(Given::Grid { op: at, value });
                    }
                    if sizes.dims(&launch.block)?.is_none() {
                        computed_by_new(plan, index, &launch.block)?;
                        let value = launch.block.clone();
                        givens.new.push(Given::Block { op: at, value });
                    }
                    if let Some(shared) = &launch.shared
                        && sizes.launch(shared)?.is_none()
                    {
                        computed_by_new(plan, index, shared)?;
                        let value = shared.clone();
                        givens.new.push(Given::Shared { op: at, value });
                    }
                    let params = &plan.kernels[launch.kernel].params;
                    for (position, (arg, param)) in launch.args.iter().zip(params).enumerate() {
                        let Arg::Value(value) = arg else {
                            continue;
                        };
                        let KernelParamKind::Value(ty) = &param.kind else {
                            return Err(syn::Error::new_spanned(
                                value,
                                "a value for a slice parameter",
                            ));
                        };
                        // The runtime computes a count at each iteration.
                        if launch.counts[position].is_some() {
                            continue;
                        }
                        once(plan, index, value, Once::LaunchValue)?;
                        let given = Given::Value {
                            op: at,
                            arg: position as u16,
                            ty: ty.clone(),
                            value: value.clone(),
                        };
                        givens.push(plan, value, given);
                    }
                }
                _ => {}
            }
        }
        Ok(givens)
    }
}

/// A launch dimension `new` computes with Rust code: once, so it may read
/// neither a loop's variable nor a `run` parameter (one written in the
/// size arithmetic may: the runtime computes it).
fn computed_by_new(plan: &Plan, op: usize, expr: &Expr) -> syn::Result<()> {
    once(plan, op, expr, Once::LaunchDimension)?;
    match plan.run_param_in(expr) {
        None => Ok(()),
        Some(path) => Err(syn::Error::new_spanned(
            &path,
            format!(
                "`{}` is given to each run, and `new` computes `{}` once\n\n\
                 help: write launch dimensions that change from run to run as sizes, `blocks(len, 256)`",
                text(&path),
                text(expr)
            ),
        )),
    }
}

/// What `new` computes once, for the help of an error.
#[derive(Clone, Copy)]
enum Once {
    FillValue,
    LaunchValue,
    LaunchDimension,
}

/// An expression `new` evaluates once may not read a loop's variable.
fn once(plan: &Plan, op: usize, expr: &Expr, what: Once) -> syn::Result<()> {
    let Some(repeat) = plan.loop_of(op) else {
        return Ok(());
    };
    let var = repeat.var.to_string();
    let Some(path) = crate::sym::mentions(expr, &var) else {
        return Ok(());
    };
    let help = match what {
        Once::FillValue => format!(
            "a fill writes one value, the same in every iteration; to write one that changes with `{var}`, \
             launch a kernel and pass it a size cast to its integer type, `{var} as i32`"
        ),
        Once::LaunchValue => format!(
            "a launch argument that changes with `{var}` is a size cast to the kernel's integer type, \
             `(n - {var} * m) as i32`"
        ),
        Once::LaunchDimension => format!(
            "launch dimensions that change with `{var}` are sizes, `blocks(min(m, n - {var} * m), 256)`"
        ),
    };
    Err(syn::Error::new_spanned(
        path,
        format!(
            "`{}` reads the loop variable `{var}`, and `new` computes it once\n\nhelp: {help}",
            text(expr)
        ),
    ))
}
