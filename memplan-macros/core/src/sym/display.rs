//! Sizes as text, written the way a person writes Rust: `n - n / 2`,
//! `2 * (n / 4)`, `(n + 1) / 2`, `n / (2 * m)`, with the parentheses the
//! meaning needs and no others.

use super::atoms::Atoms;
use super::poly::Atom;
use super::poly::{Monomial, Sym, SymRange};
use std::fmt::{self, Write as _};

impl Sym {
    /// The value as text, `n - n / 2 + 1`.
    pub fn display<'a>(&'a self, atoms: &'a Atoms) -> impl fmt::Display + 'a {
        Shown(move |f: &mut fmt::Formatter<'_>| f.write_str(&text(self, atoms)))
    }
}

impl SymRange {
    /// `start..end`.
    pub fn display<'a>(&'a self, atoms: &'a Atoms) -> impl fmt::Display + 'a {
        Shown(move |f: &mut fmt::Formatter<'_>| {
            write!(
                f,
                "{}..{}",
                text(&self.start, atoms),
                text(&self.end, atoms)
            )
        })
    }
}

impl Atoms {
    /// The name of the atom `min(a, b)`.
    pub(crate) fn min_text(&self, a: &Sym, b: &Sym) -> String {
        format!("min({}, {})", text(a, self), text(b, self))
    }

    /// The name of the quotient atom `⌊numerator / divisor⌋`.
    pub(crate) fn quotient_text(&self, numerator: &Sym, divisor: &Sym) -> String {
        format!(
            "{} / {}",
            operand(&text(numerator, self)),
            operand(&text(divisor, self))
        )
    }
}

struct Shown<F>(F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for Shown<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

fn text(sym: &Sym, atoms: &Atoms) -> String {
    let mut out = String::new();
    for (monomial, coefficient) in sym.terms() {
        match (out.is_empty(), *coefficient < 0) {
            (true, true) => out.push('-'),
            (false, true) => out.push_str(" - "),
            (false, false) => out.push_str(" + "),
            (true, false) => {}
        }
        let magnitude = coefficient.unsigned_abs();
        let product = magnitude != 1 || monomial.atoms().len() > 1;
        if magnitude != 1 {
            let _ = write!(out, "{magnitude} * ");
        }
        out.push_str(&product_text(monomial, product, atoms));
    }
    let constant = sym.constant_term();
    match (out.is_empty(), constant) {
        (true, _) => constant.to_string(),
        (false, 0) => out,
        (false, c) if c < 0 => format!("{out} - {}", c.unsigned_abs()),
        (false, c) => format!("{out} + {c}"),
    }
}

/// `c * w * h`; in a product, each atom whose text has operators is
/// parenthesized: `2 * (n / 4)`.
fn product_text(monomial: &Monomial, product: bool, atoms: &Atoms) -> String {
    let parts: Vec<String> = monomial
        .atoms()
        .iter()
        .map(|&atom: &Atom| {
            let name = atoms.name(atom);
            if product {
                operand(name)
            } else {
                name.to_owned()
            }
        })
        .collect();
    parts.join(" * ")
}

/// `text`, parenthesized if an operator in it is not already inside
/// parentheses or brackets.
fn operand(text: &str) -> String {
    let mut depth = 0i32;
    let mut bare_operator = false;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ' ' if depth == 0 => bare_operator = true,
            _ => {}
        }
    }
    if bare_operator {
        format!("({text})")
    } else {
        text.to_owned()
    }
}
