//! Operations, and the stream blocks that hold them: their parse, and each
//! op written back as a label.

use super::attrs::skip_doc_comments;
use super::decl::{BufferDef, SliceAccess};
use crate::text::text as tokens;
use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Block, Expr, Ident, Token};

/// The words of ops: those only ops use, and those they share with
/// declarations (`super::kw`'s).
pub(super) mod kw {
    pub use super::super::kw::{from, host, on};
    syn::custom_keyword!(copy);
    syn::custom_keyword!(fill);
    syn::custom_keyword!(with);
    syn::custom_keyword!(launch);
    syn::custom_keyword!(record);
    syn::custom_keyword!(wait);
    syn::custom_keyword!(sync);
    syn::custom_keyword!(all);
    syn::custom_keyword!(alloc);
    syn::custom_keyword!(free);
    syn::custom_keyword!(all_reduce);
    syn::custom_keyword!(broadcast);
    syn::custom_keyword!(all_gather);
    syn::custom_keyword!(reduce_scatter);
    syn::custom_keyword!(send);
    syn::custom_keyword!(recv);
    syn::custom_keyword!(to);
}

/// `on s1 { ops }`: operations queued on stream `s1`, in order.
pub struct OnBlock {
    /// The `on`, where errors about the block point.
    pub on_token: kw::on,
    /// The stream's name.
    pub stream: Ident,
    /// `on lanes[c % s] { ... }`: which stream of a set.
    pub index: Option<Expr>,
    /// The ops, in the order written.
    pub ops: Vec<OpDef>,
}

impl Parse for OnBlock {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let on_token = input.parse()?;
        let stream = input.parse()?;
        let index = super::decl::parse_count(input)?;
        let body;
        syn::braced!(body in input);
        let mut ops = Vec::new();
        while !body.is_empty() {
            skip_doc_comments(&body)?;
            if body.peek(kw::on) {
                return Err(body.error(
                    "stream blocks do not nest\n\nhelp: close this block before opening another",
                ));
            }
            if !OpDef::peek(&body) {
                return Err(body.error(
                    "expected an operation\n\nhelp: a stream block holds `copy`, `fill`, `launch`, \
                     `record`, `wait`, `alloc`, `free` and the collectives (`all_reduce`, `broadcast`, \
                     `all_gather`, `reduce_scatter`, `send`, `recv`); declarations go outside it",
                ));
            }
            ops.push(body.parse()?);
        }
        Ok(OnBlock {
            on_token,
            stream,
            index,
            ops,
        })
    }
}

/// One operation, as written: the first of an op's stages. It keeps the
/// user's tokens (names, ranges, expressions) for errors to point at; the
/// IR's [`OpKind`](crate::ir::OpKind) resolves them.
pub enum OpDef {
    /// `copy a[0..n] -> da;`
    Copy {
        /// The `copy` keyword, where the op's errors point.
        copy_token: kw::copy,
        /// What it copies from.
        src: Place,
        /// What it copies to.
        dst: Place,
    },
    /// `fill dc with 0.0;`
    Fill {
        /// The `fill` keyword, where the op's errors point.
        fill_token: kw::fill,
        /// What it fills.
        dst: Place,
        /// The value each element gets.
        value: Expr,
    },
    /// `launch vadd<<<grid, block, shared>>>(args);`
    Launch(LaunchDef),
    /// `record loaded;` or `record freed[c % r];`
    Record {
        /// The `record` keyword, where the op's errors point.
        record_token: kw::record,
        /// The event's name.
        event: Ident,
        /// Which event of a set.
        index: Option<Expr>,
    },
    /// `wait loaded;` or `wait freed[c % r];`
    Wait {
        /// The `wait` keyword, where the op's errors point.
        wait_token: kw::wait,
        /// The event's name.
        event: Ident,
        /// Which event of a set.
        index: Option<Expr>,
    },
    /// `sync s1;` or `sync all;`
    Sync {
        /// The `sync` keyword, where the op's errors point.
        sync_token: kw::sync,
        /// The stream; `None` for `sync all`.
        stream: Option<Ident>,
    },
    /// `alloc tmp: [f32; n];` (stream-ordered)
    Alloc {
        /// The `alloc` keyword, where the op's errors point.
        alloc_token: kw::alloc,
        /// The buffer it allocates, declared in place.
        buffer: BufferDef,
    },
    /// `free tmp;`
    Free {
        /// The `free` keyword, where the op's errors point.
        free_token: kw::free,
        /// The buffer's name.
        buffer: Ident,
    },
    /// `host(&a, &mut b) { ... }`: Rust code run on the CPU.
    Host(HostStepDef),
    /// `all_reduce sum part[i];`, `send a[i] to 1;` and the other NCCL
    /// collectives.
    Collective(CollectiveDef),
}

