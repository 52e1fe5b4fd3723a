//! MPI_Scan and MPI_Exscan: rank r gets `a0 op a1 op ... op ar` (scan) or `a0 op ... op a(r-1)`
//! (exscan; rank 0's receive buffer is left untouched). Operands always combine in rank order, so
//! non-commutative ops are correct too.
//!
//! * `linear`: a chain; rank r receives the prefix of ranks 0..r-1 from r-1 and passes its own on
//!   to r+1. n-1 steps, but only one message per rank: good for large vectors.
//! * `recursive_doubling`: the scan of Thakur & Gropp (MPICH's `MPIR_Scan_intra_recursive_doubling`,
//!   see Thakur, Rabenseifner & Gropp 2005): in round k a rank swaps with `rank ^ 2^k` the
//!   reduction of its aligned block of 2^k ranks (`partial`); a rank above its partner folds the
//!   partner's block in front of both its `partial` and its result, a rank below it folds it
//!   behind its `partial`. ceil(log2 n) rounds.
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["linear", "recursive_doubling"];

/// MPI_Scan (`exclusive` false) or MPI_Exscan: the algorithm `select` picks.
///
/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s size, `recvbuf` `count` writable ones,
/// disjoint from `sendbuf`.
pub unsafe fn scan(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, exclusive: bool) -> MpiResult {
    let algo = super::select::forced(super::select::Collective::Scan, ALGORITHMS)?.unwrap_or(1);
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            0 => linear(cx, sendbuf, recvbuf, count, red, exclusive),
            _ => recursive_doubling(cx, sendbuf, recvbuf, count, red, exclusive),
        }
    }
}

/// The chain.
///
/// # Safety
/// As `scan`.
pub unsafe fn linear(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, exclusive: bool) -> MpiResult {
    let (n, rank) = (cx.size(), cx.rank());
    let bytes = count * red.size;
    if bytes == 0 {
        return Ok(());
    }
    if rank == 0 {
        if !exclusive {
            // SAFETY: both hold `bytes` bytes, disjoint (caller contract).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
        }
        if n > 1 {
            // SAFETY: sendbuf holds `bytes` readable bytes (caller contract).
            unsafe { cx.send(sendbuf, bytes, 1) }?;
        }
        return Ok(());
    }
    if exclusive {
        // recvbuf = prefix of 0..r-1; pass on prefix op mine.
        // SAFETY: recvbuf holds `bytes` writable bytes (caller contract).
        unsafe { cx.recv(recvbuf, bytes, rank - 1) }?;
        if rank + 1 < n {
            let mut next = vec![0u8; bytes];
            // SAFETY: `next` holds `bytes` bytes; sendbuf as many (disjoint).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf, next.as_mut_ptr(), bytes) };
            // SAFETY: recvbuf and next hold `count` elements, disjoint; the prefix goes first.
            unsafe { red.apply(recvbuf, next.as_mut_ptr(), count) };
            // SAFETY: `next` holds `bytes` bytes.
            unsafe { cx.send(next.as_ptr(), bytes, rank + 1) }?;
        }
    } else {
        let mut prefix = vec![0u8; bytes];
        // SAFETY: `prefix` holds `bytes` bytes.
        unsafe { cx.recv(prefix.as_mut_ptr(), bytes, rank - 1) }?;
        // SAFETY: both hold `bytes` bytes, disjoint.
        unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
        // SAFETY: prefix and recvbuf hold `count` elements, disjoint; the prefix goes first.
        unsafe { red.apply(prefix.as_ptr(), recvbuf, count) };
        if rank + 1 < n {
            // SAFETY: recvbuf holds the `bytes`-byte prefix.
            unsafe { cx.send(recvbuf, bytes, rank + 1) }?;
        }
    }
    Ok(())
}

/// Recursive doubling.
///
/// # Safety
/// As `scan`.
pub unsafe fn recursive_doubling(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, exclusive: bool) -> MpiResult {
    let (n, rank) = (cx.size(), cx.rank());
    let bytes = count * red.size;
    if !exclusive {
        // SAFETY: both hold `bytes` bytes, disjoint (caller contract).
        unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
    }
    if n == 1 || bytes == 0 {
        return Ok(());
    }
    // `partial` and `tmp` share one allocation and swap roles when a result lands in `tmp`.
    let mut scratch = vec![0u8; 2 * bytes];
    let mut partial = scratch.as_mut_ptr();
    let mut tmp = partial.wrapping_add(bytes);
    // SAFETY: `partial` holds `bytes` bytes; sendbuf as many (disjoint).
    unsafe { std::ptr::copy_nonoverlapping(sendbuf, partial, bytes) };
    // Exscan: whether recvbuf holds anything yet.
    let mut have = !exclusive;
    let mut mask = 1;
    while mask < n {
        let dst = rank ^ mask;
        if dst < n {
            // SAFETY: the two halves of scratch, `bytes` bytes each.
            unsafe { cx.sendrecv(partial, bytes, dst, tmp, bytes, dst)? };
            if rank > dst {
                // The partner's block precedes everything this rank holds.
                // SAFETY: tmp, partial and recvbuf hold `count` elements each, pairwise disjoint.
                unsafe {
                    red.apply(tmp, partial, count);
                    if have {
                        red.apply(tmp, recvbuf, count);
                    } else {
                        std::ptr::copy_nonoverlapping(tmp, recvbuf, bytes);
                        have = true;
                    }
                }
            } else if red.commutative() {
                // SAFETY: as above.
                unsafe { red.apply(tmp, partial, count) };
            } else {
                // The partner's block follows: partial = partial op tmp, which lands in tmp.
                // SAFETY: as above.
                unsafe { red.apply(partial, tmp, count) };
                std::mem::swap(&mut partial, &mut tmp);
            }
        }
        mask <<= 1;
    }
    Ok(())
}
