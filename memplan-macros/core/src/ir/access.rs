//! What each op reads and writes: the facts the lifetime and race checks
//! reason about.

use super::{Arg, BufferId, KernelParamKind, Loop, OpKind, Plan};
use crate::sym::{Sym, SymRange};
use crate::syntax::SliceAccess;
use proc_macro2::Span;

/// One op's use of a range of one buffer.
#[derive(Clone, Debug)]
pub struct Access {
    /// The buffer.
    pub buffer: BufferId,
    /// The range of it, as sizes.
    pub range: SymRange,
    /// What the run time guarantees of the range (see `Place::facts`).
    pub facts: Vec<Sym>,
    /// How the op uses it.
    pub mode: Mode,
    /// The range as the plan writes it, where it is the place's (see
    /// `Place::written`), for people.
    pub written: Option<String>,
    /// The buffer's name where the op writes it.
    pub span: Span,
}

impl Access {
    /// The range for messages: as written where it is, else its sizes.
    pub fn shown(&self, atoms: &crate::sym::Atoms) -> String {
        super::shown(&self.written, &self.range, atoms)
    }
}

/// How an op uses memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Reads only.
    Read,
    /// Writes only, reading nothing first.
    Write,
    /// Reads, then writes (a kernel's `&mut [T]`, a host step's `&mut`).
    ReadWrite,
    /// Reads and writes with atomic operations only (a kernel's `&atomic
    /// [T]`, whose source says so): conflicts with every other access but
    /// another atomic update.
    Atomic,
    /// A stream-ordered allocation: the memory comes into being.
    Alloc,
    /// A stream-ordered free: the memory goes away.
    Free,
}

impl Mode {
    /// Whether it reads the memory.
    pub fn reads(self) -> bool {
        matches!(self, Mode::Read | Mode::ReadWrite | Mode::Atomic)
    }

    /// Whether two accesses to one element conflict unless ordered: one
    /// changes the memory, and they are not both atomic updates.
    pub fn conflicts_with(self, other: Mode) -> bool {
        (self.writes() || other.writes()) && !(self == Mode::Atomic && other == Mode::Atomic)
    }

    /// Whether it changes the memory (or its existence): conflicts with any
    /// other access.
    pub fn writes(self) -> bool {
        !matches!(self, Mode::Read)
    }

    /// The verb messages use: `reads`, `writes`, `atomically updates`...
    pub fn verb(self) -> &'static str {
        match self {
            Mode::Read => "reads",
            Mode::Write => "writes",
            Mode::ReadWrite => "reads and writes",
            Mode::Atomic => "atomically updates",
            Mode::Alloc => "allocates",
            Mode::Free => "frees",
        }
    }
}

impl Plan {
    /// The accesses of op `op`, in the order it makes them.
    pub fn accesses(&self, op: usize) -> Vec<Access> {
        let whole = |buffer: BufferId, mode, span| Access {
            buffer,
            range: SymRange {
                start: Sym::constant(0),
                end: self.buffers[buffer].len.clone(),
            },
            facts: self.buffers[buffer].len_facts.clone(),
            mode,
            written: None,
            span,
        };
        let place = |place: &super::Place, mode| Access {
            buffer: place.buffer,
            range: place.range.clone(),
            facts: place.facts.clone(),
            mode,
            written: place.written.clone(),
            span: place.span,
        };
        match &self.ops[op].kind {
            OpKind::Copy { src, dst } => vec![place(src, Mode::Read), place(dst, Mode::Write)],
            OpKind::Fill { dst, .. } => vec![place(dst, Mode::Write)],
            OpKind::Launch(launch) => {
                let params = &self.kernels[launch.kernel].params;
                // With the wrong number of arguments (an error of its own),
                // which parameter an argument meets is a guess: assume writes,
                // which conflict with everything and need nothing written.
                let counted = launch.args.len() == params.len();
                launch
                    .args
                    .iter()
                    .enumerate()
                    .filter_map(|(index, arg)| match arg {
                        Arg::Buffer(p) => {
                            let mode = match params
                                .get(index)
                                .filter(|_| counted)
                                .map(|param| &param.kind)
                            {
                                Some(KernelParamKind::Slice {
                                    access: SliceAccess::Read,
                                    ..
                                }) => Mode::Read,
                                Some(KernelParamKind::Slice {
                                    access: SliceAccess::Write,
                                    ..
                                }) => Mode::Write,
                                Some(KernelParamKind::Slice {
                                    access: SliceAccess::Atomic,
                                    ..
                                }) => Mode::Atomic,
                                Some(_) => Mode::ReadWrite,
                                None => Mode::Write,
                            };
                            let mut access = place(p, mode);
                            if let Some(Some(super::LaunchExtent::Sized { value, facts, .. })) =
                                launch.extents.get(index)
                                && !super::extent::provably_past(&self.atoms, p, value, facts)
                            {
                                narrow(&mut access, value, facts);
                            }
                            Some(access)
                        }
                        Arg::Value(_) => None,
                    })
                    .collect()
            }
            OpKind::Host { params, .. } => params
                .iter()
                .map(|p| {
                    // A host step is never `&atomic` (the parser refuses it).
                    let mode = match p.access {
                        SliceAccess::Read => Mode::Read,
                        SliceAccess::ReadWrite | SliceAccess::Atomic => Mode::ReadWrite,
                        SliceAccess::Write => Mode::Write,
                    };
                    whole(p.buffer, mode, p.name.span())
                })
                .collect(),
            OpKind::Alloc(buffer) => vec![whole(
                *buffer,
                Mode::Alloc,
                self.buffers[*buffer].name.span(),
            )],
            OpKind::Free(buffer) => vec![whole(*buffer, Mode::Free, self.ops[op].span)],
            OpKind::Collective(c) => {
                use crate::syntax::CollectiveWord as W;
                match (c.word, c.in_place) {
                    (W::Send, _) => vec![place(&c.send, Mode::Read)],
                    (W::Recv, _) => vec![place(&c.recv, Mode::Write)],
                    // Each rank's buffer is read and written.
                    (W::AllReduce, true) => vec![place(&c.recv, Mode::ReadWrite)],
                    // The root's is read, and every other rank's written.
                    // Every process of a `ranks` job runs this one plan,
                    // so the root's buffer is written before exactly when
                    // every rank's is: reading it on every rank is exact.
                    // On several GPUs of one plan, which part is the root's
                    // the checks do not know: it counts as written, and an
                    // unwritten root buffer is not caught.
                    (W::Broadcast, true) if self.ranks.is_some() => {
                        vec![place(&c.recv, Mode::ReadWrite)]
                    }
                    (W::Broadcast, true) => vec![place(&c.recv, Mode::Write)],
                    // Out of place, every rank's send counts as read
                    // (a broadcast reads only the root's).
                    _ => vec![place(&c.send, Mode::Read), place(&c.recv, Mode::Write)],
                }
            }
            OpKind::Record(_) | OpKind::Wait(_) | OpKind::Sync(_) => Vec::new(),
        }
    }

