//! A plan checked against device models, on a machine with no GPU: what a
//! plan type's `check` does. It runs the checks of `new` that need no GPU,
//! through the same code as `new` and so with the same errors: the bounds
//! of the sizes, the GPU count and rank, host buffers' byte counts, the
//! layout (counts, set sizes, the GPU of each declaration, buffers' byte
//! counts) and every op resolved against it (ranges inside their buffers,
//! copies of equal lengths, set indexes, extents and the values they
//! name, launch dimensions against the model's limits, collectives'
//! lengths and ranks). It allocates nothing and loads nothing, so what
//! needs a GPU is `new`'s alone: memory, a kernel's own limits (its
//! registers, its static shared memory), its compiled parameters, peer
//! access, NCCL. Ops that read what each run gives are checked by each
//! run, as they are after `new`.

use super::builder::{
    HostBuffer, NOT_AS_DECLARED, check_gpu_count, check_rank, declared, sizes_at_new,
};
use super::fingerprint::{Agreement, first_difference};
use super::given::Givens;
use super::info::{BufferKind, PlanInfo};
use super::layout::Layout;
use super::resolve::Against;
use super::sizes::Sizes;
use super::steps::{Inputs, Steps};
use crate::device_model::DeviceModel;
use crate::error::{Fault, Result};
use crate::memory::Element;
use crate::nccl::Rank;

/// A plan being checked against device models, as [`Builder`](super::Builder)
/// builds one: the generated `check` hands it what the generated `new`
/// hands the builder, and [`finish`](Self::finish) checks it.
pub struct Checker {
    info: &'static PlanInfo,
    /// The model of each GPU, by number: one, unless the plan declares `gpus`.
    devices: Vec<DeviceModel>,
    sizes: Sizes,
    /// The host buffers, as the models lay them out: nowhere, mapped where
    /// they are declared mapped.
    host: Vec<Option<HostBuffer>>,
    given: Givens,
    /// `ranks world`: the job's (ranks, this rank).
    job: Option<(usize, usize)>,
    addresses: Addresses,
}

/// Addresses for what a check lays out: distinct and apart, as the memory
/// `new` allocates is, so that ops that compare addresses resolve as they
/// would at `new`. Nothing is ever at them: a check queues nothing.
struct Addresses {
    next: u64,
}

impl Addresses {
    /// The address of `bytes` more, 256-byte aligned as `cuMemAlloc`'s.
    fn take(&mut self, bytes: usize) -> u64 {
        let at = self.next;
        let taken = u64::try_from(bytes).unwrap_or(u64::MAX).saturating_add(256);
        self.next = at.saturating_add(taken.next_multiple_of(256));
        at
    }
}

impl Checker {
    /// Starts checking a plan of `info` with the size inputs `sizes` on a
    /// GPU of `model`; an error where they are above a bound the plan
    /// states, as [`Builder::new`](super::Builder::new) gives.
    pub fn new(model: &DeviceModel, info: &'static PlanInfo, sizes: &[usize]) -> Result<Checker> {
        Checker::on_models(vec![model.clone()], info, sizes)
    }

