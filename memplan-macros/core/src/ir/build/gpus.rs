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
            // Whether `new` can fix it, and whether it is 0 as written,
            // are rules of the checks (`check/gpu_placement.rs`,
            // `check/fixed_at_new.rs`).
            let count_value = self.read(count).value;
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

    /// `ranks world;`: at most one.
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
        self.reserve(&decl.name);
        self.plan.ranks = Some(Ranks {
            name: decl.name.clone(),
            span,
        });
    }

    /// The GPU of the device buffer or stream `name`, as `def` places it
    /// on the plan's GPUs. Whether it may be placed so (host memory may
    /// not; a set is placed element by element, one buffer on one GPU;
    /// within the plan's GPUs) and whether it must be (in a plan on
    /// several GPUs) are rules of the checks (`check/gpu_placement.rs`).
    /// Memory that is on no GPU (`on_gpu` false: host and stream-ordered
    /// memory) keeps its placement unread: that it is placed at all is its
    /// one error, whatever GPUs it names and whatever the plan declares.
    pub(super) fn placement(
        &mut self,
        def: &Option<syntax::PlacementDef>,
        name: &Ident,
        on_gpu: bool,
    ) -> Option<Placement> {
        let def = def.as_ref()?;
        if !on_gpu {
            return Some(match &def.index {
                None => Placement::Each(def.span()),
                Some(index) => Placement::One {
                    index: index.clone(),
                    value: Sym::constant(0),
                    span: def.span(),
                },
            });
        }
        let Some(gpus) = self.plan.gpus.as_ref().map(|gpus| gpus.name.clone()) else {
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
        };
        if def.gpus != gpus {
            self.errors.at(
                def.gpus.span(),
                format!("`{}` is not the plan's GPUs, which are `{gpus}`", def.gpus),
                format!("write `on {gpus}[...]`"),
            );
            return None;
        }
        Some(match &def.index {
            None => Placement::Each(def.span()),
            Some(index) => Placement::One {
                index: index.clone(),
                value: self.read(index).value,
                span: def.span(),
            },
        })
    }
}
