//! How the ranks of a job find each other: the NCCL `UniqueId` that every
//! rank passes to `ncclCommInitRank`, and where it comes from.
//!
//! memplan runs no service of its own for this: [`Meeting`] says what
//! NCCL's source shows its bootstrap does with `NCCL_COMM_ID`.

use super::comm::{Rank, UniqueId};
use super::job::Job;
use super::launcher::Launcher;
use crate::error::{Fault, Location, Result, ResultExt};

/// Where the ranks of a [`Job`] meet to form one communicator, as
/// [`Job::meeting`] decides it: the source of the [`UniqueId`] every rank
/// passes to `ncclCommInitRank`.
///
/// NCCL's bootstrap already meets at an address given in
/// `NCCL_COMM_ID=host:port`, as its source shows (2.30.7,
/// github.com/NVIDIA/nccl at 5067397):
/// - `bootstrapGetUniqueId` (src/bootstrap.cc), which `ncclGetUniqueId`
///   (src/init.cc) calls: with `NCCL_COMM_ID` set, the id is that address
///   and the fixed `NCCL_MAGIC`, and nothing is started; without it, a
///   random magic and the address of a root that the call starts in the
///   calling process (`bootstrapCreateRoot`), which must then live until
///   every rank has joined. So with the variable set, every rank makes
///   the same id on its own.
/// - `ncclCommInitRankDev` (src/init.cc), behind `ncclCommInitRank`: with
///   `NCCL_COMM_ID` set, rank 0 starts the bootstrap root at the id's
///   address (`bootstrapCreateRoot(..., true)`) before bootstrapping, and
///   the other ranks connect to it.
/// - `bootstrapNetInit` (src/bootstrap.cc), run once per process by the
///   first NCCL call, reads `NCCL_COMM_ID` too, to listen on an interface
///   of the address's subnet; and `ncclGetEnv` (src/misc/param.cc) reads
///   the process environment (into which NCCL first loads `NCCL_CONF_FILE`,
///   `~/.nccl.conf` and `/etc/nccl.conf`, which memplan does not read). So
///   the variable must be in the environment before the process's first
///   NCCL call; there is no other way to hand it over.
///
/// An MPI program could broadcast rank 0's id over MPI instead; memplan
/// does not provide that (it would link MPI).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Meeting {
    /// An id made once (by memplan's launcher, with [`UniqueId::new`]) and
    /// handed to every rank in `MEMPLAN_NCCL_ID`, as its text.
    Given(UniqueId),
    /// `NCCL_COMM_ID` (this `host:port`) is set: [`UniqueId::new`] makes
    /// the same id on every rank, and rank 0's join listens there.
    NcclCommId(String),
    /// A job of one rank, which meets only itself: any new id will do.
    Alone,
    /// torchrun's `MASTER_ADDR`, at the port after `MASTER_PORT` (this
    /// `host:port`): torchrun's own store listens on `MASTER_PORT` itself
    /// on rank 0's host. NCCL reads the address only from `NCCL_COMM_ID`,
    /// which is unset: [`Job::set_nccl_comm_id`] sets it. Where that port
    /// is taken, set `NCCL_COMM_ID` to a free one instead, for every rank.
    TorchrunMaster(String),
}

impl Job {
    /// Where this job's ranks meet, from the variables read with the job,
    /// the first that applies:
    /// 1. `MEMPLAN_NCCL_ID`: an id made once and handed to every rank
    ///    (memplan's own launcher does this);
    /// 2. `NCCL_COMM_ID=host:port`, an address on rank 0's host: NCCL's
    ///    own bootstrap (see [`Meeting`] for what its source says);
    /// 3. a job of one rank meets only itself;
    /// 4. under torchrun, `MASTER_ADDR` at `MASTER_PORT + 1` (torchrun's
    ///    own store holds `MASTER_PORT`), which the program puts in
    ///    `NCCL_COMM_ID` with [`Job::set_nccl_comm_id`].
    ///
    /// Otherwise there is no address to meet at (`srun` and `mpirun` give
    /// none), and the error says to set `NCCL_COMM_ID`, with the
    /// launcher's command line. memplan runs no service to hand the id
    /// around, nor broadcasts it over MPI.
    ///
    /// ```
    /// use memplan_runtime::nccl::{Job, Meeting};
    /// let vars = [("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "1"),
    ///             ("MASTER_ADDR", "10.0.0.7"), ("MASTER_PORT", "29500")];
    /// let var = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
    /// let job = Job::from_vars(var)?;
    /// assert_eq!(job.meeting()?, Meeting::TorchrunMaster("10.0.0.7:29501".to_owned()));
    /// # Ok::<(), memplan_runtime::Error>(())
    /// ```
    #[track_caller]
    pub fn meeting(&self) -> Result<Meeting> {
        let at = Location::caller();
        self.decide_meeting().at("Job::meeting", at)
    }

