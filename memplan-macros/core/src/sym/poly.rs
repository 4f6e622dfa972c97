//! Polynomials over atoms with integer coefficients, in a normal form:
//! monomials sorted, like terms merged, no zero coefficients.

/// The largest magnitude a coefficient or constant may have: beyond it the
/// plan's `usize` arithmetic would overflow anyway.
const LIMIT: i128 = u64::MAX as i128 + 1;

/// The most terms a polynomial may have; past it, a product is kept as a
/// term of its own rather than expanded.
pub const MAX_TERMS: usize = 256;

/// An interned atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Atom(u32);

impl Atom {
    /// Atom number `index`; `Atoms` numbers them as it meets them.
    pub(crate) const fn new(index: u32) -> Atom {
        Atom(index)
    }

    /// The atom's number in its plan, in the order atoms were met.
    pub(crate) fn number(self) -> u32 {
        self.0
    }
}

/// A product of atoms, sorted, with repeats; the empty product is 1.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Monomial(Vec<Atom>);

impl Monomial {
    pub fn of(atom: Atom) -> Monomial {
        Monomial(vec![atom])
    }

    pub fn atoms(&self) -> &[Atom] {
        &self.0
    }

    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    fn times(&self, other: &Monomial) -> Monomial {
        let mut atoms = Vec::with_capacity(self.0.len() + other.0.len());
        atoms.extend_from_slice(&self.0);
        atoms.extend_from_slice(&other.0);
        atoms.sort_unstable();
        Monomial(atoms)
    }

    /// This monomial without one occurrence of each atom of `factor`, if it
    /// has them all.
    pub fn without(&self, factor: &[Atom]) -> Option<Monomial> {
        let mut rest = self.0.clone();
        for atom in factor {
            let at = rest.iter().position(|a| a == atom)?;
            rest.remove(at);
        }
        Some(Monomial(rest))
    }
}

/// `constant + Σ coefficient · monomial`: terms sorted by monomial, none
/// zero, none the empty monomial, every number within ±2^64.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sym {
    terms: Vec<(Monomial, i128)>,
    constant: i128,
}

/// `Some(value)` if it is within the limit.
fn bounded(value: i128) -> Option<i128> {
    (-LIMIT..=LIMIT).contains(&value).then_some(value)
}

impl Sym {
    /// The constant `value`.
    pub fn constant(value: i128) -> Sym {
        Sym {
            terms: Vec::new(),
            constant: value,
        }
    }

    /// The atom alone.
    pub fn atom(atom: Atom) -> Sym {
        Sym::monomial(Monomial::of(atom), 1)
    }

    /// `coefficient · monomial`.
    pub fn monomial(monomial: Monomial, coefficient: i128) -> Sym {
        if monomial.is_one() {
            return Sym::constant(coefficient);
        }
        Sym {
            terms: if coefficient == 0 {
                Vec::new()
            } else {
                vec![(monomial, coefficient)]
            },
            constant: 0,
        }
    }

    /// The terms other than the constant, each a monomial and its coefficient,
    /// in the normal form's order.
    pub fn terms(&self) -> &[(Monomial, i128)] {
        &self.terms
    }

    /// The constant term.
    pub fn constant_term(&self) -> i128 {
        self.constant
    }

