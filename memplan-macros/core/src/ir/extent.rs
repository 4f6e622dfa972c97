//! Extents: `kernel vadd(a: &[f32; n], ..., n: i32)` says the kernel
//! touches `n` elements of `a` from its start. At a launch the extent is
//! rewritten in the plan's sizes, through the arguments: with
//! `vadd(da, db, dc, len as i32)` it is `len`. `new` then checks that each
//! argument an extent names is the size it was cast from (`len as i32`
//! did not wrap) and that each buffer argument holds its extent; the
//! checks track the extent, not the whole argument. An extent whose values
//! are not sizes of the plan (`count()`) is computed by `new` from what the
//! kernel receives, and checked there only.

use super::{Arg, Kernel, KernelParamKind, Place};
use crate::sym::{self, Atoms, Sym};
use crate::text::text;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit};

/// What a launch's buffer argument touches.
#[derive(Clone)]
pub enum LaunchExtent {
    /// In the plan's sizes, when every value the extent names stands for
    /// one: checked statically where the arithmetic can, else by `new`,
    /// and what the checks track.
    Sized {
        /// The extent as a size of the plan (`len`, for the extent `n` and
        /// the argument `len as i32`), for the lowering.
        expr: Expr,
        /// The extent, as a size.
        value: Sym,
        /// What computing it guarantees (see `sym::Reading`).
        facts: Vec<Sym>,
    },
    /// Otherwise (a value from a call, say): the declared extent, which
    /// `new` computes from the values the kernel receives and checks; the
    /// checks track the whole argument.
    Measured(Expr),
}

fn is_integer(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path)
        if path.qself.is_none() && super::INTEGERS.iter().any(|int| path.path.is_ident(int)))
}

const EXTENT_HELP: &str = "an extent is written with integers, the kernel's integer value \
                           parameters, `+ - * / %` and parentheses: `[f32; n]`, `[f32; rows * cols]`";

/// Checks that each extent of `kernel` is written in its integer value
/// parameters; the errors point at the offending part. An extent with
/// errors is removed, so that nothing later reads it.
pub fn check_declaration(kernel: &mut Kernel) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    for index in 0..kernel.params.len() {
        let KernelParamKind::Slice {
            extent: Some(extent),
            ..
        } = &kernel.params[index].kind
        else {
            continue;
        };
        let before = errors.len();
        if depth(extent) > sym::MAX_DEPTH {
            errors.push(syn::Error::new_spanned(
                extent,
                format!(
                    "an extent nested more than {} deep\n\nhelp: {EXTENT_HELP}",
                    sym::MAX_DEPTH
                ),
            ));
        } else {
            walk(extent, &mut |expr| match expr {
                Expr::Path(path) => {
                    let named = path
                        .path
                        .get_ident()
                        .and_then(|ident| kernel.params.iter().find(|p| p.name == *ident));
                    match named.map(|p| &p.kind) {
                        Some(KernelParamKind::Value(ty)) if is_integer(ty) => {}
                        Some(KernelParamKind::Value(ty)) => errors.push(syn::Error::new_spanned(
                            path,
                            format!(
                                "`{}` is a `{}`, and an extent counts elements with integers\n\n\
                                 help: {EXTENT_HELP}",
                                text(path),
                                text(ty)
                            ),
                        )),
                        Some(KernelParamKind::Slice { .. }) => {
                            errors.push(syn::Error::new_spanned(
                                path,
                                format!(
                                    "`{}` is a slice parameter, not a count\n\nhelp: {EXTENT_HELP}",
                                    text(path)
                                ),
                            ))
                        }
                        None => errors.push(syn::Error::new_spanned(
                            path,
                            format!(
                                "`{}` is not a parameter of `{}`\n\nhelp: {EXTENT_HELP}",
                                text(path),
                                kernel.name
                            ),
                        )),
                    }
                }
                Expr::Lit(lit) if matches!(lit.lit, Lit::Int(_)) => {}
                Expr::Paren(_) | Expr::Group(_) => {}
                Expr::Binary(binary) if is_arithmetic(&binary.op) => {}
                other => errors.push(syn::Error::new_spanned(
                    other,
                    format!("an extent memplan cannot read\n\nhelp: {EXTENT_HELP}"),
                )),
            });
        }
        if errors.len() > before
            && let KernelParamKind::Slice { extent, .. } = &mut kernel.params[index].kind
        {
            *extent = None;
            kernel.misdeclared = true;
        }
    }
    errors
}

fn is_arithmetic(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
    )
}

/// Calls `f` on `expr` and each expression inside it that an extent may
/// contain, outermost first. Only for extents `check_declaration` kept,
/// which nest no deeper than `sym::MAX_DEPTH`.
fn walk(expr: &Expr, f: &mut impl FnMut(&Expr)) {
    f(expr);
    match expr {
        Expr::Paren(paren) => walk(&paren.expr, f),
        Expr::Group(group) => walk(&group.expr, f),
        Expr::Binary(binary) if is_arithmetic(&binary.op) => {
            walk(&binary.left, f);
            walk(&binary.right, f);
        }
        _ => {}
    }
}

