//! From syntax to IR: resolves every name, flattens stream blocks into one
//! program order, and turns lengths and ranges into symbolic integers.
//!
//! This is where undeclared and twice-declared names are reported, and
//! operations written where they cannot run (`sync` inside a stream block,
//! `record` outside one). A plan with such errors is not checked further:
//! the semantic checks need every name resolved.

use super::extent;
use super::fixed_at_new::FixedAtNew;
use super::label::op_label;
use super::*;
use crate::errors::Errors;
use crate::sym::{self, Reading, Sym, SymRange};
use crate::syntax::{
    self, BufferSpace, ItemDef, KernelParamTy, LoopDef, OpDef, PlanDef, PriorityDef,
};
use crate::text::text;
use std::collections::HashMap;
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
    builder.events_stay_in_their_loop();
    builder.plan
}

/// What a name in the plan stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Param(usize),
    Buffer(BufferId),
    Kernel(KernelId),
    Stream(StreamId),
    Event(EventId),
    Gpus,
}

impl Name {
    fn what(self) -> &'static str {
        match self {
            Name::Param(_) => "a parameter",
            Name::Buffer(_) => "a buffer",
            Name::Kernel(_) => "a kernel",
            Name::Stream(_) => "a stream",
            Name::Event(_) => "an event",
            Name::Gpus => "the plan's GPUs",
        }
    }
}

/// The kind of declaration a position names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    Buffer,
    Stream,
    Event,
    Kernel,
}

impl Wanted {
    fn accepts(self, name: Name) -> bool {
        matches!(
            (self, name),
            (Wanted::Buffer, Name::Buffer(_))
                | (Wanted::Stream, Name::Stream(_))
                | (Wanted::Event, Name::Event(_))
                | (Wanted::Kernel, Name::Kernel(_))
        )
    }
}

/// The edit distance between two names (insertions, deletions,
/// substitutions), for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Whether a name `d` edits away from `candidate` is likely a misspelling
/// of it: a third of its letters at most, and less than half of the longer
/// name (`a` is not a misspelt `da`, nor `s3` of `s1`).
fn close(d: usize, written: &str, candidate: &str) -> bool {
    let (written, candidate) = (written.chars().count(), candidate.chars().count());
    d <= (candidate / 3).max(1) && 2 * d < written.max(candidate)
}

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

/// The kind of declaration a set is of, for messages.
#[derive(Clone, Copy)]
enum SetOf {
    Streams,
    Events,
    Buffers,
}

impl SetOf {
    fn one(self) -> &'static str {
        match self {
            SetOf::Streams => "stream",
            SetOf::Events => "event",
            SetOf::Buffers => "buffer",
        }
    }

    fn many(self) -> &'static str {
        match self {
            SetOf::Streams => "streams",
            SetOf::Events => "events",
            SetOf::Buffers => "buffers",
        }
    }
}

