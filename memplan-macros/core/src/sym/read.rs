//! Reading a size from the expression the user wrote.

use super::atoms::Atoms;
use super::poly::{MAX_TERMS, Monomial, Sym, gcd};
use crate::text::text;
use syn::visit::Visit;
use syn::{BinOp, Expr, Lit};

/// A size read from an expression: its value, and the facts that its
/// evaluation guarantees, each a polynomial that is `<= 0`: `b - a` for
/// each `a - b` written (`new` refuses a subtraction that goes below zero),
/// `1 - d` for each division by a size `d` (it refuses a division by zero).
#[derive(Clone, Debug)]
pub struct Reading {
    /// The size.
    pub value: Sym,
    /// What computing it guarantees, each a polynomial that is `<= 0`.
    pub facts: Vec<Sym>,
}

/// How deep a size may nest (parentheses, calls, operators of different
/// precedence); deeper ones are refused, not a crash. A chain of operators
/// of one precedence, `a + b - c + ...`, costs no depth; the macro takes
/// at most `MAX_OPERATORS` operators in one expression.
pub const MAX_DEPTH: usize = 128;

/// Why an expression is not one the arithmetic understands.
pub const UNSUPPORTED: &str = "a size memplan cannot read\n\n\
     help: lengths and ranges are written with integers, `usize` plan \
     parameters and constants, `+ - * / %`, parentheses, `as usize`, calls \
     and `xs.len()` of a caller's slice";

const TOO_LARGE: &str = "a size beyond what `usize` holds\n\n\
     help: lengths and ranges are `usize`";

/// Reads `expr` as a size; `Err` with the offending part.
pub fn read(expr: &Expr, atoms: &mut Atoms) -> Result<Reading, syn::Error> {
    let mut facts = Vec::new();
    let value = value(expr, atoms, &mut facts, 0)?;
    Ok(Reading { value, facts })
}

fn value(
    expr: &Expr,
    atoms: &mut Atoms,
    facts: &mut Vec<Sym>,
    depth: usize,
) -> Result<Sym, syn::Error> {
    if depth > MAX_DEPTH {
        return Err(syn::Error::new_spanned(
            expr,
            format!(
                "a size nested more than {MAX_DEPTH} deep\n\nhelp: name a part of it with a `const`"
            ),
        ));
    }
    let depth = depth + 1;
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) => int
                .base10_parse::<u64>()
                .map(|v| Sym::constant(v.into()))
                .map_err(|_| syn::Error::new_spanned(int, TOO_LARGE)),
            _ => Err(syn::Error::new_spanned(expr, UNSUPPORTED)),
        },
        Expr::Paren(paren) => value(&paren.expr, atoms, facts, depth),
        Expr::Group(group) => value(&group.expr, atoms, facts, depth),
        Expr::Path(path) if path.qself.is_none() => {
            let name = text(&path.path);
            if let Some(why) = atoms.forbidden(&name) {
                return Err(syn::Error::new_spanned(
                    path,
                    format!("{why}\n\nhelp: sizes use `usize` parameters"),
                ));
            }
            if atoms.is_slice(&name) {
                return Err(syn::Error::new_spanned(
                    path,
                    format!(
                        "`{name}` is a caller's slice, not a size\n\nhelp: its length is `{name}.len()`"
                    ),
                ));
            }
            let name = atoms.renamed(name);
            Ok(Sym::atom(atoms.intern(&name)))
        }
        // `min(a, b)`: an atom of its own, at most each of the two.
        Expr::Call(call) if is_min(call) => {
            let a = value(&call.args[0], atoms, facts, depth)?;
            let b = value(&call.args[1], atoms, facts, depth)?;
            let min = Sym::atom(atoms.min(a.clone(), b.clone()));
            for bound in [&a, &b] {
                facts.extend(min.sub(bound));
            }
            Ok(min)
        }
        // `as usize` of the plan's own sizes changes nothing.
        Expr::Cast(cast) if is_usize(&cast.ty) && is_pure(&cast.expr, atoms) => {
            value(&cast.expr, atoms, facts, depth)
        }
        // Of anything else (a constant of another type, maybe signed) it may
        // change the value: a term of its own, equal only to itself.
        Expr::Cast(cast) if is_usize(&cast.ty) => opaque(expr, &cast_name(&cast.expr), atoms),
        Expr::Binary(_) => {
            let (leftmost, chain) = binary_chain(expr);
            let mut left = value(leftmost, atoms, facts, depth)?;
            for binary in chain {
                let right = value(&binary.right, atoms, facts, depth)?;
                left = operate(binary, left, right, atoms, facts)?;
            }
            Ok(left)
        }
        Expr::MethodCall(call) if call.method == "len" && call.args.is_empty() => {
            let slice = match &*call.receiver {
                Expr::Path(path) => atoms.slice_len(&text(&path.path)),
                _ => None,
            };
            match slice {
                Some(len) => Ok(len),
                None => opaque(expr, &text(expr), atoms),
            }
        }
        Expr::Call(_) | Expr::MethodCall(_) | Expr::Field(_) | Expr::Index(_) => {
            opaque(expr, &text(expr), atoms)
        }
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => {
            Err(syn::Error::new_spanned(
                expr,
                "a size is never negative\n\nhelp: lengths and ranges are `usize`",
            ))
        }
        _ => Err(syn::Error::new_spanned(expr, UNSUPPORTED)),
    }
}

