//! Runs replayed as CUDA graphs ([`Replay::Graph`]): a run's steps are
//! captured once per shape, and later runs of that shape change the
//! nodes of the steps that read what each run gives, in place, and launch
//! the graph with one call.
//!
//! A graph holds fixed what its capture saw of each step: which op it is,
//! its stream, its event, whether it moves anything, a fill's unit, an
//! allocation's size. That is the run's *shape*. Steps of one shape differ
//! only in addresses, lengths, fill values, grids and arguments, which the
//! driver lets an executable graph change (`cuGraphExec*NodeSetParams`).
//! A run of another shape (a loop count that changes, a range that
//! becomes empty) is captured anew; [`GRAPHS_KEPT`] graphs are kept, the
//! least recently replayed dropped first. A rank's collectives are
//! captured as NCCL queues them, as one group each; their nodes are NCCL's
//! and never changed, so all of a collective is in its shape.

use super::address::Addr;
use super::bound::Bound;
use super::group::{group_at, queue_group};
use super::info::{MALFORMED, OrBug};
use super::step::{Resources, Step, address_in};
use super::steps::{Changes, Resolved};
use crate::context::Context;
use crate::copy::Direction;
use crate::driver::{self, Memcpy3d};
use crate::error::{Error, Fault, Result};
use crate::graph::{Capture, Graph, tried_again_if_invalidated};
use crate::kernel::LaunchConfig;
use crate::nccl::Call;
use crate::op::OpResultExt;
use crate::report::Replayed;
use crate::stream::Stream;
use crate::timer::Timer;
use cust::sys::{CUDA_MEMSET_NODE_PARAMS, CUgraphExec, CUgraphNode};
use std::ffi::c_void;

/// How a plan's runs reach the GPU; see the plan's `set_replay`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replay {
    /// Each run queues its ops, one driver call each (the default).
    #[default]
    Direct,
    /// Each run replays a CUDA graph of its ops: one launch, after the
    /// nodes of the ops that read the run's sizes and values are changed
    /// in place. A run whose loop counts, or whose empty ranges, differ
    /// from every graph kept is captured into a new graph first.
    Graph,
}

/// The most graphs a plan replaying its runs keeps, one per shape of run
/// (a batch loop whose last batch is short uses two).
pub const GRAPHS_KEPT: usize = 4;

/// The graphs of a plan whose runs are replayed.
#[derive(Default)]
pub(crate) struct Replays {
    graphs: Vec<Kept>,
    /// Counts replays, to find the graph least recently replayed.
    clock: u64,
}

/// One executable graph, with the shape of run it holds.
struct Kept {
    shape: Vec<Shape>,
    graph: Graph,
    /// By step: the node it became, for the steps that became one.
    nodes: Vec<Option<Node>>,
    replayed: u64,
    /// The count of changes to the steps (`Steps::changes`) when this
    /// graph was last made to do what they do: while the count stands,
    /// the graph is replayed as it is, its shape and nodes not looked at
    /// again.
    holds: Option<u64>,
}

/// What a graph holds fixed of one step; see the module's documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    def: u16,
    stream: Option<u16>,
    kind: u8,
    /// What else is fixed, by kind: a kernel and whether its grid is
    /// empty, a copy's direction and whether it moves nothing, a fill's
    /// unit (0: nothing), an event, an allocation's slot and size.
    fixed: (u64, u64),
    /// A rank's part of a collective, all of it: NCCL's kernels are not
    /// changed in place, so a collective that changes is a new shape.
    collective: Option<(Call, Addr, Addr, u16)>,
}

/// A step's node in a graph, and what setting its parameters needs.
struct Node {
    node: CUgraphNode,
    kind: NodeKind,
    /// The stream-ordered allocations as they were when the step was
    /// captured: a graph keeps the addresses its allocations got then.
    scratch: Box<[u64]>,
    /// What the node does now, where it can be compared: a run that
    /// gives the step the same leaves the node as it is.
    now: Option<Does>,
}

// SAFETY: `node` is a handle of a graph the same `Kept` owns, and the
// captured parameters name memory by address; the driver takes both from
// any thread (each change in place binds the node's context first), and
// nothing of them belongs to the thread that captured them.
unsafe impl Send for Node {}

