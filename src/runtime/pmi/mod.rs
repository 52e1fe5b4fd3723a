//! Talking to a foreign launcher's process manager (PMI): how a rank started by MPICH's
//! `mpiexec.mpich` (hydra) or Slurm's `srun --mpi=pmi2` learns its rank and the job's size, and
//! exchanges the few values the ranks need to form one oxmpi job (`runtime::pmi_job`).
//!
//! Each protocol is one implementation of `Pmi` (`pmi1`: PMI-1, the default over `PMI_FD` or
//! `PMI_PORT`; `pmi2`: PMI-2, chosen with `OXMPI_PMI=2`; `pmix`: PMIx, through the PMIx library
//! loaded at run time, for Open MPI's `mpirun` and `srun --mpi=pmix`). `foreign` recognises the
//! launchers none of them speaks, so that MPI_Init can refuse instead of running N singletons.
pub mod foreign;
pub mod mapping;
pub mod pmi1;
pub mod pmi2;
pub mod pmix;
pub mod pmix_sys;
pub mod wire1;

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::OnceLock;

/// A connection to the launcher's PMI server, as the job formation and abort use it.
pub trait Pmi: Send + Sync {
    /// "PMI-1", for messages.
    fn protocol(&self) -> &'static str;
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Which program of an MPMD launch this rank runs (MPI_APPNUM).
    fn appnum(&self) -> i32;
    /// Publishes `key` = `value` for the other ranks (visible after the next `fence`).
    fn put(&self, key: &str, value: &str) -> io::Result<()>;
    /// Commits this rank's puts and waits until every rank of the job did the same.
    fn fence(&self) -> io::Result<()>;
    /// The value rank `owner` put under `key` before the last fence, None if there is none.
    fn get(&self, owner: usize, key: &str) -> io::Result<Option<String>>;
    /// A job attribute of the launcher's (`PMI_process_mapping`), None if it gives none.
    fn job_attr(&self, key: &str) -> io::Result<Option<String>>;
    /// The node id of every rank, None if the launcher does not say. PMI-1 and PMI-2 read
    /// them from `PMI_process_mapping`.
    fn nodes(&self) -> io::Result<Option<Vec<usize>>> {
        match self.job_attr("PMI_process_mapping")? {
            Some(m) => mapping::nodes_of(&m, self.size()).map(Some),
            None => Ok(None),
        }
    }
    /// This rank's index among the ranks of its node, and how many there are; None if the
    /// launcher does not say. By default read from `nodes`.
    fn local(&self) -> io::Result<Option<(usize, usize)>> {
        let Some(nodes) = self.nodes()? else { return Ok(None) };
        let Some(&mine) = nodes.get(self.rank()) else { return Ok(None) };
        let before = nodes[..self.rank()].iter().filter(|&&n| n == mine).count();
        Ok(Some((before, nodes.iter().filter(|&&n| n == mine).count())))
    }
    /// Asks the launcher to end the whole job with exit status `code`. Does not wait: the caller
    /// exits right after. Safe to call while another thread waits in a request.
    fn abort(&self, code: i32, message: &str);
    /// After `abort`: waits until the launcher has read it, at most until `until`, so that a
    /// launcher that orders failures by when it learns of them sees the abort before its
    /// consequences (peers of other nodes that lose this rank's process). Default: at once.
    fn abort_read(&self, until: std::time::Instant) {
        let _ = until;
    }
    /// Tells the launcher this rank left MPI cleanly (it then does not count the rank's exit as
    /// a failure).
    fn finalize(&self) -> io::Result<()>;
}

/// The PMI connection of this process, once MPI_Init made one.
static CLIENT: OnceLock<Box<dyn Pmi>> = OnceLock::new();

/// Threads mode over several nodes: each rank thread's own connection (its process is a node's
/// host), by slot, kept for the rank's aborts once its wire-up is done.
static RANK_CLIENTS: crate::runtime::threads::rank_table::RankTable<Box<dyn Pmi>> = crate::runtime::threads::rank_table::RankTable::new();

/// Keeps `p` as threads-mode rank `rank`'s own connection; returns it.
pub fn install_for_rank(rank: usize, p: Box<dyn Pmi>) -> &'static dyn Pmi {
    RANK_CLIENTS.set(rank, p);
    &**RANK_CLIENTS.get(rank).expect("just set")
}

/// The connection through which the calling rank reaches its launcher: the process's, else (a
/// threads-mode rank of a node's host) the rank thread's own.
pub fn client_of_caller() -> Option<&'static dyn Pmi> {
    client().or_else(|| usize::try_from(crate::runtime::job::context()).ok().and_then(|r| RANK_CLIENTS.get(r)).map(|b| &**b))
}

/// The connection MPI_Init made, if the job was started by a foreign launcher.
pub fn client() -> Option<&'static dyn Pmi> {
    CLIENT.get().map(|b| &**b)
}

/// Keeps `p` as this process's connection (once); returns it.
pub fn install(p: Box<dyn Pmi>) -> &'static dyn Pmi {
    let _ = CLIENT.set(p);
    client().expect("just installed")
}

