//! From syntax to IR: resolves every name, flattens stream blocks into one
//! program order, and turns lengths and ranges into symbolic integers.
//!
//! It keeps what the plan says as the plan says it (a `record` outside
//! stream blocks, a placement past the plan's GPUs, a second loop): whether
//! that can be is a rule of the checks (`check/`), the first of which,
//! `Enforced::Formation`, look at nothing else. What it reports itself is
//! what leaves no IR to check: a name undeclared, declared twice or of the
//! wrong kind, a set used without its index or indexed two ways, a size it
//! cannot read; and an op written where it cannot run whose names do not
//! resolve besides, which leaves no op for the rule, in the rule's words
//! (`where_ops_run::cannot_run_there`). A plan with such errors is not checked
//! further.

use super::extent;
use super::*;
use crate::errors::Errors;
use crate::sym::{self, Reading, Sym, SymRange};
use crate::syntax::{
    self, BufferSpace, ItemDef, KernelParamTy, LoopDef, OpDef, PlanDef, PriorityDef,
};
use crate::text::text;
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::{Expr, RangeLimits};

/// Names of generated items start with this; plan names may not.
pub const RESERVED_PREFIX: &str = "__memplan";

/// The plan's IR; errors go to `errors`.
pub fn build(def: &PlanDef, errors: &Errors) -> Plan {
    let mut builder = Builder {
        errors,
        names: HashMap::new(),
        freed: Vec::new(),
        in_loop: false,
        current_var: None,
        reading_later: false,
        indexed_in_loop: HashSet::new(),
        loop_facts: Vec::new(),
        ranges: HashMap::new(),
        group: 0,
        in_group: false,
        plan: Plan {
            attrs: def.attrs.clone(),
            vis: def.vis.clone(),
            name: def.name.clone(),
            params: Vec::new(),
            modules: Vec::new(),
            kernels: Vec::new(),
            buffers: Vec::new(),
            streams: Vec::new(),
            events: Vec::new(),
            event_arrays: Vec::new(),
            ops: Vec::new(),
            loops: Vec::new(),
            atoms: Default::default(),
            gpus: None,
            ranks: None,
        },
    };
    builder.reserve(&def.name);
    for param in &def.params {
        builder.param(param);
    }
    builder.bounds();
    // The GPUs first: declarations placed on them may come before.
    builder.gpus(&def.items);
    for item in &def.items {
        builder.declaration(item);
    }
    for item in &def.items {
        match item {
            ItemDef::Op(op) => builder.op(op, Lane::Host),
            ItemDef::On(block) => builder.block(block),
            ItemDef::Loop(def) => builder.repeat(def),
            _ => {}
        }
    }
    builder.plan
}

mod declarations;
mod gpus;
mod loops;
mod names;
mod ops;
#[cfg(test)]
mod tests;

use loops::SetOf;
use names::{Name, Wanted};

struct Builder<'a> {
    errors: &'a Errors,
    names: HashMap<String, (Name, Span)>,
    /// Stream-ordered buffers already freed, whose names may be reused.
    freed: Vec<BufferId>,
    /// Whether a loop's body is being read.
    in_loop: bool,
    /// The variable of the loop being read.
    current_var: Option<String>,
    /// Whether the loop's body is being read again, for iteration `c′`.
    reading_later: bool,
    /// The sets the loop being read indexes (`stream lanes`, `event
    /// done`): a set an earlier loop indexed is that loop's business, and
    /// a second loop is an error of its own (`check/formation.rs`).
    indexed_in_loop: HashSet<String>,
    /// What holds of the iteration being read (`c + 1 <= k`), a fact of
    /// every range in it.
    loop_facts: Vec<Sym>,
    /// The loop's named ranges, `let r = c * m..(c + 1) * m;`.
    ranges: HashMap<String, syn::ExprRange>,
    /// The number of the last NCCL group, and whether the op before was
    /// a collective of the same stream block (which joins its group).
    group: usize,
    in_group: bool,
    plan: Plan,
}