/// A chain `a + b - c ...` as its leftmost operand and the operations
/// applied to it in order. Chains nest to the left: walking the spine
/// rather than recursing makes a long one cost no depth.
pub fn binary_chain(expr: &Expr) -> (&Expr, Vec<&syn::ExprBinary>) {
    let mut chain = Vec::new();
    let mut leftmost = expr;
    while let Expr::Binary(binary) = leftmost {
        chain.push(binary);
        leftmost = &binary.left;
    }
    chain.reverse();
    (leftmost, chain)
}

/// `left op right`, for the arithmetic's operators.
fn operate(
    binary: &syn::ExprBinary,
    left: Sym,
    right: Sym,
    atoms: &mut Atoms,
    facts: &mut Vec<Sym>,
) -> Result<Sym, syn::Error> {
    let expr = &Expr::Binary(binary.clone());
    let too_large = || syn::Error::new_spanned(binary, TOO_LARGE);
    let zero_divisor = || {
        syn::Error::new_spanned(
            &binary.right,
            "division by zero\n\nhelp: divide by a size that is not 0",
        )
    };
    match binary.op {
        BinOp::Add(_) => left.add(&right).ok_or_else(too_large),
        BinOp::Sub(_) => {
            facts.push(right.sub(&left).ok_or_else(too_large)?);
            left.sub(&right).ok_or_else(too_large)
        }
        BinOp::Mul(_) => match left.mul(&right) {
            Some(product) => Ok(product),
            // Too many terms to expand: the product as written is a term
            // of its own (a product of sizes, never negative).
            None if (left.terms().len() + 1) * (right.terms().len() + 1) > MAX_TERMS => {
                opaque(expr, &text(expr), atoms)
            }
            None => Err(too_large()),
        },
        BinOp::Div(_) => {
            if right.is_zero() {
                return Err(zero_divisor());
            }
            divide(left, right, atoms, facts).ok_or_else(too_large)
        }
        BinOp::Rem(_) => {
            if right.is_zero() {
                return Err(zero_divisor());
            }
            let quotient =
                divide(left.clone(), right.clone(), atoms, facts).ok_or_else(too_large)?;
            right
                .mul(&quotient)
                .and_then(|multiple| left.sub(&multiple))
                .ok_or_else(too_large)
        }
        _ => Err(syn::Error::new_spanned(binary, UNSUPPORTED)),
    }
}

/// `⌊numerator / divisor⌋` in normal form, noting that the divisor is at
/// least 1 whenever the plan runs.
fn divide(numerator: Sym, divisor: Sym, atoms: &mut Atoms, facts: &mut Vec<Sym>) -> Option<Sym> {
    if divisor.as_constant().is_none() {
        facts.push(Sym::constant(1).sub(&divisor)?);
    }
    quotient(numerator, divisor, atoms)
}

/// `⌊numerator / divisor⌋` for a divisor of at least 1: exact where the
/// division is, whole multiples taken out and common factors cancelled,
/// so that one quotient has one atom; a quotient atom for what is left.
fn quotient(numerator: Sym, divisor: Sym, atoms: &mut Atoms) -> Option<Sym> {
    // A divisor `d · M`: a literal times a product of sizes (maybe none).
    let single = match (divisor.as_constant(), divisor.terms()) {
        (Some(d), _) if d > 0 => Some((Monomial::default(), d)),
        (None, [(m, d)]) if divisor.constant_term() == 0 && *d > 0 => Some((m.clone(), *d)),
        _ => None,
    };
    let Some((monomial, d)) = single else {
        return Some(Sym::atom(atoms.quotient(numerator, divisor)));
    };
    if let (Some(value), true) = (numerator.as_constant(), monomial.is_one()) {
        return Some(Sym::constant(value.div_euclid(d)));
    }
    // ⌊(d·M·x + y) / (d·M)⌋ = x + ⌊y / (d·M)⌋, for `y >= 0` (no part of
    // it negative): `(a + b) / a` is `1 + b / a`, which the prover knows
    // to be at least 1. A literal divisor keeps its quotient whole, so
    // that `(2 * a + b) / 4` stays related to `(2 * a + b) / 2`, as a
    // quotient of one numerator.
    let (whole, rest) = numerator.split_multiples(&monomial, d)?;
    if rest.is_zero() {
        return Some(whole);
    }
    if !monomial.is_one() && !whole.is_zero() && rest.has_no_negative_part() {
        return whole.add(&quotient(rest, divisor, atoms)?);
    }
    // ⌊M·x / (d·M)⌋ = ⌊x / d⌋: `a * b / a` is `b`.
    if !monomial.is_one()
        && let Some(reduced) = numerator.divide_by_monomial(&monomial)
    {
        return quotient(reduced, Sym::constant(d), atoms);
    }
    // ⌊g·x / (g·y)⌋ = ⌊x / y⌋.
    let common = gcd(numerator.content(), d);
    if common > 1 {
        return quotient(
            numerator.divide_exactly(common)?,
            divisor.divide_exactly(common)?,
            atoms,
        );
    }
    Some(Sym::atom(atoms.quotient(numerator, divisor)))
}

