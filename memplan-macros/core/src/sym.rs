//! Symbolic integers: buffer lengths and range bounds as written
//! (`n`, `n / 2`, `2 * n + 1`), compared without knowing `n`.
//!
//! A [`Sym`] is a linear combination of atoms with integer coefficients,
//! plus a constant. An atom is a quantity that is never negative: a `usize`
//! parameter or constant (`n`, `CHUNK`), or a term the arithmetic cannot
//! look into (`n / 2`, `n * m`), named by its canonical text. So `n/2 + n/2`
//! and `n` are different (they are, for odd `n`), while `2*n - n` and `n`
//! are the same.

use std::collections::HashMap;
use std::fmt;
use syn::{BinOp, Expr, Lit, UnOp};

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

/// The atoms of one plan, by name, and what each is known to be.
#[derive(Default, Debug)]
pub struct Atoms {
    names: Vec<String>,
    defs: Vec<AtomDef>,
    index: HashMap<String, Atom>,
}

impl Atoms {
    /// The atom for a parameter or constant called `name`.
    pub fn intern(&mut self, name: &str) -> Atom {
        self.intern_defined(name, AtomDef::Opaque)
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
        self.never_positive(&left.sub(right), 3)
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
            let bounded = match (&self.defs[atom.0 as usize], coefficient > 0) {
                // c*q <= x: replace k*q by k*x, everything scaled by c.
                (AtomDef::Quotient { numerator, divisor }, true) => value
                    .without(atom)
                    .scale(*divisor)
                    .add(&numerator.scale(coefficient)),
                // c*q >= x - (c - 1): replace -k*q by -k*(x - c + 1), scaled by c.
                (AtomDef::Quotient { numerator, divisor }, false) => {
                    value.without(atom).scale(*divisor).add(
                        &numerator
                            .sub(&Sym::constant(divisor - 1))
                            .scale(coefficient),
                    )
                }
                // r <= c - 1.
                (AtomDef::Remainder { divisor }, true) => value
                    .without(atom)
                    .add(&Sym::constant(coefficient.saturating_mul(divisor - 1))),
                _ => return false,
            };
            self.never_positive(&bounded, depth - 1)
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

/// `constant + Σ coefficient · atom`, terms sorted by atom, none zero.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sym {
    terms: Vec<(Atom, i128)>,
    constant: i128,
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

    pub fn add(&self, other: &Sym) -> Sym {
        self.combine(other, 1)
    }

    pub fn sub(&self, other: &Sym) -> Sym {
        self.combine(other, -1)
    }

    /// `self + sign · other`, merging the sorted term lists.
    fn combine(&self, other: &Sym, sign: i128) -> Sym {
        let mut terms = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            let left = self.terms.get(i);
            let right = other
                .terms
                .get(j)
                .map(|&(a, c)| (a, c.saturating_mul(sign)));
            match (left, right) {
                (Some(&(a, c)), Some((b, _))) if a < b => {
                    terms.push((a, c));
                    i += 1;
                }
                (Some(&(a, c)), Some((b, d))) if a == b => {
                    let sum = c.saturating_add(d);
                    if sum != 0 {
                        terms.push((a, sum));
                    }
                    i += 1;
                    j += 1;
                }
                (_, Some(term)) => {
                    terms.push(term);
                    j += 1;
                }
                (Some(&term), None) => {
                    terms.push(term);
                    i += 1;
                }
                (None, None) => unreachable!("the loop condition"),
            }
        }
        Sym {
            terms,
            constant: self
                .constant
                .saturating_add(other.constant.saturating_mul(sign)),
        }
    }

    fn scale(&self, factor: i128) -> Sym {
        if factor == 0 {
            return Sym::constant(0);
        }
        Sym {
            terms: self
                .terms
                .iter()
                .map(|&(a, c)| (a, c.saturating_mul(factor)))
                .collect(),
            constant: self.constant.saturating_mul(factor),
        }
    }

    /// Exact division by a positive constant, when every part divides evenly.
    fn divide_exactly(&self, divisor: i128) -> Option<Sym> {
        if divisor <= 0 {
            return None;
        }
        let divides = |value: i128| value % divisor == 0;
        (divides(self.constant) && self.terms.iter().all(|&(_, c)| divides(c))).then(|| Sym {
            terms: self.terms.iter().map(|&(a, c)| (a, c / divisor)).collect(),
            constant: self.constant / divisor,
        })
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
            let magnitude = coefficient.abs();
            match (first, coefficient < 0) {
                (true, true) => write!(f, "-")?,
                (false, true) => write!(f, " - ")?,
                (false, false) => write!(f, " + ")?,
                (true, false) => {}
            }
            if magnitude == 1 {
                write!(f, "{name}")?
            } else {
                write!(f, "{magnitude}*{name}")?
            }
            first = false;
        }
        match (first, self.sym.constant) {
            (true, constant) => write!(f, "{constant}"),
            (false, 0) => Ok(()),
            (false, constant) if constant < 0 => write!(f, " - {}", -constant),
            (false, constant) => write!(f, " + {constant}"),
        }
    }
}

