//! The plan's sizes (lengths, range bounds, launch dimensions) as the
//! programs the runtime computes them with: postfix steps over the size
//! inputs, in the order the user wrote the arithmetic, so that the runtime
//! checks every step the user's code would take.
//!
//! The inputs are the plan's `usize` parameters, then the constants and
//! casts that `new` evaluates as Rust (`CHUNK`, `K as usize`), then the
//! lengths of caller slices declared without one, which each run measures.

use super::names::number;
use crate::ir::Plan;
use crate::sym;
use crate::text::text;
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashMap;
use syn::{BinOp, Expr, Lit};

/// A size input, before inputs are numbered.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Input {
    /// `usize` parameter `i` (in the order of the plan's sizes).
    Size(usize),
    /// An expression `new` evaluates (`values[i]`).
    Value(usize),
    /// A caller slice's length (`measured[i]`).
    Measured(usize),
    /// `run` size parameter `i`, given to each run.
    Run(usize),
    /// The variable of loop `i`, set by the runtime at each iteration.
    Loop(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Step {
    Input(Input),
    Literal(u64),
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Blocks,
    U32,
    Min,
}

pub struct Sizes {
    /// The names of the plan's `usize` parameters.
    params: Vec<String>,
    /// What `new` evaluates, with its text.
    values: Vec<(String, Expr)>,
    /// The measured lengths' names (`xs.len()`).
    measured: Vec<String>,
    /// The `run` size parameters' names.
    runs: Vec<String>,
    /// The loops' variables.
    loops: Vec<String>,
    programs: Vec<(String, Vec<Step>)>,
    /// Programs by their steps: two expressions that print alike but
    /// compute differently (a macro's invisible groups) stay apart.
    index: HashMap<Vec<Step>, u16>,
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

impl Sizes {
    pub fn new(plan: &Plan) -> Sizes {
        let sizes = |per_run: bool| {
            plan.params
                .iter()
                .filter(|p| matches!(p.kind, crate::ir::ParamKind::Size) && p.per_run == per_run)
                .map(|p| p.name.to_string())
                .collect()
        };
        Sizes {
            params: sizes(false),
            values: Vec::new(),
            measured: Vec::new(),
            runs: sizes(true),
            loops: plan.loops.iter().map(|l| l.var.to_string()).collect(),
            programs: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// A length or range bound, which the IR already read as a size.
    pub fn length(&mut self, expr: &Expr, plan: &Plan) -> syn::Result<u16> {
        let mut steps = Vec::new();
        if !self.steps(expr, Context::Length, plan, &mut steps) {
            return Err(syn::Error::new_spanned(expr, sym::UNSUPPORTED));
        }
        Ok(self.intern(text(expr), steps))
    }

    /// A launch dimension, if it is written in the size arithmetic.
    pub fn launch(&mut self, expr: &Expr, plan: &Plan) -> Option<u16> {
        let mut steps = Vec::new();
        self.steps(expr, Context::Launch, plan, &mut steps)
            .then(|| self.intern(text(expr), steps))
    }

    /// The integer `value`.
    pub fn literal(&mut self, value: u64) -> u16 {
        self.intern(value.to_string(), vec![Step::Literal(value)])
    }

    /// `bound + 1` (the end of `a..=bound`).
    pub fn plus_one(&mut self, bound: u16) -> u16 {
        let (text, mut steps) = self.programs[usize::from(bound)].clone();
        steps.extend([Step::Literal(1), Step::Add]);
        self.intern(format!("{text} + 1"), steps)
    }

    /// The length of a caller slice declared without one, measured at
    /// each run.
    pub fn measured(&mut self, name: &str) -> u16 {
        let input = self.measured_index(name);
        self.intern(
            format!("{name}.len()"),
            vec![Step::Input(Input::Measured(input))],
        )
    }

    fn measured_index(&mut self, name: &str) -> usize {
        let text = format!("{name}.len()");
        match self.measured.iter().position(|m| *m == text) {
            Some(index) => index,
            None => {
                self.measured.push(text);
                self.measured.len() - 1
            }
        }
    }

    /// For `receiver` naming a caller's slice: its declared length, or
    /// `None` for one declared without.
    fn slice_len<'p>(&self, receiver: &Expr, plan: &'p Plan) -> Option<Option<&'p Expr>> {
        let Expr::Path(path) = receiver else {
            return None;
        };
        let name = text(&path.path);
        plan.buffers
            .iter()
            .find(|b| matches!(b.kind, crate::ir::BufferKind::Param { .. }) && b.name == name)
            .map(|b| b.len_expr.as_ref())
    }

    /// The input a measured length sets.
    pub fn measured_input(&self, name: &str) -> u16 {
        let text = format!("{name}.len()");
        let index = self.measured.iter().position(|m| *m == text).unwrap_or(0);
        self.index_of(Input::Measured(index))
    }

    /// How many distinct sizes there are; past `u16::MAX` their numbers
    /// wrap, and the plan is refused (see `info::describe`).
    pub fn count(&self) -> usize {
        self.programs.len()
    }

    fn intern(&mut self, text: String, steps: Vec<Step>) -> u16 {
        if let Some(&index) = self.index.get(&steps) {
            return index;
        }
        let index = self.programs.len() as u16;
        self.index.insert(steps.clone(), index);
        self.programs.push((text, steps));
        index
    }

    /// Appends the steps computing `expr`; false if it is outside the
    /// arithmetic of `context`.
    fn steps(&mut self, expr: &Expr, context: Context, plan: &Plan, out: &mut Vec<Step>) -> bool {
        match expr {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Int(int) => match int.base10_parse::<u64>() {
                    Ok(value) => {
                        out.push(Step::Literal(value));
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
                } else if context == Context::Length && !plan.atoms.is_size(&name) {
                    out.push(Step::Input(self.value(name, expr)));
                    true
                } else {
                    false
                }
            }
            Expr::Paren(inner) => self.steps(&inner.expr, context, plan, out),
            Expr::Group(inner) => self.steps(&inner.expr, context, plan, out),
            Expr::Cast(cast)
                if sym::is_usize(&cast.ty) && sym::is_pure(&cast.expr, &plan.atoms) =>
            {
                self.steps(&cast.expr, context, plan, out)
            }
            Expr::Cast(cast) if sym::is_usize(&cast.ty) && context == Context::Length => {
                out.push(Step::Input(self.value(sym::cast_name(&cast.expr), expr)));
                true
            }
            // `xs.len()` of a caller's slice: its declared length, or the
            // length each run measures.
            Expr::MethodCall(call)
                if context == Context::Length && call.method == "len" && call.args.is_empty() =>
            {
                match self.slice_len(&call.receiver, plan) {
                    Some(Some(declared)) => self.steps(declared, context, plan, out),
                    Some(None) => {
                        let Expr::Path(path) = &*call.receiver else {
                            return false;
                        };
                        let index = self.measured_index(&text(&path.path));
                        out.push(Step::Input(Input::Measured(index)));
                        true
                    }
                    None => {
                        out.push(Step::Input(self.value(text(expr), expr)));
                        true
                    }
                }
            }
            Expr::Call(call) if sym::is_min(call) => {
                let both = self.steps(&call.args[0], context, plan, out)
                    && self.steps(&call.args[1], context, plan, out);
                out.push(Step::Min);
                both
            }
            // Terms the arithmetic does not look into: `new` computes them.
            Expr::Call(_) | Expr::MethodCall(_) | Expr::Field(_) | Expr::Index(_)
                if context == Context::Length =>
            {
                out.push(Step::Input(self.value(text(expr), expr)));
                true
            }
            Expr::Cast(cast) if is_u32(&cast.ty) && context == Context::Launch => {
                let inner = self.steps(&cast.expr, context, plan, out);
                out.push(Step::U32);
                inner
            }
            Expr::Binary(_) => {
                let (leftmost, chain) = sym::binary_chain(expr);
                if !self.steps(leftmost, context, plan, out) {
                    return false;
                }
                for binary in chain {
                    let operation = match binary.op {
                        BinOp::Add(_) => Step::Add,
                        BinOp::Sub(_) => Step::Sub,
                        BinOp::Mul(_) => Step::Mul,
                        BinOp::Div(_) => Step::Div,
                        BinOp::Rem(_) => Step::Rem,
                        _ => return false,
                    };
                    if !self.steps(&binary.right, context, plan, out) {
                        return false;
                    }
                    out.push(operation);
                }
                true
            }
            Expr::Call(call) if context == Context::Launch && is_blocks(call) => {
                let both = self.steps(&call.args[0], context, plan, out)
                    && self.steps(&call.args[1], context, plan, out);
                out.push(Step::Blocks);
                both
            }
            _ => false,
        }
    }

    /// The input `new` evaluates for `expr`, named `name`.
    fn value(&mut self, name: String, expr: &Expr) -> Input {
        match self.values.iter().position(|(n, _)| *n == name) {
            Some(index) => Input::Value(index),
            None => {
                self.values.push((name, expr.clone()));
                Input::Value(self.values.len() - 1)
            }
        }
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
    fn index_of(&self, input: Input) -> u16 {
        let (params, values, measured, runs) = (
            self.params.len(),
            self.values.len(),
            self.measured.len(),
            self.runs.len(),
        );
        (match input {
            Input::Size(i) => i,
            Input::Value(i) => params + i,
            Input::Measured(i) => params + values + i,
            Input::Run(i) => params + values + measured + i,
            Input::Loop(i) => params + values + measured + runs + i,
        }) as u16
    }

    /// The input loop `index`'s variable sets.
    pub fn loop_input(&self, index: usize) -> u16 {
        self.index_of(Input::Loop(index))
    }

    /// The inputs of the `run` size parameters, in order.
    pub fn run_inputs(&self) -> Vec<u16> {
        (0..self.runs.len())
            .map(|i| self.index_of(Input::Run(i)))
            .collect()
    }

    /// What `new` passes: the sizes, then the values, as written.
    pub fn new_inputs(&self, plan: &Plan) -> Vec<TokenStream> {
        let params = plan
            .params
            .iter()
            .filter(|p| matches!(p.kind, crate::ir::ParamKind::Size) && !p.per_run)
            .map(|p| {
                let name = &p.name;
                quote!(#name)
            });
        let values = self.values.iter().map(|(_, expr)| quote!(#expr));
        params.chain(values).collect()
    }

    /// `Size("n / 2", &[Input(0), Literal(2), Div])`, for each size.
    pub fn programs(&self) -> Vec<TokenStream> {
        let index_of = |input: Input| self.index_of(input);
        self.programs
            .iter()
            .map(|(text, steps)| {
                let steps = steps.iter().map(|step| match *step {
                    Step::Input(input) => {
                        let index = number(index_of(input));
                        quote!(Input(#index))
                    }
                    Step::Literal(value) => {
                        let value = number(value);
                        quote!(Literal(#value))
                    }
                    Step::Add => quote!(Add),
                    Step::Sub => quote!(Sub),
                    Step::Mul => quote!(Mul),
                    Step::Div => quote!(Div),
                    Step::Rem => quote!(Rem),
                    Step::Blocks => quote!(Blocks),
                    Step::U32 => quote!(U32),
                    Step::Min => quote!(Min),
                });
                quote!(Size(#text, &[#(#steps),*]))
            })
            .collect()
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
