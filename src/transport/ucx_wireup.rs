//! Connecting the UCX workers of a job that spans nodes: every rank publishes its worker's
//! address in the launcher's key-value space (PMI put, a fence, then gets), and connects to the
//! ranks of other nodes. The same exchange serves a foreign launcher (hydra, srun, mpirun: their
//! PMI) and oxmpi's own `mpiexec` (which can offer the same `Pmi` to its ranks).
//!
//! An address is a binary blob of a few hundred bytes, more with many network devices, while PMI
//! values are text of bounded length (hydra's PMI-1 allows 1024 characters): it goes in hex, in
//! chunks, after a key that gives their number.
use super::ucx::Worker;
use crate::runtime::pmi::Pmi;

/// Rank r's key of the number of chunks of its address is `{KEY}{r}`; chunk `i` is under
/// `{KEY}{r}-{i}`. The rank is in the key: a PMI-1 key-value space is one for the whole job.
const KEY: &str = "oxmpi-ucx";
/// Raw address bytes per PMI value (hex doubles them, well under hydra's 1024).
pub const CHUNK: usize = 400;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Publishes `worker`'s address (in chunks of `chunk` bytes), fences, and connects `worker` to
/// every rank in `remote` (the ranks of other nodes). Collective over the job: every rank calls
/// it, even one with no remote peer, since the fence needs all. `Err` is one line for MPI_Init.
pub fn connect(pmi: &dyn Pmi, worker: &mut Worker, remote: &[usize], chunk: usize) -> Result<(), String> {
    let proto = pmi.protocol();
    let pmi_err = |what: &str, e: std::io::Error| format!("{proto} {what} failed while connecting the nodes through UCX: {e}");
    let addr = worker.address()?;
    let pieces: Vec<&[u8]> = addr.chunks(chunk.max(1)).collect();
    let me = pmi.rank();
    pmi.put(&format!("{KEY}{me}"), &pieces.len().to_string()).map_err(|e| pmi_err("put", e))?;
    for (i, p) in pieces.iter().enumerate() {
        pmi.put(&format!("{KEY}{me}-{i}"), &hex(p)).map_err(|e| pmi_err("put", e))?;
    }
    pmi.fence().map_err(|e| pmi_err("fence", e))?;
    for &peer in remote {
        let missing = || format!("rank {peer} published no UCX address through {proto}: is every rank of this job linked with the same oxmpi?");
        let n: usize = pmi.get(peer, &format!("{KEY}{peer}")).map_err(|e| pmi_err("get", e))?.ok_or_else(missing)?.trim().parse().map_err(|_| missing())?;
        let mut blob = Vec::new();
        for i in 0..n {
            let v = pmi.get(peer, &format!("{KEY}{peer}-{i}")).map_err(|e| pmi_err("get", e))?.ok_or_else(missing)?;
            blob.extend(unhex(v.trim()).ok_or_else(|| format!("rank {peer}'s UCX address (part {i}) is not hex: '{v}'"))?);
        }
        worker.connect(peer, &blob)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ucx::Context;
    use std::collections::HashMap;
    use std::io;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier, Mutex};

    /// A launcher's key-value space for ranks that are threads: puts are seen after a fence.
    struct Board {
        size: usize,
        kvs: Mutex<HashMap<String, String>>,
        fence: Barrier,
    }

    struct Client {
        rank: usize,
        board: Arc<Board>,
    }

    impl Pmi for Client {
        fn protocol(&self) -> &'static str {
            "test-PMI"
        }
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.board.size
        }
        fn appnum(&self) -> i32 {
            0
        }
        fn put(&self, key: &str, value: &str) -> io::Result<()> {
            assert!(value.len() <= 1024, "a PMI value of {} characters", value.len());
            // One space for the job, as PMI-1's: keys of different ranks must differ.
            let old = self.board.kvs.lock().unwrap().insert(key.to_string(), value.to_string());
            assert!(old.is_none(), "key {key} put twice");
            Ok(())
        }
        fn fence(&self) -> io::Result<()> {
            self.board.fence.wait();
            Ok(())
        }
        fn get(&self, owner: usize, key: &str) -> io::Result<Option<String>> {
            let _ = owner;
            Ok(self.board.kvs.lock().unwrap().get(key).cloned())
        }
        fn job_attr(&self, _key: &str) -> io::Result<Option<String>> {
            Ok(None)
        }
        fn abort(&self, _code: i32, _message: &str) {}
        fn finalize(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn hex_round_trips() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert!(unhex("abc").is_none() && unhex("zz").is_none());
    }

    /// Three ranks on three "nodes" (threads here) exchange addresses through the key-value
    /// space, in small chunks, then every rank sends a packet to every other over TCP.
    #[test]
    fn ranks_connect_through_the_key_value_space() {
        let n = 3;
        let board = Arc::new(Board { size: n, kvs: Mutex::new(HashMap::new()), fence: Barrier::new(n) });
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..n)
            .map(|rank| {
                let (board, done) = (board.clone(), done.clone());
                std::thread::spawn(move || {
                    let pmi = Client { rank, board };
                    let mut w = Worker::new(Context::new(&[("TLS", "tcp")]).unwrap(), rank).unwrap();
                    let remote: Vec<usize> = (0..n).filter(|&r| r != rank).collect();
                    connect(&pmi, &mut w, &remote, 37).unwrap();
                    for &peer in &remote {
                        w.send(peer, &[rank as u8, peer as u8], vec![rank as u8; 10 + peer]).unwrap();
                    }
                    let mut got = Vec::new();
                    let mut finished = false;
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                    // Keep progressing until every rank is done: a peer may need our side.
                    while done.load(Ordering::SeqCst) < n {
                        assert!(std::time::Instant::now() < deadline, "rank {rank} got {got:?}");
                        w.progress().unwrap();
                        got.extend(crate::transport::ucx::tests::take_copies(&mut w));
                        if !finished && got.len() == remote.len() && w.sends_in_flight() == 0 {
                            finished = true;
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    got.sort();
                    let want: Vec<_> = remote.iter().map(|&src| (src, vec![src as u8, rank as u8], vec![src as u8; 10 + rank])).collect();
                    assert_eq!(got, want, "rank {rank}");
                    pmi.fence().unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