impl OpDef {
    /// Whether the input starts an operation.
    pub fn peek(input: ParseStream) -> bool {
        input.peek(kw::copy)
            || input.peek(kw::fill)
            || input.peek(kw::launch)
            || input.peek(kw::record)
            || input.peek(kw::wait)
            || input.peek(kw::sync)
            || input.peek(kw::alloc)
            || input.peek(kw::free)
            || CollectiveDef::peek(input)
            || (input.peek(kw::host)
                && (input.peek2(syn::token::Paren) || input.peek2(syn::token::Brace)))
    }

    /// The token that starts the op, where its errors and location point.
    pub fn span(&self) -> Span {
        match self {
            OpDef::Copy { copy_token, .. } => copy_token.span,
            OpDef::Fill { fill_token, .. } => fill_token.span,
            OpDef::Launch(launch) => launch.launch_token.span,
            OpDef::Record { record_token, .. } => record_token.span,
            OpDef::Wait { wait_token, .. } => wait_token.span,
            OpDef::Sync { sync_token, .. } => sync_token.span,
            OpDef::Alloc { alloc_token, .. } => alloc_token.span,
            OpDef::Free { free_token, .. } => free_token.span,
            OpDef::Host(step) => step.host_token.span,
            OpDef::Collective(collective) => collective.span,
        }
    }
}

impl Parse for OpDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let op = if input.peek(kw::copy) {
            let copy_token = input.parse()?;
            let src = input.parse()?;
            if !input.peek(Token![->]) {
                return Err(input
                    .error("expected `->`\n\nhelp: a copy reads `copy source -> destination;`"));
            }
            input.parse::<Token![->]>()?;
            let dst = input.parse()?;
            OpDef::Copy {
                copy_token,
                src,
                dst,
            }
        } else if input.peek(kw::fill) {
            let fill_token = input.parse()?;
            let dst = input.parse()?;
            if !input.peek(kw::with) {
                return Err(
                    input.error("expected `with`\n\nhelp: a fill reads `fill buffer with value;`")
                );
            }
            input.parse::<kw::with>()?;
            let value = input.parse()?;
            OpDef::Fill {
                fill_token,
                dst,
                value,
            }
        } else if input.peek(kw::launch) {
            OpDef::Launch(input.parse()?)
        } else if input.peek(kw::record) {
            OpDef::Record {
                record_token: input.parse()?,
                event: input.parse()?,
                index: super::decl::parse_count(input)?,
            }
        } else if input.peek(kw::wait) {
            OpDef::Wait {
                wait_token: input.parse()?,
                event: input.parse()?,
                index: super::decl::parse_count(input)?,
            }
        } else if input.peek(kw::sync) {
            let sync_token = input.parse()?;
            let stream = if input.parse::<Option<kw::all>>()?.is_some() {
                None
            } else {
                Some(input.parse()?)
            };
            OpDef::Sync { sync_token, stream }
        } else if input.peek(kw::alloc) {
            OpDef::Alloc {
                alloc_token: input.parse()?,
                buffer: BufferDef::parse(input, false)?,
            }
        } else if input.peek(kw::free) {
            OpDef::Free {
                free_token: input.parse()?,
                buffer: input.parse()?,
            }
        } else if CollectiveDef::peek(input) {
            OpDef::Collective(input.parse()?)
        } else {
            // A host step ends with its block, not a semicolon.
            return input.parse().map(OpDef::Host);
        };
        input.parse::<Token![;]>()?;
        Ok(op)
    }
}

