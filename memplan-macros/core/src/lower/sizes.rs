//! The plan's sizes (lengths, range bounds, launch dimensions, ranks) as
//! the programs the runtime computes them with: postfix steps over the size
//! inputs, in the order the user wrote the arithmetic, so that the runtime
//! checks every step the user's code would take.
//!
//! Lowering numbers them first, in one pass over the plan ([`Sizes::intern`]
//! visits every size its model names, [`uses`] says which those are); the
//! model is then mapped with lookups alone.
//!
//! The inputs are the plan's `usize` parameters, then the constants and
//! casts that `new` evaluates as Rust (`CHUNK`, `K as usize`), then the
//! lengths of caller slices declared without one, which each run measures,
//! then the `run` sizes, then the loops' variables.

use crate::ir::{Arg, LaunchExtent, OpKind, Place, Placement, Plan};
use crate::sym;
use crate::text::text;
use memplan_model::Term;
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashMap;
use syn::{BinOp, Expr, Lit, RangeLimits};

/// A size input, by what it is (inputs are numbered once all are known).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Input {
    /// `usize` parameter `i` (in the order of the plan's sizes).
    Size(usize),
    /// An expression `new` evaluates, by its text.
    Value(String),
    /// A caller slice's length, `xs.len()`.
    Measured(String),
    /// `run` size parameter `i`, given to each run.
    Run(usize),
    /// The variable of loop `i`, set by the runtime at each iteration.
    Loop(usize),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Step {
    Input(Input),
    /// Every other step, as the model writes it.
    Term(Term),
}

/// Which arithmetic an expression may use.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// Lengths and ranges: constants of the user's are `usize` inputs.
    Length,
    /// Launch dimensions: `blocks(n, b)` and `as u32` too, and no
    /// constants (they may be `u32`); what falls outside is computed by
    /// Rust code in `new`.
    Launch,
}

