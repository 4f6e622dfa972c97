//! Symbolic integers: buffer lengths and range bounds as written
//! (`n`, `n / 2`, `2 * n + 1`), compared without knowing `n`.
//!
//! A [`Sym`] is a linear combination of atoms with integer coefficients,
//! plus a constant. An atom is a quantity that is never negative: a `usize`
//! parameter or constant (`n`, `CHUNK`), or a term the arithmetic cannot
//! look into (`n / 2`, `n * m`), named by its fully parenthesized text, so
//! that two different terms never share an atom. So `n/2 + n/2` and `n` are
//! different (they are, for odd `n`), while `2*n - n` and `n` are the same.
//!
//! The arithmetic is exact: a coefficient or constant that would leave the
//! range of `usize` is an error when reading an expression, and makes a
//! comparison unprovable. The checks assume the plan's own `usize`
//! arithmetic does not overflow at run time (debug builds panic if it does).

use std::collections::HashMap;
use std::fmt;
use syn::{BinOp, Expr, Lit};

/// An interned atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Atom(u32);

/// What an atom stands for, as far as the arithmetic knows.
#[derive(Clone, Debug)]
enum AtomDef {
    /// A parameter or constant: only known to be `>= 0`.
    Opaque,
    /// `numerator / divisor`, rounded down, with `divisor > 0`:
    /// `numerator - (divisor - 1) <= divisor * atom <= numerator`.
    Quotient { numerator: Sym, divisor: i128 },
    /// `numerator % divisor`: `0 <= atom <= divisor - 1`.
    Remainder { divisor: i128 },
}

/// The largest magnitude a coefficient or constant may have: beyond it the
/// plan's `usize` arithmetic would overflow.
const LIMIT: i128 = u64::MAX as i128 + 1;

/// The atoms of one plan, by name, and what each is known to be.
#[derive(Default, Debug)]
pub struct Atoms {
    names: Vec<String>,
    defs: Vec<AtomDef>,
    index: HashMap<String, Atom>,
    /// Names that may not appear in lengths and ranges, and why.
    forbidden: HashMap<String, String>,
    /// The plan's `usize` parameters (the other names are constants, whose
    /// types the macro does not know).
    sizes: Vec<String>,
}

impl Atoms {
    /// The atom for a parameter or constant called `name`.
    pub fn intern(&mut self, name: &str) -> Atom {
        self.intern_defined(name, AtomDef::Opaque)
    }

    /// The atom of `usize` plan parameter `name`.
    pub fn intern_size(&mut self, name: &str) -> Atom {
        self.sizes.push(name.to_owned());
        self.intern(name)
    }

    /// Whether `name` is a `usize` plan parameter.
    pub fn is_size(&self, name: &str) -> bool {
        self.sizes.iter().any(|size| size == name)
    }

    /// Keeps `name` out of lengths and ranges (a value parameter that is not
    /// a `usize`), with the reason to give.
    pub fn forbid(&mut self, name: &str, why: String) {
        self.forbidden.insert(name.to_owned(), why);
    }

    fn intern_defined(&mut self, name: &str, def: AtomDef) -> Atom {
        if let Some(&atom) = self.index.get(name) {
            return atom;
        }
        let atom = Atom(self.names.len() as u32);
        self.names.push(name.to_owned());
        self.defs.push(def);
        self.index.insert(name.to_owned(), atom);
        atom
    }

    pub fn name(&self, atom: Atom) -> &str {
        &self.names[atom.0 as usize]
    }

    /// Whether `left <= right` whatever the parameters are.
    pub fn provably_le(&self, left: &Sym, right: &Sym) -> bool {
        left.sub(right)
            .is_some_and(|difference| self.never_positive(&difference, 3))
    }

