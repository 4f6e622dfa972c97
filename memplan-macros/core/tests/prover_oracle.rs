//! The prover against a brute-force oracle: whatever it proves, with a
//! bound the plan states (`a <= b`, as `run a: usize <= b` says) and what
//! computing each side guarantees, holds for every assignment of the sizes
//! that meets them.
//!
//! Each case compares two random size expressions over `a`, `b` and `m`,
//! sums, differences, products, `min` and quotients (by `m` or a literal),
//! often both divided by `m`, where the thorough proof orders quotients by
//! their numerators. The oracle evaluates them with plain `usize`
//! arithmetic over every assignment of `0..=SMALL` (`a <= b`), skipping one
//! where a step wraps or divides by zero, as the run time refuses those
//! before anything reads them. It shares no code with the prover.

use memplan_macros_core::sym::{Atoms, Sym, read};
use proptest::prelude::*;

const SMALL: usize = 9;
const NAMES: [&str; 3] = ["a", "b", "m"];

#[derive(Clone, Debug)]
enum Expr {
    Lit(usize),
    Size(usize),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
}

impl Expr {
    fn eval(&self, sizes: &[usize; 3]) -> Option<usize> {
        match self {
            Expr::Lit(value) => Some(*value),
            Expr::Size(index) => Some(sizes[*index]),
            Expr::Add(x, y) => x.eval(sizes)?.checked_add(y.eval(sizes)?),
            Expr::Sub(x, y) => x.eval(sizes)?.checked_sub(y.eval(sizes)?),
            Expr::Mul(x, y) => x.eval(sizes)?.checked_mul(y.eval(sizes)?),
            Expr::Div(x, y) => x.eval(sizes)?.checked_div(y.eval(sizes)?),
            Expr::Min(x, y) => Some(x.eval(sizes)?.min(y.eval(sizes)?)),
        }
    }

    /// Source text, every compound part in parentheses.
    fn text(&self) -> String {
        let (op, x, y) = match self {
            Expr::Lit(value) => return value.to_string(),
            Expr::Size(index) => return NAMES[*index].to_owned(),
            Expr::Min(x, y) => return format!("min({}, {})", x.text(), y.text()),
            Expr::Add(x, y) => ("+", x, y),
            Expr::Sub(x, y) => ("-", x, y),
            Expr::Mul(x, y) => ("*", x, y),
            Expr::Div(x, y) => ("/", x, y),
        };
        format!("({} {op} {})", x.text(), y.text())
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (0..3usize).prop_map(Expr::Size),
        (0..4usize).prop_map(Expr::Lit)
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let pair = || (inner.clone(), inner.clone());
        prop_oneof![
            pair().prop_map(|(x, y)| Expr::Add(Box::new(x), Box::new(y))),
            pair().prop_map(|(x, y)| Expr::Sub(Box::new(x), Box::new(y))),
            pair().prop_map(|(x, y)| Expr::Mul(Box::new(x), Box::new(y))),
            pair().prop_map(|(x, y)| Expr::Min(Box::new(x), Box::new(y))),
            inner
                .clone()
                .prop_map(|x| Expr::Div(Box::new(x), Box::new(Expr::Size(2)))),
            (inner, 2..4usize).prop_map(|(x, d)| Expr::Div(Box::new(x), Box::new(Expr::Lit(d)))),
        ]
    })
}

/// Both sides, often divided by `m`.
fn sides() -> impl Strategy<Value = (Expr, Expr)> {
    (expr(), expr(), any::<bool>()).prop_map(|(x, y, by_m)| {
        if by_m {
            let m = || Box::new(Expr::Size(2));
            (Expr::Div(Box::new(x), m()), Expr::Div(Box::new(y), m()))
        } else {
            (x, y)
        }
    })
}

/// Whether the prover proves `x <= y` given `a <= b`.
fn proves(x: &Expr, y: &Expr) -> bool {
    let mut atoms = Atoms::default();
    for name in NAMES {
        atoms.intern_size(name);
    }
    let size = |text: &str, atoms: &mut Atoms| read(&syn::parse_str(text).unwrap(), atoms).unwrap();
    let (a, b) = (size("a", &mut atoms).value, size("b", &mut atoms).value);
    atoms.assume(a.sub(&b).unwrap());
    let (x, y) = (size(&x.text(), &mut atoms), size(&y.text(), &mut atoms));
    let facts: [&[Sym]; 2] = [&x.facts, &y.facts];
    atoms.provably_le_thoroughly(&x.value, &y.value, &facts)
}

