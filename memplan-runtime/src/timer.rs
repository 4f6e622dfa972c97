//! Timing a plan's runs: each GPU op on the device (CUPTI's activity
//! records, where CUPTI loads) or between a pair of CUDA events on its
//! stream (elsewhere, or when asked for), and the host's own spans:
//! queuing, host steps, waiting.

use crate::context::Context;
use crate::cupti::{Span, Tracing, Wanted};
use crate::driver::DriverError;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::event::Event;
use crate::op::OpInfo;
use crate::report::{Clock, HostSpan, OpTiming, RunReport};
use crate::stream::LEGACY;
use cust::sys::CUstream;
use std::ops::Range;
use std::time::{Duration, Instant};

/// How a plan times its runs (`set_timing`): `true` is [`Timing::On`],
/// `false` [`Timing::Off`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// No op times: each run's report has its wall time only.
    Off,
    /// Copies and kernels on the device, from CUPTI's activity records,
    /// where CUPTI loads; CUDA events, and the reason, where it does not.
    On,
    /// CUDA events even where CUPTI loads: to compare the two, or where
    /// another tool holds CUPTI. An op's time then includes its wait
    /// behind other streams' work on its engine.
    Events,
}

impl From<bool> for Timing {
    fn from(on: bool) -> Timing {
        if on { Timing::On } else { Timing::Off }
    }
}

/// Off, each mark is one untaken branch and no driver call.
#[derive(Default)]
pub struct Timer {
    on: Option<Timed>,
}

/// One part of an NCCL group, as timing sees it.
pub struct GroupPart {
    /// The op.
    pub index: usize,
    pub stream: CUstream,
    /// The GPU it runs on, as CUDA numbers devices (CUPTI's records say
    /// which GPU ran each piece of the group's work).
    pub device: u32,
    /// The larger of its send and receive buffers, in bytes.
    pub bytes: usize,
    /// Whether it certainly gives its GPU work: NCCL may do nothing on
    /// the GPU for a rank alone in its communicator (an in-place sum of
    /// one rank is the data as it is), so such a part's record is taken
    /// if it comes and not waited for.
    pub gives_work: bool,
}

/// Where an NCCL group's part finds its work among CUPTI's records: NCCL
/// makes every part's driver calls when the group ends, under the id
/// pushed for the group's first op; the part's share is what ran on its
/// GPU.
#[derive(Clone, Copy)]
struct InGroup {
    first: usize,
    device: u32,
    awaited: bool,
}

/// What timing keeps, while on.
struct Timed {
    clock: OpClock,
    /// Bytes each op moved, and whether it ran, in the current run.
    bytes: Vec<u64>,
    ran: Vec<bool>,
    /// For each part of an NCCL group, where its work is found.
    in_group: Vec<Option<InGroup>>,
    /// Whether the current run queued its ops one by one (a graph
    /// replay does not, and has no op times).
    queued: bool,
    /// When the run started on the host: every time counts from it.
    started: Instant,
    host: Vec<HostSpan>,
    /// Where the host's current span of queuing began.
    queuing_since: Option<Instant>,
}

enum OpClock {
    /// CUPTI: the ids of the run's ops, and CUPTI's clock at its start.
    Engine {
        tracing: Tracing,
        ids: Range<u64>,
        origin_ns: u64,
    },
    /// A pair of timed events around each op, and one at the run's start.
    Events {
        why: String,
        origin: Event,
        marks: Vec<(Event, Event)>,
    },
}

impl Timer {
    /// Times later runs: by CUPTI where it starts, unless `by_events`, and
    /// by events otherwise.
    #[track_caller]
    pub fn enable(&mut self, contexts: &[Context], by_events: bool) -> Result<()> {
        let engine = if by_events {
            Err("event timing was asked for".to_owned())
        } else {
            Tracing::start()
        };
        // An event is recorded on streams of its own GPU: the marks, made
        // on one, cannot time another's ops. CUPTI sees every GPU.
        let context = match (&engine, contexts) {
            (Ok(_), _) | (_, [_]) => &contexts[0],
            (Err(why), _) => {
                let why = format!(
                    "a plan on several GPUs is timed by CUPTI only, and CUPTI cannot time it: {why}"
                );
                return Err(Fault::Timing(why)).at("set_timing", Location::caller());
            }
        };
        let clock = match engine {
            Ok(tracing) => OpClock::Engine {
                tracing,
                ids: 0..0,
                origin_ns: 0,
            },
            Err(why) => OpClock::Events {
                why,
                origin: Event::timed(context)?,
                marks: Vec::new(),
            },
        };
        self.on = Some(Timed {
            clock,
            bytes: Vec::new(),
            ran: Vec::new(),
            in_group: Vec::new(),
            queued: false,
            started: Instant::now(),
            host: Vec::new(),
            queuing_since: None,
        });
        Ok(())
    }

    pub fn disable(&mut self) {
        self.on = None;
    }

