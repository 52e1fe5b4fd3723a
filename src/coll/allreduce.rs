//! MPI_Allreduce algorithms: `recursive_doubling` (here), `rabenseifner` (`rabenseifner.rs`),
//! `ring` (`ring.rs`), `direct` (`direct.rs`), `shared` (here), and the PAP-aware ones for
//! imbalanced arrivals (issue 21 item 3): `clairvoyant` (`allreduce_clairvoyant.rs`),
//! `sorted_linear` (`sorted_linear.rs`) and `prereduced_ring` (`prereduced_ring.rs`), and the
//! shared-memory ones `shm_large` (processes mode, `shm_large.rs`) and `slices` (threads mode,
//! `allreduce_slices.rs`). All but `recursive_doubling`, `shared`, `shm_large` and `slices`
//! need a commutative op; the others fall back to recursive doubling.
//!
//! `recursive_doubling`: (Thakur, Rabenseifner & Gropp 2005, section 4.5) with the
//! fold-in step for rank counts that are not a power of two.
//!
//! With `p` the largest power of two <= n and `rem = n - p`, the first `2 rem` ranks pair up: each
//! even rank hands its data to the odd rank above it and sits out. The `p` remaining ranks exchange
//! full vectors with the partner `newrank ^ 2^k` in round k, then the odd ranks hand the result back.
//!
//! Every combination puts the lower ranks' operand first, so the result is the rank-order
//! reduction tree `((a0 op a1) op (a2 op a3)) ...` on every rank: all ranks get bit-identical
//! results even for floating point, and ops that are only commutative up to tie-breaking (MAX on
//! +0.0/-0.0 or NaN) agree everywhere too.
use super::{Coll, TAG_ALLREDUCE};
use crate::comm::Comm;
use crate::error::MpiResult;
use crate::op::Reduction;
use crate::comm::Universe;

/// Reduces `count` elements from every rank into `recvbuf` on every rank. With MPI_IN_PLACE the
/// caller passes `sendbuf == recvbuf`.
///
/// # Safety
/// `sendbuf` must hold `count` readable elements of `red`'s datatype and `recvbuf` `count`
/// writable ones; the two are the same buffer or disjoint.
pub unsafe fn allreduce_internal(u: &Universe, c: &Comm, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe { recursive_doubling(&Coll::fixed(u, c, TAG_ALLREDUCE), sendbuf, recvbuf, count, red) }
}

/// `allreduce_internal` with its messages on `tag`: internal users that may run alongside the
/// application's own collectives on the same communicator (MPI_Comm_idup's agreement) take a tag
/// of their own so the two never match each other.
///
/// # Safety
/// As `allreduce_internal`.
pub unsafe fn allreduce_tagged(u: &Universe, c: &Comm, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, tag: i32) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe { recursive_doubling(&Coll::fixed(u, c, tag), sendbuf, recvbuf, count, red) }
}

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["recursive_doubling", "rabenseifner", "ring", "direct", "shared", "clairvoyant", "sorted_linear", "prereduced_ring", "shm_large", "slices", "flat"];

/// Indices of the PAP-aware algorithms in `ALGORITHMS` (issue 21 item 3).
const CLAIRVOYANT: usize = 5;
const SORTED_LINEAR: usize = 6;
const PREREDUCED_RING: usize = 7;
/// Processes mode: reduce-scatter + allgather through the communicator's shared region
/// (`shm_large`); elsewhere forcing it falls back to the automatic choice.
const SHM_LARGE: usize = 8;
/// Threads mode: single copy between the ranks' buffers, each rank reducing its slice
/// (`allreduce_slices`); elsewhere forcing it falls back to the automatic choice.
const SLICES: usize = 9;
/// Every rank publishes its vector and folds everybody's in rank order (`flat`); `auto` for
/// vectors up to `flat::MAX` bytes on 2 to 8 ranks that do not outnumber the CPUs.
const FLAT: usize = 10;

/// Threads mode: reductions of at least this many bytes run `slices`. Measured with
/// benches/coll_latency.c (threads mode, 2 cores under a load average of 4.3 from other jobs,
/// interleaved with the former choice, us): 2 ranks 32 KiB 2-11 against recursive doubling's
/// 12-62, 256 KiB 14-26 against 156-844, 1 MiB 150 against 520-1464; 8 ranks 32 KiB 25-35
/// against 45-87, 256 KiB 256-338 against 640-677, 1 MiB 552-1313 against 1327-3076.
const SLICES_MIN: usize = 32 << 10;

