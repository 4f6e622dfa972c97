//! A plan's ops resolved into the steps of a run, in the order they are
//! queued: loops unrolled, each op resolved once (or at each run, where it
//! reads what a run gives), events on their GPUs, and each collective's
//! parts gathered into one NCCL group.

use super::given::Givens;
use super::info::{Arg, LaunchInfo};
use super::info::{MALFORMED, Op, OrBug, PlanInfo};
use super::launch::{Chunk, LaunchStep, MAX_ALIGN, push_chunks};
use super::layout::Layout;
use super::resolve::{Against, Resolver, op_info, sizes_of};
use super::sizes::Sizes;
use super::step::Step;
use crate::error::{Fault, Result};
use crate::fill::Pattern;
use crate::op::{OpInfo, OpResultExt};

/// The most ops a plan's loops may unroll into: more would be a run of
/// hours of driver calls, and gigabytes of steps.
const MAX_STEPS: usize = 1 << 22;

/// One step of a run, with what queueing and reporting it need.
pub(crate) struct Resolved {
    pub step: Step,
    /// The GPU whose context it is queued in.
    pub gpu: u16,
    /// Its op, by its number in the plan's description.
    pub def: u16,
    /// For a rank's part of a collective: whether it opens the NCCL group
    /// of its collective's parts, and whether it closes it.
    pub group: Option<(bool, bool)>,
    /// Whether its op reads sizes or values each run gives: a graph
    /// replaying the run must be given the step anew.
    pub per_run: bool,
    /// Its op, as errors and reports name it.
    pub op: OpInfo,
}

/// What makes steps: the plan laid out, what its ops are checked against,
/// its sizes and what `new` and the run gave.
pub(crate) struct Inputs<'a> {
    pub layout: &'a Layout,
    pub against: Against<'a>,
    pub sizes: &'a mut Sizes,
    pub given: &'a Givens,
}

/// The steps of a run.
pub(crate) struct Steps {
    /// Private: what a step does changes only through `resolve_for_run`
    /// and `rewrite_values`, which count it (`changes`); the rest of the
    /// plan reads the steps (`list`), or queues (`for_queue`) or replays
    /// (`for_replay`) them, which fills in run-time addresses only.
    list: Vec<Resolved>,
    /// Steps resolved at each run, since they read sizes or values the
    /// run gives, and their ops.
    dynamic: Vec<(usize, usize)>,
    /// Whether a loop reads what each run gives: then each run unrolls
    /// the plan anew, once it has given it.
    unroll_each_run: bool,
    /// The GPU each stream-ordered allocation is made on (its `alloc`'s
    /// stream's), once an `alloc` of it is resolved.
    pub scratch_gpus: Vec<Option<u16>>,
    /// Launches of the last unrolling, whose allocations the next one's
    /// launches take over: their boxes too, which steps hold.
    #[allow(clippy::vec_box)]
    spares: Vec<Box<LaunchStep>>,
    /// By op: whether it reads sizes or values each run gives (which
    /// sizes do is fixed when the plan is made).
    per_run: Vec<bool>,
    /// Whether the plan has collectives, whose parts each unrolling
    /// gathers into groups.
    collectives: bool,
    /// What `rewrite_values` writes into each op's steps, by op, and the
    /// launch arguments it writes with their values: kept for their room.
    rewrites: Vec<(u16, Rewrite)>,
    staged: Staged,
    /// How many times the steps were resolved again or had values written
    /// into them, counted before any changes: a graph made to do what the
    /// steps did at one count needs no change while it stands. Kept here,
    /// beside the only code that changes what steps do (runs and captures
    /// patch addresses only).
    changes: u64,
    /// The steps whose arguments or fill value the last change changed,
    /// where it was a rewrite of values that changed no fill's unit
    /// (`written_only`): nothing else of the steps changed, not even their
    /// shape, so a graph made for the count before needs just these steps'
    /// nodes set.
    written: Vec<usize>,
    written_only: bool,
}

/// How the steps changed last (see [`Steps::for_replay`]).
#[derive(Clone, Copy)]
pub(crate) struct Changes<'a> {
    /// How many times the steps were changed.
    pub count: u64,
    /// The steps the last change changed, if it changed only values.
    pub written: Option<&'a [usize]>,
}

