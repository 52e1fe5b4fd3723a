//! Stress tests of the point-to-point engine: several ranks (threads of this test process sharing
//! one anonymous segment), many messages of random sizes and tags, ANY_SOURCE receives, several
//! threads per rank, and the streaming fallback for large messages (OXMPI_CMA=0 semantics).
use oxmpi::p2p::{Engine, SendMode};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod common;
use common::{Rng, TestOps};


fn world(n: usize, policy: WaitPolicy) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            Arc::new(Engine::new(seg.clone(), r, policy))
        })
        .collect()
}

fn pattern(src: usize, seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (src as u64 * 31 + seq * 7 + i as u64) as u8).collect()
}

/// Every rank sends `msgs` messages of random size (up to 200 KiB: eager and rendezvous) and tag to
/// random peers; receivers use ANY_SOURCE/ANY_TAG and check content and per-sender order.
fn all_to_random(n: usize, msgs: usize, policy: WaitPolicy, single_copy: bool) {
    let engines = world(n, policy);
    if !single_copy {
        engines.iter().for_each(|e| e.disable_single_copy());
    }
    // Plan: who sends what to whom, computed up front so receivers know how many to expect.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut plan: Vec<Vec<(usize, i32, usize)>> = vec![Vec::new(); n];
    let mut expect = vec![0usize; n];
    for (src, p) in plan.iter_mut().enumerate() {
        for _ in 0..msgs {
            let dst = rng.below(n as u64) as usize;
            let tag = rng.below(5) as i32;
            let len = match rng.below(4) {
                0 => 0,
                1 => rng.below(64) as usize,
                2 => rng.below(9000) as usize,
                _ => rng.below(200_000) as usize,
            };
            let _ = src;
            p.push((dst, tag, len));
            expect[dst] += 1;
        }
    }
    let threads: Vec<_> = (0..n)
        .map(|me| {
            let e = engines[me].clone();
            let my_plan = plan[me].clone();
            let my_expect = expect[me];
            std::thread::spawn(move || {
                // Nonblocking sends, all outstanding at once; buffers live until waited.
                let bufs: Vec<Vec<u8>> = my_plan.iter().enumerate().map(|(seq, &(dst, tag, len))| {
                    let mut b = pattern(me, seq as u64, len);
                    // Header: sender rank and its per-destination sequence for ordering checks.
                    if len >= 16 {
                        b[..8].copy_from_slice(&(me as u64).to_le_bytes());
                        b[8..16].copy_from_slice(&(seq as u64).to_le_bytes());
                    }
                    let _ = (dst, tag);
                    b
                }).collect();
                let sends: Vec<_> = my_plan.iter().zip(&bufs).map(|(&(dst, tag, len), b)| e.isend_t(b.as_ptr(), len, dst, tag, 7, SendMode::Standard).unwrap()).collect();
                let mut last_seq = vec![None::<u64>; n];
                let mut rbuf = vec![0u8; 200_000];
                for _ in 0..my_expect {
                    let id = e.irecv_t(rbuf.as_mut_ptr(), rbuf.len(), None, -1, 7);
                    let st = e.wait(id);
                    assert_eq!(st.error, None);
                    let len = st.bytes as usize;
                    if len >= 16 {
                        let src = u64::from_le_bytes(rbuf[..8].try_into().unwrap()) as usize;
                        let seq = u64::from_le_bytes(rbuf[8..16].try_into().unwrap());
                        assert_eq!(src, st.source as usize, "source in status");
                        let want = pattern(src, seq, len);
                        assert_eq!(&rbuf[16..len], &want[16..len], "payload of msg {seq} from {src}");
                        if let Some(prev) = last_seq[src] {
                            assert!(seq > prev, "non-overtaking violated: {seq} after {prev} from {src}");
                        }
                        last_seq[src] = Some(seq);
                    }
                }
                for s in sends {
                    e.wait(s);
                }
                // As MPI_Finalize does: acknowledgements still queued for peers must go out.
                e.flush_all();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn random_traffic_4_ranks_spin_then_block() {
    all_to_random(4, 300, WaitPolicy { spins: 1000, yields: 2, block: true, linger: std::time::Duration::ZERO }, true);
}

#[test]
fn random_traffic_streamed_rendezvous() {
    all_to_random(4, 200, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO }, false);
}

#[test]
fn random_traffic_8_ranks_oversubscribed_blocking() {
    all_to_random(8, 150, WaitPolicy { spins: 0, yields: 0, block: true, linger: std::time::Duration::ZERO }, true);
}

/// Several threads per rank (MPI_THREAD_MULTIPLE): each thread pair exchanges on its own tag.
#[test]
fn several_threads_per_rank() {
    let engines = world(2, WaitPolicy { spins: 0, yields: 1, block: true, linger: std::time::Duration::ZERO });
    let mut handles = Vec::new();
    for me in 0..2usize {
        for t in 0..4i32 {
            let e = engines[me].clone();
            handles.push(std::thread::spawn(move || {
                let peer = 1 - me;
                for i in 0..300u32 {
                    let len = ((i as usize * 977) % 20_000) + 1;
                    let out: Vec<u8> = (0..len).map(|k| (k as u32 ^ i ^ t as u32) as u8).collect();
                    let mut inb = vec![0u8; len];
                    let r = e.irecv_t(inb.as_mut_ptr(), len, Some(peer), t, 3);
                    let s = e.isend_t(out.as_ptr(), len, peer, t, 3, SendMode::Standard).unwrap();
                    e.wait(s);
                    let st = e.wait(r);
                    assert_eq!(st.bytes as usize, len);
                    assert_eq!(inb, out, "thread {t} iteration {i}");
                }
                e.flush_all();
            }));
        }
    }
    for h in handles {
        h.join().unwrap();
    }
}

/// Synchronous sends complete only after the receive matched; truncation is reported.
#[test]
fn sync_and_truncation() {
    let e = world(2, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO });
    let data = vec![5u8; 100];
    let s = e[0].isend_t(data.as_ptr(), 100, 1, 9, 0, SendMode::Sync).unwrap();
    assert!(e[0].test(s).is_none(), "ssend completed before any receive was posted");
    let mut small = vec![0u8; 10];
    let r = e[1].irecv_t(small.as_mut_ptr(), 10, Some(0), 9, 0);
    let st = e[1].wait(r);
    assert_eq!(st.error, Some(oxmpi::error::ErrorClass::Truncate));
    assert_eq!(st.bytes, 10);
    e[0].wait(s);
    // A large truncated message (rendezvous path).
    let big = vec![1u8; 100_000];
    let s = e[0].isend_t(big.as_ptr(), big.len(), 1, 1, 0, SendMode::Standard).unwrap();
    let mut rb = vec![0u8; 50_000];
    let r = e[1].irecv_t(rb.as_mut_ptr(), rb.len(), Some(0), 1, 0);
    let st = e[1].wait(r);
    assert_eq!(st.error, Some(oxmpi::error::ErrorClass::Truncate));
    assert!(rb.iter().all(|&b| b == 1));
    e[0].wait(s);
}

/// Probe, matched probe and cancel.
#[test]
fn probe_mprobe_cancel() {
    let e = world(2, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO });
    let mut rb = vec![0u8; 64];
    let r = e[1].irecv_t(rb.as_mut_ptr(), 64, Some(0), 42, 0);
    e[1].cancel(r);
    let st = e[1].wait(r);
    assert!(st.cancelled);
    let a = [1u8; 16];
    let s = e[0].isend_t(a.as_ptr(), 16, 1, 5, 0, SendMode::Standard).unwrap();
    let st = e[1].probe(None, -1, 0);
    assert_eq!((st.source, st.tag, st.bytes), (0, 5, 16));
    let (m, _) = e[1].mprobe(Some(0), 5, 0);
    assert!(e[1].iprobe(None, -1, 0).is_none(), "a matched message must leave the queue");
    let id = e[1].imrecv_t(m, rb.as_mut_ptr(), 64).unwrap();
    assert_eq!(e[1].wait(id).bytes, 16);
    e[0].wait(s);
}

/// Large blocking sends with split copies (the receiver reads half, the sender writes half), with
/// exact-size and truncating receives.
#[test]
fn split_copies_of_large_blocking_sends() {
    let e = world(2, WaitPolicy { spins: 1000, yields: 2, block: true, linger: std::time::Duration::ZERO });
    e.iter().for_each(|x| x.set_split_copies(true));
    let sizes = [64 * 1024, 64 * 1024 + 1, 300_001, 1 << 20, 4 << 20];
    let s = e[0].clone();
    let sender = std::thread::spawn(move || {
        for (i, &n) in sizes.iter().enumerate() {
            let data = pattern(0, i as u64, n);
            s.send_blocking_t(data.as_ptr(), n, 1, i as i32, 0, SendMode::Standard).unwrap();
        }
        s.flush_all();
    });
    for (i, &n) in sizes.iter().enumerate() {
        // Every other receive is shorter than the message: truncation must still be exact.
        let cap = if i % 2 == 1 { n - 5000 } else { n };
        let mut buf = vec![0u8; cap];
        let r = e[1].irecv_t(buf.as_mut_ptr(), cap, Some(0), i as i32, 0);
        let st = e[1].wait(r);
        let want = pattern(0, i as u64, n);
        assert_eq!(st.bytes as usize, cap.min(n));
        assert_eq!(st.error, if cap < n { Some(oxmpi::error::ErrorClass::Truncate) } else { None });
        assert!(buf[..] == want[..cap], "split copy of {n} bytes into {cap} differs");
    }
    e[1].flush_all();
    sender.join().unwrap();
}
