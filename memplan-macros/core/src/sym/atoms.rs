//! The atoms of one plan: each a quantity that is never negative, named by
//! its text, so that one term is one atom however it is written and two
//! different terms never share one.

use super::poly::{Atom, Sym};
use std::collections::HashMap;

/// What an atom stands for, as far as the arithmetic knows.
#[derive(Clone, Debug)]
pub(crate) enum AtomDef {
    /// A parameter, a constant, or a term not looked into: only known to
    /// be `>= 0`.
    Opaque,
    /// `⌊numerator / divisor⌋`, with `divisor >= 1` (a division by zero
    /// stops the plan at `new`): `divisor · q <= numerator <= divisor · q +
    /// divisor - 1`.
    Quotient { numerator: Sym, divisor: Sym },
    /// `min(a, b)`: at most each, and equal to one of them, which a proof
    /// finds by trying both.
    Min { a: Sym, b: Sym },
}

/// The atoms of one plan, by name, and what each is known to be.
#[derive(Clone, Default, Debug)]
pub struct Atoms {
    names: Vec<String>,
    defs: Vec<AtomDef>,
    index: HashMap<String, Atom>,
    /// Names that may not appear in sizes, and why.
    forbidden: HashMap<String, String>,
    /// The plan's `usize` parameters (other names are constants, whose
    /// types the macro does not know).
    sizes: Vec<String>,
    /// The caller's slices, with their declared lengths (`None`: measured
    /// at each run, the atom `name.len()`).
    slices: HashMap<String, Option<Sym>>,
    /// The variable of the loop being read, which terms `new` computes
    /// once may not read.
    loop_var: Option<String>,
    /// While a loop's body is read a second time, for a later iteration:
    /// its variable, and the name of the later iteration's.
    rename: Option<(String, String)>,
    /// What the plan states of its sizes and the run time checks where
    /// each value is given (`run len: usize <= cap` is `len - cap <= 0`):
    /// a fact of every proof.
    assumed: Vec<Sym>,
}

impl Atoms {
    /// The atom for a parameter, constant or opaque term called `name`.
    pub fn intern(&mut self, name: &str) -> Atom {
        self.intern_defined(name, AtomDef::Opaque)
    }

    /// The atom of `usize` plan parameter `name`.
    pub fn intern_size(&mut self, name: &str) -> Atom {
        self.sizes.push(name.to_owned());
        self.intern(name)
    }

    /// Takes `fact <= 0` as true in every proof: only for what the run time
    /// checks before anything reads the sizes it bounds.
    pub fn assume(&mut self, fact: Sym) {
        self.assumed.push(fact);
    }

    /// What [`assume`](Self::assume) was given.
    pub(crate) fn assumed(&self) -> &[Sym] {
        &self.assumed
    }

    /// Reads what follows inside loop `var`'s body (`None`: outside).
    pub fn set_loop(&mut self, var: Option<&str>) {
        if let Some(var) = var
            && !self.is_size(var)
        {
            self.sizes.push(var.to_owned());
        }
        self.loop_var = var.map(str::to_owned);
    }

    pub(crate) fn loop_var(&self) -> Option<&str> {
        self.loop_var.as_deref()
    }

    /// Reads the loop's variable `var` as `later` from now on (`None`:
    /// as itself again).
    pub fn set_rename(&mut self, rename: Option<(&str, &str)>) {
        self.rename = rename.map(|(var, later)| (var.to_owned(), later.to_owned()));
    }

    /// The atom's name for path `name`, as renamed.
    pub(crate) fn renamed(&self, name: String) -> String {
        match &self.rename {
            Some((var, later)) if *var == name => later.clone(),
            _ => name,
        }
    }

    /// Whether `name` is a `usize` plan parameter.
    pub fn is_size(&self, name: &str) -> bool {
        self.sizes.iter().any(|size| size == name)
    }

    /// Keeps `name` out of sizes (a value parameter that is not a `usize`),
    /// with the reason to give.
    pub fn forbid(&mut self, name: &str, why: String) {
        self.forbidden.insert(name.to_owned(), why);
    }

    pub(crate) fn forbidden(&self, name: &str) -> Option<&str> {
        self.forbidden.get(name).map(String::as_str)
    }

    /// Records caller slice `name`, of length `len` (`None`: measured).
    pub fn slice(&mut self, name: &str, len: Option<Sym>) {
        self.slices.insert(name.to_owned(), len);
    }

    /// The length of caller slice `name`: as declared, or its measured atom.
    pub fn slice_len(&mut self, name: &str) -> Option<Sym> {
        let declared = self.slices.get(name)?.clone();
        Some(declared.unwrap_or_else(|| Sym::atom(self.intern(&format!("{name}.len()")))))
    }

    pub(crate) fn is_slice(&self, name: &str) -> bool {
        self.slices.contains_key(name)
    }

    /// The quotient atom `⌊numerator / divisor⌋`, named by the normal forms
    /// of its parts, so that `(n) / 2` and `n / 2` are one atom.
    pub(crate) fn quotient(&mut self, numerator: Sym, divisor: Sym) -> Atom {
        let name = self.quotient_text(&numerator, &divisor);
        self.intern_defined(&name, AtomDef::Quotient { numerator, divisor })
    }

    /// The atom `min(a, b)`, named by the normal forms of its parts.
    pub(crate) fn min(&mut self, a: Sym, b: Sym) -> Atom {
        let name = self.min_text(&a, &b);
        self.intern_defined(&name, AtomDef::Min { a, b })
    }

    fn intern_defined(&mut self, name: &str, def: AtomDef) -> Atom {
        if let Some(&atom) = self.index.get(name) {
            return atom;
        }
        let atom = Atom::new(self.names.len() as u32);
        self.names.push(name.to_owned());
        self.defs.push(def);
        self.index.insert(name.to_owned(), atom);
        atom
    }

