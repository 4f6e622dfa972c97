//! Declarations: the plan's parameters, its buffers (with their lengths
//! as sizes), kernels, streams and events.

use super::*;

impl Builder<'_> {
    pub(super) fn param(&mut self, param: &syntax::ParamDef) {
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
                let kind = BufferKind::Param {
                    mutable: reference.mutability.is_some(),
                    registered: param.registered.is_some(),
                };
                self.plan.buffers.push(Buffer {
                    name: param.name.clone(),
                    declared: label::declared(&elem, len_expr.as_ref(), kind),
                    elem,
                    len,
                    len_facts,
                    len_expr,
                    kind,
                    array: None,
                    gpu: None,
                });
                self.declare(&param.name, Name::Buffer(buffer));
                ParamKind::Slice(buffer)
            }
            None => {
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
        let declared = match &kind {
            ParamKind::Size => format!("{}: usize", param.name),
            ParamKind::Value(ty) => format!("{}: {}", param.name, text(ty)),
            ParamKind::Slice(buffer) => {
                format!("{}: {}", param.name, self.plan.buffers[*buffer].declared)
            }
        };
        self.plan.params.push(Param {
            name: param.name.clone(),
            declared,
            kind,
            run: param.run.map(|run| run.span),
            registered: param.registered.map(|registered| registered.span),
            bound: param.bound.as_ref().map(|(le, limit)| {
                let name = &param.name;
                Bound {
                    span: le.span(),
                    size: syn::parse_quote!(#name),
                    limit: limit.clone(),
                    label: format!("{name} <= {}", text(limit)),
                }
            }),
        });
    }

    /// `run len: usize <= cap`: each size parameter's bound, read once
    /// every parameter is known (a bound may name a later one), and
    /// assumed by every proof, as `len - cap <= 0`. (A bound on another
    /// parameter is refused by `check/formation.rs`.)
    pub(super) fn bounds(&mut self) {
        let bounds: Vec<Bound> = self.plan.bounds().cloned().collect();
        for bound in bounds {
            let size = self.read(&bound.size).value;
            let Reading {
                value: limit,
                facts,
            } = self.read(&bound.limit);
            if let Some(fact) = size.sub(&limit) {
                self.plan.atoms.assume(fact);
                for fact in facts {
                    self.plan.atoms.assume(fact);
                }
            }
        }
    }

    pub(super) fn declaration(&mut self, item: &ItemDef) {
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
                    let gpu = self.placement(&def.gpu, &def.name, true);
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

    pub(super) fn kernel(&mut self, kernel: &syntax::KernelDecl) {
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

    pub(super) fn buffer(&mut self, def: &syntax::BufferDef, kind: BufferKind) -> BufferId {
        let Reading {
            value: len,
            facts: len_facts,
        } = self.read(&def.len);
        // Only device memory may be a set (`check/formation.rs`).
        let array = self.array(&def.count);
        let gpu = self.placement(&def.gpu, &def.name, kind == BufferKind::Device);
        let id = self.plan.buffers.len();
        self.plan.buffers.push(Buffer {
            name: def.name.clone(),
            declared: label::declared(&def.elem, Some(&def.len), kind),
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

    /// A set's count, read as a size (which `new` computes).
    pub(super) fn array(&mut self, count: &Option<Expr>) -> Option<Array> {
        let count = count.as_ref()?;
        self.read(count);
        Some(Array {
            count: count.clone(),
            index: None,
            count_text: text(count),
            index_text: None,
        })
    }

    /// A size and the facts its computation guarantees; 0 (and an error)
    /// if the expression is not one.
    pub(super) fn read(&mut self, expr: &Expr) -> Reading {
        sym::read(expr, &mut self.plan.atoms).unwrap_or_else(|error| {
            self.errors.push(error);
            Reading {
                value: Sym::constant(0),
                facts: Vec::new(),
            }
        })
    }
}
