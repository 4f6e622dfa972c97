//! `plan Name(params) { items }` and its parameters.

use super::attrs::skip_doc_comments;
use super::decl::{BufferDecl, EventDecl, GpusDecl, KernelDecl, PeerDecl, RanksDecl, StreamDecl};
use super::kw;
use super::op::{OnBlock, OpDef};
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, Token, Type, Visibility};

/// Everything inside `memplan! { ... }`: one or more plans. A plan that
/// does not parse is an error of its own, and the plans after it are read
/// on, so that one typo does not hide every other plan's checks.
pub struct Input {
    /// The plans that parsed, in order.
    pub plans: Vec<PlanDef>,
    /// The errors of the plans that did not parse.
    pub errors: Vec<syn::Error>,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (mut plans, mut errors) = (Vec::new(), Vec::new());
        while !input.is_empty() {
            let fork = input.fork();
            match fork.parse::<PlanDef>() {
                Ok(plan) => {
                    input.advance_to(&fork);
                    plans.push(plan);
                }
                Err(error) => {
                    errors.push(error);
                    skip_to_next_plan(input)?;
                }
            }
        }
        if plans.is_empty() && errors.is_empty() {
            return Err(input.error(
                "expected a plan\n\nhelp: write `plan Name(n: usize) { ... }` inside `memplan! { }`",
            ));
        }
        Ok(Input { plans, errors })
    }
}

/// Skips the plan that failed to parse: at least one token, then every
/// token up to where another plan starts (its attributes, visibility and
/// `plan`), or the end.
fn skip_to_next_plan(input: ParseStream) -> syn::Result<()> {
    input.parse::<proc_macro2::TokenTree>()?;
    while !input.is_empty() && !starts_a_plan(input) {
        input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

fn starts_a_plan(input: ParseStream) -> bool {
    let fork = input.fork();
    fork.call(Attribute::parse_outer).is_ok()
        && fork.parse::<Visibility>().is_ok()
        && fork.peek(kw::plan)
}

/// `/// docs` `pub plan Name(n: usize, xs: &[f32; n]) { ... }`
pub struct PlanDef {
    /// The attributes written before `plan` (doc comments among them).
    pub attrs: Vec<Attribute>,
    /// The visibility, which the plan's type gets.
    pub vis: Visibility,
    /// The `plan` keyword.
    pub plan_token: kw::plan,
    /// The plan's name, which its type gets.
    pub name: Ident,
    /// The parameters, in order.
    pub params: Vec<ParamDef>,
    /// The body's declarations, ops, stream blocks and loops, in order.
    pub items: Vec<ItemDef>,
}

impl Parse for PlanDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        if !input.peek(kw::plan) {
            return Err(
                input.error("expected `plan`\n\nhelp: a plan starts with `plan Name(...) { ... }`")
            );
        }
        let plan_token = input.parse()?;
        let name = input.parse()?;
        let content;
        syn::parenthesized!(content in input);
        let params = Punctuated::<ParamDef, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        let body;
        syn::braced!(body in input);
        let mut items = Vec::new();
        while !body.is_empty() {
            items.push(body.parse()?);
        }
        Ok(PlanDef {
            attrs,
            vis,
            plan_token,
            name,
            params,
            items,
        })
    }
}

/// A plan parameter: `n: usize`, `scale: f32`, `run len: usize <= cap`, or
/// a caller's slice, `xs: &[f32; n]`, `out: &mut [f32] registered`.
pub struct ParamDef {
    /// `run a: f32`: given to each run rather than to `new`.
    pub run: Option<kw::run>,
    /// The parameter's name.
    pub name: Ident,
    /// Its type as written: `usize`, a value type, or a slice `&[T; n]`.
    pub ty: Type,
    /// `<= cap`: a size's bound, which every value given is checked
    /// against, and which the checks may then take as true.
    pub bound: Option<(Token![<=], Expr)>,
    /// `registered`: page-lock the slice for the run.
    pub registered: Option<kw::registered>,
}

impl Parse for ParamDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `run` is a parameter's name when a `:` follows it.
        let run = if input.peek(kw::run) && !input.peek2(Token![:]) {
            Some(input.parse()?)
        } else {
            None
        };
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        let bound = if input.peek(Token![<=]) {
            Some((input.parse()?, input.parse()?))
        } else {
            None
        };
        let registered = input.parse()?;
        Ok(ParamDef {
            run,
            name,
            ty,
            bound,
            registered,
        })
    }
}

/// What a plan's body holds: declarations, operations and stream blocks.
pub enum ItemDef {
    /// `kernel ...;`
    Kernel(KernelDecl),
    /// `host ...;` or `device ...;`
    Buffers(BufferDecl),
    /// `stream ...;`
    Streams(StreamDecl),
    /// `event ...;`
    Events(EventDecl),
    /// `gpus gpu[g];`
    Gpus(GpusDecl),
    /// `peer gpu;`
    Peer(PeerDecl),
    /// `ranks world;`
    Ranks(RanksDecl),
    /// `on s { ... }`
    On(OnBlock),
    /// `for c in 0..k { ... }`
    Loop(super::for_loop::LoopDef),
    /// An op outside any stream block, which the host runs in program order.
    Op(OpDef),
}

impl Parse for ItemDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        skip_doc_comments(input)?;
        let is_host_step = input.peek(kw::host)
            && (input.peek2(syn::token::Paren) || input.peek2(syn::token::Brace));
        if KernelDecl::peek(input) {
            input.parse().map(ItemDef::Kernel)
        } else if (input.peek(kw::host) && !is_host_step) || input.peek(kw::device) {
            input.parse().map(ItemDef::Buffers)
        } else if input.peek(kw::stream) {
            input.parse().map(ItemDef::Streams)
        } else if input.peek(kw::event) {
            input.parse().map(ItemDef::Events)
        } else if input.peek(kw::gpus) {
            input.parse().map(ItemDef::Gpus)
        } else if input.peek(kw::peer) {
            input.parse().map(ItemDef::Peer)
        } else if input.peek(kw::ranks) {
            input.parse().map(ItemDef::Ranks)
        } else if input.peek(kw::on) {
            input.parse().map(ItemDef::On)
        } else if input.peek(Token![for]) {
            input.parse().map(ItemDef::Loop)
        } else if OpDef::peek(input) {
            input.parse().map(ItemDef::Op)
        } else {
            Err(input.error(
                "expected a declaration, a stream block or an operation\n\n\
                 help: declarations are `kernel`, `host`, `device`, `stream`, `event`, `gpus`, `peer` and `ranks`; \
                 stream blocks are `on s { ... }`, repeated with `for c in 0..k { ... }`; operations are `copy`, `fill`, `launch`, \
                 `record`, `wait`, `sync`, `alloc`, `free`, the collectives and `host(...) { ... }`",
            ))
        }
    }
}
