//! Timing a plan's operations with pairs of CUDA events.

use crate::context::Context;
use crate::driver::DriverError;
use crate::error::Result;
use crate::event::Event;
use crate::op::OpInfo;
use crate::report::{OpTiming, RunReport};
use crate::stream::LEGACY;
use cust::sys::CUstream;
use std::time::Duration;

/// Times each op with a pair of timed events around it, when switched on.
/// Off, each `start`/`end` is one untaken branch and no driver call.
#[derive(Default)]
pub struct Timer {
    events: Option<TimerEvents>,
}

struct TimerEvents {
    /// Recorded when a run begins; op times count from it.
    origin: Event,
    marks: Vec<(Event, Event)>,
    bytes: Vec<u64>,
    ran: Vec<bool>,
}

impl Timer {
    /// Creates the events for `op_count` ops, once; later runs reuse them.
    #[track_caller]
    pub fn enable(&mut self, context: &Context, op_count: usize) -> Result<()> {
        if self
            .events
            .as_ref()
            .is_some_and(|e| e.marks.len() == op_count)
        {
            return Ok(());
        }
        let marks = (0..op_count)
            .map(|_| Ok((Event::timed(context)?, Event::timed(context)?)))
            .collect::<Result<Vec<_>>>()?;
        self.events = Some(TimerEvents {
            origin: Event::timed(context)?,
            marks,
            bytes: vec![0; op_count],
            ran: vec![false; op_count],
        });
        Ok(())
    }

    pub fn is_enabled(&self) -> bool {
        self.events.is_some()
    }

    pub fn disable(&mut self) {
        self.events = None;
    }

    /// Marks the start of a run.
    #[inline]
    pub fn begin(&mut self) -> Result<(), DriverError> {
        let Some(events) = &mut self.events else {
            return Ok(());
        };
        events.ran.fill(false);
        events.origin.record_on(LEGACY)
    }

    /// Marks the start of op `index` on `stream` (0: the legacy stream).
    #[inline]
    pub fn start(&self, index: usize, stream: CUstream) -> Result<(), DriverError> {
        // An index outside the plan's ops times nothing.
        match self
            .events
            .as_ref()
            .and_then(|events| events.marks.get(index))
        {
            Some((start, _)) => start.record_on(stream),
            None => Ok(()),
        }
    }

    /// Marks the end of op `index`, which moved `bytes`.
    #[inline]
    pub fn end(&mut self, index: usize, stream: CUstream, bytes: usize) -> Result<(), DriverError> {
        let Some(events) = self
            .events
            .as_mut()
            .filter(|events| index < events.marks.len())
        else {
            return Ok(());
        };
        events.bytes[index] = bytes as u64;
        events.ran[index] = true;
        events.marks[index].1.record_on(stream)
    }

    /// The report of the run that just finished (its streams synchronized).
    pub fn report(&self, plan: &'static str, ops: &[OpInfo], wall: Duration) -> Result<RunReport> {
        let mut report = RunReport {
            plan,
            wall,
            ops: Vec::new(),
        };
        let Some(events) = &self.events else {
            return Ok(report);
        };
        // The origin was recorded on the legacy stream, which the plan did
        // not wait for.
        if let Err(error) = events.origin.synchronize() {
            let location = error.location();
            return Err(error.within(plan, "op timing", location));
        }
        for (index, op) in ops.iter().enumerate() {
            if !events.ran.get(index).copied().unwrap_or(false) {
                continue;
            }
            let Some((start, end)) = events.marks.get(index) else {
                continue;
            };
            let start_ms = start
                .elapsed_ms_raw(&events.origin)
                .map_err(|e| op.error(e))?;
            let end_ms = end
                .elapsed_ms_raw(&events.origin)
                .map_err(|e| op.error(e))?;
            report.ops.push(OpTiming {
                op: *op,
                start_ms: f64::from(start_ms.max(0.0)),
                end_ms: f64::from(end_ms.max(start_ms).max(0.0)),
                bytes: events.bytes[index],
            });
        }
        Ok(report)
    }
}
