//! Ranks that agree. Each process of a `ranks world` job makes its plan
//! with its own sizes, and NCCL's behaviour when ranks give one collective
//! different counts or roots is undefined (a hang at best). So `new`, once
//! it has joined the job, exchanges among the ranks a fingerprint of the
//! plan and the sizes its collectives depend on (two all-gathers of a few
//! words), and fails, on every rank alike, naming the first difference;
//! a run that gives such a size does the same before it queues anything.
//! Sizes no collective depends on (a shard of uneven length) may differ.

use super::info::{Op, Place, PlanInfo, Site, Term};
use super::sizes::Sizes;
use crate::copy::{dtoh, htod};
use crate::device::DeviceBuffer;
use crate::error::{Fault, Location, Result, ResultExt};
use crate::nccl::Communicator;
use crate::stream::Stream;
use std::fmt::Write as _;

/// A fingerprint of what the plan does: its sizes' programs, its ops,
/// buffers, kernels, streams, events and loops, without where they are
/// written (a plan built from the same source in another folder, or with a
/// line moved, is the same plan). FNV-1a over a canonical text.
pub(crate) fn fingerprint(info: &PlanInfo) -> u64 {
    let mut text = String::new();
    let name = |site: &Site| site.0;
    let _ = write!(
        text,
        "{}|{:?}|{:?}",
        name(&info.site),
        info.inputs,
        info.sizes
    );
    for op in info.ops {
        let _ = write!(text, "|{}:{:?}:{:?}", name(&op.site), op.stream, op.op);
    }
    for (index, buffer) in info.buffers.iter().enumerate() {
        let elem = info.elems.get(index);
        let _ = write!(
            text,
            "|{}:{}:{:?}:{}:{:?}:{:?}:{:?}",
            name(&buffer.site),
            elem.map_or("?", |elem| elem.name()),
            elem,
            buffer.len,
            buffer.kind,
            buffer.array,
            buffer.gpu
        );
    }
    for (index, kernel) in info.kernels.iter().enumerate() {
        let code = info.code.get(index);
        let _ = write!(
            text,
            "|{}:{}:{:?}:{:?}",
            name(&kernel.site),
            code.map_or("?", |code| code.entry),
            code.map(|code| code.params),
            kernel.written
        );
    }
    for stream in info.streams {
        let _ = write!(
            text,
            "|{}:{:?}:{:?}:{:?}",
            stream.name, stream.priority, stream.array, stream.gpu
        );
    }
    for event in info.events {
        let _ = write!(text, "|{}:{:?}", name(&event.site), event.array);
    }
    for repeat in info.loops {
        let _ = write!(
            text,
            "|{}:{}:{}:{}",
            repeat.count, repeat.input, repeat.first, repeat.end
        );
    }
    let _ = write!(text, "|{:?}|{:?}", info.run_inputs, info.per_run);
    fnv1a(text.as_bytes())
}

/// The inputs the plan's collectives depend on, in order: those of the
/// sizes of their places (bounds, and the lengths of their buffers and
/// sets), their roots and peers, and the counts of the loops around
/// them; a loop's own variable is none.
pub(crate) fn collective_inputs(info: &PlanInfo) -> Vec<u16> {
    let mut sizes: Vec<u16> = Vec::new();
    let place = |place: &Place, sizes: &mut Vec<u16>| {
        let buffer = info.buffers.get(usize::from(place.buffer()));
        sizes.extend(buffer.map(|b| b.len));
        sizes.extend(buffer.and_then(|b| b.array).map(|a| a.count));
        if let Place::Part(_, start, end) = *place {
            sizes.extend([start, end]);
        }
    };
    for (index, def) in info.ops.iter().enumerate() {
        let Op::Collective(collective) = &def.op else {
            continue;
        };
        place(&collective.send, &mut sizes);
        place(&collective.recv, &mut sizes);
        use super::info::CollectiveKind::*;
        if let Broadcast(size) | Send(size) | Recv(size) = collective.kind {
            sizes.push(size);
        }
        sizes.extend(
            info.loops
                .iter()
                .filter(|l| (usize::from(l.first)..usize::from(l.end)).contains(&index))
                .map(|l| l.count),
        );
    }
    let loop_variables: Vec<u16> = info.loops.iter().map(|l| l.input).collect();
    let mut inputs: Vec<u16> = sizes
        .iter()
        .filter_map(|&size| info.sizes.get(usize::from(size)))
        .flat_map(|size| size.1.iter())
        .filter_map(|term| match *term {
            Term::Input(input) if !loop_variables.contains(&input) => Some(input),
            _ => None,
        })
        .collect();
    inputs.sort_unstable();
    inputs.dedup();
    inputs
}