    /// Sets `NCCL_COMM_ID` in this process's environment to the address
    /// of a [`Meeting::TorchrunMaster`], where that is the job's meeting,
    /// so that NCCL meets there; does nothing for any other meeting. An
    /// error where the job has none ([`Job::meeting`]'s).
    ///
    /// NCCL reads the address only from the environment, and writing the
    /// environment while another thread reads it is undefined behaviour
    /// (the C library's `getenv` takes no lock; the CUDA driver and NCCL
    /// start threads of their own): hence `unsafe`, as
    /// [`std::env::set_var`] is, rather than a safe call that could only
    /// hope no thread runs. A program that would rather not starts
    /// torchrun with `NCCL_COMM_ID` set in its environment, as for `srun`.
    ///
    /// # Safety
    /// No other thread may read or write the environment while this runs:
    /// call it first thing in `main`, before any thread is started and
    /// before any CUDA or NCCL call.
    #[track_caller]
    pub unsafe fn set_nccl_comm_id(&self) -> Result<()> {
        let at = Location::caller();
        if let Meeting::TorchrunMaster(address) =
            self.decide_meeting().at("Job::set_nccl_comm_id", at)?
        {
            // SAFETY: the caller promises that no other thread uses the
            // environment now.
            unsafe { std::env::set_var("NCCL_COMM_ID", address) };
        }
        Ok(())
    }

    /// The [`UniqueId`] of the job's communicator, from its
    /// [`meeting`](Job::meeting): the one handed over, or a new one
    /// ([`UniqueId::new`], which needs NCCL) where `NCCL_COMM_ID` makes it
    /// the same on every rank. For a [`Meeting::TorchrunMaster`],
    /// `NCCL_COMM_ID` must be in the environment by now
    /// ([`Job::set_nccl_comm_id`]); the error says so where it is not.
    #[track_caller]
    pub fn unique_id(&self) -> Result<UniqueId> {
        let at = Location::caller();
        match self.decide_meeting().at("Job::unique_id", at)? {
            Meeting::Given(id) => Ok(id),
            Meeting::NcclCommId(_) | Meeting::Alone => UniqueId::new(),
            Meeting::TorchrunMaster(address) => {
                if std::env::var_os("NCCL_COMM_ID").is_some() {
                    UniqueId::new()
                } else {
                    Err(Fault::Launcher(format!(
                        "NCCL_COMM_ID is not set, and under torchrun the ranks meet at \
                         {address} (MASTER_ADDR, and the port after MASTER_PORT) only through \
                         it: NCCL reads the address from the environment; help: call `unsafe \
                         {{ job.set_nccl_comm_id()? }}` first thing in `main`, or start \
                         torchrun with NCCL_COMM_ID={address} in its environment"
                    )))
                    .at("Job::unique_id", at)
                }
            }
        }
    }

    /// What a plan that declares `ranks` takes in `new`: this job's
    /// [`unique_id`](Job::unique_id), rank count and rank.
    #[track_caller]
    pub fn nccl_rank(&self) -> Result<Rank> {
        Ok(Rank {
            id: self.unique_id()?,
            count: self.count,
            rank: self.rank,
        })
    }