    /// Marks the start of a run, which began on the host at `started`.
    #[inline]
    pub fn begin(&mut self, started: Instant) -> Result<(), DriverError> {
        let Some(timing) = &mut self.on else {
            return Ok(());
        };
        timing.started = started;
        timing.host.clear();
        timing.queuing_since = None;
        timing.queued = false;
        timing.ran.fill(false);
        match &mut timing.clock {
            OpClock::Engine {
                tracing, origin_ns, ..
            } => {
                *origin_ns = tracing.now();
                Ok(())
            }
            OpClock::Events { origin, .. } => origin.record_on(LEGACY),
        }
    }

    /// Readies the marks of a run of `count` ops (a plan whose loops read
    /// what a run gives has a count of its own each run), and starts the
    /// host's span of queuing them.
    pub fn queue(&mut self, context: &Context, count: usize) -> Result<()> {
        let Some(timing) = &mut self.on else {
            return Ok(());
        };
        timing.bytes.clear();
        timing.bytes.resize(count, 0);
        timing.ran.clear();
        timing.ran.resize(count, false);
        timing.in_group.clear();
        timing.in_group.resize(count, None);
        match &mut timing.clock {
            OpClock::Engine { tracing, ids, .. } => *ids = tracing.begin_run(count),
            OpClock::Events { marks, .. } => {
                while marks.len() < count {
                    marks.push((Event::timed(context)?, Event::timed(context)?));
                }
            }
        }
        timing.queuing_since = Some(Instant::now());
        timing.queued = true;
        Ok(())
    }

