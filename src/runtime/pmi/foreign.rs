//! Launchers oxmpi cannot talk to, recognised by what they put in the environment. A program
//! they start with several ranks would otherwise become that many singletons, each doing the
//! whole job alone; MPI_Init refuses instead, naming the launcher and what to do. PMIx
//! launchers (Open MPI's mpirun, srun --mpi=pmix) are recognised before, by `pmix`.

/// Reads a variable of the environment.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn count(env: Lookup, name: &str) -> Option<usize> {
    env(name).and_then(|v| v.trim().parse().ok())
}

/// The one-line reason MPI_Init must fail, if the environment shows a job of more than one rank
/// (or of an unknown number) started by a launcher oxmpi cannot talk to. Called only when no
/// oxmpi `mpiexec` and no PMI server of ours are in sight.
pub fn unsupported(env: Lookup) -> Option<String> {
    const FIX: &str = "start it with oxmpi's mpiexec, MPICH's mpiexec.mpich (hydra) or Open MPI's mpirun";
    // Open MPI's mpirun without a PMIx server in sight (PMIx launchers are handled before).
    if let Some(v) = env("OMPI_COMM_WORLD_SIZE") {
        if count(env, "OMPI_COMM_WORLD_SIZE") != Some(1) {
            return Some(format!("this program was started by Open MPI's launcher (OMPI_COMM_WORLD_SIZE={v}) without a PMIx server (PMIX_NAMESPACE, PMIX_RANK unset), which oxmpi needs to form the job; {FIX}"));
        }
        return None;
    }
    // Slurm: a step started by srun has SLURM_STEP_ID; without PMI_FD or PMIx its --mpi plugin
    // was none.
    if env("SLURM_STEP_ID").is_some() && env("SLURM_PROCID").is_some() {
        let n = count(env, "SLURM_STEP_NUM_TASKS").or_else(|| count(env, "SLURM_NTASKS"));
        if n != Some(1) {
            let shown = n.map_or("?".to_string(), |n| n.to_string());
            return Some(format!("this program was started by Slurm's srun with no PMI (--mpi=none, {shown} tasks), which oxmpi cannot talk to; run it with srun --mpi=pmi2 or --mpi=pmix, or {FIX}"));
        }
        return None;
    }
    // A PMI launcher that gave neither a descriptor nor an address (an old MPD, a broken wrapper).
    if let Some(v) = env("PMI_SIZE") {
        if count(env, "PMI_SIZE") != Some(1) {
            return Some(format!("PMI_SIZE={v} is set but neither PMI_FD nor PMI_PORT: the launcher gave no way to reach its PMI server; {FIX}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(vars: &[(&str, &str)]) -> Option<String> {
        let f = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        unsupported(&f)
    }

    #[test]
    fn names_the_launcher() {
        let m = check(&[("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_RANK", "2")]).unwrap();
        assert!(m.contains("Open MPI's launcher") && m.contains("without a PMIx server") && m.contains("oxmpi's mpiexec"), "{m}");
        let m = check(&[("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "1"), ("SLURM_STEP_NUM_TASKS", "2")]).unwrap();
        assert!(m.contains("srun --mpi=pmi2 or --mpi=pmix") && m.contains("--mpi=none, 2 tasks"), "{m}");
        let m = check(&[("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "3")]).unwrap();
        assert!(m.contains("3 tasks"), "{m}");
        assert!(check(&[("PMI_SIZE", "2"), ("PMI_RANK", "1")]).unwrap().contains("neither PMI_FD nor PMI_PORT"));
    }

    #[test]
    fn single_rank_jobs_and_no_launcher_are_singletons() {
        assert_eq!(check(&[]), None);
        assert_eq!(check(&[("OMPI_COMM_WORLD_SIZE", "1")]), None);
        assert_eq!(check(&[("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "0"), ("SLURM_STEP_NUM_TASKS", "1")]), None);
        // A batch script's environment (no step): a program run there directly is a singleton.
        assert_eq!(check(&[("SLURM_JOB_ID", "7"), ("SLURM_NTASKS", "8")]), None);
        assert_eq!(check(&[("PMI_SIZE", "1"), ("PMI_RANK", "0")]), None);
    }
}
