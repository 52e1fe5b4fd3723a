//! Rabenseifner's reduction for long vectors (Rabenseifner 2004; Thakur, Rabenseifner & Gropp
//! 2005, section 4.4): a reduce-scatter by recursive halving followed by a gather to the root
//! (MPI_Reduce) or an allgather by recursive doubling (MPI_Allreduce). Commutative operations
//! only: each block is combined in an order that depends on the rank layout.
//!
//! With `p` the largest power of two <= n and `rem = n - p`, the first `2 rem` ranks fold in: each
//! even one sends its vector to the odd rank above it, which combines the two and takes part
//! as `newrank = rank / 2`; the others take part as `newrank = rank - rem`. The vector is cut into
//! `p` blocks. Recursive halving: in the round with distance `d = p/2, p/4, .., 1` a rank keeps the
//! half of its current block range on its side of `newrank ^ d`, sends the other half to that
//! partner and combines the partner's copy of the kept half into its own. Afterwards `newrank`
//! holds block `newrank` fully reduced, having sent and received about `count` elements in all.
//! The gather and the allgather run the halving backwards (distances 1, 2, .., p/2), each round
//! doubling the aligned block range a rank holds. Each rank moves about 2 `count` elements,
//! against `count log2 n` for the binomial tree or recursive doubling.
use super::{blocks, Coll};
use crate::error::MpiResult;
use crate::op::Reduction;

/// The power-of-two group the algorithm runs on.
#[derive(Clone, Copy)]
struct Group {
    pof2: usize,
    rem: usize,
}

impl Group {
    fn of(n: usize) -> Group {
        let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
        Group { pof2, rem: n - pof2 }
    }

    /// The place of communicator rank `rank` in the group; None for the even ranks that fold in.
    fn newrank(self, rank: usize) -> Option<usize> {
        if rank < 2 * self.rem {
            (rank & 1 == 1).then_some(rank / 2)
        } else {
            Some(rank - self.rem)
        }
    }

    /// The communicator rank at group place `nr`.
    fn rank(self, nr: usize) -> usize {
        if nr < self.rem {
            2 * nr + 1
        } else {
            nr + self.rem
        }
    }

    /// Byte range (offset, length) of blocks `a..b` of a `count`-element vector of `size`-byte
    /// elements.
    fn range(self, count: usize, size: usize, a: usize, b: usize) -> (usize, usize) {
        let (s, l) = blocks(count, self.pof2, a, b);
        (s * size, l * size)
    }
}

/// Scratch for an incoming half (or the whole vector at the ranks that receive a fold-in).
fn scratch(g: Group, rank: usize, count: usize, size: usize) -> Vec<u8> {
    let elems = if rank < 2 * g.rem { count } else { blocks(count, g.pof2, 0, g.pof2 / 2).1 };
    vec![0u8; elems * size]
}

/// Fold-in and recursive halving. `own` is this rank's contribution; group members copy it into
/// `work` (unless it is `work`) and end with block `newrank` of the reduction there. Returns
/// `newrank` (None at the ranks that folded in).
///
/// # Safety
/// `own` holds `count` readable elements; `work` `count` writable ones at group members (the
/// same buffer as `own` or disjoint); `tmp` is a `scratch` buffer.
unsafe fn reduce_scatter(cx: &Coll, g: Group, own: *const u8, work: *mut u8, tmp: *mut u8, count: usize, red: &Reduction) -> MpiResult<Option<usize>> {
    let rank = cx.rank();
    let size = red.size;
    let bytes = count * size;
    let Some(nr) = g.newrank(rank) else {
        // SAFETY: `own` holds `bytes` bytes.
        unsafe { cx.send(own, bytes, rank + 1)? };
        return Ok(None);
    };
    if !std::ptr::eq(own, work) {
        // SAFETY: both hold `bytes` bytes and are disjoint (contract).
        unsafe { std::ptr::copy_nonoverlapping(own, work, bytes) };
    }
    if rank < 2 * g.rem {
        // SAFETY: `tmp` holds the whole vector at the ranks below 2 rem (`scratch`); disjoint
        // from `work`.
        unsafe {
            cx.recv(tmp, bytes, rank - 1)?;
            red.apply(tmp, work, count);
        }
    }
    let mut lo = 0;
    let mut d = g.pof2 / 2;
    while d > 0 {
        let partner = nr ^ d;
        let (keep, give) = if nr & d == 0 { (lo, lo + d) } else { (lo + d, lo) };
        let (ko, kl) = g.range(count, size, keep, keep + d);
        let (go, gl) = g.range(count, size, give, give + d);
        // SAFETY: both ranges lie within `work`; `tmp` holds at least half the vector, which
        // bounds `kl`; `tmp` and `work` are disjoint.
        unsafe {
            cx.exchange(work.add(go), gl, g.rank(partner), tmp, kl, g.rank(partner))?;
            red.apply(tmp, work.add(ko), kl / size);
        }
        lo = keep;
        d >>= 1;
    }
    Ok(Some(nr))
}

