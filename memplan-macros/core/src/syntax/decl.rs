//! Declarations: kernels, host and device buffers, streams, events.

use super::kw;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, LitInt, LitStr, Path, Token, Type};

/// `kernel vadd(a: &[f32; n], b: &[f32; n], c: &out [f32; n], n: i32) from memplan_kernels::VECTOR_ADD;`,
/// optionally `unsafe` (not checked against the C++) and with the C++
/// name after `as` (`from MODULE as "scale<float>";`).
pub struct KernelDecl {
    /// `unsafe`, if written: the kernel is not checked against the C++.
    pub unsafe_token: Option<Token![unsafe]>,
    /// The `kernel` keyword, where errors about the declaration point.
    pub kernel_token: kw::kernel,
    /// The kernel's name in the plan.
    pub name: Ident,
    /// Its parameters, in order.
    pub params: Vec<KernelParamDef>,
    /// The module's path, `memplan_kernels::VECTOR_ADD`: an `Image` that
    /// `include_kernels!` made.
    pub module: Path,
    /// The C++ name (or, `unsafe`, the symbol) when it is not `name`.
    pub cpp_name: Option<LitStr>,
}

impl KernelDecl {
    /// Whether `input` starts a kernel declaration.
    pub fn peek(input: ParseStream) -> bool {
        input.peek(kw::kernel) || (input.peek(Token![unsafe]) && input.peek2(kw::kernel))
    }
}

impl Parse for KernelDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let unsafe_token = input.parse()?;
        let kernel_token = input.parse()?;
        let name = input.parse()?;
        let content;
        syn::parenthesized!(content in input);
        let params = Punctuated::<KernelParamDef, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        if !input.peek(kw::from) {
            return Err(input.error(
                "expected `from` and the module that holds the kernel\n\n\
                 help: write `kernel name(...) from memplan_kernels::MODULE;`",
            ));
        }
        input.parse::<kw::from>()?;
        let module = input.parse()?;
        let cpp_name = match input.parse::<Option<Token![as]>>()? {
            Some(_) => Some(input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the kernel's C++ name as a string\n\n\
                     help: write `as \"scale<float>\"`",
                )
            })?),
            None => None,
        };
        input.parse::<Token![;]>()?;
        Ok(KernelDecl {
            unsafe_token,
            kernel_token,
            name,
            params,
            module,
            cpp_name,
        })
    }
}

/// A kernel parameter: a pointer with its access (`&[T]` reads, `&mut [T]`
/// reads and writes, `&out [T]` only writes) or a value (`n: i32`).
pub struct KernelParamDef {
    /// The parameter's name.
    pub name: Ident,
    /// Its type.
    pub ty: KernelParamTy,
}

/// The type of a kernel parameter.
pub enum KernelParamTy {
    /// A buffer: `&[T]`, `&mut [T]`, `&out [T]` or `&atomic [T]`, with or
    /// without an extent.
    Slice {
        /// The `&`, where errors about the type point.
        and_token: Token![&],
        /// What follows the `&`: what the kernel may do with the buffer.
        access: SliceAccess,
        /// `T`, the element type.
        elem: Type,
        /// `n` in `&[f32; n]`: how many elements from its start the kernel
        /// touches, in terms of its value parameters.
        extent: Option<Expr>,
    },
    /// A value of a type, passed by copy (`n: i32`).
    Value(Type),
}

/// How a kernel or host step may use a buffer, by what follows its `&`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceAccess {
    /// `&`: reads.
    Read,
    /// `&mut`: reads and writes.
    ReadWrite,
    /// `&out`: only writes.
    Write,
    /// `&atomic`: reads and writes with atomic operations only, which
    /// do not conflict with each other (a kernel's contract says so).
    Atomic,
}

impl SliceAccess {
    /// What follows a `&`: `mut`, `out`, `atomic` or nothing.
    pub(crate) fn parse_after_ampersand(input: ParseStream) -> syn::Result<SliceAccess> {
        Ok(if input.parse::<Option<Token![mut]>>()?.is_some() {
            SliceAccess::ReadWrite
        } else if input.parse::<Option<kw::out>>()?.is_some() {
            SliceAccess::Write
        } else if input.peek(kw::atomic)
            && (input.peek2(syn::token::Bracket) || input.peek2(syn::Ident))
        {
            // `atomic` then a type or a name: a buffer called `atomic`
            // is borrowed `&atomic` alone.
            input.parse::<kw::atomic>()?;
            SliceAccess::Atomic
        } else {
            SliceAccess::Read
        })
    }