/// Commutative reductions of at least this many bytes record and share their arrival times
/// (`clairvoyant_pap`), and `auto` runs them PAP-aware when the predicted imbalance is above 1.
const PAP_MIN: usize = 256 << 10;

/// Threads mode: reductions up to this many bytes meet in the communicator's shared arena.
/// Measured (benches/ring_allreduce.c, 16 ranks on 2 cores, 8 bytes): one arena episode per call
/// instead of log2(n) message rounds; beyond a few KiB the last arriver's serial combination
/// over every contribution loses to the parallel algorithms.
const SHARED_MAX: usize = 4 << 10;

/// Processes mode: reductions of at least this many bytes go through the communicator's shared
/// region (`shm_large`), where it has one. Measured with benches/coll_latency.c on 2 cores
/// under a load average of 8 from other builds (medians of 3 interleaved runs, us, MPI_SUM on
/// doubles): 8 ranks 32 KiB 84 against recursive doubling's 295 (Open MPI 1923), 256 KiB 1669
/// against 2404 (3601), 1 MiB 3091 against the ring's 6451 (9235); 2 ranks (quietest run)
/// 32 KiB 9.5, 256 KiB 241, 1 MiB 285 against Open MPI's 89, 583, 369.
const SHM_LARGE_MIN: usize = 4 << 10;

/// Commutative reductions of at least this many bytes leave recursive doubling.
const MEDIUM_MIN: usize = 32 << 10;
/// Commutative reductions of at least this many bytes use the ring.
const LARGE_MIN: usize = 512 << 10;

/// MPI_Allreduce: the algorithm `select` picks.
///
/// # Safety
/// As `allreduce_internal`.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let arrived = super::clairvoyant_pap::now_ns();
    let n = cx.size();
    let bytes = count * red.size;
    let forced = super::select::forced(super::select::Collective::Allreduce, ALGORITHMS)?;
    if forced.is_none() && red.commutative() && n > 1 && bytes > 0 {
        if let Some(l) = super::hierarchical::Layout::of(cx) {
            // SAFETY: per this function's contract; the op is commutative.
            return unsafe { super::hierarchical::allreduce(cx, &l, sendbuf, recvbuf, count, red) };
        }
    }
    if n > 1 && bytes > 0 {
        // Rank-order folds: any op.
        if let Some(a) = super::flat::arena(cx, forced == Some(FLAT), forced.is_none())? {
            // SAFETY: per this function's contract; `rest` gets buffers of `count` elements.
            return unsafe { super::flat::allreduce(cx, a, sendbuf, recvbuf, count, red, |s, r, k| beyond_flat(cx, s, r, k, red, forced, arrived)) };
        }
    }
    // SAFETY: per this function's contract.
    unsafe { beyond_flat(cx, sendbuf, recvbuf, count, red, forced, arrived) }
}

