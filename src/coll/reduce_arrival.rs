//! MPI_Reduce in the observed arrival order (issue 21: the tail after the last arrival down to
//! one transfer and one combine of its vector), for commutative ops on one node.
//!
//! The arrival board's plan cell numbers the members in the order they enter the call
//! (`runtime::pap_board::CellRef::arrival`): no prediction, so wrong, late or missing progress
//! reports cannot mislead it. The members that enter before the root form a chain in that
//! order: each receives the partial result of its predecessor, folds its own contribution in,
//! and passes it on to whoever enters next, so the partial result grows while the later ranks
//! still compute (the sorted linear tree of Proficz 2018, with the order observed instead of
//! predicted). The root takes the chain's result and folds in its own; every member that enters
//! after the root sends its raw vector to the root, which combines it as it comes. The last
//! member to enter therefore finds everything else combined: its vector crosses once and is
//! combined once, pipelined by segments.
//!
//! Threads mode: a member after the root sends the address of its send buffer instead, and the
//! root combines straight from it and acknowledges (one pass over the last arrival's data, no
//! copy); the member leaves its buffer alone until the acknowledgement.
//!
//! The chain waits for each link's data, never for a clock, and every member's predecessor
//! entered before it, so it cannot deadlock. A link passes each combined segment on as soon as
//! its successor has entered, so a chain that has fallen behind works on several links at once.
//! Its cost is still about one full-vector step per member: when ranks enter closer together
//! than a step, the chain falls behind, which is why `reduce::reduce` chooses it only when the
//! arrivals are spread widely (and not for large vectors on a crowded processes-mode node).
use super::{block, Coll};
use crate::error::MpiResult;
use crate::op::Reduction;
use crate::p2p::ReqId;
use crate::runtime::pap_board::CellRef;

/// Phase of the chain's and the late members' transfers.
const PHASE: i32 = 12;

/// Reduces `count` elements to `root` in the arrival order of `cell` (this call's plan cell, that
/// this rank has entered), cut into `segments` segments (1..=count).
///
/// # Safety
/// As `reduce::binomial`; `red` must be commutative.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, cell: CellRef, segments: usize) -> MpiResult {
    let me = cx.rank();
    let n = cx.size();
    let pos = cell.position(me).ok_or_else(|| crate::error::err(crate::error::ErrorClass::Intern, "reduce in arrival order: this rank has no position"))?;
    // Wake whoever may wait for this position: the predecessor and the root.
    if pos > 0 {
        if let Some(p) = cell.arrival(pos - 1) {
            cx.u.engine.ring_rank(cx.c.world_rank(p));
        }
    }
    if me != root {
        cx.u.engine.ring_rank(cx.c.world_rank(root));
    }
    // The root entered before this rank iff it holds an earlier position (positions are taken
    // under the cell's lock, so an earlier one is visible).
    let root_before = (0..pos).any(|p| cell.arrival(p) == Some(root));
    let cx = cx.phase(PHASE);
    let size = red.size;
    let segments = segments.clamp(1, count.max(1));
    let seg = |s: usize| {
        let (start, len) = block(count, segments, s);
        (start * size, len * size, len)
    };
    // Waits until position `p` is taken; its member.
    let member_at = |p: usize| -> MpiResult<usize> {
        cx.u.engine.wait_for_collective(cx.c.context, &cx.c.group, || cell.arrival(p).is_some())?;
        Ok(cell.arrival(p).expect("waited for"))
    };
    if me == root {
        // SAFETY: per this function's contract.
        return unsafe { root_part(&cx, sendbuf, recvbuf, count, red, pos, n, &seg, segments, &member_at, cell) };
    }
    if root_before {
        // A member after the root: its raw vector goes to the root.
        if super::select::threads_mode() {
            let msg = [sendbuf as u64, (count * size) as u64];
            let mut ack = 0u8;
            // SAFETY: 16 readable bytes and 0 writable ones, waited for below.
            let (sent, acked) = unsafe { (cx.isend(msg.as_ptr() as *const u8, 16, root)?, cx.irecv(&mut ack, 0, root)) };
            cx.wait_sends(&[sent])?;
            // The root reads `sendbuf` until it acknowledges.
            return cx.wait_recv(acked, 0, root);
        }
        let mut sends = Vec::with_capacity(segments);
        for s in 0..segments {
            let (off, bytes, _) = seg(s);
            // SAFETY: the segment lies within `sendbuf`; the sends are waited for below.
            sends.push(unsafe { cx.isend(sendbuf.add(off), bytes, root)? });
        }
        return cx.wait_sends(&sends);
    }
    // A link of the chain before the root: fold the predecessor's partial result (if any) into a
    // private accumulator with the own contribution, then pass it on.
    if pos == 0 {
        let to = member_at(1)?;
        let mut sends = Vec::with_capacity(segments);
        for s in 0..segments {
            let (off, bytes, _) = seg(s);
            // SAFETY: the segment lies within `sendbuf`; the sends are waited for below.
            sends.push(unsafe { cx.isend(sendbuf.add(off), bytes, to)? });
        }
        return cx.wait_sends(&sends);
    }
    let from = cell.arrival(pos - 1).expect("an earlier position is taken");
    let mut acc = vec![0u8; count * size];
    // SAFETY: `acc` holds `count` elements; the own contribution is folded into it, and each
    // combined segment goes on as soon as the successor is known.
    let r = unsafe { relay(&cx, acc.as_mut_ptr(), sendbuf, red, &seg, segments, from, pos + 1, &member_at, cell) };
    drop(acc);
    r
}