impl Steps {
    /// The steps of the plan `inputs` lays out: all of them, or, where a
    /// loop reads what each run gives, none until the first run.
    pub fn new(inputs: Inputs<'_>) -> Result<Steps> {
        let info = inputs.layout.info;
        let mut steps = Steps {
            list: Vec::new(),
            dynamic: Vec::new(),
            unroll_each_run: false,
            scratch_gpus: vec![None; usize::from(inputs.layout.scratch_buffers)],
            spares: Vec::new(),
            per_run: (0..info.ops.len())
                .map(|op| is_dynamic(info, inputs.sizes, op))
                .collect(),
            collectives: info
                .ops
                .iter()
                .any(|def| matches!(def.op, Op::Collective(_))),
            rewrites: Vec::new(),
            staged: Staged::default(),
            changes: 0,
            written: Vec::new(),
            written_only: false,
        };
        steps.unroll_each_run = info.loops.iter().any(|l| {
            inputs.sizes.is_dynamic(l.count)
                || (l.first..l.end).any(|op| steps.per_run.get(usize::from(op)) == Some(&true))
        });
        if !steps.unroll_each_run {
            steps.unroll(inputs)?;
        }
        Ok(steps)
    }

    /// The steps, to read.
    pub fn list(&self) -> &[Resolved] {
        &self.list
    }

    /// The steps, to queue: queuing a step fills in the addresses known
    /// only during a run (caller slices, stream-ordered allocations) and
    /// changes nothing else of what it does, so a graph made to do what
    /// the steps do still does.
    pub fn for_queue(&mut self) -> &mut [Resolved] {
        &mut self.list
    }

    /// The steps, to replay, with how they changed last.
    pub fn for_replay(&mut self) -> (&mut [Resolved], Changes<'_>) {
        let changes = Changes {
            count: self.changes,
            written: self.written_only.then_some(&self.written[..]),
        };
        (&mut self.list, changes)
    }

    /// Resolves what reads this run's sizes and values: the ops that do,
    /// or the whole plan again when a loop does.
    pub fn resolve_for_run(&mut self, inputs: Inputs<'_>) -> Result<()> {
        self.changes += 1;
        self.written_only = false;
        if self.unroll_each_run {
            for resolved in self.list.drain(..) {
                if let Step::Launch { launch, .. } = resolved.step {
                    self.spares.push(launch);
                }
            }
            self.dynamic.clear();
            let unrolled = self.unroll(inputs);
            self.spares.clear();
            return unrolled;
        }
        let mut inputs = inputs;
        for &(step, index) in &self.dynamic {
            let Resolved { step: old, op, .. } = &mut self.list[step];
            let mut resolver = resolver(&mut inputs, &self.scratch_gpus);
            // Until resolved, the step is pending: a run that fails here
            // queues nothing, and the next resolves it again.
            if let Step::Launch { launch, .. } = std::mem::replace(old, Step::Pending) {
                resolver.spare = Some(launch);
            }
            let (resolved, gpu) = resolver.resolve(index).at_op(op)?;
            match resolved {
                // Events are resolved once, in program order: they read no
                // size a run gives.
                Step::Record { .. } | Step::Wait { .. } => return Err(op.error(MALFORMED)),
                Step::Alloc { scratch, .. } => {
                    let slot = self.scratch_gpus.get_mut(usize::from(scratch));
                    *slot.ok_or_else(|| op.error(MALFORMED))? = Some(gpu);
                }
                _ => {}
            }
            (self.list[step].step, self.list[step].gpu) = (resolved, gpu);
        }
        Ok(())
    }

