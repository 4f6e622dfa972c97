//! Counterexamples found by trying sizes: when one plain assignment of
//! values meets every fact and every goal, nothing can prove the goals
//! impossible, and the exact decision is not needed.
//!
//! A witness sets every atom that is not a quotient to a value (the same
//! for all, or one spread by the atom's number, so that `n` and `m`
//! differ) and computes the quotients from them. That assignment is one the exact
//! decision ([`super::prove`]) also admits, so looking for it first never
//! changes an answer, only how soon a possible overlap is known.

use super::atoms::{AtomDef, Atoms};
use super::poly::Atom;
use super::poly::Sym;
use std::collections::HashMap;

/// The assignments tried, `(base, step)`: atom number `i` is `base + i ·
/// step`. Small values, where ranges of plans usually meet, larger ones,
/// where products outgrow sums, and spread ones.
const ASSIGNMENTS: [(i128, i128); 12] = [
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (7, 0),
    (16, 0),
    (64, 0),
    (1000, 0),
    (1, 1),
    (2, 3),
    (5, 7),
    (100, 37),
];

impl Atoms {
    /// Whether some tried assignment makes every polynomial of `rows`
    /// `<= 0`.
    pub(super) fn has_witness(&self, rows: &[&Sym]) -> bool {
        ASSIGNMENTS.iter().any(|&assignment| {
            let mut values = HashMap::new();
            rows.iter().all(|row| {
                self.evaluate(row, assignment, &mut values)
                    .is_some_and(|v| v <= 0)
            })
        })
    }

    /// `sym` under `assignment`; `None` where a quotient divides by zero
    /// or a negative amount, or a number grows past `i128`.
    fn evaluate(
        &self,
        sym: &Sym,
        assignment: (i128, i128),
        values: &mut HashMap<Atom, Option<i128>>,
    ) -> Option<i128> {
        let mut total = sym.constant_term();
        for (monomial, coefficient) in sym.terms() {
            let mut product = *coefficient;
            for &atom in monomial.atoms() {
                product = product.checked_mul(self.atom_value(atom, assignment, values)?)?;
            }
            total = total.checked_add(product)?;
        }
        Some(total)
    }

    fn atom_value(
        &self,
        atom: Atom,
        assignment: (i128, i128),
        values: &mut HashMap<Atom, Option<i128>>,
    ) -> Option<i128> {
        if let Some(known) = values.get(&atom) {
            return *known;
        }
        let computed = match self.def(atom) {
            AtomDef::Opaque => {
                let (base, step) = assignment;
                step.checked_mul(i128::from(atom.number()))
                    .and_then(|spread| spread.checked_add(base))
            }
            AtomDef::Quotient { numerator, divisor } => {
                let (n, d) = (
                    self.evaluate(numerator, assignment, values)?,
                    self.evaluate(divisor, assignment, values)?,
                );
                (n >= 0 && d > 0).then(|| n / d)
            }
            AtomDef::Min { a, b } => Some(
                self.evaluate(a, assignment, values)?
                    .min(self.evaluate(b, assignment, values)?),
            ),
        };
        values.insert(atom, computed);
        computed
    }
}
