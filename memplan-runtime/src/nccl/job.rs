//! Where this process stands in a job, read from the environment its
//! launcher gave it: rank, rank count, local rank, and so its GPU.

use super::launcher::Launcher;
use crate::error::{Fault, Location, Result, ResultExt};

/// This process's place in a job of one process per GPU, as the launcher
/// that started it ([`Launcher`]) says in its environment.
///
/// Made by [`Job::from_env`] (or, from any source of variables, by
/// [`Job::from_vars`]); [`Job::device`] is the GPU to open, and
/// [`Job::nccl_rank`] what a plan that declares `ranks` takes in `new`
/// (see [`Job::meeting`] for how the ranks find each other).
///
/// ```no_run
/// use memplan_runtime::Context;
/// use memplan_runtime::nccl::Job;
/// # fn main() -> memplan_runtime::Result<()> {
/// let job = Job::from_env()?;
/// // SAFETY: the first thing `main` does: no other thread runs yet.
/// unsafe { job.set_nccl_comm_id()? };
/// println!("rank {} of {}, started by {}", job.rank, job.count, job.launcher);
/// let ctx = Context::new(job.device()?)?;
/// let rank = job.nccl_rank()?;
/// // let mut step = Step::new(&ctx, &rank, ...)?;
/// # let _ = (ctx, rank);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The launcher whose variables were read: the first in
    /// [`Launcher::ALL`] of those found, which all agree.
    pub launcher: Launcher,
    /// This process's rank, below `count`.
    pub rank: usize,
    /// How many ranks (processes) the job has.
    pub count: usize,
    /// This process's rank among the job's processes on this host, which
    /// picks its GPU; `None` where the launcher does not say (PMI without
    /// `MPI_LOCALRANKID` or `PMI_LOCAL_RANK`).
    pub local_rank: Option<usize>,
    /// The variable the local rank was read from (`None`: memplan's
    /// launcher's rank, or unknown).
    local_rank_variable: Option<&'static str>,
    /// What else the job's environment says, for [`Job::device`] and
    /// [`Job::meeting`].
    pub(super) environment: Environment,
}

/// The variables besides the launcher's that say how a rank finds its GPU
/// and the other ranks, as read when the [`Job`] was made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Environment {
    pub cuda_visible_devices: Option<String>,
    pub memplan_nccl_id: Option<String>,
    pub nccl_comm_id: Option<String>,
    pub master_addr: Option<String>,
    pub master_port: Option<String>,
}

/// One launcher's values, as found.
struct Found {
    launcher: Launcher,
    rank: usize,
    count: usize,
    local_rank: Option<(usize, Option<&'static str>)>,
}

impl Job {
    /// The job this process is a rank of, from the variables of the
    /// launcher that started it ([`Launcher`]): its rank, the rank count,
    /// its local rank.
    ///
    /// Launchers are looked for in the order of [`Launcher::ALL`]. Where
    /// several are found they must agree (`srun` sets `PMI_RANK` too for
    /// the MPI programs it starts), and the first is reported. Where they
    /// disagree (a launcher started inside another's task inherits the
    /// outer one's variables: `torchrun` under `srun`, `mpirun` in a batch
    /// script) it is an error, since either could be wrong: read the one
    /// that started the process with [`Job::from_env_of`].
    ///
    /// Errors, each naming the variables and their values: no launcher
    /// found (listing every variable looked for), launchers that disagree,
    /// a value that is not a number, a rank count of 0, a rank or local
    /// rank not below the count. An empty variable counts as unset.
    #[track_caller]
    pub fn from_env() -> Result<Job> {
        let at = Location::caller();
        read(&Launcher::ALL, &environment).at("Job::from_env", at)
    }

    /// The job as [`Job::from_env`] reads it, from the variables `var`
    /// gives (`None`: unset): a test, or a program that keeps its
    /// environment elsewhere, passes its own.
    ///
    /// ```
    /// use memplan_runtime::nccl::{Job, Launcher};
    /// let vars = [("SLURM_PROCID", "5"), ("SLURM_NTASKS", "8"), ("SLURM_LOCALID", "1")];
    /// let var = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
    /// let job = Job::from_vars(var)?;
    /// assert_eq!((job.launcher, job.rank, job.count, job.local_rank), (Launcher::Slurm, 5, 8, Some(1)));
    /// assert_eq!(job.device()?, 1);
    /// # Ok::<(), memplan_runtime::Error>(())
    /// ```
    #[track_caller]
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Job> {
        let at = Location::caller();
        read(&Launcher::ALL, &var).at("Job::from_vars", at)
    }