    /// Writes a run's values into the steps resolved for the last run,
    /// which gave the same sizes: each launch argument and fill value a run
    /// gives, checked as resolving checks it. `false` where a step must be
    /// resolved again (an extent measured from a value, a value that does
    /// not fit its place, one an extent names that differs from its size):
    /// the caller resolves the run as usual, and any error comes from
    /// there. Steps of the ops that read run sizes only are as they were.
    ///
    /// An op's values are checked and laid out once, at its first step, and
    /// written into each step its loops unrolled it into: what the check
    /// reads (the op, the values, the run's sizes) is the same for all of
    /// them. A step whose bytes come out the same is not counted as
    /// changed (`written`).
    pub fn rewrite_values(&mut self, info: &PlanInfo, sizes: &mut Sizes, given: &Givens) -> bool {
        self.changes += 1;
        self.written_only = false;
        let Steps {
            list,
            rewrites,
            staged,
            written,
            ..
        } = self;
        rewrites.clear();
        staged.writes.clear();
        staged.chunks.clear();
        written.clear();
        // Whether a fill's unit changed, which changes the run's shape.
        let mut reshaped = false;
        for (index, resolved) in list.iter_mut().enumerate() {
            if !resolved.per_run {
                continue;
            }
            let def = resolved.def;
            let at = rewrites.partition_point(|(op, _)| *op < def);
            if rewrites.get(at).is_none_or(|(op, _)| *op != def) {
                let Some(rewrite) = rewrite_of(info, sizes, given, def, staged) else {
                    return false;
                };
                rewrites.insert(at, (def, rewrite));
            }
            // Whether the step's bytes changed; `None` where it must be
            // resolved again.
            let changed = match (&rewrites[at].1, &mut resolved.step) {
                (Rewrite::Arguments(range), Step::Launch { launch, .. }) => {
                    (staged.writes[range.clone()].iter()).try_fold(false, |changed, write| {
                        let chunks = &staged.chunks[write.chunks.clone()];
                        let set = launch.set_value(write.position, chunks, write.initialized)?;
                        Some(changed | set)
                    })
                }
                (
                    &Rewrite::Fill {
                        pattern: Some(new), ..
                    },
                    Step::Fill { pattern, .. },
                ) => {
                    reshaped |= pattern.unit() != new.unit();
                    Some(std::mem::replace(pattern, new) != new)
                }
                (&Rewrite::Fill { value, .. }, Step::FillHost { value: bytes, .. }) => {
                    let new = &*given.fills[value].value.bytes;
                    let changed = **bytes != *new;
                    if changed {
                        *bytes = Box::from(new);
                    }
                    Some(changed)
                }
                (Rewrite::Arguments(_) | Rewrite::Fill { .. }, _) | (_, Step::Pending) => None,
                // What reads run sizes only: the sizes are the same.
                (Rewrite::Nothing, _) => Some(false),
            };
            match changed {
                Some(true) => written.push(index),
                Some(false) => {}
                None => return false,
            }
        }
        self.written_only = !reshaped;
        true
    }

    /// Resolves every op into the steps of a run, in program order, each
    /// loop's ops once for each value of its variable. A `wait` for an
    /// event nothing recorded yet in the run waits for nothing, so it is
    /// left out (the first iterations of a ring wait for slots never used;
    /// a graph capture refuses waits for events recorded outside it).
    fn unroll(&mut self, mut inputs: Inputs<'_>) -> Result<()> {
        let layout = inputs.layout;
        let info = layout.info;
        // By event, the GPU whose copy of it was last recorded.
        let mut recorded = vec![None; layout.events()];
        let mut index = 0;
        while index < info.ops.len() {
            let Some(repeat) = info.loops.iter().find(|l| usize::from(l.first) == index) else {
                self.add_step(&mut inputs, index, None, &mut recorded)?;
                index += 1;
                continue;
            };
            let body = usize::from(repeat.first)..usize::from(repeat.end);
            if body.is_empty() || body.end > info.ops.len() {
                return Err(info.error(repeat.site, MALFORMED));
            }
            let count = (inputs.sizes.get(repeat.count)).map_err(|f| info.error(repeat.site, f))?;
            let steps = count.checked_mul(body.len());
            if steps.is_none_or(|steps| self.list.len() + steps > MAX_STEPS) {
                let fault = Fault::Unsupported(
                    "the loop would unroll into more than 2^22 ops: use fewer, longer chunks",
                );
                return Err(info.error(repeat.site, fault));
            }
            let unrolled = (0..count).try_for_each(|iteration| {
                inputs.sizes.set_loop_input(repeat.input, Some(iteration));
                body.clone().try_for_each(|op| {
                    self.add_step(&mut inputs, op, Some(iteration), &mut recorded)
                })
            });
            inputs.sizes.set_loop_input(repeat.input, None);
            unrolled?;
            index = body.end;
        }
        self.gather_collectives(layout)
    }