    fn decide_meeting(&self) -> Result<Meeting, Fault> {
        let environment = &self.environment;
        if let Some(text) = &environment.memplan_nccl_id {
            return UniqueId::from_hex(text).map(Meeting::Given).map_err(|_| {
                Fault::Launcher(format!(
                    "MEMPLAN_NCCL_ID is `{text}`, which is not a UniqueId: that is 256 \
                     hexadecimal digits, as `UniqueId`'s Display writes it"
                ))
            });
        }
        if let Some(address) = &environment.nccl_comm_id {
            return comm_id(address).map(|()| Meeting::NcclCommId(address.clone()));
        }
        if self.count == 1 {
            return Ok(Meeting::Alone);
        }
        if self.launcher == Launcher::Torchrun {
            return torchrun_master(
                environment.master_addr.as_deref(),
                environment.master_port.as_deref(),
            )
            .map(Meeting::TorchrunMaster);
        }
        Err(Fault::Launcher(nowhere_to_meet(self.launcher, self.count)))
    }
}

/// `Ok` where NCCL can read `address` as `NCCL_COMM_ID`: `host:port` or
/// `[ipv6]:port` (`ncclSocketGetAddrFromString`, src/misc/socket.cc).
fn comm_id(address: &str) -> Result<(), Fault> {
    let (host, port) = match address.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once("]:") {
            Some((host, port)) => (host, port),
            None => ("", ""),
        },
        None => address.split_once(':').unwrap_or(("", "")),
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(Fault::Launcher(format!(
            "NCCL_COMM_ID is `{address}`, and NCCL reads it as <ipv4>:<port>, [<ipv6>]:<port> \
             or <hostname>:<port>, an address on rank 0's host"
        )));
    }
    Ok(())
}

/// Where torchrun's ranks meet: `MASTER_ADDR` (rank 0's host) at the port
/// after `MASTER_PORT`, whose own is torchrun's store's.
fn torchrun_master(addr: Option<&str>, port: Option<&str>) -> Result<String, Fault> {
    let (Some(addr), Some(port)) = (addr, port) else {
        return Err(Fault::Launcher(format!(
            "torchrun sets MASTER_ADDR and MASTER_PORT, and {} unset, so the ranks have no \
             address to meet at; help: set NCCL_COMM_ID=host:port, an address on rank 0's \
             host, in every rank's environment",
            match (addr, port) {
                (None, None) => "both are",
                (None, Some(_)) => "MASTER_ADDR is",
                _ => "MASTER_PORT is",
            }
        )));
    };
    let next = port
        .trim()
        .parse::<u16>()
        .ok()
        .and_then(|port| port.checked_add(1));
    let Some(next) = next else {
        return Err(Fault::Launcher(format!(
            "MASTER_PORT is `{port}`: the ranks meet at the port after it (torchrun's store \
             holds MASTER_PORT itself), and there is no such port; help: set \
             NCCL_COMM_ID=host:port in every rank's environment"
        )));
    };
    // An IPv6 address takes brackets before its port, for NCCL as for URLs.
    Ok(if addr.contains(':') && !addr.starts_with('[') {
        format!("[{addr}]:{next}")
    } else {
        format!("{addr}:{next}")
    })
}

