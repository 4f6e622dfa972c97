//! Ranks that agree. Each process of a `ranks world` job makes its plan
//! with its own sizes, and NCCL's behaviour when ranks give one collective
//! different counts or roots is undefined (a hang at best). So `new`, once
//! it has joined the job, exchanges among the ranks a fingerprint of the
//! plan and the sizes it was given (two all-gathers of a few words) and
//! fails, on every rank alike, naming the first difference.

use super::info::{PlanInfo, Site};
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
    for buffer in info.buffers {
        let _ = write!(
            text,
            "|{}:{:?}:{}:{:?}:{:?}:{:?}",
            name(&buffer.site),
            buffer.elem,
            buffer.len,
            buffer.kind,
            buffer.array,
            buffer.gpu
        );
    }
    for kernel in info.kernels {
        let _ = write!(
            text,
            "|{}:{}:{:?}:{:?}",
            name(&kernel.site),
            kernel.entry,
            kernel.params,
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
/// yet). Every rank calls it once, after joining, before any collective.
#[track_caller]
pub(crate) fn agree(comm: &Communicator, plan: u64, sizes: &[(&'static str, u64)]) -> Result<()> {
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
    // First the plan and how many sizes it has, which every plan can
    // exchange whatever its sizes; then the sizes, as many on every rank.
    let header = [plan, sizes.len() as u64];
    let words = gather(&header)?;
    if let Some(fault) = first_difference(&header, &words, &[None, None]) {
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

    #[test]
    fn the_fingerprint_is_the_texts() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