    /// Resolves op `index` (in loop iteration `iteration`) as the next step.
    fn add_step(
        &mut self,
        inputs: &mut Inputs<'_>,
        index: usize,
        iteration: Option<usize>,
        recorded: &mut [Option<u16>],
    ) -> Result<()> {
        let (layout, info) = (inputs.layout, inputs.layout.info);
        let def = &info.ops[index];
        let mut op = op_info(info, def);
        // Reports put an op on its stream of a set: `lanes[2]`.
        let set = def
            .stream
            .and_then(|stream| info.streams.get(usize::from(stream))?.array);
        if let Some(set) = set {
            let element = inputs.sizes.get(set.index).at_op(&op)?;
            op.element = u16::try_from(element).ok();
        }
        let per_run = self.per_run.get(index) == Some(&true);
        // Unrolled at each run, the run's sizes and values are given.
        let dynamic = per_run && !self.unroll_each_run;
        let (mut step, gpu) = match (dynamic, iteration) {
            (false, _) => {
                let mut resolver = resolver(inputs, &self.scratch_gpus);
                resolver.spare = self.spares.pop();
                let resolved = resolver.resolve(index);
                self.spares.extend(resolver.spare.take());
                resolved.at_op(&op)?
            }
            (true, None) => {
                self.dynamic.push((self.list.len(), index));
                (Step::Pending, 0)
            }
            (true, Some(_)) => return Err(op.error(MALFORMED)),
        };
        match &mut step {
            // The event's copy on the stream's GPU.
            Step::Record { event, .. } => {
                let last = recorded.get_mut(usize::from(*event));
                *last.ok_or_else(|| op.error(MALFORMED))? = Some(gpu);
                *event = event_on(layout, *event, gpu).at_op(&op)?;
            }
            // The copy last recorded; none yet: nothing to wait for.
            Step::Wait { event, .. } => {
                let last = recorded.get(usize::from(*event));
                let Some(on) = *last.ok_or_else(|| op.error(MALFORMED))? else {
                    return Ok(());
                };
                *event = event_on(layout, *event, on).at_op(&op)?;
            }
            &mut Step::Alloc { scratch, .. } => {
                let slot = self.scratch_gpus.get_mut(usize::from(scratch));
                *slot.ok_or_else(|| op.error(MALFORMED))? = Some(gpu);
            }
            _ => {}
        }
        debug_assert!(usize::from(gpu) < layout.gpus());
        self.list.push(Resolved {
            step,
            gpu,
            def: index as u16,
            group: None,
            per_run,
            op,
        });
        Ok(())
    }

    /// Orders the run's steps so that each collective's parts are queued
    /// together, once each is checked to have one part on every GPU.
    fn gather_collectives(&mut self, layout: &Layout) -> Result<()> {
        if !self.collectives {
            return Ok(());
        }
        let (info, ranks) = (layout.info, layout.communicators);
        let sites: Vec<u16> = self.list.iter().map(|resolved| resolved.def).collect();
        let gpus: Vec<u16> = self.list.iter().map(|r| gpu_of_step(layout, r)).collect();
        let steps: Vec<&Step> = self.list.iter().map(|resolved| &resolved.step).collect();
        let gathered = super::collectives::gather(info, &steps, &sites, &gpus, ranks)
            .map_err(|(step, fault)| self.list[step].op.error(fault))?;
        let order = gathered.order;
        if order.iter().enumerate().all(|(at, &step)| at == step) {
            for (resolved, group) in self.list.iter_mut().zip(gathered.groups) {
                resolved.group = group;
            }
            return Ok(());
        }
        let malformed = || info.error(info.site, MALFORMED);
        let mut position = vec![usize::MAX; order.len()];
        for (at, &step) in order.iter().enumerate() {
            *position.get_mut(step).ok_or_else(malformed)? = at;
        }
        if position.contains(&usize::MAX) || order.len() != self.list.len() {
            return Err(malformed());
        }
        let mut list: Vec<Option<Resolved>> = std::mem::take(&mut self.list)
            .into_iter()
            .map(Some)
            .collect();
        self.list = order
            .iter()
            .filter_map(|&at| list.get_mut(at)?.take())
            .collect();
        for (resolved, group) in self.list.iter_mut().zip(gathered.groups) {
            resolved.group = group;
        }
        for (step, _) in &mut self.dynamic {
            *step = position[*step];
        }
        Ok(())
    }
}

