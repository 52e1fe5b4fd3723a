//! Which node each rank of the job runs on. `mpiexec --nodes K` gives every rank the map in
//! `OXMPI_NODE_MAP` (node ids, comma-separated, by world rank); under a foreign launcher it comes
//! from PMI (`Pmi::nodes`, kept by `set_from_launcher`). Each node has its own segment, indexed by world rank (the slots of
//! other nodes' ranks stay unused); peers on other nodes are reached through UCX
//! (`transport::nodes`).
/// The environment variable with the node of every world rank.
pub const ENV: &str = "OXMPI_NODE_MAP";

/// Splits `n` ranks into `k` nodes in blocks of consecutive ranks (the first `n % k` nodes get
/// one more), as MPICH's hydra places ranks on hosts.
pub fn blocks(n: usize, k: usize) -> Vec<usize> {
    let k = k.clamp(1, n.max(1));
    let (per, extra) = (n / k, n % k);
    (0..k).flat_map(|node| std::iter::repeat_n(node, per + usize::from(node < extra))).collect()
}

/// The map as `OXMPI_NODE_MAP` carries it.
pub fn format(node_of: &[usize]) -> String {
    node_of.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",")
}

/// Parses `OXMPI_NODE_MAP`'s value for a job of `size` ranks; `Err` is one line for MPI_Init.
pub fn parse(value: &str, size: usize) -> Result<Vec<usize>, String> {
    let map: Option<Vec<usize>> = value.split(',').map(|x| x.trim().parse().ok()).collect();
    match map {
        Some(m) if m.len() == size => Ok(m),
        _ => Err(format!("{ENV}={value} is not the node of each of the {size} ranks (comma-separated numbers); it is set by oxmpi's mpiexec --nodes, do not set it by hand")),
    }
}

/// The map a foreign launcher gave through PMI (`PMI_process_mapping`), when its job spans
/// nodes: set once by `runtime::pmi_job`, before the engine is made, and read as `ENV` is.
static FROM_LAUNCHER: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// Keeps the node of every world rank as the foreign launcher placed them (a job over several
/// nodes); `from_env` and `job_map` return it from then on.
pub fn set_from_launcher(node_of: Vec<usize>) {
    let _ = FROM_LAUNCHER.set(node_of);
}

/// The map `mpiexec --nodes` (or a foreign launcher, `set_from_launcher`) gave this job of `size`
/// ranks, if any and if it spans nodes.
pub fn from_env(size: usize) -> Result<Option<Vec<usize>>, String> {
    if let Some(m) = FROM_LAUNCHER.get() {
        return Ok((m.len() == size && count(m) > 1).then(|| m.clone()));
    }
    match std::env::var(ENV) {
        Ok(v) => parse(&v, size).map(|m| (count(&m) > 1).then_some(m)),
        Err(_) => Ok(None),
    }
}

/// The node of every world rank of this process's job, if it spans nodes (`OXMPI_NODE_MAP`
/// names more than one): read once, for the checks on hot paths (`coll::select::threads_mode`,
/// the choice of node-aware collectives).
pub fn job_map() -> Option<&'static [usize]> {
    static MAP: std::sync::OnceLock<Option<Vec<usize>>> = std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        if let Some(m) = FROM_LAUNCHER.get() {
            return (count(m) > 1).then(|| m.clone());
        }
        let m: Vec<usize> = std::env::var(ENV).ok()?.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
        (count(&m) > 1).then_some(m)
    })
    .as_deref()
}

/// Whether this process belongs to a job that spans nodes (see `job_map`).
pub fn job_spans_nodes() -> bool {
    job_map().is_some()
}

/// In threads mode over nodes (`mpiexec --nodes K --mode threads`) each node is one host
/// process: this variable tells it which world ranks it runs and each one's PMI descriptor, as
/// `FIRST:FD,FD,...` (ranks FIRST, FIRST+1, ... in order). Set by mpiexec, not by hand.
pub const HOST_ENV: &str = "OXMPI_NODE_HOST";

/// `HOST_ENV`'s value for the ranks from `first` on, whose PMI descriptors are `fds`.
pub fn format_host(first: usize, fds: &[i32]) -> String {
    format!("{first}:{}", fds.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(","))
}

/// Parses `HOST_ENV`'s value for a job of `size` ranks: the first rank and the descriptors.
pub fn parse_host(value: &str, size: usize) -> Result<(usize, Vec<i32>), String> {
    let bad = || format!("{HOST_ENV}={value} is not FIRST:FD,FD,... for ranks of a job of {size}; it is set by oxmpi's mpiexec --nodes, do not set it by hand");
    let (first, fds) = value.split_once(':').ok_or_else(bad)?;
    let first: usize = first.trim().parse().map_err(|_| bad())?;
    let fds: Vec<i32> = fds.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>().ok_or_else(bad)?;
    if fds.is_empty() || first + fds.len() > size {
        return Err(bad());
    }
    Ok((first, fds))
}

/// This node host's ranks and PMI descriptors (`HOST_ENV`), if it is one.
pub fn host_from_env(size: usize) -> Result<Option<(usize, Vec<i32>)>, String> {
    match std::env::var(HOST_ENV) {
        Ok(v) => parse_host(&v, size).map(Some),
        Err(_) => Ok(None),
    }
}

/// The map in `PMI_process_mapping`'s notation (`runtime::pmi::mapping`): one block per run
/// of consecutive ranks on one node.
pub fn process_mapping(node_of: &[usize]) -> String {
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    for &n in node_of {
        match blocks.last_mut() {
            Some((node, len)) if *node == n => *len += 1,
            _ => blocks.push((n, 1)),
        }
    }
    let inner: Vec<String> = blocks.iter().map(|(node, len)| format!("({node},1,{len})")).collect();
    format!("(vector,{})", inner.join(","))
}

/// Number of distinct nodes.
pub fn count(node_of: &[usize]) -> usize {
    let mut d = node_of.to_vec();
    d.sort_unstable();
    d.dedup();
    d.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::pmi::mapping;

    #[test]
    fn blocks_split_like_hydra() {
        assert_eq!(blocks(4, 2), vec![0, 0, 1, 1]);
        assert_eq!(blocks(5, 2), vec![0, 0, 0, 1, 1]);
        assert_eq!(blocks(2, 3), vec![0, 1]);
        assert_eq!(blocks(3, 1), vec![0, 0, 0]);
    }

    #[test]
    fn maps_round_trip() {
        for m in [vec![0, 0, 1, 1], vec![0, 0, 0, 1, 1], vec![0, 1, 0, 1]] {
            assert_eq!(parse(&format(&m), m.len()).unwrap(), m);
            assert_eq!(mapping::nodes_of(&process_mapping(&m), m.len()).unwrap(), m);
        }
        assert!(parse("0,1", 3).is_err() && parse("0,x,1", 3).is_err());
        assert_eq!(parse_host(&format_host(2, &[7, 9]), 4).unwrap(), (2, vec![7, 9]));
        assert!(parse_host("3:7,9", 4).is_err() && parse_host("1", 4).is_err() && parse_host("0:x", 4).is_err() && parse_host("0:", 4).is_err());
        assert_eq!(count(&[0, 0, 1, 1]), 2);
    }
}