    /// `mut `, `out `, `atomic ` or nothing: what follows a `&` as written.
    pub fn spelled(self) -> &'static str {
        match self {
            SliceAccess::Read => "",
            SliceAccess::ReadWrite => "mut ",
            SliceAccess::Write => "out ",
            SliceAccess::Atomic => "atomic ",
        }
    }
}

impl Parse for KernelParamDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        if !input.peek(Token![&]) {
            return Ok(KernelParamDef {
                name,
                ty: KernelParamTy::Value(input.parse()?),
            });
        }
        let and_token = input.parse()?;
        let access = SliceAccess::parse_after_ampersand(input)?;
        let content;
        syn::bracketed!(content in input);
        let elem = content.parse()?;
        let extent = match content.parse::<Option<Token![;]>>()? {
            Some(_) => Some(content.parse()?),
            None => None,
        };
        if !content.is_empty() {
            return Err(content.error(
                "a kernel parameter is a slice `[T]`, or `[T; extent]` with the elements it \
                 touches\n\n\
                 help: write the extent in terms of the kernel's integer parameters: `[f32; n]`",
            ));
        }
        Ok(KernelParamDef {
            name,
            ty: KernelParamTy::Slice {
                and_token,
                access,
                elem,
                extent,
            },
        })
    }
}

/// `host a: [f32; n] pinned, b: [f32; n] pageable;` or `device da: [f32; n];`
pub struct BufferDecl {
    /// `host` or `device`.
    pub space: BufferSpace,
    /// The buffers declared, in order.
    pub buffers: Vec<BufferDef>,
}

/// Which memory a buffer declaration allocates.
pub enum BufferSpace {
    /// `host`: memory the host reaches.
    Host(kw::host),
    /// `device`: memory of the GPU.
    Device(kw::device),
}

/// `name: [T; len]`, with a host memory kind for host buffers; `name[r]:
/// [T; len]` for a set of `r` device buffers (a ring).
pub struct BufferDef {
    /// The buffer's name in the plan.
    pub name: Ident,
    /// `[r]` after the name: a set of `r` buffers.
    pub count: Option<Expr>,
    /// `T`, the element type.
    pub elem: Type,
    /// The length, in elements.
    pub len: Expr,
    /// The host memory kind written after the type; `None` for device
    /// memory, and for host memory without one, which is pinned.
    pub host_kind: Option<HostKindDef>,
    /// `on gpu[1]`, `on gpu`: the GPU of device memory.
    pub gpu: Option<PlacementDef>,
}

/// `on gpu[e]` (on GPU `e`), or `on gpu` (a set, element `i` on GPU `i`),
/// after a device buffer or a stream in a plan that declares `gpus gpu[g]`.
pub struct PlacementDef {
    /// The `on`, where errors point.
    pub on_token: kw::on,
    /// The name `gpus` declares.
    pub gpus: Ident,
    /// `e` of `on gpu[e]`; `None` for `on gpu`.
    pub index: Option<Expr>,
}

impl PlacementDef {
    /// `on gpu...` if it comes next.
    pub fn parse_if_next(input: ParseStream) -> syn::Result<Option<PlacementDef>> {
        if !input.peek(kw::on) {
            return Ok(None);
        }
        Ok(Some(PlacementDef {
            on_token: input.parse()?,
            gpus: input.parse()?,
            index: parse_count(input)?,
        }))
    }

    /// The placement as written, where errors point.
    pub fn span(&self) -> proc_macro2::Span {
        let end = match &self.index {
            Some(index) => syn::spanned::Spanned::span(index),
            None => self.gpus.span(),
        };
        self.on_token.span.join(end).unwrap_or(self.on_token.span)
    }
}

/// `gpus gpu[g];`: the plan runs on `g` GPUs, which `new` is given.
pub struct GpusDecl {
    /// The `gpus` keyword, where errors point.
    pub gpus_token: kw::gpus,
    /// The name it declares, `gpu`.
    pub name: Ident,
    /// `g`; `None` when the brackets are missing, which the IR reports.
    pub count: Option<Expr>,
}

