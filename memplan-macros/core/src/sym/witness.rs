//! Counterexamples found by trying sizes: when one plain assignment of
//! values meets every fact and every goal, nothing can prove the goals
//! impossible, and the exact decision is not needed.
//!
//! A witness sets every atom that is not a quotient to one value and
//! computes the quotients from it. That assignment is one the exact
//! decision ([`super::prove`]) also admits, so looking for it first never
//! changes an answer, only how soon a possible overlap is known.

use super::atoms::{Atom, AtomDef, Atoms};
use super::poly::Sym;
use std::collections::HashMap;

/// The values tried for every atom at once: small ones, where ranges of
/// plans usually meet, and a few larger.
const VALUES: [i128; 6] = [1, 2, 3, 4, 7, 16];

impl Atoms {
    /// Whether some tried assignment makes every polynomial of `rows`
    /// `<= 0`.
    pub(super) fn has_witness(&self, rows: &[&Sym]) -> bool {
        VALUES.iter().any(|&value| {
            let mut values = HashMap::new();
            rows.iter().all(|row| {
                self.evaluate(row, value, &mut values)
                    .is_some_and(|v| v <= 0)
            })
        })
    }

    /// `sym` with every plain atom at `value`; `None` where a quotient
    /// divides by zero or a negative amount, or a number grows past `i128`.
    fn evaluate(
        &self,
        sym: &Sym,
        value: i128,
        values: &mut HashMap<Atom, Option<i128>>,
    ) -> Option<i128> {
        let mut total = sym.constant_term();
        for (monomial, coefficient) in sym.terms() {
            let mut product = *coefficient;
            for &atom in monomial.atoms() {
                product = product.checked_mul(self.atom_value(atom, value, values)?)?;
            }
            total = total.checked_add(product)?;
        }
        Some(total)
    }

    fn atom_value(
        &self,
        atom: Atom,
        value: i128,
        values: &mut HashMap<Atom, Option<i128>>,
    ) -> Option<i128> {
        if let Some(known) = values.get(&atom) {
            return *known;
        }
        let computed = match self.def(atom) {
            AtomDef::Opaque => Some(value),
            AtomDef::Quotient { numerator, divisor } => {
                let (n, d) = (
                    self.evaluate(numerator, value, values)?,
                    self.evaluate(divisor, value, values)?,
                );
                (n >= 0 && d > 0).then(|| n / d)
            }
        };
        values.insert(atom, computed);
        computed
    }
}
