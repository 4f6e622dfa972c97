//! Joining CUPTI's two halves of an op: the record that says which API
//! call carried memplan's id, and the record of the copy or kernel that
//! call queued, with its times on the device. They arrive in any order,
//! in buffers CUPTI hands back when all their records are complete, and
//! records of other work in the process come too; only those of runs
//! still awaited are kept.

use super::records::{Record, Span};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// Work records held while their call's record is awaited; beyond this,
/// the oldest go (work of other code, or of runs long gone).
const UNCLAIMED_CAP: usize = 1 << 16;

#[derive(Default)]
pub struct Store {
    /// The ids of runs whose records are awaited.
    live: BTreeMap<u64, u64>,
    /// memplan's id of each API call it made, by correlation id.
    calls: HashMap<u32, u64>,
    /// Work whose call is not (yet) known to be memplan's. Correlation ids
    /// grow with each call, so the first are the oldest.
    unclaimed: BTreeMap<u32, Span>,
    /// Work of live runs' ops, by their ids.
    spans: BTreeMap<u64, Span>,
}

impl Store {
    /// A run's ops will carry `ids`.
    pub fn begin_run(&mut self, ids: Range<u64>) {
        self.live.insert(ids.start, ids.end);
    }

    pub fn add(&mut self, record: Record) {
        match record {
            Record::Called {
                correlation,
                external,
            } => {
                if !self.is_live(external) {
                    return;
                }
                self.calls.insert(correlation, external);
                if let Some(span) = self.unclaimed.remove(&correlation) {
                    self.claim(external, span);
                }
            }
            Record::Ran { correlation, span } => match self.calls.get(&correlation) {
                Some(&external) => self.claim(external, span),
                None if self.live.is_empty() => {}
                None => {
                    let held = self.unclaimed.entry(correlation).or_insert(span);
                    *held = held.union(span);
                    if self.unclaimed.len() > UNCLAIMED_CAP {
                        self.unclaimed.pop_first();
                    }
                }
            },
        }
    }

    fn is_live(&self, id: u64) -> bool {
        self.live
            .range(..=id)
            .next_back()
            .is_some_and(|(_, &end)| id < end)
    }

    fn claim(&mut self, external: u64, span: Span) {
        let held = self.spans.entry(external).or_insert(span);
        *held = held.union(span);
    }

    /// Whether every op `i` of run `ids` with `expected[i]` has its span.
    pub fn has_all(&self, ids: &Range<u64>, expected: &[bool]) -> bool {
        expected
            .iter()
            .zip(ids.clone())
            .all(|(&expected, id)| !expected || self.spans.contains_key(&id))
    }

    /// The spans of run `ids`' ops, each `None` where no record came; the
    /// run's records are no longer awaited, and what arrives for it later
    /// is dropped. With no run left, nothing is kept.
    pub fn end_run(&mut self, ids: Range<u64>) -> Vec<Option<Span>> {
        self.live.remove(&ids.start);
        let mut taken = vec![None; (ids.end - ids.start) as usize];
        let later = self.spans.split_off(&ids.end);
        let mine = self.spans.split_off(&ids.start);
        self.spans.extend(later);
        for (id, span) in mine {
            taken[(id - ids.start) as usize] = Some(span);
        }
        self.calls.retain(|_, external| !ids.contains(external));
        if self.live.is_empty() {
            self.calls.clear();
            self.unclaimed.clear();
            self.spans.clear();
        }
        taken
    }