impl Builder<'_> {
    /// Binds `ident` to `name`; reports a second declaration.
    fn declare(&mut self, ident: &Ident, name: Name) {
        self.reserve(ident);
        let key = ident.to_string();
        if let Some(&(previous, span)) = self.names.get(&key) {
            let reusable = matches!(previous, Name::Buffer(id) if self.freed.contains(&id))
                && matches!(name, Name::Buffer(id) if matches!(self.plan.buffers[id].kind, BufferKind::StreamOrdered { .. }));
            if !reusable {
                self.errors.at(
                    ident.span(),
                    format!("`{ident}` is declared twice: it is already {} (line {})", previous.what(), span.start().line),
                    "give one of them another name; buffers, streams, events, kernels and parameters share one namespace",
                );
                return;
            }
        }
        self.names.insert(key, (name, ident.span()));
    }

    fn reserve(&self, ident: &Ident) {
        if ident.to_string().starts_with(RESERVED_PREFIX) {
            self.errors.at(
                ident.span(),
                format!("`{ident}` starts with `{RESERVED_PREFIX}`, which memplan keeps for the code it generates"),
                "choose another name",
            );
        }
    }

    /// What `ident` names; an error if nothing, with the declaration of
    /// the kind wanted here whose name is closest, or one to write.
    fn lookup(&self, ident: &Ident, wanted: Wanted) -> Option<Name> {
        if let Some(&(name, _)) = self.names.get(&ident.to_string()) {
            return Some(name);
        }
        let written = ident.to_string();
        let closest = self
            .names
            .iter()
            .filter(|(_, (name, _))| wanted.accepts(*name))
            .map(|(candidate, _)| (distance(&written, candidate), candidate))
            .filter(|(d, candidate)| close(*d, &written, candidate))
            .min();
        let help = match closest {
            Some((_, candidate)) => format!("did you mean `{candidate}`?"),
            None => format!("declare it: {}", self.declaration_of(ident, wanted)),
        };
        self.errors.at(
            ident.span(),
            format!("`{ident}` is not declared in this plan"),
            help,
        );
        None
    }

    /// A declaration of `ident` as the kind wanted, in the plan's own terms.
    fn declaration_of(&self, ident: &Ident, wanted: Wanted) -> String {
        let size = self
            .plan
            .params
            .iter()
            .find(|p| matches!(p.kind, ParamKind::Size))
            .map_or_else(|| "1024".to_owned(), |p| p.name.to_string());
        match wanted {
            Wanted::Stream => format!("`stream {ident};`"),
            Wanted::Event => format!("`event {ident};`"),
            Wanted::Kernel => format!("`kernel {ident}(...) from MODULE;`"),
            Wanted::Buffer => {
                format!("`device {ident}: [f32; {size}];` or `host {ident}: [f32; {size}] pinned;`")
            }
        }
    }

    fn param(&mut self, param: &syntax::ParamDef) {
        let index = self.plan.params.len();
        let slice = match &param.ty {
            syn::Type::Reference(reference) => match &*reference.elem {
                syn::Type::Slice(slice) => Some((reference, (*slice.elem).clone(), None)),
                syn::Type::Array(array) => {
                    Some((reference, (*array.elem).clone(), Some(array.len.clone())))
                }
                // Any other reference (`&'static str`) is a value.
                _ => None,
            },
            _ => None,
        };
        let kind = match slice {
            Some((reference, elem, len_expr)) => {
                let length = len_expr.as_ref().map(|expr| self.read(expr));
                let name = param.name.to_string();
                self.plan
                    .atoms
                    .slice(&name, length.as_ref().map(|l| l.value.clone()));
                let (len, len_facts) = match length {
                    Some(reading) => (reading.value, reading.facts),
                    None => (
                        self.plan.atoms.slice_len(&name).unwrap_or_default(),
                        Vec::new(),
                    ),
                };
                let buffer = self.plan.buffers.len();
                self.plan.buffers.push(Buffer {
                    name: param.name.clone(),
                    elem,
                    len,
                    len_facts,
                    len_expr,
                    kind: BufferKind::Param {
                        mutable: reference.mutability.is_some(),
                        registered: param.registered.is_some(),
                    },
                    array: None,
                    gpu: None,
                });
                self.declare(&param.name, Name::Buffer(buffer));
                ParamKind::Slice(buffer)
            }
            None => {
                if let Some(registered) = param.registered {
                    self.errors.at(
                        registered.span,
                        "only borrowed slices can be `registered`",
                        format!("make `{}` a slice, `&[T]` or `&mut [T]`", param.name),
                    );
                }
                self.declare(&param.name, Name::Param(index));
                let name = param.name.to_string();
                if sym::is_usize(&param.ty) {
                    self.plan.atoms.intern_size(&name);
                    ParamKind::Size
                } else {
                    let why = format!("`{name}` is a `{}` parameter, not a size", text(&param.ty));
                    self.plan.atoms.forbid(&name, why);
                    ParamKind::Value(param.ty.clone())
                }
            }
        };
        if let (Some(run), ParamKind::Slice(_)) = (param.run, &kind) {
            self.errors.at(
                run.span,
                "a caller's slice is given to each run already",
                format!("write `{}: ...` without `run`", param.name),
            );
        }
        self.plan.params.push(Param {
            name: param.name.clone(),
            kind,
            per_run: param.run.is_some(),
        });
    }

    fn declaration(&mut self, item: &ItemDef) {
        match item {
            ItemDef::Kernel(kernel) => self.kernel(kernel),
            ItemDef::Buffers(decl) => {
                for def in &decl.buffers {
                    let kind = match (&decl.space, &def.host_kind) {
                        (BufferSpace::Device(_), _) => BufferKind::Device,
                        (BufferSpace::Host(_), None) => BufferKind::Host(HostKind {
                            pageable: false,
                            mapped: false,
                            write_combined: false,
                            portable: false,
                        }),
                        (BufferSpace::Host(_), Some(kind)) => BufferKind::Host(HostKind {
                            pageable: kind.pageable,
                            mapped: kind.mapped,
                            write_combined: kind.write_combined,
                            portable: kind.portable,
                        }),
                    };
                    self.buffer(def, kind);
                }
            }
            ItemDef::Streams(decl) => {
                for def in &decl.streams {
                    let priority = match &def.priority {
                        None | Some(PriorityDef::Normal(_)) => Priority::Normal,
                        Some(PriorityDef::High(_)) => Priority::High,
                        Some(PriorityDef::Level(level, _)) => Priority::Level(*level),
                    };
                    let id = self.plan.streams.len();
                    let array = self.array(&def.count);
                    let gpu = self.placement(&def.gpu, &def.name, &array, true);
                    self.plan.streams.push(Stream {
                        name: def.name.clone(),
                        priority,
                        array,
                        gpu,
                    });
                    self.declare(&def.name, Name::Stream(id));
                }
            }
            ItemDef::Events(decl) => {
                for (event, count) in &decl.events {
                    let id = self.plan.events.len();
                    let array = self.array(count);
                    self.plan.events.push(event.clone());
                    self.plan.event_arrays.push(array);
                    self.declare(event, Name::Event(id));
                }
            }
            ItemDef::Ranks(decl) => self.ranks(decl),
            ItemDef::Gpus(_)
            | ItemDef::Peer(_)
            | ItemDef::On(_)
            | ItemDef::Op(_)
            | ItemDef::Loop(_) => {}
        }
    }

    /// `gpus gpu[g];` (at most one) and `peer gpu;`.
    fn gpus(&mut self, items: &[ItemDef]) {
        for item in items {
            let ItemDef::Gpus(decl) = item else {
                continue;
            };
            if let Some(first) = &self.plan.gpus {
                self.errors.at(
                    decl.name.span(),
                    format!(
                        "the plan's GPUs are declared already, as `{}` (line {})",
                        first.name,
                        first.span.start().line
                    ),
                    "declare the GPUs once, `gpus gpu[g];`, and place each buffer and stream on one of them",
                );
                continue;
            }
            let Some(count) = &decl.count else {
                self.errors.at(
                    decl.name.span(),
                    format!("say how many GPUs `{}` are", decl.name),
                    format!(
                        "write `gpus {}[g];`, with `g` a size `new` takes; `new` is then given as many contexts",
                        decl.name
                    ),
                );
                continue;
            };
            let what = FixedAtNew::GpuCount { gpus: &decl.name };
            // A count that is 0 only at `new` is refused there (`NoGpus`);
            // one that is 0 as written is a plan that can never run.
            let count_value = self.fixed_at_new(count, what);
            if let Some(0) = count_value.as_ref().and_then(Sym::as_constant) {
                let written = text(count);
                let why = match written.as_str() {
                    "0" => String::new(),
                    _ => format!(" (`{written}` is 0)"),
                };
                self.errors.over(
                    count,
                    format!(
                        "`gpus {}[{written}]` declares no GPUs{why}, and a plan on none can never run",
                        decl.name
                    ),
                    format!(
                        "declare at least one GPU, `gpus {}[g];` with `g` a size `new` takes (and as many contexts), or leave out `gpus` and the placements for a plan on one GPU",
                        decl.name
                    ),
                );
            }
            self.plan.gpus = Some(Gpus {
                name: decl.name.clone(),
                count: count.clone(),
                count_value,
                span: decl
                    .gpus_token
                    .span
                    .join(decl.name.span())
                    .unwrap_or(decl.name.span()),
                peer: None,
            });
            self.declare(&decl.name, Name::Gpus);
        }
        for item in items {
            let ItemDef::Peer(decl) = item else {
                continue;
            };
            let span = decl.peer_token.span;
            match &mut self.plan.gpus {
                Some(gpus) if gpus.name == decl.gpus && gpus.peer.is_none() => {
                    gpus.peer = Some(span);
                }
                Some(gpus) if gpus.name == decl.gpus => self.errors.at(
                    span,
                    format!("`peer {}` is declared twice", gpus.name),
                    "declare it once",
                ),
                Some(gpus) => {
                    let name = gpus.name.clone();
                    self.errors.at(
                        decl.gpus.span(),
                        format!("`{}` is not the plan's GPUs, which are `{name}`", decl.gpus),
                        format!("write `peer {name};`"),
                    );
                }
                None => self.errors.at(
                    span,
                    "`peer` lets the plan's GPUs reach each other's memory, and this plan declares none",
                    format!(
                        "declare the GPUs first: `gpus {}[g];`",
                        decl.gpus
                    ),
                ),
            }
        }
    }

    /// `ranks world;`: at most one, and not in a plan that declares `gpus`
    /// (whose collectives span its own GPUs).
    fn ranks(&mut self, decl: &syntax::RanksDecl) {
        let span = decl.ranks_token.span;
        if let Some(first) = &self.plan.ranks {
            self.errors.at(
                span,
                format!(
                    "`ranks` is declared already, as `{}` (line {})",
                    first.name,
                    first.span.start().line
                ),
                "declare it once",
            );
            return;
        }
        if let Some(gpus) = &self.plan.gpus {
            self.errors.at(
                span,
                format!(
                    "this plan runs on the GPUs `{}`, and its collectives span them; `ranks` is for a plan that is one rank of a job of one process per GPU",
                    gpus.name
                ),
                "remove `ranks`, or write the plan for one GPU of the job, without `gpus`",
            );
            return;
        }
        self.reserve(&decl.name);
        self.plan.ranks = Some(Ranks {
            name: decl.name.clone(),
            span,
        });
    }

    /// The GPU of device buffer or stream `name` (a set if `array`), as
    /// `def` places it; every one must be placed in a plan on several
    /// GPUs (`device`: whether it is device memory, which alone is on a
    /// GPU).
    fn placement(
        &mut self,
        def: &Option<syntax::PlacementDef>,
        name: &Ident,
        array: &Option<Array>,
        device: bool,
    ) -> Option<Placement> {
        let gpus = self.plan.gpus.as_ref().map(|gpus| gpus.name.clone());
        let (def, gpus) = match (def, gpus) {
            (None, None) => return None,
            (None, Some(gpus)) if device => {
                let (what, example) = match array {
                    Some(_) => (
                        "set",
                        format!("`{name}[...] ... on {gpus}` (element i on GPU i)"),
                    ),
                    None => ("declaration", format!("`{name} ... on {gpus}[0]`")),
                };
                self.errors.at(
                    name.span(),
                    format!("in a plan on several GPUs, say which GPU `{name}` is on"),
                    format!("place the {what} on one: {example}"),
                );
                return None;
            }
            (None, Some(_)) => return None,
            (Some(def), _) if !device => {
                self.errors.at(
                    def.span(),
                    format!("`{name}` is host memory, which is on no GPU"),
                    "every GPU of the plan reaches pinned host memory (it is made portable); place device buffers and streams",
                );
                return None;
            }
            (Some(def), None) => {
                self.errors.at(
                    def.span(),
                    format!(
                        "`{name}` is placed on `{}`, and this plan declares no GPUs",
                        def.gpus
                    ),
                    format!(
                        "declare them: `gpus {}[g];`, and `new` takes as many contexts; or drop `on ...` for a plan on one GPU",
                        def.gpus
                    ),
                );
                return None;
            }
            (Some(def), Some(gpus)) => (def, gpus),
        };
        if def.gpus != gpus {
            self.errors.at(
                def.gpus.span(),
                format!("`{}` is not the plan's GPUs, which are `{gpus}`", def.gpus),
                format!("write `on {gpus}[...]`"),
            );
            return None;
        }
        match (&def.index, array) {
            (None, Some(_)) => Some(Placement::Each(def.span())),
            (None, None) => {
                self.errors.at(
                    def.span(),
                    format!("`{name}` is one, and `on {gpus}` places a set, element i on GPU i"),
                    format!("say which GPU: `on {gpus}[0]`"),
                );
                None
            }
            (Some(index), _) => {
                let value = self.fixed_at_new(index, FixedAtNew::Placement { name })?;
                // Past the last GPU for every size (a count of 0 is an
                // error of its own).
                let count = self.plan.gpus.as_ref().and_then(|g| g.count_value.as_ref());
                if let Some(count) = count
                    && !self.plan.atoms.provably_le(count, &Sym::constant(0), &[])
                    && self.plan.atoms.provably_le(count, &value, &[])
                {
                    let written = text(&self.plan.gpus.as_ref()?.count);
                    let last = match count.as_constant() {
                        Some(count) => (count - 1).to_string(),
                        None => format!("{written} - 1"),
                    };
                    self.errors.over(
                        index,
                        format!(
                            "`{name}` is placed on `{gpus}[{}]`, past the plan's GPUs (`gpus {gpus}[{written}]`, the last `{gpus}[{last}]`)",
                            text(index)
                        ),
                        format!("place it on one of them, `{gpus}[0]` to `{gpus}[{last}]`"),
                    );
                    return None;
                }
                Some(Placement::One {
                    index: index.clone(),
                    value,
                    span: def.span(),
                })
            }
        }
    }

    /// A set's count, read as a size (which `new` computes).
    fn array(&mut self, count: &Option<Expr>) -> Option<Array> {
        let count = count.as_ref()?;
        self.fixed_at_new(count, FixedAtNew::SetCount);
        Some(Array {
            count: count.clone(),
            index: None,
        })
    }

    /// `size` read as a size that `new` fixes, for `what`; refused (and
    /// `None`) where a run gives or measures it.
    fn fixed_at_new(&mut self, size: &Expr, what: FixedAtNew) -> Option<Sym> {
        let mut fixed = true;
        if let Some(slice) = self.measured_in(size) {
            let (message, help) = what.measured_at_each_run(&text(&slice));
            self.errors.over(&slice, message, help);
            fixed = false;
        }
        if let Some(path) = self.plan.run_param_in(size) {
            let (message, help) = what.given_to_each_run(&text(&path));
            self.errors.at(path.span(), message, help);
            fixed = false;
        }
        // Read either way, so that a size it cannot read is reported too.
        let value = self.read(size).value;
        fixed.then_some(value)
    }

    /// `on s { ... }`, or `on lanes[c % s] { ... }` in a loop.
    fn block(&mut self, block: &syntax::OnBlock) {
        let Some(stream) = self.stream(&block.stream) else {
            return;
        };
        let mut array = self.plan.streams[stream].array.take();
        let used = self.element(
            &mut array,
            &block.stream,
            block.index.as_ref(),
            SetOf::Streams,
        );
        self.plan.streams[stream].array = array;
        self.in_group = false;
        if used {
            for op in &block.ops {
                self.op(op, Lane::Stream(stream));
            }
        }
    }

    /// Checks a use of declaration `name` (a set of several if `array`)
    /// with `index`, and notes the index the loop uses; false (with an
    /// error) if the use is wrong.
    fn element(
        &mut self,
        array: &mut Option<Array>,
        name: &Ident,
        index: Option<&Expr>,
        of: SetOf,
    ) -> bool {
        let var = self.current_var.clone().unwrap_or_else(|| "c".to_owned());
        match (array.as_mut(), index) {
            (None, None) => true,
            (None, Some(index)) => {
                let help = match of {
                    SetOf::Buffers => {
                        "index buffers with ranges such as `[0..n]`, `[i..]` or `[..]`".to_owned()
                    }
                    _ => format!(
                        "write `{name}`, or declare a set of {}: `{name}[k]`",
                        of.many()
                    ),
                };
                self.errors.at(
                    index.span(),
                    format!("`{name}` is one {}, not a set of them", of.one()),
                    help,
                );
                false
            }
            (Some(_), None) => {
                self.errors.at(
                    name.span(),
                    format!("`{name}` is a set of {}: say which one", of.many()),
                    format!("in a loop over `{var}`, write `{name}[{var} % k]` with `k` its count"),
                );
                false
            }
            (Some(array), Some(index)) if !self.in_loop => {
                let count = match &array.count {
                    Expr::Path(_) | Expr::Lit(_) | Expr::Paren(_) => text(&array.count),
                    other => format!("({})", text(other)),
                };
                self.errors.at(
                    index.span(),
                    format!(
                        "a set of {} can be used only in a `for` loop, indexed by the loop's variable",
                        of.many()
                    ),
                    format!("move this into `for c in 0..k {{ ... }}`, as `{name}[c % {count}]`"),
                );
                false
            }
            (Some(array), Some(index)) => {
                let reading = self.read(index);
                match &array.index {
                    None => {
                        array.index = Some((index.clone(), reading.value));
                        true
                    }
                    // The same index however written (`c % s`, `(c % s)`);
                    // read again for the later iteration, it is `c′`'s.
                    Some((_, first)) if *first == reading.value || self.reading_later => true,
                    Some((first, _)) => {
                        self.errors.at(
                            index.span(),
                            format!(
                                "`{name}` is indexed by `{}` elsewhere in this loop, and here by `{}`",
                                text(first),
                                text(index)
                            ),
                            format!(
                                "an iteration uses one element of a set: index `{name}` the same way throughout the loop"
                            ),
                        );
                        false
                    }
                }
            }
        }
    }

    /// `for c in 0..k { ... }`: the body read once for iteration `c`, and
    /// again for a later iteration `c′`, for the checks to compare.
    fn repeat(&mut self, def: &LoopDef) {
        if let Some(first) = self.plan.loops.first() {
            self.errors.at(
                def.span(),
                format!(
                    "a plan has one `for` loop, and this one has another (line {})",
                    first.span.start().line
                ),
                "split the work into two plans, or into one loop",
            );
            return;
        }
        let var = def.var.to_string();
        if let Some((name, span)) = self.names.get(&var) {
            self.errors.at(
                def.var.span(),
                format!(
                    "`{var}` is already {} (line {})",
                    name.what(),
                    span.start().line
                ),
                "give the loop's variable a name of its own",
            );
            return;
        }
        self.reserve(&def.var);
        let Reading {
            value: count,
            mut facts,
        } = self.read(&def.count);
        let later_name = format!("{var}′");
        let counter = self.plan.atoms.intern(&var);
        let (current, later) = (
            Sym::atom(counter),
            Sym::atom(self.plan.atoms.intern(&later_name)),
        );
        let one = Sym::constant(1);
        // `1 <= k` from what computing `k` guarantees: then every run
        // gives the body an iteration, and what it orders holds after it.
        let never_empty = self.plan.atoms.provably_le(&one, &count, &[&facts]);
        let below = |at: &Sym| at.add(&one).and_then(|next| next.sub(&count));
        facts.extend(below(&current));
        let mut later_facts: Vec<Sym> = below(&later).into_iter().collect();
        later_facts.extend(current.add(&one).and_then(|next| next.sub(&later)));

        for (name, range) in &def.ranges {
            if let Some((what, span)) = self.names.get(&name.to_string()) {
                self.errors.at(
                    name.span(),
                    format!(
                        "`{name}` is already {} (line {})",
                        what.what(),
                        span.start().line
                    ),
                    "give the range a name of its own",
                );
            }
            // A range may use those named before it: `let used = 0..chunk.len();`.
            let mut range = range.clone();
            for bound in [&mut range.start, &mut range.end].into_iter().flatten() {
                **bound = self.with_ranges(bound);
            }
            self.ranges.insert(name.to_string(), range);
        }
        self.plan.atoms.set_loop(Some(&var));
        self.current_var = Some(var.clone());
        self.in_loop = true;
        self.loop_facts = facts.clone();
        let first = self.plan.ops.len();
        for block in &def.blocks {
            self.block(block);
        }
        let end = self.plan.ops.len();
        self.loop_facts.extend(later_facts.iter().cloned());
        // The later iteration: the same body, its variable renamed. Its
        // errors are the first reading's, so they are not said twice.
        self.errors.mute(true);
        self.reading_later = true;
        self.plan.atoms.set_rename(Some((&var, &later_name)));
        for block in &def.blocks {
            if let Some(stream) = self.stream(&block.stream) {
                self.in_group = false;
                for op in &block.ops {
                    self.op(op, Lane::Stream(stream));
                }
            }
        }
        self.plan.atoms.set_rename(None);
        self.reading_later = false;
        self.errors.mute(false);
        self.loop_facts.clear();
        self.ranges.clear();
        self.in_loop = false;
        self.current_var = None;
        self.plan.atoms.set_loop(None);
        let later = self.plan.ops.split_off(end);
        if later.len() != end - first {
            // The first reading had errors, and the checks do not run; were
            // there none, the checks must not run without the loop either.
            if self.errors.is_empty() {
                self.errors.at(
                    def.span(),
                    "memplan could not read this loop's body for a second iteration (a bug in memplan; please report it)",
                    "write the loop's ops another way meanwhile",
                );
            }
            return;
        }
        if first == end {
            // Nothing to repeat: a loop of no ops is no loop.
            return;
        }
        self.plan.loops.push(Loop {
            var: def.var.clone(),
            counter,
            count: def.count.clone(),
            count_value: count,
            never_empty,
            ops: first..end,
            later,
            facts,
            later_facts,
            span: def.span(),
        });
    }

    /// An event recorded or waited for in the loop is the loop's own: a
    /// `wait` after the loop would wait for its last iteration only, and
    /// one in it for the iteration before, which the checks do not model.
    fn events_stay_in_their_loop(&self) {
        let Some(repeat) = self.plan.loops.first() else {
            return;
        };
        for (event, name) in self.plan.events.iter().enumerate() {
            let uses = |inside: bool| {
                self.plan.ops.iter().enumerate().find(|(id, op)| {
                    repeat.contains(*id) == inside
                        && matches!(op.kind, OpKind::Record(e) | OpKind::Wait(e) if e == event)
                })
            };
            if let (Some(_), Some((_, outside))) = (uses(true), uses(false)) {
                self.errors.at(
                    outside.span,
                    format!("`{name}` is used in the loop (line {}), and here outside it", repeat.span.start().line),
                    "declare another event for use outside the loop; a loop's events order its iterations",
                );
            }
        }
    }

    fn kernel(&mut self, kernel: &syntax::KernelDecl) {
        let path_text = text(&kernel.module);
        let module = match self.plan.modules.iter().position(|m| text(m) == path_text) {
            Some(index) => index,
            None => {
                self.plan.modules.push(kernel.module.clone());
                self.plan.modules.len() - 1
            }
        };
        let params = kernel
            .params
            .iter()
            .map(|param| KernelParam {
                name: param.name.clone(),
                kind: match &param.ty {
                    KernelParamTy::Slice {
                        access,
                        elem,
                        extent,
                        ..
                    } => KernelParamKind::Slice {
                        access: *access,
                        elem: elem.clone(),
                        extent: extent.clone(),
                    },
                    KernelParamTy::Value(ty) => KernelParamKind::Value(ty.clone()),
                },
            })
            .collect();
        let id = self.plan.kernels.len();
        let mut kernel_ir = Kernel {
            name: kernel.name.clone(),
            module,
            params,
            unchecked: kernel.unsafe_token,
            cpp_name: kernel.cpp_name.clone(),
            misdeclared: false,
        };
        for error in extent::check_declaration(&mut kernel_ir) {
            self.errors.push(error);
        }
        self.plan.kernels.push(kernel_ir);
        self.declare(&kernel.name, Name::Kernel(id));
    }

    fn buffer(&mut self, def: &syntax::BufferDef, kind: BufferKind) -> BufferId {
        for expr in std::iter::once(&def.len).chain(&def.count) {
            if let Some(slice) = self.measured_in(expr) {
                self.errors.at(
                    slice.span(),
                    format!(
                        "`{}` is measured at each run, and `new` allocates `{}` once",
                        text(&slice),
                        def.name
                    ),
                    "give the slice a length in the plan's sizes, `xs: &[f32; n]`, or size the buffer by one",
                );
            }
            if let Some(path) = self.plan.run_param_in(expr) {
                self.errors.at(
                    path.span(),
                    format!(
                        "`{}` is given to each run, and `new` allocates `{}` once",
                        text(&path),
                        def.name
                    ),
                    format!(
                        "size the buffer by a capacity that `new` takes, and use a range of it, `{}[..{}]`",
                        def.name,
                        text(&path)
                    ),
                );
            }
        }
        let Reading {
            value: len,
            facts: len_facts,
        } = self.read(&def.len);
        if let (Some(count), false) = (&def.count, kind == BufferKind::Device) {
            self.errors.at(
                count.span(),
                format!(
                    "`{}` is declared as a set of buffers, which only `device` memory can be",
                    def.name
                ),
                "declare one buffer that holds them all, and use ranges of it",
            );
        }
        let array = match kind {
            BufferKind::Device => self.array(&def.count),
            _ => None,
        };
        let gpu = self.placement(&def.gpu, &def.name, &array, kind == BufferKind::Device);
        let id = self.plan.buffers.len();
        self.plan.buffers.push(Buffer {
            name: def.name.clone(),
            elem: def.elem.clone(),
            len,
            len_facts,
            len_expr: Some(def.len.clone()),
            kind,
            array,
            gpu,
        });
        self.declare(&def.name, Name::Buffer(id));
        id
    }

    /// A size and the facts its computation guarantees; 0 (and an error)
    /// if the expression is not one.
    fn read(&mut self, expr: &Expr) -> Reading {
        sym::read(expr, &mut self.plan.atoms).unwrap_or_else(|error| {
            self.errors.push(error);
            Reading {
                value: Sym::constant(0),
                facts: Vec::new(),
            }
        })
    }

    fn stream(&self, ident: &Ident) -> Option<StreamId> {
        match self.lookup(ident, Wanted::Stream)? {
            Name::Stream(id) => Some(id),
            other => self.wrong_kind(ident, other, "a stream"),
        }
    }

    fn event(&self, ident: &Ident) -> Option<EventId> {
        match self.lookup(ident, Wanted::Event)? {
            Name::Event(id) => Some(id),
            other => self.wrong_kind(ident, other, "an event"),
        }
    }

    /// A place's index and range with the loop's named ranges put in:
    /// `a[r]` of a buffer that is not a set, `ring[c % r][r]` of one.
    fn named_range(
        &self,
        place: &syntax::Place,
        buffer: BufferId,
    ) -> Option<(Option<Expr>, Option<syn::ExprRange>)> {
        let named = |name: &str| self.ranges.get(name).cloned();
        let (mut index, mut range) = (place.index.clone(), place.range.clone());
        if let (Some(Expr::Path(path)), None) = (&index, &self.plan.buffers[buffer].array)
            && let Some(named) = path.path.get_ident().and_then(|i| named(&i.to_string()))
        {
            (index, range) = (None, Some(named));
        }
        if let Some(name) = &place.named {
            match named(&name.to_string()) {
                Some(named) => range = Some(named),
                None => {
                    self.errors.at(
                        name.span(),
                        format!("`{name}` is not a range of this loop"),
                        "name it first, `let r = start..end;`, or write the range",
                    );
                    return None;
                }
            }
        }
        Some((index, range))
    }

    /// The first `xs.len()` in `expr` of a caller's slice declared without
    /// a length: a length each run measures.
    fn measured_in(&self, expr: &Expr) -> Option<Expr> {
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
            plan: &self.plan,
            found: None,
        };
        find.visit_expr(expr);
        find.found
    }

    /// `expr` with each `r.len()` of a named range `r` written out as
    /// `(end - start)`.
    fn with_ranges(&self, expr: &Expr) -> Expr {
        use syn::visit_mut::{self, VisitMut};
        struct Lengths<'a>(&'a HashMap<String, syn::ExprRange>);
        impl VisitMut for Lengths<'_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                if let Expr::MethodCall(call) = expr
                    && call.method == "len"
                    && call.args.is_empty()
                    && let Expr::Path(path) = &*call.receiver
                    && let Some(range) = path
                        .path
                        .get_ident()
                        .and_then(|i| self.0.get(&i.to_string()))
                {
                    let end = range.end.as_deref();
                    let start = range.start.as_deref();
                    *expr = match start {
                        Some(start) => syn::parse_quote!(((#end) - (#start))),
                        None => syn::parse_quote!((#end)),
                    };
                    return;
                }
                visit_mut::visit_expr_mut(self, expr);
            }
        }
        let mut expr = expr.clone();
        if !self.ranges.is_empty() {
            Lengths(&self.ranges).visit_expr_mut(&mut expr);
        }
        expr
    }

    /// `e` or `e[index]` of a set of events.
    fn event_element(&mut self, event: &Ident, index: &Option<Expr>) -> Option<EventId> {
        let id = self.event(event)?;
        let mut array = self.plan.event_arrays[id].take();
        let used = self.element(&mut array, event, index.as_ref(), SetOf::Events);
        self.plan.event_arrays[id] = array;
        used.then_some(id)
    }

    fn buffer_named(&self, ident: &Ident) -> Option<BufferId> {
        match self.lookup(ident, Wanted::Buffer)? {
            Name::Buffer(id) => Some(id),
            other => self.wrong_kind(ident, other, "a buffer"),
        }
    }

    fn wrong_kind<T>(&self, ident: &Ident, found: Name, expected: &str) -> Option<T> {
        self.errors.at(
            ident.span(),
            format!(
                "`{ident}` is {}, and {expected} is needed here",
                found.what()
            ),
            format!("name {expected} declared in this plan"),
        );
        None
    }

    fn place(&mut self, place: &syntax::Place) -> Option<Place> {
        let buffer = self.buffer_named(&place.name)?;
        let (index, mut range) = self.named_range(place, buffer)?;
        // `r.len()` of a named range, in a range's bounds too.
        if let Some(range) = &mut range {
            for bound in [&mut range.start, &mut range.end].into_iter().flatten() {
                **bound = self.with_ranges(bound);
            }
        }
        let place = &syntax::Place {
            name: place.name.clone(),
            index,
            range,
            named: None,
        };
        let mut array = self.plan.buffers[buffer].array.take();
        let used = self.element(
            &mut array,
            &place.name,
            place.index.as_ref(),
            SetOf::Buffers,
        );
        self.plan.buffers[buffer].array = array;
        if !used {
            return None;
        }
        let len = self.plan.buffers[buffer].len.clone();
        // What `new` checks before anything runs: each size computed
        // without wrapping, and the range inside its buffer.
        let mut facts = self.plan.buffers[buffer].len_facts.clone();
        facts.extend(self.loop_facts.iter().cloned());
        let mut read = |expr: &Expr, facts: &mut Vec<Sym>| {
            let reading = self.read(expr);
            facts.extend(reading.facts);
            reading.value
        };
        let range = match &place.range {
            None => SymRange {
                start: Sym::constant(0),
                end: len.clone(),
            },
            Some(range) => {
                let start = range
                    .start
                    .as_deref()
                    .map_or_else(|| Sym::constant(0), |e| read(e, &mut facts));
                let end = match (&range.end, &range.limits) {
                    (None, _) => len.clone(),
                    (Some(end), RangeLimits::HalfOpen(_)) => read(end, &mut facts),
                    (Some(end), RangeLimits::Closed(_)) => {
                        let last = read(end, &mut facts);
                        last.add(&Sym::constant(1)).unwrap_or(last)
                    }
                };
                SymRange { start, end }
            }
        };
        let computed = facts.len();
        facts.extend(range.start.sub(&range.end));
        facts.extend(range.end.sub(&len));
        Some(Place {
            buffer,
            range,
            facts,
            computed,
            range_expr: place.range.clone(),
            span: place.name.span(),
        })
    }

    fn op(&mut self, def: &OpDef, lane: Lane) {
        if let Some(mut kind) = self.op_kind(def, lane) {
            match &mut kind {
                // Only sends and receives share a group (a send and the
                // receive it meets would otherwise wait for each other):
                // NCCL runs a group's calls at once, in no order, and
                // other collectives need the order their stream gives.
                OpKind::Collective(collective) => {
                    let point_to_point = matches!(
                        collective.word,
                        syntax::CollectiveWord::Send | syntax::CollectiveWord::Recv
                    );
                    if !(self.in_group && point_to_point) {
                        self.group += 1;
                    }
                    collective.group = self.group;
                    self.in_group = point_to_point;
                }
                _ => self.in_group = false,
            }
            self.plan.ops.push(Op {
                kind,
                lane,
                span: def.span(),
                label: op_label(def),
            });
        }
    }

    /// The op's meaning, or `None` (with an error) if it has none here.
    fn op_kind(&mut self, def: &OpDef, lane: Lane) -> Option<OpKind> {
        let span = def.span();
        let in_stream = matches!(lane, Lane::Stream(_));
        Some(match def {
            OpDef::Copy { src, dst, .. } => {
                let (src, dst) = (self.place(src), self.place(dst));
                OpKind::Copy {
                    src: src?,
                    dst: dst?,
                }
            }
            OpDef::Fill { dst, value, .. } => OpKind::Fill {
                dst: self.place(dst)?,
                value: self.with_ranges(value),
            },
            OpDef::Launch(launch) => OpKind::Launch(self.launch(launch)?),
            OpDef::Record { event, .. } | OpDef::Wait { event, .. } if !in_stream => {
                let verb = if matches!(def, OpDef::Record { .. }) {
                    "record"
                } else {
                    "wait"
                };
                self.errors.at(
                    span,
                    format!(
                        "`{verb} {event}` must be in a stream block: events mark points in a stream"
                    ),
                    "move it into `on stream { ... }`; the host waits with `sync`",
                );
                return None;
            }
            OpDef::Record { event, index, .. } => OpKind::Record(self.event_element(event, index)?),
            OpDef::Wait { event, index, .. } => OpKind::Wait(self.event_element(event, index)?),
            OpDef::Sync { .. } if in_stream => {
                self.errors.at(
                    span,
                    "`sync` waits on the host, so it cannot be in a stream block",
                    "move it after the block; to order two streams, `record` an event on one and `wait` for it on the other",
                );
                return None;
            }
            OpDef::Sync { stream, .. } => OpKind::Sync(match stream {
                Some(stream) => Some(self.stream(stream)?),
                None => None,
            }),
            OpDef::Alloc { .. } | OpDef::Free { .. } if self.in_loop => {
                self.errors.at(
                    span,
                    "stream-ordered memory is not allocated or freed in a loop",
                    "declare a set of device buffers, `device ring[r]: [T; len];`, and use `ring[c % r]`",
                );
                return None;
            }
            OpDef::Alloc { buffer, .. } => {
                if !in_stream {
                    self.errors.at(
                        span,
                        "`alloc` is stream-ordered, so it must be in a stream block",
                        "move it into the `on` block of the stream that first uses the buffer, or declare a `device` buffer",
                    );
                    return None;
                }
                let id = self.buffer(
                    buffer,
                    BufferKind::StreamOrdered {
                        alloc: self.plan.ops.len(),
                    },
                );
                OpKind::Alloc(id)
            }
            OpDef::Free { buffer, .. } => {
                if !in_stream {
                    self.errors.at(
                        span,
                        "`free` is stream-ordered, so it must be in a stream block",
                        "move it into an `on` block, after the buffer's last use",
                    );
                    return None;
                }
                let id = self.buffer_named(buffer)?;
                if !matches!(self.plan.buffers[id].kind, BufferKind::StreamOrdered { .. }) {
                    self.errors.at(
                        buffer.span(),
                        format!(
                            "`{buffer}` lives as long as the plan, so it cannot be freed in it"
                        ),
                        "only buffers made with `alloc` in a stream block can be freed",
                    );
                    return None;
                }
                self.freed.push(id);
                OpKind::Free(id)
            }
            OpDef::Collective(_) if !in_stream => {
                self.errors.at(
                    span,
                    format!("`{}` is queued on a stream, so it must be in a stream block", op_label(def)),
                    "move it into `on s { ... }`, with `s` a stream of the GPU whose buffers it names",
                );
                return None;
            }
            OpDef::Collective(def) => {
                let first = self.place(&def.first);
                let second = match &def.second {
                    Some(second) => Some(self.place(second)?),
                    None => None,
                };
                let first = first?;
                if let Some(rank) = &def.rank {
                    self.read(rank);
                }
                let in_place = second.is_none();
                OpKind::Collective(Collective {
                    word: def.word,
                    reduce: def.reduce.clone(),
                    recv: second.unwrap_or_else(|| first.clone()),
                    send: first,
                    in_place,
                    rank: def.rank.clone(),
                    group: 0,
                })
            }
            OpDef::Host(step) => {
                if in_stream {
                    self.errors.at(
                        span,
                        "a host step runs on the CPU, so it cannot be in a stream block",
                        "move it after the block, with `sync` before it if it reads what the stream wrote",
                    );
                    return None;
                }
                let mut params = Vec::new();
                for param in &step.params {
                    params.push(HostParam {
                        buffer: self.buffer_named(&param.name)?,
                        name: param.name.clone(),
                        access: param.access,
                    });
                }
                OpKind::Host {
                    params,
                    body: step.body.clone(),
                }
            }
        })
    }

    fn launch(&mut self, launch: &syntax::LaunchDef) -> Option<Launch> {
        let kernel = match self.lookup(&launch.kernel, Wanted::Kernel)? {
            Name::Kernel(id) => id,
            other => return self.wrong_kind(&launch.kernel, other, "a kernel"),
        };
        let mut args = Vec::new();
        for expr in &launch.args {
            args.push(match self.buffer_argument(expr) {
                Some(place) => Arg::Buffer(self.place(&place)?),
                None => Arg::Value(self.with_ranges(expr)),
            });
        }
        let (extents, bound) = self.extents(kernel, &args);
        Some(Launch {
            kernel,
            grid: self.with_ranges(&launch.grid),
            block: self.with_ranges(&launch.block),
            shared: launch
                .shared
                .as_ref()
                .map(|shared| self.with_ranges(shared)),
            args,
            args_span: launch.args_span,
            extents,
            bound,
        })
    }

    /// The extents of a launch's buffer arguments in the plan's sizes, and
    /// the sizes its values that extents name stand for (see `extent.rs`).
    /// With the wrong number of arguments (an error of its own) there are
    /// none: which parameter an argument meets would be a guess.
    fn extents(
        &mut self,
        kernel: KernelId,
        args: &[Arg],
    ) -> (Vec<Option<LaunchExtent>>, Vec<Option<Expr>>) {
        let mut extents: Vec<Option<LaunchExtent>> = args.iter().map(|_| None).collect();
        let mut bound: Vec<Option<Expr>> = args.iter().map(|_| None).collect();
        let params = &self.plan.kernels[kernel].params;
        if params.len() != args.len() {
            return (extents, bound);
        }
        let stated: Vec<(usize, Expr)> = params
            .iter()
            .enumerate()
            .filter_map(|(index, param)| match &param.kind {
                KernelParamKind::Slice {
                    extent: Some(extent),
                    ..
                } => Some((index, extent.clone())),
                _ => None,
            })
            .collect();
        for (index, extent) in stated {
            let kernel_ir = &self.plan.kernels[kernel];
            let named = extent::named_params(&extent, kernel_ir);
            let sizes: Option<Vec<(usize, Expr)>> = named
                .iter()
                .map(|&named| match args.get(named) {
                    Some(Arg::Value(value)) => {
                        let size = extent::bound_size(value, &self.plan.atoms)?;
                        Some((named, size.clone()))
                    }
                    _ => None,
                })
                .collect();
            let atoms = &self.plan.atoms;
            let substituted = sizes
                .as_ref()
                .and_then(|_| extent::substitute(&extent, kernel_ir, args, atoms));
            match (sizes, substituted) {
                (Some(sizes), Some(expr)) => {
                    for (named, size) in sizes {
                        bound[named] = Some(size);
                    }
                    let Reading { value, facts } = self.read(&expr);
                    extents[index] = Some(LaunchExtent::Sized { expr, value, facts });
                }
                // A value the arithmetic cannot follow (a call, a value
                // parameter of the plan): `new` computes the extent from
                // what the kernel receives.
                _ => extents[index] = Some(LaunchExtent::Measured(extent)),
            }
        }
        (extents, bound)
    }

    /// `da` or `da[0..n]`, when `da` names a buffer: the argument is that
    /// buffer (`ring[c % r]`, `ring[c % r][..len]` of a set of buffers).
    /// Anything else is a value.
    fn buffer_argument(&self, expr: &Expr) -> Option<syntax::Place> {
        // Up to two brackets after the name: an index or range, then a range.
        let mut brackets = Vec::new();
        let mut base = expr;
        while let Expr::Index(index) = base
            && brackets.len() < 2
        {
            brackets.insert(0, &*index.index);
            base = &index.expr;
        }
        let Expr::Path(path) = base else {
            return None;
        };
        let ident = path.path.get_ident()?;
        if !matches!(
            self.names.get(&ident.to_string()),
            Some((Name::Buffer(_), _))
        ) {
            return None;
        }
        let mut place = syntax::Place {
            name: ident.clone(),
            index: None,
            range: None,
            named: None,
        };
        match brackets[..] {
            [] => {}
            [Expr::Range(range)] => place.range = Some(range.clone()),
            [index] => place.index = Some(index.clone()),
            [index, Expr::Range(range)] => {
                place.index = Some(index.clone());
                place.range = Some(range.clone());
            }
            [index, Expr::Path(named)] => {
                place.index = Some(index.clone());
                place.named = named.path.get_ident().cloned();
            }
            _ => return None,
        }
        Some(place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        let input: crate::syntax::Input = syn::parse_str(text).unwrap();
        let errors = Errors::new();
        let plan = build(&input.plans[0], &errors);
        errors.finish().unwrap();
        plan
    }

    #[test]
    fn stream_blocks_flatten_into_program_order() {
        let plan = plan(
            "plan P(n: usize) { device d: [f32; n]; stream s1, s2;
             fill d with 1.0; on s1 { fill d with 2.0; } on s2 { fill d with 3.0; } sync all; }",
        );
        let lanes: Vec<Lane> = plan.ops.iter().map(|op| op.lane).collect();
        assert_eq!(
            lanes,
            [Lane::Host, Lane::Stream(0), Lane::Stream(1), Lane::Host]
        );
        let labels: Vec<&str> = plan.ops.iter().map(|op| op.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "fill d with 1.0",
                "fill d with 2.0",
                "fill d with 3.0",
                "sync all"
            ]
        );
    }

    #[test]
    fn a_freed_name_can_be_allocated_again() {
        let plan = plan(
            "plan P(n: usize) { stream s; on s { alloc t: [f32; n]; free t; alloc t: [u8; 2 * n]; fill t with 0; free t; } }",
        );
        let OpKind::Fill { dst, .. } = &plan.ops[3].kind else {
            panic!("op 3 is the fill")
        };
        assert_eq!(dst.buffer, 1, "the fill uses the second allocation");
        assert!(matches!(
            plan.buffers[1].kind,
            BufferKind::StreamOrdered { alloc: 2 }
        ));
        assert_eq!(text(&plan.buffers[1].elem), "u8");
    }

    #[test]
    fn parameters_become_sizes_values_and_buffers() {
        let plan =
            plan("plan P(n: usize, scale: f32, xs: &[f32; n], out: &mut [f32] registered) { }");
        assert!(matches!(plan.params[0].kind, ParamKind::Size));
        assert!(matches!(plan.params[1].kind, ParamKind::Value(_)));
        let (ParamKind::Slice(xs), ParamKind::Slice(out)) =
            (&plan.params[2].kind, &plan.params[3].kind)
        else {
            panic!("slices become buffers")
        };
        assert_eq!(
            plan.buffers[*xs].kind,
            BufferKind::Param {
                mutable: false,
                registered: false
            }
        );
        assert_eq!(
            plan.buffers[*out].kind,
            BufferKind::Param {
                mutable: true,
                registered: true
            }
        );
        assert_eq!(
            plan.buffers[*out].len.display(&plan.atoms).to_string(),
            "out.len()"
        );
    }

    #[test]
    fn names_are_close_by_edits() {
        assert_eq!(distance("frames", "frames"), 0);
        assert_eq!(distance("frmes", "frames"), 1);
        assert_eq!(distance("fraems", "frames"), 2);
        assert_eq!(distance("", "abc"), 3);
        assert!(close(1, "frmes", "frames"));
        assert!(close(2, "fraems", "frames"));
        assert!(!close(1, "a", "da"), "a short name is not a misspelling");
        assert!(!close(1, "s3", "s1"));
        assert!(!close(3, "events", "frames"));
    }

    #[test]
    fn host_memory_is_pinned_unless_said_otherwise() {
        let plan = plan(
            "plan P(n: usize) { host a: [f32; n], b: [f32; n] pageable, c: [f32; n] mapped; }",
        );
        let kinds: Vec<BufferKind> = plan.buffers.iter().map(|b| b.kind).collect();
        assert!(kinds[0].is_page_locked() && !kinds[0].is_device_reachable());
        assert!(!kinds[1].is_page_locked());
        assert!(kinds[2].is_page_locked() && kinds[2].is_device_reachable());
    }
}
