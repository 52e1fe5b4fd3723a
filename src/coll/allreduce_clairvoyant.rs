//! MPI_Allreduce as a Clairvoyant reduce followed by a broadcast (`clairvoyant`; issue 21 item
//! 3), for commutative ops.
//!
//! The reduce runs the Clairvoyant schedule (`clairvoyant_exec`) for the agreed arrival pattern
//! (`clairvoyant_pap::arrivals`), with live re-planning as MPI_Reduce's. Unlike MPI_Reduce, the
//! root is free: `choose_root` takes whichever candidate's schedule finishes first, so the
//! result appears as early as the pattern allows. That root then broadcasts it
//! (`bcast::classic`): it finishes the reduce last, when every other rank has arrived and
//! waits, so the broadcast tree need not care about arrivals.
use super::clairvoyant_pap::Plan;
use super::Coll;
use crate::clairvoyant::{cache, Problem};
use crate::error::MpiResult;
use crate::op::Reduction;

/// The broadcast's phase (the reduce uses the call's own tag and the executor's phases).
const PHASE_BCAST: i32 = 13;

/// The root whose schedule finishes first among the candidates: the last predicted arrival
/// (it finds everything else combined and needs no hop after its own) and the first (it can
/// take in partial results the longest). Ties go to the last arrival; lowest rank among equal
/// arrivals. Depends on its arguments only (`Arrivals::into_plan`).
pub fn choose_root(pattern: &[i64], pb: &Problem) -> usize {
    let n = pattern.len();
    let last = (0..n).max_by_key(|&r| (pattern[r], std::cmp::Reverse(r))).unwrap_or(0);
    let first = (0..n).min_by_key(|&r| (pattern[r], r)).unwrap_or(0);
    if first == last {
        return last;
    }
    let rounds = |root: usize| cache::get(&Problem { root, ..pb.clone() }).rounds();
    if rounds(first) < rounds(last) { first } else { last }
}

/// Reduces along `plan` (from `Arrivals::into_plan` with `choose_root`) to its root, which
/// broadcasts the result; without a plan (a phase of a larger collective), along the schedule
/// for simultaneous arrivals to rank 0.
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red` must be commutative.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, plan: Option<Plan>) -> MpiResult {
    let bytes = count * red.size;
    // SAFETY: per this function's contract. At non-roots the reduce leaves `recvbuf` alone and
    // has finished reading `sendbuf` when it returns, so the broadcast may overwrite it (in place).
    unsafe {
        let root = match plan {
            Some(mut p) => {
                let live = p.live.take();
                super::clairvoyant_exec::reduce(cx, sendbuf, recvbuf, count, red, p.root, &p.sched, p.segments, live)?;
                p.root
            }
            None => {
                super::reduce::clairvoyant_balanced(cx, sendbuf, recvbuf, count, red, 0)?;
                0
            }
        };
        super::bcast::classic(&cx.phase(PHASE_BCAST), recvbuf, bytes, root)
    }
}
