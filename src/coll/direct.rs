//! MPI_Allreduce for large vectors with every transfer posted at once ("direct"): a linear
//! reduce-scatter, then a linear allgather. Commutative operations only.
//!
//! The vector is cut into `n` blocks; rank r owns block r. Every rank posts, at the same time,
//! receives of block r from every peer and sends of block q to every owner q; then it combines
//! the received blocks into its own as they come, and finally sends its finished block to every
//! peer while receiving theirs straight into `recvbuf`. Each rank moves `2 (n-1)/n` of the
//! vector, as in the ring, but nothing waits on a chain of neighbours: a large block is a
//! single-copy read by its receiver, so a rank that is scheduled can serve itself from every peer
//! whose data is ready. On an oversubscribed node, where the ring's n-1 dependent steps each wait
//! for a neighbour to be scheduled, that is the difference.
//!
//! Measured against the ring (benches/coll_latency.c, microseconds per call, 2-core machine under
//! a load average of 10 from other jobs, so only the comparison within a row means much):
//!
//! ```text
//!  n  bytes   ring proc/thr   direct proc/thr
//!  4  256 KiB    253/121         220/94
//!  4    1 MiB    802/377         893/394
//!  4    4 MiB   7214/3432       6156/3619
//!  8  256 KiB   1003/439         722/328
//!  8    1 MiB   3204/1263       3464/1445
//!  8    4 MiB  16560/10457     15313/9536
//! ```
//!
//! Neither wins everywhere, so `auto` keeps the ring; `OXMPI_ALLREDUCE_ALGORITHM=direct` forces
//! this one.
use super::{blocks, Coll};
use crate::error::MpiResult;
use crate::op::Reduction;
use crate::p2p::ReqId;

/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red` must be commutative.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let n = cx.size();
    let me = cx.rank();
    let size = red.size;
    let range = |b: usize| {
        let (s, l) = blocks(count, n, b, b + 1);
        (s * size, l * size)
    };
    let (mo, ml) = range(me);
    // The contributions to my block: from the send buffer (which may be `recvbuf` itself: then
    // my block must not be overwritten before it was sent, so everything is staged).
    let mut incoming = vec![0u8; ml * (n - 1)];
    let mut own = vec![0u8; ml];
    // SAFETY: my block lies within `sendbuf`; `own` holds `ml` bytes.
    unsafe { std::ptr::copy_nonoverlapping(sendbuf.add(mo), own.as_mut_ptr(), ml) };
    let peers = |k: usize| (me + k) % n;
    let mut recvs: Vec<(ReqId, usize)> = Vec::with_capacity(n - 1);
    let mut sends: Vec<ReqId> = Vec::with_capacity(n - 1);
    let mut result = Ok(());
    for k in 1..n {
        let p = peers(k);
        // SAFETY: slot k-1 of `incoming` holds `ml` bytes and outlives the request (waited below).
        recvs.push((unsafe { cx.irecv(incoming.as_mut_ptr().add((k - 1) * ml), ml, p) }, p));
    }
    for k in 1..n {
        let q = peers(n - k);
        let (qo, ql) = range(q);
        // SAFETY: block q lies within `sendbuf`, which the caller keeps readable; waited below.
        match unsafe { cx.isend(sendbuf.add(qo), ql, q) } {
            Ok(s) => sends.push(s),
            Err(e) => result = Err(e),
        }
    }
    for (k, &(r, p)) in recvs.iter().enumerate() {
        let got = cx.wait_recv(r, ml, p);
        if got.is_ok() && result.is_ok() {
            // SAFETY: slot k of `incoming` and `own` each hold `ml / size` elements, disjoint.
            unsafe { red.apply(incoming.as_ptr().add(k * ml), own.as_mut_ptr(), ml / size) };
        }
        result = result.and(got);
    }
    // Every peer has read its block of `sendbuf` once these complete: only now may `recvbuf`
    // (possibly the same buffer) be written.
    let sent = cx.wait_sends(&sends);
    result?;
    sent?;
    let mut result: MpiResult = Ok(());
    let all = cx.phase(1);
    // SAFETY: my block lies within `recvbuf`; `own` holds it.
    unsafe { std::ptr::copy_nonoverlapping(own.as_ptr(), recvbuf.add(mo), ml) };
    let mut recvs = Vec::with_capacity(n - 1);
    sends.clear();
    for k in 1..n {
        let p = peers(k);
        let (po, pl) = range(p);
        // SAFETY: block p lies within `recvbuf` and is written by nobody else; waited below.
        recvs.push((unsafe { all.irecv(recvbuf.add(po), pl, p) }, p, pl));
    }
    for k in 1..n {
        let q = peers(n - k);
        // SAFETY: `own` (my finished block, also at `recvbuf + mo`) outlives the sends.
        match unsafe { all.isend(own.as_ptr(), ml, q) } {
            Ok(s) => sends.push(s),
            Err(e) => result = Err(e),
        }
    }
    for &(r, p, pl) in &recvs {
        result = result.and(all.wait_recv(r, pl, p));
    }
    let sent = all.wait_sends(&sends);
    result.and(sent)
}
