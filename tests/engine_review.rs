//! Regression tests from a review of the point-to-point engine. Same set-up as engine_stress.rs:
//! ranks are threads of this process sharing one anonymous segment. Scenarios that could hang run
//! in a thread joined with a generous bound, only to turn a hang into a failure.
use oxmpi::p2p::{Engine, OpArgs, SendMode};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fn world(n: usize) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            Arc::new(Engine::new(seg.clone(), r, WaitPolicy { spins: 100, yields: 1, block: true }))
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

/// A persistent buffered send whose MPI_Start fails (no buffer attached) must stay inactive:
/// MPI_Wait on it returns at once and it can be started again once a buffer is attached.
#[test]
fn failed_start_leaves_persistent_request_inactive() {
    let e = world(2);
    let a = [3u8; 32];
    let p = e[0].persistent(OpArgs::Send { buf: a.as_ptr(), bytes: 32, dest: 1, tag: 4, ctx: 0, mode: SendMode::Buffered });
    let err = e[0].start(p).unwrap_err();
    assert_eq!(err.class, oxmpi::abi::MPI_ERR_BUFFER);
    let e0 = e[0].clone();
    let st = bounded("wait on a persistent request whose start failed", move || e0.wait(p));
    assert_eq!(st.bytes, 0, "an inactive request reports an empty status");
    let mut pool = vec![0u8; 32 + oxmpi::abi::MPI_BSEND_OVERHEAD as usize];
    e[0].buffer_attach(pool.as_mut_ptr(), pool.len()).unwrap();
    e[0].start(p).expect("restart after the failed start");
    e[0].wait(p);
    let mut r = [0u8; 32];
    let id = e[1].irecv(r.as_mut_ptr(), 32, Some(0), 4, 0);
    assert_eq!(e[1].wait(id).bytes, 32);
    assert_eq!(r, a);
    e[0].free(p);
    e[0].buffer_detach().unwrap();
}

/// MPI_Send(NULL, 0, ...) and MPI_Recv(NULL, 0, ...) are legal (the C layer accepts a NULL buffer
/// with count 0). The engine must not build a slice from a null pointer (undefined behaviour;
/// debug builds abort on the precondition check).
#[test]
fn zero_byte_messages_with_null_buffers() {
    let e = world(2);
    let r = e[1].irecv(std::ptr::null_mut(), 0, Some(0), 0, 0);
    for mode in [SendMode::Standard, SendMode::Sync] {
        let s = e[0].isend(std::ptr::null(), 0, 1, 0, 0, mode).unwrap();
        if mode == SendMode::Standard {
            e[0].wait(s);
            assert_eq!(e[1].wait(r).bytes, 0);
        } else {
            let r = e[1].irecv(std::ptr::null_mut(), 0, Some(0), 0, 0);
            assert_eq!(e[1].wait(r).bytes, 0);
            e[0].wait(s);
        }
    }
}