    /// Marks the start of op `index` on `stream` (0: the legacy stream).
    #[inline]
    pub fn start(&self, index: usize, stream: CUstream) -> Result<(), DriverError> {
        match self.on.as_ref().map(|timing| &timing.clock) {
            Some(OpClock::Engine { tracing, ids, .. }) => {
                tracing.enter(ids.start + index as u64);
                Ok(())
            }
            Some(OpClock::Events { marks, .. }) => match marks.get(index) {
                Some((start, _)) => start.record_on(stream),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Marks the end of op `index`, which moved `bytes`; only an op that
    /// `gave_work` to the GPU is reported (a copy of no bytes makes no
    /// driver call, so CUPTI would never have a record of it).
    #[inline]
    pub fn end(
        &mut self,
        index: usize,
        stream: CUstream,
        bytes: usize,
        gave_work: bool,
    ) -> Result<(), DriverError> {
        let Some(timing) = &mut self.on else {
            return Ok(());
        };
        if let (Some(moved), Some(ran)) = (timing.bytes.get_mut(index), timing.ran.get_mut(index)) {
            *moved = bytes as u64;
            *ran = gave_work;
        }
        match &timing.clock {
            OpClock::Engine { tracing, .. } => {
                tracing.leave();
                Ok(())
            }
            OpClock::Events { marks, .. } => match marks.get(index) {
                Some((_, end)) => end.record_on(stream),
                None => Ok(()),
            },
        }
    }

    /// Marks the start of an NCCL group of `parts`, before
    /// `ncclGroupStart`: NCCL makes every part's calls when the group
    /// ends, under the id of the first.
    pub fn start_group(&self, parts: &[GroupPart]) -> Result<(), DriverError> {
        match (self.on.as_ref().map(|timing| &timing.clock), parts.first()) {
            (Some(OpClock::Engine { tracing, ids, .. }), Some(first)) => {
                tracing.enter(ids.start + first.index as u64);
                Ok(())
            }
            (Some(OpClock::Events { marks, .. }), _) => {
                parts
                    .iter()
                    .try_for_each(|part| match marks.get(part.index) {
                        Some((start, _)) => start.record_on(part.stream),
                        None => Ok(()),
                    })
            }
            _ => Ok(()),
        }
    }

    /// Marks the end of the group [`start_group`](Self::start_group)
    /// marked, after `ncclGroupEnd` (or where the group failed, when it
    /// was not `queued`: then nothing of it is reported). Each part is
    /// timed by its GPU's share of the group's work.
    pub fn end_group(&mut self, parts: &[GroupPart], queued: bool) -> Result<(), DriverError> {
        let (Some(timing), Some(first)) = (self.on.as_mut(), parts.first()) else {
            return Ok(());
        };
        for part in parts {
            let index = part.index;
            if let (Some(moved), Some(ran), Some(in_group)) = (
                timing.bytes.get_mut(index),
                timing.ran.get_mut(index),
                timing.in_group.get_mut(index),
            ) {
                *moved = part.bytes as u64;
                // NCCL drops a call of no elements.
                *ran = queued && part.bytes > 0;
                *in_group = Some(InGroup {
                    first: first.index,
                    device: part.device,
                    awaited: part.gives_work,
                });
            }
        }
        match &timing.clock {
            OpClock::Engine { tracing, .. } => {
                tracing.leave();
                Ok(())
            }
            OpClock::Events { marks, .. } => {
                parts
                    .iter()
                    .try_for_each(|part| match marks.get(part.index) {
                        Some((_, end)) => end.record_on(part.stream),
                        None => Ok(()),
                    })
            }
        }
    }

    /// A host step begins: the span of queuing before it ends.
    #[inline]
    pub fn host_step(&mut self) -> Option<Instant> {
        let timing = self.on.as_mut()?;
        let now = Instant::now();
        if let Some(since) = timing.queuing_since.take() {
            timing.host.push(span("queue", since, now, timing.started));
        }
        Some(now)
    }

    /// The host step that began at `began` ends; queuing goes on.
    #[inline]
    pub fn host_step_done(&mut self, op: &OpInfo, began: Option<Instant>) {
        let (Some(timing), Some(began)) = (self.on.as_mut(), began) else {
            return;
        };
        let now = Instant::now();
        timing.host.push(span(op.label, began, now, timing.started));
        timing.queuing_since = Some(now);
    }

    /// Every op is queued.
    pub fn queued(&mut self) {
        self.host_step();
    }

    /// The host waited for the run from `began` until now.
    pub fn waited(&mut self, began: Instant) {
        if let Some(timing) = &mut self.on {
            timing
                .host
                .push(span("wait", began, Instant::now(), timing.started));
        }
    }

    /// Whether ops are timed: only then is the host's wait for a run
    /// timed too (a clock read is a tenth of a tiny run's own cost).
    pub fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// The report of the run that started at `started` and just finished
    /// after `wall` (its streams synchronized; if their wait failed, not
    /// `finished`, CUPTI's records are not waited for).
    pub fn report<'a>(
        &mut self,
        plan: &'static str,
        instance: u32,
        ops: &dyn Fn(usize) -> Option<&'a OpInfo>,
        (started, wall): (Instant, Duration),
        finished: bool,
    ) -> Result<RunReport> {
        let mut report = RunReport::untimed(plan, instance, started, wall);
        let Some(timing) = self.on.as_mut().filter(|timing| timing.queued) else {
            return Ok(report);
        };
        report.host = std::mem::take(&mut timing.host);
        let ran = |index: usize| timing.ran.get(index).copied().unwrap_or(false);
        let moved = |index: usize| timing.bytes.get(index).copied().unwrap_or(0);
        // The ops that ran, by their step.
        let ran_ops: Vec<(usize, &OpInfo)> = (0..timing.ran.len())
            .filter(|&index| ran(index))
            .filter_map(|index| Some((index, ops(index)?)))
            .collect();
        match &mut timing.clock {
            OpClock::Engine {
                tracing,
                ids,
                origin_ns,
            } => {
                let wanted: Vec<Option<Wanted>> = (0..timing.ran.len())
                    .map(|index| {
                        let group = timing.in_group.get(index).copied().flatten();
                        ran(index).then_some(match group {
                            Some(InGroup {
                                first,
                                device,
                                awaited,
                            }) => Wanted {
                                id: ids.start + first as u64,
                                device: Some(device),
                                awaited,
                            },
                            None => Wanted {
                                id: ids.start + index as u64,
                                device: None,
                                awaited: true,
                            },
                        })
                    })
                    .collect();
                let (spans, problem) = tracing.take(&wanted, finished);
                let mut unrecorded = 0;
                for &(index, op) in &ran_ops {
                    match spans.get(index).copied().flatten() {
                        Some(Span { start, end }) => report.ops.push(OpTiming {
                            op: *op,
                            start_ms: since(*origin_ns, start),
                            end_ms: since(*origin_ns, end),
                            bytes: moved(index),
                        }),
                        None if wanted
                            .get(index)
                            .copied()
                            .flatten()
                            .is_some_and(|w| w.awaited) =>
                        {
                            unrecorded += 1;
                        }
                        // Work that may never have been given to the GPU.
                        None => {}
                    }
                }
                report.clock = Clock::Engine {
                    unrecorded,
                    problem,
                };
            }
            OpClock::Events {
                why, origin, marks, ..
            } => {
                // The origin was recorded on the legacy stream, which the
                // plan did not wait for.
                if let Err(error) = origin.synchronize() {
                    let location = error.location();
                    return Err(error.within(plan, "op timing", location));
                }
                for &(index, op) in &ran_ops {
                    let Some((start, end)) = marks.get(index) else {
                        continue;
                    };
                    let start_ms = start.elapsed_ms_raw(origin).map_err(|e| op.error(e))?;
                    let end_ms = end.elapsed_ms_raw(origin).map_err(|e| op.error(e))?;
                    report.ops.push(OpTiming {
                        op: *op,
                        start_ms: f64::from(start_ms.max(0.0)),
                        end_ms: f64::from(end_ms.max(start_ms).max(0.0)),
                        bytes: moved(index),
                    });
                }
                report.clock = Clock::Events { why: why.clone() };
            }
        }
        Ok(report)
    }
}

/// Milliseconds from `origin_ns` to `ns` on CUPTI's clock (work queued
/// before the run's start, as a plan's never is, would count from 0).
fn since(origin_ns: u64, ns: u64) -> f64 {
    ns.saturating_sub(origin_ns) as f64 / 1e6
}

fn span(label: &'static str, from: Instant, to: Instant, started: Instant) -> HostSpan {
    let ms = |at: Instant| at.saturating_duration_since(started).as_secs_f64() * 1e3;
    HostSpan {
        label,
        start_ms: ms(from),
        end_ms: ms(to),
    }
}
