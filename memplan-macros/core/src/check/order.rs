//! The happens-before order of a plan's ops, with vector clocks.
//!
//! Lanes are the host and each stream. Within a lane, ops are ordered by
//! program order. Across lanes, an op happens after another when one of
//! these links them:
//! - issue: a stream op happens after every host op before it (the host
//!   issues it afterwards);
//! - `record e` on one stream, then `wait e` on another;
//! - `sync s` (or `sync all`) on the host, after the stream's ops.
//!
//! Each op gets a vector clock (one counter per lane): `a` happens before
//! `b` iff `b`'s clock has seen `a`'s tick on `a`'s lane. Computing the
//! clocks takes O(ops × lanes) time and memory.

use super::Facts;
use crate::errors::Errors;
use crate::ir::{Lane, OpId, OpKind, Plan};

/// The happens-before order of a plan's ops: a vector clock for each op.
pub struct Order {
    clocks: Vec<Vec<u32>>,
    lanes: Vec<usize>,
}

impl Order {
    /// The order of `plan`'s ops.
    pub fn compute(plan: &Plan) -> Order {
        Self::compute_skipping(plan, &|_| false)
    }

    /// The order as if the ops `skip` selects were not there: a loop that
    /// runs no iterations. Their own clocks mean nothing.
    pub fn compute_skipping(plan: &Plan, skip: &dyn Fn(OpId) -> bool) -> Order {
        let lane_count = plan.lane_count();
        let mut lane_clocks = vec![vec![0u32; lane_count]; lane_count];
        // The join of every lane's clock, kept up to date, so that `sync
        // all` costs one join, not one per lane.
        let mut every_lane = vec![0u32; lane_count];
        let mut recorded: Vec<Option<(Vec<u32>, OpId)>> = vec![None; plan.events.len()];
        let mut clocks = Vec::with_capacity(plan.ops.len());
        let mut lanes = Vec::with_capacity(plan.ops.len());

        for (id, op) in plan.ops.iter().enumerate() {
            let lane = op.lane.index();
            if skip(id) {
                clocks.push(lane_clocks[lane].clone());
                lanes.push(lane);
                continue;
            }
            let mut clock = lane_clocks[lane].clone();
            if let Lane::Stream(_) = op.lane {
                join(&mut clock, &lane_clocks[Lane::Host.index()]);
            }
            clock[lane] += 1;
            match &op.kind {
                OpKind::Record(event) => recorded[*event] = Some((clock.clone(), id)),
                OpKind::Wait(event) => {
                    if let Some((event_clock, _)) = &recorded[*event] {
                        join(&mut clock, event_clock);
                    }
                }
                OpKind::Sync(Some(stream)) => {
                    join(&mut clock, &lane_clocks[Lane::Stream(*stream).index()]);
                }
                OpKind::Sync(None) => join(&mut clock, &every_lane),
                _ => {}
            }
            join(&mut every_lane, &clock);
            lane_clocks[lane].clone_from(&clock);
            clocks.push(clock);
            lanes.push(lane);
        }
        Order { clocks, lanes }
    }

    /// Whether op `a` happens before op `b`.
    pub fn happens_before(&self, a: OpId, b: OpId) -> bool {
        let lane = self.lanes[a];
        a != b && self.clocks[b][lane] >= self.clocks[a][lane]
    }
}

fn join(clock: &mut [u32], other: &[u32]) {
    for (mine, theirs) in clock.iter_mut().zip(other) {
        *mine = (*mine).max(*theirs);
    }
}

/// A `wait` before any `record` of its event, outside a loop: CUDA waits
/// only for a record already issued, so it would wait for nothing. (In a
/// loop, a wait before the body's record waits for an earlier iteration's,
/// or, in the first, for nothing, by design.)
pub fn check_waits_after_records(facts: &Facts, errors: &Errors) {
    let plan = facts.plan;
    let mut recorded = vec![false; plan.events.len()];
    for (id, op) in plan.ops.iter().enumerate() {
        match op.kind {
            OpKind::Record(event) => recorded[event] = true,
            OpKind::Wait(event) if !recorded[event] && plan.loop_of(id).is_none() => {
                let name = &plan.events[event];
                errors.at(
                    op.span,
                    format!(
                        "`wait {name}` comes before any `record {name}`, so it waits for nothing: \
                         CUDA waits only for a record already issued"
                    ),
                    format!("record `{name}` earlier in the plan, on the stream that does the work to wait for"),
                );
            }
            _ => {}
        }
    }
}
