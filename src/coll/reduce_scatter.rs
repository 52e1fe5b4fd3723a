//! MPI_Reduce_scatter and MPI_Reduce_scatter_block: the element-wise reduction of every rank's
//! vector, block i (`counts[i]` elements) of which ends at rank i. Algorithms (Thakur, Rabenseifner
//! & Gropp 2005, "Optimization of Collective Communication Operations in MPICH", section 4.4):
//!
//! * `reduce_scatterv`: reduce the whole vector to rank 0 (in rank order), then rank 0 sends each
//!   rank its block. Any op; the one non-commutative ops use.
//! * `pairwise`: n-1 rounds; in round i a rank sends the block of `rank + i` to it and receives
//!   its own block's contribution from `rank - i`, folding it in. Commutative ops.
//! * `recursive_halving`: log2 n rounds; in each a rank and its partner at distance n/2, n/4, ...
//!   swap the halves of the current range of blocks each does not keep, and fold in the half they
//!   keep. Commutative ops and a power-of-two rank count.
//!
//! A forced algorithm that cannot run the call (a non-commutative op, a rank count that is not a
//! power of two) falls back to `reduce_scatterv`, as MPICH does.
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["reduce_scatterv", "pairwise", "recursive_halving"];

/// Phases of `reduce_scatterv` and of the intercommunicator form (the intercommunicator's cross
/// messages use phase 2, see `inter::swap_cross`).
const REDUCE: i32 = 1;
const SCATTER: i32 = 3;

/// MPI_Reduce_scatter on an intracommunicator: the algorithm `select` picks.
///
/// # Safety
/// `sendbuf` holds `sum(counts)` readable elements of `red`'s size, `recvbuf` `counts[rank]`
/// writable ones, disjoint from `sendbuf`.
pub unsafe fn reduce_scatter(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, counts: &[usize], red: &Reduction) -> MpiResult {
    let n = cx.size();
    let pof2 = n.is_power_of_two();
    let total: usize = counts.iter().sum();
    let algo = match super::select::forced(super::select::Collective::ReduceScatter, ALGORITHMS)? {
        Some(a) => a,
        None if !red.commutative() => 0,
        None if pof2 && total * red.size <= 512 * 1024 => 2,
        None => 1,
    };
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            1 if red.commutative() => pairwise(cx, sendbuf, recvbuf, counts, red),
            2 if red.commutative() && pof2 => recursive_halving(cx, sendbuf, recvbuf, counts, red),
            _ => reduce_scatterv(cx, sendbuf, recvbuf, counts, red),
        }
    }
}

/// Element offsets of the blocks: `displs[i]` is where block i starts, `displs[n]` the total.
fn displs(counts: &[usize]) -> Vec<usize> {
    let mut d = Vec::with_capacity(counts.len() + 1);
    let mut at = 0;
    d.push(0);
    for &c in counts {
        at += c;
        d.push(at);
    }
    d
}

/// Rank 0 of `cx` sends block i of `full` (the reduced vector, significant there only) to every
/// rank i; the others receive theirs into `recvbuf`.
///
/// # Safety
/// At rank 0 `full` holds `sum(counts)` elements; `recvbuf` holds `counts[rank]` writable ones.
unsafe fn scatterv(cx: &Coll, full: *const u8, recvbuf: *mut u8, counts: &[usize], size: usize) -> MpiResult {
    let d = displs(counts);
    let me = cx.rank();
    if me != 0 {
        // SAFETY: recvbuf holds counts[me] elements (caller contract).
        return unsafe { cx.recv(recvbuf, counts[me] * size, 0) };
    }
    let mut sends = Vec::with_capacity(counts.len());
    for i in 1..counts.len() {
        // SAFETY: block i of `full` lies inside its `sum(counts)` elements; waited for below.
        match unsafe { cx.isend(full.add(d[i] * size), counts[i] * size, i) } {
            Ok(s) => sends.push(s),
            Err(e) => {
                // This error is the one to report; the others' are of the same collective.
                let _ = cx.wait_sends(&sends);
                return Err(e);
            }
        }
    }
    // SAFETY: block 0 of `full` and recvbuf (disjoint, counts[0] elements each).
    unsafe { std::ptr::copy_nonoverlapping(full, recvbuf, counts[0] * size) };
    cx.wait_sends(&sends)
}

/// Reduce to rank 0 in rank order, then scatter the blocks. Any op.
///
/// # Safety
/// As `reduce_scatter`.
pub unsafe fn reduce_scatterv(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, counts: &[usize], red: &Reduction) -> MpiResult {
    let total: usize = counts.iter().sum();
    let mut full = vec![0u8; if cx.rank() == 0 { total * red.size } else { 0 }];
    // SAFETY: sendbuf holds `total` elements; `full` is the result buffer at rank 0 (disjoint).
    unsafe { super::reduce::ordered(&cx.phase(REDUCE), sendbuf, full.as_mut_ptr(), total, red, 0)? };
    // SAFETY: `full` holds the reduced vector at rank 0; recvbuf per caller contract.
    unsafe { scatterv(&cx.phase(SCATTER), full.as_ptr(), recvbuf, counts, red.size) }
}