    /// Whether `value <= 0` for every value of the atoms. Beyond the plain
    /// case (no positive part), replaces a quotient or remainder by its bound
    /// and tries again, `depth` times at most.
    fn never_positive(&self, value: &Sym, depth: u32) -> bool {
        if value.is_never_positive() {
            return true;
        }
        if depth == 0 {
            return false;
        }
        value.terms.iter().any(|&(atom, coefficient)| {
            let without = value.without(atom);
            let bounded = match (&self.defs[atom.0 as usize], coefficient > 0) {
                // c*q <= x: replace k*q by k*x, everything scaled by c.
                (AtomDef::Quotient { numerator, divisor }, true) => without
                    .scale(*divisor)
                    .and_then(|rest| rest.add(&numerator.scale(coefficient)?)),
                // c*q >= x - (c - 1): replace -k*q by -k*(x - c + 1), scaled by c.
                (AtomDef::Quotient { numerator, divisor }, false) => {
                    without.scale(*divisor).and_then(|rest| {
                        rest.add(
                            &numerator
                                .sub(&Sym::constant(divisor - 1))?
                                .scale(coefficient)?,
                        )
                    })
                }
                // r <= c - 1.
                (AtomDef::Remainder { divisor }, true) => coefficient
                    .checked_mul(divisor - 1)
                    .and_then(|bound| without.add(&Sym::constant(bound))),
                _ => return false,
            };
            bounded.is_some_and(|bounded| self.never_positive(&bounded, depth - 1))
        })
    }

    /// Whether the range is empty whatever the parameters are.
    pub fn is_empty(&self, range: &SymRange) -> bool {
        self.provably_le(&range.end, &range.start)
    }

    /// Whether two ranges may share an element: false only when that is
    /// provably impossible.
    pub fn may_overlap(&self, a: &SymRange, b: &SymRange) -> bool {
        !(self.is_empty(a)
            || self.is_empty(b)
            || self.provably_le(&a.end, &b.start)
            || self.provably_le(&b.end, &a.start))
    }

    /// Whether `outer` provably contains `inner`.
    pub fn contains(&self, outer: &SymRange, inner: &SymRange) -> bool {
        self.provably_le(&outer.start, &inner.start) && self.provably_le(&inner.end, &outer.end)
    }
}

/// `constant + Σ coefficient · atom`, terms sorted by atom, none zero, every
/// number within ±2^64.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sym {
    terms: Vec<(Atom, i128)>,
    constant: i128,
}

/// `Some(value)` if it is within the limit.
fn bounded(value: i128) -> Option<i128> {
    (-LIMIT..=LIMIT).contains(&value).then_some(value)
}

impl Sym {
    pub fn constant(value: i128) -> Sym {
        Sym {
            terms: Vec::new(),
            constant: value,
        }
    }

    pub fn atom(atom: Atom) -> Sym {
        Sym {
            terms: vec![(atom, 1)],
            constant: 0,
        }
    }

    pub fn as_constant(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The atom, if the value is exactly one atom.
    fn as_atom(&self) -> Option<Atom> {
        match self.terms[..] {
            [(atom, 1)] if self.constant == 0 => Some(atom),
            _ => None,
        }
    }

    /// `self + other`; `None` beyond the limit.
    pub fn add(&self, other: &Sym) -> Option<Sym> {
        self.combine(other, 1)
    }

    /// `self - other`; `None` beyond the limit.
    pub fn sub(&self, other: &Sym) -> Option<Sym> {
        self.combine(other, -1)
    }

    /// `self + sign · other`, merging the sorted term lists.
    fn combine(&self, other: &Sym, sign: i128) -> Option<Sym> {
        let mut terms = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut mine, mut theirs) = (self.terms.iter().peekable(), other.terms.iter().peekable());
        loop {
            let term = match (mine.peek(), theirs.peek()) {
                (Some(&&(a, c)), Some(&&(b, d))) if a == b => {
                    mine.next();
                    theirs.next();
                    (a, bounded(c + sign * d)?)
                }
                (Some(&&(a, c)), Some(&&(b, _))) if a < b => {
                    mine.next();
                    (a, c)
                }
                (_, Some(&&(b, d))) => {
                    theirs.next();
                    (b, sign * d)
                }
                (Some(&&(a, c)), None) => {
                    mine.next();
                    (a, c)
                }
                (None, None) => break,
            };
            if term.1 != 0 {
                terms.push(term);
            }
        }
        Some(Sym {
            terms,
            constant: bounded(self.constant + sign * other.constant)?,
        })
    }