impl Parse for GpusDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let gpus_token = input.parse()?;
        let name = input.parse()?;
        let count = parse_count(input)?;
        input.parse::<Token![;]>()?;
        Ok(GpusDecl {
            gpus_token,
            name,
            count,
        })
    }
}

/// `ranks world;`: the plan is one rank of a job of one process per GPU;
/// `new` takes where it stands in the job and joins its communicator.
pub struct RanksDecl {
    /// The `ranks` keyword, where errors point.
    pub ranks_token: kw::ranks,
    /// The name it declares, `world`.
    pub name: Ident,
}

impl Parse for RanksDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let ranks_token = input.parse()?;
        let name = input.parse()?;
        input.parse::<Token![;]>()?;
        Ok(RanksDecl { ranks_token, name })
    }
}

/// `peer gpu;`: kernels may reach every GPU's memory of the plan.
pub struct PeerDecl {
    /// The `peer` keyword, where errors point.
    pub peer_token: kw::peer,
    /// The name of the plan's GPUs, as `gpus` declares it.
    pub gpus: Ident,
}

impl Parse for PeerDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let peer_token = input.parse()?;
        let gpus = input.parse()?;
        input.parse::<Token![;]>()?;
        Ok(PeerDecl { peer_token, gpus })
    }
}

/// How host memory is allocated: `pageable`, `pinned`, `pinned(mapped,
/// write_combined, portable)`, or `mapped` (short for `pinned(mapped)`).
pub struct HostKindDef {
    /// Where the kind is written.
    pub span: proc_macro2::Span,
    /// `pageable`: a `Vec`, not page-locked.
    pub pageable: bool,
    /// `mapped`: mapped into the device's address space.
    pub mapped: bool,
    /// `write_combined`: for the host to write and the device to read.
    pub write_combined: bool,
    /// `portable`: pinned for every context.
    pub portable: bool,
}

impl Parse for BufferDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let space = if input.peek(kw::host) {
            BufferSpace::Host(input.parse()?)
        } else {
            BufferSpace::Device(input.parse()?)
        };
        let is_host = matches!(space, BufferSpace::Host(_));
        let mut buffers = Vec::new();
        loop {
            buffers.push(BufferDef::parse(input, is_host)?);
            if input.parse::<Option<Token![,]>>()?.is_none() {
                break;
            }
        }
        input.parse::<Token![;]>()?;
        Ok(BufferDecl { space, buffers })
    }
}

impl BufferDef {
    /// `name: [T; len]` and, for host memory, an optional kind.
    pub fn parse(input: ParseStream, host: bool) -> syn::Result<Self> {
        let name = input.parse()?;
        let count = parse_count(input)?;
        input.parse::<Token![:]>()?;
        let (elem, len) = parse_array(input)?;
        let ends = |input: ParseStream| {
            input.peek(Token![,]) || input.peek(Token![;]) || input.peek(kw::on)
        };
        let host_kind = if host && !ends(input) {
            Some(input.parse()?)
        } else {
            None
        };
        let gpu = PlacementDef::parse_if_next(input)?;
        Ok(BufferDef {
            name,
            count,
            elem,
            len,
            host_kind,
            gpu,
        })
    }
}

/// `[count]` after a declared name: a set of streams, events or buffers.
pub(crate) fn parse_count(input: ParseStream) -> syn::Result<Option<Expr>> {
    if !input.peek(syn::token::Bracket) {
        return Ok(None);
    }
    let content;
    syn::bracketed!(content in input);
    Ok(Some(content.parse()?))
}

/// `[T; len]`.
fn parse_array(input: ParseStream) -> syn::Result<(Type, Expr)> {
    let content;
    let bracket = syn::bracketed!(content in input);
    let elem = content.parse()?;
    if content.is_empty() {
        return Err(syn::Error::new(
            bracket.span.close(),
            "a buffer needs a length: `[T; len]`\n\nhelp: for example `[f32; n]`, with `n` a plan parameter",
        ));
    }
    content.parse::<Token![;]>()?;
    let len = content.parse()?;
    Ok((elem, len))
}

