//! MPI_Allgather and MPI_Allgatherv algorithms, and their intercommunicator form. Every rank's
//! buffer is `Blocks` (a byte range per rank); this rank's contribution goes to its own block
//! first (unless MPI_IN_PLACE left it there), then the algorithm fills in the others.
//!
//! - `ring` (Thakur, Rabenseifner & Gropp 2005, section 4.1; long messages, any block sizes):
//!   in step k rank r passes block `r - k` to `r + 1` and gets block `r - k - 1` from `r - 1`;
//!   n - 1 steps, each block moved straight between the user buffers.
//! - `recursive_doubling` (same paper, section 4.1; short messages): in round k rank r swaps the
//!   2^k blocks it has with partner `r ^ 2^k`; log2 n rounds. Power-of-two rank counts and equal
//!   blocks only, otherwise `ring` runs. Works in place when the blocks are dense in rank order,
//!   else in a temporary.
//! - `linear`: every rank sends its block to every other at once (n - 1 messages in flight).
//!
//! On an error the algorithms still do all their sends and receives and return the first error.
use super::gather::{copy_own, first, Blocks};
use super::select::{forced, Collective};
use super::Coll;
use crate::error::MpiResult;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["ring", "recursive_doubling", "linear"];
const RING: usize = 0;
const RECURSIVE_DOUBLING: usize = 1;

/// Below this many bytes in total, `auto` uses recursive doubling (when it applies).
const DOUBLING_MAX_BYTES: usize = 64 * 1024;

/// MPI_Allgather(v): `send` (None: MPI_IN_PLACE, this rank's block is already in place) lands in
/// block `rank` of every rank's `recv`. The algorithm `select` picks; the block lengths are the
/// same on every rank of a correct program, so all ranks choose alike.
///
/// # Safety
/// `send` holds its byte count readable; `recv` describes writable, disjoint blocks not
/// overlapping `send`.
pub unsafe fn allgather(cx: &Coll, send: Option<(*const u8, usize)>, recv: &Blocks) -> MpiResult {
    let n = cx.size();
    let doubling_fits = n.is_power_of_two() && recv.uniform().is_some();
    let algo = match forced(Collective::Allgather, ALGORITHMS)? {
        Some(RECURSIVE_DOUBLING) if !doubling_fits => RING,
        Some(a) => a,
        None if doubling_fits && recv.lens.iter().sum::<usize>() <= DOUBLING_MAX_BYTES => RECURSIVE_DOUBLING,
        None => RING,
    };
    let me = cx.rank();
    let mut res = Ok(());
    if let Some((p, bytes)) = send {
        // SAFETY: `p` holds `bytes` readable bytes, this rank's block `lens[me]` writable ones.
        first(&mut res, unsafe { copy_own(p, bytes, recv.ptr(me), recv.lens[me]) });
    }
    if n == 1 {
        return res;
    }
    // SAFETY: per this function's contract.
    let r = unsafe {
        match algo {
            RING => ring(cx, recv),
            RECURSIVE_DOUBLING => recursive_doubling(cx, recv),
            _ => linear(cx, recv),
        }
    };
    first(&mut res, r);
    res
}

/// The ring, with this rank's block already in place.
///
/// # Safety
/// `recv` describes writable, disjoint blocks.
pub unsafe fn ring(cx: &Coll, recv: &Blocks) -> MpiResult {
    let (n, me) = (cx.size(), cx.rank());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut res = Ok(());
    for k in 0..n - 1 {
        let (s, r) = ((me + n - k) % n, (me + 2 * n - k - 1) % n);
        // SAFETY: blocks `s` and `r` are distinct (k < n - 1) and disjoint.
        first(&mut res, unsafe { cx.sendrecv(recv.ptr(s), recv.lens[s], right, recv.ptr(r), recv.lens[r], left) });
    }
    res
}