    /// `factor · self`; `None` beyond the limit.
    fn scale(&self, factor: i128) -> Option<Sym> {
        if factor == 0 {
            return Some(Sym::constant(0));
        }
        let scale = |value: i128| value.checked_mul(factor).and_then(bounded);
        Some(Sym {
            terms: self
                .terms
                .iter()
                .map(|&(a, c)| Some((a, scale(c)?)))
                .collect::<Option<_>>()?,
            constant: scale(self.constant)?,
        })
    }

    /// Exact division by a positive constant, when every part divides evenly.
    fn divide_exactly(&self, divisor: i128) -> Option<Sym> {
        let divides = |value: i128| value % divisor == 0;
        (divisor > 0 && divides(self.constant) && self.terms.iter().all(|&(_, c)| divides(c))).then(
            || Sym {
                terms: self.terms.iter().map(|&(a, c)| (a, c / divisor)).collect(),
                constant: self.constant / divisor,
            },
        )
    }

    /// Whether the value is 0 for every value of the atoms.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.constant == 0
    }

    /// Whether the value is `<= 0` for every value of the atoms (which are
    /// never negative) because every coefficient and the constant are `<= 0`.
    fn is_never_positive(&self) -> bool {
        self.constant <= 0 && self.terms.iter().all(|&(_, c)| c <= 0)
    }

    /// The same sum without `atom`'s term.
    fn without(&self, atom: Atom) -> Sym {
        Sym {
            terms: self
                .terms
                .iter()
                .copied()
                .filter(|&(a, _)| a != atom)
                .collect(),
            constant: self.constant,
        }
    }

    /// Canonical text, `n - n/2 + 1`.
    pub fn display<'a>(&'a self, atoms: &'a Atoms) -> impl fmt::Display + 'a {
        DisplaySym { sym: self, atoms }
    }
}

struct DisplaySym<'a> {
    sym: &'a Sym,
    atoms: &'a Atoms,
}

impl fmt::Display for DisplaySym<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for &(atom, coefficient) in &self.sym.terms {
            let name = self.atoms.name(atom);
            match (first, coefficient < 0) {
                (true, true) => write!(f, "-")?,
                (false, true) => write!(f, " - ")?,
                (false, false) => write!(f, " + ")?,
                (true, false) => {}
            }
            match coefficient.unsigned_abs() {
                1 => write!(f, "{name}")?,
                magnitude => write!(f, "{magnitude}*{name}")?,
            }
            first = false;
        }
        let constant = self.sym.constant;
        match (first, constant) {
            (true, _) => write!(f, "{constant}"),
            (false, 0) => Ok(()),
            (false, _) if constant < 0 => write!(f, " - {}", constant.unsigned_abs()),
            (false, _) => write!(f, " + {constant}"),
        }
    }
}

/// Why an expression is not one the arithmetic understands.
pub const UNSUPPORTED: &str = "a length or range bound memplan cannot compare at compile time\n\n\
     help: lengths and ranges are written with integers, `usize` plan \
     parameters and constants, `+ - * / %`, parentheses and `as usize`";

const TOO_LARGE: &str = "a length or range bound beyond what `usize` holds\n\n\
     help: lengths and ranges are `usize`";