/// What a run's values write into the steps of one op.
enum Rewrite {
    /// A launch's arguments: `Staged::writes[range]`, each a position and
    /// its value laid out in `Staged::chunks`.
    Arguments(std::ops::Range<usize>),
    /// A fill's value, by where it is among the fills given, and its
    /// pattern where the driver can repeat it.
    Fill {
        value: usize,
        pattern: Option<Pattern>,
    },
    /// Nothing: the op reads run sizes only.
    Nothing,
}

/// What the run's values write into the steps of op `def`, checked as
/// resolving checks them (pushing a launch's arguments onto `staged`);
/// `None` where its steps must be resolved again.
fn rewrite_of(
    info: &PlanInfo,
    sizes: &mut Sizes,
    given: &Givens,
    def: u16,
    staged: &mut Staged,
) -> Option<Rewrite> {
    match &info.ops.get(usize::from(def))?.op {
        Op::Launch(launch) => {
            let start = staged.writes.len();
            argument_writes(info, sizes, given, def, launch, staged)?;
            Some(Rewrite::Arguments(start..staged.writes.len()))
        }
        &Op::Fill(dst) => {
            let value = given.fills.iter().position(|g| g.op == def)?;
            let fill = &given.fills[value].value;
            let elem = info.elem(dst.buffer()).ok()?;
            fill.elem.same_as(&elem).then_some(())?;
            let pattern = Pattern::of(&fill.bytes);
            Some(Rewrite::Fill { value, pattern })
        }
        _ => Some(Rewrite::Nothing),
    }
}

/// One launch argument a run's value is written into.
struct Write {
    position: usize,
    /// Its value, laid out as launches keep it: `Staged::chunks[chunks]`.
    chunks: std::ops::Range<usize>,
    /// Whether every byte of the value is initialized (see
    /// [`LaunchStep::set_value`]).
    initialized: bool,
}

/// The launch arguments `rewrite_values` writes, and their values laid
/// out as launches keep them.
#[derive(Default)]
struct Staged {
    writes: Vec<Write>,
    chunks: Vec<Chunk>,
}

/// Pushes onto `staged` each value argument of launch `def` and its value
/// as launches keep it, each checked as resolving checks it; `None` where
/// one does not pass.
fn argument_writes(
    info: &PlanInfo,
    sizes: &mut Sizes,
    given: &Givens,
    def: u16,
    launch: &LaunchInfo<'static>,
    staged: &mut Staged,
) -> Option<()> {
    let code = info.kernel_code(launch.kernel).ok()?;
    for (position, arg) in launch.args.iter().enumerate() {
        let bound = match *arg {
            Arg::Measured(..) => return None,
            Arg::Value => None,
            Arg::Bound(size, _) => Some(size),
            Arg::Buffer(_) | Arg::Extent(..) | Arg::Count(..) => continue,
        };
        let param = code.params.get(position)?;
        let at = given.value_at(def, u16::try_from(position).ok()?)?;
        let value = &given.values[at].value;
        // As resolving checks it: the parameter's own type and layout.
        let layout = param.layout();
        if !param.takes(value.type_id)
            || value.bytes.len() != layout.size
            || value.align != layout.align
            || value.align > MAX_ALIGN
        {
            return None;
        }
        // A value an extent names equals the size it stands for.
        if let Some(size) = bound {
            let size = sizes.get(size).ok()?;
            if value.integer.is_none() || i128::try_from(size).ok() != value.integer {
                return None;
            }
        }
        let start = staged.chunks.len();
        push_chunks(&mut staged.chunks, &value.bytes);
        staged.writes.push(Write {
            position,
            chunks: start..staged.chunks.len(),
            initialized: value.initialized,
        });
    }
    Some(())
}

