//! The plan as the checks and the lowering see it: every name resolved to
//! a declaration, every operation in program order with the stream it runs
//! on, every range symbolic. Syntax nodes are kept wherever a later stage
//! must point at, or re-emit, the user's tokens.

mod access;
mod build;
mod extent;
mod label;

pub use access::{Access, Mode};
pub use build::{RESERVED_PREFIX, build};
pub use extent::{LaunchExtent, provably_past};

use crate::sym::{Atom, Atoms, Sym, SymRange};
use crate::syntax::{CollectiveWord, SliceAccess};
use proc_macro2::Span;
use syn::{Attribute, Block, Expr, ExprRange, Ident, Path, Type, Visibility};

/// A buffer, by its position in [`Plan::buffers`].
pub type BufferId = usize;
/// A stream, by its position in [`Plan::streams`].
pub type StreamId = usize;
/// An event, by its position in [`Plan::events`].
pub type EventId = usize;
/// A kernel, by its position in [`Plan::kernels`].
pub type KernelId = usize;
/// An op, by its position in [`Plan::ops`]: program order.
pub type OpId = usize;

/// One `plan` of a `memplan!`, resolved.
#[derive(Clone)]
pub struct Plan {
    /// The attributes written on the plan (its docs among them), which the
    /// plan's type carries.
    pub attrs: Vec<Attribute>,
    /// The visibility written on the plan, which its type gets.
    pub vis: Visibility,
    /// The plan's name: its type's.
    pub name: Ident,
    /// The parameters, in the order written.
    pub params: Vec<Param>,
    /// Distinct kernel modules, each loaded once.
    pub modules: Vec<Path>,
    /// The kernels it declares.
    pub kernels: Vec<Kernel>,
    /// The buffers it declares, caller slices among them.
    pub buffers: Vec<Buffer>,
    /// The streams it declares.
    pub streams: Vec<Stream>,
    /// The events it declares.
    pub events: Vec<Ident>,
    /// By event: a set of events (`event freed[r];`), or `None`.
    pub event_arrays: Vec<Option<Array>>,
    /// In program order: the order the host issues them.
    pub ops: Vec<Op>,
    /// The `for` loops, each a run of consecutive ops.
    pub loops: Vec<Loop>,
    /// The atoms its sizes are polynomials over, with what is known of each.
    pub atoms: Atoms,
    /// `gpus gpu[g];`: the plan runs on the GPUs `new` is given.
    pub gpus: Option<Gpus>,
    /// `ranks world;`: the plan is one rank of a job of one process per GPU.
    pub ranks: Option<Ranks>,
}

/// `ranks world;`.
#[derive(Clone)]
pub struct Ranks {
    /// The name `ranks` declares.
    pub name: Ident,
    /// The declaration, where errors point.
    pub span: Span,
}

/// `gpus gpu[g];`, and `peer gpu;`.
#[derive(Clone)]
pub struct Gpus {
    /// The name `gpus` declares.
    pub name: Ident,
    /// `g`, as written.
    pub count: Expr,
    /// `gpus gpu[g]`, for people.
    pub label: String,
    /// `g`, as a size.
    pub count_value: Sym,
    /// The declaration, where errors point.
    pub span: Span,
    /// Where `peer gpu;` is written, if it is: kernels may then reach
    /// every GPU's memory.
    pub peer: Option<Span>,
}

/// Which GPU a device buffer or a stream is on.
#[derive(Clone)]
pub enum Placement {
    /// `on gpu`, for a set: element `i` on GPU `i`.
    Each(Span),
    /// `on gpu[e]`: on GPU `e`, a size.
    One {
        /// `e`, as written.
        index: Expr,
        /// `e`, as a size.
        value: Sym,
        /// Where the placement is written.
        span: Span,
    },
}

impl Placement {
    /// Where the placement is written.
    pub fn span(&self) -> Span {
        match self {
            Placement::Each(span) | Placement::One { span, .. } => *span,
        }
    }
}