/// Reads `expr` as a symbolic integer; `Err` with the offending part.
pub fn from_expr(expr: &Expr, atoms: &mut Atoms) -> Result<Sym, syn::Error> {
    let unsupported = |part: &dyn quote::ToTokens| syn::Error::new_spanned(part, UNSUPPORTED);
    let too_large = || syn::Error::new_spanned(expr, TOO_LARGE);
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) => int
                .base10_parse::<u64>()
                .map(|value| Sym::constant(value.into()))
                .map_err(|_| syn::Error::new_spanned(int, TOO_LARGE)),
            _ => Err(unsupported(expr)),
        },
        Expr::Path(path) if path.qself.is_none() => {
            let name = crate::text::text(&path.path);
            if let Some(why) = atoms.forbidden.get(&name) {
                return Err(syn::Error::new_spanned(
                    path,
                    format!("{why}\n\nhelp: lengths and ranges use `usize` parameters"),
                ));
            }
            Ok(Sym::atom(atoms.intern(&name)))
        }
        Expr::Paren(inner) => from_expr(&inner.expr, atoms),
        Expr::Group(inner) => from_expr(&inner.expr, atoms),
        // `as usize` of the plan's own sizes changes nothing.
        Expr::Cast(cast) if is_usize(&cast.ty) && is_pure(&cast.expr, atoms) => {
            from_expr(&cast.expr, atoms)
        }
        // Of anything else (a constant of another type, maybe signed) it may
        // change the value: a term of its own, equal only to itself.
        Expr::Cast(cast) if is_usize(&cast.ty) => {
            let name = format!("({}) as usize", crate::text::text(&cast.expr));
            Ok(Sym::atom(atoms.intern(&name)))
        }
        // Other casts truncate or change sign, which the arithmetic does not model.
        Expr::Binary(binary) => {
            let left = from_expr(&binary.left, atoms)?;
            let right = from_expr(&binary.right, atoms)?;
            let zero_divisor = || {
                syn::Error::new_spanned(
                    &binary.right,
                    "division by zero\n\nhelp: divide by a non-zero constant",
                )
            };
            match binary.op {
                BinOp::Add(_) => left.add(&right).ok_or_else(too_large),
                BinOp::Sub(_) => left.sub(&right).ok_or_else(too_large),
                BinOp::Mul(_) => match (left.as_constant(), right.as_constant()) {
                    (Some(factor), _) => right.scale(factor).ok_or_else(too_large),
                    (_, Some(factor)) => left.scale(factor).ok_or_else(too_large),
                    _ => Ok(opaque(&left, "*", &right, AtomDef::Opaque, atoms)),
                },
                BinOp::Div(_) => Ok(match (left.as_constant(), right.as_constant()) {
                    (_, Some(0)) => return Err(zero_divisor()),
                    (Some(value), Some(divisor)) if value >= 0 && divisor > 0 => {
                        Sym::constant(value / divisor)
                    }
                    (_, Some(divisor)) if divisor > 0 => {
                        left.divide_exactly(divisor).unwrap_or_else(|| {
                            let def = AtomDef::Quotient {
                                numerator: left.clone(),
                                divisor,
                            };
                            opaque(&left, "/", &right, def, atoms)
                        })
                    }
                    _ => opaque(&left, "/", &right, AtomDef::Opaque, atoms),
                }),
                BinOp::Rem(_) => Ok(match (left.as_constant(), right.as_constant()) {
                    (_, Some(0)) => return Err(zero_divisor()),
                    (Some(value), Some(divisor)) if value >= 0 && divisor > 0 => {
                        Sym::constant(value % divisor)
                    }
                    (_, Some(divisor)) if divisor > 0 => {
                        opaque(&left, "%", &right, AtomDef::Remainder { divisor }, atoms)
                    }
                    _ => opaque(&left, "%", &right, AtomDef::Opaque, atoms),
                }),
                _ => Err(unsupported(expr)),
            }
        }
        _ => Err(unsupported(expr)),
    }
}

