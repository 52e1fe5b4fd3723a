//! Edge cases of the point-to-point engine, each a regression test: inactive persistent requests
//! in Waitsome/Waitany and after a failed start, zero-byte messages with null buffers, and a long
//! send queue drained concurrently. Same set-up as engine_stress.rs: ranks are threads of this
//! process sharing one anonymous segment. Scenarios that could hang run in a thread joined with a
//! generous bound, only to turn a hang into a failure.
use oxmpi::p2p::{Buf, BsendScope, Engine, OpArgs, SendMode};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::TestOps;

/// What Waitsome/Testsome append to: (index, status) of each completed request.
type Done = oxmpi::p2p::stackvec::StackVec<(usize, oxmpi::p2p::Status), 4>;

fn world(n: usize) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            Arc::new(Engine::new(seg.clone(), r, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO }))
        })
        .collect()
}

/// Runs `f` in a thread; fails if it has not finished within 20 s (a hang, not slowness).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("{what}: hung (no result after 20 s)"))
}

/// MPI 4.1 section 3.7.5: inactive persistent handles are ignored by Waitany/Waitsome/Testany/
/// Testsome like null handles. The usual loop `Startall; while left { Waitsome }` must not get the
/// already-completed (now inactive) request back again.
#[test]
fn waitsome_and_waitany_ignore_inactive_persistent_requests() {
    let e = world(2);
    let mut b0 = vec![0u8; 8];
    let mut b1 = vec![0u8; 8];
    let p0 = e[1].persistent_t(OpArgs::Recv { buf: Buf::Flat(b0.as_mut_ptr()), cap: 8, src: Some(0), tag: 1, ctx: 0 });
    let p1 = e[1].persistent_t(OpArgs::Recv { buf: Buf::Flat(b1.as_mut_ptr()), cap: 8, src: Some(0), tag: 2, ctx: 0 });
    e[1].start(p0).unwrap();
    e[1].start(p1).unwrap();
    let a = [7u8; 8];
    let s = e[0].isend_t(a.as_ptr(), 8, 1, 1, 0, SendMode::Standard).unwrap();
    e[0].wait(s);
    let ids = [Some(p0), Some(p1)];
    let mut got = Done::new();
    assert!(e[1].wait_some(&ids, &mut got), "one request is active");
    assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0]);
    // p0 is inactive now. With nothing else complete, Testsome finds nothing (not p0 again)...
    let mut got = Done::new();
    assert!(e[1].test_some(&ids, &mut got), "p1 is active");
    assert_eq!(got.len(), 0);
    assert!(e[1].test_any(&ids).is_none(), "Testany must not report the inactive p0");
    // ... and Waitsome/Waitany report p1 only once its message is there.
    let s = e[0].isend_t(a.as_ptr(), 8, 1, 2, 0, SendMode::Standard).unwrap();
    e[0].wait(s);
    let mut got = Done::new();
    assert!(e[1].wait_some(&ids, &mut got), "p1 is active");
    assert_eq!(got.len(), 1, "only p1 completed, got {:?}", &*got);
    assert_eq!((got[0].0, got[0].1.tag), (1, 2));
    // Both inactive: no active handle at all (the caller reports MPI_UNDEFINED), no hang.
    let e1 = e[1].clone();
    assert!(bounded("waitany over inactive requests", move || e1.wait_any(&ids)).is_none());
    let mut got = Done::new();
    assert!(!e[1].wait_some(&ids, &mut got));
    assert!(!e[1].test_some(&ids, &mut got));
    assert!(got.is_empty());
    assert_eq!(e[1].test_any(&ids), Some(None));
    // Waitany with one inactive and one active request waits for the active one.
    e[1].start(p1).unwrap();
    let s = e[0].isend_t(a.as_ptr(), 8, 1, 2, 0, SendMode::Standard).unwrap();
    e[0].wait(s);
    let (i, st) = e[1].wait_any(&ids).unwrap();
    assert_eq!((i, st.tag, st.source), (1, 2, 0));
    e[1].free(p0);
    e[1].free(p1);
}