/// A size the model names.
enum Use<'p> {
    Length(&'p Expr),
    /// A launch dimension, numbered only where it is in the arithmetic.
    Launch(&'p Expr),
    Literal(u64),
    /// `end + 1`, the end of `a..=end`.
    ClosedEnd(&'p Expr),
    /// The length of caller slice `name`, declared without one.
    Measured(String),
}

/// The plan's sizes, numbered.
pub struct Sizes<'p> {
    plan: &'p Plan,
    /// The names of the plan's `usize` parameters.
    params: Vec<String>,
    /// The `run` size parameters' names.
    runs: Vec<String>,
    /// The loops' variables.
    loops: Vec<String>,
    /// What `new` evaluates: its text, and the expression.
    values: Vec<(String, &'p Expr)>,
    /// The measured lengths' names (`xs.len()`).
    measured: Vec<String>,
    programs: Vec<(String, Vec<Step>)>,
    /// Programs by their steps: two expressions that print alike but
    /// compute differently (a macro's invisible groups) stay apart.
    index: HashMap<Vec<Step>, u16>,
}

impl<'p> Sizes<'p> {
    /// Every size of `plan`'s model, numbered in the order [`uses`] meets
    /// them; an error for a size outside the arithmetic. The numbers hold
    /// only as far as `limits::check` allows: it is asked before any is used.
    pub fn intern(plan: &'p Plan) -> syn::Result<Sizes<'p>> {
        let names = |per_run: bool| {
            plan.params
                .iter()
                .filter(|p| matches!(p.kind, crate::ir::ParamKind::Size) && p.per_run() == per_run)
                .map(|p| p.name.to_string())
                .collect()
        };
        let mut sizes = Sizes {
            plan,
            params: names(false),
            runs: names(true),
            loops: plan.loops.iter().map(|l| l.var.to_string()).collect(),
            values: Vec::new(),
            measured: Vec::new(),
            programs: Vec::new(),
            index: HashMap::new(),
        };
        for size in uses(plan) {
            let mut seen = Vec::new();
            let Some((text, steps)) = sizes.program(&size, &mut seen)? else {
                continue;
            };
            for (name, expr) in seen {
                if !sizes.values.iter().any(|(n, _)| *n == name) {
                    sizes.values.push((name, expr));
                }
            }
            for step in &steps {
                if let Step::Input(Input::Measured(name)) = step
                    && !sizes.measured.contains(name)
                {
                    sizes.measured.push(name.clone());
                }
            }
            if !sizes.index.contains_key(&steps) {
                sizes
                    .index
                    .insert(steps.clone(), sizes.programs.len() as u16);
                sizes.programs.push((text, steps));
            }
        }
        Ok(sizes)
    }

    /// A length or range bound, which the IR already read as a size.
    pub fn length(&self, expr: &'p Expr) -> syn::Result<u16> {
        self.number_of(Use::Length(expr))
    }

    /// A launch dimension, if it is written in the size arithmetic.
    pub fn launch(&self, expr: &'p Expr) -> syn::Result<Option<u16>> {
        self.find(Use::Launch(expr))
    }

    /// A launch's dimensions, if each is written in the size arithmetic.
    pub fn dims(&self, expr: &'p Expr) -> syn::Result<Option<Vec<u16>>> {
        let mut sizes = Vec::new();
        for part in dim_parts(expr) {
            match self.launch(part)? {
                Some(size) => sizes.push(size),
                None => return Ok(None),
            }
        }
        Ok(Some(sizes))
    }

    /// The integer `value`.
    pub fn literal(&self, value: u64) -> syn::Result<u16> {
        self.number_of(Use::Literal(value))
    }

    /// `end + 1`, the end of `a..=end`.
    pub fn closed_end(&self, end: &'p Expr) -> syn::Result<u16> {
        self.number_of(Use::ClosedEnd(end))
    }

    /// The length of caller slice `name`, declared without one.
    pub fn measured(&self, name: &str) -> syn::Result<u16> {
        self.number_of(Use::Measured(name.to_owned()))
    }

    /// The number of `size`, which is not a launch dimension.
    fn number_of(&self, size: Use<'p>) -> syn::Result<u16> {
        self.find(size)?.ok_or_else(|| unnumbered("a size"))
    }

    /// The number of `size`; `None` for a launch dimension outside the
    /// arithmetic.
    fn find(&self, size: Use<'p>) -> syn::Result<Option<u16>> {
        let Some((text, steps)) = self.program(&size, &mut Vec::new())? else {
            return Ok(None);
        };
        match self.index.get(&steps) {
            Some(&index) => Ok(Some(index)),
            None => Err(unnumbered(&format!("the size `{text}`"))),
        }
    }

    /// The text and steps of `size`, noting in `seen` the expressions
    /// `new` evaluates; `None` for a launch dimension outside the
    /// arithmetic, an error for a length outside it.
    fn program(
        &self,
        size: &Use<'p>,
        seen: &mut Vec<(String, &'p Expr)>,
    ) -> syn::Result<Option<(String, Vec<Step>)>> {
        let mut steps = Vec::new();
        Ok(Some(match *size {
            Use::Length(expr) => {
                if !self.steps(expr, Context::Length, &mut steps, seen) {
                    return Err(syn::Error::new_spanned(expr, sym::UNSUPPORTED));
                }
                (text(expr), steps)
            }
            Use::Launch(expr) => {
                if !self.steps(expr, Context::Launch, &mut steps, seen) {
                    return Ok(None);
                }
                (text(expr), steps)
            }
            Use::Literal(value) => (value.to_string(), vec![Step::Term(Term::Literal(value))]),
            Use::ClosedEnd(end) => {
                if !self.steps(end, Context::Length, &mut steps, seen) {
                    return Err(syn::Error::new_spanned(end, sym::UNSUPPORTED));
                }
                steps.extend([Step::Term(Term::Literal(1)), Step::Term(Term::Add)]);
                (format!("{} + 1", text(end)), steps)
            }
            Use::Measured(ref name) => {
                let name = format!("{name}.len()");
                (name.clone(), vec![Step::Input(Input::Measured(name))])
            }
        }))
    }

    /// For `receiver` naming a caller's slice: its declared length, or
    /// `None` for one declared without.
    fn slice_len(&self, receiver: &Expr) -> Option<Option<&'p Expr>> {
        let Expr::Path(path) = receiver else {
            return None;
        };
        let name = text(&path.path);
        self.plan
            .buffers
            .iter()
            .find(|b| matches!(b.kind, crate::ir::BufferKind::Param { .. }) && b.name == name)
            .map(|b| b.len_expr.as_ref())
    }

    /// Appends the steps computing `expr`, noting in `seen` what `new`
    /// evaluates; false if it is outside the arithmetic of `context`.
    fn steps(
        &self,
        expr: &'p Expr,
        context: Context,
        out: &mut Vec<Step>,
        seen: &mut Vec<(String, &'p Expr)>,
    ) -> bool {
        let mut value = |name: String, expr: &'p Expr, out: &mut Vec<Step>| {
            seen.push((name.clone(), expr));
            out.push(Step::Input(Input::Value(name)));
        };
        let term = |term: Term| Step::Term(term);
        match expr {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Int(int) => match int.base10_parse::<u64>() {
                    Ok(value) => {
                        out.push(term(Term::Literal(value)));
                        true
                    }
                    Err(_) => false,
                },
                _ => false,
            },
            Expr::Path(path) if path.qself.is_none() => {
                let name = text(&path.path);
                if let Some(index) = self.loops.iter().position(|l| *l == name) {
                    out.push(Step::Input(Input::Loop(index)));
                    true
                } else if let Some(index) = self.runs.iter().position(|r| *r == name) {
                    out.push(Step::Input(Input::Run(index)));
                    true
                } else if let Some(index) = self.params.iter().position(|p| *p == name) {
                    out.push(Step::Input(Input::Size(index)));
                    true
                } else if context == Context::Length && !self.plan.atoms.is_size(&name) {
                    value(name, expr, out);
                    true
                } else {
                    false
                }
            }
            Expr::Paren(inner) => self.steps(&inner.expr, context, out, seen),
            Expr::Group(inner) => self.steps(&inner.expr, context, out, seen),
            Expr::Cast(cast)
                if sym::is_usize(&cast.ty) && sym::is_pure(&cast.expr, &self.plan.atoms) =>
            {
                self.steps(&cast.expr, context, out, seen)
            }
            Expr::Cast(cast) if sym::is_usize(&cast.ty) && context == Context::Length => {
                value(sym::cast_name(&cast.expr), expr, out);
                true
            }
            // `xs.len()` of a caller's slice: its declared length, or the
            // length each run measures.
            Expr::MethodCall(call)
                if context == Context::Length && call.method == "len" && call.args.is_empty() =>
            {
                match self.slice_len(&call.receiver) {
                    Some(Some(declared)) => self.steps(declared, context, out, seen),
                    Some(None) => {
                        let Expr::Path(path) = &*call.receiver else {
                            return false;
                        };
                        let name = format!("{}.len()", text(&path.path));
                        out.push(Step::Input(Input::Measured(name)));
                        true
                    }
                    None => {
                        value(text(expr), expr, out);
                        true
                    }
                }
            }
            Expr::Call(call) if sym::is_min(call) => {
                let both = self.steps(&call.args[0], context, out, seen)
                    && self.steps(&call.args[1], context, out, seen);
                out.push(term(Term::Min));
                both
            }
            // Terms the arithmetic does not look into: `new` computes them.
            Expr::Call(_) | Expr::MethodCall(_) | Expr::Field(_) | Expr::Index(_)
                if context == Context::Length =>
            {
                value(text(expr), expr, out);
                true
            }
            Expr::Cast(cast) if is_u32(&cast.ty) && context == Context::Launch => {
                let inner = self.steps(&cast.expr, context, out, seen);
                out.push(term(Term::U32));
                inner
            }
            Expr::Binary(_) => {
                let (leftmost, chain) = sym::binary_chain(expr);
                if !self.steps(leftmost, context, out, seen) {
                    return false;
                }
                for binary in chain {
                    let operation = match binary.op {
                        BinOp::Add(_) => Term::Add,
                        BinOp::Sub(_) => Term::Sub,
                        BinOp::Mul(_) => Term::Mul,
                        BinOp::Div(_) => Term::Div,
                        BinOp::Rem(_) => Term::Rem,
                        _ => return false,
                    };
                    if !self.steps(&binary.right, context, out, seen) {
                        return false;
                    }
                    out.push(term(operation));
                }
                true
            }
            Expr::Call(call) if context == Context::Launch && is_blocks(call) => {
                let both = self.steps(&call.args[0], context, out, seen)
                    && self.steps(&call.args[1], context, out, seen);
                out.push(term(Term::Blocks));
                both
            }
            _ => false,
        }
    }

    /// How many distinct sizes the plan has, and how many inputs they read.
    pub fn counts(&self) -> (usize, usize) {
        (self.programs.len(), self.input_names().len())
    }

    /// The input names, for the runtime's messages.
    pub fn input_names(&self) -> Vec<String> {
        let mut names = self.params.clone();
        names.extend(self.values.iter().map(|(name, _)| name.clone()));
        names.extend(self.measured.iter().cloned());
        names.extend(self.runs.iter().cloned());
        names.extend(self.loops.iter().cloned());
        names
    }

    /// The number of input `input`: the plan's sizes, the values `new`
    /// computes, the lengths runs measure, the sizes runs give, and the
    /// loops' variables.
    fn index_of(&self, input: &Input) -> u16 {
        let (params, values, measured, runs) = (
            self.params.len(),
            self.values.len(),
            self.measured.len(),
            self.runs.len(),
        );
        // Every name was met, and noted, when the sizes were numbered; one
        // that was not would be past every input, which the runtime refuses.
        let value = |name: &String| self.values.iter().position(|(n, _)| n == name);
        let measure = |name: &String| self.measured.iter().position(|n| n == name);
        let index = match input {
            Input::Size(i) => Some(*i),
            Input::Value(name) => value(name).map(|i| params + i),
            Input::Measured(name) => measure(name).map(|i| params + values + i),
            Input::Run(i) => Some(params + values + measured + i),
            Input::Loop(i) => Some(params + values + measured + runs + i),
        };
        index.map_or(u16::MAX, |index| index as u16)
    }

    /// The input loop `index`'s variable sets.
    pub fn loop_input(&self, index: usize) -> u16 {
        self.index_of(&Input::Loop(index))
    }

    /// The inputs of the `run` size parameters, in order.
    pub fn run_inputs(&self) -> Vec<u16> {
        (0..self.runs.len())
            .map(|i| self.index_of(&Input::Run(i)))
            .collect()
    }

    /// The input a measured length sets.
    pub fn measured_input(&self, name: &str) -> u16 {
        self.index_of(&Input::Measured(format!("{name}.len()")))
    }

    /// What `new` passes: the sizes, then the values, as written.
    pub fn new_inputs(&self) -> Vec<TokenStream> {
        let params = self.plan.params.iter();
        let params = params
            .filter(|p| matches!(p.kind, crate::ir::ParamKind::Size) && !p.per_run())
            .map(|p| {
                let name = &p.name;
                quote!(#name)
            });
        let values = self.values.iter().map(|(_, expr)| quote!(#expr));
        params.chain(values).collect()
    }

    /// Each size: its text and its program, as the model writes it.
    pub fn programs(&self) -> Vec<(&str, Vec<Term>)> {
        self.programs
            .iter()
            .map(|(text, steps)| {
                let terms = steps.iter().map(|step| match step {
                    Step::Input(input) => Term::Input(self.index_of(input)),
                    Step::Term(term) => *term,
                });
                (text.as_str(), terms.collect())
            })
            .collect()
    }
}

/// Every size `plan`'s model names, in the order the model numbers them:
/// buffers' lengths, the counts and indexes of sets, loops' counts, the
/// GPUs' count and placements, then each op's.
fn uses(plan: &Plan) -> Vec<Use<'_>> {
    let mut uses = Vec::new();
    for buffer in &plan.buffers {
        uses.push(match &buffer.len_expr {
            Some(len) => Use::Length(len),
            None => Use::Measured(buffer.name.to_string()),
        });
    }
    for array in plan.arrays() {
        uses.push(Use::Length(&array.count));
        uses.push(match &array.index {
            Some((index, _)) => Use::Length(index),
            None => Use::Literal(0),
        });
    }
    uses.extend(plan.loops.iter().map(|repeat| Use::Length(&repeat.count)));
    for bound in plan.bounds() {
        uses.push(Use::Length(&bound.size));
        uses.push(Use::Length(&bound.limit));
    }
    if let Some(gpus) = &plan.gpus {
        uses.push(Use::Length(&gpus.count));
    }
    let placements = plan.buffers.iter().map(|b| &b.gpu);
    for placement in placements
        .chain(plan.streams.iter().map(|s| &s.gpu))
        .flatten()
    {
        if let Placement::One { index, .. } = placement {
            uses.push(Use::Length(index));
        }
    }
    for op in &plan.ops {
        let OpKind::Launch(launch) = &op.kind else {
            for place in op.kind.places() {
                place_uses(place, &mut uses);
            }
            if let OpKind::Collective(collective) = &op.kind {
                uses.extend(collective.rank.iter().map(Use::Length));
            }
            continue;
        };
        // A launch's sizes: its dimensions, then by argument its place and
        // the extent it touches, or the size its value counts or stands for.
        let dims = [&launch.grid, &launch.block]
            .into_iter()
            .chain(&launch.shared);
        for dims in dims {
            uses.extend(dim_parts(dims).into_iter().map(Use::Launch));
        }
        for (position, arg) in launch.args.iter().enumerate() {
            match arg {
                Arg::Buffer(buffer) => {
                    place_uses(buffer, &mut uses);
                    if let Some(LaunchExtent::Sized { expr, .. }) = &launch.extents[position] {
                        uses.push(Use::Length(expr));
                    }
                }
                Arg::Value(_) => {
                    if let Some(count) = &launch.counts[position] {
                        uses.push(Use::Length(&count.size));
                    } else if let Some(bound) = &launch.bound[position] {
                        uses.push(Use::Length(bound));
                    }
                }
            }
        }
    }
    uses
}

/// The sizes of a place's range: its start (0 if it has none) and its end
/// (its buffer's length if it has none, numbered with the buffers).
fn place_uses<'p>(place: &'p Place, uses: &mut Vec<Use<'p>>) {
    let Some(range) = &place.range_expr else {
        return;
    };
    uses.push(match &range.start {
        Some(start) => Use::Length(start),
        None => Use::Literal(0),
    });
    match (&range.end, &range.limits) {
        (None, _) => {}
        (Some(end), RangeLimits::HalfOpen(_)) => uses.push(Use::Length(end)),
        (Some(end), RangeLimits::Closed(_)) => uses.push(Use::ClosedEnd(end)),
    }
}

/// The one to three dimensions of a launch's grid or block (`(x, y)`), or
/// its shared memory.
pub fn dim_parts(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Tuple(tuple) if (1..=3).contains(&tuple.elems.len()) => tuple.elems.iter().collect(),
        Expr::Paren(inner) => dim_parts(&inner.expr),
        other => vec![other],
    }
}

/// `blocks(n, per_block)`, the language's built-in function.
pub fn is_blocks(call: &syn::ExprCall) -> bool {
    call.args.len() == 2
        && matches!(&*call.func, Expr::Path(path) if path.qself.is_none() && path.path.is_ident("blocks"))
}

fn is_u32(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident("u32"))
}

/// A size lowering looks up that numbering did not meet: a bug of
/// memplan's, reported rather than guessed at.
fn unnumbered(what: &str) -> syn::Error {
    syn::Error::new(
        proc_macro2::Span::call_site(),
        format!("memplan did not number {what} (a bug in memplan; please report it)"),
    )
}