/// What resolving an op reads.
fn resolver<'a>(inputs: &'a mut Inputs<'_>, scratch_gpus: &'a [Option<u16>]) -> Resolver<'a> {
    let layout = inputs.layout;
    Resolver {
        info: layout.info,
        devices: &layout.devices,
        against: inputs.against,
        sizes: &mut *inputs.sizes,
        placed: &layout.placed,
        element_bases: &layout.element_bases,
        scratch_gpus,
        given: inputs.given,
        streams: &layout.stream_starts,
        stream_gpus: &layout.stream_gpus,
        events: &layout.event_starts,
        ranks: layout.ranks,
        spare: None,
    }
}

/// Whether op `index` reads sizes or values each run gives.
fn is_dynamic(info: &PlanInfo, sizes: &Sizes, index: usize) -> bool {
    info.per_run.contains(&(index as u16))
        || sizes_of(info, index)
            .iter()
            .any(|&size| sizes.is_dynamic(size))
}

/// The GPU of a step: of its stream, for one resolved at each run.
fn gpu_of_step(layout: &Layout, resolved: &Resolved) -> u16 {
    if !matches!(resolved.step, Step::Pending) {
        return resolved.gpu;
    }
    let def = layout.info.ops.get(usize::from(resolved.def));
    def.and_then(|def| def.stream)
        .and_then(|decl| layout.stream_starts.get(usize::from(decl)))
        .and_then(|&first| layout.stream_gpus.get(usize::from(first)))
        .copied()
        .unwrap_or(0)
}