/// How deep `expr` nests, counting no further than past `sym::MAX_DEPTH`.
fn depth(expr: &Expr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(expr, 0)];
    while let Some((expr, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if depth > sym::MAX_DEPTH {
            break;
        }
        match expr {
            Expr::Paren(paren) => stack.push((&paren.expr, depth + 1)),
            Expr::Group(group) => stack.push((&group.expr, depth + 1)),
            Expr::Binary(binary) => {
                stack.push((&binary.left, depth + 1));
                stack.push((&binary.right, depth + 1));
            }
            _ => {}
        }
    }
    deepest
}

/// Whether `extent` elements from `place`'s start provably reach past its
/// end (`n` elements of a range of `n - 1`): an error `check::bounds`
/// reports. The launch then counts as touching its whole argument, as
/// narrowing the access to the extent would assume what `new` refutes.
pub fn provably_past(atoms: &Atoms, place: &Place, extent: &Sym, facts: &[Sym]) -> bool {
    let (Some(touched), Some(beyond)) = (
        place.range.start.add(extent),
        place.range.end.add(&Sym::constant(1)),
    ) else {
        return false;
    };
    atoms.provably_le(&beyond, &touched, &[&place.facts, facts])
}

/// The value parameters the extent names, by position.
pub fn named_params(extent: &Expr, kernel: &Kernel) -> Vec<usize> {
    let mut named = Vec::new();
    walk(extent, &mut |expr| {
        if let Expr::Path(path) = expr
            && let Some(ident) = path.path.get_ident()
            && let Some(index) = kernel.params.iter().position(|p| p.name == *ident)
            && !named.contains(&index)
        {
            named.push(index);
        }
    });
    named
}

/// The size a value argument stands for: `len` of `len as i32` (or of
/// `len`), when it is written in the plan's sizes; `None` otherwise.
pub fn bound_size<'a>(arg: &'a Expr, atoms: &Atoms) -> Option<&'a Expr> {
    let inner = match arg {
        Expr::Cast(cast) if is_integer(&cast.ty) => &*cast.expr,
        Expr::Paren(paren) => return bound_size(&paren.expr, atoms),
        Expr::Group(group) => return bound_size(&group.expr, atoms),
        other => other,
    };
    plain_size(inner, atoms, 0).then_some(inner)
}

/// Whether `expr` is built from integers, the plan's `usize` parameters
/// (a loop's variable and `run` sizes included) and caller slices' lengths
/// with `+ - * / %` and `min`: a size whose value the plan computes
/// without running anything of the user's.
fn plain_size(expr: &Expr, atoms: &Atoms, depth: usize) -> bool {
    if depth > sym::MAX_DEPTH {
        return false;
    }
    let inner = |e: &Expr| plain_size(e, atoms, depth + 1);
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
        Expr::Path(path) => path.qself.is_none() && atoms.is_size(&text(&path.path)),
        Expr::Paren(paren) => inner(&paren.expr),
        Expr::Group(group) => inner(&group.expr),
        Expr::Cast(cast) => sym::is_usize(&cast.ty) && inner(&cast.expr),
        Expr::Binary(binary) => {
            is_arithmetic(&binary.op) && inner(&binary.left) && inner(&binary.right)
        }
        Expr::Call(call) if sym::is_min(call) => inner(&call.args[0]) && inner(&call.args[1]),
        Expr::MethodCall(call) => {
            call.method == "len"
                && call.args.is_empty()
                && matches!(&*call.receiver, Expr::Path(path) if atoms.is_slice(&text(&path.path)))
        }
        _ => false,
    }
}

/// The extent with each parameter it names replaced by the size its
/// argument stands for; `None` when an argument is not a value of that
/// form (an error of the caller's to report).
pub fn substitute(extent: &Expr, kernel: &Kernel, args: &[Arg], atoms: &Atoms) -> Option<Expr> {
    Some(match extent {
        Expr::Path(path) => {
            let ident = path.path.get_ident()?;
            let index = kernel.params.iter().position(|p| p.name == *ident)?;
            let Arg::Value(arg) = args.get(index)? else {
                return None;
            };
            let size = bound_size(arg, atoms)?.clone();
            match size {
                simple @ (Expr::Path(_) | Expr::Lit(_) | Expr::MethodCall(_) | Expr::Call(_)) => {
                    simple
                }
                compound => Expr::Paren(syn::ExprParen {
                    attrs: Vec::new(),
                    paren_token: syn::token::Paren(compound.span()),
                    expr: Box::new(compound),
                }),
            }
        }
        Expr::Paren(paren) => {
            let mut paren = paren.clone();
            paren.expr = Box::new(substitute(&paren.expr, kernel, args, atoms)?);
            Expr::Paren(paren)
        }
        Expr::Group(group) => substitute(&group.expr, kernel, args, atoms)?,
        Expr::Binary(binary) => {
            let mut binary = binary.clone();
            binary.left = Box::new(substitute(&binary.left, kernel, args, atoms)?);
            binary.right = Box::new(substitute(&binary.right, kernel, args, atoms)?);
            Expr::Binary(binary)
        }
        other => other.clone(),
    })
}
