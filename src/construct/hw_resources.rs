//! The hardware resources that hold the calling thread's CPU set, for MPI_Comm_split_type's
//! hardware-guided and unguided splits (MPI 4.1 section 7.4.2).
//!
//! A rank belongs to a resource (a package, a core, a hardware thread) only when every CPU it may
//! run on lies inside that resource, as with hwloc in MPICH: an unbound rank lies in the whole node
//! and in its package on a one-package machine, but in no single core. The CPU set is the calling
//! thread's (`sched_getaffinity(0)`), so in threads mode each rank reports its own binding.
use std::fs;

/// Resource levels below the node, from the largest to the smallest, with the names users give
/// as `mpi_hw_resource_type` (hwloc's object names, as MPICH accepts them).
pub const LEVELS: [&str; 3] = ["package", "core", "pu"];

/// The name of the node level: every rank of an oxmpi job shares this node's memory.
pub const SHARED_MEMORY: &str = "mpi_shared_memory";


fn topology_value(cpu: usize, file: &str) -> Option<i64> {
    fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{file}")).ok()?.trim().parse().ok()
}

/// The id of the resource at `level` (an index into LEVELS) holding CPU `cpu`.
fn resource_of(cpu: usize, level: usize) -> Option<i64> {
    let package = topology_value(cpu, "physical_package_id").unwrap_or(0);
    match level {
        0 => Some(package),
        // core_id is unique within a package only.
        1 => Some(package * (1 << 20) + topology_value(cpu, "core_id")?),
        _ => Some(cpu as i64),
    }
}

/// For each level of LEVELS, the id of the one resource holding all of this thread's CPUs, or
/// None when they span several resources of that level (or the machine does not tell).
pub fn my_resources() -> [Option<i64>; 3] {
    let cpus = crate::runtime::hw::allowed_cpus();
    let mut out = [None; 3];
    for (level, slot) in out.iter_mut().enumerate() {
        let ids: Option<Vec<i64>> = cpus.iter().map(|&c| resource_of(c, level)).collect();
        *slot = match ids.as_deref() {
            Some([first, rest @ ..]) if rest.iter().all(|x| x == first) => Some(*first),
            _ => None,
        };
    }
    out
}

/// The level index of a resource name given as `mpi_hw_resource_type`; None for names this
/// machine model does not know (the split then gives MPI_COMM_NULL).
pub fn level_named(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase();
    let canonical = match lower.as_str() {
        "socket" => "package",
        "hwthread" | "pu" => "pu",
        other => other,
    };
    LEVELS.iter().position(|&l| l == canonical)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn levels_are_nested() {
        let r = my_resources();
        // A rank inside one core is inside one package; inside one PU, inside one core.
        if r[2].is_some() {
            assert!(r[1].is_some());
        }
        if r[1].is_some() {
            assert!(r[0].is_some());
        }
        assert_eq!(level_named("Socket"), Some(0));
        assert_eq!(level_named("core"), Some(1));
        assert_eq!(level_named("@dont-thread-on-me@"), None);
    }
}