/// Why a job that `launcher` started has no address to meet at, and the
/// command line that gives it one.
fn nowhere_to_meet(launcher: Launcher, count: usize) -> String {
    let command = match launcher {
        Launcher::Slurm => {
            format!(
                "`NCCL_COMM_ID=$(hostname):29500 srun -n {count} ./program` in the batch script"
            )
        }
        Launcher::OpenMpi => {
            format!("`mpirun -np {count} -x NCCL_COMM_ID=$(hostname):29500 ./program`")
        }
        Launcher::Mpich => {
            format!("`mpiexec -n {count} -genv NCCL_COMM_ID $(hostname):29500 ./program`")
        }
        Launcher::Torchrun => "torchrun's MASTER_ADDR and MASTER_PORT".to_owned(),
        Launcher::Memplan => {
            "MEMPLAN_NCCL_ID=<a UniqueId's text> for every rank, as memplan's launcher does"
                .to_owned()
        }
    };
    format!(
        "the {count} ranks {launcher} started have nowhere to meet: neither MEMPLAN_NCCL_ID \
         nor NCCL_COMM_ID is set, and {launcher} gives no address (memplan runs no service of \
         its own, nor broadcasts the id over MPI); help: set NCCL_COMM_ID=host:port, an address \
         of rank 0's host and a free port, in every rank's environment, and NCCL's bootstrap \
         meets there: {command}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The meeting of the job `vars` say, or its error's message.
    fn meeting(vars: &[(&str, &str)]) -> Result<Meeting, String> {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        let job = Job::from_vars(|name| vars.get(name).map(|value| value.to_string()))
            .map_err(|error| error.to_string())?;
        job.meeting().map_err(|error| error.to_string())
    }

    const TORCHRUN: [(&str, &str); 3] = [("RANK", "1"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "1")];
    const SLURM: [(&str, &str); 3] = [
        ("SLURM_PROCID", "1"),
        ("SLURM_NTASKS", "4"),
        ("SLURM_LOCALID", "1"),
    ];
    const OPEN_MPI: [(&str, &str); 3] = [
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
    ];
    const MPICH: [(&str, &str); 3] = [
        ("PMI_RANK", "1"),
        ("PMI_SIZE", "4"),
        ("MPI_LOCALRANKID", "1"),
    ];
    const MEMPLAN: [(&str, &str); 2] = [("MEMPLAN_RANK", "1"), ("MEMPLAN_RANKS", "4")];

    /// A launcher's variables and `more`.
    fn with<'a>(
        launcher: &[(&'a str, &'a str)],
        more: &[(&'a str, &'a str)],
    ) -> Vec<(&'a str, &'a str)> {
        launcher.iter().chain(more).copied().collect()
    }

    fn id() -> UniqueId {
        UniqueId::from_bytes(std::array::from_fn(|i| i as u8))
    }

    #[test]
    fn memplan_nccl_id_is_the_given_id() {
        let text = id().to_string();
        let vars = with(&MEMPLAN, &[("MEMPLAN_NCCL_ID", &text)]);
        assert_eq!(meeting(&vars), Ok(Meeting::Given(id())));
        // Handed over, it needs no NCCL to make.
        let vars: HashMap<&str, &str> = vars.into_iter().collect();
        let job = Job::from_vars(|name| vars.get(name).map(|value| value.to_string())).unwrap();
        assert_eq!(
            job.nccl_rank(),
            Ok(Rank {
                id: id(),
                count: 4,
                rank: 1
            })
        );
    }

    #[test]
    fn memplan_nccl_id_comes_before_nccl_comm_id() {
        let text = id().to_string();
        let vars = with(
            &MEMPLAN,
            &[
                ("MEMPLAN_NCCL_ID", &text),
                ("NCCL_COMM_ID", "10.0.0.7:29500"),
            ],
        );
        assert_eq!(meeting(&vars), Ok(Meeting::Given(id())));
    }

    #[test]
    fn a_memplan_nccl_id_that_is_not_an_id_is_named() {
        let message = meeting(&with(&MEMPLAN, &[("MEMPLAN_NCCL_ID", "12ab")])).unwrap_err();
        assert!(message.contains("MEMPLAN_NCCL_ID is `12ab`"), "{message}");
    }

    #[test]
    fn nccl_comm_id_is_the_meeting_for_every_launcher() {
        for launcher in [&SLURM[..], &OPEN_MPI, &MPICH, &TORCHRUN, &MEMPLAN] {
            for address in ["10.0.0.7:29500", "node-1:29500", "[fe80::1%eth0]:29500"] {
                let vars = with(
                    launcher,
                    &[
                        ("NCCL_COMM_ID", address),
                        ("MASTER_ADDR", "other"),
                        ("MASTER_PORT", "1"),
                    ],
                );
                assert_eq!(meeting(&vars), Ok(Meeting::NcclCommId(address.to_owned())));
            }
        }
    }

    #[test]
    fn an_nccl_comm_id_nccl_cannot_read_is_refused() {
        for address in [
            "",
            "node-1",
            "node-1:",
            ":29500",
            "node-1:port",
            "[fe80::1]29500",
            "fe80::1:29500",
        ] {
            let message = meeting(&with(&SLURM, &[("NCCL_COMM_ID", address)])).unwrap_err();
            assert!(
                message.contains(&format!("NCCL_COMM_ID is `{address}`")),
                "{message}"
            );
        }
    }

    #[test]
    fn torchrun_meets_at_the_port_after_master_port() {
        let vars = with(
            &TORCHRUN,
            &[("MASTER_ADDR", "node-1"), ("MASTER_PORT", "29500")],
        );
        assert_eq!(
            meeting(&vars),
            Ok(Meeting::TorchrunMaster("node-1:29501".to_owned()))
        );
        let vars = with(
            &TORCHRUN,
            &[("MASTER_ADDR", "fd00::7"), ("MASTER_PORT", "29500")],
        );
        assert_eq!(
            meeting(&vars),
            Ok(Meeting::TorchrunMaster("[fd00::7]:29501".to_owned()))
        );
    }

    #[test]
    fn torchrun_without_its_master_is_refused() {
        let message = meeting(&TORCHRUN).unwrap_err();
        assert!(
            message.contains("MASTER_ADDR and MASTER_PORT, and both are unset"),
            "{message}"
        );
        let message = meeting(&with(&TORCHRUN, &[("MASTER_ADDR", "node-1")])).unwrap_err();
        assert!(message.contains("MASTER_PORT is unset"), "{message}");
        for port in ["65535", "http", "-1"] {
            let vars = with(
                &TORCHRUN,
                &[("MASTER_ADDR", "node-1"), ("MASTER_PORT", port)],
            );
            let message = meeting(&vars).unwrap_err();
            assert!(
                message.contains(&format!("MASTER_PORT is `{port}`")),
                "{message}"
            );
        }
    }

    #[test]
    fn torchrun_s_id_waits_for_nccl_comm_id_in_the_environment() {
        // Only where the test's own environment leaves it unset: tests
        // never write the environment.
        if std::env::var_os("NCCL_COMM_ID").is_some() {
            return;
        }
        let vars = with(
            &TORCHRUN,
            &[("MASTER_ADDR", "node-1"), ("MASTER_PORT", "29500")],
        );
        let vars: HashMap<&str, &str> = vars.into_iter().collect();
        let job = Job::from_vars(|name| vars.get(name).map(|value| value.to_string())).unwrap();
        let message = job.nccl_rank().unwrap_err().to_string();
        for needed in [
            "Job::unique_id",
            "NCCL_COMM_ID is not set",
            "node-1:29501",
            "set_nccl_comm_id",
        ] {
            assert!(message.contains(needed), "{needed} in {message}");
        }
    }

    #[test]
    fn master_addr_is_torchrun_s_only() {
        // Other launchers' jobs meet only where they are told to.
        let vars = with(
            &SLURM,
            &[("MASTER_ADDR", "node-1"), ("MASTER_PORT", "29500")],
        );
        assert!(meeting(&vars).unwrap_err().contains("nowhere to meet"));
    }

    #[test]
    fn srun_mpirun_and_mpiexec_without_an_address_say_how_to_give_one() {
        let cases = [
            (
                &SLURM[..],
                "`NCCL_COMM_ID=$(hostname):29500 srun -n 4 ./program`",
            ),
            (
                &OPEN_MPI,
                "`mpirun -np 4 -x NCCL_COMM_ID=$(hostname):29500 ./program`",
            ),
            (
                &MPICH,
                "`mpiexec -n 4 -genv NCCL_COMM_ID $(hostname):29500 ./program`",
            ),
            (&MEMPLAN, "MEMPLAN_NCCL_ID=<a UniqueId's text>"),
        ];
        for (vars, command) in cases {
            let message = meeting(vars).unwrap_err();
            for needed in [
                "nowhere to meet",
                "set NCCL_COMM_ID=host:port",
                "MPI",
                command,
            ] {
                assert!(message.contains(needed), "{needed} in {message}");
            }
        }
    }

    #[test]
    fn a_job_of_one_rank_meets_alone() {
        for vars in [
            &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")][..],
            &[("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0")],
        ] {
            assert_eq!(meeting(vars), Ok(Meeting::Alone));
        }
    }

    #[test]
    fn set_nccl_comm_id_refuses_a_job_with_nowhere_to_meet() {
        let vars: HashMap<&str, &str> = SLURM.into_iter().collect();
        let job = Job::from_vars(|name| vars.get(name).map(|value| value.to_string())).unwrap();
        // SAFETY: the job has nowhere to meet, so nothing is written.
        let message = unsafe { job.set_nccl_comm_id() }.unwrap_err().to_string();
        assert!(message.contains("Job::set_nccl_comm_id"), "{message}");
        assert!(message.contains("nowhere to meet"), "{message}");
    }
}
