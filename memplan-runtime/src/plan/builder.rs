//! What a plan's `new` collects before the engine takes over: the host
//! buffers (typed, for the plan's host views), and the values the user's
//! expressions give (kernel arguments, fill values, launch dimensions;
//! see [`given`](super::given)).
//!
//! The user's expressions are evaluated by the generated `new`, in safe
//! code, and handed over here as plain values: nothing of the user's is
//! ever inside an `unsafe` block.

use super::fingerprint::Joined;
use super::given::Givens;
use super::info::{BufferKind, MALFORMED, PlanInfo, Site};
use super::sizes::Sizes;
use crate::context::Context;
use crate::error::{Fault, Result};
use crate::host::{HostAlloc, PinnedBuffer};
use crate::memory::{Element, HostMemory, HostMemoryMut, byte_len};
use crate::nccl::{Communicator, Rank};

/// The plan being built; `Engine::new` finishes it.
pub struct Builder {
    /// The GPUs the plan runs on, by number: one, unless it declares `gpus`.
    pub(crate) contexts: Vec<Context>,
    pub(crate) info: &'static PlanInfo,
    pub(crate) sizes: Sizes,
    /// The host buffers made so far, by buffer.
    pub(crate) host: Vec<Option<HostBuffer>>,
    pub(crate) given: Givens,
    /// `ranks world;`: this rank's communicator in the job, joined first,
    /// so that a failure while the plan is made reaches the other ranks.
    pub(crate) joined: Option<Joined>,
}

/// Where a host buffer is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostBuffer {
    pub host: u64,
    /// Its device address, if mapped.
    pub device: Option<u64>,
    pub page_locked: bool,
}

impl Builder {
    /// Starts building a plan of `info` with the size inputs `sizes`
    /// (the plan's `usize` parameters and constants, in `info`'s order);
    /// an error where they are above a bound the plan states.
    pub fn new(context: &Context, info: &'static PlanInfo, sizes: &[usize]) -> Result<Builder> {
        Builder::on_contexts(vec![context.clone()], info, sizes)
    }