/// A buffer, or a range of one: `a`, `a[..]`, `a[0..n / 2]`, `a[n / 2..]`;
/// for a set of buffers, which one first: `ring[c % r]`, `ring[c % r][..len]`;
/// in a loop, a named range: `a[r]`, `ring[c % r][r]`.
pub struct Place {
    /// The buffer's name.
    pub name: Ident,
    /// The index into a set of buffers (or, in a loop, a range's name).
    pub index: Option<Expr>,
    /// The range expression inside the brackets.
    pub range: Option<syn::ExprRange>,
    /// A range's name after an index: `ring[c % r][r]`.
    pub named: Option<Ident>,
}

impl Parse for Place {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        let mut place = Place {
            name,
            index: None,
            range: None,
            named: None,
        };
        while input.peek(syn::token::Bracket) && place.range.is_none() && place.named.is_none() {
            let content;
            syn::bracketed!(content in input);
            match content.parse::<Expr>()? {
                Expr::Range(range) => place.range = Some(range),
                index if place.index.is_none() => place.index = Some(index),
                Expr::Path(path) if path.path.get_ident().is_some() => {
                    place.named = path.path.get_ident().cloned();
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected a range\n\nhelp: index buffers with ranges such as `[0..n]`, `[i..]` or `[..]`",
                    ));
                }
            }
        }
        Ok(place)
    }
}

/// `launch vadd<<<grid, block, shared>>>(args);`
pub struct LaunchDef {
    /// The `launch` keyword, where the op's errors point.
    pub launch_token: kw::launch,
    /// The kernel's name.
    pub kernel: Ident,
    /// The grid's dimensions: a size, a tuple of two or three, or any
    /// expression that converts to `Dim3`.
    pub grid: Expr,
    /// The block's dimensions, written as the grid's.
    pub block: Expr,
    /// The bytes of dynamic shared memory, if given.
    pub shared: Option<Expr>,
    /// The arguments, in order.
    pub args: Vec<Expr>,
    /// The parentheses around the arguments, for count errors.
    pub args_span: Span,
}

impl Parse for LaunchDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let launch_token = input.parse()?;
        let kernel = input.parse()?;
        let open = input.span();
        if !(input.peek(Token![<<]) && input.peek3(Token![<])) {
            return Err(syn::Error::new(
                open,
                "expected `<<<`\n\nhelp: a launch reads `launch kernel<<<grid, block>>>(args);`",
            ));
        }
        input.parse::<Token![<<]>()?;
        input.parse::<Token![<]>()?;
        let config = take_until_triple_gt(input)?;
        let exprs = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(config)?;
        let mut exprs = exprs.into_iter();
        let (Some(grid), Some(block)) = (exprs.next(), exprs.next()) else {
            return Err(syn::Error::new(
                open,
                "a launch needs a grid and a block size: `<<<grid, block>>>` or `<<<grid, block, shared_bytes>>>`",
            ));
        };
        let shared = exprs.next();
        if let Some(extra) = exprs.next() {
            return Err(syn::Error::new_spanned(
                extra,
                "a launch configuration has at most three parts: grid, block, shared memory bytes\n\n\
                 help: the stream is the one of the enclosing `on` block",
            ));
        }
        let content;
        let parens = syn::parenthesized!(content in input);
        let args = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        Ok(LaunchDef {
            launch_token,
            kernel,
            grid,
            block,
            shared,
            args,
            args_span: parens.span.join(),
        })
    }
}