/// What the ranks of a job compare once `new` has made the plan: its
/// fingerprint and, by name, the inputs its collectives depend on that
/// `new` is given; and those each run gives, which each run compares.
pub(crate) struct Agreement {
    pub plan: u64,
    pub at_new: Vec<(&'static str, u64)>,
    pub at_run: Vec<u16>,
}

impl Agreement {
    /// What `info`'s ranks compare, with `sizes` as `new` has them.
    pub fn at_new(info: &PlanInfo, sizes: &Sizes) -> Agreement {
        // A `run` size and a caller slice's length are each run's: the
        // ranks agree on them when the run gives them.
        let (at_new, at_run): (Vec<u16>, Vec<u16>) = collective_inputs(info)
            .into_iter()
            .partition(|&input| sizes.given_at_new(input));
        Agreement {
            plan: fingerprint(info),
            at_new: sizes.inputs_of(&at_new),
            at_run,
        }
    }
}

/// Each rank's words after its first of every `width`.
fn strip(words: &[u64], width: usize) -> Vec<u64> {
    words
        .chunks(width)
        .flat_map(|theirs| theirs.iter().skip(1).copied())
        .collect()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The first way another rank's words differ from this one's: `words` is
/// every rank's `mine.len()` words, in rank order. `names` names each word
/// (`None`: the plan's fingerprint).
pub(crate) fn first_difference(
    mine: &[u64],
    words: &[u64],
    names: &[Option<&'static str>],
) -> Option<Fault> {
    let width = mine.len();
    if width == 0 {
        return None;
    }
    for (index, (&here, name)) in mine.iter().zip(names).enumerate() {
        for (rank, theirs) in words.chunks(width).enumerate() {
            let there = theirs.get(index).copied().unwrap_or(u64::MAX);
            if there != here {
                return Some(Fault::RanksDisagree {
                    rank,
                    name: *name,
                    here,
                    there,
                });
            }
        }
    }
    None
}

/// Checks with every other rank of `comm`'s job that they run the plan of
/// fingerprint `plan` with the same `sizes` (`u64::MAX` for one not known
/// yet), and that every rank's own preparation went well (`ready`; a rank
/// whose did not still takes part, and its caller returns its own error).
/// Every rank calls it at the same points, before any collective, so that
/// no rank queues one that another will never queue.
#[track_caller]
pub(crate) fn agree(
    comm: &Communicator,
    plan: u64,
    sizes: &[(&'static str, u64)],
    ready: bool,
) -> Result<()> {
    let at = Location::caller();
    let context = comm.context();
    let stream = Stream::new(context)?;
    let gather = |mine: &[u64]| -> Result<Vec<u64>> {
        let send = DeviceBuffer::<u64>::new(context, mine.len())?;
        let recv = DeviceBuffer::<u64>::new(context, mine.len() * comm.count())?;
        htod(mine, .., &send, ..).at("cuMemcpyHtoD", at)?;
        let part = comm.all_gather(&send, &recv, &stream)?;
        // SAFETY: both buffers live until the stream is synchronized below;
        // nothing else touches them; every rank makes the same two calls
        // in the same order, with as many words, once their first
        // exchange agreed on the plan, and so the words' count.
        unsafe { part.queue() }?;
        stream.synchronize()?;
        let mut words = vec![0u64; recv.len()];
        dtoh(&recv, .., &mut words[..], ..).at("cuMemcpyDtoH", at)?;
        Ok(words)
    };
    // First whether each rank is ready, the plan and how many sizes it
    // has, which every plan can exchange whatever its sizes; then, where
    // all of that agrees, the sizes, as many on every rank. Every rank
    // decides from the same words, so all stop or all go on.
    let header = [u64::from(ready), plan, sizes.len() as u64];
    let words = gather(&header)?;
    if let Some(rank) = words.chunks(header.len()).position(|theirs| theirs[0] == 0) {
        return match ready {
            // Its caller has the reason.
            false => Ok(()),
            true => Err(Fault::RankFailed { rank }).at("ncclAllGather", at),
        };
    }
    if let Some(fault) = first_difference(&header[1..], &strip(&words, header.len()), &[None, None])
    {
        return Err(fault).at("ncclAllGather", at);
    }
    let values: Vec<u64> = sizes.iter().map(|(_, value)| *value).collect();
    let names: Vec<Option<&'static str>> = sizes.iter().map(|(name, _)| Some(*name)).collect();
    let words = gather(&values)?;
    match first_difference(&values, &words, &names) {
        Some(fault) => Err(fault).at("ncclAllGather", at),
        None => Ok(()),
    }
}

/// A rank's communicator from when it joins its job until its ranks agree
/// on the plan. Dropped before then, the rank failed to make its plan: it
/// tells the others (an agreement it is not ready for), which fail with
/// `RankFailed` instead of waiting for it in a collective for ever.
pub(crate) struct Joined(Option<Communicator>);

impl Joined {
    pub fn new(comm: Communicator) -> Joined {
        Joined(Some(comm))
    }

    /// The job's (ranks, this rank).
    pub fn job(&self) -> Option<(usize, usize)> {
        self.0.as_ref().map(|comm| (comm.count(), comm.rank()))
    }

    /// The communicator, for a plan whose ranks agree on it next.
    pub fn into_agreed(mut self) -> Communicator {
        match self.0.take() {
            Some(comm) => comm,
            // `new` made it with one, and only this takes it.
            None => unreachable!("a joined rank without its communicator"),
        }
    }
}

impl Drop for Joined {
    fn drop(&mut self) {
        if let Some(comm) = self.0.take() {
            // Its caller has the rank's own error; the others learn of it.
            let _ = agree(&comm, 0, &[], false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_word_and_rank_that_differ() {
        let names = [None, Some("n"), Some("m")];
        let mine = [7, 1024, 4];
        let same = [7, 1024, 4, 7, 1024, 4];
        assert!(first_difference(&mine, &same, &names).is_none());
        let other_plan = [7, 1024, 4, 8, 1024, 4];
        assert!(matches!(
            first_difference(&mine, &other_plan, &names),
            Some(Fault::RanksDisagree {
                rank: 1,
                name: None,
                ..
            })
        ));
        let other_m = [7, 1024, 4, 7, 1024, 5, 7, 2048, 4];
        assert!(matches!(
            first_difference(&mine, &other_m, &names),
            Some(Fault::RanksDisagree {
                rank: 2,
                name: Some("n"),
                here: 1024,
                there: 2048
            })
        ));
        assert!(first_difference(&[], &[], &[]).is_none());
    }

    /// A rank's plan: `grads` (length `n`) all-reduced in a loop of `k`
    /// chunks of `m`, a broadcast from root `r`, and `local` (length
    /// `shard`, `n` plus the loop's variable `c`) that no collective uses.
    mod plan {
        use super::super::super::info::*;
        use crate::nccl::ReduceOp;
        use Term::*;
        use memplan_model::{Plan, Site, Size};

        /// The plan, its sites on line `$line`, broadcasting from size
        /// `$root`.
        macro_rules! rank_plan {
            ($line:literal, $root:literal) => {
                PlanInfo {
                    file: "rank.rs",
                    elems: &[elem::<f32>(), elem::<f32>()],
                    code: &[],
                    model: Plan {
                        site: Site("Rank", $line, 1),
                        inputs: &["n", "m", "k", "r", "shard", "c"],
                        sizes: &[
                            Size("n", &[Input(0)]),
                            Size("c * m", &[Input(5), Input(1), Mul]),
                            Size("c * m + m", &[Input(5), Input(1), Mul, Input(1), Add]),
                            Size("k", &[Input(2)]),
                            Size("r", &[Input(3)]),
                            Size("shard", &[Input(4)]),
                        ],
                        buffers: &[
                            Site("grads", $line, 1).buffer(0, BufferKind::Device),
                            Site("local", $line, 1).buffer(5, BufferKind::Device),
                        ],
                        ops: &[
                            Site("fill local", $line, 1).on(0, Op::Fill(Place::Whole(1))),
                            Site("all_reduce", $line, 1).on(
                                0,
                                Op::Collective(CollectiveInfo {
                                    kind: CollectiveKind::AllReduce(ReduceOp::Sum),
                                    send: Place::Part(0, 1, 2),
                                    recv: Place::Part(0, 1, 2),
                                    group: 0,
                                }),
                            ),
                            Site("broadcast", $line, 1).on(
                                0,
                                Op::Collective(CollectiveInfo {
                                    kind: CollectiveKind::Broadcast($root),
                                    send: Place::Whole(0),
                                    recv: Place::Whole(0),
                                    group: 1,
                                }),
                            ),
                        ],
                        loops: &[Site("for c", $line, 1).repeat(3, 5, 1, 2)],
                        ranks: Some(Site("world", $line, 1)),
                        ..Plan::EMPTY
                    },
                }
            };
        }

        pub static INFO: PlanInfo = rank_plan!(1, 4);
        /// The same, written on other lines.
        pub static MOVED: PlanInfo = rank_plan!(9, 4);
        /// Broadcasting from another rank.
        pub static OTHER: PlanInfo = rank_plan!(1, 3);
    }

    #[test]
    fn collectives_depend_on_their_lengths_ranges_roots_and_loops_only() {
        // n (grads' length), m (the chunk), k (the loop's count), r (the
        // root); not shard, which only `local` has, nor c, the variable.
        assert_eq!(collective_inputs(&plan::INFO), [0, 1, 2, 3]);
    }

    #[test]
    fn the_fingerprint_is_of_what_the_plan_does() {
        let one = fingerprint(&plan::INFO);
        assert_eq!(one, fingerprint(&plan::MOVED));
        assert_ne!(one, fingerprint(&plan::OTHER));
    }

    #[test]
    fn the_fingerprint_is_the_texts() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