/// MPI_Allreduce: reduce-scatter, then allgather by recursive doubling, then the folded-in ranks
/// get the result.
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red.op` must be commutative.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let rank = cx.rank();
    let g = Group::of(cx.size());
    let size = red.size;
    let mut tmp = scratch(g, rank, count, size);
    // SAFETY: per this function's contract; `tmp` is this rank's scratch.
    let nr = unsafe { reduce_scatter(cx, g, sendbuf, recvbuf, tmp.as_mut_ptr(), count, red)? };
    if let Some(nr) = nr {
        let mut d = 1;
        while d < g.pof2 {
            let partner = nr ^ d;
            let (mine, theirs) = (nr & !(d - 1), partner & !(d - 1));
            let (mo, ml) = g.range(count, size, mine, mine + d);
            let (to, tl) = g.range(count, size, theirs, theirs + d);
            // SAFETY: disjoint block ranges within `recvbuf`.
            unsafe { cx.exchange(recvbuf.add(mo), ml, g.rank(partner), recvbuf.add(to), tl, g.rank(partner))? };
            d <<= 1;
        }
    }
    if rank < 2 * g.rem {
        // SAFETY: `recvbuf` holds `count` elements.
        unsafe {
            if nr.is_some() {
                cx.send(recvbuf, count * size, rank - 1)?;
            } else {
                cx.recv(recvbuf, count * size, rank + 1)?;
            }
        }
    }
    Ok(())
}

/// MPI_Reduce: reduce-scatter, then a binomial gather of the blocks to the group member that
/// stands for `root` (the root itself, or the odd rank above a folded-in root, which forwards the
/// result).
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type; at the root `recvbuf` holds `count`
/// writable ones, the same buffer as `sendbuf` or disjoint; `recvbuf` is not used elsewhere.
/// `red.op` must be commutative.
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let rank = cx.rank();
    let g = Group::of(cx.size());
    let size = red.size;
    let bytes = count * size;
    let mut tmp = scratch(g, rank, count, size);
    // The root works in its receive buffer; other members in a private copy of their data.
    let mut own = Vec::new();
    let work = if rank == root {
        recvbuf
    } else if g.newrank(rank).is_some() {
        own = vec![0u8; bytes];
        own.as_mut_ptr()
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: per this function's contract; `work` is the root's recvbuf or a private buffer
    // of `bytes` bytes at the other members (unused at folded-in ranks).
    let nr = unsafe { reduce_scatter(cx, g, sendbuf, work, tmp.as_mut_ptr(), count, red)? };
    let target = g.newrank(root).unwrap_or(root / 2);
    if let Some(nr) = nr {
        let mut d = 1;
        while d < g.pof2 {
            let partner = nr ^ d;
            let (mine, theirs) = (nr & !(d - 1), partner & !(d - 1));
            if (nr ^ target) & d != 0 {
                let (mo, ml) = g.range(count, size, mine, mine + d);
                if ml > 0 {
                    // SAFETY: a block range within `work`.
                    unsafe { cx.send(work.add(mo), ml, g.rank(partner))? };
                }
                break;
            }
            let (to, tl) = g.range(count, size, theirs, theirs + d);
            if tl > 0 {
                // SAFETY: a block range within `work`.
                unsafe { cx.recv(work.add(to), tl, g.rank(partner))? };
            }
            d <<= 1;
        }
        if nr == target && rank != root {
            // SAFETY: `work` holds the whole result.
            unsafe { cx.send(work, bytes, root)? };
        }
    } else if rank == root {
        // SAFETY: the root's `recvbuf` holds `bytes` writable bytes.
        unsafe { cx.recv(recvbuf, bytes, rank + 1)? };
    }
    drop(own);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_places_and_blocks() {
        for n in 1..=17 {
            let g = Group::of(n);
            assert!(g.pof2.is_power_of_two() && g.pof2 <= n && n < 2 * g.pof2);
            // Every place is taken by exactly one rank, and `rank` inverts `newrank`.
            let places: Vec<usize> = (0..n).filter_map(|r| g.newrank(r)).collect();
            assert_eq!(places, (0..g.pof2).collect::<Vec<_>>(), "n={n}");
            for r in 0..n {
                if let Some(nr) = g.newrank(r) {
                    assert_eq!(g.rank(nr), r);
                } else {
                    assert_eq!(g.newrank(r + 1), Some(r / 2), "a folded-in rank hands over to rank + 1");
                }
            }
            // Every range a rank keeps while halving fits in the scratch: the first half is the
            // longest. (n = 1 never runs the algorithm.)
            for count in [0, 1, 7, 1000, 300001] {
                assert_eq!(g.range(count, 8, 0, g.pof2), (0, count * 8));
                let half = blocks(count, g.pof2, 0, g.pof2 / 2).1;
                let mut d = g.pof2 / 2;
                while d > 0 {
                    for lo in (0..g.pof2).step_by(d) {
                        assert!(blocks(count, g.pof2, lo, lo + d).1 <= half, "n={n} count={count} d={d} lo={lo}");
                    }
                    d >>= 1;
                }
            }
        }
    }
}