/// The tokens up to `>>>`, which the cursor then steps over. Expressions
/// cannot be parsed directly: `256>>>` would read as a shift.
fn take_until_triple_gt(input: ParseStream) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut tokens = TokenStream::new();
        loop {
            if let Some(after) = triple_gt(rest) {
                return Ok((tokens, after));
            }
            match rest.token_tree() {
                Some((tree, next)) => {
                    tokens.extend([tree]);
                    rest = next;
                }
                None => {
                    return Err(cursor.error("expected `>>>` to close the launch configuration"));
                }
            }
        }
    })
}

fn triple_gt(cursor: syn::buffer::Cursor) -> Option<syn::buffer::Cursor> {
    let mut rest = cursor;
    for _ in 0..3 {
        let (punct, next) = rest.punct()?;
        if punct.as_char() != '>' {
            return None;
        }
        rest = next;
    }
    Some(rest)
}

/// `host(&a, &mut b) { ... }` or `host { ... }`.
pub struct HostStepDef {
    /// The `host` keyword, where the step's errors point.
    pub host_token: kw::host,
    /// The buffers it borrows, in the order written.
    pub params: Vec<HostParamDef>,
    /// Its code.
    pub body: Block,
}

/// `&a` (the step reads `a`), `&mut a` (reads and writes it, as in Rust)
/// or `&out a` (only writes it).
pub struct HostParamDef {
    /// How the step borrows the buffer.
    pub access: SliceAccess,
    /// The buffer's name.
    pub name: Ident,
}

impl Parse for HostStepDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let host_token = input.parse()?;
        let mut params = Vec::new();
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            for param in Punctuated::<HostParamDef, Token![,]>::parse_terminated(&content)? {
                params.push(param);
            }
        }
        let body = input.parse()?;
        Ok(HostStepDef {
            host_token,
            params,
            body,
        })
    }
}

impl Parse for HostParamDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if !input.peek(Token![&]) {
            return Err(input.error(
                "expected `&buffer`, `&mut buffer` or `&out buffer`\n\n\
                 help: a host step lists the plan buffers it reads (`&a`), reads and writes \
                 (`&mut b`) and only writes (`&out c`)",
            ));
        }
        let ampersand = input.parse::<Token![&]>()?;
        let access = SliceAccess::parse_after_ampersand(input)?;
        if access == SliceAccess::Atomic {
            return Err(syn::Error::new(
                ampersand.span,
                "a host step borrows a buffer `&`, `&mut` or `&out`\n\n\
                 help: `&atomic` is for a kernel's parameters, whose source updates them atomically",
            ));
        }
        let name = input.parse()?;
        Ok(HostParamDef { access, name })
    }
}

/// Which collective, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveWord {
    /// `all_reduce`.
    AllReduce,
    /// `broadcast`.
    Broadcast,
    /// `all_gather`.
    AllGather,
    /// `reduce_scatter`.
    ReduceScatter,
    /// `send`.
    Send,
    /// `recv`.
    Recv,
}

impl CollectiveWord {
    /// The word as the plan writes it.
    pub fn text(self) -> &'static str {
        match self {
            CollectiveWord::AllReduce => "all_reduce",
            CollectiveWord::Broadcast => "broadcast",
            CollectiveWord::AllGather => "all_gather",
            CollectiveWord::ReduceScatter => "reduce_scatter",
            CollectiveWord::Send => "send",
            CollectiveWord::Recv => "recv",
        }
    }
}

