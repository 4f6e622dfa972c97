//! What a scope's queued copies and fills touch, and what orders them: one
//! lane per stream, a vector clock per lane, and the memory each queued
//! operation reads or writes. An operation that touches memory another
//! lane's unordered operation writes (or reads, when this one writes) is
//! refused before it is queued.
//!
//! Within one lane, stream order orders everything. Across lanes, only
//! `record` on one and `wait` on the other do: a `wait` joins the waiting
//! lane's clock with the clock the `record` saw.
//!
//! Cost: each operation is compared with the operations of other lanes
//! that its lane has not yet been ordered after (a suffix of each lane's
//! list, found by binary search); a scope of `n` unordered operations on
//! two streams costs O(n²) comparisons, nothing beside the driver calls.

use crate::error::Location;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// One access of an operation: an address range, read or written.
pub struct Use {
    span: Range<u64>,
    write: bool,
}

impl Use {
    pub fn read(span: Range<u64>) -> Use {
        Use { span, write: false }
    }

    pub fn write(span: Range<u64>) -> Use {
        Use { span, write: true }
    }
}

/// A point of a lane, as `record` saw it.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    scope: u64,
    index: usize,
}

/// An access already queued.
struct Queued {
    span: Range<u64>,
    write: bool,
    /// The lane's clock when it was queued (1 for the lane's first).
    tick: u32,
    at: Location,
}

pub struct Accesses {
    /// Tells marks of different scopes apart.
    scope: u64,
    /// `clocks[lane][other]`: the ticks of `other` that `lane` is ordered after.
    clocks: Vec<Vec<u32>>,
    /// Per lane, in the order (and tick order) they were queued.
    queued: Vec<Vec<Queued>>,
    /// The clocks `record` saw, by mark.
    marks: Vec<Vec<u32>>,
}

impl Default for Accesses {
    fn default() -> Self {
        static SCOPES: AtomicU64 = AtomicU64::new(0);
        Self {
            scope: SCOPES.fetch_add(1, Ordering::Relaxed),
            clocks: Vec::new(),
            queued: Vec::new(),
            marks: Vec::new(),
        }
    }
}

impl Accesses {
    /// Which scope these are the accesses of.
    pub fn scope(&self) -> u64 {
        self.scope
    }

    /// Queues an operation of `lane` making `uses`, or returns where the
    /// unordered operation it conflicts with was queued.
    pub fn queue(&mut self, lane: usize, uses: &[Use], at: Location) -> Result<(), Location> {
        self.grow(lane);
        for (other, queued) in self.queued.iter().enumerate() {
            if other == lane {
                continue;
            }
            let seen = self.clocks[lane].get(other).copied().unwrap_or(0);
            let unordered = &queued[queued.partition_point(|q| q.tick <= seen)..];
            for earlier in unordered {
                let conflict = uses.iter().any(|new| {
                    (new.write || earlier.write)
                        && new.span.start < earlier.span.end
                        && earlier.span.start < new.span.end
                });
                if conflict {
                    return Err(earlier.at);
                }
            }
        }
        let tick = self.clocks[lane][lane] + 1;
        self.clocks[lane][lane] = tick;
        self.queued[lane].extend(uses.iter().filter(|u| !u.span.is_empty()).map(|u| Queued {
            span: u.span.clone(),
            write: u.write,
            tick,
            at,
        }));
        Ok(())
    }

    /// Marks the current point of `lane`.
    pub fn record(&mut self, lane: usize) -> Mark {
        self.grow(lane);
        self.marks.push(self.clocks[lane].clone());
        Mark {
            scope: self.scope,
            index: self.marks.len() - 1,
        }
    }

    /// Orders `lane`'s later operations after `mark`; false for a mark of
    /// another scope.
    pub fn wait(&mut self, lane: usize, mark: Mark) -> bool {
        if mark.scope != self.scope {
            return false;
        }
        self.grow(lane);
        let seen = &self.marks[mark.index];
        let clock = &mut self.clocks[lane];
        if clock.len() < seen.len() {
            clock.resize(seen.len(), 0);
        }
        for (mine, theirs) in clock.iter_mut().zip(seen) {
            *mine = (*mine).max(*theirs);
        }
        true
    }

    fn grow(&mut self, lane: usize) {
        if self.clocks.len() <= lane {
            self.clocks.resize_with(lane + 1, Vec::new);
            self.queued.resize_with(lane + 1, Vec::new);
        }
        if self.clocks[lane].len() <= lane {
            self.clocks[lane].resize(lane + 1, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Location = Location {
        file: "s.rs",
        line: 1,
        column: 1,
    };

    fn at(line: u32) -> Location {
        Location { line, ..AT }
    }

    #[test]
    fn one_lane_is_ordered_by_itself() {
        let mut accesses = Accesses::default();
        assert!(accesses.queue(0, &[Use::write(0..8)], AT).is_ok());
        assert!(
            accesses
                .queue(0, &[Use::read(0..8), Use::write(0..8)], AT)
                .is_ok()
        );
    }

    #[test]
    fn two_lanes_conflict_unless_an_event_orders_them() {
        let mut accesses = Accesses::default();
        accesses.queue(0, &[Use::write(0..8)], at(3)).unwrap();
        assert_eq!(accesses.queue(1, &[Use::read(4..12)], AT), Err(at(3)));
        assert!(accesses.queue(1, &[Use::read(8..12)], AT).is_ok(), "apart");
        let mark = accesses.record(0);
        assert!(accesses.wait(1, mark));
        assert!(accesses.queue(1, &[Use::write(0..8)], AT).is_ok());
        // Lane 0's later work is not ordered after lane 1's.
        assert_eq!(accesses.queue(0, &[Use::read(0..4)], AT), Err(AT));
    }

    #[test]
    fn reads_never_conflict_with_reads() {
        let mut accesses = Accesses::default();
        accesses.queue(0, &[Use::read(0..8)], AT).unwrap();
        assert!(accesses.queue(1, &[Use::read(0..8)], AT).is_ok());
    }

    #[test]
    fn a_mark_records_the_point_not_the_end() {
        let mut accesses = Accesses::default();
        let early = accesses.record(0);
        accesses.queue(0, &[Use::write(0..8)], at(5)).unwrap();
        assert!(accesses.wait(1, early));
        assert_eq!(accesses.queue(1, &[Use::read(0..8)], AT), Err(at(5)));
    }

    #[test]
    fn marks_of_another_scope_are_refused() {
        let (mut first, mut second) = (Accesses::default(), Accesses::default());
        let mark = first.record(0);
        assert!(!second.wait(0, mark));
    }
}