/// Recursive doubling, with this rank's block already in place; `n` a power of two, the blocks
/// of equal length.
///
/// # Safety
/// `recv` describes writable, disjoint blocks.
pub unsafe fn recursive_doubling(cx: &Coll, recv: &Blocks) -> MpiResult {
    let (n, me) = (cx.size(), cx.rank());
    let b = recv.uniform().unwrap_or(0);
    // The blocks in rank order: the user's buffer itself when they are laid out so.
    let dense = recv.dense();
    let mut tmp = Vec::new();
    let work = if dense {
        recv.ptr(0)
    } else {
        tmp = vec![0u8; n * b];
        // SAFETY: this rank's block holds `b` bytes; `tmp` holds `n * b`.
        unsafe { std::ptr::copy_nonoverlapping(recv.ptr(me), tmp.as_mut_ptr().add(me * b), b) };
        tmp.as_mut_ptr()
    };
    let mut res = Ok(());
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        let (mine, theirs) = (me & !(mask - 1), partner & !(mask - 1));
        // SAFETY: the two ranges of `mask` blocks within `work` (n * b bytes) are disjoint.
        first(&mut res, unsafe { cx.sendrecv(work.add(mine * b), mask * b, partner, work.add(theirs * b), mask * b, partner) });
        mask <<= 1;
    }
    if !dense {
        for i in (0..n).filter(|&i| i != me) {
            // SAFETY: block `i` holds `b` writable bytes, disjoint from `tmp`.
            unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr().add(i * b), recv.ptr(i), b) };
        }
    }
    res
}

/// Every rank sends its block to every other, all at once.
///
/// # Safety
/// `recv` describes writable, disjoint blocks.
pub unsafe fn linear(cx: &Coll, recv: &Blocks) -> MpiResult {
    let (n, me) = (cx.size(), cx.rank());
    let mut res = Ok(());
    let others = || (1..n).map(|k| (me + k) % n);
    // SAFETY: block `i` holds `lens[i]` writable bytes until its receive is waited for below.
    let recvs: Vec<_> = others().map(|i| (unsafe { cx.irecv(recv.ptr(i), recv.lens[i], i) }, i)).collect();
    let mut sends = Vec::new();
    for i in others() {
        // SAFETY: this rank's block is not written by any receive and outlives the sends.
        match unsafe { cx.isend(recv.ptr(me), recv.lens[me], i) } {
            Ok(s) => sends.push(s),
            Err(e) => first(&mut res, Err(e)),
        }
    }
    for (r, i) in recvs {
        first(&mut res, cx.wait_recv(r, recv.lens[i], i));
    }
    let sent = cx.wait_sends(&sends);
    res.and(sent)
}

/// MPI_Allgather(v) on an intercommunicator (MPI 4.1 section 6.2.2): every rank gets the blocks of
/// the OTHER group, block `i` from remote rank `i`. Each rank sends its contribution to every
/// remote rank and receives from each, all at once.
///
/// # Safety
/// `send` holds its byte count readable; `recv` describes writable blocks, one per remote rank,
/// not overlapping `send`.
pub unsafe fn inter(cx: &Coll, send: (*const u8, usize), recv: &Blocks) -> MpiResult {
    let x = cx.phase(2);
    let m = recv.lens.len();
    let mut res = Ok(());
    let recvs: Vec<_> = (0..m)
        // SAFETY: block `i` holds `lens[i]` writable bytes until its receive is waited for below.
        .map(|i| unsafe { x.irecv_world(recv.ptr(i), recv.lens[i], cx.c.peer_world_rank(i), x.tag) })
        .collect();
    let mut sends = Vec::new();
    for i in 0..m {
        // SAFETY: `send` holds its bytes until the sends are waited for below.
        match unsafe { x.isend_world(send.0, send.1, cx.c.peer_world_rank(i), x.tag) } {
            Ok(s) => sends.push(s),
            Err(e) => first(&mut res, Err(e)),
        }
    }
    for (i, r) in recvs.into_iter().enumerate() {
        first(&mut res, cx.wait_recv(r, recv.lens[i], i));
    }
    let sent = cx.wait_sends(&sends);
    res.and(sent)
}
