//! `--bind-to core|none` and `--report-bindings`: which CPUs each rank of a host may run on.
//!
//! `core` gives the host's k-th rank the k-th core of the CPUs mpiexec (or the node agent) may
//! use itself (its affinity mask), a core being the CPUs of one (package, core id) pair in sysfs
//! (its hardware threads). More ranks than cores is refused: two ranks would share a core and
//! slow each other down unseen (MPICH's hydra binds them round-robin without a word; Open MPI
//! refuses too). Processes mode binds each rank process before it runs (`apply`, between fork
//! and exec); threads mode hands the list to the host (`oxmpi::runtime::env::BIND`), which binds
//! each rank thread. The default, `none`, leaves the ranks where the kernel puts them.
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// How ranks are bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bind {
    #[default]
    None,
    Core,
}

impl Bind {
    pub fn parse(what: &str, v: &str) -> Result<Bind, String> {
        match v {
            "none" => Ok(Bind::None),
            "core" | "cores" => Ok(Bind::Core),
            _ => Err(format!("{what} is core or none, not '{v}'")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Bind::None => "none",
            Bind::Core => "core",
        }
    }
}


/// `cpus` grouped into cores by `core_of` (None: a CPU sysfs does not describe is a core of its
/// own), cores in the order of their first CPU.
fn group(cpus: &[usize], core_of: impl Fn(usize) -> Option<(String, String)>) -> Vec<Vec<usize>> {
    let mut cores: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    let mut alone = Vec::new();
    for &c in cpus {
        match core_of(c) {
            Some(k) => cores.entry(k).or_default().push(c),
            None => alone.push(vec![c]),
        }
    }
    let mut all: Vec<Vec<usize>> = cores.into_values().chain(alone).collect();
    all.sort();
    all
}

/// The cores of the CPUs this process may use.
fn cores() -> Vec<Vec<usize>> {
    let topo = |c: usize, f: &str| std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{c}/topology/{f}")).ok().map(|s| s.trim().to_string());
    group(&oxmpi::runtime::hw::allowed_cpus(), |c| Some((topo(c, "physical_package_id")?, topo(c, "core_id")?)))
}

/// The CPUs of each of the `n` ranks of this host (None each for `Bind::None`); Err: one line.
pub fn plan(b: Bind, n: usize, host: &str) -> Result<Vec<Option<Vec<usize>>>, String> {
    match b {
        Bind::None => Ok(vec![None; n]),
        Bind::Core => assign(cores(), n, host),
    }
}

fn assign(cores: Vec<Vec<usize>>, n: usize, host: &str) -> Result<Vec<Option<Vec<usize>>>, String> {
    if n > cores.len() {
        return Err(format!(
            "--bind-to core: {n} ranks on {host} but mpiexec may use only {} core{} there, so ranks would share a core; run at most {} ranks per host or use --bind-to none",
            cores.len(),
            if cores.len() == 1 { "" } else { "s" },
            cores.len()
        ));
    }
    Ok(cores.into_iter().take(n).map(Some).collect())
}

/// A CPU list as Linux writes it ("0-3,8").
pub fn list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j == i { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// `--report-bindings`' line for rank `rank` on `host`.
pub fn report(rank: usize, host: &str, cpus: Option<&[usize]>) {
    match cpus {
        Some(c) => eprintln!("oxmpi: rank {rank} on {host} bound to CPU {}", list(c)),
        None => eprintln!("oxmpi: rank {rank} on {host} not bound (CPU {})", list(&oxmpi::runtime::hw::allowed_cpus())),
    }
}

/// Binds the process `cmd` starts to `cpus` before it runs.
pub fn apply(cmd: &mut Command, cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data, filled here before the fork.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: c < CPU_SETSIZE (it came from sched_getaffinity).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the hook only calls sched_setaffinity, a system call (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
}

/// The value of `oxmpi::runtime::env::BIND` for a threads-mode host whose ranks get `plan`'s
/// CPUs, in order: one CPU list per rank, ';' between ranks; None when nothing is bound.
pub fn threads_value(plan: &[Option<Vec<usize>>]) -> Option<String> {
    plan.iter().all(Option::is_some).then(|| plan.iter().flatten().map(|c| list(c)).collect::<Vec<_>>().join(";")).filter(|_| !plan.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_and_plans() {
        // Two cores of two hardware threads each (CPUs 0,2 and 1,3), CPU 4 unknown to sysfs.
        let k = |c: usize| (c < 4).then(|| ("0".to_string(), (c % 2).to_string()));
        let cores = group(&[0, 1, 2, 3, 4], k);
        assert_eq!(cores, vec![vec![0, 2], vec![1, 3], vec![4]]);
        assert_eq!(assign(cores.clone(), 2, "h").unwrap(), vec![Some(vec![0, 2]), Some(vec![1, 3])]);
        let e = assign(cores, 4, "h").unwrap_err();
        assert!(e.starts_with("--bind-to core: 4 ranks on h but mpiexec may use only 3 cores there"), "{e}");
        assert_eq!(plan(Bind::None, 2, "h").unwrap(), vec![None, None]);
        assert_eq!(list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(threads_value(&[Some(vec![0, 2]), Some(vec![1])]).as_deref(), Some("0,2;1"));
        assert_eq!(threads_value(&[None, None]), None);
        assert_eq!(Bind::parse("--bind-to", "socket").unwrap_err(), "--bind-to is core or none, not 'socket'");
    }
}