    /// [`new`](Self::new), on GPUs of `models`, for a plan that declares
    /// `gpus gpu[g]`: as many as `g`.
    pub fn on_gpus(
        models: &[DeviceModel],
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Checker> {
        let mut checker = Checker::on_models(models.to_vec(), info, sizes)?;
        check_gpu_count(info, &mut checker.sizes, models.len())?;
        Ok(checker)
    }

    /// [`new`](Self::new), for a plan that declares `ranks`, as rank
    /// `rank` of the job it names.
    pub fn joining(
        model: &DeviceModel,
        rank: &Rank,
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Checker> {
        let mut checker = Checker::new(model, info, sizes)?;
        check_rank(info, rank)?;
        checker.job = Some((rank.count, rank.rank));
        Ok(checker)
    }

    fn on_models(
        devices: Vec<DeviceModel>,
        info: &'static PlanInfo,
        sizes: &[usize],
    ) -> Result<Checker> {
        Ok(Checker {
            info,
            devices,
            sizes: sizes_at_new(info, sizes)?,
            host: info.buffers.iter().map(|_| None).collect(),
            given: Givens::default(),
            job: None,
            addresses: Addresses { next: 1 << 32 },
        })
    }

    /// Host buffer `buffer`, declared with elements `T`: its byte count
    /// checked as `new` checks it before allocating it.
    pub fn host<T: Element>(&mut self, buffer: u16) -> Result<()> {
        let (site, len) = declared::<T>(self.info, &mut self.sizes, buffer)?;
        let pinned = match self.info.buffers[usize::from(buffer)].kind {
            BufferKind::Pinned(flags) => Some(flags),
            BufferKind::Pageable => None,
            _ => return Err(self.info.error(site, Fault::Unsupported(NOT_AS_DECLARED))),
        };
        // `declared` checked the bytes fit.
        let host = self.addresses.take(len * size_of::<T>());
        self.host[usize::from(buffer)] = Some(HostBuffer {
            host,
            // Mapped memory is reached at an address of its own.
            device: pinned
                .filter(|flags| flags.is_mapped())
                .map(|_| self.addresses.take(len * size_of::<T>())),
            page_locked: pinned.is_some(),
        });
        Ok(())
    }

    super::given::given_methods!(values, dimensions);

    /// Lays the plan out on the models and resolves every op `new`
    /// resolves, as `new` does after making what the plan declares: the
    /// first error `new` would give that needs no GPU, if any.
    pub fn finish(self) -> Result<Checked> {
        let Checker {
            info,
            devices,
            mut sizes,
            host,
            given,
            job,
            mut addresses,
        } = self;
        let mut allocate = |_, _, bytes| Ok(addresses.take(bytes));
        let layout = Layout::new(info, devices, &mut sizes, &host, job, &mut allocate)?;
        Steps::new(Inputs {
            layout: &layout,
            against: Against::Models,
            sizes: &mut sizes,
            given: &given,
        })?;
        let rank = job.map(|(_, rank)| {
            let Agreement { plan, at_new, .. } = Agreement::at_new(info, &sizes);
            RankWords { rank, plan, at_new }
        });
        Ok(Checked { info, rank })
    }
}

/// A plan that passed its `check`: every check `new` makes that needs no
/// GPU holds for its sizes and values on the device models it was given.
///
/// For a plan that is one rank of a job (`ranks world`), it also holds
/// what `new` has the job's ranks compare once it has joined them: the
/// plan's fingerprint and the sizes its collectives depend on. Two ranks'
/// checks that disagree ([`agrees_with`](Self::agrees_with)) are ranks
/// whose `new` would fail, on every rank, with the same error.
pub struct Checked {
    info: &'static PlanInfo,
    rank: Option<RankWords>,
}

/// One rank's words, as `new` exchanges them.
#[derive(Debug, PartialEq, Eq)]
struct RankWords {
    rank: usize,
    plan: u64,
    at_new: Vec<(&'static str, u64)>,
}

impl Checked {
    /// Whether `other`, another rank's check of this plan, would agree
    /// with this one at `new`: the error `new` would give on this rank
    /// where it would not. Always `Ok` for a plan that is not one rank of
    /// a job.
    pub fn agrees_with(&self, other: &Checked) -> Result<()> {
        let (Some(mine), Some(site)) = (&self.rank, self.info.ranks) else {
            return Ok(());
        };
        let Some(theirs) = &other.rank else {
            let why = "the other check is of a plan that is not one rank of a job";
            return Err(self.info.error(site, Fault::Unsupported(why)));
        };
        let words = |words: &RankWords| -> Vec<u64> {
            let sizes = words.at_new.iter().map(|&(_, value)| value);
            std::iter::once(words.plan).chain(sizes).collect()
        };
        let names: Vec<Option<&'static str>> = std::iter::once(None)
            .chain(mine.at_new.iter().map(|&(name, _)| Some(name)))
            .collect();
        match first_difference(&words(mine), &words(theirs), &names) {
            // `first_difference` numbers the ranks it is given: one, here.
            Some(Fault::RanksDisagree {
                name, here, there, ..
            }) => {
                let fault = Fault::RanksDisagree {
                    rank: theirs.rank,
                    name,
                    here,
                    there,
                };
                Err(self.info.error(site, fault))
            }
            Some(fault) => Err(self.info.error(site, fault)),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("plan", &self.info.name())
            .field("rank", &self.rank)
            .finish()
    }
}

#[cfg(test)]
mod tests;