/// A chain link after the first: receives the predecessor `from`'s partial result segment by
/// segment into `acc`, folds `own` in, and sends each combined segment to the member at position
/// `next` as soon as that member has entered, so that a chain that has fallen behind (its
/// members all there, the data still travelling) works on several links at once instead of one
/// whole vector per link in turn.
///
/// # Safety
/// `acc` holds `count` writable elements (as `seg` cuts them), private to this call; `own`
/// `count` readable elements disjoint from it; `red` commutative.
#[allow(clippy::too_many_arguments)]
unsafe fn relay(
    cx: &Coll,
    acc: *mut u8,
    own: *const u8,
    red: &Reduction,
    seg: &dyn Fn(usize) -> (usize, usize, usize),
    segments: usize,
    from: usize,
    next: usize,
    member_at: &dyn Fn(usize) -> MpiResult<usize>,
    cell: CellRef,
) -> MpiResult {
    // SAFETY: `acc` holds every segment (caller contract), untouched until its receive completes.
    let recvs = unsafe { post_segments(cx, acc, seg, segments, from) };
    let mut result = Ok(());
    let mut to = None;
    let mut sends = Vec::with_capacity(segments);
    for (s, &r) in recvs.iter().enumerate() {
        let (off, bytes, len) = seg(s);
        if let Err(e) = cx.wait_recv(r, bytes, from) {
            // Every receive is still waited for: they write into `acc`.
            result = result.and(Err(e));
            continue;
        }
        // SAFETY: disjoint `len`-element cells (contract); commutative op.
        unsafe { red.apply(own.add(off), acc.add(off), len) };
        if result.is_ok() {
            to = to.or_else(|| cell.arrival(next));
            if let Some(t) = to {
                // SAFETY: segments 0..=s of `acc` are combined, alive until the sends are waited for.
                result = unsafe { send_upto(cx, acc, seg, t, &mut sends, s + 1) };
            }
        }
    }
    if result.is_ok() && sends.len() < segments {
        match to.map_or_else(|| member_at(next), Ok) {
            Ok(t) => {
                // SAFETY: every segment of `acc` is combined by now, alive as above.
                result = unsafe { send_upto(cx, acc, seg, t, &mut sends, segments) };
            }
            Err(e) => result = Err(e),
        }
    }
    // The posted sends read `acc`: wait for them whatever happened.
    result.and(cx.wait_sends(&sends))
}

/// The root's part: the chain's result (if members entered before it) folded with its own
/// contribution, then the raw vector of every member after it, as each enters.
///
/// # Safety
/// As `reduce`.
#[allow(clippy::too_many_arguments)]
unsafe fn root_part(
    cx: &Coll,
    sendbuf: *const u8,
    recvbuf: *mut u8,
    count: usize,
    red: &Reduction,
    pos: usize,
    n: usize,
    seg: &dyn Fn(usize) -> (usize, usize, usize),
    segments: usize,
    member_at: &dyn Fn(usize) -> MpiResult<usize>,
    cell: CellRef,
) -> MpiResult {
    let size = red.size;
    let in_place = std::ptr::eq(sendbuf, recvbuf);
    // Incoming vectors land here, to be combined into recvbuf.
    let mut tmp = vec![0u8; count * size];
    let land = tmp.as_mut_ptr();
    let mut result = Ok(());
    if pos == 0 {
        if !in_place {
            // SAFETY: both hold `count` elements and are disjoint (not in place).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, count * size) };
        }
    } else {
        let from = cell.arrival(pos - 1).expect("an earlier position is taken");
        // The chain's result lands in recvbuf itself and the own contribution is folded in; in
        // place, the own contribution is there, so it lands in `tmp` instead.
        let dst = if in_place { land } else { recvbuf };
        // SAFETY: per this function's contract.
        result = unsafe { take(cx, dst, recvbuf, if in_place { None } else { Some(sendbuf) }, red, seg, segments, from) };
    }
    let threads = super::select::threads_mode();
    for p in pos + 1..n {
        if result.is_err() {
            break;
        }
        let from = member_at(p)?;
        if threads {
            // SAFETY: per this function's contract.
            result = unsafe { take_from_address(cx, recvbuf, count * size, red, from) };
            continue;
        }
        // SAFETY: per this function's contract.
        result = unsafe { take(cx, land, recvbuf, None, red, seg, segments, from) };
    }
    drop(tmp);
    result
}