/// What a node does, in the terms its step is compared in.
#[derive(PartialEq)]
enum Does {
    Launch(LaunchConfig, Box<[u8]>),
    /// Source, destination, bytes.
    Copy(u64, u64, usize),
    /// Destination, the unit's bits, units.
    Fill(u64, u32, usize),
}

enum NodeKind {
    Kernel,
    /// The node's parameters as captured, of which each run changes the
    /// addresses and the length.
    Copy(Memcpy3d),
    /// As for `Copy`: the address, the value and the count change.
    Fill(CUDA_MEMSET_NODE_PARAMS),
}

/// What replaying a run acts on, besides its steps.
pub(crate) struct Target<'a, 'r> {
    pub on: &'a mut Resources<'r>,
    /// The plan's streams; the graph is launched on the first.
    pub streams: &'a [Stream],
}

impl Replays {
    /// Replays the run `steps` were resolved for: changes the nodes of
    /// the steps that read what the run gives in the graph of its shape
    /// and launches it, capturing that graph first if none is kept.
    /// `changes` says how `steps` changed: a graph made to do what they do
    /// at the same count is launched as it is; one made for the count
    /// before, where the last change only wrote values, has just those
    /// steps' nodes set. `plan_error` names the plan in errors of no one
    /// op.
    ///
    /// # Safety
    /// As for [`Step::run`] for every step, at each launch of the graph:
    /// the plan's memory stays allocated, and the host off it, until its
    /// streams have finished the replay. `changes` is the steps' own
    /// account ([`Steps::for_replay`](super::steps::Steps::for_replay)).
    pub unsafe fn replay(
        &mut self,
        steps: &mut [Resolved],
        changes: Changes<'_>,
        target: Target<'_, '_>,
        plan_error: &dyn Fn(&'static str, Fault) -> Error,
    ) -> Result<Replayed> {
        let Target { on, streams } = target;
        let Some(first) = streams.first() else {
            return Err(plan_error("graph launch", Fault::Unsupported(NO_STREAM)));
        };
        self.clock += 1;
        // The steps are as the last replay left them (a loop of equal
        // runs): that graph does what they do, nothing to compare.
        let holding = self
            .graphs
            .iter()
            .position(|kept| kept.holds == Some(changes.count));
        let (at, replayed) = match holding {
            Some(at) => (at, Replayed::Changed { nodes: 0 }),
            // SAFETY: the caller's promise.
            None => unsafe { self.find_or_capture(steps, changes, on, streams) }?,
        };
        let kept = &mut self.graphs[at];
        kept.replayed = self.clock;
        kept.holds = Some(changes.count);
        // Changing nodes and capturing bind each step's GPU: the graph is
        // launched in its first stream's.
        if on.contexts.len() > 1 {
            (first.context().bind_to_thread())
                .map_err(|e| plan_error("graph launch", e.fault().clone()))?;
        }
        // SAFETY: the caller's promise.
        unsafe { kept.graph.launch(first) }?;
        Ok(replayed)
    }

    /// The graph of the shape of `steps`, its nodes changed to do what
    /// they do, or a new graph captured from them; with how it was made.
    ///
    /// # Safety
    /// As for [`Replays::replay`].
    unsafe fn find_or_capture(
        &mut self,
        steps: &mut [Resolved],
        changes: Changes<'_>,
        on: &mut Resources,
        streams: &[Stream],
    ) -> Result<(usize, Replayed)> {
        // Only values were written since the graph was made to do what
        // the steps did: of the same shape, and only those steps' nodes
        // may differ. Otherwise the graph of the steps' shape, compared
        // step by step.
        let written = changes.written.and_then(|written| {
            let before = changes.count.checked_sub(1)?;
            let at = self
                .graphs
                .iter()
                .position(|kept| kept.holds == Some(before))?;
            Some((at, Some(written)))
        });
        let kept = written.or_else(|| {
            let at = self
                .graphs
                .iter()
                .position(|kept| kept.holds_shape_of(steps))?;
            Some((at, None))
        });
        let at = match kept {
            // SAFETY: the caller's promise.
            Some((at, only)) => match unsafe { self.graphs[at].update(steps, only, on) } {
                Ok(Some(nodes)) => Some((at, Replayed::Changed { nodes })),
                // A node the capture could not find, or a change the driver
                // refused (a memset grown past what its node can do):
                // captured again, and a graph changed halfway is dropped.
                Ok(None) => {
                    self.graphs.remove(at);
                    None
                }
                Err(error) => {
                    self.graphs.remove(at);
                    return Err(error);
                }
            },
            None => None,
        };
        Ok(match at {
            Some(kept) => kept,
            None => {
                // Tried again if another thread's `cuCtxSynchronize` (a
                // failed run's clean-up calls it) ends the capture.
                let kept = tried_again_if_invalidated(|| {
                    // SAFETY: the caller's promise.
                    unsafe { capture(steps, on, streams) }
                })?;
                if self.graphs.len() == GRAPHS_KEPT {
                    let oldest = (0..self.graphs.len()).min_by_key(|&at| self.graphs[at].replayed);
                    self.graphs.remove(oldest.unwrap_or(0));
                }
                self.graphs.push(kept);
                (self.graphs.len() - 1, Replayed::Captured)
            }
        })
    }
}

/// Why a plan without streams has no graph to launch.
const NO_STREAM: &str = "the plan has no stream to launch its graph on";

impl Kept {
    /// Whether this graph is of the shape of `steps`.
    fn holds_shape_of(&self, steps: &[Resolved]) -> bool {
        self.shape.len() == steps.len()
            && (self.shape.iter().zip(steps)).all(|(shape, resolved)| *shape == shape_of(resolved))
    }