    /// The job as `launcher`'s variables say, whatever other launchers'
    /// say: for a process started by one launcher inside another's task
    /// (`srun torchrun ...` passes `SLURM_PROCID` to every process torchrun
    /// starts), where [`Job::from_env`] refuses the two.
    #[track_caller]
    pub fn from_env_of(launcher: Launcher) -> Result<Job> {
        let at = Location::caller();
        read(&[launcher], &environment).at("Job::from_env_of", at)
    }

    /// [`Job::from_env_of`], from the variables `var` gives.
    #[track_caller]
    pub fn from_vars_of(launcher: Launcher, var: impl Fn(&str) -> Option<String>) -> Result<Job> {
        let at = Location::caller();
        read(&[launcher], &var).at("Job::from_vars_of", at)
    }

    /// The ordinal of this process's GPU, for [`Context::new`](crate::Context::new):
    /// the launcher gives each process of a host its local rank, and
    /// `CUDA_VISIBLE_DEVICES` the GPUs CUDA shows it, numbered from 0.
    ///
    /// - unset: the local rank (every GPU of the host is shown);
    /// - one GPU listed (`srun --gpus-per-task=1` does this): 0, whatever
    ///   the local rank, since that GPU is this process's;
    /// - several listed: the local rank, which must be below their number
    ///   (the entries are counted, not read: they may be UUIDs);
    /// - empty: an error, as CUDA shows no GPU.
    ///
    /// An error too where the local rank is needed and the launcher did
    /// not give one.
    #[track_caller]
    pub fn device(&self) -> Result<usize> {
        let at = Location::caller();
        self.ordinal().at("Job::device", at)
    }

    fn ordinal(&self) -> Result<usize, Fault> {
        let Some(list) = &self.environment.cuda_visible_devices else {
            return self.known_local_rank();
        };
        if list.trim().is_empty() {
            return Err(Fault::Launcher(
                "CUDA_VISIBLE_DEVICES is set and empty, so CUDA shows this process no GPU; \
                 help: unset it, or list the GPUs this process may use"
                    .to_owned(),
            ));
        }
        let visible = list.split(',').count();
        if visible == 1 {
            return Ok(0);
        }
        let local_rank = self.known_local_rank()?;
        if local_rank < visible {
            return Ok(local_rank);
        }
        Err(Fault::Launcher(format!(
            "this process's local rank is {local_rank} ({}), and CUDA_VISIBLE_DEVICES={list} \
             shows it {visible} GPUs: the local rank picks one of them, so it must be below \
             {visible}; help: start at most {visible} ranks on this host, or list a GPU for \
             each",
            self.local_rank_variable.unwrap_or("its rank")
        )))
    }