    /// Whether `sym` takes a different value for every value of variable
    /// `var`, the rest fixed: it is `a·var + rest`, with `a != 0` and
    /// nothing in `rest` reading `var` (not even inside a quotient).
    pub fn is_injective_in(&self, sym: &Sym, var: &str) -> bool {
        let Some(&var) = self.index.get(var) else {
            return false;
        };
        let mut linear = false;
        for (monomial, coefficient) in sym.terms() {
            match monomial.atoms() {
                [only] if *only == var => linear |= *coefficient != 0,
                atoms if atoms.iter().any(|&atom| self.reads(atom, var)) => return false,
                _ => {}
            }
        }
        linear
    }

    /// `N % D` as `(N, D)`, if `sym` is one: `N - D·⌊N / D⌋`.
    fn remainder(&self, sym: &Sym) -> Option<(&Sym, &Sym)> {
        sym.atoms().find_map(|atom| {
            let AtomDef::Quotient { numerator, divisor } = self.def(atom) else {
                return None;
            };
            let written = numerator.sub(&divisor.mul(&Sym::atom(atom))?)?;
            (written == *sym).then_some((numerator, divisor))
        })
    }

    /// Whether `other` is equal for two values wherever `same` is, both
    /// remainders of one numerator and `same`'s divisor a multiple of
    /// `other`'s: `c % (2 * s)` equal gives `c % s` equal.
    pub fn remainder_follows(&self, same: &Sym, other: &Sym) -> bool {
        match (self.remainder(same), self.remainder(other)) {
            (Some((n, d)), Some((other_n, other_d))) => n == other_n && is_multiple(d, other_d),
            _ => false,
        }
    }

    /// Whether `index`, a remainder `(var + a) % D`, differs for every two
    /// values of `var` below `count`, as it does where `count <= D` (two
    /// such values are less than `D` apart): `(i + 1) % g` over `0..g`.
    pub fn remainder_is_injective_below(
        &self,
        index: &Sym,
        var: &str,
        count: &Sym,
        facts: &[Sym],
    ) -> bool {
        let (Some((numerator, divisor)), Some(&atom)) =
            (self.remainder(index), self.index.get(var))
        else {
            return false;
        };
        let Some(rest) = numerator.sub(&Sym::atom(atom)) else {
            return false;
        };
        !self.reads_var(&rest, atom) && self.provably_le(count, divisor, &[facts])
    }

    /// Whether anything in `sym` reads variable `var`: is it, or a quotient
    /// or opaque term of it.
    pub fn reads_var(&self, sym: &Sym, var: Atom) -> bool {
        sym.atoms().any(|atom| self.reads(atom, var))
    }

    /// `sym` with `value` for variable `var`: `None` where an atom other
    /// than `var` itself reads it (a quotient or `min` of it, which would
    /// need atoms of their own), or beyond the arithmetic's limits.
    pub fn substitute(&self, sym: &Sym, var: Atom, value: &Sym) -> Option<Sym> {
        let mut result = Sym::constant(sym.constant_term());
        for (monomial, coefficient) in sym.terms() {
            let mut term = Sym::constant(*coefficient);
            for &atom in monomial.atoms() {
                let factor = if atom == var {
                    value.clone()
                } else if self.reads(atom, var) {
                    return None;
                } else {
                    Sym::atom(atom)
                };
                term = term.mul(&factor)?;
            }
            result = result.add(&term)?;
        }
        Some(result)
    }

    /// Whether `atom` is `var`, a quotient or `min` whose terms read it,
    /// or an opaque term whose text names it. Words are split
    /// only at ASCII punctuation and spaces, so that every character an
    /// identifier may hold (`c‿i`, `c′`) stays in its word, and a raw
    /// identifier is its name (`r#c` is `c`): a name the split cannot
    /// find would let a term of `c` pass for one fixed across iterations.
    fn reads(&self, atom: Atom, var: Atom) -> bool {
        let var_name = self.name(var);
        let var_name = var_name.strip_prefix("r#").unwrap_or(var_name);
        atom == var
            || match self.def(atom) {
                AtomDef::Opaque => self
                    .name(atom)
                    .split(|ch: char| ch.is_ascii() && !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .any(|word| word == var_name),
                AtomDef::Quotient {
                    numerator: first,
                    divisor: second,
                }
                | AtomDef::Min {
                    a: first,
                    b: second,
                } => [first, second]
                    .into_iter()
                    .flat_map(|sym| sym.atoms())
                    .any(|inner| self.reads(inner, var)),
            }
    }

    /// The atom called `name`, if the plan has one.
    pub fn named(&self, name: &str) -> Option<Atom> {
        self.index.get(name).copied()
    }

    /// The name of `atom`, as the plan writes it.
    pub fn name(&self, atom: Atom) -> &str {
        &self.names[atom.number() as usize]
    }

    pub(crate) fn def(&self, atom: Atom) -> &AtomDef {
        &self.defs[atom.number() as usize]
    }
}

/// Whether `value` is `of` times a whole number whatever the sizes: `of`
/// itself, a literal that divides every coefficient, or a monomial that
/// divides every term.
fn is_multiple(value: &Sym, of: &Sym) -> bool {
    if value == of {
        return true;
    }
    if let Some(k) = of.as_constant() {
        return k != 0 && value.content() % k == 0;
    }
    match of.terms() {
        [(monomial, k)] if of.constant_term() == 0 && *k != 0 => value
            .divide_by_monomial(monomial)
            .is_some_and(|quotient| quotient.content() % k == 0),
        _ => false,
    }
}
