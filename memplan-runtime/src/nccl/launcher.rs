//! The launchers that start the processes of a job, one per GPU, and the
//! environment variables through which each tells a process its rank.

use std::fmt;

/// A program that starts the processes of a job and tells each, in its
/// environment, which rank it is. [`Job::from_env`](super::Job::from_env)
/// looks for them in the order of [`Launcher::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Launcher {
    /// Slurm's `srun`: `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`.
    ///
    /// A batch script's own environment has `SLURM_PROCID` too (0, as the
    /// script is one task): start the ranks from it with `srun`.
    Slurm,
    /// Open MPI's `mpirun` (or `mpiexec`): `OMPI_COMM_WORLD_RANK`,
    /// `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK`.
    OpenMpi,
    /// MPICH's `mpiexec` (Hydra, which Intel MPI's is too) and other
    /// launchers that speak PMI: `PMI_RANK`, `PMI_SIZE`, and the local rank
    /// from `MPI_LOCALRANKID` (Hydra sets it for every process, in
    /// `src/pm/hydra/proxy/pmip_cb.c`) or else `PMI_LOCAL_RANK` (which
    /// other PMI launchers set). PMI itself has no local rank: where
    /// neither is set the local rank is unknown (the rank is not it on a
    /// job of several hosts), and [`Job::device`](super::Job::device) says
    /// so unless `CUDA_VISIBLE_DEVICES` gives the process one GPU. Hydra
    /// started with `-pmi-port` sets `PMI_ID` and no `PMI_RANK`, and is
    /// not recognised.
    Mpich,
    /// PyTorch's `torchrun` (`torchrun --no-python ./program`): `RANK`,
    /// `WORLD_SIZE`, `LOCAL_RANK`.
    Torchrun,
    /// memplan's own: a program that starts itself once per GPU of one
    /// host (as `examples/data_parallel_ranks.rs` does), with
    /// `MEMPLAN_RANK`, `MEMPLAN_RANKS` and, optionally,
    /// `MEMPLAN_LOCAL_RANK` (the rank where it is unset: one host).
    Memplan,
}

/// The environment variables a [`Launcher`] sets in each process it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variables {
    /// This process's rank, from 0. A launcher counts as found where this
    /// one is set (to anything but an empty text).
    pub rank: &'static str,
    /// How many ranks the job has.
    pub count: &'static str,
    /// Where the rank among the job's processes on this host is read from,
    /// the first that is set.
    pub local_rank: &'static [&'static str],
}

impl Launcher {
    /// Every launcher, in the order [`Job::from_env`](super::Job::from_env)
    /// looks for them and reports the first of several that agree: `srun`
    /// first, since it also sets `PMI_RANK` and `PMI_SIZE` for an MPI
    /// program it starts (`--mpi=pmi2`), and memplan's own last.
    pub const ALL: [Launcher; 5] = [
        Launcher::Slurm,
        Launcher::OpenMpi,
        Launcher::Mpich,
        Launcher::Torchrun,
        Launcher::Memplan,
    ];

    /// The variables this launcher sets.
    pub fn variables(self) -> Variables {
        match self {
            Launcher::Slurm => Variables {
                rank: "SLURM_PROCID",
                count: "SLURM_NTASKS",
                local_rank: &["SLURM_LOCALID"],
            },
            Launcher::OpenMpi => Variables {
                rank: "OMPI_COMM_WORLD_RANK",
                count: "OMPI_COMM_WORLD_SIZE",
                local_rank: &["OMPI_COMM_WORLD_LOCAL_RANK"],
            },
            Launcher::Mpich => Variables {
                rank: "PMI_RANK",
                count: "PMI_SIZE",
                local_rank: &["MPI_LOCALRANKID", "PMI_LOCAL_RANK"],
            },
            Launcher::Torchrun => Variables {
                rank: "RANK",
                count: "WORLD_SIZE",
                local_rank: &["LOCAL_RANK"],
            },
            Launcher::Memplan => Variables {
                rank: "MEMPLAN_RANK",
                count: "MEMPLAN_RANKS",
                local_rank: &["MEMPLAN_LOCAL_RANK"],
            },
        }
    }

    /// The variables, as a list for an error message: `PMI_RANK, PMI_SIZE,
    /// MPI_LOCALRANKID, PMI_LOCAL_RANK`.
    pub(crate) fn variable_list(self) -> String {
        let vars = self.variables();
        let mut names = vec![vars.rank, vars.count];
        names.extend(vars.local_rank);
        names.join(", ")
    }
}

/// The command that starts the job, as a user would type it: `srun`,
/// `mpirun (Open MPI)`, `mpiexec (MPICH or PMI)`, `torchrun`, `memplan's
/// launcher`.
impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launcher::Slurm => "srun",
            Launcher::OpenMpi => "mpirun (Open MPI)",
            Launcher::Mpich => "mpiexec (MPICH or PMI)",
            Launcher::Torchrun => "torchrun",
            Launcher::Memplan => "memplan's launcher",
        })
    }
}