    /// The value, if it is a constant.
    pub fn as_constant(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The atom, if the value is exactly one atom.
    pub fn as_atom(&self) -> Option<Atom> {
        match &self.terms[..] {
            [(monomial, 1)] if self.constant == 0 => match monomial.atoms() {
                [atom] => Some(*atom),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether it is 0.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.constant == 0
    }

    /// Every atom the value mentions.
    pub fn atoms(&self) -> impl Iterator<Item = Atom> + '_ {
        self.terms
            .iter()
            .flat_map(|(m, _)| m.atoms().iter().copied())
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
                (Some((a, c)), Some((b, d))) if a == b => {
                    let term = (a.clone(), bounded(c + sign * d)?);
                    mine.next();
                    theirs.next();
                    term
                }
                (Some((a, c)), Some((b, _))) if a < b => {
                    let term = (a.clone(), *c);
                    mine.next();
                    term
                }
                (_, Some((b, d))) => {
                    let term = (b.clone(), sign * d);
                    theirs.next();
                    term
                }
                (Some((a, c)), None) => {
                    let term = (a.clone(), *c);
                    mine.next();
                    term
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
    pub fn scale(&self, factor: i128) -> Option<Sym> {
        if factor == 0 {
            return Some(Sym::constant(0));
        }
        let scale = |value: i128| value.checked_mul(factor).and_then(bounded);
        Some(Sym {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| Some((m.clone(), scale(*c)?)))
                .collect::<Option<_>>()?,
            constant: scale(self.constant)?,
        })
    }

    /// `self · other`; `None` beyond the limit or past `MAX_TERMS` terms.
    pub fn mul(&self, other: &Sym) -> Option<Sym> {
        let mut product = self.scale(other.constant)?;
        for (monomial, coefficient) in &other.terms {
            let mut part = Sym {
                terms: Vec::with_capacity(self.terms.len()),
                constant: 0,
            };
            let mut terms: Vec<(Monomial, i128)> = self
                .terms
                .iter()
                .map(|(m, c)| Some((m.times(monomial), bounded(c.checked_mul(*coefficient)?)?)))
                .collect::<Option<_>>()?;
            if self.constant != 0 {
                terms.push((
                    monomial.clone(),
                    bounded(self.constant.checked_mul(*coefficient)?)?,
                ));
            }
            // Products of sorted monomials by one monomial stay distinct but
            // may reorder: sort, then merge through `add`.
            terms.sort();
            part.terms = terms;
            product = product.add(&part)?;
            if product.terms.len() > MAX_TERMS {
                return None;
            }
        }
        Some(product)
    }

    /// Exact division by a positive constant, when every part divides evenly.
    pub fn divide_exactly(&self, divisor: i128) -> Option<Sym> {
        let divides = |value: i128| value % divisor == 0;
        (divisor > 0 && divides(self.constant) && self.terms.iter().all(|(_, c)| divides(*c))).then(
            || Sym {
                terms: self
                    .terms
                    .iter()
                    .map(|(m, c)| (m.clone(), c / divisor))
                    .collect(),
                constant: self.constant / divisor,
            },
        )
    }

    /// `self` as `d·M·whole + rest`: `whole` from the terms that are
    /// multiples of `d·M`, `rest` the others; `None` beyond the limit.
    pub fn split_multiples(&self, factor: &Monomial, d: i128) -> Option<(Sym, Sym)> {
        let (mut whole, mut rest) = (Sym::constant(0), Sym::constant(0));
        for (monomial, coefficient) in &self.terms {
            let term = Sym::monomial(monomial.clone(), *coefficient);
            match monomial.without(factor.atoms()) {
                Some(quotient) if coefficient % d == 0 => {
                    whole = whole.add(&Sym::monomial(quotient, coefficient / d))?;
                }
                _ => rest = rest.add(&term)?,
            }
        }
        let constant = Sym::constant(self.constant);
        if factor.is_one() && self.constant % d == 0 {
            whole = whole.add(&Sym::constant(self.constant / d))?;
        } else {
            rest = rest.add(&constant)?;
        }
        Some((whole, rest))
    }

    /// Whether no coefficient and not the constant is negative, so that
    /// the value is never negative.
    pub fn has_no_negative_part(&self) -> bool {
        self.constant >= 0 && self.terms.iter().all(|(_, c)| *c >= 0)
    }

    /// Exact division by a monomial, when every term has it and there is
    /// no constant term.
    pub fn divide_by_monomial(&self, factor: &Monomial) -> Option<Sym> {
        if self.constant != 0 {
            return None;
        }
        let mut terms: Vec<(Monomial, i128)> = self
            .terms
            .iter()
            .map(|(m, c)| Some((m.without(factor.atoms())?, *c)))
            .collect::<Option<_>>()?;
        // Dividing each by one factor keeps them distinct; the one that
        // was the factor itself becomes the constant.
        terms.sort();
        let constant = match terms.first() {
            Some((m, c)) if m.is_one() => *c,
            _ => 0,
        };
        terms.retain(|(m, _)| !m.is_one());
        Some(Sym { terms, constant })
    }

    /// The greatest common divisor of every coefficient and the constant
    /// (0 for zero).
    pub fn content(&self) -> i128 {
        self.terms
            .iter()
            .map(|(_, c)| *c)
            .chain([self.constant])
            .fold(0, |g, c| gcd(g, c.abs()))
    }
}

pub fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A half-open range `start..end` of a buffer, symbolically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymRange {
    /// The first element.
    pub start: Sym,
    /// The element after the last.
    pub end: Sym,
}

impl SymRange {
    /// `end - start`, if within the limit.
    pub fn len(&self) -> Option<Sym> {
        self.end.sub(&self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(index: u32) -> Sym {
        Sym::atom(Atom::new(index))
    }

    #[test]
    fn products_are_commutative_and_associative() {
        let (c, w, h) = (atom(0), atom(1), atom(2));
        let two = Sym::constant(2);
        let left = two.mul(&c).unwrap().mul(&w).unwrap().mul(&h).unwrap();
        let right = c.mul(&two.mul(&w).unwrap()).unwrap().mul(&h).unwrap();
        assert_eq!(left, right);
        let sum = c.add(&w).unwrap();
        let square = sum.mul(&sum).unwrap();
        let expanded = c
            .mul(&c)
            .unwrap()
            .add(&c.mul(&w).unwrap().scale(2).unwrap())
            .unwrap()
            .add(&w.mul(&w).unwrap())
            .unwrap();
        assert_eq!(square, expanded, "(c + w)² = c² + 2cw + w²");
    }

    #[test]
    fn like_terms_cancel() {
        let (n, m) = (atom(0), atom(1));
        let nm = n.mul(&m).unwrap();
        assert!(nm.sub(&m.mul(&n).unwrap()).unwrap().is_zero());
        assert_eq!(n.scale(2).unwrap().sub(&n).unwrap(), n);
    }

    #[test]
    fn huge_products_are_refused_not_overflowed() {
        let big = atom(0).scale(1 << 62).unwrap();
        assert!(big.mul(&big).is_none());
        let mut wide = Sym::constant(0);
        for index in 0..30 {
            wide = wide.add(&atom(index)).unwrap();
        }
        assert!(wide.mul(&wide).is_none(), "465 terms are past the limit");
    }
}