    /// What all the iterations of `repeat` together touch of `access`, one
    /// of its body's accesses (for iteration `c`), where that is one range
    /// the checks can name; `None` where it is not (or is nothing).
    ///
    /// - A range that does not read `c` is the same in every iteration:
    ///   the loop touches it if it runs at all, which a loop that always
    ///   runs does.
    /// - A range `s(c)..s(c + 1)` tiles: `c` from 0 to `k - 1` together
    ///   touch `s(0)..s(k)`, each iteration's `s(c) <= s(c + 1)` checked
    ///   before it runs, and with `k = 0` that range is empty, as what no
    ///   iteration touches is. So the loop need not run.
    ///
    /// The facts kept are those that hold whether or not an iteration ran:
    /// what computing `k` guarantees, and, where the loop always runs,
    /// what the body's own facts say without `c`. A set's element (`ring[c
    /// % r]`) is one buffer per iteration, so its accesses have no union.
    pub fn over_every_iteration(&self, repeat: &Loop, access: &Access) -> Option<Access> {
        if self.buffers[access.buffer].array.is_some() {
            return None;
        }
        let atoms = &self.atoms;
        let c = repeat.counter;
        let (start, end) = (&access.range.start, &access.range.end);
        let without_c = |facts: &[Sym]| -> Vec<Sym> {
            facts
                .iter()
                .filter(|fact| !atoms.reads_var(fact, c))
                .cloned()
                .collect()
        };
        let mut facts = without_c(&repeat.facts);
        if repeat.never_empty {
            facts.extend(without_c(&access.facts));
        }
        let range = if !atoms.reads_var(start, c) && !atoms.reads_var(end, c) {
            if !repeat.never_empty {
                return None;
            }
            access.range.clone()
        } else {
            let next = Sym::atom(c).add(&Sym::constant(1))?;
            let tiles = atoms.substitute(start, c, &next)?.sub(end)?.is_zero();
            if !tiles {
                return None;
            }
            SymRange {
                start: atoms.substitute(start, c, &Sym::constant(0))?,
                end: atoms.substitute(start, c, &repeat.count_value)?,
            }
        };
        Some(Access {
            range,
            facts,
            // Every iteration's range: not the one written.
            written: None,
            ..access.clone()
        })
    }
}

/// Narrows a launch's access to what the kernel touches, its extent from
/// the argument's start: `new` checks that the extent fits the argument,
/// which the checks may then take as a fact.
fn narrow(access: &mut Access, extent: &Sym, facts: &[Sym]) {
    let Some(end) = access.range.start.add(extent) else {
        return;
    };
    access.facts.extend(facts.iter().cloned());
    access.facts.extend(end.sub(&access.range.end));
    // The range as written, unless the extent reaches less of it (an
    // extent of `chunk.len()` over `used = 0..chunk.len()` is all of it).
    if end != access.range.end {
        access.written = None;
    }
    access.range.end = end;
}
