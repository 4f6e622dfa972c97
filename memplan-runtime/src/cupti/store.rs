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

/// The work an op of a run is timed by: what ran under the id pushed for
/// it, `id`, and only on `device` where one is given (one GPU's part of an
/// NCCL group: NCCL launches every GPU's work when the group ends, under
/// the one id pushed around the group). A report waits for the work of an
/// op that is `awaited`; of another (a call that may give the GPU nothing
/// to do, as NCCL's in-place reduction on one rank), it takes what came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    pub id: u64,
    pub device: Option<u32>,
    pub awaited: bool,
}

#[derive(Default)]
pub struct Store {
    /// The ids of runs whose records are awaited.
    live: BTreeMap<u64, u64>,
    /// memplan's id of each API call it made, by correlation id.
    calls: HashMap<u32, u64>,
    /// Work whose call is not (yet) known to be memplan's, by correlation
    /// id and GPU. Correlation ids grow with each call, so the first are
    /// the oldest.
    unclaimed: BTreeMap<(u32, u32), Span>,
    /// Work of live runs' ops, by their ids and GPUs.
    spans: BTreeMap<(u64, u32), Span>,
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
                let held: Vec<_> = self
                    .unclaimed
                    .range((correlation, 0)..=(correlation, u32::MAX))
                    .map(|(&key, &span)| (key, span))
                    .collect();
                for ((_, device), span) in held {
                    self.unclaimed.remove(&(correlation, device));
                    self.claim(external, device, span);
                }
            }
            Record::Ran {
                correlation,
                device,
                span,
            } => match self.calls.get(&correlation) {
                Some(&external) => self.claim(external, device, span),
                None if self.live.is_empty() => {}
                None => {
                    let held = self.unclaimed.entry((correlation, device)).or_insert(span);
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

    fn claim(&mut self, external: u64, device: u32, span: Span) {
        let held = self.spans.entry((external, device)).or_insert(span);
        *held = held.union(span);
    }

    /// The span of what `wanted` is timed by, so far: on its GPU, or on
    /// all it ran on.
    fn span(&self, wanted: Wanted) -> Option<Span> {
        let devices = match wanted.device {
            Some(device) => device..=device,
            None => 0..=u32::MAX,
        };
        self.spans
            .range((wanted.id, *devices.start())..=(wanted.id, *devices.end()))
            .map(|(_, &span)| span)
            .reduce(Span::union)
    }

    /// Whether every op `wanted` that is awaited has its span.
    pub fn has_all(&self, wanted: &[Option<Wanted>]) -> bool {
        wanted
            .iter()
            .flatten()
            .filter(|wanted| wanted.awaited)
            .all(|&wanted| self.span(wanted).is_some())
    }

    /// The spans of run `ids`' ops, as `wanted` (`None` where no record
    /// came, or none was wanted); the run's records are no longer awaited,
    /// and what arrives for it later is dropped. With no run left, nothing
    /// is kept.
    pub fn end_run(&mut self, ids: Range<u64>, wanted: &[Option<Wanted>]) -> Vec<Option<Span>> {
        self.live.remove(&ids.start);
        let taken = wanted
            .iter()
            .map(|wanted| {
                wanted
                    .filter(|wanted| ids.contains(&wanted.id))
                    .and_then(|wanted| self.span(wanted))
            })
            .collect();
        let later = self.spans.split_off(&(ids.end, 0));
        self.spans.split_off(&(ids.start, 0));
        self.spans.extend(later);
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

    fn ran(correlation: u32, start: u64) -> Record {
        Record::Ran {
            correlation,
            device: 0,
            span: span(start),
        }
    }

    fn any_gpu(id: u64) -> Option<Wanted> {
        Some(Wanted {
            id,
            device: None,
            awaited: true,
        })
    }

    #[test]
    fn either_half_may_come_first() {
        let mut store = Store::default();
        store.begin_run(7..9);
        store.add(ran(1, 100));
        store.add(Record::Called {
            correlation: 1,
            external: 7,
        });
        store.add(Record::Called {
            correlation: 2,
            external: 8,
        });
        store.add(ran(2, 200));
        let wanted = [any_gpu(7), any_gpu(8)];
        assert!(store.has_all(&wanted));
        assert_eq!(
            store.end_run(7..9, &wanted),
            vec![Some(span(100)), Some(span(200))]
        );
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn a_group_is_split_by_gpu() {
        let mut store = Store::default();
        store.begin_run(0..2);
        for (correlation, device, start) in [(1, 0, 100), (2, 1, 300)] {
            store.add(Record::Called {
                correlation,
                external: 0,
            });
            store.add(Record::Ran {
                correlation,
                device,
                span: span(start),
            });
        }
        let on = |device| {
            Some(Wanted {
                id: 0,
                device,
                awaited: true,
            })
        };
        assert!(store.has_all(&[on(Some(0)), on(Some(1))]));
        assert!(!store.has_all(&[on(Some(2))]));
        assert_eq!(
            store.end_run(0..2, &[on(Some(1)), on(Some(0)), on(None), None]),
            vec![
                Some(span(300)),
                Some(span(100)),
                Some(Span {
                    start: 100,
                    end: 310
                }),
                None
            ]
        );
    }

    #[test]
    fn records_of_no_live_run_are_not_kept() {
        let mut store = Store::default();
        store.add(ran(5, 1));
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
        store.end_run(10..12, &[]);
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
        store.add(ran(1, 5));
        assert!(store.has_all(&[None, any_gpu(1), None]));
        assert!(!store.has_all(&[any_gpu(0), any_gpu(1), None]));
        let maybe = Wanted {
            id: 0,
            device: None,
            awaited: false,
        };
        assert!(store.has_all(&[Some(maybe), any_gpu(1), None]));
        assert_eq!(
            store.end_run(0..3, &[Some(maybe), any_gpu(1), None]),
            [None, Some(span(5)), None]
        );
    }

    proptest! {
        /// Against the plain join of the two halves: runs overlap in time;
        /// an op's call and its work records (one or several, on any of
        /// three GPUs) come in any order, interleaved with other runs' and
        /// with work of other code; an op is timed by its work on one GPU
        /// or on all, awaited or not. Each run then has all it wants
        /// exactly when each awaited op has work there, and gets exactly
        /// the union of that work, awaited or not; nothing is left once no
        /// run is.
        #[test]
        fn the_join_is_the_join_of_the_halves(
            runs in prop::collection::vec(
                prop::collection::vec(
                    (
                        prop::option::of((prop::option::of(0u32..3), any::<bool>())),
                        0u32..1000,
                        prop::collection::vec((0u32..3, 0u32..1000, 0u64..50), 1..3),
                    ),
                    0..12,
                ),
                1..5,
            ),
            others in prop::collection::vec((0u32..1000, 0u32..3), 0..20),
            ends in prop::collection::vec(0u32..1000, 5),
        ) {
            // (time, what): a call (run, op), work (run, op, which), or
            // another's work on a GPU.
            enum What { Call(usize, usize), Work(usize, usize, usize), Other(u32) }
            let mut ids = Vec::new();
            let mut next = 100u64;
            let mut events: Vec<(u32, What)> = Vec::new();
            for (run, ops) in runs.iter().enumerate() {
                ids.push(next..next + ops.len() as u64);
                next += ops.len() as u64 + 3;
                for (op, (_, call_at, work)) in ops.iter().enumerate() {
                    events.push((*call_at, What::Call(run, op)));
                    for (which, &(_, work_at, _)) in work.iter().enumerate() {
                        events.push((work_at, What::Work(run, op, which)));
                    }
                }
            }
            for &(at, device) in &others {
                events.push((at, What::Other(device)));
            }
            events.sort_by_key(|(at, _)| *at);
            let mut store = Store::default();
            for run in &ids {
                store.begin_run(run.clone());
            }
            // Each work record is a call of its own, as the driver's are.
            let correlation = |run: usize, op: usize, which: Option<usize>| {
                (run * 1000 + op * 10 + which.map_or(0, |w| w + 1) + 1) as u32
            };
            for (_, what) in events {
                match what {
                    What::Call(run, op) => {
                        for which in 0..runs[run][op].2.len() {
                            store.add(Record::Called {
                                correlation: correlation(run, op, Some(which)),
                                external: ids[run].start + op as u64,
                            });
                        }
                    }
                    What::Work(run, op, which) => {
                        let (device, _, start) = runs[run][op].2[which];
                        store.add(Record::Ran {
                            correlation: correlation(run, op, Some(which)),
                            device,
                            span: span(start),
                        });
                    }
                    What::Other(device) => store.add(Record::Ran {
                        correlation: 50_000,
                        device,
                        span: span(1),
                    }),
                }
            }
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|&run| ends[run]);
            for run in order {
                let ops = &runs[run];
                let wanted: Vec<Option<Wanted>> = ops
                    .iter()
                    .enumerate()
                    .map(|(op, (wanted, _, _))| {
                        wanted.map(|(device, awaited)| Wanted {
                            id: ids[run].start + op as u64,
                            device,
                            awaited,
                        })
                    })
                    .collect();
                let expected: Vec<Option<Span>> = ops
                    .iter()
                    .map(|(wanted, _, work)| {
                        let (device, _) = (*wanted)?;
                        work.iter()
                            .filter(|(on, _, _)| device.is_none_or(|device| device == *on))
                            .map(|&(_, _, start)| span(start))
                            .reduce(Span::union)
                    })
                    .collect();
                let complete = ops
                    .iter()
                    .zip(&expected)
                    .all(|((wanted, _, _), span)| !wanted.is_some_and(|(_, awaited)| awaited) || span.is_some());
                prop_assert_eq!(store.has_all(&wanted), complete);
                let taken = store.end_run(ids[run].clone(), &wanted);
                prop_assert_eq!(taken, expected, "run {}", run);
            }
            prop_assert_eq!(store.len(), 0);
        }
    }
}
