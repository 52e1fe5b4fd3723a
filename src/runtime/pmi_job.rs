//! Forming one oxmpi job out of the processes a foreign launcher started (hydra, srun, Open MPI's
//! mpirun), which
//! know each other only through the launcher's PMI server (`runtime::pmi`).
//!
//! The first rank of each node (rank 0 on its node) creates the node's segment as `mpiexec`
//! would (a memfd, so nothing ever appears in /dev/shm, whatever happens to the ranks later) and
//! publishes where the others find it: `/proc/<its pid>/fd/<descriptor>`, with the memfd's inode
//! to check against and its host name. After a fence every other rank of that node opens that
//! path, which gives it its own descriptor of the same memfd, and maps the segment; a second fence
//! keeps the maker alive until all have. Opening another process's descriptor needs the ptrace
//! *read* permission over it (same user, the process dumpable), which Yama's ptrace_scope does not
//! restrict; the single-copy transfers (`transport::cma`) need more and fall back by themselves.
//! Which ranks share a node comes from the launcher's mapping only: ranks in different network
//! namespaces of one machine see the same host name and /proc, and must still be different nodes
//! (joined through UCX) when the launcher says so.
//!
//! What `mpiexec` does and a foreign launcher does instead: the launcher notices a rank that
//! dies or exits without MPI_Finalize and kills the others (hydra does, as for MPICH programs);
//! MPI_Abort and fatal errors reach it through PMI abort. What does not carry over: failure
//! survival (ULFM), which needs oxmpi's launcher to mark dead ranks, and threads mode (a foreign
//! launcher starts one process per rank).
use super::pmi::Pmi;
use super::segment::{ChannelGeometry, Segment};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

/// The KVS key under which rank 0 publishes the segment.
const SEG_KEY: &str = "oxmpi-segment";

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most len - 1 bytes into the local buffer, which stays
    // NUL-terminated.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len() - 1) } != 0 {
        return "unknown-host".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The node of every rank as the launcher placed them (all on node 0 when it does not say).
fn node_map(pmi: &dyn Pmi) -> Result<Vec<usize>, String> {
    // Every rank on this rank's node: one node, without asking where each rank is.
    if let Ok(Some((_, local_size))) = pmi.local() {
        if local_size == pmi.size() {
            return Ok(vec![0; pmi.size()]);
        }
    }
    let Some(nodes) = pmi.nodes().map_err(|e| e.to_string())? else { return Ok(vec![0; pmi.size()]) };
    if nodes.len() != pmi.size() {
        return Err(format!("{}: the launcher gave the nodes of {} ranks, but the job has {}", pmi.protocol(), nodes.len(), pmi.size()));
    }
    Ok(nodes)
}

/// Forms the job: returns the segment of this rank's node, the fresh one of the node's first rank
/// (with channels of `channel`, the transport's choice for the job's size) or the one it
/// published. A job over several nodes (the launcher's mapping says so; network namespaces share
/// the host name and /dev/shm, so the mapping decides, not the host name) has one segment per
/// node, each indexed by world rank, and the map goes to `node_map::set_from_launcher`: the
/// engine reaches the other nodes through UCX. `Err` is the one-line reason to fail MPI_Init with.
pub fn form(pmi: &dyn Pmi, channel: ChannelGeometry) -> Result<Segment, String> {
    let proto = pmi.protocol();
    if std::env::var(super::env::MODE).is_ok_and(|m| m.trim() == "threads") {
        return Err(format!(
            "OXMPI_MODE=threads, but this program was started by a foreign launcher ({proto}), which starts one process per rank: threads mode needs oxmpi's mpiexec (unset OXMPI_MODE, or use oxmpi's mpiexec --mode threads)"
        ));
    }
    let (rank, size) = (pmi.rank(), pmi.size());
    let nodes = node_map(pmi)?;
    let node = nodes[rank];
    // The node's first rank makes its segment.
    let leader = nodes.iter().position(|&n| n == node).unwrap_or(0);
    let key = if leader == 0 { SEG_KEY.to_string() } else { format!("{SEG_KEY}-{node}") };
    if super::node_map::count(&nodes) > 1 {
        super::node_map::set_from_launcher(nodes);
    }
    let host = hostname();
    let pmi_err = |what: &str, e: std::io::Error| format!("{proto} {what} failed: {e}");
    if rank == leader {
        let seg = Segment::create(size, size, 0, channel).map_err(|e| format!("cannot create the shared memory segment for {size} ranks: {e}"))?;
        // Only the ranks of this job may reach it, through /proc, not programs this rank starts.
        // SAFETY: FD_CLOEXEC on the segment's descriptor, which `seg` keeps open.
        unsafe { libc::fcntl(seg.fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        // SAFETY: fstat into a local struct, on the open descriptor.
        let ino = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(seg.fd(), &mut st);
            st.st_ino
        };
        let value = format!("/proc/{}/fd/{},{ino},{host}", std::process::id(), seg.fd());
        pmi.put(&key, &value).map_err(|e| pmi_err("put", e))?;
        pmi.fence().map_err(|e| pmi_err("fence", e))?;
        // Until every rank has opened the segment: its maker may otherwise finish and exit first.
        pmi.fence().map_err(|e| pmi_err("fence", e))?;
        return Ok(seg);
    }
    pmi.fence().map_err(|e| pmi_err("fence", e))?;
    let value = pmi.get(leader, &key).map_err(|e| pmi_err("get", e))?.ok_or_else(|| format!("rank {leader} published no '{key}' through {proto}: is every rank of this job linked with oxmpi?"))?;
    let mut parts = value.splitn(3, ',');
    let (Some(path), Some(ino), Some(host0)) = (parts.next(), parts.next().and_then(|i| i.parse::<u64>().ok()), parts.next()) else {
        return Err(format!("rank {leader} published '{key}={value}', which this oxmpi does not understand (are both ranks linked with the same oxmpi?)"));
    };
    if host0 != host {
        return Err(format!(
            "the launcher placed this rank on the node of rank {leader}, but rank {leader} runs on host '{host0}' and this rank on '{host}': the launcher's process mapping (PMI_process_mapping) does not match the hosts"
        ));
    }
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| format!("cannot open rank {leader}'s shared memory segment {path}: {e} (the ranks of a node must run as the same user, and rank {leader} must be alive)"))?;
    match file.metadata() {
        Ok(m) if m.ino() == ino => {}
        _ => return Err(format!("{path} is not rank {leader}'s shared memory segment any more (rank {leader} ended?)")),
    }
    let fd = OwnedFd::from(file);
    let seg = Segment::attach(fd.as_raw_fd()).map_err(|e| format!("cannot attach rank {leader}'s shared memory segment: {e}"))?;
    if seg.nranks() != size {
        return Err(format!("rank {leader}'s segment has {} ranks but {proto} says the job has {size}", seg.nranks()));
    }
    // The segment keeps using the descriptor (as an inherited OXMPI_SHM_FD), for the life of
    // the process; Rust opened it close-on-exec.
    let _ = std::os::fd::IntoRawFd::into_raw_fd(fd);
    pmi.fence().map_err(|e| pmi_err("fence", e))?;
    Ok(seg)
}
