//! `for c in 0..k { on s { ... } ... }`: stream blocks repeated for each
//! value of a loop variable.

use super::attrs::skip_doc_comments;
use super::op::OnBlock;
use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Token};

/// `for c in 0..k { ... }`, with its named ranges and its stream blocks.
pub struct LoopDef {
    /// The `for` keyword, where the loop's errors point.
    pub for_token: Token![for],
    /// The loop's variable, `c`.
    pub var: Ident,
    /// `k` of `0..k`: how many times.
    pub count: Expr,
    /// `let r = c * m..(c + 1) * m;`: ranges named for the body, used as
    /// `a[r]` and `r.len()`.
    pub ranges: Vec<(Ident, syn::ExprRange)>,
    /// The body's stream blocks, in order.
    pub blocks: Vec<OnBlock>,
}

impl LoopDef {
    /// Where the loop is written: its `for`.
    pub fn span(&self) -> Span {
        self.for_token.span
    }
}

impl Parse for LoopDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let for_token = input.parse()?;
        let var = input.parse()?;
        input.parse::<Token![in]>()?;
        let range = Expr::parse_without_eager_brace(input)?;
        let count = match range {
            Expr::Range(syn::ExprRange {
                start: Some(start),
                limits: syn::RangeLimits::HalfOpen(_),
                end: Some(end),
                ..
            }) if matches!(&*start, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(zero), .. }) if zero.base10_digits() == "0") => {
                *end
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "a loop counts from 0: `for c in 0..k`\n\nhelp: write the count as a size, `0..k`, and shift ranges by the start inside the loop",
                ));
            }
        };
        let body;
        syn::braced!(body in input);
        let (mut blocks, mut ranges) = (Vec::new(), Vec::new());
        while !body.is_empty() {
            skip_doc_comments(&body)?;
            if body.peek(Token![let]) {
                body.parse::<Token![let]>()?;
                let name: Ident = body.parse()?;
                body.parse::<Token![=]>()?;
                let range = match body.parse::<Expr>()? {
                    Expr::Range(
                        range @ syn::ExprRange {
                            end: Some(_),
                            limits: syn::RangeLimits::HalfOpen(_),
                            ..
                        },
                    ) => range,
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "a loop names ranges written `start..end`, with an end and without `=`\n\nhelp: for example `let r = c * m..(c + 1) * m;`",
                        ));
                    }
                };
                body.parse::<Token![;]>()?;
                ranges.push((name, range));
                continue;
            }
            if !body.peek(super::kw::on) {
                return Err(body.error(
                    "expected a stream block\n\nhelp: a loop holds stream blocks, `on s { ... }` or `on lanes[c % s] { ... }`, \
                     and named ranges, `let r = c * m..(c + 1) * m;`; declarations, `sync` and host steps go outside it",
                ));
            }
            blocks.push(body.parse()?);
        }
        Ok(LoopDef {
            for_token,
            var,
            count,
            ranges,
            blocks,
        })
    }
}
