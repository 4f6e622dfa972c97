//! `for` loops: the body read once for iteration `c` and again for a later
//! `c′`, the loop's named ranges, and the sets (`stream lanes[s]`) a loop
//! indexes.

use super::*;

/// The kind of declaration a set is of, for messages.
#[derive(Clone, Copy)]
pub(super) enum SetOf {
    Streams,
    Events,
    Buffers,
}

impl SetOf {
    pub(super) fn one(self) -> &'static str {
        match self {
            SetOf::Streams => "stream",
            SetOf::Events => "event",
            SetOf::Buffers => "buffer",
        }
    }

    pub(super) fn many(self) -> &'static str {
        match self {
            SetOf::Streams => "streams",
            SetOf::Events => "events",
            SetOf::Buffers => "buffers",
        }
    }
}

impl Builder<'_> {
    /// `for c in 0..k { ... }`: the body read once for iteration `c`, and
    /// again for a later iteration `c′`, for the checks to compare.
    pub(super) fn repeat(&mut self, def: &LoopDef) {
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
        self.indexed_in_loop.clear();
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
        // The first reading had errors (a set indexed two ways is an error
        // of the first reading only), and the checks that compare the two
        // do not run; were there none, the checks must not run without the
        // loop either. The loop is kept for the rules of its ops
        // (`check/formation.rs`): an `alloc` in it is still an error.
        if later.len() != end - first && self.errors.is_empty() {
            self.errors.at(
                def.span(),
                "memplan could not read this loop's body for a second iteration (a bug in memplan; please report it)",
                "write the loop's ops another way meanwhile",
            );
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
            label: format!("for {} in 0..{}", def.var, text(&def.count)),
            count_value: count,
            never_empty,
            ops: first..end,
            later,
            facts,
            later_facts,
            span: def.span(),
        });
    }

    /// Checks a use of declaration `name` (a set of several if `array`)
    /// with `index`, and notes the index the loop uses; false (with an
    /// error) if the use is wrong.
    pub(super) fn element(
        &mut self,
        array: &mut Option<Array>,
        name: &Ident,
        index: Option<&Expr>,
        of: SetOf,
    ) -> bool {
        let var = self.current_var.clone().unwrap_or_else(|| "c".to_owned());
        match (array.as_mut(), index) {
            (None, None) => true,
            // `a[chunk]` with no range `chunk`: the range is what is missing.
            (None, Some(Expr::Path(path)))
                if matches!(of, SetOf::Buffers) && path.path.get_ident().is_some() =>
            {
                let range = text(path);
                let example = format!("let {range} = {var} * m..({var} + 1) * m;");
                self.errors.at(
                    path.span(),
                    format!("`{range}` names no range, and `{name}` is one buffer, not a set of them"),
                    match self.current_var {
                        Some(_) => format!("name the range in the loop before its use, `{example}`, or write it, `{name}[0..n]`"),
                        None => format!("write the range, `{name}[0..n]`; a loop names ranges, `{example}`"),
                    },
                );
                false
            }
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
                // A second loop is an error of its own (`check/formation.rs`):
                // it indexes a set by its own variable, not "elsewhere in
                // this loop" than the first.
                let first_in_loop = self.indexed_in_loop.insert(format!("{} {name}", of.one()));
                let earlier = match first_in_loop && !self.reading_later {
                    true => None,
                    false => array.index.as_ref(),
                };
                match earlier {
                    None => {
                        array.index = Some((index.clone(), reading.value));
                        array.index_text = Some(text(index));
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

    /// `e` or `e[index]` of a set of events.
    pub(super) fn event_element(&mut self, event: &Ident, index: &Option<Expr>) -> Option<EventId> {
        let id = self.event(event)?;
        let mut array = self.plan.event_arrays[id].take();
        let used = self.element(&mut array, event, index.as_ref(), SetOf::Events);
        self.plan.event_arrays[id] = array;
        used.then_some(id)
    }

    /// A place's index and range with the loop's named ranges put in:
    /// `a[r]` of a buffer that is not a set, `ring[c % r][r]` of one.
    pub(super) fn named_range(
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
    /// What launch argument `value` counts, if it reads the variable of
    /// the loop it is in and is a size cast to an integer type.
    pub(super) fn count(&self, value: &Expr) -> Option<Count> {
        crate::sym::mentions(value, self.current_var.as_ref()?)?;
        let mut inner = value;
        while let Expr::Paren(paren) = inner {
            inner = &paren.expr;
        }
        let (size, cast_type) = match inner {
            Expr::Cast(cast) => (&*cast.expr, Some(&*cast.ty)),
            other => (other, None),
        };
        let cast = cast_type.map_or_else(|| "usize".to_owned(), crate::text::text);
        let counted =
            INTEGERS.contains(&cast.as_str()) && crate::sym::is_pure(size, &self.plan.atoms);
        counted.then(|| Count {
            size: size.clone(),
            cast,
            cast_type: cast_type.cloned(),
        })
    }

    /// `expr` with each `r.len()` of a named range `r` written out as
    /// `(end - start)`.
    pub(super) fn with_ranges(&self, expr: &Expr) -> Expr {
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
}
