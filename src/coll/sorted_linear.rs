//! MPI_Allreduce as the sorted linear tree (SLT) of Proficz 2018 ("Improving all-reduce
//! collective operations for imbalanced process arrival patterns"), for commutative ops.
//!
//! The ranks are sorted by predicted arrival (`clairvoyant_pap::arrivals`, the same pattern on
//! every rank). The earliest passes its vector to the second, which combines its own and passes
//! the partial result on, and so on: the partial result grows along the chain while the later
//! ranks still compute, and the last to arrive finds everything but its own contribution
//! combined, waiting for it. It combines once and broadcasts the result (`bcast::classic`; every
//! rank has arrived by then). The chain is pipelined by segments, so a rank forwards segment s
//! while the next one is still coming.
//!
//! A wrong prediction costs time, never correctness: each transfer waits for its data.
use super::{block, Coll};
use crate::error::MpiResult;
use crate::op::Reduction;

/// Phases: the chain, the broadcast.
const PHASE_CHAIN: i32 = 11;
const PHASE_BCAST: i32 = 13;

/// The sorted linear tree for arrival `pattern` (quanta, identical on every rank), the chain cut
/// into `segments` segments (1..=count).
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red` must be commutative.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, pattern: &[i64], segments: usize) -> MpiResult {
    let order = super::bcast_arrival::arrival_order(pattern);
    let last = *order.last().expect("one rank or more");
    // SAFETY: per this function's contract.
    unsafe {
        chain(&cx.phase(PHASE_CHAIN), &order, sendbuf, recvbuf, count, red, segments)?;
        super::bcast::classic(&cx.phase(PHASE_BCAST), recvbuf, count * red.size, last)
    }
}

/// Reduces the contributions of `members` (communicator ranks in chain order, this rank among
/// them) into `recvbuf` at the last member, segment by segment. Every member's `recvbuf` may be
/// written (it takes the partial result passed on); only the last one's holds the result.
///
/// # Safety
/// As `allreduce`.
pub unsafe fn chain(cx: &Coll, members: &[usize], sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, segments: usize) -> MpiResult {
    let me = cx.rank();
    let Some(pos) = members.iter().position(|&r| r == me) else { return Ok(()) };
    let size = red.size;
    let in_place = std::ptr::eq(sendbuf, recvbuf);
    let segments = segments.clamp(1, count.max(1));
    let seg = |s: usize| {
        let (start, len) = block(count, segments, s);
        (start * size, len * size, len)
    };
    let next = members.get(pos + 1).copied();
    if pos == 0 {
        if next.is_none() && !in_place {
            // SAFETY: both hold `count` elements and are disjoint (contract).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, count * size) };
        }
        let Some(to) = next else { return Ok(()) };
        // The own contribution goes on unchanged, straight from the send buffer.
        let mut sends = Vec::with_capacity(segments);
        for s in 0..segments {
            let (off, bytes, _) = seg(s);
            // SAFETY: the segment lies within `sendbuf`; the sends are waited for below.
            sends.push(unsafe { cx.isend(sendbuf.add(off), bytes, to)? });
        }
        return cx.wait_sends(&sends);
    }
    let from = members[pos - 1];
    // The incoming partial results land in `recvbuf` itself and the own contribution is folded
    // in; in place, the own contribution is there, so they land in a private vector instead.
    let mut tmp = if in_place { vec![0u8; count * size] } else { Vec::new() };
    let land = if in_place { tmp.as_mut_ptr() } else { recvbuf };
    // Every receive is posted at once: a segment that arrives while an earlier one is being
    // combined is already in place.
    let recvs: Vec<_> = (0..segments)
        .map(|s| {
            let (off, bytes, _) = seg(s);
            // SAFETY: the segment lies within `land` (recvbuf or tmp, `count` elements), untouched
            // until its receive completes.
            unsafe { cx.irecv(land.add(off), bytes, from) }
        })
        .collect();
    let mut sends = Vec::with_capacity(segments);
    let mut result = Ok(());
    for (s, &r) in recvs.iter().enumerate() {
        let (off, bytes, len) = seg(s);
        if let Err(e) = cx.wait_recv(r, bytes, from) {
            result = Err(e);
            // The remaining receives still complete (same sender, same collective).
            continue;
        }
        // SAFETY: disjoint `len`-element cells: the received partial result folded into the own
        // contribution in place, else the own contribution folded into the received one.
        unsafe {
            if in_place {
                red.apply(land.add(off), recvbuf.add(off), len);
            } else {
                red.apply(sendbuf.add(off), recvbuf.add(off), len);
            }
        }
        if let Some(to) = next {
            // SAFETY: the segment of recvbuf is complete and not written again before the sends
            // are waited for.
            match unsafe { cx.isend(recvbuf.add(off), bytes, to) } {
                Ok(q) => sends.push(q),
                // Not returned yet: the posted receives still write into `land`.
                Err(e) => result = result.and(Err(e)),
            }
        }
    }
    let sent = cx.wait_sends(&sends);
    result.and(sent)
}