/// Threads mode: combines `from`'s send buffer, whose address it sends, into `acc` (`bytes`
/// bytes), then acknowledges.
///
/// # Safety
/// `acc` holds `bytes` writable bytes of `red`'s type.
unsafe fn take_from_address(cx: &Coll, acc: *mut u8, bytes: usize, red: &Reduction, from: usize) -> MpiResult {
    let mut msg = [0u64; 2];
    // SAFETY: 16 writable bytes, waited for below.
    let r = unsafe { cx.irecv(msg.as_mut_ptr() as *mut u8, 16, from) };
    cx.wait_recv(r, 16, from)?;
    if msg[1] != bytes as u64 || msg[0] == 0 {
        return Err(crate::error::err(crate::error::ErrorClass::Intern, format!("reduce in arrival order: rank {from} announced {} bytes, expected {bytes}", msg[1])));
    }
    // SAFETY: `msg[0]` is the sender's send buffer of `bytes` bytes in this process (threads
    // mode), unchanged until our acknowledgement; `acc` is ours and disjoint from it.
    unsafe { red.apply(msg[0] as usize as *const u8, acc, bytes / red.size) };
    let nothing = std::ptr::NonNull::<u8>::dangling().as_ptr();
    // SAFETY: zero bytes are sent.
    let ack = unsafe { cx.isend(nothing, 0, from)? };
    cx.wait_sends(&[ack])
}

/// Sends to `to` the segments of `buf` (as `seg` cuts it) from `sends.len()` up to `upto`,
/// pushing each request onto `sends`; stops at the first failure.
///
/// # Safety
/// Those segments of `buf` stay alive and unchanged until the requests are waited for.
unsafe fn send_upto(cx: &Coll, buf: *mut u8, seg: &dyn Fn(usize) -> (usize, usize, usize), to: usize, sends: &mut Vec<ReqId>, upto: usize) -> MpiResult {
    while sends.len() < upto {
        let (off, bytes, _) = seg(sends.len());
        // SAFETY: the segment lies within `buf` (caller contract).
        sends.push(unsafe { cx.isend(buf.add(off), bytes, to) }?);
    }
    Ok(())
}

/// Posts one receive from `from` per segment of `buf` (as `seg` cuts it), in segment order.
///
/// # Safety
/// `buf` holds every segment and nothing touches a segment until its receive completes.
unsafe fn post_segments(cx: &Coll, buf: *mut u8, seg: &dyn Fn(usize) -> (usize, usize, usize), segments: usize, from: usize) -> Vec<ReqId> {
    (0..segments)
        .map(|s| {
            let (off, bytes, _) = seg(s);
            // SAFETY: the segment lies within `buf` (caller contract).
            unsafe { cx.irecv(buf.add(off), bytes, from) }
        })
        .collect()
}

/// Receives `from`'s vector segment by segment into `land` and combines each segment as it
/// comes: with `own`, the own contribution is folded into `land` (which is then `acc`);
/// without, `land` is folded into `acc`.
///
/// # Safety
/// `land` and `acc` hold `count` elements (as `seg` cuts them), the same buffer only with `own`;
/// `own`, if given, `count` readable elements disjoint from both.
#[allow(clippy::too_many_arguments)]
unsafe fn take(cx: &Coll, land: *mut u8, acc: *mut u8, own: Option<*const u8>, red: &Reduction, seg: &dyn Fn(usize) -> (usize, usize, usize), segments: usize, from: usize) -> MpiResult {
    // SAFETY: `land` holds every segment (caller contract), untouched until its receive completes.
    let recvs = unsafe { post_segments(cx, land, seg, segments, from) };
    let mut result = Ok(());
    for (s, &r) in recvs.iter().enumerate() {
        let (off, bytes, len) = seg(s);
        if let Err(e) = cx.wait_recv(r, bytes, from) {
            result = result.and(Err(e));
            continue;
        }
        // SAFETY: disjoint `len`-element cells (contract); commutative op.
        unsafe {
            match own {
                Some(o) => red.apply(o.add(off), land.add(off), len),
                None => red.apply(land.add(off), acc.add(off), len),
            }
        }
    }
    result
}
