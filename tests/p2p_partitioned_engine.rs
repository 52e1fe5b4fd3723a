//! Partitioned communication at the engine level (`oxmpi::p2p::partitioned`): partitions move as
//! they become ready, send and receive partitionings may differ, requests restart, and the
//! traffic never matches a user's wildcard receive. Ranks are threads of this process sharing one
//! anonymous segment, as in engine_stress.rs.
use oxmpi::p2p::{partitioned as part, Buf, Engine};
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::TestOps;

fn world(n: usize) -> Vec<Arc<Engine>> {
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    (0..n)
        .map(|r| {
            seg.rank(r).pid.store(std::process::id() as i32, Ordering::SeqCst);
            Arc::new(Engine::new(seg.clone(), r, WaitPolicy { spins: 100, yields: 1, block: true, linger: std::time::Duration::ZERO }))
        })
        .collect()
}

/// Polls MPI_Parrived until partition `i` is in; fails after 20 s.
fn until_arrived(e: &Engine, id: oxmpi::p2p::ReqId, i: i64) {
    let t = Instant::now();
    while !part::parrived(e, id, i).unwrap() {
        assert!(t.elapsed() < Duration::from_secs(20), "partition {i} never arrived");
    }
}

#[test]
fn partitions_move_as_they_become_ready() {
    let e = world(2);
    // 6 send partitions of 40 bytes; 4 receive partitions of 60 bytes.
    let mut src: Vec<u8> = (0..240).map(|i| i as u8).collect();
    let mut dst = vec![0u8; 240];
    // A user wildcard receive on the same communicator must never see partitioned traffic.
    let mut other = [0u8; 8];
    let wild = e[1].irecv_t(other.as_mut_ptr(), 8, None, -1, 0);
    // SAFETY: both buffers outlive the requests (freed at the end of the test).
    let s = unsafe { part::psend_init(&e[0], Buf::Flat(src.as_mut_ptr()), 6, 40, Some(1), 3, 0).unwrap() };
    let r = unsafe { part::precv_init(&e[1], Buf::Flat(dst.as_mut_ptr()), 4, 60, Some(0), 3, 0) };
    for round in 0..3u8 {
        src.iter_mut().enumerate().for_each(|(i, b)| *b = (i as u8).wrapping_add(round));
        part::start(&e[1], r).unwrap().unwrap();
        assert!(!part::parrived(&e[1], r, 0).unwrap());
        part::start(&e[0], s).unwrap().unwrap();
        assert!(part::pready(&e[0], s, &[6]).is_err(), "partition 6 of 6");
        // Send partitions 0 and 1 cover receive partition 0 (bytes 0..60) and half of 1.
        part::pready(&e[0], s, &[1, 0]).unwrap();
        assert!(part::pready(&e[0], s, &[0]).is_err(), "partition 0 is already ready");
        until_arrived(&e[1], r, 0);
        assert!(!part::parrived(&e[1], r, 1).unwrap(), "receive partition 1 needs send partition 2");
        assert_eq!(&dst[..60], &src[..60]);
        part::pready(&e[0], s, &[5, 2]).unwrap();
        until_arrived(&e[1], r, 1);
        assert!(!part::parrived(&e[1], r, 2).unwrap(), "receive partition 2 needs send partitions 3 and 4");
        assert!(!part::parrived(&e[1], r, 3).unwrap(), "receive partition 3 needs send partition 4");
        part::pready(&e[0], s, &[3, 4]).unwrap();
        let st = e[1].wait(r);
        assert_eq!((st.source, st.tag, st.bytes, st.error), (0, 3, 240, None));
        e[0].wait(s);
        assert_eq!(dst, src);
        assert!(part::pready(&e[0], s, &[0]).is_err(), "the request is inactive");
    }
    assert!(e[1].test(wild).is_none(), "a wildcard receive matched partitioned traffic");
    e[1].cancel(wild);
    assert!(e[1].wait(wild).cancelled);
    part::forget(&e[0], s);
    e[0].free(s);
    part::forget(&e[1], r);
    e[1].free(r);
}

/// MPI_Cancel of an active partitioned receive of which nothing arrived: it completes at once,
/// marked cancelled, and the sender's partitions go to the next activation.
#[test]
fn cancel_of_an_untouched_partitioned_receive() {
    let e = world(2);
    let mut src = [5u8; 16];
    let mut dst = [0u8; 16];
    // SAFETY: both buffers outlive the requests (freed at the end of the test).
    let s = unsafe { part::psend_init(&e[0], Buf::Flat(src.as_mut_ptr()), 2, 8, Some(1), 0, 0).unwrap() };
    let r = unsafe { part::precv_init(&e[1], Buf::Flat(dst.as_mut_ptr()), 2, 8, Some(0), 0, 0) };
    part::start(&e[1], r).unwrap().unwrap();
    assert!(!part::parrived(&e[1], r, 0).unwrap());
    assert_eq!(part::cancel(&e[1], r), Some(()));
    assert!(e[1].wait(r).cancelled);
    // The send goes to the next activation of the receive.
    part::start(&e[0], s).unwrap().unwrap();
    part::pready(&e[0], s, &[0, 1]).unwrap();
    part::start(&e[1], r).unwrap().unwrap();
    let st = e[1].wait(r);
    assert!(!st.cancelled);
    assert_eq!((st.bytes, dst), (16, src));
    e[0].wait(s);
    // Once a partition is in, a cancel no longer applies: the receive completes normally.
    src = [6u8; 16];
    part::start(&e[1], r).unwrap().unwrap();
    part::start(&e[0], s).unwrap().unwrap();
    part::pready(&e[0], s, &[1]).unwrap();
    until_arrived(&e[1], r, 1);
    assert_eq!(part::cancel(&e[1], r), Some(()));
    assert!(e[1].test(r).is_none(), "partition 0 is still to come");
    part::pready(&e[0], s, &[0]).unwrap();
    let st = e[1].wait(r);
    assert!(!st.cancelled);
    assert_eq!(dst, src);
    e[0].wait(s);
    for (k, id) in [(0, s), (1, r)] {
        part::forget(&e[k], id);
        e[k].free(id);
    }
}

/// A partitioned send longer than the receive buffer: the receive gets what fits and ends with
/// ErrorClass::Truncate (MPI_ERR_TRUNCATE from MPI_Wait).
#[test]
fn a_longer_partitioned_send_truncates() {
    let e = world(2);
    let mut src: Vec<u8> = (1..=24).collect();
    let mut dst = vec![0u8; 12];
    // SAFETY: both buffers outlive the requests (freed at the end of the test).
    let s = unsafe { part::psend_init(&e[0], Buf::Flat(src.as_mut_ptr()), 3, 8, Some(1), 2, 0).unwrap() };
    let r = unsafe { part::precv_init(&e[1], Buf::Flat(dst.as_mut_ptr()), 2, 6, Some(0), 2, 0) };
    part::start(&e[1], r).unwrap().unwrap();
    part::start(&e[0], s).unwrap().unwrap();
    part::pready(&e[0], s, &[2, 0, 1]).unwrap();
    let st = e[1].wait(r);
    assert_eq!((st.error, st.bytes), (Some(oxmpi::error::ErrorClass::Truncate), 12));
    assert_eq!(dst, src[..12]);
    e[0].wait(s);
    for (k, id) in [(0, s), (1, r)] {
        part::forget(&e[k], id);
        e[k].free(id);
    }
}