/// A persistent buffered send whose MPI_Start fails (no buffer attached) must stay inactive:
/// MPI_Wait on it returns at once and it can be started again once a buffer is attached.
#[test]
fn failed_start_leaves_persistent_request_inactive() {
    let e = world(2);
    let a = [3u8; 32];
    let p = e[0].persistent_t(OpArgs::Send { buf: Buf::flat(a.as_ptr()), bytes: 32, dest: 1, tag: 4, ctx: 0, mode: SendMode::Buffered });
    let err = e[0].start(p).unwrap_err();
    assert_eq!(err.class, oxmpi::abi::MPI_ERR_BUFFER);
    let e0 = e[0].clone();
    let st = bounded("wait on a persistent request whose start failed", move || e0.wait(p));
    assert_eq!(st.bytes, 0, "an inactive request reports an empty status");
    let mut pool = vec![0u8; 32 + oxmpi::abi::MPI_BSEND_OVERHEAD as usize];
    // SAFETY: `pool` outlives every buffered send of this test (detached or dropped at the end).
    unsafe { e[0].buffer_attach(BsendScope::Process, Some((pool.as_mut_ptr(), pool.len())), oxmpi::abi::MPI_BSEND_OVERHEAD as usize) }.unwrap();
    e[0].start(p).expect("restart after the failed start");
    e[0].wait(p);
    let mut r = [0u8; 32];
    let id = e[1].irecv_t(r.as_mut_ptr(), 32, Some(0), 4, 0);
    assert_eq!(e[1].wait(id).bytes, 32);
    assert_eq!(r, a);
    e[0].free(p);
    e[0].buffer_detach(BsendScope::Process).unwrap();
}

/// A communicator's buffer (MPI_Comm_attach_buffer) serves buffered sends on its context only;
/// an iflush request completes once the receiver has taken the message; MPI_BUFFER_AUTOMATIC
/// takes any size.
#[test]
fn communicator_buffer_and_iflush() {
    let e = world(2);
    let a = [7u8; 64];
    let mut pool = vec![0u8; 64 + oxmpi::abi::MPI_BSEND_OVERHEAD as usize];
    // SAFETY: `pool` outlives every buffered send of this test (detached at the end).
    unsafe { e[0].buffer_attach(BsendScope::Comm(6), Some((pool.as_mut_ptr(), pool.len())), oxmpi::abi::MPI_BSEND_OVERHEAD as usize) }.unwrap();
    let other = e[0].isend_t(a.as_ptr(), 64, 1, 1, 8, SendMode::Buffered).map(|_| ());
    assert_eq!(other.unwrap_err().class, oxmpi::abi::MPI_ERR_BUFFER, "context 8 has no buffer");
    let s = e[0].isend_t(a.as_ptr(), 64, 1, 1, 6, SendMode::Buffered).unwrap();
    e[0].wait(s);
    let f = e[0].buffer_iflush(BsendScope::Comm(6));
    let mut r = [0u8; 64];
    let id = e[1].irecv_t(r.as_mut_ptr(), 64, Some(0), 1, 6);
    assert_eq!(e[1].wait(id).bytes, 64);
    let e0 = e[0].clone();
    bounded("iflush completes once the message is delivered", move || e0.wait(f));
    assert_eq!(r, a);
    let (p, n) = e[0].buffer_detach(BsendScope::Comm(6)).unwrap().expect("a user buffer");
    assert_eq!((p, n), (pool.as_mut_ptr(), pool.len()));
    // SAFETY: an automatic pool holds no user memory.
    unsafe { e[0].buffer_attach(BsendScope::Comm(6), None, 0) }.unwrap();
    let big = vec![9u8; 2000];
    let s = e[0].isend_t(big.as_ptr(), big.len(), 1, 2, 6, SendMode::Buffered).unwrap();
    e[0].wait(s);
    let mut rb = vec![0u8; 2000];
    let id = e[1].irecv_t(rb.as_mut_ptr(), rb.len(), Some(0), 2, 6);
    assert_eq!(e[1].wait(id).bytes as usize, rb.len());
    assert_eq!(rb, big);
    assert!(e[0].buffer_detach(BsendScope::Comm(6)).unwrap().is_none(), "automatic detach gives no buffer");
}

/// MPI_Send(NULL, 0, ...) and MPI_Recv(NULL, 0, ...) are legal (the C layer accepts a NULL buffer
/// with count 0). The engine must not build a slice from a null pointer (undefined behaviour;
/// debug builds abort on the precondition check).
#[test]
fn zero_byte_messages_with_null_buffers() {
    let e = world(2);
    let r = e[1].irecv_t(std::ptr::null_mut(), 0, Some(0), 0, 0);
    for mode in [SendMode::Standard, SendMode::Sync] {
        let s = e[0].isend_t(std::ptr::null(), 0, 1, 0, 0, mode).unwrap();
        if mode == SendMode::Standard {
            e[0].wait(s);
            assert_eq!(e[1].wait(r).bytes, 0);
        } else {
            let r = e[1].irecv_t(std::ptr::null_mut(), 0, Some(0), 0, 0);
            assert_eq!(e[1].wait(r).bytes, 0);
            e[0].wait(s);
        }
    }
}