/// Whether `expr` is built from integers and the plan's `usize`
/// parameters only, so that it is a `usize` computed as the arithmetic
/// models it.
pub fn is_pure(expr: &Expr, atoms: &Atoms) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
        Expr::Path(path) => path.qself.is_none() && atoms.is_size(&crate::text::text(&path.path)),
        Expr::Paren(inner) => is_pure(&inner.expr, atoms),
        Expr::Group(inner) => is_pure(&inner.expr, atoms),
        Expr::Cast(cast) => is_usize(&cast.ty) && is_pure(&cast.expr, atoms),
        Expr::Binary(binary) => {
            matches!(
                binary.op,
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
            ) && is_pure(&binary.left, atoms)
                && is_pure(&binary.right, atoms)
        }
        _ => false,
    }
}

pub fn is_usize(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident("usize"))
}

/// An atom for a term the arithmetic does not look into, named by the
/// text of its parts, each parenthesized unless it is a single name or
/// number: `n/2*m` is `(n/2)*m`, and `n/(2*m)` another atom.
fn opaque(left: &Sym, op: &str, right: &Sym, def: AtomDef, atoms: &mut Atoms) -> Sym {
    let text = |sym: &Sym, atoms: &Atoms| {
        let simple = match (sym.as_atom(), sym.as_constant()) {
            (Some(atom), _) => {
                matches!(atoms.defs[atom.0 as usize], AtomDef::Opaque)
                    && !atoms.name(atom).contains(['*', '/', '%'])
            }
            (None, Some(constant)) => constant >= 0,
            (None, None) => false,
        };
        let text = sym.display(atoms).to_string();
        if simple { text } else { format!("({text})") }
    };
    let name = format!("{}{op}{}", text(left, atoms), text(right, atoms));
    Sym::atom(atoms.intern_defined(&name, def))
}

/// A half-open range `start..end` of a buffer, symbolically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymRange {
    pub start: Sym,
    pub end: Sym,
}

impl SymRange {
    /// `end - start`, if within the limit.
    pub fn len(&self) -> Option<Sym> {
        self.end.sub(&self.start)
    }

    pub fn display<'a>(&'a self, atoms: &'a Atoms) -> impl fmt::Display + 'a {
        DisplayRange { range: self, atoms }
    }
}

struct DisplayRange<'a> {
    range: &'a SymRange,
    atoms: &'a Atoms,
}