/// Where event `event`'s copy on GPU `gpu` is among the plan's events.
fn event_on(layout: &Layout, event: u16, gpu: u16) -> Result<u16, Fault> {
    let at = usize::from(event) * layout.gpus() + usize::from(gpu);
    u16::try_from(at)
        .ok()
        .filter(|&at| usize::from(at) < layout.events() * layout.gpus())
        .or_malformed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_model::DeviceModel;
    use crate::image::Image;
    use crate::plan::builder::sizes_at_new;
    use crate::plan::info::{KernelCode, ParamType, elem};
    use memplan_model::{
        Arg::*, BufferKind::*, Dims, Op::*, Place::*, Plan, Priority, Site, Size, Term::*, launch,
    };

    /// Never loaded: steps resolved against a device model load nothing.
    static IMAGE: Image = Image::from_ptx("");

    /// ```text
    /// plan TwoValues(n: usize, k: usize, run a: f32, run b: f32) {
    ///     kernel saxpy(n: i32, a: f32, x: &[f32; n], y: &mut [f32; n]) from IMAGE;
    ///     device x: [f32; n], y: [f32; n], z: [f32; n];
    ///     stream s;
    ///     for i in 0..k {
    ///         on s {
    ///             launch saxpy<<<blocks(n, 256), 256>>>(n as i32, a, x, y);
    ///             launch saxpy<<<blocks(n, 256), 256>>>(n as i32, b, x, z);
    ///         }
    ///     }
    /// }
    /// ```
    static TWO_VALUES: PlanInfo = PlanInfo {
        model: Plan {
            site: Site("TwoValues", 1, 1),
            inputs: &["n", "k", "i"],
            sizes: &[
                Size("n", &[Input(0)]),
                Size("k", &[Input(1)]),
                Size("blocks(n, 256)", &[Input(0), Literal(256), Blocks]),
                Size("256", &[Literal(256)]),
            ],
            kernels: &[Site("kernel saxpy", 2, 5).kernel()],
            buffers: &[
                Site("x: [f32; n] device", 3, 12).buffer(0, Device),
                Site("y: [f32; n] device", 3, 25).buffer(0, Device),
                Site("z: [f32; n] device", 3, 38).buffer(0, Device),
            ],
            streams: &[Site("stream s", 4, 5).stream("s", Priority::Normal)],
            ops: &[
                Site("launch saxpy", 7, 13).on(
                    0,
                    Launch(launch(
                        0,
                        Dims::Sizes(&[2]),
                        Dims::Sizes(&[3]),
                        None,
                        &[
                            Bound(0, "n"),
                            Value,
                            Extent(Whole(0), 0, "x"),
                            Extent(Whole(1), 0, "y"),
                        ],
                    )),
                ),
                Site("launch saxpy", 8, 13).on(
                    0,
                    Launch(launch(
                        0,
                        Dims::Sizes(&[2]),
                        Dims::Sizes(&[3]),
                        None,
                        &[
                            Bound(0, "n"),
                            Value,
                            Extent(Whole(0), 0, "x"),
                            Extent(Whole(2), 0, "y"),
                        ],
                    )),
                ),
            ],
            loops: &[Site("for i", 5, 9).repeat(1, 2, 0, 2)],
            per_run: &[0, 1],
            ..Plan::EMPTY
        },
        file: "two_values.rs",
        elems: &[elem::<f32>(), elem::<f32>(), elem::<f32>()],
        code: &[KernelCode::new(
            "saxpy",
            &IMAGE,
            &[
                ParamType::of::<i32>(),
                ParamType::of::<f32>(),
                ParamType::POINTER,
                ParamType::POINTER,
            ],
        )],
    };

    /// The values a run of `TwoValues` is resolved with: `n as i32`
    /// (which `new` gives) and `a` to the first launch, `n as i32` and `b`
    /// to the second, as `Givens::replace` merges them.
    fn given(n: usize, a: f32, b: f32) -> Givens {
        let mut given = Givens::default();
        for (op, value) in [(0, a), (1, b)] {
            given.value::<i32>(op, 0, n as i32);
            given.value::<f32>(op, 1, value);
        }
        given
    }

    fn on_models<'a>(layout: &'a Layout, sizes: &'a mut Sizes, given: &'a Givens) -> Inputs<'a> {
        Inputs {
            layout,
            against: Against::Models,
            sizes,
            given,
        }
    }

    /// After each rewrite, just the steps whose bytes changed are listed:
    /// a value read by one launch of the loop lists that launch's steps,
    /// the same values none, a value changed back its steps again.
    #[test]
    fn a_rewrite_lists_the_steps_whose_bytes_changed() {
        const N: usize = 1000;
        const K: usize = 3;
        let model = DeviceModel::named("sm_90").unwrap();
        let info = &TWO_VALUES;
        let mut sizes = sizes_at_new(info, &[N, K]).unwrap();
        let host = vec![None; info.buffers.len()];
        let mut next = 1u64 << 32;
        let mut allocate = |_, _, bytes: usize| {
            let at = next;
            next += (bytes as u64 + 256).next_multiple_of(256);
            Ok(at)
        };
        let layout =
            Layout::new(info, vec![model], &mut sizes, &host, None, &mut allocate).unwrap();
        let first = given(N, 1.0, 2.0);
        let mut steps = Steps::new(on_models(&layout, &mut sizes, &first)).unwrap();
        (steps.resolve_for_run(on_models(&layout, &mut sizes, &first))).unwrap();
        assert_eq!(steps.list().len(), 2 * K, "the loop unrolled");
        // The first launch of each iteration reads `a`, the second `b`.
        let (reads_a, reads_b): (Vec<usize>, Vec<usize>) =
            (0..2 * K).partition(|&step| steps.list()[step].def == 0);
        assert_eq!(
            (&reads_a[..], &reads_b[..]),
            (&[0, 2, 4][..], &[1, 3, 5][..])
        );
        let all: Vec<usize> = (0..2 * K).collect();
        for (a, b, listed) in [
            (3.0, 2.0, &reads_a),
            (3.0, 2.0, &vec![]),
            (3.0, -1.0, &reads_b),
            (1.0, 2.0, &all),
            (1.0, 2.0, &vec![]),
            (1.0, 0.5, &reads_b),
            (1.0, 2.0, &reads_b),
            // -0.0 and 0.0 are other bytes.
            (-0.0, 2.0, &reads_a),
            (0.0, 2.0, &reads_a),
        ] {
            let count = steps.for_replay().1.count;
            assert!(steps.rewrite_values(info, &mut sizes, &given(N, a, b)));
            let (_, changes) = steps.for_replay();
            assert_eq!(changes.count, count + 1, "a {a}, b {b}: counted");
            assert_eq!(changes.written, Some(&listed[..]), "a {a}, b {b}");
        }
    }
}