/// Pairwise exchange (commutative ops).
///
/// # Safety
/// As `reduce_scatter`.
pub unsafe fn pairwise(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, counts: &[usize], red: &Reduction) -> MpiResult {
    let n = cx.size();
    let me = cx.rank();
    let size = red.size;
    let d = displs(counts);
    let mine = counts[me] * size;
    // SAFETY: block `me` of sendbuf and recvbuf hold `mine` bytes each, disjoint.
    unsafe { std::ptr::copy_nonoverlapping(sendbuf.add(d[me] * size), recvbuf, mine) };
    let mut tmp = vec![0u8; mine];
    for i in 1..n {
        let dst = (me + i) % n;
        let src = (me + n - i) % n;
        // SAFETY: block dst of sendbuf (counts[dst] elements); tmp holds `mine` bytes.
        unsafe { cx.sendrecv(sendbuf.add(d[dst] * size), counts[dst] * size, dst, tmp.as_mut_ptr(), mine, src)? };
        // SAFETY: tmp and recvbuf hold counts[me] elements each, disjoint.
        unsafe { red.apply(tmp.as_ptr(), recvbuf, counts[me]) };
    }
    Ok(())
}

/// Recursive halving (commutative ops, power-of-two rank count).
///
/// # Safety
/// As `reduce_scatter`.
pub unsafe fn recursive_halving(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, counts: &[usize], red: &Reduction) -> MpiResult {
    let n = cx.size();
    let me = cx.rank();
    let size = red.size;
    let d = displs(counts);
    let total = d[n];
    // `acc` holds this rank's partial results of the blocks in [lo, hi).
    let mut acc = vec![0u8; total * size];
    // SAFETY: sendbuf holds `total` elements; acc as many.
    unsafe { std::ptr::copy_nonoverlapping(sendbuf, acc.as_mut_ptr(), total * size) };
    let mut tmp = vec![0u8; total * size];
    let (mut lo, mut hi) = (0, n);
    let mut mask = n / 2;
    while mask > 0 {
        let partner = me ^ mask;
        let mid = lo + (hi - lo) / 2;
        let (keep, give) = if me < partner { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
        let (k0, k1) = (d[keep.0] * size, d[keep.1] * size);
        let (g0, g1) = (d[give.0] * size, d[give.1] * size);
        let base = acc.as_mut_ptr();
        // SAFETY: both ranges lie inside acc/tmp (total elements); acc's given range and tmp's
        // kept range are disjoint buffers.
        unsafe { cx.sendrecv(base.add(g0), g1 - g0, partner, tmp.as_mut_ptr().add(k0), k1 - k0, partner)? };
        // SAFETY: the kept range of tmp and acc, d[keep.1] - d[keep.0] elements each.
        unsafe { red.apply(tmp.as_ptr().add(k0), base.add(k0), d[keep.1] - d[keep.0]) };
        (lo, hi) = keep;
        mask /= 2;
    }
    // SAFETY: block `me` of acc and recvbuf hold counts[me] elements.
    unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr().add(d[me] * size), recvbuf, counts[me] * size) };
    Ok(())
}

/// MPI_Reduce_scatter on an intercommunicator (MPI 4.1 section 6.11): each group gets the
/// reduction of the OTHER group's vectors, scattered over its ranks by its own `counts`. Each group
/// reduces to its rank 0 in rank order, the two ranks 0 swap the results, and each scatters the
/// remote result. Both groups' vectors have `sum(counts)` elements (the standard requires the
/// totals to match; a mismatch is ErrorClass::Truncate at the leaders).
///
/// # Safety
/// `sendbuf` holds `sum(counts)` elements of `red`'s size; `recvbuf` `counts[rank]` writable ones.
pub unsafe fn inter(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, counts: &[usize], red: &Reduction) -> MpiResult {
    let total: usize = counts.iter().sum();
    let local = cx.c.local_view();
    let lead = cx.rank() == 0;
    let mut mine = vec![0u8; if lead { total * red.size } else { 0 }];
    let mut theirs = vec![0u8; if lead { total * red.size } else { 0 }];
    // SAFETY: sendbuf holds `total` elements; `mine` is the distinct result buffer at rank 0.
    unsafe { super::reduce::ordered(&cx.on(&local).phase(REDUCE), sendbuf, mine.as_mut_ptr(), total, red, 0)? };
    if lead {
        // SAFETY: both hold `total` elements, distinct.
        unsafe { super::inter::swap_cross(cx, mine.as_ptr(), theirs.as_mut_ptr(), total * red.size, 0)? };
    }
    // SAFETY: `theirs` holds the remote result at local rank 0; recvbuf per caller contract.
    unsafe { scatterv(&cx.on(&local).phase(SCATTER), theirs.as_ptr(), recvbuf, counts, red.size) }
}