/// `for c in 0..k { ... }`: its ops, `ops`, are the body for one iteration
/// `c`; `later` is the same body for an iteration `c′` after it, which the
/// checks compare it with.
#[derive(Clone)]
pub struct Loop {
    /// The loop's variable, `c`.
    pub var: Ident,
    /// The atom `c` stands for in sizes.
    pub counter: Atom,
    /// `k`, as written.
    pub count: Expr,
    /// `for c in 0..k`, for people.
    pub label: String,
    /// `k`, as a size.
    pub count_value: Sym,
    /// Whether `k >= 1` whatever the sizes (`0..2`, `0..n + 1`): the body
    /// runs at least once. Otherwise it may run no iterations.
    pub never_empty: bool,
    /// The ops of one iteration's body, in program order.
    pub ops: std::ops::Range<OpId>,
    /// One op for each of `ops`, in a plan without errors (a plan with
    /// them is not checked past `Enforced::Formation`, which does not read
    /// this).
    pub later: Vec<Op>,
    /// What holds of iteration `c`: `c + 1 <= k`, and what computing `k`
    /// guarantees.
    pub facts: Vec<Sym>,
    /// What holds of `c′` besides: `c + 1 <= c′`, `c′ + 1 <= k`.
    pub later_facts: Vec<Sym>,
    /// The `for`, where errors point.
    pub span: Span,
}

impl Loop {
    /// Whether op `op` is in the loop's body.
    pub fn contains(&self, op: OpId) -> bool {
        self.ops.contains(&op)
    }
}

/// A declaration of several: `stream lanes[s]`, `event freed[r]`, `device
/// ring[r]: [f32; m]`. A loop uses one element of it, by one index.
#[derive(Clone)]
pub struct Array {
    /// How many, as written.
    pub count: Expr,
    /// The index the loop uses, as written and as a size.
    pub index: Option<(Expr, Sym)>,
    /// The count and the index as text, for people.
    pub count_text: String,
    /// The index as text, for people.
    pub index_text: Option<String>,
}

/// A parameter of the plan.
#[derive(Clone)]
pub struct Param {
    /// `n` of `n: usize`.
    pub name: Ident,
    /// What kind of parameter it is, and what it became.
    pub kind: ParamKind,
    /// `n: usize`, `x: &mut [f32; n]`, for people.
    pub declared: String,
    /// `run`, as written: `run n: usize`, `run a: f32` is given to each
    /// run, not to `new` (a slice is given to each run already, and may
    /// not say so: `check/formation.rs`).
    pub run: Option<Span>,
    /// `registered`, as written (only a slice may be).
    pub registered: Option<Span>,
    /// `<= cap`, as written (only a size may be bounded).
    pub bound: Option<Bound>,
}

/// `run len: usize <= cap`: every value given is at most `limit`, a size.
/// `new` and each run check it before anything reads the size, and the
/// checks take it as a fact.
#[derive(Clone)]
pub struct Bound {
    /// The `<=`.
    pub span: Span,
    /// The parameter, as a size.
    pub size: Expr,
    /// The bound, `cap` of `<= cap`.
    pub limit: Expr,
    /// `len <= cap`, for people.
    pub label: String,
}

impl Param {
    /// Whether each run gives it, not `new`.
    pub fn per_run(&self) -> bool {
        self.run.is_some()
    }
}

impl Plan {
    /// Whether `name` is a `run` parameter.
    pub fn is_run_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.per_run() && p.name == name)
    }

    /// The bounds of the plan's size parameters (`run len: usize <= cap`).
    pub fn bounds(&self) -> impl Iterator<Item = &Bound> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Size))
            .filter_map(|p| p.bound.as_ref())
    }

    /// The first `run` parameter `expr` mentions, if any.
    pub fn run_param_in(&self, expr: &Expr) -> Option<syn::Path> {
        self.params
            .iter()
            .filter(|p| p.per_run())
            .find_map(|p| crate::sym::mentions(expr, &p.name.to_string()))
    }

    /// The first length of a caller's slice declared without one that
    /// `expr` reads (`xs.len()`, which each run measures), if any.
    pub fn measured_slice_in(&self, expr: &Expr) -> Option<Expr> {
        use syn::visit::{self, Visit};
        struct Find<'a> {
            plan: &'a Plan,
            found: Option<Expr>,
        }
        impl<'ast> Visit<'ast> for Find<'_> {
            fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
                if let Expr::Path(path) = &*call.receiver
                    && call.method == "len"
                    && self.found.is_none()
                    && self.plan.buffers.iter().any(|b| {
                        matches!(b.kind, BufferKind::Param { .. })
                            && b.len_expr.is_none()
                            && path.path.is_ident(&b.name)
                    })
                {
                    self.found = Some(Expr::MethodCall(call.clone()));
                }
                visit::visit_expr_method_call(self, call);
            }
        }
        let mut find = Find {
            plan: self,
            found: None,
        };
        find.visit_expr(expr);
        find.found
    }
}