/// Why an expression is not one the arithmetic understands.
pub const UNSUPPORTED: &str = "a length or range bound memplan cannot compare at compile time\n\n\
     help: lengths and ranges are written with integers, `usize` plan \
     parameters, constants, `+ - * / %` and parentheses";

/// Reads `expr` as a symbolic integer; `Err` with the offending part.
pub fn from_expr(expr: &Expr, atoms: &mut Atoms) -> Result<Sym, syn::Error> {
    let unsupported = |part: &dyn quote::ToTokens| syn::Error::new_spanned(part, UNSUPPORTED);
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) => int
                .base10_parse::<u64>()
                .map(|value| Sym::constant(value.into()))
                .map_err(|_| {
                    syn::Error::new_spanned(int, "integer too large\n\nhelp: lengths are `usize`")
                }),
            _ => Err(unsupported(expr)),
        },
        Expr::Path(path) if path.qself.is_none() => {
            let name = path_text(&path.path);
            Ok(Sym::atom(atoms.intern(&name)))
        }
        Expr::Paren(inner) => from_expr(&inner.expr, atoms),
        Expr::Group(inner) => from_expr(&inner.expr, atoms),
        Expr::Cast(cast) => from_expr(&cast.expr, atoms),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => Err(unsupported(expr)),
        Expr::Binary(binary) => {
            let left = from_expr(&binary.left, atoms)?;
            let right = from_expr(&binary.right, atoms)?;
            match binary.op {
                BinOp::Add(_) => Ok(left.add(&right)),
                BinOp::Sub(_) => Ok(left.sub(&right)),
                BinOp::Mul(_) => Ok(match (left.as_constant(), right.as_constant()) {
                    (Some(factor), _) => right.scale(factor),
                    (_, Some(factor)) => left.scale(factor),
                    _ => opaque(&left, "*", &right, AtomDef::Opaque, atoms),
                }),
                BinOp::Div(_) => Ok(match right.as_constant() {
                    Some(0) => {
                        return Err(syn::Error::new_spanned(
                            &binary.right,
                            "division by zero\n\nhelp: divide by a non-zero constant",
                        ));
                    }
                    Some(divisor) if divisor > 0 => {
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
                BinOp::Rem(_) => Ok(match right.as_constant() {
                    Some(0) => {
                        return Err(syn::Error::new_spanned(
                            &binary.right,
                            "division by zero\n\nhelp: divide by a non-zero constant",
                        ));
                    }
                    Some(divisor) if divisor > 0 => {
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

/// An atom for a term the arithmetic does not look into, named by the
/// canonical text of its parts (so `n/2` and `(n) / 2` are one atom).
fn opaque(left: &Sym, op: &str, right: &Sym, def: AtomDef, atoms: &mut Atoms) -> Sym {
    let text = |sym: &Sym, atoms: &Atoms| {
        let text = sym.display(atoms).to_string();
        if sym.terms.len() + usize::from(sym.constant != 0) > 1 {
            format!("({text})")
        } else {
            text
        }
    };
    let name = format!("{}{op}{}", text(left, atoms), text(right, atoms));
    Sym::atom(atoms.intern_defined(&name, def))
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// A half-open range `start..end` of a buffer, symbolically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymRange {
    pub start: Sym,
    pub end: Sym,
}

impl SymRange {
    pub fn len(&self) -> Sym {
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

    #[test]
    fn linear_arithmetic_cancels() {
        let mut atoms = Atoms::default();
        assert_eq!(sym("2 * n - n", &mut atoms), sym("n", &mut atoms));
        assert_eq!(sym("(n + 4) - 4", &mut atoms), sym("n", &mut atoms));
        assert_eq!(sym("(4 * n + 8) / 4", &mut atoms), sym("n + 2", &mut atoms));
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
            atoms.provably_le(&n, &twice_half.add(&Sym::constant(1))),
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
        for text in ["x.len()", "-n", "1.5", "f(n)"] {
            assert!(
                from_expr(&syn::parse_str(text).unwrap(), &mut atoms).is_err(),
                "{text}"
            );
        }
    }
}
