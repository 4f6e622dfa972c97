//! Launch arguments against the kernel's declaration: how many, buffers for
//! slice parameters and values for the rest, element types, no writes
//! through a caller's read-only slice, and counts cast to their
//! parameter's type.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{Arg, Count, INTEGERS, KernelParamKind, Launch, OpKind, Plan};
use crate::syntax::SliceAccess;
use crate::text::text;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Type};

/// The most parameters a kernel may have: the runtime passes arguments as
/// tuples, whose `KernelArgs` impls go up to this size.
const MAX_PARAMS: usize = 12;

/// A kernel of more parameters than memplan passes.
pub fn check_kernel_parameter_count(facts: &Facts, errors: &Errors) {
    for kernel in &facts.plan.kernels {
        if kernel.params.len() > MAX_PARAMS {
            errors.at(
                kernel.name.span(),
                format!(
                    "kernel `{}` has {} parameters, more than the {MAX_PARAMS} memplan passes",
                    kernel.name,
                    kernel.params.len()
                ),
                "pass a pointer to a struct of the rest, or split the kernel",
            );
        }
    }
}

/// A launch whose arguments disagree with its kernel's declaration: their
/// count, a buffer or a value for each parameter, element types, writes
/// through a caller's read-only slice.
pub fn check_launch_arguments(facts: &Facts, errors: &Errors) {
    for op in &facts.plan.ops {
        if let OpKind::Launch(launch) = &op.kind {
            arguments(facts.plan, launch, errors);
        }
    }
}

fn arguments(plan: &Plan, launch: &Launch, errors: &Errors) {
    let kernel = &plan.kernels[launch.kernel];
    let signature = signature(plan, launch.kernel);
    if launch.args.len() != kernel.params.len() {
        errors.at(
            launch.args_span,
            format!(
                "kernel `{}` takes {} arguments, and {} are given",
                kernel.name,
                kernel.params.len(),
                launch.args.len()
            ),
            format!("its declaration is `{signature}`"),
        );
        // Matching arguments to parameters by position would only guess.
        return;
    }
    for ((param, arg), count) in kernel.params.iter().zip(&launch.args).zip(&launch.counts) {
        match (&param.kind, arg) {
            (KernelParamKind::Slice { .. }, Arg::Value(expr)) => errors.at(
                expr.span(),
                format!("`{}`'s parameter `{}` is a slice, so this argument must be a buffer of the plan", kernel.name, param.name),
                "pass a buffer, or a range of one such as `da[0..n]`",
            ),
            (KernelParamKind::Value(ty), Arg::Buffer(place)) => errors.at(
                place.span,
                format!(
                    "`{}`'s parameter `{}` is a value (`{}`), and `{}` is a buffer",
                    kernel.name,
                    param.name,
                    text(ty),
                    plan.buffers[place.buffer].name
                ),
                "pass a value here; buffers go to slice parameters",
            ),
            (KernelParamKind::Slice { access, elem, .. }, Arg::Buffer(place)) => {
                let buffer = &plan.buffers[place.buffer];
                if text(elem) != text(&buffer.elem) {
                    errors.at(
                        place.span,
                        format!(
                            "`{}` takes `[{}]` through `{}`, and `{}` holds `{}`",
                            kernel.name,
                            text(elem),
                            param.name,
                            buffer.name,
                            text(&buffer.elem)
                        ),
                        format!("pass a buffer of `{}`", text(elem)),
                    );
                }
                if *access != SliceAccess::Read && !buffer.kind.is_writable() {
                    errors.at(
                        place.span,
                        format!(
                            "`{}` writes through `{}`, and `{}` is the caller's read-only slice",
                            kernel.name, param.name, buffer.name
                        ),
                        format!("borrow it mutably in the plan's parameters: `{}: &mut [{}]`", buffer.name, text(&buffer.elem)),
                    );
                }
            }
            (KernelParamKind::Value(ty), Arg::Value(value)) => {
                if let Some(count) = count {
                    count_of_its_type(count, value, ty, &param.name, &kernel.name, errors);
                }
            }
        }
    }
}

/// A size counted at each iteration is cast to the parameter's type, as
/// any value given to it is of that type; a cast to another primitive
/// integer type is refused where rustc would refuse the value. (The
/// runtime writes it in the parameter's own type whatever the spelling.)
fn count_of_its_type(
    count: &Count,
    value: &Expr,
    ty: &Type,
    param: &Ident,
    kernel: &Ident,
    errors: &Errors,
) {
    let declared = text(ty);
    if count.cast == declared || !INTEGERS.contains(&declared.as_str()) {
        return;
    }
    let message = format!(
        "this count is cast to `{}`, and `{kernel}` takes `{param}` as `{declared}`",
        count.cast,
    );
    let help = format!("cast it to the parameter's type: `as {declared}`");
    match &count.cast_type {
        Some(cast) => errors.over(cast, message, help),
        None => errors.over(value, message, help),
    }
}

/// `kernel vadd(a: &[f32], c: &out [f32], n: i32)`, for messages.
fn signature(plan: &Plan, kernel: usize) -> String {
    let kernel = &plan.kernels[kernel];
    let params: Vec<String> = kernel
        .params
        .iter()
        .map(|param| format!("{}: {}", param.name, param.spelled()))
        .collect();
    format!("kernel {}({})", kernel.name, params.join(", "))
}