/// A term the arithmetic does not look into, named by `name`: `new`
/// computes it, so it may not read a caller's slice, which only runs see.
fn opaque(expr: &Expr, name: &str, atoms: &mut Atoms) -> Result<Sym, syn::Error> {
    struct Slices<'a> {
        atoms: &'a Atoms,
        found: Option<syn::Path>,
    }
    impl<'ast> Visit<'ast> for Slices<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if self.found.is_none() && self.atoms.is_slice(&text(path)) {
                self.found = Some(path.clone());
            }
            syn::visit::visit_path(self, path);
        }
    }
    if let Some(var) = atoms.loop_var()
        && let Some(path) = mentions(expr, var)
    {
        return Err(syn::Error::new_spanned(
            path,
            format!(
                "`{}` reads the loop variable `{var}`, and `new` computes it once\n\n\
                 help: in a loop, sizes use `{var}` with `+ - * / %`, `min(a, b)` and parentheses",
                text(expr)
            ),
        ));
    }
    let mut slices = Slices { atoms, found: None };
    slices.visit_expr(expr);
    if let Some(path) = slices.found {
        let name = text(&path);
        return Err(syn::Error::new_spanned(
            path,
            format!(
                "`{name}` is a caller's slice, lent to each run, and `new` computes every size once\n\n\
                 help: of a caller's slice a size may use `{name}.len()`"
            ),
        ));
    }
    Ok(Sym::atom(atoms.intern(name)))
}

/// `min(a, b)`, the language's other built-in function.
pub fn is_min(call: &syn::ExprCall) -> bool {
    call.args.len() == 2
        && matches!(&*call.func, Expr::Path(path) if path.qself.is_none() && path.path.is_ident("min"))
}

/// The first path in `expr` that is `name`.
pub fn mentions(expr: &Expr, name: &str) -> Option<syn::Path> {
    struct Find<'a> {
        name: &'a str,
        found: Option<syn::Path>,
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if self.found.is_none() && path.is_ident(self.name) {
                self.found = Some(path.clone());
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut find = Find { name, found: None };
    find.visit_expr(expr);
    find.found
}

/// The name of `inner as usize`, as an opaque term.
pub fn cast_name(inner: &Expr) -> String {
    let inner = text(inner);
    let bare = inner
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
    if bare {
        format!("{inner} as usize")
    } else {
        format!("({inner}) as usize")
    }
}

/// Whether `expr` is built from integers and the plan's `usize`
/// parameters only, so that it is a `usize` computed as the arithmetic
/// models it.
pub fn is_pure(expr: &Expr, atoms: &Atoms) -> bool {
    pure(expr, atoms, 0)
}

fn pure(expr: &Expr, atoms: &Atoms, depth: usize) -> bool {
    let inner = |e: &Expr| depth < MAX_DEPTH && pure(e, atoms, depth + 1);
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
        Expr::Path(path) => path.qself.is_none() && atoms.is_size(&text(&path.path)),
        Expr::Paren(paren) => inner(&paren.expr),
        Expr::Group(group) => inner(&group.expr),
        Expr::Cast(cast) => is_usize(&cast.ty) && inner(&cast.expr),
        Expr::Call(call) if is_min(call) => inner(&call.args[0]) && inner(&call.args[1]),
        Expr::Binary(binary) => {
            matches!(
                binary.op,
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
            ) && inner(&binary.left)
                && inner(&binary.right)
        }
        _ => false,
    }
}

/// Whether `ty` is `usize` written as such: the type of the plan's size
/// parameters.
pub fn is_usize(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident("usize"))
}
