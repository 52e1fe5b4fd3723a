//! The hardware this process runs on, as MPI_Get_hw_resource_info (MPI 4.1 section 11.4.2)
//! reports it: the resource types the machine has, named by hwloc's URIs as MPICH names them
//! ("hwloc://Machine", "hwloc://Package", "hwloc://NUMANode", "hwloc://Core", "hwloc://PU"), each
//! with the number of such resources. Read from Linux's sysfs; types that cannot be counted
//! there are left out.
use std::collections::BTreeSet;
use std::fs;

/// The CPUs the calling thread may run on (sched_getaffinity), in order; empty if unknown.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Distinct values of the sysfs topology file `file` over the CPUs this machine has online.
fn distinct(cpus: &[usize], file: &str) -> Option<usize> {
    let mut seen = BTreeSet::new();
    for c in cpus {
        let v = fs::read_to_string(format!("/sys/devices/system/cpu/cpu{c}/topology/{file}")).ok()?;
        seen.insert(v.trim().to_string());
    }
    (!seen.is_empty()).then_some(seen.len())
}

/// Parses a Linux CPU list ("0-3,8,10-11").
fn parse_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// (resource type, count) of every hardware resource type found, outermost first.
pub fn resource_types() -> Vec<(String, usize)> {
    let cpus = fs::read_to_string("/sys/devices/system/cpu/online").map(|s| parse_list(&s)).unwrap_or_default();
    let pus = if cpus.is_empty() { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cpus.len() };
    let mut out = vec![("hwloc://Machine".to_string(), 1)];
    if let Some(n) = distinct(&cpus, "physical_package_id") {
        out.push(("hwloc://Package".into(), n));
    }
    let numa = fs::read_to_string("/sys/devices/system/node/online").map(|s| parse_list(&s).len()).unwrap_or(0);
    if numa > 0 {
        out.push(("hwloc://NUMANode".into(), numa));
    }
    // A core is a (package, core id) pair: core ids repeat across packages.
    let cores = cpus
        .iter()
        .map(|c| {
            let f = |n: &str| fs::read_to_string(format!("/sys/devices/system/cpu/cpu{c}/topology/{n}")).ok().map(|s| s.trim().to_string());
            (f("physical_package_id"), f("core_id"))
        })
        .filter(|(p, c)| p.is_some() && c.is_some())
        .collect::<BTreeSet<_>>()
        .len();
    if cores > 0 {
        out.push(("hwloc://Core".into(), cores));
    }
    out.push(("hwloc://PU".into(), pus));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn cpu_lists_and_this_machine() {
        assert_eq!(parse_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list(""), Vec::<usize>::new());
        let r = resource_types();
        assert_eq!(r[0], ("hwloc://Machine".to_string(), 1));
        assert_eq!(r.last().unwrap().0, "hwloc://PU");
        assert!(r.iter().all(|(_, n)| *n >= 1));
    }
}
