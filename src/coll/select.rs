//! Which algorithm runs a collective: forced by the user, or chosen from the message size, the
//! rank count and the rank mode (`auto`).
//!
//! Every collective has a table of named algorithms (in its family's file). The environment
//! variable `OXMPI_<COLLECTIVE>_ALGORITHM` (for example `OXMPI_BCAST_ALGORITHM=binomial`) forces
//! one; `auto` or unset lets the collective decide. The variable is read once per process; an
//! unknown name makes the collective fail with ErrorClass::Arg naming the valid ones, so a typo is
//! never silently ignored. `force` overrides the environment at run time (for MPI_T control
//! variables).
use crate::error::{err, MpiResult, ErrorClass};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// A collective whose algorithm can be chosen, named as in its environment variable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Collective {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    ReduceScatter,
    Scan,
}

impl Collective {
    pub const ALL: [Collective; 10] = [
        Collective::Barrier,
        Collective::Bcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Gather,
        Collective::Scatter,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::ReduceScatter,
        Collective::Scan,
    ];

    /// The upper-case name in `OXMPI_<NAME>_ALGORITHM`.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "BARRIER",
            Collective::Bcast => "BCAST",
            Collective::Reduce => "REDUCE",
            Collective::Allreduce => "ALLREDUCE",
            Collective::Gather => "GATHER",
            Collective::Scatter => "SCATTER",
            Collective::Allgather => "ALLGATHER",
            Collective::Alltoall => "ALLTOALL",
            Collective::ReduceScatter => "REDUCE_SCATTER",
            Collective::Scan => "SCAN",
        }
    }

    pub fn env_var(self) -> String {
        format!("OXMPI_{}_ALGORITHM", self.name())
    }
}

/// Run-time overrides (MPI_T control variables); they win over the environment.
fn overrides() -> &'static Mutex<HashMap<Collective, String>> {
    static O: OnceLock<Mutex<HashMap<Collective, String>>> = OnceLock::new();
    O.get_or_init(Default::default)
}

/// The environment's choices, read once.
fn from_env() -> &'static HashMap<Collective, String> {
    static E: OnceLock<HashMap<Collective, String>> = OnceLock::new();
    E.get_or_init(|| Collective::ALL.iter().filter_map(|&c| std::env::var(c.env_var()).ok().map(|v| (c, v.trim().to_ascii_lowercase()))).collect())
}

/// Whether `force` was ever called: until then `forced` skips the overrides' lock, which every
/// rank of a threads-mode job would otherwise take on every collective.
static ANY_OVERRIDE: AtomicBool = AtomicBool::new(false);

/// Forces algorithm `name` for `coll` ("auto" restores the automatic choice).
pub fn force(coll: Collective, name: &str) {
    overrides().lock().unwrap_or_else(|p| p.into_inner()).insert(coll, name.to_ascii_lowercase());
    ANY_OVERRIDE.store(true, Ordering::Release);
}

/// The forced choice for `coll`, if any: the index of the algorithm in `names` (the collective's
/// table), None for `auto`, ErrorClass::Arg for a name not in the table.
pub fn forced(coll: Collective, names: &[&str]) -> MpiResult<Option<usize>> {
    let o = if ANY_OVERRIDE.load(Ordering::Acquire) { overrides().lock().unwrap_or_else(|p| p.into_inner()).get(&coll).cloned() } else { None };
    let Some(name) = o.or_else(|| from_env().get(&coll).cloned()) else { return Ok(None) };
    if name.is_empty() || name == "auto" {
        return Ok(None);
    }
    match names.iter().position(|n| *n == name) {
        Some(i) => Ok(Some(i)),
        None => Err(err(
            ErrorClass::Arg,
            format!("{}={name} names no algorithm of this collective; choose one of: auto, {}", coll.env_var(), names.join(", ")),
        )),
    }
}

/// Whether the ranks of this job are threads of one process (shared-memory algorithms read peers'
/// buffers directly there). Not in threads mode over several nodes: a node's host holds only
/// its own ranks.
pub fn threads_mode() -> bool {
    crate::runtime::job::threads_job().is_some() && !crate::runtime::node_map::job_spans_nodes()
}

/// Whether `n` ranks outnumber the CPUs this process may use (each rank is then often
/// descheduled). The CPU count is read once: asking the kernel (and cgroups) costs microseconds,
/// too much per collective call.
pub fn oversubscribed(n: usize) -> bool {
    static CPUS: OnceLock<usize> = OnceLock::new();
    n > *CPUS.get_or_init(crate::runtime::wait::available_cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn forcing_and_unknown_names() {
        let names = ["binomial", "linear"];
        force(Collective::Scan, "LINEAR");
        assert_eq!(forced(Collective::Scan, &names).unwrap(), Some(1));
        force(Collective::Scan, "auto");
        assert_eq!(forced(Collective::Scan, &names).unwrap(), None);
        force(Collective::Scan, "ring");
        let e = forced(Collective::Scan, &names).unwrap_err();
        assert_eq!(e.class, ErrorClass::Arg);
        assert!(e.msg.contains("OXMPI_SCAN_ALGORITHM=ring") && e.msg.contains("binomial, linear"), "{}", e.msg);
        force(Collective::Scan, "auto");
    }
}
