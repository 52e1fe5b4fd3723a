//! MPI_Reduce along a Clairvoyant schedule (`crate::clairvoyant`; Marendic et al. 2016,
//! Proficz & Ocetkiewicz 2021): the vector is cut into the schedule's N segments
//! (`super::block`), and each transfer (round, from, to, segment) is one message of that
//! segment's partial result.
//!
//! Execution is data-driven (`shared/design/clairvoyant.md` section 8): a rank walks its own
//! rounds in order, posting at most one receive and one send per round and waiting for both, so
//! a transfer waits for its data, never for a clock; a wrong arrival prediction costs time, never
//! correctness. Every round depends only on earlier rounds, so the walk cannot deadlock. P' makes
//! the segment sent in a round differ from the one received, so both can be in flight at once.
//! Messages carry the round in the tag's round bits (`Coll::tag_at`); between two ranks they
//! match in round order anyway (non-overtaking). Waiting for the send in its own round is
//! deliberate: a waiting sender of a large message copies half of it itself (split copies, see
//! `OXMPI_SPLIT`); leaving sends in flight across rounds measured slower.
//!
//! Data: each segment lives either in the caller's send buffer (the rank's own contribution,
//! read only) or in a private accumulator (the root's receive buffer, else one vector-sized
//! scratch allocated at the first receive). A combine into a segment still in the send buffer
//! receives straight into the accumulator and folds the own contribution in (commutative ops
//! only), so no segment is copied before it is needed. One more segment-sized buffer takes the
//! incoming data of combines into the accumulator. Scratch is thus at most one vector plus one
//! segment.
use super::{block, Coll};
use crate::clairvoyant::Schedule;
use crate::error::MpiResult;
use crate::op::Reduction;

/// This rank's part of round `round`: what it receives and what it sends.
#[derive(Clone, Copy, Default)]
struct Step {
    round: u64,
    recv: Option<(usize, usize, bool)>, // (from, segment, copy)
    send: Option<(usize, usize)>,       // (to, segment)
}

/// This rank's steps of `s`, in round order.
fn steps(s: &Schedule, me: usize) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for t in s.transfers.iter().filter(|t| t.from as usize == me || t.to as usize == me) {
        if out.last().map_or(true, |x| x.round != t.round) {
            out.push(Step { round: t.round, ..Default::default() });
        }
        let st = out.last_mut().expect("pushed above");
        if t.to as usize == me {
            st.recv = Some((t.from as usize, t.seg as usize, t.copy));
        } else {
            st.send = Some((t.to as usize, t.seg as usize));
        }
    }
    out
}

/// Reduces `count` elements along `sched` (built for `cx.size()` processes, root `root` and
/// `segments` segments, `segments <= count`). Arguments otherwise as `reduce::binomial`; `red`
/// must be commutative.
///
/// # Safety
/// As `reduce::binomial`.
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, sched: &Schedule, segments: usize) -> MpiResult {
    let me = cx.rank();
    let sz = red.size;
    let is_root = me == root;
    let in_place = is_root && std::ptr::eq(sendbuf, recvbuf);
    let seg = |s: usize| {
        let (start, len) = block(count, segments, s);
        (start * sz, len * sz, len)
    };
    // private[s]: the segment's partial result is in `acc` (else still in sendbuf).
    let mut private = vec![in_place; segments];
    let mut scratch: Option<Vec<u8>> = None;
    let mut acc: *mut u8 = if is_root { recvbuf } else { std::ptr::null_mut() };
    let max_seg = seg(0).1;
    let mut incoming: Vec<u8> = Vec::new();
    for st in steps(sched, me) {
        let tag = cx.tag_at(st.round as usize);
        let mut r = None;
        if let Some((from, s, copy)) = st.recv {
            if acc.is_null() {
                acc = scratch.insert(vec![0u8; count * sz]).as_mut_ptr();
            }
            let (off, bytes, _) = seg(s);
            // Into the accumulator when nothing is there to combine with yet (copy, or the own
            // contribution still in sendbuf); else into `incoming`.
            let dst = if copy || !private[s] {
                acc.wrapping_add(off)
            } else {
                if incoming.is_empty() {
                    incoming = vec![0u8; max_seg];
                }
                incoming.as_mut_ptr()
            };
            // SAFETY: `dst` has `bytes` writable bytes (a segment of acc, or incoming, which is
            // at least the largest segment) that nothing else touches until the wait below.
            r = Some((unsafe { cx.irecv_world(dst, bytes, cx.c.world_rank(from), tag) }, from, s, copy, bytes));
        }
        let mut sreq = None;
        if let Some((to, s)) = st.send {
            let (off, bytes, _) = seg(s);
            let src = if private[s] { acc.wrapping_add(off) as *const u8 } else { sendbuf.wrapping_add(off) };
            // SAFETY: the segment is `bytes` readable bytes of acc or sendbuf; P' guarantees it is
            // not the segment received this round, and the send is waited for before the next.
            sreq = Some(unsafe { cx.isend_world(src, bytes, cx.c.world_rank(to), tag) });
        }
        let mut res = Ok(());
        if let Some((req, from, s, copy, bytes)) = r {
            res = cx.wait_recv(req, bytes, from);
            if res.is_ok() && !copy {
                let (off, _, len) = seg(s);
                // SAFETY: disjoint buffers of `len` elements: the received partial result and
                // either the accumulator's segment or (first combine) the own contribution,
                // folded into the accumulator where the message landed (commutative op).
                unsafe {
                    if private[s] {
                        red.apply(incoming.as_ptr(), acc.wrapping_add(off), len);
                    } else {
                        red.apply(sendbuf.wrapping_add(off), acc.wrapping_add(off), len);
                    }
                }
            }
            private[s] = true;
        }
        if let Some(sr) = sreq {
            cx.wait_sends(&[sr?]);
        }
        res?;
    }
    if is_root {
        // Segments the root never received (only with one process): its own contribution.
        for s in (0..segments).filter(|&s| !private[s]) {
            let (off, bytes, _) = seg(s);
            // SAFETY: sendbuf and recvbuf hold the vector and are disjoint (not in place here).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf.wrapping_add(off), recvbuf.wrapping_add(off), bytes) };
        }
    }
    Ok(())
}
