//! Regression tests from a review of the point-to-point engine. Same set-up as engine_stress.rs:
//! ranks are threads of this process sharing one anonymous segment. Scenarios that could hang run
//! in a thread joined with a generous bound, only to turn a hang into a failure.
use oxmpi::p2p::{Engine, SendMode};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;

fn world(n: usize) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            Arc::new(Engine::new(seg.clone(), r, WaitPolicy { spins: 100, yields: 1, block: true }))
        })
        .collect()
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