/// What a plan parameter is.
#[derive(Clone)]
pub enum ParamKind {
    /// `n: usize`: usable in lengths and ranges.
    Size,
    /// `scale: f32`: a value for launches and host steps.
    Value(Type),
    /// `xs: &[f32; n]`: the caller's memory, as the buffer it became.
    Slice(BufferId),
}

/// `kernel name(params) from MODULE;`.
#[derive(Clone)]
pub struct Kernel {
    /// The kernel's name in the plan, which launches use.
    pub name: Ident,
    /// Index into [`Plan::modules`].
    pub module: usize,
    /// Its parameters, in order.
    pub params: Vec<KernelParam>,
    /// `unsafe` in `unsafe kernel`: not checked against the C++.
    pub unchecked: Option<syn::Token![unsafe]>,
    /// The C++ name (the symbol, for an unchecked one) when it is not
    /// `name`: `as "scale<float>"`.
    pub cpp_name: Option<syn::LitStr>,
    /// The declaration has errors of its own (an extent memplan cannot
    /// read, now removed): its check against the C++ would only repeat
    /// them.
    pub misdeclared: bool,
}

/// A parameter of a `kernel` declaration.
#[derive(Clone)]
pub struct KernelParam {
    /// The parameter's name.
    pub name: Ident,
    /// Its type.
    pub kind: KernelParamKind,
}

impl KernelParam {
    /// The parameter's type as declared, for messages and suggestions:
    /// `&[f32]`, `&mut [f32; n]`, `&out [u32]`, `i32`.
    pub fn spelled(&self) -> String {
        match &self.kind {
            KernelParamKind::Slice {
                access,
                elem,
                extent,
            } => {
                let access = access.spelled();
                let extent = extent
                    .as_ref()
                    .map(|extent| format!("; {}", crate::text::text(extent)))
                    .unwrap_or_default();
                format!("&{access}[{}{extent}]", crate::text::text(elem))
            }
            KernelParamKind::Value(ty) => crate::text::text(ty),
        }
    }
}

/// What a kernel parameter takes.
#[derive(Clone)]
pub enum KernelParamKind {
    /// A buffer: `&[T]`, `&mut [T]`, `&out [T]` or `&atomic [T]`, with or
    /// without an extent.
    Slice {
        /// What the declaration lets the kernel do with the buffer.
        access: SliceAccess,
        /// `T`, the element type.
        elem: Type,
        /// `n` of `&[f32; n]`, in the kernel's value parameters.
        extent: Option<Expr>,
    },
    /// A value of a type, passed by copy.
    Value(Type),
}

/// A buffer of the plan: declared, or a caller's slice.
#[derive(Clone)]
pub struct Buffer {
    /// The buffer's name in the plan.
    pub name: Ident,
    /// Its element type.
    pub elem: Type,
    /// Its length in elements (of each, for a set), as a size.
    pub len: Sym,
    /// What computing the length guarantees (see [`Place::facts`]).
    pub len_facts: Vec<Sym>,
    /// The length as written; `None` for a caller slice without one.
    pub len_expr: Option<Expr>,
    /// Where its memory comes from.
    pub kind: BufferKind,
    /// Its type as declared, `[f32; n] pinned(mapped)`, for people.
    pub declared: String,
    /// A set of buffers of `len` elements each (a ring).
    pub array: Option<Array>,
    /// The GPU of device memory, in a plan that declares `gpus`.
    pub gpu: Option<Placement>,
}