    /// Sets the nodes of the steps that read what the run gives (`only`
    /// those, where given) to what they are in `steps`, and counts those
    /// it changed; `None` if one of them has no node known, or the driver
    /// refused to change it (a memset grown past what its node can do,
    /// which the driver may refuse): the run is captured again.
    ///
    /// # Safety
    /// As for [`Replays::replay`]; `only`, where given, holds every step
    /// that differs from what this graph's nodes do.
    unsafe fn update(
        &mut self,
        steps: &mut [Resolved],
        only: Option<&[usize]>,
        on: &Resources,
    ) -> Result<Option<usize>> {
        let (_, exec) = self.graph.handles();
        // `begin` bound the first GPU's context for the run, the only one
        // of a plan on one GPU; on several, the first node binds its own.
        let mut bound = match on.contexts.len() {
            1 => Bound::on(0),
            _ => Bound::default(),
        };
        let mut changed = 0;
        // Every step, or `only` those where given.
        let (mut every, mut listed) = (0..steps.len(), only.unwrap_or(&[]).iter().copied());
        let indices: &mut dyn Iterator<Item = usize> = match only {
            Some(_) => &mut listed,
            None => &mut every,
        };
        for index in indices {
            // A graph holds a node slot for each step of its shape: one
            // past them is not this graph's run, which is captured again.
            let (Some(resolved), Some(node)) = (steps.get_mut(index), self.nodes.get_mut(index))
            else {
                return Ok(None);
            };
            if !resolved.per_run || !makes_node(&resolved.step) {
                continue;
            }
            let Some(node) = node else {
                return Ok(None);
            };
            // A kernel node is changed in its GPU's context.
            let context = bound.to(resolved, on.contexts)?;
            // SAFETY: the caller's promise.
            let set = unsafe { node.set(&mut resolved.step, exec, on, context) };
            match set.at_op(&resolved.op)? {
                Set::Kept => {}
                Set::Changed => changed += 1,
                Set::Refused => return Ok(None),
            }
        }
        Ok(Some(changed))
    }
}

/// What setting a node came to.
enum Set {
    /// It did what the step does now already.
    Kept,
    Changed,
    /// The driver refused the change.
    Refused,
}

impl Node {
    /// Makes the node do what `step` does now, if it does not already.
    ///
    /// # Safety
    /// `exec` was made from the graph this node is of; `step` is the step
    /// the node was captured from, resolved again for a run of the same
    /// shape (so its memory is of the same kinds and contexts); and as
    /// for [`Replays::replay`].
    unsafe fn set(
        &mut self,
        step: &mut Step,
        exec: CUgraphExec,
        on: &Resources,
        context: &Context,
    ) -> Result<Set, Fault> {
        let scratch = &self.scratch;
        let resolve = |addr| address_in(addr, scratch, on.params);
        let (does, set) = match (step, &self.kind) {
            (Step::Launch { launch, .. }, NodeKind::Kernel) => {
                if let (Some((config, bytes)), Some(Does::Launch(now_config, now_bytes))) =
                    (launch.as_node(resolve)?, &self.now)
                    && config == *now_config
                    && bytes == &**now_bytes
                {
                    return Ok(Set::Kept);
                }
                let kernel = on.kernels.get(usize::from(launch.kernel));
                let kernel = kernel.or_malformed()?;
                // SAFETY: the caller's promise; `as_node` above filled in
                // the addresses known only during a run, for this node.
                let set = unsafe { launch.set_node(kernel, exec, self.node) };
                if set.is_err() {
                    self.now = None;
                    return Ok(Set::Refused);
                }
                // Kept where it was: a run that changes a value changes the
                // same bytes, not their number.
                match (launch.as_patched_node(), &mut self.now) {
                    (Some((config, bytes)), Some(Does::Launch(now_config, now_bytes)))
                        if bytes.len() == now_bytes.len() =>
                    {
                        *now_config = config;
                        now_bytes.copy_from_slice(bytes);
                    }
                    (does, now) => {
                        *now = does.map(|(config, bytes)| Does::Launch(config, bytes.into()));
                    }
                }
                return Ok(Set::Changed);
            }
            (
                &mut (Step::Copy {
                    src, dst, bytes, ..
                }
                | Step::CopyBetweenGpus {
                    src, dst, bytes, ..
                }),
                NodeKind::Copy(captured),
            ) => {
                let (src, dst) = (resolve(src)?, resolve(dst)?);
                let does = Does::Copy(src, dst, bytes);
                if self.now.as_ref() == Some(&does) {
                    return Ok(Set::Kept);
                }
                let params = copy_params(*captured, src, dst, bytes)?;
                // SAFETY: the caller's promise.
                let set = unsafe {
                    driver::graph_exec_memcpy_node_set_params(
                        exec,
                        self.node,
                        &params,
                        context.raw(),
                    )
                };
                (Some(does), set.is_ok())
            }
            (
                &mut Step::Fill {
                    dst,
                    pattern,
                    bytes,
                    ..
                },
                NodeKind::Fill(captured),
            ) => {
                let (dst, value, width) = (resolve(dst)?, pattern.bits(), bytes / pattern.unit());
                let does = Does::Fill(dst, value, width);
                if self.now.as_ref() == Some(&does) {
                    return Ok(Set::Kept);
                }
                let params = CUDA_MEMSET_NODE_PARAMS {
                    dst,
                    value,
                    width,
                    ..*captured
                };
                // SAFETY: the caller's promise.
                let set = unsafe {
                    driver::graph_exec_memset_node_set_params(
                        exec,
                        self.node,
                        &params,
                        context.raw(),
                    )
                };
                (Some(does), set.is_ok())
            }
            _ => return Err(MALFORMED),
        };
        // What the node does is known only once the driver took it.
        self.now = if set { does } else { None };
        Ok(if set { Set::Changed } else { Set::Refused })
    }
}

/// Captures the run `steps` were resolved for into a graph of their shape,
/// keeping the node each step that can change became.
///
/// # Safety
/// As for [`Replays::replay`].
unsafe fn capture(steps: &mut [Resolved], on: &mut Resources, streams: &[Stream]) -> Result<Kept> {
    let shape = steps.iter().map(shape_of).collect();
    let streams: Vec<&Stream> = streams.iter().collect();
    // SAFETY: the plan owns the streams and outlives the capture; this
    // thread alone queues on them while the plan is borrowed; memory is
    // the caller's promise.
    let capture = unsafe { Capture::begin(&streams)? };
    let mut found = Vec::with_capacity(steps.len());
    let mut queue = || -> Result<()> {
        let mut index = 0;
        let mut bound = Bound::default();
        while index < steps.len() {
            // A collective's parts, queued as one NCCL group (captured as
            // NCCL's kernels): never changed in place, a node each none.
            if let Some(end) = group_at(steps, index)? {
                queue_group(&steps[index..=end], index, on, &mut Timer::default())?;
                found.extend((index..=end).map(|_| None));
                // NCCL sets the current device of the calls it queues.
                bound.forget();
                index = end + 1;
                continue;
            }
            let resolved = &mut steps[index];
            index += 1;
            // Each step in its GPU's context, as `queue_steps` queues it.
            bound.to(resolved, on.contexts)?;
            // SAFETY: the caller's promise; a replayed plan has no host
            // steps.
            let moved = unsafe { resolved.step.run(on, &mut |_| Err(MALFORMED)) };
            moved.at_op(&resolved.op)?;
            let mut node = None;
            if makes_node(&resolved.step) {
                let stream = on.stream(resolved.step.queued_on()).at_op(&resolved.op)?;
                // SAFETY: a stream of the plan's, being captured.
                let last = unsafe { driver::stream_capture_last_node(stream) };
                node = last.map_err(Fault::from).at_op(&resolved.op)?;
            }
            found.push(node.map(|node| (node, Box::from(&*on.scratch))));
        }
        Ok(())
    };
    let queued = queue();
    let graph = capture.end(queued);
    // What the capture allocated in stream order belongs to the graph, or
    // to none if it failed: never the plan's to free.
    on.scratch.fill(0);
    let graph = graph?;
    let mut nodes = Vec::with_capacity(found.len());
    for (resolved, found) in steps.iter_mut().zip(found) {
        let Some((node, scratch)) = found else {
            nodes.push(None);
            continue;
        };
        // SAFETY: a node of `graph`, which is alive. One of another kind
        // than its step's (the driver made the work otherwise) fails here,
        // and is never changed in place: such a run is captured again.
        let kind = match resolved.step {
            Step::Launch { .. } => unsafe { driver::graph_node_is_kernel(node) }
                .is_ok_and(|kernel| kernel)
                .then_some(NodeKind::Kernel),
            Step::Copy {
                src, dst, bytes, ..
            }
            | Step::CopyBetweenGpus {
                src, dst, bytes, ..
            } => unsafe { driver::graph_memcpy_node_get_params(node) }
                .ok()
                .filter(|params| {
                    let resolve = |addr| address_in(addr, &scratch, on.params).ok();
                    is_the_copy(params, resolve(src), resolve(dst), bytes)
                })
                .map(NodeKind::Copy),
            Step::Fill { .. } => unsafe { driver::graph_memset_node_get_params(node) }
                .ok()
                .map(NodeKind::Fill),
            _ => None,
        };
        let Some(kind) = kind else {
            nodes.push(None);
            continue;
        };
        // What the capture saw the step do, for the next run to compare.
        let resolve = |addr| address_in(addr, &scratch, on.params);
        let now = match resolved.step {
            Step::Launch { ref mut launch, .. } => launch
                .as_node(resolve)
                .ok()
                .flatten()
                .map(|(config, bytes)| Does::Launch(config, bytes.into())),
            Step::Copy {
                src, dst, bytes, ..
            }
            | Step::CopyBetweenGpus {
                src, dst, bytes, ..
            } => match (resolve(src), resolve(dst)) {
                (Ok(src), Ok(dst)) => Some(Does::Copy(src, dst, bytes)),
                _ => None,
            },
            Step::Fill {
                dst,
                pattern,
                bytes,
                ..
            } => resolve(dst)
                .ok()
                .map(|dst| Does::Fill(dst, pattern.bits(), bytes / pattern.unit())),
            _ => None,
        };
        nodes.push(Some(Node {
            node,
            kind,
            scratch,
            now,
        }));
    }
    Ok(Kept {
        shape,
        graph,
        nodes,
        replayed: 0,
        holds: None,
    })
}

/// Whether the step becomes a node whose parameters a run may change: a
/// launch, a copy or a fill that does something.
fn makes_node(step: &Step) -> bool {
    match step {
        Step::Launch { launch, .. } => !launch.empty,
        &(Step::Copy { bytes, .. } | Step::CopyBetweenGpus { bytes, .. }) => bytes > 0,
        &Step::Fill { pattern, bytes, .. } => bytes / pattern.unit() > 0,
        _ => false,
    }
}

/// `CUmemorytype`s: how a copy node names each end's memory, a host
/// pointer or a device address.
const HOST: u32 = 1;
const DEVICE: u32 = 2;
const UNIFIED: u32 = 4;

/// Whether a captured copy node is the whole of its step's copy, `bytes`
/// from `src` to `dst` in one piece, with each end as [`copy_params`]
/// changes it: a copy the driver made otherwise (staged through the host
/// in several nodes, say) is never changed in place, and a run that
/// changes it is captured again.
fn is_the_copy(params: &Memcpy3d, src: Option<u64>, dst: Option<u64>, bytes: usize) -> bool {
    let end = |kind: u32, host: u64, device: u64, x: usize, at: Option<u64>| match kind {
        HOST => at == Some(host + x as u64),
        DEVICE | UNIFIED => at == Some(device + x as u64),
        _ => false,
    };
    let whole = params.WidthInBytes == bytes && params.Height <= 1 && params.Depth <= 1;
    whole
        && end(
            params.srcMemoryType,
            params.srcHost as u64,
            params.srcDevice,
            params.srcXInBytes,
            src,
        )
        && end(
            params.dstMemoryType,
            params.dstHost as u64,
            params.dstDevice,
            params.dstXInBytes,
            dst,
        )
}

/// A captured copy node's parameters moved to `src` and `dst`, `bytes`
/// long. Host memory is given as a host pointer, device and unified
/// memory as a device address, as the capture recorded each.
fn copy_params(captured: Memcpy3d, src: u64, dst: u64, bytes: usize) -> Result<Memcpy3d, Fault> {
    let mut params = Memcpy3d {
        srcXInBytes: 0,
        dstXInBytes: 0,
        WidthInBytes: bytes,
        ..captured
    };
    match captured.srcMemoryType {
        HOST => params.srcHost = src as *const c_void,
        DEVICE | UNIFIED => params.srcDevice = src,
        _ => return Err(MALFORMED),
    }
    match captured.dstMemoryType {
        HOST => params.dstHost = dst as *mut c_void,
        DEVICE | UNIFIED => params.dstDevice = dst,
        _ => return Err(MALFORMED),
    }
    Ok(params)
}

/// What a graph holds fixed of `resolved`'s step.
fn shape_of(resolved: &Resolved) -> Shape {
    let step = &resolved.step;
    let (kind, fixed) = match *step {
        Step::Launch { ref launch, .. } => (1, (u64::from(launch.kernel), u64::from(launch.empty))),
        Step::Copy {
            direction, bytes, ..
        } => (2, (direction_number(direction), u64::from(bytes == 0))),
        Step::CopyBetweenGpus {
            bytes,
            gpus: (from, to),
            ..
        } => (
            9,
            (u64::from(from) << 16 | u64::from(to), u64::from(bytes == 0)),
        ),
        Step::Fill { pattern, .. } => {
            let unit = if makes_node(step) { pattern.unit() } else { 0 };
            (3, (unit as u64, 0))
        }
        Step::Record { event, .. } => (4, (u64::from(event), 0)),
        Step::Wait { event, .. } => (5, (u64::from(event), 0)),
        Step::Alloc { scratch, bytes, .. } => (6, (u64::from(scratch), bytes as u64)),
        Step::Free { scratch, .. } => (7, (u64::from(scratch), 0)),
        Step::Collective { .. } => (8, (0, 0)),
        // Never in a replayed plan (`Runner::graph_obstacle`); kept apart.
        _ => (0, (0, 0)),
    };
    let collective = match *step {
        Step::Collective {
            call,
            send,
            recv,
            comm,
            ..
        } => Some((call, send, recv, comm)),
        _ => None,
    };
    Shape {
        def: resolved.def,
        stream: step.queued_on(),
        kind,
        fixed,
        collective,
    }
}

fn direction_number(direction: Direction) -> u64 {
    match direction {
        Direction::HostToDevice => 0,
        Direction::DeviceToHost => 1,
        Direction::DeviceToDevice => 2,
        Direction::HostToHost => 3,
    }
}