/// The algorithms other than `flat` (`forced`: the forced choice; `arrived`: when the call
/// began).
///
/// # Safety
/// As `allreduce_internal`.
unsafe fn beyond_flat(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, forced: Option<usize>, arrived: i64) -> MpiResult {
    let n = cx.size();
    let bytes = count * red.size;
    // The block algorithms combine blocks in an order that depends on the rank layout: they need
    // a commutative op; the others get the rank-ordered recursive doubling.
    let arena = super::arena::of(cx)?.filter(|_| n > 1);
    if let Some(a) = arena.filter(|a| bytes <= a.capacity()) {
        // The arena combines in rank order, so it serves non-commutative ops too.
        if forced == Some(4) || (forced.is_none() && bytes <= SHARED_MAX) {
            // SAFETY: per this function's contract.
            return unsafe { shared(cx, a, sendbuf, recvbuf, count, red) };
        }
    }
    // So does the shared region's reduce-scatter + allgather.
    if let Some(a) = arena.filter(|a| bytes > 0 && super::shm_large::usable(a, red.size)) {
        if forced == Some(SHM_LARGE) || (forced.is_none() && bytes >= SHM_LARGE_MIN) {
            // SAFETY: per this function's contract.
            return unsafe { super::shm_large::allreduce(cx, a, sendbuf, recvbuf, count, red) };
        }
    }
    // Threads mode: single copy between the ranks' buffers (processes mode: `arena.region()`).
    if let Some(a) = arena.filter(|a| a.region().is_none()) {
        if forced == Some(SLICES) || (forced.is_none() && bytes >= SLICES_MIN && count >= n) {
            // SAFETY: per this function's contract.
            if unsafe { super::allreduce_slices::allreduce(cx, a, sendbuf, recvbuf, count, red) }? {
                return Ok(());
            }
        }
    }
    let forced = forced.filter(|&f| f != SHM_LARGE && f != SLICES && f != FLAT);
    let mut algo = if !red.commutative() || n == 1 || bytes == 0 { 0 } else { forced.unwrap_or_else(|| auto(bytes, count, n)) };
    // The PAP-aware algorithms combine in arrival order: commutative ops only. Candidate calls
    // share their arrival times whatever runs them (as MPI_Reduce's); the decision depends only
    // on arguments every rank passes alike.
    let pap_forced = matches!(forced, Some(CLAIRVOYANT | SORTED_LINEAR | PREREDUCED_RING));
    let min = if pap_forced { 1 } else { PAP_MIN };
    let pap = if red.commutative() && (pap_forced || forced.is_none()) && super::clairvoyant_pap::candidate(cx, count, red.size, min) {
        Some(super::clairvoyant_pap::arrivals(cx, arrived, count, red.size)?)
    } else {
        None
    };
    if forced.is_none() && pap.as_ref().is_some_and(|a| a.imbalance > 1.0) {
        algo = CLAIRVOYANT;
    }
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            1 => super::rabenseifner::allreduce(cx, sendbuf, recvbuf, count, red),
            2 => super::ring::allreduce(cx, sendbuf, recvbuf, count, red),
            3 => super::direct::allreduce(cx, sendbuf, recvbuf, count, red),
            CLAIRVOYANT => {
                let plan = match pap {
                    Some(a) => Some(a.into_plan(cx, super::allreduce_clairvoyant::choose_root)?),
                    None => None,
                };
                super::allreduce_clairvoyant::allreduce(cx, sendbuf, recvbuf, count, red, plan)
            }
            SORTED_LINEAR | PREREDUCED_RING => {
                // Without a pattern (a phase of a larger collective): rank order, one segment.
                let (pattern, segments, ring) = match &pap {
                    Some(a) => (a.pattern.clone(), a.segments, 2 * a.segments as i64 * a.round / a.quantum.max(1)),
                    None => (vec![0; n], 1, 0),
                };
                if algo == SORTED_LINEAR {
                    super::sorted_linear::allreduce(cx, sendbuf, recvbuf, count, red, &pattern, segments)
                } else {
                    super::prereduced_ring::allreduce(cx, sendbuf, recvbuf, count, red, &pattern, ring, segments)
                }
            }
            _ => recursive_doubling(cx, sendbuf, recvbuf, count, red),
        }
    }
}

/// The automatic choice for a commutative op: an index into `ALGORITHMS`.
///
/// Measured with benches/coll_sweep.c (MPI_SUM on doubles, best of 3 repetitions, microseconds
/// per call) on the 2-core development machine, shared (load average 15-20), so noisy:
///
/// ```text
///  n   bytes   recursive_doubling  rabenseifner   ring          |  MPICH    Open MPI
///              proc/thr            proc/thr       proc/thr      |
///  4   32 KiB     183/32             214/39         88/55       |  47249     761
///  4  256 KiB    1341/165            835/120       330/131      |  60009    4470
///  8   32 KiB     132/127           1486/269       769/149      |    -       308
///  8  256 KiB    2681/1258          4686/759      3651/416      |    -      2450
///  8    1 MiB   15295/17565        19180/6145     2542/1259     |    -     12607
///  8    4 MiB  127465/116428      138672/48312   14530/8908     |    -     59367
/// 16  256 KiB    4446/2000          8267/820     10293/3342     |    -       -
/// 16    1 MiB   26988/18784        33947/6230    17025/10614    |    -       -
/// ```
///
/// ("-": MPICH and Open MPI did not finish within 40 s, oversubscribed.) Small vectors want the
/// fewest rounds (recursive doubling). Large ones want the fewest bytes per rank, and
/// oversubscribed, a single partner per step: the ring. In between, Rabenseifner's halving wins
/// with threads; with processes, whose single-copy transfers cost a system call each, the ring
/// on few ranks and recursive doubling's fewer, larger messages on many.
fn auto(bytes: usize, count: usize, n: usize) -> usize {
    if bytes < MEDIUM_MIN || n <= 2 || count < n {
        0
    } else if bytes >= LARGE_MIN {
        2
    } else if super::select::threads_mode() {
        1
    } else if n <= 4 {
        2
    } else {
        0
    }
}

