//! The engine side of generalized requests (p2p::grequest) and of send-receive pairs
//! (p2p::pair, MPI_Isendrecv), without the C boundary: callbacks are Rust objects. Same set-up as
//! engine_stress.rs: ranks are threads of this process sharing one anonymous segment.
use oxmpi::error::ErrorClass;
use oxmpi::p2p::grequest::{CbResult, Callbacks, Grequests};
use oxmpi::p2p::pair::Pairs;
use oxmpi::p2p::{Engine, SendMode, Status};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

mod common;
use common::TestOps;

fn world(n: usize) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            let e = Arc::new(Engine::new(seg.clone(), r, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO }));
            e.set_threaded(true);
            e
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

#[derive(Default)]
struct Counts {
    queries: AtomicUsize,
    frees: AtomicUsize,
    cancels: AtomicUsize,
    polls: AtomicUsize,
    cancel_complete: AtomicBool,
    query_error: Option<ErrorClass>,
    /// Set for a polled request: the poll function completes it on its third call.
    poll_completes: OnceLock<(Arc<Engine>, Arc<Grequests>, u32)>,
}

impl Callbacks for Counts {
    fn query(&self, st: &mut Status) -> CbResult {
        self.queries.fetch_add(1, Ordering::SeqCst);
        st.source = 3;
        st.tag = 7;
        st.bytes = 12;
        self.query_error.map_or(Ok(()), Err)
    }
    fn free(&self) -> CbResult {
        self.frees.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn cancel(&self, complete: bool) -> CbResult {
        self.cancels.fetch_add(1, Ordering::SeqCst);
        self.cancel_complete.store(complete, Ordering::SeqCst);
        Ok(())
    }
    fn poll(&self) -> Option<CbResult> {
        let (e, g, id) = self.poll_completes.get()?;
        if self.polls.fetch_add(1, Ordering::SeqCst) + 1 == 3 {
            g.complete(e, *id).unwrap();
        }
        Some(Ok(()))
    }
    fn wait(&self) -> Option<CbResult> {
        None
    }
}

#[test]
fn grequest_completed_by_another_thread_is_queried_and_freed_once() {
    let e = world(1).remove(0);
    let g = Grequests::of(&e);
    let c = Arc::new(Counts::default());
    let id = g.start(&e, c.clone(), false);
    let gen = e.generation(id).unwrap();
    assert!(g.contains(id, gen));
    assert!(e.test(id).is_none(), "complete before MPI_Grequest_complete");
    assert_eq!(g.cancel(id, gen), Some(Ok(())));
    assert!(!c.cancel_complete.load(Ordering::SeqCst));
    let (e2, g2) = (e.clone(), g.clone());
    let completer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        g2.complete(&e2, id).unwrap();
    });
    let e3 = e.clone();
    let mut st = bounded("wait for a grequest completed by another thread", move || e3.wait(id));
    completer.join().unwrap();
    assert_eq!(c.frees.load(Ordering::SeqCst), 0, "free before the request is released");
    g.finish(id, gen, &mut st);
    assert_eq!((st.source, st.tag, st.bytes, st.error), (3, 7, 12, None));
    assert_eq!((c.queries.load(Ordering::SeqCst), c.frees.load(Ordering::SeqCst)), (1, 1));
    assert!(!g.contains(id, gen));
    // Finishing again (a stale id) does nothing.
    g.finish(id, gen, &mut st);
    assert_eq!(c.frees.load(Ordering::SeqCst), 1);
}

#[test]
fn grequest_errors_and_free_before_complete() {
    let e = world(1).remove(0);
    let g = Grequests::of(&e);
    let c = Arc::new(Counts { query_error: Some(ErrorClass::Buffer), ..Default::default() });
    let id = g.start(&e, c.clone(), false);
    let gen = e.generation(id).unwrap();
    g.complete(&e, id).unwrap();
    assert!(g.complete(&e, id).is_err(), "completing twice");
    assert_eq!(g.cancel(id, gen), Some(Ok(())));
    assert!(c.cancel_complete.load(Ordering::SeqCst));
    let mut st = e.test(id).expect("complete");
    g.finish(id, gen, &mut st);
    assert_eq!(st.error, Some(ErrorClass::Buffer));
    assert_eq!(c.frees.load(Ordering::SeqCst), 1);

    // MPI_Request_free first: free runs at MPI_Grequest_complete, once.
    let c = Arc::new(Counts::default());
    let id = g.start(&e, c.clone(), false);
    let gen = e.generation(id).unwrap();
    assert_eq!(g.free(&e, id, gen), Some(Ok(())));
    assert_eq!(c.frees.load(Ordering::SeqCst), 0);
    g.complete(&e, id).unwrap();
    assert_eq!(c.frees.load(Ordering::SeqCst), 1);
    assert!(g.complete(&e, id).is_err(), "the request is gone");
}

#[test]
fn poll_function_completes_a_waited_grequest() {
    let e = world(1).remove(0);
    let g = Grequests::of(&e);
    let c = Arc::new(Counts::default());
    let id = g.start(&e, c.clone(), true);
    let gen = e.generation(id).unwrap();
    assert!(c.poll_completes.set((e.clone(), g.clone(), id)).is_ok());
    let e2 = e.clone();
    let mut st = bounded("wait for a polled grequest", move || e2.wait(id));
    g.finish(id, gen, &mut st);
    assert_eq!(c.polls.load(Ordering::SeqCst), 3);
    assert_eq!((st.source, c.frees.load(Ordering::SeqCst)), (3, 1));
}

#[test]
fn send_receive_pairs_complete_with_the_receive_status() {
    let e = world(2);
    let out = [[1u8; 16], [2u8; 16]];
    let mut inb = [[0u8; 16]; 2];
    let mut outer = Vec::new();
    for r in 0..2 {
        let peer = 1 - r;
        let recv = e[r].irecv_t(inb[r].as_mut_ptr(), 16, Some(peer), 5, 0);
        let send = e[r].isend_t(out[r].as_ptr(), 16, peer, 5, 0, SendMode::Standard).unwrap();
        outer.push(Pairs::of(&e[r]).start(&e[r], Some(send), Some(recv), None));
    }
    for r in 0..2 {
        let er = e[r].clone();
        let id = outer[r];
        let st = bounded("wait for a send-receive pair", move || er.wait(id));
        assert_eq!((st.source, st.tag, st.bytes, st.error), ((1 - r) as i32, 5, 16, None));
        assert_eq!(inb[r], out[1 - r]);
    }
    // Only a send (receive from MPI_PROC_NULL): the status is MPI_PROC_NULL's.
    let mut sink = [0u8; 16];
    let recv = e[1].irecv_t(sink.as_mut_ptr(), 16, Some(0), 6, 0);
    let send = e[0].isend_t(out[0].as_ptr(), 16, 1, 6, 0, SendMode::Standard).unwrap();
    let id = Pairs::of(&e[0]).start(&e[0], Some(send), None, None);
    let e1 = e[1].clone();
    bounded("receive of a pair's send", move || e1.wait(recv));
    let e0 = e[0].clone();
    let st = bounded("wait for a send-only pair", move || e0.wait(id));
    assert_eq!(st, Status::proc_null());
    assert_eq!(sink, out[0]);
}