impl fmt::Display for DisplayRange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}..{}",
            self.range.start.display(self.atoms),
            self.range.end.display(self.atoms)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(text: &str, atoms: &mut Atoms) -> Sym {
        from_expr(&syn::parse_str(text).unwrap(), atoms).unwrap()
    }

    fn refused(text: &str, atoms: &mut Atoms) -> bool {
        from_expr(&syn::parse_str(text).unwrap(), atoms).is_err()
    }

    #[test]
    fn linear_arithmetic_cancels() {
        let mut atoms = Atoms::default();
        assert_eq!(sym("2 * n - n", &mut atoms), sym("n", &mut atoms));
        assert_eq!(sym("(n + 4) - 4", &mut atoms), sym("n", &mut atoms));
        assert_eq!(sym("(4 * n + 8) / 4", &mut atoms), sym("n + 2", &mut atoms));
        assert_eq!(sym("7 % 4", &mut atoms), Sym::constant(3));
        assert_eq!(sym("7 / 2", &mut atoms), Sym::constant(3));
        assert!(sym("n - n", &mut atoms).is_zero());
    }

    #[test]
    fn halves_are_opaque_but_consistent() {
        let mut atoms = Atoms::default();
        assert_eq!(sym("n / 2", &mut atoms), sym("(n) / 2", &mut atoms));
        assert_ne!(sym("n / 2 + n / 2", &mut atoms), sym("n", &mut atoms));
        let rest = sym("n - n / 2", &mut atoms);
        assert_eq!(rest.display(&atoms).to_string(), "n - n/2");
    }

    #[test]
    fn different_terms_never_share_an_atom() {
        let mut atoms = Atoms::default();
        for (a, b) in [
            ("(n / 2) * m", "n / (2 * m)"),
            ("(n % 2) * m", "n % (2 * m)"),
            ("(n * m) / 2", "n * (m / 2)"),
            ("(n / m) / 3", "n / (m / 3)"),
        ] {
            assert_ne!(sym(a, &mut atoms), sym(b, &mut atoms), "{a} and {b}");
        }
    }

    #[test]
    fn orders_what_it_can_prove() {
        let mut atoms = Atoms::default();
        let (zero, half, n) = (
            sym("0", &mut atoms),
            sym("n / 2", &mut atoms),
            sym("n", &mut atoms),
        );
        assert!(atoms.provably_le(&zero, &half));
        assert!(atoms.provably_le(&half, &half));
        assert!(!atoms.provably_le(&half, &zero));
        assert!(atoms.provably_le(&half, &n), "n/2 <= n");
        assert!(!atoms.provably_le(&n, &half));
        let twice_half = sym("2 * (n / 2)", &mut atoms);
        assert!(atoms.provably_le(&twice_half, &n));
        assert!(
            atoms.provably_le(&n, &twice_half.add(&Sym::constant(1)).unwrap()),
            "n <= 2*(n/2) + 1"
        );
        let rest = sym("n % 4", &mut atoms);
        assert!(atoms.provably_le(&rest, &Sym::constant(3)));
    }

    #[test]
    fn ranges_overlap_unless_provably_apart() {
        let mut atoms = Atoms::default();
        let range = |start: &str, end: &str, atoms: &mut Atoms| SymRange {
            start: sym(start, atoms),
            end: sym(end, atoms),
        };
        let first = range("0", "n / 2", &mut atoms);
        let second = range("n / 2", "n", &mut atoms);
        let all = range("0", "n", &mut atoms);
        assert!(!atoms.may_overlap(&first, &second));
        assert!(atoms.may_overlap(&first, &all));
        assert!(atoms.contains(&all, &first) && atoms.contains(&all, &second));
        let empty = range("3", "3", &mut atoms);
        assert!(!atoms.may_overlap(&empty, &all));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let mut atoms = Atoms::default();
        atoms.forbid("shift", "`shift` is an `isize` parameter".into());
        for text in [
            "x.len()",
            "-n",
            "1.5",
            "f(n)",
            "n as u8",
            "n as isize",
            "shift",
            "n / 0",
        ] {
            assert!(refused(text, &mut atoms), "{text}");
        }
        assert!(!refused("n as usize", &mut atoms));
    }

    #[test]
    fn as_usize_is_the_identity_only_for_the_plans_sizes() {
        let mut atoms = Atoms::default();
        atoms.intern_size("n");
        assert_eq!(
            sym("(n - 1) as usize", &mut atoms),
            sym("n - 1", &mut atoms)
        );
        // `K` may be an `i64` constant: `(K - 1) as usize` is not `K - 1`.
        let cast = sym("(K - 1) as usize", &mut atoms);
        assert_ne!(cast, sym("K - 1", &mut atoms));
        assert_eq!(
            cast,
            sym("(K - 1) as usize", &mut atoms),
            "but equal to itself"
        );
        assert_ne!(sym("K as usize", &mut atoms), sym("K", &mut atoms));
    }

    #[test]
    fn refuses_numbers_beyond_usize_and_never_overflows() {
        let mut atoms = Atoms::default();
        assert!(refused(
            "n * 18446744073709551615 * 18446744073709551615",
            &mut atoms
        ));
        assert!(refused(
            "(0 - n * 18446744073709551615 * 18446744073709551615 - n) / 3",
            &mut atoms
        ));
        let big = sym("18446744073709551615 * n", &mut atoms);
        let other = sym("0 - 18446744073709551615 * n", &mut atoms);
        // The difference is beyond the limit: not provable, and no panic.
        assert!(!atoms.provably_le(&big, &other));
        assert!(!big.display(&atoms).to_string().is_empty());
    }
}
