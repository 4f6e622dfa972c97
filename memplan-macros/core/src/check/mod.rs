//! The compile-time checks. Each rule is a `check_*` function over the
//! plan's [`Facts`] that pushes spanned errors, in a file of its family;
//! [`rules::RULES`] lists every rule (its name, what it refuses and why,
//! the words of its errors, a compile-fail case), and [`run`] runs them
//! all, so a plan's every mistake is reported at once. The language
//! reference's table of checks is written from the same list (a test
//! holds them equal).
//!
//! The rules of `Enforced::Formation` run first, on the IR as written (an
//! op on the lane its block gives it): every other check takes for granted
//! what they refuse, so runs only where they found nothing. Undeclared and
//! twice-declared names are refused earlier, by `ir::build` (rules of
//! `Enforced::Building`), since without them there is no IR to check;
//! expressions `new` computes once that read what changes, later, by the
//! lowering, which alone knows which expressions those are
//! (`Enforced::Lowering`).

mod bounds;
mod collectives;
mod copies;
mod fixed_at_new;
mod formation;
mod gpu_placement;
mod gpus;
mod host_steps;
mod iterations;
mod launch;
mod lifetime;
mod order;
mod race;
mod reach;
pub mod rules;
mod unused;

pub use order::Order;
pub use unused::Warning;

use crate::errors::Errors;
use crate::ir::{Access, Plan};
use proc_macro2::Span;

/// What the checks learned, for the lowering.
#[derive(Default)]
pub struct Analysis {
    /// The warnings the lowering emits with the plan's code: declarations
    /// never used.
    pub warnings: Vec<Warning>,
}

/// What every rule is given: the plan, each op's accesses (in a loop's
/// body, with what holds of its variable), and the happens-before order.
pub struct Facts<'p> {
    /// The plan the rules check.
    pub plan: &'p Plan,
    /// By op: what it reads and writes.
    pub accesses: Vec<Vec<Access>>,
    /// Which ops happen before which.
    pub order: Order,
    /// The order as if every loop that may run no iterations ran none.
    pub without_empty_loops: Order,
    /// The races the race checks found, reported together after every
    /// rule has run (`race::report`).
    pub races: race::Races,
}

impl<'p> Facts<'p> {
    /// The facts of `plan`: its accesses, its order, and no races yet.
    pub fn of(plan: &'p Plan) -> Facts<'p> {
        // A loop's body is one iteration `c`, with what holds of `c`.
        let accesses = (0..plan.ops.len())
            .map(|op| {
                let mut accesses = plan.accesses(op);
                if let Some(repeat) = plan.loop_of(op) {
                    for access in &mut accesses {
                        access.facts.extend(repeat.facts.iter().cloned());
                    }
                }
                accesses
            })
            .collect();
        let may_be_empty = |op| plan.loop_of(op).is_some_and(|repeat| !repeat.never_empty);
        Facts {
            plan,
            accesses,
            order: Order::compute(plan),
            without_empty_loops: Order::compute_skipping(plan, &may_be_empty),
            races: race::Races::default(),
        }
    }
}

/// Runs every rule on `plan`, whose building reported its errors to
/// `errors` already; errors go to `errors`.
pub fn run(plan: &Plan, errors: &Errors) -> Analysis {
    errors.in_source_order(|errors| {
        for rule in rules::RULES {
            if let rules::Enforced::Formation(check) = rule.enforced {
                check(plan, errors);
            }
        }
    });
    // The rest need every name resolved and every op where it can run.
    if !errors.is_empty() {
        return Analysis::default();
    }
    let facts = Facts::of(plan);
    for rule in rules::RULES {
        if let rules::Enforced::Check(check) = rule.enforced {
            check(&facts, errors);
        }
    }
    race::report(&facts, errors);
    Analysis {
        warnings: unused::find(plan, &facts.accesses),
    }
}

/// Every rule's errors on `plan` but the races', as text, and the races:
/// what a fix the race report offers is checked against (it must order
/// races and add no error of another rule).
fn rules_on(plan: &Plan) -> (Vec<String>, Vec<race::Race>) {
    let errors = Errors::new();
    for rule in rules::RULES {
        if let rules::Enforced::Formation(check) = rule.enforced {
            check(plan, &errors);
        }
    }
    let mut races = Vec::new();
    if errors.is_empty() {
        let facts = Facts::of(plan);
        for rule in rules::RULES {
            if let rules::Enforced::Check(check) = rule.enforced {
                check(&facts, &errors);
            }
        }
        races = facts.races.take();
    }
    let messages = match errors.finish() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    };
    (messages, races)
}

/// The line a span starts on, for messages that point elsewhere.
fn line(span: Span) -> usize {
    span.start().line
}