/// Through the communicator's shared arena (blocking calls; see `arena`): the last rank to arrive
/// folds every contribution right to left, `a0 op (a1 op (... op an-1))`, the order MPI defines,
/// and every rank copies the one result. Elsewhere (`arena::of` gives none) `shared` is not
/// available and forcing it falls back to recursive doubling.
///
/// # Safety
/// As `allreduce_internal`.
unsafe fn shared(cx: &Coll, arena: &super::arena::Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let bytes = count * red.size;
    let combine = |all: &[*const u8], out: *mut u8| {
        let last = *all.last().expect("n > 1");
        // SAFETY: each contribution holds `bytes` bytes (same count and type on every rank) and
        // stays valid until the episode completes; `out` has room for `bytes` (`episode`).
        unsafe {
            std::ptr::copy_nonoverlapping(last, out, bytes);
            for &a in all[..all.len() - 1].iter().rev() {
                red.apply(a, out, count);
            }
        }
    };
    // SAFETY: our contribution (sendbuf, or recvbuf in place) stays untouched until the episode
    // ends; the result has `bytes` bytes; recvbuf holds `bytes` and is not the result buffer.
    unsafe {
        let result = arena.episode(cx, cx.rank(), sendbuf, bytes, combine)?;
        std::ptr::copy_nonoverlapping(result.as_ptr(), recvbuf, bytes);
    }
    Ok(())
}

/// Recursive doubling, for every message size.
///
/// # Safety
/// As `allreduce_internal`.
pub unsafe fn recursive_doubling(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let n = cx.size();
    let rank = cx.rank();
    let bytes = count * red.size;
    if !std::ptr::eq(sendbuf, recvbuf) {
        // SAFETY: both hold `bytes` bytes and are disjoint (caller contract).
        unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
    }
    if n == 1 || bytes == 0 {
        return Ok(());
    }
    let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let rem = n - pof2;
    // The running result is in `cur`; `other` receives the partner's. The two swap roles when
    // the result of a combination lands in `other`, which saves a copy per round.
    let mut scratch = vec![0u8; bytes];
    let mut cur = recvbuf;
    let mut other = scratch.as_mut_ptr();

    // Fold-in: even ranks below 2 rem give their data to rank + 1.
    let newrank = if rank < 2 * rem {
        if rank & 1 == 0 {
            // SAFETY: `cur` (recvbuf) holds `bytes` readable bytes (caller contract).
            unsafe { cx.send(cur, bytes, rank + 1) }?;
            None
        } else {
            // SAFETY: `other` is `scratch`, `bytes` long.
            unsafe { cx.recv(other, bytes, rank - 1) }?;
            // SAFETY: `other` and `cur` are disjoint buffers of `count` elements.
            unsafe { red.apply(other, cur, count) };
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    };

    if let Some(newrank) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = if newdst < rem { newdst * 2 + 1 } else { newdst + rem };
            // SAFETY: `cur` and `other` are recvbuf and scratch (in some order), `bytes` each and disjoint.
            unsafe { cx.sendrecv(cur, bytes, dst, other, bytes, dst) }?;
            if newdst < newrank {
                // SAFETY: disjoint buffers of `count` elements; partner's (lower) operand first.
                unsafe { red.apply(other, cur, count) };
            } else {
                // SAFETY: as above; our (lower) operand first, the result lands in `other`.
                unsafe { red.apply(cur, other, count) };
                std::mem::swap(&mut cur, &mut other);
            }
            mask <<= 1;
        }
    }

    // Fold-out: odd ranks below 2 rem return the result to rank - 1.
    if rank < 2 * rem {
        if rank & 1 == 1 {
            // SAFETY: `cur` holds the `bytes`-byte result (recvbuf or scratch).
            unsafe { cx.send(cur, bytes, rank - 1) }?;
        } else {
            // SAFETY: `cur` is recvbuf here (the even rank never swapped), `bytes` writable bytes.
            unsafe { cx.recv(cur, bytes, rank + 1) }?;
        }
    }
    if cur != recvbuf {
        // SAFETY: `cur` is the scratch buffer here, disjoint from recvbuf; both hold `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(cur, recvbuf, bytes) };
    }
    Ok(())
}
