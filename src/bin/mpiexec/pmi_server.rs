//! A PMI-1 server for the ranks of a job that spans nodes (`--nodes K`): their key-value space
//! and fences, over one socket pair per rank (`PMI_FD`), as hydra serves MPICH programs. The
//! ranks exchange their UCX worker addresses through it (`oxmpi::transport::ucx_wireup`), so a
//! job started by this mpiexec and one started by a foreign launcher take the same path.
//!
//! One thread per rank reads its requests; a fence completes when every rank of the job entered
//! it. A rank that dies leaves the others in the fence until the supervisor ends the job.
//!
//! On several hosts each node agent (`agent`) runs a server for its own ranks: a fence there
//! completes once the node's ranks entered it and the head (`remote`) completed the job-wide
//! fence of all nodes (`Upstream`), which brings the other nodes' puts.
use oxmpi::runtime::pmi::wire1;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex};

/// The job-wide part of a node's fence: takes the puts made on this node since the last fence
/// and returns those of every node (once all nodes entered the fence).
/// See `Shared::on_abort`.
pub type OnAbort = Box<dyn Fn(usize, i32) + Send + Sync>;

pub type Upstream = Box<dyn Fn(Vec<(String, String)>) -> std::io::Result<Vec<(String, String)>> + Send + Sync>;

#[derive(Default)]
struct Space {
    kvs: HashMap<String, String>,
    /// Puts since the last fence, for `Upstream`.
    fresh: Vec<(String, String)>,
    /// Ranks inside the current fence, and how many fences completed.
    entered: usize,
    generation: u64,
}

struct Shared {
    n: usize,
    space: Mutex<Space>,
    fenced: Condvar,
    /// PMI_process_mapping: which node each rank is on.
    mapping: String,
    upstream: Option<Upstream>,
    /// Told a rank's MPI_Abort (or fatal error): its index on the server and exit code (a node
    /// agent passes it to the head at once).
    on_abort: Option<OnAbort>,
    /// Each served rank's MPI_APPNUM (its segment of an MPMD command line).
    appnum: Vec<usize>,
}

/// The ranks' ends of the connections (one per rank, close-on-exec: `keep_for_child` clears
/// it for the rank's own descriptor in the child).
pub struct Server {
    pub rank_fds: Vec<OwnedFd>,
}

/// Starts the server for `n` ranks whose nodes are `node_of` and segments `app_of`.
pub fn start(node_of: &[usize], app_of: Vec<usize>) -> std::io::Result<Server> {
    start_serving(node_of, app_of, None, None)
}

/// Starts the server of one node's ranks, whose segments are `app_of` (one per rank), in a job
/// whose nodes are `node_of`; its fences go through `upstream`, its ranks' aborts to `on_abort`.
pub fn start_node(node_of: &[usize], app_of: Vec<usize>, upstream: Upstream, on_abort: OnAbort) -> std::io::Result<Server> {
    start_serving(node_of, app_of, Some(upstream), Some(on_abort))
}

fn start_serving(node_of: &[usize], appnum: Vec<usize>, upstream: Option<Upstream>, on_abort: Option<OnAbort>) -> std::io::Result<Server> {
    let n = appnum.len();
    let shared = Arc::new(Shared { n, space: Mutex::new(Space::default()), fenced: Condvar::new(), mapping: oxmpi::runtime::node_map::process_mapping(node_of), upstream, on_abort, appnum });
    let mut rank_fds = Vec::with_capacity(n);
    for r in 0..n {
        let (ours, theirs) = UnixStream::pair()?;
        rank_fds.push(OwnedFd::from(theirs));
        let shared = shared.clone();
        std::thread::Builder::new().name(format!("pmi-{r}")).spawn(move || serve(&shared, ours, r))?;
    }
    Ok(Server { rank_fds })
}