/// Many sends queued behind a full channel, then drained by a receiver running concurrently: the
/// sender's flush used to recurse once per slot the receiver freed in the race window, so the depth
/// grew with the queue. The sender runs on a small stack so that such growth would overflow it.
/// (Probabilistic: it needs the receiver to free slots at the right moments; a pass proves little.)
#[test]
fn long_send_queue_drained_concurrently() {
    const N: usize = 20_000;
    let e = world(2);
    let (e0, e1) = (e[0].clone(), e[1].clone());
    let queued = Arc::new(std::sync::Barrier::new(2));
    let q2 = queued.clone();
    let sender = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let ids: Vec<_> = (0..N).map(|_| e0.isend_t(std::ptr::null(), 0, 1, 0, 0, SendMode::Standard).unwrap()).collect();
            q2.wait(); // all but a few are queued behind the full channel now
            for id in ids {
                e0.wait(id);
            }
        })
        .unwrap();
    let receiver = std::thread::spawn(move || {
        queued.wait();
        for _ in 0..N {
            let r = e1.irecv_t(std::ptr::null_mut(), 0, Some(0), 0, 0);
            e1.wait(r);
        }
    });
    bounded("long send queue", move || {
        sender.join().unwrap();
        receiver.join().unwrap();
    });
}

/// A receive being posted takes its source's channel only up to its own match when no other
/// receive is posted: the messages behind it stay in their slots (no unexpected copies) and the
/// receives posted next take them in order. With another receive posted that they might match,
/// the post drains the channel as before. And a sender with more messages than the ring holds
/// finishes while the receiver posts one receive at a time (its wake-ups are batched).
#[test]
fn receive_post_drains_only_up_to_its_match() {
    let e = world(2);
    let data: Vec<[u8; 4]> = (0..6u8).map(|i| [i; 4]).collect();
    let sends: Vec<_> = data.iter().map(|d| e[0].isend_t(d.as_ptr(), 4, 1, 1, 0, SendMode::Standard).unwrap()).collect();
    let mut bufs = vec![[0u8; 4]; 6];
    let first = e[1].irecv_t(bufs[0].as_mut_ptr(), 4, Some(0), 1, 0);
    assert!(e[1].test(first).is_some(), "the first message was in the channel");
    assert_eq!(e[1].gauges.unexpected(), 0, "the messages behind the match stay in the channel");
    let rest: Vec<_> = bufs[1..].iter_mut().map(|b| e[1].irecv_t(b.as_mut_ptr(), 4, Some(0), 1, 0)).collect();
    for r in rest {
        e[1].wait(r);
    }
    assert_eq!(e[1].gauges.watermarks().0, 0, "nothing went through the unexpected queue");
    for s in sends {
        e[0].wait(s);
    }
    assert_eq!(bufs, data, "in send order");

    // A receive posted earlier (tag 9, never sent) may match what follows: drain it all.
    let sends: Vec<_> = data.iter().map(|d| e[0].isend_t(d.as_ptr(), 4, 1, 1, 0, SendMode::Standard).unwrap()).collect();
    let mut other = [0u8; 4];
    let pending = e[1].irecv_t(other.as_mut_ptr(), 4, Some(0), 9, 0);
    let mut b = [0u8; 4];
    let r = e[1].irecv_t(b.as_mut_ptr(), 4, Some(0), 1, 0);
    e[1].wait(r);
    assert_eq!(e[1].gauges.unexpected(), 5, "with a receive still posted, the post drains the channel");
    for d in &data[1..] {
        let r = e[1].irecv_t(b.as_mut_ptr(), 4, Some(0), 1, 0);
        e[1].wait(r);
        assert_eq!(&b, d);
    }
    for s in sends {
        e[0].wait(s);
    }
    e[1].cancel(pending);
    e[1].wait(pending);

    // More messages than the ring's slots, received one post at a time while the sender waits.
    const N: usize = 64;
    let (e0, e1) = (e[0].clone(), e[1].clone());
    bounded("window larger than the ring", move || {
        let sender = std::thread::spawn(move || {
            let src: Vec<u8> = (0..N as u8).collect();
            let ids: Vec<_> = (0..N).map(|i| e0.isend_t(src[i..].as_ptr(), 1, 1, 2, 0, SendMode::Standard).unwrap()).collect();
            for id in ids {
                e0.wait(id);
            }
        });
        let mut got = vec![0u8; N];
        let ids: Vec<_> = got.iter_mut().map(|b| e1.irecv_t(b, 1, Some(0), 2, 0)).collect();
        for id in ids {
            e1.wait(id);
        }
        sender.join().unwrap();
        assert_eq!(got, (0..N as u8).collect::<Vec<_>>());
    });
}