    fn known_local_rank(&self) -> Result<usize, Fault> {
        self.local_rank.ok_or_else(|| {
            let vars = self.launcher.variables();
            Fault::Launcher(format!(
                "{} gave this process no local rank ({} unset), so which GPU of its host is \
                 its own is unknown (its rank, {}, is not its local rank on a job of several \
                 hosts); help: \
                 give each process its GPU with CUDA_VISIBLE_DEVICES, or start the job with a \
                 launcher that sets one of {}",
                self.launcher,
                vars.local_rank.join(" and "),
                self.rank,
                vars.local_rank.join(", "),
            ))
        })
    }
}

/// The environment variable `name`, `None` where it is unset or not
/// Unicode.
fn environment(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The job that the first of `launchers` found says, checked against the
/// others found.
fn read(launchers: &[Launcher], raw: &dyn Fn(&str) -> Option<String>) -> Result<Job, Fault> {
    // An empty variable is one left unset (`RANK= ./program`), except where
    // the program that reads it tells the two apart: CUDA shows no GPU for
    // an empty CUDA_VISIBLE_DEVICES, NCCL refuses an empty NCCL_COMM_ID.
    let var = |name: &str| raw(name).filter(|value| !value.is_empty());
    let mut found = Vec::new();
    for &launcher in launchers {
        if let Some(values) = read_launcher(launcher, &var)? {
            found.push(values);
        }
    }
    let Some(first) = found.first() else {
        return Err(Fault::NoLauncher(no_launcher(launchers)));
    };
    if let Some(other) = found.iter().find(|other| disagree(first, other)) {
        return Err(Fault::Launcher(disagreement(first, other, &var)));
    }
    let local = found.iter().find_map(|f| f.local_rank);
    Ok(Job {
        launcher: first.launcher,
        rank: first.rank,
        count: first.count,
        local_rank: local.map(|(local, _)| local),
        local_rank_variable: local.and_then(|(_, variable)| variable),
        environment: Environment {
            cuda_visible_devices: raw("CUDA_VISIBLE_DEVICES"),
            memplan_nccl_id: var("MEMPLAN_NCCL_ID"),
            nccl_comm_id: raw("NCCL_COMM_ID"),
            master_addr: var("MASTER_ADDR"),
            master_port: var("MASTER_PORT"),
        },
    })
}

/// `launcher`'s values, `None` where its rank variable is unset.
fn read_launcher(
    launcher: Launcher,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Found>, Fault> {
    let vars = launcher.variables();
    let Some(rank) = var(vars.rank) else {
        return Ok(None);
    };
    let rank = number(vars.rank, &rank)?;
    let Some(count) = var(vars.count) else {
        return Err(Fault::Launcher(format!(
            "{} is set ({rank}) and {} is not: {launcher} sets both, and a rank needs the \
             rank count",
            vars.rank, vars.count
        )));
    };
    let count = number(vars.count, &count)?;
    if count == 0 {
        return Err(Fault::Launcher(format!(
            "{} is 0: a job has at least one rank",
            vars.count
        )));
    }
    let below_count = |name: &str, value: usize, what: &str| {
        if value < count {
            Ok(())
        } else {
            Err(Fault::Launcher(format!(
                "{name} is {value}, and {} is {count}: {what} is below the rank count, \
                 counting from 0",
                vars.count
            )))
        }
    };
    below_count(vars.rank, rank, "a rank")?;
    let mut local_rank = None;
    for &name in vars.local_rank {
        if let Some(value) = var(name) {
            let value = number(name, &value)?;
            below_count(name, value, "a local rank")?;
            local_rank = Some((value, Some(name)));
            break;
        }
    }
    // memplan's launcher starts every rank on its own host.
    if local_rank.is_none() && launcher == Launcher::Memplan {
        local_rank = Some((rank, None));
    }
    Ok(Some(Found {
        launcher,
        rank,
        count,
        local_rank,
    }))
}

/// `value`, the value of `name`, as a number.
fn number(name: &str, value: &str) -> Result<usize, Fault> {
    value.trim().parse().map_err(|_| {
        Fault::Launcher(format!(
            "{name} is `{value}`, which is not a whole number of 0 or more"
        ))
    })
}

/// Whether two launchers give this process different places in the job:
/// another rank or count, or another local rank where both give one.
fn disagree(a: &Found, b: &Found) -> bool {
    let local = |f: &Found| f.local_rank.map(|(local, _)| local);
    (a.rank, a.count) != (b.rank, b.count)
        || matches!((local(a), local(b)), (Some(x), Some(y)) if x != y)
}

fn disagreement(a: &Found, b: &Found, var: &dyn Fn(&str) -> Option<String>) -> String {
    let values = |f: &Found| {
        let vars = f.launcher.variables();
        let mut names = vec![vars.rank, vars.count];
        names.extend(vars.local_rank);
        let set: Vec<String> = names
            .into_iter()
            .filter_map(|name| var(name).map(|value| format!("{name}={value}")))
            .collect();
        format!("{} ({})", f.launcher, set.join(", "))
    };
    format!(
        "two launchers place this process differently: {} and {}; help: a launcher started \
         inside another's task inherits the outer one's variables (torchrun under srun, mpirun \
         in a batch script): read only the one that started this process with \
         `Job::from_env_of(Launcher::{:?})` (or `Launcher::{:?}`), or remove the other's \
         variables from the environment (`env -u NAME ./program`)",
        values(a),
        values(b),
        b.launcher,
        a.launcher
    )
}

fn no_launcher(launchers: &[Launcher]) -> String {
    let looked_for: Vec<String> = launchers
        .iter()
        .map(|launcher| format!("{} ({launcher})", launcher.variable_list()))
        .collect();
    format!(
        "no launcher's rank variable is set, so this process was not started as a rank of a \
         job; looked for {}; help: start it with one of these launchers, or set MEMPLAN_RANK \
         and MEMPLAN_RANKS",
        looked_for.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The job `vars` say, as `Job::from_vars` reads it.
    fn job(vars: &[(&str, &str)]) -> Result<Job, Fault> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        Job::from_vars(|name| vars.get(name).cloned()).map_err(|error| error.fault().clone())
    }

    /// The message of the error `vars` give.
    fn error(vars: &[(&str, &str)]) -> String {
        match job(vars) {
            Ok(job) => panic!("expected an error, read {job:?}"),
            Err(fault) => fault.to_string(),
        }
    }

    fn place(job: &Job) -> (Launcher, usize, usize, Option<usize>) {
        (job.launcher, job.rank, job.count, job.local_rank)
    }

    #[test]
    fn each_launcher_is_read_from_its_own_variables() {
        let cases: [(Launcher, &[(&str, &str)]); 6] = [
            (
                Launcher::Slurm,
                &[
                    ("SLURM_PROCID", "5"),
                    ("SLURM_NTASKS", "8"),
                    ("SLURM_LOCALID", "1"),
                ],
            ),
            (
                Launcher::OpenMpi,
                &[
                    ("OMPI_COMM_WORLD_RANK", "5"),
                    ("OMPI_COMM_WORLD_SIZE", "8"),
                    ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                ],
            ),
            (
                Launcher::Mpich,
                &[
                    ("PMI_RANK", "5"),
                    ("PMI_SIZE", "8"),
                    ("MPI_LOCALRANKID", "1"),
                ],
            ),
            (
                Launcher::Mpich,
                &[
                    ("PMI_RANK", "5"),
                    ("PMI_SIZE", "8"),
                    ("PMI_LOCAL_RANK", "1"),
                ],
            ),
            (
                Launcher::Torchrun,
                &[("RANK", "5"), ("WORLD_SIZE", "8"), ("LOCAL_RANK", "1")],
            ),
            (
                Launcher::Memplan,
                &[
                    ("MEMPLAN_RANK", "5"),
                    ("MEMPLAN_RANKS", "8"),
                    ("MEMPLAN_LOCAL_RANK", "1"),
                ],
            ),
        ];
        for (launcher, vars) in cases {
            let job = job(vars).unwrap();
            assert_eq!(place(&job), (launcher, 5, 8, Some(1)), "{vars:?}");
        }
    }

    #[test]
    fn memplan_launcher_without_a_local_rank_is_on_one_host() {
        let job = job(&[("MEMPLAN_RANK", "3"), ("MEMPLAN_RANKS", "4")]).unwrap();
        assert_eq!(place(&job), (Launcher::Memplan, 3, 4, Some(3)));
        assert_eq!(job.device().unwrap(), 3);
    }

    #[test]
    fn mpich_reads_mpi_localrankid_before_pmi_local_rank() {
        let job = job(&[
            ("PMI_RANK", "5"),
            ("PMI_SIZE", "8"),
            ("MPI_LOCALRANKID", "1"),
            ("PMI_LOCAL_RANK", "2"),
        ])
        .unwrap();
        assert_eq!(job.local_rank, Some(1));
    }

    #[test]
    fn pmi_without_a_local_rank_cannot_pick_among_several_gpus() {
        let job = job(&[("PMI_RANK", "5"), ("PMI_SIZE", "8")]).unwrap();
        assert_eq!(place(&job), (Launcher::Mpich, 5, 8, None));
        let message = job.device().unwrap_err().to_string();
        for needed in [
            "MPI_LOCALRANKID",
            "PMI_LOCAL_RANK",
            "CUDA_VISIBLE_DEVICES",
            "rank, 5,",
        ] {
            assert!(message.contains(needed), "{needed} in {message}");
        }
        let job = Job {
            environment: Environment {
                cuda_visible_devices: Some("0,1".to_owned()),
                ..Environment::default()
            },
            ..job
        };
        assert!(job.device().is_err());
    }

    #[test]
    fn pmi_without_a_local_rank_takes_the_one_gpu_it_is_shown() {
        let job = job(&[
            ("PMI_RANK", "5"),
            ("PMI_SIZE", "8"),
            ("CUDA_VISIBLE_DEVICES", "3"),
        ])
        .unwrap();
        assert_eq!(job.device().unwrap(), 0);
    }

    #[test]
    fn no_launcher_lists_every_variable_looked_for() {
        let fault = job(&[("SLURM_NTASKS", "4"), ("HOME", "/root")]).unwrap_err();
        let Fault::NoLauncher(message) = &fault else {
            panic!("expected NoLauncher, got {fault:?}");
        };
        for launcher in Launcher::ALL {
            let vars = launcher.variables();
            assert!(message.contains(vars.rank), "{} in {message}", vars.rank);
            assert!(message.contains(vars.count), "{} in {message}", vars.count);
            for local in vars.local_rank {
                assert!(message.contains(local), "{local} in {message}");
            }
            assert!(
                message.contains(&launcher.to_string()),
                "{launcher} in {message}"
            );
        }
    }

    #[test]
    fn empty_variables_count_as_unset() {
        let fault = job(&[("RANK", ""), ("WORLD_SIZE", "")]).unwrap_err();
        assert!(matches!(fault, Fault::NoLauncher(_)), "{fault:?}");
    }

    #[test]
    fn launchers_that_disagree_are_refused_naming_both() {
        let message = error(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("SLURM_LOCALID", "0"),
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "3"),
        ]);
        for needed in [
            "srun",
            "SLURM_PROCID=0",
            "SLURM_NTASKS=1",
            "mpirun (Open MPI)",
            "OMPI_COMM_WORLD_RANK=3",
            "OMPI_COMM_WORLD_SIZE=4",
            "Job::from_env_of(Launcher::OpenMpi)",
        ] {
            assert!(message.contains(needed), "{needed} in {message}");
        }
    }

    #[test]
    fn launchers_that_disagree_only_on_the_local_rank_are_refused() {
        let message = error(&[
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("LOCAL_RANK", "1"),
            ("MEMPLAN_RANK", "1"),
            ("MEMPLAN_RANKS", "2"),
            ("MEMPLAN_LOCAL_RANK", "0"),
        ]);
        assert!(message.contains("LOCAL_RANK=1"), "{message}");
        assert!(message.contains("MEMPLAN_LOCAL_RANK=0"), "{message}");
    }

    #[test]
    fn launchers_that_agree_report_the_first_in_order() {
        // `srun --mpi=pmi2` sets PMI's variables with no local rank.
        let job = job(&[
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "4"),
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_LOCALID", "0"),
        ])
        .unwrap();
        assert_eq!(place(&job), (Launcher::Slurm, 2, 4, Some(0)));
    }