/// Where a buffer's memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// Host memory the plan allocates.
    Host(HostKind),
    /// A caller's slice, passed to `run`.
    Param {
        /// Whether the caller lends it `&mut`, so that ops may write it.
        mutable: bool,
        /// Whether each run page-locks it (`registered`).
        registered: bool,
    },
    /// `cuMemAlloc`, for the plan's lifetime.
    Device,
    /// `alloc` in a stream block (`cuMemAllocAsync`), until its `free`.
    /// A buffer of device memory, allocated and freed by a stream's ops.
    StreamOrdered {
        /// The op that allocates it.
        alloc: OpId,
    },
}

/// The kind of host memory a plan allocates: pageable, or pinned with
/// `cuMemHostAlloc`'s options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostKind {
    /// A `Vec`: not page-locked, so copies of it are synchronous.
    pub pageable: bool,
    /// Mapped into the device's address space, so that kernels reach it.
    pub mapped: bool,
    /// Write-combined: for the host to write and the device to read.
    pub write_combined: bool,
    /// Pinned for every context, not only the plan's.
    pub portable: bool,
}

impl BufferKind {
    /// Whether it is host memory: the plan's, or a caller's slice.
    pub fn is_host(self) -> bool {
        matches!(self, BufferKind::Host(_) | BufferKind::Param { .. })
    }

    /// Host memory that DMA can use directly (asynchronous copies).
    pub fn is_page_locked(self) -> bool {
        match self {
            BufferKind::Host(kind) => !kind.pageable,
            BufferKind::Param { registered, .. } => registered,
            _ => false,
        }
    }

    /// Memory a kernel can dereference.
    pub fn is_device_reachable(self) -> bool {
        match self {
            BufferKind::Host(kind) => kind.mapped,
            BufferKind::Param { .. } => false,
            BufferKind::Device | BufferKind::StreamOrdered { .. } => true,
        }
    }

    /// Whether it is write-combined host memory, which the host should never
    /// read.
    pub fn is_write_combined(self) -> bool {
        matches!(self, BufferKind::Host(kind) if kind.write_combined)
    }

    /// Whether the host wrote it before the run (plan host memory and
    /// caller slices), as opposed to device memory nothing wrote yet.
    pub fn starts_initialized(self) -> bool {
        self.is_host()
    }

    /// Whether ops may write it (a caller's `&[T]` may not be written).
    pub fn is_writable(self) -> bool {
        !matches!(self, BufferKind::Param { mutable: false, .. })
    }
}

/// `stream name priority p;`, or a set of streams.
#[derive(Clone)]
pub struct Stream {
    /// The stream's name in the plan.
    pub name: Ident,
    /// The priority it is created with.
    pub priority: Priority,
    /// A set of streams (`stream lanes[s];`).
    pub array: Option<Array>,
    /// Its GPU, in a plan that declares `gpus`.
    pub gpu: Option<Placement>,
}

/// A stream's scheduling priority, as the plan writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// The device's default.
    Normal,
    /// The highest priority the device offers.
    High,
    /// A raw CUDA priority, which the driver clamps to the device's range.
    Level(i32),
}

/// One op of the plan, resolved.
#[derive(Clone)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// Where it runs.
    pub lane: Lane,
    /// The op's keyword: where errors point and where its location is.
    pub span: Span,
    /// The op as written, `copy a[0..n/2] -> da`.
    pub label: String,
}

/// Where an op runs: on the host, in program order, or queued on a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// The host.
    Host,
    /// The stream, by number.
    Stream(StreamId),
}

/// What an op does, with every name resolved to its declaration and every
/// range symbolic: over the syntax's [`OpDef`](crate::syntax::OpDef) it
/// adds the buffers, streams, events and kernels named, the ranges as
/// sizes the checks reason with, and each launch's extents. The lowering
/// maps it to `memplan_model::Op`, which the runtime runs.
#[derive(Clone)]
pub enum OpKind {
    /// `copy src -> dst`.
    Copy {
        /// The place copied from.
        src: Place,
        /// The place copied to.
        dst: Place,
    },
    /// `fill dst with value`.
    Fill {
        /// The place filled.
        dst: Place,
        /// The value, as written.
        value: Expr,
    },
    /// `launch k<<<grid, block>>>(args)`.
    Launch(Launch),
    /// `record e`, on the op's stream.
    Record(EventId),
    /// `wait e`: the op's stream waits for the event.
    Wait(EventId),
    /// `sync s` (`Some`) or `sync all` (`None`).
    Sync(Option<StreamId>),
    /// `alloc b`: stream-ordered buffer `b` allocated on the op's stream.
    Alloc(BufferId),
    /// `free b`: stream-ordered buffer `b` freed on the op's stream.
    Free(BufferId),
    /// A host step: Rust code the host runs, in program order, with the
    /// buffers it names.
    Host {
        /// The buffers it borrows, as its list names them.
        params: Vec<HostParam>,
        /// Its code.
        body: Block,
    },
    /// An NCCL collective, one rank's part on the op's stream.
    Collective(Collective),
}