/// One rank's part of an NCCL collective:
/// - `all_reduce sum part[i];` (in place) or `all_reduce sum a[i] -> b[i];`
/// - `broadcast part[i] from 0;` or `broadcast a[i] -> b[i] from 0;`
/// - `all_gather a[i] -> b[i];`, `reduce_scatter sum a[i] -> b[i];`
/// - `send a[i] to (i + 1) % g;`, `recv b[i] from (i + g - 1) % g;`
pub struct CollectiveDef {
    /// Which collective.
    pub word: CollectiveWord,
    /// The collective's word, where its errors point.
    pub span: Span,
    /// `sum`, `prod`, `min`, `max` or `avg`, for the reductions.
    pub reduce: Option<Ident>,
    /// What it sends (or, in place, sends and receives; for `recv`, what
    /// it receives).
    pub first: Place,
    /// `-> b`: what it receives, when that is another place.
    pub second: Option<Place>,
    /// The root of a broadcast, the peer of a send or receive: a rank.
    pub rank: Option<Expr>,
}

impl CollectiveDef {
    /// Whether `input` starts a collective.
    pub fn peek(input: ParseStream) -> bool {
        input.peek(kw::all_reduce)
            || input.peek(kw::broadcast)
            || input.peek(kw::all_gather)
            || input.peek(kw::reduce_scatter)
            || input.peek(kw::send)
            || input.peek(kw::recv)
    }
}

impl Parse for CollectiveDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let keyword: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        let span = keyword.span();
        let word = match keyword.to_string().as_str() {
            "all_reduce" => CollectiveWord::AllReduce,
            "broadcast" => CollectiveWord::Broadcast,
            "all_gather" => CollectiveWord::AllGather,
            "reduce_scatter" => CollectiveWord::ReduceScatter,
            "send" => CollectiveWord::Send,
            _ => CollectiveWord::Recv,
        };
        let reduce = match word {
            CollectiveWord::AllReduce | CollectiveWord::ReduceScatter => {
                let op: Ident = input.parse().map_err(|_| {
                    input.error(format!(
                        "expected a reduction\n\nhelp: `{} sum ...;`, or `prod`, `min`, `max`, `avg`",
                        word.text()
                    ))
                })?;
                if !["sum", "prod", "min", "max", "avg"].contains(&op.to_string().as_str()) {
                    return Err(syn::Error::new(
                        op.span(),
                        format!(
                            "`{op}` is not a reduction NCCL does\n\nhelp: write `sum`, `prod`, `min`, `max` or `avg`"
                        ),
                    ));
                }
                Some(op)
            }
            _ => None,
        };
        let first = input.parse()?;
        let second = match word {
            CollectiveWord::Send | CollectiveWord::Recv => None,
            _ if input.peek(Token![->]) => {
                input.parse::<Token![->]>()?;
                Some(input.parse()?)
            }
            CollectiveWord::AllGather | CollectiveWord::ReduceScatter => {
                return Err(input.error(format!(
                    "expected `->`\n\nhelp: `{}` reads one buffer and writes another, of another length: `{} a[i] -> b[i];`",
                    word.text(),
                    if word == CollectiveWord::ReduceScatter { "reduce_scatter sum" } else { "all_gather" }
                )));
            }
            _ => None,
        };
        let rank = match word {
            CollectiveWord::Broadcast | CollectiveWord::Recv => {
                if !input.peek(kw::from) {
                    return Err(input.error(format!(
                        "expected `from`\n\nhelp: say which rank {}: `{} ... from 0;`",
                        if word == CollectiveWord::Recv {
                            "it receives from"
                        } else {
                            "broadcasts"
                        },
                        word.text()
                    )));
                }
                input.parse::<kw::from>()?;
                Some(input.parse()?)
            }
            CollectiveWord::Send => {
                if !input.peek(kw::to) {
                    return Err(input.error(
                        "expected `to`\n\nhelp: say which rank it sends to: `send a[i] to (i + 1) % g;`",
                    ));
                }
                input.parse::<kw::to>()?;
                Some(input.parse()?)
            }
            _ => None,
        };
        Ok(CollectiveDef {
            word,
            span,
            reduce,
            first,
            second,
            rank,
        })
    }
}

impl OpDef {
    /// The op as a person would write it, for error messages, reports and
    /// diagrams: `copy a[0..n / 2] -> da`.
    pub fn label(&self) -> String {
        label(self)
    }
}