    #[test]
    fn the_local_rank_comes_from_the_first_launcher_that_gives_one() {
        let job = job(&[
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "4"),
            ("RANK", "2"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "1"),
        ])
        .unwrap();
        assert_eq!(place(&job), (Launcher::Mpich, 2, 4, Some(1)));
        assert_eq!(job.device().unwrap(), 1);
    }

    #[test]
    fn from_vars_of_reads_one_launcher_only() {
        let vars: HashMap<&str, &str> = [
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "3"),
        ]
        .into();
        let var = |name: &str| vars.get(name).map(|value| value.to_string());
        let job = Job::from_vars_of(Launcher::Torchrun, var).unwrap();
        assert_eq!(place(&job), (Launcher::Torchrun, 3, 8, Some(3)));
        let fault = Job::from_vars_of(Launcher::OpenMpi, var).unwrap_err();
        let message = fault.to_string();
        assert!(matches!(fault.fault(), Fault::NoLauncher(_)), "{message}");
        assert!(message.contains("OMPI_COMM_WORLD_RANK"), "{message}");
        assert!(!message.contains("SLURM_PROCID"), "{message}");
    }

    #[test]
    fn values_that_are_not_numbers_are_named_with_their_value() {
        let cases: [(&[(&str, &str)], &str); 4] = [
            (
                &[("SLURM_PROCID", "one"), ("SLURM_NTASKS", "2")],
                "SLURM_PROCID is `one`",
            ),
            (
                &[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "-2")],
                "SLURM_NTASKS is `-2`",
            ),
            (
                &[("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "1.0")],
                "LOCAL_RANK is `1.0`",
            ),
            (
                // A bad value fails even where another launcher is fine.
                &[
                    ("RANK", "1"),
                    ("WORLD_SIZE", "2"),
                    ("PMI_RANK", "x1"),
                    ("PMI_SIZE", "2"),
                ],
                "PMI_RANK is `x1`",
            ),
        ];
        for (vars, expected) in cases {
            let message = error(vars);
            assert!(message.contains(expected), "{expected} in {message}");
        }
    }

    #[test]
    fn a_rank_count_of_zero_is_refused() {
        let message = error(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "0")]);
        assert!(message.contains("OMPI_COMM_WORLD_SIZE is 0"), "{message}");
    }

    #[test]
    fn a_rank_or_local_rank_not_below_the_count_is_refused() {
        let message = error(&[("RANK", "4"), ("WORLD_SIZE", "4")]);
        assert!(
            message.contains("RANK is 4, and WORLD_SIZE is 4"),
            "{message}"
        );
        let message = error(&[("RANK", "1"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "7")]);
        assert!(
            message.contains("LOCAL_RANK is 7, and WORLD_SIZE is 4"),
            "{message}"
        );
    }

    #[test]
    fn a_rank_without_its_count_is_refused() {
        let message = error(&[("MEMPLAN_RANK", "1")]);
        assert!(
            message.contains("MEMPLAN_RANK is set (1) and MEMPLAN_RANKS is not"),
            "{message}"
        );
    }

    /// The GPU a torchrun rank of local rank `local` opens, given
    /// `CUDA_VISIBLE_DEVICES`.
    fn device(local: &str, visible: Option<&str>) -> Result<usize, String> {
        let mut vars = vec![("RANK", "1"), ("WORLD_SIZE", "16"), ("LOCAL_RANK", local)];
        vars.extend(visible.map(|list| ("CUDA_VISIBLE_DEVICES", list)));
        job(&vars)
            .unwrap()
            .device()
            .map_err(|error| error.to_string())
    }

    #[test]
    fn without_cuda_visible_devices_the_local_rank_is_the_ordinal() {
        assert_eq!(device("0", None), Ok(0));
        assert_eq!(device("3", None), Ok(3));
    }

    #[test]
    fn one_visible_gpu_is_ordinal_zero_whatever_the_local_rank() {
        assert_eq!(device("3", Some("5")), Ok(0));
        assert_eq!(
            device("0", Some("GPU-8e6d1c2a-0d4c-4a1b-9f00-1234567890ab")),
            Ok(0)
        );
    }

    #[test]
    fn several_visible_gpus_are_indexed_by_the_local_rank() {
        assert_eq!(device("0", Some("4,5,6,7")), Ok(0));
        assert_eq!(device("3", Some("4,5,6,7")), Ok(3));
        let message = device("4", Some("4,5,6,7")).unwrap_err();
        for needed in [
            "local rank is 4 (LOCAL_RANK)",
            "CUDA_VISIBLE_DEVICES=4,5,6,7",
            "4 GPUs",
        ] {
            assert!(message.contains(needed), "{needed} in {message}");
        }
    }

    #[test]
    fn an_empty_cuda_visible_devices_shows_no_gpu() {
        // Unlike the launchers' variables, where empty is unset.
        for list in ["", " "] {
            let message = device("0", Some(list)).unwrap_err();
            assert!(
                message.contains("CUDA_VISIBLE_DEVICES is set and empty"),
                "{message}"
            );
        }
    }
}
