//! MPI_Bcast for large messages: scatter + allgather (van de Geijn; Thakur, Rabenseifner & Gropp
//! 2005, section 4.1).
//!
//! The message is cut into `n` blocks, block `v` belonging to the rank `v` places after the root.
//! A binomial scatter hands each subtree of the binomial tree its blocks (the root sends about
//! half the message once instead of the whole message log2 n times), then a ring allgather
//! passes every block around: `n - 1` steps in which each rank sends one block to its right
//! neighbour and receives one from its left. Each rank moves about 2 bytes per message byte,
//! independent of `n`, against `log2 n` for the binomial tree; every message is a single-copy
//! block on this transport, and at every step a rank waits on one partner only, which keeps
//! oversubscribed runs (more ranks than cores) moving.
use super::{blocks, Coll};
use crate::error::MpiResult;

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root`.
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let n = cx.size();
    let vr = (cx.rank() + n - root) % n;
    let rank_of = |v: usize| (v + root) % n;
    let range = |a: usize, b: usize| blocks(bytes, n, a, b.min(n));

    // Scatter: receive blocks [vr, vr + subtree) from the parent, then give each child its
    // subtree's blocks, largest first.
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            let (off, len) = range(vr, vr + mask);
            if len > 0 {
                // SAFETY: `off + len <= bytes`; `buf` is writable at non-roots.
                unsafe { cx.recv(buf.add(off), len, rank_of(vr - mask))? };
            }
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            let (off, len) = range(vr + mask, vr + 2 * mask);
            if len > 0 {
                // SAFETY: `off + len <= bytes`, readable (received above or the root's data).
                unsafe { cx.send(buf.add(off), len, rank_of(vr + mask))? };
            }
        }
        mask >>= 1;
    }

    // Ring allgather: at step s send block vr - s to the right, receive block vr - s - 1 from the
    // left (relative ranks). Blocks are disjoint, so sending one while receiving another in the
    // same buffer is safe.
    let (right, left) = (rank_of(vr + 1), rank_of(vr + n - 1));
    for s in 0..n - 1 {
        let sb = (vr + n - s) % n;
        let rb = (vr + 2 * n - s - 1) % n;
        let (so, sl) = range(sb, sb + 1);
        let (ro, rl) = range(rb, rb + 1);
        // SAFETY: both blocks lie within `buf`'s `bytes` bytes and are disjoint (sb != rb).
        unsafe { cx.exchange(buf.add(so), sl, right, buf.add(ro), rl, left)? };
    }
    Ok(())
}