fn label(op: &OpDef) -> String {
    match op {
        OpDef::Copy { src, dst, .. } => format!("copy {} -> {}", place(src), place(dst)),
        OpDef::Fill { dst, value, .. } => format!("fill {} with {}", place(dst), tokens(value)),
        OpDef::Launch(launch) => format!("launch {}", launch.kernel),
        OpDef::Record { event, index, .. } => format!("record {event}{}", indexed(index)),
        OpDef::Wait { event, index, .. } => format!("wait {event}{}", indexed(index)),
        OpDef::Sync {
            stream: Some(stream),
            ..
        } => format!("sync {stream}"),
        OpDef::Sync { stream: None, .. } => "sync all".to_owned(),
        OpDef::Alloc { buffer, .. } => format!("alloc {}", buffer.name),
        OpDef::Free { buffer, .. } => format!("free {buffer}"),
        OpDef::Host(step) => {
            let params: Vec<String> = step
                .params
                .iter()
                .map(|p| format!("&{}{}", p.access.spelled(), p.name))
                .collect();
            format!("host({})", params.join(", "))
        }
        OpDef::Collective(c) => {
            let reduce = c
                .reduce
                .as_ref()
                .map(|op| format!(" {op}"))
                .unwrap_or_default();
            let second = c
                .second
                .as_ref()
                .map(|p| format!(" -> {}", place(p)))
                .unwrap_or_default();
            let rank = match (&c.rank, c.word) {
                (Some(rank), CollectiveWord::Send) => {
                    format!(" to {}", tokens(rank))
                }
                (Some(rank), _) => format!(" from {}", tokens(rank)),
                (None, _) => String::new(),
            };
            format!(
                "{}{reduce} {}{second}{rank}",
                c.word.text(),
                place(&c.first)
            )
        }
    }
}

fn place(place: &Place) -> String {
    let name = format!("{}{}", place.name, indexed(&place.index));
    match (&place.range, &place.named) {
        (Some(range), _) => format!("{name}[{}]", tokens(range)),
        (None, Some(named)) => format!("{name}[{named}]"),
        (None, None) => name,
    }
}

/// `[c % r]` of an element of a set, or nothing.
fn indexed(index: &Option<syn::Expr>) -> String {
    index
        .as_ref()
        .map(|index| format!("[{}]", tokens(index)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_written() {
        let op: OpDef = syn::parse_str("copy a[0 .. n / 2] -> da[n/2..];").unwrap();
        assert_eq!(op.label(), "copy a[0..n / 2] -> da[n / 2..]");
        let op: OpDef = syn::parse_str("host(&a, &mut b, &out c) { }").unwrap();
        assert_eq!(op.label(), "host(&a, &mut b, &out c)");
        let op: OpDef = syn::parse_str("fill d with f(1, 2);").unwrap();
        assert_eq!(op.label(), "fill d with f(1, 2)");
        let op: OpDef = syn::parse_str("fill d[0..n / (2 * m)] with g(1);").unwrap();
        assert_eq!(op.label(), "fill d[0..n / (2 * m)] with g(1)");
        let op: OpDef = syn::parse_str("all_reduce sum part[i];").unwrap();
        assert_eq!(op.label(), "all_reduce sum part[i]");
        let op: OpDef = syn::parse_str("send a[i][0..n] to (i + 1) % g;").unwrap();
        assert_eq!(op.label(), "send a[i][0..n] to (i + 1) % g");
        let op: OpDef = syn::parse_str("broadcast a[i] -> b[i] from 0;").unwrap();
        assert_eq!(op.label(), "broadcast a[i] -> b[i] from 0");
        let op: OpDef = syn::parse_str("copy a[1 ..= 2] -> b[..= n];").unwrap();
        assert_eq!(op.label(), "copy a[1..=2] -> b[..=n]");
    }
}
