//! MPI_Allreduce as the pre-reduced ring (PRR) of Proficz 2018 ("Improving all-reduce
//! collective operations for imbalanced process arrival patterns"), for commutative ops.
//!
//! The ring (`ring.rs`) moves the least data per rank but makes every rank wait for the
//! slowest at each of its 2 (n-1) steps. Here the ranks predicted to arrive early (the
//! agreed pattern of `clairvoyant_pap::arrivals`) do not join it: while the others still
//! compute, they combine their vectors along a sorted chain (`sorted_linear::chain`) into the
//! latest of them, the hub. The ring then runs over the hub and the late ranks only, with
//! the hub contributing the pre-reduced vector, and the hub finally broadcasts the result to the
//! early ranks (`bcast_arrival::among`).
//!
//! Early means predicted to arrive more than one ring's time (the whole vector moved twice:
//! `2 segments rounds`) before the last rank: those have finished the chain when the ring
//! starts. With fewer than two early ranks there is nothing to pre-reduce and the ring takes
//! every rank, in arrival order. A wrong prediction costs time, never correctness.
use super::bcast_arrival::{among, arrival_order};
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// Phases: the pre-reducing chain, the ring, the broadcast to the early ranks.
const PHASE_CHAIN: i32 = 11;
const PHASE_RING: i32 = 12;
const PHASE_BCAST: i32 = 13;

/// How many ranks, in arrival order, pre-reduce: those predicted at least `ring` quanta before
/// the last arrival (0 when fewer than two).
pub fn early_count(pattern: &[i64], ring: i64) -> usize {
    let last = pattern.iter().max().copied().unwrap_or(0);
    let early = pattern.iter().filter(|&&t| t.saturating_add(ring) < last).count();
    if early >= 2 { early } else { 0 }
}

/// The pre-reduced ring for arrival `pattern` (quanta, identical on every rank), `ring` the
/// predicted time of the ring in quanta, the chain cut into `segments` segments.
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red` must be commutative.
#[allow(clippy::too_many_arguments)]
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, pattern: &[i64], ring: i64, segments: usize) -> MpiResult {
    let order = arrival_order(pattern);
    let early = early_count(pattern, ring);
    if early == 0 {
        // SAFETY: per this function's contract.
        return unsafe { super::ring::among(&cx.phase(PHASE_RING), &order, sendbuf, recvbuf, count, red) };
    }
    let me = cx.rank();
    let hub = order[early - 1];
    let pos = order.iter().position(|&r| r == me).expect("a permutation of the ranks");
    // SAFETY: per this function's contract. The hub's pre-reduced vector is in its recvbuf, which
    // it contributes to the ring in place.
    unsafe {
        if pos < early {
            super::sorted_linear::chain(&cx.phase(PHASE_CHAIN), &order[..early], sendbuf, recvbuf, count, red, segments)?;
        }
        if pos >= early - 1 {
            let own = if me == hub { recvbuf as *const u8 } else { sendbuf };
            super::ring::among(&cx.phase(PHASE_RING), &order[early - 1..], own, recvbuf, count, red)?;
        }
        if pos < early {
            let mut to: Vec<usize> = Vec::with_capacity(early);
            to.push(hub);
            to.extend_from_slice(&order[..early - 1]);
            among(&cx.phase(PHASE_BCAST), recvbuf, count * red.size, &to)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::early_count;

    #[test]
    fn early_ranks_are_those_a_ring_ahead() {
        assert_eq!(early_count(&[0, 0, 0, 0], 5), 0);
        assert_eq!(early_count(&[0, 100, 3, 50], 10), 3);
        // One early rank alone has nothing to pre-reduce with.
        assert_eq!(early_count(&[0, 100, 95, 99], 10), 0);
        assert_eq!(early_count(&[0, 1, 100, 100], 10), 2);
    }
}