    /// [`new`](Self::new), on every one of `contexts`.
    fn on_contexts(
        contexts: Vec<Context>,
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Builder> {
        Ok(Builder {
            contexts,
            info,
            sizes: sizes_at_new(info, sizes)?,
            host: info.buffers.iter().map(|_| None).collect(),
            given: Givens::default(),
            joined: None,
        })
    }

    /// Starts building a plan that declares `ranks`, as rank `rank` of the
    /// job it names, on `context`'s GPU, joining the job's communicator
    /// first (`ncclCommInitRank`, which returns once every rank has): from
    /// then on, a rank that fails to make its plan tells the others, which
    /// fail with `RankFailed` instead of waiting for it in a collective. A
    /// rank that cannot join (a rank number past the count, NCCL missing or
    /// `NCCL_NVLS_ENABLE` unset) cannot tell them: they wait in
    /// `ncclCommInitRank`, as NCCL's own ranks would.
    pub fn joining(
        context: &Context,
        rank: &Rank,
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Builder> {
        let mut builder = Builder::new(context, info, sizes)?;
        let site = check_rank(info, rank)?;
        let comm = Communicator::join(context, &rank.id, rank.count, rank.rank)
            .map_err(|e| info.within(site, e))?;
        // NCCL set its own current device while it joined.
        context.bind_to_thread().map_err(|e| info.within(site, e))?;
        builder.joined = Some(Joined::new(comm));
        Ok(builder)
    }

    /// Starts building a plan that declares `gpus gpu[g]`, on the GPUs of
    /// `contexts` (`gpu[i]` is `contexts[i]`): as many as `g`.
    pub fn on_gpus(
        contexts: &[Context],
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Builder> {
        let mut builder = Builder::on_contexts(contexts.to_vec(), info, sizes)?;
        check_gpu_count(info, &mut builder.sizes, contexts.len())?;
        Ok(builder)
    }

    /// Allocates pinned host buffer `buffer`, zeroed.
    pub fn pinned<T: Element>(&mut self, buffer: u16) -> Result<PinnedBuffer<T>> {
        let (site, len) = declared::<T>(self.info, &mut self.sizes, buffer)?;
        let BufferKind::Pinned(flags) = self.info.buffers[usize::from(buffer)].kind else {
            return Err(self.info.error(site, Fault::Unsupported(NOT_AS_DECLARED)));
        };
        // Pinned for every GPU of the plan, not only the first.
        let flags = if self.contexts.len() > 1 {
            flags.with(HostAlloc::PORTABLE)
        } else {
            flags
        };
        let mut memory = PinnedBuffer::with_flags(&self.contexts[0], len, flags)
            .map_err(|e| self.info.within(site, e))?;
        let device = memory.device_ptr().map(|ptr| ptr.as_raw());
        self.host[usize::from(buffer)] = Some(HostBuffer {
            host: memory.host_parts_mut().0 as u64,
            device,
            page_locked: true,
        });
        Ok(memory)
    }

    /// Allocates pageable host buffer `buffer`, zeroed.
    pub fn pageable<T: Element>(&mut self, buffer: u16) -> Result<Vec<T>> {
        let (site, len) = declared::<T>(self.info, &mut self.sizes, buffer)?;
        if self.info.buffers[usize::from(buffer)].kind != BufferKind::Pageable {
            return Err(self.info.error(site, Fault::Unsupported(NOT_AS_DECLARED)));
        }
        let mut memory = Vec::new();
        // Allocation failure is an error, not an abort.
        if memory.try_reserve_exact(len).is_err() {
            let fault = Fault::SizeOverflow {
                len,
                element_size: size_of::<T>(),
            };
            return Err(self.info.error(site, fault));
        }
        memory.resize(len, T::zeroed());
        self.host[usize::from(buffer)] = Some(HostBuffer {
            host: memory.host_parts_mut().0 as u64,
            device: None,
            page_locked: memory.is_page_locked(),
        });
        Ok(memory)
    }

    super::given::given_methods!(values, dimensions);
}

// What `new` checks before it makes anything, which `check` checks too
// (`check.rs`): one implementation, so that both say the same.

/// The sizes of `info` with the size inputs `new` is given (the plan's
/// `usize` parameters and constants, in `info`'s order); an error where
/// they are above a bound the plan states.
pub(crate) fn sizes_at_new(info: &'static PlanInfo, given: &[usize]) -> Result<Sizes> {
    let mut sizes = Sizes::new(info, given);
    // The bounds `new` can compute, before any size is read.
    sizes
        .check_bounds(true)
        .map_err(|(site, fault)| info.error(site, fault))?;
    Ok(sizes)
}

/// `gpus gpu[g]`: `g`, once it is checked to be as many GPUs as `given`.
pub(crate) fn check_gpu_count(info: &PlanInfo, sizes: &mut Sizes, given: usize) -> Result<()> {
    let Some(gpus) = info.gpus else {
        return Err(info.error(info.site, MALFORMED));
    };
    let declared = sizes
        .get(gpus.count)
        .map_err(|fault| info.error(gpus.site, fault))?;
    // A count of 0 first: matching contexts would not make it run.
    // Steps name their GPU with a `u16`, so a plan has at most 65535.
    let fault = match declared {
        0 => Fault::NoGpus { given },
        _ if declared != given => Fault::GpuCount { declared, given },
        _ if given > usize::from(u16::MAX) => Fault::Unsupported(TOO_MANY_GPUS),
        _ => return Ok(()),
    };
    Err(info.error(gpus.site, fault))
}

/// `ranks world`: where `rank` says the plan stands in its job, once it is
/// checked to be one of the job's ranks; the declaration's site.
pub(crate) fn check_rank(info: &PlanInfo, rank: &Rank) -> Result<Site> {
    let Some(site) = info.ranks else {
        return Err(info.error(info.site, MALFORMED));
    };
    if rank.rank >= rank.count {
        let fault = Fault::Element {
            index: rank.rank,
            count: rank.count,
        };
        return Err(info.error(site, fault));
    }
    Ok(site)
}

/// The site and length of host buffer `buffer`, declared with elements
/// `T`, once its bytes are checked to fit the address space.
pub(crate) fn declared<T: Element>(
    info: &PlanInfo,
    sizes: &mut Sizes,
    buffer: u16,
) -> Result<(Site, usize)> {
    let Some(declaration) = info.buffers.get(usize::from(buffer)) else {
        return Err(info.error(info.site, Fault::Unsupported(NOT_AS_DECLARED)));
    };
    let site = declaration.site;
    let elem = info.elem(buffer).map_err(|fault| info.error(site, fault))?;
    if !elem.is::<T>() {
        return Err(info.error(site, Fault::Unsupported(NOT_AS_DECLARED)));
    }
    let len = sizes
        .get(declaration.len)
        .map_err(|fault| info.error(site, fault))?;
    byte_len::<T>(len).map_err(|fault| info.error(site, fault))?;
    Ok((site, len))
}

/// Generated code asked for a buffer as something it was not declared as:
/// a bug of memplan's, reported rather than trusted.
pub(crate) const NOT_AS_DECLARED: &str = "memplan's generated code and the plan's description disagree (a bug in memplan; please report it)";

/// More contexts than steps can number: refused at `gpus gpu[g]`.
const TOO_MANY_GPUS: &str = "a plan runs on at most 65535 GPUs (contexts)";