impl OpKind {
    /// The buffers and ranges the op names, in the order it names them
    /// (a collective in place names its one place once).
    pub fn places(&self) -> Vec<&Place> {
        match self {
            OpKind::Copy { src, dst } => vec![src, dst],
            OpKind::Fill { dst, .. } => vec![dst],
            OpKind::Launch(launch) => (launch.args.iter())
                .filter_map(|arg| match arg {
                    Arg::Buffer(place) => Some(place),
                    Arg::Value(_) => None,
                })
                .collect(),
            OpKind::Collective(collective) => collective.places(),
            OpKind::Record(_)
            | OpKind::Wait(_)
            | OpKind::Sync(_)
            | OpKind::Alloc(_)
            | OpKind::Free(_)
            | OpKind::Host { .. } => Vec::new(),
        }
    }
}

impl Op {
    /// The op naming other declarations: declaration `d` of each kind
    /// becomes `streams[d]`, `events[d]`, `buffers[d]`.
    pub fn rename(&mut self, streams: &[StreamId], events: &[EventId], buffers: &[BufferId]) {
        if let Lane::Stream(stream) = &mut self.lane {
            *stream = streams[*stream];
        }
        match &mut self.kind {
            OpKind::Copy { src, dst } => {
                src.buffer = buffers[src.buffer];
                dst.buffer = buffers[dst.buffer];
            }
            OpKind::Fill { dst, .. } => dst.buffer = buffers[dst.buffer],
            OpKind::Launch(launch) => {
                for arg in &mut launch.args {
                    if let Arg::Buffer(place) = arg {
                        place.buffer = buffers[place.buffer];
                    }
                }
            }
            OpKind::Record(event) | OpKind::Wait(event) => *event = events[*event],
            OpKind::Sync(Some(stream)) => *stream = streams[*stream],
            OpKind::Alloc(buffer) | OpKind::Free(buffer) => *buffer = buffers[*buffer],
            OpKind::Collective(collective) => {
                for place in collective.places_mut() {
                    place.buffer = buffers[place.buffer];
                }
                if collective.in_place {
                    collective.send.buffer = collective.recv.buffer;
                }
            }
            OpKind::Host { params, .. } => {
                for param in params {
                    param.buffer = buffers[param.buffer];
                }
            }
            OpKind::Sync(None) => {}
        }
    }
}

/// One rank's part of an NCCL collective, on the op's stream.
#[derive(Clone)]
pub struct Collective {
    /// Which collective: `all_reduce`, `broadcast`, `send`...
    pub word: CollectiveWord,
    /// `sum`, `prod`, `min`, `max` or `avg`, for the reductions.
    pub reduce: Option<Ident>,
    /// What it reads, and what it writes (`recv`): one place when it works
    /// in place, and for `send` and `recv`, their one buffer.
    pub send: Place,
    /// The place it writes; the same as `send` when it works in place.
    pub recv: Place,
    /// Written without `->`.
    pub in_place: bool,
    /// A broadcast's root, a send's or receive's peer: a rank, a size.
    pub rank: Option<Expr>,
    /// Consecutive collectives of a stream block share a number: each
    /// rank's parts of them are queued as one NCCL group.
    pub group: usize,
}

impl Collective {
    /// Its places, each once.
    pub fn places(&self) -> Vec<&Place> {
        if self.in_place {
            vec![&self.recv]
        } else {
            vec![&self.send, &self.recv]
        }
    }