    /// Entries held, for the test that the store does not grow.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.calls.len() + self.unclaimed.len() + self.spans.len() + self.live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn span(start: u64) -> Span {
        Span {
            start,
            end: start + 10,
        }
    }

    #[test]
    fn either_half_may_come_first() {
        let mut store = Store::default();
        store.begin_run(7..9);
        store.add(Record::Ran {
            correlation: 1,
            span: span(100),
        });
        store.add(Record::Called {
            correlation: 1,
            external: 7,
        });
        store.add(Record::Called {
            correlation: 2,
            external: 8,
        });
        store.add(Record::Ran {
            correlation: 2,
            span: span(200),
        });
        assert!(store.has_all(&(7..9), &[true, true]));
        assert_eq!(store.end_run(7..9), vec![Some(span(100)), Some(span(200))]);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn records_of_no_live_run_are_not_kept() {
        let mut store = Store::default();
        store.add(Record::Ran {
            correlation: 5,
            span: span(1),
        });
        store.add(Record::Called {
            correlation: 6,
            external: 3,
        });
        assert_eq!(store.len(), 0);
        store.begin_run(10..12);
        store.add(Record::Called {
            correlation: 7,
            external: 3,
        });
        assert_eq!(store.len(), 1, "only the run is held");
        store.end_run(10..12);
        store.add(Record::Called {
            correlation: 8,
            external: 10,
        });
        assert_eq!(store.len(), 0, "a late record of a run taken");
    }

    #[test]
    fn an_op_not_expected_is_not_awaited() {
        let mut store = Store::default();
        store.begin_run(0..3);
        store.add(Record::Called {
            correlation: 1,
            external: 1,
        });
        store.add(Record::Ran {
            correlation: 1,
            span: span(5),
        });
        assert!(store.has_all(&(0..3), &[false, true, false]));
        assert!(!store.has_all(&(0..3), &[true, true, false]));
    }

    proptest! {
        /// Against the plain join of the two halves: runs overlap in time,
        /// each op's call and work records come in any order, interleaved
        /// with other runs' and with work of other code; each run then
        /// gets exactly its ops' spans, and nothing is left once no run is.
        #[test]
        fn the_join_is_the_join_of_the_halves(
            runs in prop::collection::vec(
                prop::collection::vec((any::<bool>(), 0u32..1000, 0u32..1000), 0..12),
                1..5,
            ),
            others in prop::collection::vec(0u32..1000, 0..20),
            ends in prop::collection::vec(0u32..1000, 5),
        ) {
            // (time, what): what is (run, op, is_call) or another's work.
            type Delivery = (u32, Option<(usize, usize, bool)>);
            let mut ids = Vec::new();
            let mut next = 100u64;
            let mut events: Vec<Delivery> = Vec::new();
            for (run, ops) in runs.iter().enumerate() {
                ids.push(next..next + ops.len() as u64);
                next += ops.len() as u64 + 3;
                for (op, &(timed, call_at, work_at)) in ops.iter().enumerate() {
                    if timed {
                        events.push((call_at, Some((run, op, true))));
                        events.push((work_at, Some((run, op, false))));
                    }
                }
            }
            for at in &others {
                events.push((*at, None));
            }
            events.sort_by_key(|(at, _)| *at);
            // Each run is taken once all its records are in, or at its end
            // time if later (then it must have them all).
            let mut store = Store::default();
            for run in &ids {
                store.begin_run(run.clone());
            }
            let correlation = |run: usize, op: usize| (run * 100 + op + 1) as u32;
            for (_, what) in events {
                store.add(match what {
                    Some((run, op, true)) => Record::Called {
                        correlation: correlation(run, op),
                        external: ids[run].start + op as u64,
                    },
                    Some((run, op, false)) => Record::Ran {
                        correlation: correlation(run, op),
                        span: span(ids[run].start + op as u64),
                    },
                    None => Record::Ran { correlation: 50_000, span: span(1) },
                });
            }
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|&run| ends[run]);
            for run in order {
                let expected: Vec<bool> = runs[run].iter().map(|op| op.0).collect();
                prop_assert!(store.has_all(&ids[run], &expected));
                let taken = store.end_run(ids[run].clone());
                for (op, timed) in expected.iter().enumerate() {
                    let want = timed.then(|| span(ids[run].start + op as u64));
                    prop_assert_eq!(taken[op], want, "run {} op {}", run, op);
                }
            }
            prop_assert_eq!(store.len(), 0);
        }
    }
}