/// An answer from the launcher that breaks the protocol.
fn proto_err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Connects to the launcher's PMI server named in the environment (`PMI_FD`, or `PMI_PORT` and
/// `PMI_ID`; else a PMIx server, `PMIX_NAMESPACE` and `PMIX_RANK`). Ok(None) when the environment
/// names none; Err with a one-line reason when it names one that does not work.
pub fn connect_from_env() -> Result<Option<Box<dyn Pmi>>, String> {
    let fd_var = std::env::var("PMI_FD").ok();
    let port_var = std::env::var("PMI_PORT").ok();
    if fd_var.is_none() && port_var.is_none() {
        let env = |k: &str| std::env::var(k).ok();
        if !pmix::launched_by_pmix(&env) {
            return Ok(None);
        }
        return pmix::Pmix::start(&env).map(|p| Some(Box::new(p) as Box<dyn Pmi>));
    }
    let fail = |what: String| format!("cannot use the launcher's PMI server ({what}); start the program with oxmpi's mpiexec, or check the launcher");
    let (fd, port_id) = if let Some(v) = fd_var {
        let raw: i32 = v.trim().parse().map_err(|_| fail(format!("PMI_FD={v} is not a descriptor number")))?;
        // SAFETY: F_GETFD on a number only inspects the descriptor table.
        if raw < 0 || unsafe { libc::fcntl(raw, libc::F_GETFD) } < 0 {
            return Err(fail(format!("PMI_FD={v} is not an open descriptor")));
        }
        // The launcher's socket is this process's alone: a program the rank starts must not keep
        // it open (the launcher would not see the rank end).
        // SAFETY: setting FD_CLOEXEC on a descriptor checked open above.
        unsafe { libc::fcntl(raw, libc::F_SETFD, libc::FD_CLOEXEC) };
        // SAFETY: the launcher gave this descriptor to the rank for PMI; nothing else uses it.
        (unsafe { OwnedFd::from_raw_fd(raw) }, None)
    } else {
        let port = port_var.unwrap_or_default();
        let id = std::env::var("PMI_ID").map_err(|_| fail(format!("PMI_PORT={port} is set but PMI_ID is not")))?;
        let s = std::net::TcpStream::connect(port.trim()).map_err(|e| fail(format!("cannot connect to PMI_PORT={port}: {e}")))?;
        (OwnedFd::from(s), Some(id))
    };
    let version = std::env::var("OXMPI_PMI").unwrap_or_default();
    let rank_size = match (env_usize("PMI_RANK"), env_usize("PMI_SIZE")) {
        (Some(r), Some(s)) => Some((r, s)),
        _ => None,
    };
    if port_id.is_none() && rank_size.is_none() {
        return Err(fail("PMI_FD is set but PMI_RANK or PMI_SIZE is not".to_string()));
    }
    match version.trim() {
        "" | "1" => {
            let p = pmi1::Pmi1::start(fd, port_id.as_deref(), rank_size).map_err(|e| fail(e.to_string()))?;
            Ok(Some(Box::new(p)))
        }
        "2" => {
            let Some((rank, _)) = rank_size.filter(|_| port_id.is_none()) else {
                return Err(fail("OXMPI_PMI=2 needs PMI_FD and PMI_RANK (PMI-2 is not spoken over PMI_PORT)".to_string()));
            };
            let jobid = std::env::var("PMI_JOBID").ok();
            let p = pmi2::Pmi2::start(fd, rank, jobid.as_deref()).map_err(|e| fail(e.to_string()))?;
            Ok(Some(Box::new(p)))
        }
        v => Err(fail(format!("OXMPI_PMI={v}: use 1 (PMI-1, the default) or 2 (PMI-2)"))),
    }
}

/// Ends the job through the launcher: waits (at most half a second) until the launcher has read
/// what this rank wrote to stdout and stderr, whose last line says why, then sends the abort.
/// hydra kills the job when it reads the abort, and drops output still in the pipes then.
pub fn abort_job(p: &dyn Pmi, code: i32, message: &str) {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(500);
    for fd in [1, 2] {
        loop {
            let mut unread: libc::c_int = 0;
            // SAFETY: FIONREAD stores an int into the local; on a descriptor that is no pipe or
            // socket it fails, and the loop ends.
            let ok = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) } == 0;
            if !ok || unread <= 0 || std::time::Instant::now() >= end {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    p.abort(code, message);
    p.abort_read(std::time::Instant::now() + std::time::Duration::from_millis(500));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launcher that only answers PMI_process_mapping.
    struct Mapped(usize, usize, &'static str);

    impl Pmi for Mapped {
        fn protocol(&self) -> &'static str {
            "test"
        }
        fn rank(&self) -> usize {
            self.0
        }
        fn size(&self) -> usize {
            self.1
        }
        fn appnum(&self) -> i32 {
            0
        }
        fn put(&self, _: &str, _: &str) -> io::Result<()> {
            Ok(())
        }
        fn fence(&self) -> io::Result<()> {
            Ok(())
        }
        fn get(&self, _: usize, _: &str) -> io::Result<Option<String>> {
            Ok(None)
        }
        fn job_attr(&self, key: &str) -> io::Result<Option<String>> {
            Ok((key == "PMI_process_mapping" && !self.2.is_empty()).then(|| self.2.to_string()))
        }
        fn abort(&self, _: i32, _: &str) {}
        fn finalize(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn local_rank_and_size_from_the_mapping() {
        assert_eq!(Mapped(2, 4, "(vector,(0,1,4))").local().unwrap(), Some((2, 4)));
        // Round robin over two nodes: ranks 1 and 3 on node 1.
        assert_eq!(Mapped(3, 4, "(vector,(0,2,1))").local().unwrap(), Some((1, 2)));
        assert_eq!(Mapped(2, 3, "(vector,(0,1,2),(1,1,1))").local().unwrap(), Some((0, 1)));
        assert_eq!(Mapped(0, 2, "").local().unwrap(), None);
        assert!(Mapped(0, 2, "(list)").local().is_err());
    }
}