/// An assignment with `a <= b` where both sides compute and `x > y`.
fn counterexample(x: &Expr, y: &Expr) -> Option<[usize; 3]> {
    for a in 0..=SMALL {
        for b in a..=SMALL {
            for m in 0..=SMALL {
                let sizes = [a, b, m];
                if let (Some(x), Some(y)) = (x.eval(&sizes), y.eval(&sizes))
                    && x > y
                {
                    return Some(sizes);
                }
            }
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn what_is_proved_holds_for_every_size((x, y) in sides()) {
        if proves(&x, &y) {
            let found = counterexample(&x, &y);
            prop_assert!(
                found.is_none(),
                "proved {} <= {} given a <= b, but not at (a, b, m) = {:?}",
                x.text(),
                y.text(),
                found
            );
        }
    }
}

/// The family the bound and the quotients' order are for: exact.
#[test]
fn chunk_counts_follow_the_bound() {
    let (a, b, m) = (Expr::Size(0), Expr::Size(1), Expr::Size(2));
    let ceil = |n: &Expr| {
        let sum = Expr::Add(Box::new(n.clone()), Box::new(m.clone()));
        let numerator = Expr::Sub(Box::new(sum), Box::new(Expr::Lit(1)));
        Expr::Div(Box::new(numerator), Box::new(m.clone()))
    };
    assert!(proves(&a, &b));
    assert!(proves(&ceil(&a), &ceil(&b)));
    assert!(proves(
        &Expr::Div(Box::new(a.clone()), Box::new(m.clone())),
        &Expr::Div(Box::new(b.clone()), Box::new(m.clone()))
    ));
    // Not the other way, nor by another divisor.
    assert!(!proves(&ceil(&b), &ceil(&a)));
    assert!(!proves(
        &Expr::Div(Box::new(a.clone()), Box::new(Expr::Lit(2))),
        &Expr::Div(Box::new(b), Box::new(Expr::Lit(3)))
    ));
    assert!(counterexample(&ceil(&Expr::Size(1)), &ceil(&a)).is_some());
}

/// The family the case splits on `min` are for: exact. With `a` as a
/// chunk's number and `b` as the run's length, a chunk clamped at both
/// ends, `min(a * m, b)..min(a * m + m, b)`, is at most `m` long and never
/// ends before it starts; `min` follows its arguments.
#[test]
fn chunks_clamped_at_both_ends_fit_their_slot() {
    let text = |text: &str| {
        syn::parse_str::<syn::Expr>(text)
            .map(|e| from_syn(&e))
            .unwrap()
    };
    for (x, y, holds) in [
        ("min(a * m + m, b) - min(a * m, b)", "m", true),
        ("min(a * m, b)", "min(a * m + m, b)", true),
        ("a", "min(a, b)", true),
        ("min(b, m) - min(a, m)", "b - a", true),
        ("min(a * m + m, b) - min(a * m, b)", "m - 1", false),
        ("min(a * m + m, b)", "min(a * m, b)", false),
        ("min(b, m)", "min(a, m)", false),
    ] {
        let (x, y) = (text(x), text(y));
        assert_eq!(proves(&x, &y), holds, "{} <= {}", x.text(), y.text());
        assert_eq!(
            counterexample(&x, &y).is_none(),
            holds,
            "{} <= {}",
            x.text(),
            y.text()
        );
    }
}

/// The oracle's expression for source text of sums, differences,
/// products, quotients, `min`, literals and the three sizes.
fn from_syn(expr: &syn::Expr) -> Expr {
    let both = |x: &syn::Expr, y: &syn::Expr| (Box::new(from_syn(x)), Box::new(from_syn(y)));
    match expr {
        syn::Expr::Paren(inner) => from_syn(&inner.expr),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => Expr::Lit(int.base10_parse().unwrap()),
        syn::Expr::Path(path) => {
            let name = path.path.get_ident().unwrap().to_string();
            Expr::Size(NAMES.iter().position(|n| *n == name).unwrap())
        }
        syn::Expr::Call(call) => {
            let (x, y) = both(&call.args[0], &call.args[1]);
            Expr::Min(x, y)
        }
        syn::Expr::Binary(binary) => {
            let (x, y) = both(&binary.left, &binary.right);
            match binary.op {
                syn::BinOp::Add(_) => Expr::Add(x, y),
                syn::BinOp::Sub(_) => Expr::Sub(x, y),
                syn::BinOp::Mul(_) => Expr::Mul(x, y),
                syn::BinOp::Div(_) => Expr::Div(x, y),
                _ => unreachable!("the oracle's operators"),
            }
        }
        _ => unreachable!("the oracle's expressions"),
    }
}