impl Parse for HostKindDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let span = input.span();
        let mut kind = HostKindDef {
            span,
            pageable: false,
            mapped: false,
            write_combined: false,
            portable: false,
        };
        if input.parse::<Option<kw::pageable>>()?.is_some() {
            kind.pageable = true;
            return Ok(kind);
        }
        if input.parse::<Option<kw::mapped>>()?.is_some() {
            kind.mapped = true;
        } else if input.parse::<Option<kw::pinned>>()?.is_none() {
            return Err(input.error(
                "expected a host memory kind\n\n\
                 help: write `pageable`, `pinned`, `mapped`, or `pinned(...)` with any of \
                 `mapped`, `write_combined`, `portable`",
            ));
        }
        if input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in input);
            for flag in Punctuated::<Ident, Token![,]>::parse_terminated(&content)? {
                match flag.to_string().as_str() {
                    "mapped" => kind.mapped = true,
                    "write_combined" => kind.write_combined = true,
                    "portable" => kind.portable = true,
                    _ => {
                        return Err(syn::Error::new(
                            flag.span(),
                            format!(
                                "unknown pinned memory flag `{flag}`\n\n\
                                 help: the flags are `mapped`, `write_combined` and `portable`"
                            ),
                        ));
                    }
                }
            }
        }
        Ok(kind)
    }
}

/// `stream s1, s2 priority high;`
pub struct StreamDecl {
    /// The streams declared, in order.
    pub streams: Vec<StreamDef>,
}

/// One stream of a `stream` declaration.
pub struct StreamDef {
    /// The stream's name in the plan.
    pub name: Ident,
    /// `stream lanes[s];`: a set of `s` streams.
    pub count: Option<Expr>,
    /// `priority p`, if written.
    pub priority: Option<PriorityDef>,
    /// `on gpu[1]`, `on gpu`: the GPU the stream queues work on.
    pub gpu: Option<PlacementDef>,
}

/// `high`, `normal`, or a CUDA priority number (`-2`).
pub enum PriorityDef {
    /// `high`.
    High(kw::high),
    /// `normal`.
    Normal(kw::normal),
    /// A CUDA priority number, and where it is written.
    Level(i32, proc_macro2::Span),
}

impl Parse for StreamDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<kw::stream>()?;
        let mut streams = Vec::new();
        loop {
            let name = input.parse()?;
            let count = parse_count(input)?;
            // `priority high` and `on gpu[1]`, in either order.
            let (mut priority, mut gpu) = (None, None);
            for _ in 0..2 {
                if priority.is_none() && input.parse::<Option<kw::priority>>()?.is_some() {
                    priority = Some(input.parse()?);
                } else if gpu.is_none() {
                    gpu = PlacementDef::parse_if_next(input)?;
                }
            }
            streams.push(StreamDef {
                name,
                count,
                priority,
                gpu,
            });
            if input.parse::<Option<Token![,]>>()?.is_none() {
                break;
            }
        }
        input.parse::<Token![;]>()?;
        Ok(StreamDecl { streams })
    }
}

impl Parse for PriorityDef {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(kw::high) {
            return input.parse().map(PriorityDef::High);
        }
        if input.peek(kw::normal) {
            return input.parse().map(PriorityDef::Normal);
        }
        let span = input.span();
        let negative = input.parse::<Option<Token![-]>>()?.is_some();
        let level = input.parse::<LitInt>().map_err(|_| {
            syn::Error::new(
                span,
                "expected `high`, `normal` or a CUDA priority number such as `-2`",
            )
        })?;
        let value: i32 = level.base10_parse()?;
        Ok(PriorityDef::Level(
            if negative { -value } else { value },
            span,
        ))
    }
}

/// `event loaded, done, freed[r];`
pub struct EventDecl {
    /// Each event, with its count for a set of events.
    pub events: Vec<(Ident, Option<Expr>)>,
}

impl Parse for EventDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<kw::event>()?;
        let mut events = Vec::new();
        loop {
            let name = input.parse()?;
            events.push((name, parse_count(input)?));
            if input.parse::<Option<Token![,]>>()?.is_none() {
                break;
            }
        }
        input.parse::<Token![;]>()?;
        Ok(EventDecl { events })
    }
}