    /// Its places, each once, for renaming.
    pub fn places_mut(&mut self) -> Vec<&mut Place> {
        if self.in_place {
            vec![&mut self.recv]
        } else {
            vec![&mut self.send, &mut self.recv]
        }
    }
}

/// A buffer or a range of one, as an op names it.
#[derive(Clone)]
pub struct Place {
    /// The buffer.
    pub buffer: BufferId,
    /// The range, as sizes: the whole buffer, for a place without one.
    pub range: SymRange,
    /// What the run time guarantees before the op can run, each a size
    /// that is `<= 0`: the range lies inside its buffer, and no size of it
    /// (or of the buffer's length) underflowed or divided by zero. The
    /// checks may use them in their proofs.
    pub facts: Vec<Sym>,
    /// How many of `facts` come from computing the sizes; the rest say
    /// that the range lies inside its buffer.
    pub computed: usize,
    /// The range as written, if any.
    pub range_expr: Option<ExprRange>,
    /// The range as the plan writes it, for people: `c * m..min(c * m +
    /// m, len)`, or a named range's name; in a loop's later iteration with
    /// its variable `c′`. `None` for a whole buffer.
    pub written: Option<String>,
    /// The buffer or range as written, where errors point.
    pub span: Span,
}

impl Place {
    /// The range for messages: as written where it is, else its sizes.
    pub fn shown(&self, atoms: &crate::sym::Atoms) -> String {
        shown(&self.written, &self.range, atoms)
    }
}

/// `range` for messages: `written` where the plan writes it, else its
/// sizes (a whole buffer, a launch's extent).
pub(crate) fn shown(
    written: &Option<String>,
    range: &SymRange,
    atoms: &crate::sym::Atoms,
) -> String {
    match written {
        Some(written) => written.clone(),
        None => range.display(atoms).to_string(),
    }
}

/// A kernel launch.
#[derive(Clone)]
pub struct Launch {
    /// The kernel.
    pub kernel: KernelId,
    /// The grid's dimensions, as written.
    pub grid: Expr,
    /// The block's dimensions, as written.
    pub block: Expr,
    /// The bytes of dynamic shared memory, as written; `None` for 0.
    pub shared: Option<Expr>,
    /// The arguments, in order.
    pub args: Vec<Arg>,
    /// The argument list, where errors about all of it point.
    pub args_span: Span,
    /// By argument: what a buffer whose parameter states an extent
    /// touches.
    pub extents: Vec<Option<LaunchExtent>>,
    /// By argument: the size a value that an extent names stands for
    /// (`len` of `len as i32`), which `new` checks it equals.
    pub bound: Vec<Option<Expr>>,
    /// By argument: the size a value counts at each iteration of its loop.
    pub counts: Vec<Option<Count>>,
}

/// A value argument of a launch in a loop that reads the loop's variable
/// and is a size cast to an integer type (`(n - c * m) as i32`): the
/// runtime computes it at each iteration and writes it in the parameter's
/// own type (read from the type, so a cast can never make a kernel read
/// more bytes than it is given), refusing a value that does not fit.
#[derive(Clone)]
pub struct Count {
    /// The size, as written.
    pub size: Expr,
    /// The type it is cast to, as written (`usize` without a cast).
    pub cast: String,
    /// That type's tokens, if it is cast: where an error points.
    pub cast_type: Option<Type>,
}

/// The primitive integer types: what a size may be cast to as a launch
/// argument, and what a value parameter that an extent names may be.
pub const INTEGERS: [&str; 10] = [
    "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "isize", "usize",
];

/// A launch argument: a buffer (or range) of the plan, or a value.
#[derive(Clone)]
pub enum Arg {
    /// A buffer of the plan, or a range of one.
    Buffer(Place),
    /// A value, as written.
    Value(Expr),
}

/// A buffer a host step borrows, as its list names it.
#[derive(Clone)]
pub struct HostParam {
    /// The buffer.
    pub buffer: BufferId,
    /// The name as the step's list writes it; the step's code uses it.
    pub name: Ident,
    /// `&` reads, `&mut` reads and writes, `&out` only writes.
    pub access: SliceAccess,
}

