//! A plan's GPUs (`gpus gpu[g];`, `peer gpu;`) or its ranks (`ranks
//! world;`), and where each device buffer and stream is placed.

use super::*;

impl Builder<'_> {
    /// `gpus gpu[g];` (at most one) and `peer gpu;`.
    pub(super) fn gpus(&mut self, items: &[ItemDef]) {
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
                label: format!("gpus {}[{}]", decl.name, text(count)),
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
    pub(super) fn ranks(&mut self, decl: &syntax::RanksDecl) {
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
    pub(super) fn placement(
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
}