/// Clears close-on-exec on `fd` (in the child, between fork and exec).
pub fn keep_for_child(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor number; async-signal-safe, so fine after fork.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Space> {
    s.space.lock().unwrap_or_else(|p| p.into_inner())
}

/// Serves one rank until it disconnects (exits) or says finalize.
fn serve(s: &Shared, conn: UnixStream, index: usize) {
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(req) = wire1::parse(line.trim_end()) else {
            let _ = out.write_all(wire1::format("error", &[("rc", "-1"), ("msg", "unparsable_request")]).as_bytes());
            continue;
        };
        let reply = match req.cmd.as_str() {
            "init" => wire1::format("response_to_init", &[("pmi_version", "1"), ("pmi_subversion", "1"), ("rc", "0")]),
            "get_maxes" => wire1::format("maxes", &[("kvsname_max", "256"), ("keylen_max", "64"), ("vallen_max", "1024")]),
            "get_appnum" => wire1::format("appnum", &[("appnum", &s.appnum[index].to_string())]),
            "get_my_kvsname" => wire1::format("my_kvsname", &[("kvsname", "oxmpi")]),
            "put" => match (req.get("key"), req.get("value")) {
                (Some(k), Some(v)) => {
                    let mut g = lock(s);
                    g.kvs.insert(k.to_string(), v.to_string());
                    if s.upstream.is_some() {
                        g.fresh.push((k.to_string(), v.to_string()));
                    }
                    wire1::format("put_result", &[("rc", "0"), ("msg", "success")])
                }
                _ => wire1::format("put_result", &[("rc", "-1"), ("msg", "key_or_value_missing")]),
            },
            "get" => {
                let key = req.get("key").unwrap_or("");
                let value = if key == "PMI_process_mapping" { Some(s.mapping.clone()) } else { lock(s).kvs.get(key).cloned() };
                match value {
                    Some(v) => wire1::format("get_result", &[("rc", "0"), ("msg", "success"), ("value", &v)]),
                    None => wire1::format("get_result", &[("rc", "-1"), ("msg", "key_not_found"), ("value", "unknown")]),
                }
            }
            "barrier_in" => {
                let mut g = lock(s);
                let gen = g.generation;
                g.entered += 1;
                if g.entered == s.n {
                    if let Some(up) = &s.upstream {
                        // The node's ranks wait in the fence meanwhile; if the head is gone,
                        // the agent ends them.
                        let fresh = std::mem::take(&mut g.fresh);
                        match up(fresh) {
                            Ok(all) => g.kvs.extend(all),
                            Err(_) => return,
                        }
                    }
                    g.entered = 0;
                    g.generation += 1;
                    s.fenced.notify_all();
                } else {
                    while g.generation == gen {
                        g = s.fenced.wait(g).unwrap_or_else(|p| p.into_inner());
                    }
                }
                wire1::format("barrier_out", &[])
            }
            "finalize" => {
                let _ = out.write_all(wire1::format("finalize_ack", &[]).as_bytes());
                return;
            }
            // MPI_Abort reaches the supervisor through the rank's segment; nothing to answer.
            "abort" => {
                if let Some(f) = &s.on_abort {
                    f(index, req.get("exitcode").and_then(|c| c.parse().ok()).unwrap_or(1));
                }
                return;
            }
            other => wire1::format(other, &[("rc", "-1"), ("msg", "unsupported_by_oxmpi_mpiexec")]),
        };
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmpi::runtime::pmi::{pmi1::Pmi1, Pmi};

    #[test]
    fn ranks_put_fence_and_get_through_the_server() {
        let node_of = [0, 0, 1];
        let server = start(&node_of, vec![0, 1, 1]).unwrap();
        let threads: Vec<_> = server
            .rank_fds
            .into_iter()
            .enumerate()
            .map(|(r, fd)| {
                std::thread::spawn(move || {
                    let p = Pmi1::start(fd, None, Some((r, 3))).unwrap();
                    p.put(&format!("k{r}"), &format!("v{r}")).unwrap();
                    p.fence().unwrap();
                    let got: Vec<_> = (0..3).map(|o| p.get(o, &format!("k{o}")).unwrap()).collect();
                    assert_eq!(got, vec![Some("v0".into()), Some("v1".into()), Some("v2".into())]);
                    assert_eq!(p.get(0, "nope").unwrap(), None);
                    assert_eq!(p.nodes().unwrap(), Some(vec![0, 0, 1]));
                    assert_eq!(p.appnum(), if r == 0 { 0 } else { 1 }, "rank {r}'s MPMD segment");
                    p.fence().unwrap();
                    p.finalize().unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_node_fence_goes_upstream() {
        // Node 1 of [0, 1, 1]: its two ranks, and node 0's put arriving through the upstream.
        let up: Upstream = Box::new(|mine| {
            assert_eq!(mine.len(), 2);
            let mut all = mine;
            all.push(("k0".into(), "v0".into()));
            Ok(all)
        });
        let server = start_node(&[0, 1, 1], vec![0, 2], up, Box::new(|_, _| {})).unwrap();
        let threads: Vec<_> = server
            .rank_fds
            .into_iter()
            .enumerate()
            .map(|(i, fd)| {
                std::thread::spawn(move || {
                    let r = i + 1;
                    let p = Pmi1::start(fd, None, Some((r, 3))).unwrap();
                    p.put(&format!("k{r}"), &format!("v{r}")).unwrap();
                    p.fence().unwrap();
                    assert_eq!(p.get(0, "k0").unwrap(), Some("v0".into()));
                    assert_eq!(p.get(0, "k2").unwrap(), Some("v2".into()));
                    assert_eq!(p.appnum(), 2 * i as i32);
                    p.finalize().unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