impl HostParam {
    /// Whether the step may write the buffer (`&mut` or `&out`).
    pub fn writes(&self) -> bool {
        self.access != SliceAccess::Read
    }

    /// Whether the step may read the buffer (`&` or `&mut`).
    pub fn reads(&self) -> bool {
        self.access != SliceAccess::Write
    }
}

impl Plan {
    /// Every declaration that is a set: of streams, events and buffers.
    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        let streams = self.streams.iter().map(|s| &s.array);
        let buffers = self.buffers.iter().map(|b| &b.array);
        streams.chain(&self.event_arrays).chain(buffers).flatten()
    }

    /// The number of the host step op `index` is, among the plan's host
    /// steps.
    pub fn host_step_number(&self, index: OpId) -> u16 {
        self.ops[..index]
            .iter()
            .filter(|op| matches!(op.kind, OpKind::Host { .. }))
            .count() as u16
    }

    /// Whether the plan has host steps, which may read its sizes and values.
    pub fn has_host_steps(&self) -> bool {
        self.ops
            .iter()
            .any(|op| matches!(op.kind, OpKind::Host { .. }))
    }

    /// The plan with `op` issued just before op `before` (in its loop's
    /// body, for both iterations the checks compare, when `before` is in
    /// one): what a fix would make of it, for the checks to judge.
    pub fn with_op_before(&self, op: Op, before: OpId) -> Plan {
        self.with_op_at(op, before, before)
    }

    /// The plan with `op` issued just after op `after`, in its loop's body
    /// when `after` is in one (at the body's end too).
    pub fn with_op_after(&self, op: Op, after: OpId) -> Plan {
        self.with_op_at(op, after + 1, after)
    }

    /// The plan without op `at` (a `record` a fix moves elsewhere).
    pub fn without_op(&self, at: OpId) -> Plan {
        let mut plan = self.clone();
        for repeat in &mut plan.loops {
            if repeat.ops.contains(&at) {
                repeat.later.remove(at - repeat.ops.start);
                repeat.ops.end -= 1;
            } else if repeat.ops.start > at {
                repeat.ops = repeat.ops.start - 1..repeat.ops.end - 1;
            }
        }
        for buffer in &mut plan.buffers {
            if let BufferKind::StreamOrdered { alloc } = &mut buffer.kind
                && *alloc > at
            {
                *alloc -= 1;
            }
        }
        plan.ops.remove(at);
        plan
    }

    /// `op` inserted at `at`, in the loop of op `beside`, if any.
    fn with_op_at(&self, op: Op, at: OpId, beside: OpId) -> Plan {
        let mut plan = self.clone();
        for repeat in &mut plan.loops {
            if repeat.ops.contains(&beside) {
                repeat.later.insert(at - repeat.ops.start, op.clone());
                repeat.ops.end += 1;
            } else if repeat.ops.start >= at {
                repeat.ops = repeat.ops.start + 1..repeat.ops.end + 1;
            }
        }
        for buffer in &mut plan.buffers {
            if let BufferKind::StreamOrdered { alloc } = &mut buffer.kind
                && *alloc >= at
            {
                *alloc += 1;
            }
        }
        plan.ops.insert(at, op);
        plan
    }

    /// The loop op `op` is in, if any.
    pub fn loop_of(&self, op: OpId) -> Option<&Loop> {
        self.loops.iter().find(|l| l.contains(op))
    }

    /// The name of buffer `id`.
    pub fn buffer_name(&self, id: BufferId) -> String {
        self.buffers[id].name.to_string()
    }

    /// The lane as messages name it: `the host`, or `` stream `s` ``.
    pub fn lane_name(&self, lane: Lane) -> String {
        match lane {
            Lane::Host => "the host".to_owned(),
            Lane::Stream(stream) => format!("stream `{}`", self.streams[stream].name),
        }
    }

    /// Lanes: the host, then each stream.
    pub fn lane_count(&self) -> usize {
        1 + self.streams.len()
    }
}

impl Lane {
    /// Index among the plan's lanes: 0 for the host, 1 + stream id.
    pub fn index(self) -> usize {
        match self {
            Lane::Host => 0,
            Lane::Stream(stream) => 1 + stream,
        }
    }
}
