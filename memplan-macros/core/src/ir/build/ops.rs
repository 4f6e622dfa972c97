//! Ops, in program order: stream blocks flattened onto their streams, each
//! op's places resolved to buffers and symbolic ranges, launches with
//! their extents. Each op is kept where it is written, on the host or on
//! its block's stream: whether it can run there is a rule of the checks
//! (`check/formation.rs`).

use super::*;
use crate::where_ops_run::{OpWord, cannot_run_there};

impl Builder<'_> {
    /// `on s { ... }`, or `on lanes[c % s] { ... }` in a loop.
    pub(super) fn block(&mut self, block: &syntax::OnBlock) {
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

    pub(super) fn op(&mut self, def: &OpDef, lane: Lane) {
        // An op written where it cannot run is kept for the rule that
        // refuses it (`check/formation.rs`). Its names are not its mistake:
        // one whose names do not resolve is refused here, in that rule's
        // words, and theirs are not said (they would be, once it is moved).
        let label = def.label();
        let word = match def {
            OpDef::Record { event, .. } => OpWord::Record(event.to_string()),
            OpDef::Wait { event, .. } => OpWord::Wait(event.to_string()),
            OpDef::Sync { .. } => OpWord::Sync,
            OpDef::Alloc { .. } => OpWord::Alloc,
            OpDef::Free { .. } => OpWord::Free,
            OpDef::Collective(_) => OpWord::Collective(&label),
            OpDef::Host(_) => OpWord::Host,
            OpDef::Copy { .. } | OpDef::Fill { .. } | OpDef::Launch(_) => OpWord::Other,
        };
        let in_stream = matches!(lane, Lane::Stream(_));
        let cannot_run = cannot_run_there(&word, in_stream, self.in_loop);
        let muted = self.errors.muted();
        self.errors.mute(muted || cannot_run.is_some());
        let kind = self.op_kind(def);
        self.errors.mute(muted);
        if let (None, Some((message, help))) = (&kind, cannot_run) {
            self.errors.at(def.span(), message, help);
        }
        if let Some(mut kind) = kind {
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
                label,
            });
        }
    }

    /// The op's meaning, or `None` (with an error) where a name in it
    /// does not resolve.
    pub(super) fn op_kind(&mut self, def: &OpDef) -> Option<OpKind> {
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
            OpDef::Record { event, index, .. } => OpKind::Record(self.event_element(event, index)?),
            OpDef::Wait { event, index, .. } => OpKind::Wait(self.event_element(event, index)?),
            OpDef::Sync { stream, .. } => OpKind::Sync(match stream {
                Some(stream) => Some(self.stream(stream)?),
                None => None,
            }),
            OpDef::Alloc { buffer, .. } => {
                let id = self.buffer(
                    buffer,
                    BufferKind::StreamOrdered {
                        alloc: self.plan.ops.len(),
                    },
                );
                OpKind::Alloc(id)
            }
            OpDef::Free { buffer, .. } => {
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

    pub(super) fn launch(&mut self, launch: &syntax::LaunchDef) -> Option<Launch> {
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
        let counts = args
            .iter()
            .map(|arg| match arg {
                Arg::Value(value) => self.count(value),
                Arg::Buffer(_) => None,
            })
            .collect();
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
            counts,
        })
    }

    /// The extents of a launch's buffer arguments in the plan's sizes, and
    /// the sizes its values that extents name stand for (see `extent.rs`).
    /// With the wrong number of arguments (an error of its own) there are
    /// none: which parameter an argument meets would be a guess.
    pub(super) fn extents(
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
    pub(super) fn buffer_argument(&self, expr: &Expr) -> Option<syntax::Place> {
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

    pub(super) fn place(&mut self, place: &syntax::Place) -> Option<Place> {
        let buffer = self.buffer_named(&place.name)?;
        let written = self.written(place, buffer);
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
        // A set of other memory than `device` is one error, at its
        // declaration (`check/formation.rs`), however the plan uses it.
        let used = match (&array, self.plan.buffers[buffer].kind) {
            (Some(_), kind) if kind != BufferKind::Device => true,
            _ => self.element(
                &mut array,
                &place.name,
                place.index.as_ref(),
                SetOf::Buffers,
            ),
        };
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
            written,
            span: place.name.span(),
        })
    }

    /// The range of `place` (of `buffer`) as written, for people: its
    /// named range's name or its range's text (an open start 0, an open
    /// end the buffer's length), with the loop's variable `c′` in the
    /// later iteration.
    fn written(&self, place: &syntax::Place, buffer: BufferId) -> Option<String> {
        let written = match (&place.named, &place.range) {
            (Some(name), _) => name.to_string(),
            // Open ends as the buffer's: `n / 2..` is `n / 2..n`.
            (None, Some(range)) => {
                let buffer = &self.plan.buffers[buffer];
                let start = if range.start.is_none() { "0" } else { "" };
                let end = match (&range.end, &buffer.len_expr) {
                    (Some(_), _) => String::new(),
                    (None, Some(len)) => text(len),
                    (None, None) => buffer.len.display(&self.plan.atoms).to_string(),
                };
                format!("{start}{}{end}", text(range))
            }
            // `a[r]` of a buffer that is not a set: the named range `r`.
            (None, None) => match &place.index {
                Some(Expr::Path(path))
                    if self.plan.buffers[buffer].array.is_none()
                        && path
                            .path
                            .get_ident()
                            .is_some_and(|name| self.ranges.contains_key(&name.to_string())) =>
                {
                    text(path)
                }
                _ => return None,
            },
        };
        Some(match (&self.current_var, self.reading_later) {
            (Some(var), true) => crate::text::rename_word(&written, var, &format!("{var}′")),
            _ => written,
        })
    }
}
