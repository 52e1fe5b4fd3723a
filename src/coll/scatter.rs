//! MPI_Scatter and MPI_Scatterv algorithms, and their intercommunicator forms: the mirror of
//! `gather` (the root's buffer is `Blocks`, one byte range per rank).
//!
//! - `binomial` (Thakur, Rabenseifner & Gropp 2005, section 4.3, short messages): relative to the
//!   root, rank `vr` receives the blocks of its subtree `vr .. vr + lowbit(vr)` from its parent
//!   and hands each child `vr + 2^k` the part of its subtree, largest first. Needs the same block
//!   size on every rank (MPI_Scatter).
//! - `linear` (long messages): the root sends every block straight from its buffer.
//!
//! On an error the algorithms still do all their sends and receives and return the first error.
use super::gather::{copy_own, first, Blocks};
use super::inter::InterRoot;
use super::select::{forced, Collective};
use super::Coll;
use crate::error::MpiResult;
use crate::p2p::ReqId;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial", "linear"];
const BINOMIAL: usize = 0;

/// Below this many bytes in total, `auto` scatters along the binomial tree.
const TREE_MAX_BYTES: usize = 64 * 1024;

/// MPI_Scatter: block `rank` of the root's `send` lands in every rank's `recv` (None: MPI_IN_PLACE
/// at the root, whose block stays where it is). The algorithm `select` picks.
///
/// # Safety
/// At the root `send` (Some) describes readable blocks; `recv` holds its byte count writable, not
/// overlapping `send`.
pub unsafe fn scatter(cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: usize) -> MpiResult {
    // The block size is the same on every rank of a correct program, so all ranks choose alike.
    let b = match send {
        Some(s) => s.lens[root],
        None => recv.map_or(0, |r| r.1),
    };
    let tree = match forced(Collective::Scatter, ALGORITHMS)? {
        Some(a) => a == BINOMIAL,
        None => b.saturating_mul(cx.size()) <= TREE_MAX_BYTES,
    };
    if tree && send.is_none_or(|s| s.uniform().is_some()) {
        // SAFETY: per this function's contract.
        unsafe { binomial(cx, send, recv, root, b) }
    } else {
        // SAFETY: per this function's contract.
        unsafe { linear(cx, send, recv, root) }
    }
}

/// The binomial tree; `b` is the (common) block size.
///
/// # Safety
/// As `scatter`.
pub unsafe fn binomial(cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: usize, b: usize) -> MpiResult {
    let n = cx.size();
    let vr = (cx.rank() + n - root) % n;
    let low = if vr == 0 { n.next_power_of_two() } else { vr & vr.wrapping_neg() };
    let span = low.min(n - vr);
    let parent = (vr.wrapping_sub(low) + root) % n;
    let mut res = Ok(());
    if span == 1 && vr != 0 {
        // A leaf receives straight into its buffer.
        let (p, bytes) = recv.expect("non-roots always receive");
        // SAFETY: `p` holds `bytes` writable bytes.
        return unsafe { cx.recv(p, bytes, parent) };
    }
    // The subtree's blocks in relative rank order, this rank's own first.
    let mut tmp = vec![0u8; span * b];
    match send {
        Some(blocks) => {
            for v in 1..n {
                // SAFETY: block `(v + root) % n` holds `b` readable bytes (uniform); `tmp` holds
                // `n * b` bytes at the root.
                unsafe { std::ptr::copy_nonoverlapping(blocks.ptr((v + root) % n), tmp.as_mut_ptr().add(v * b), b) };
            }
        }
        // SAFETY: `tmp` holds the subtree's `span * b` bytes.
        None => first(&mut res, unsafe { cx.recv(tmp.as_mut_ptr(), span * b, parent) }),
    }
    let mut sends: Vec<ReqId> = Vec::new();
    let mut mask = low >> 1;
    while mask > 0 {
        if vr + mask < n {
            let bytes = mask.min(n - vr - mask) * b;
            // SAFETY: the child's part lies within `tmp`, which outlives the send (waited for).
            match unsafe { cx.isend(tmp.as_ptr().add(mask * b), bytes, (vr + mask + root) % n) } {
                Ok(s) => sends.push(s),
                Err(e) => first(&mut res, Err(e)),
            }
        }
        mask >>= 1;
    }
    let sent = cx.wait_sends(&sends);
    first(&mut res, sent);
    match (send, recv) {
        // SAFETY: the root's own block holds `lens[root]` readable bytes, `p` `bytes` writable.
        (Some(blocks), Some((p, bytes))) => first(&mut res, unsafe { copy_own(blocks.ptr(root), blocks.lens[root], p, bytes) }),
        // SAFETY: `tmp` starts with this rank's `b` bytes; `p` holds `bytes` writable bytes.
        (None, Some((p, bytes))) => first(&mut res, unsafe { copy_own(tmp.as_ptr(), b, p, bytes) }),
        _ => {}
    }
    res
}

/// The root sends every block directly from its buffer.
///
/// # Safety
/// As `scatter`.
pub unsafe fn linear(cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: usize) -> MpiResult {
    let Some(blocks) = send else {
        let (p, bytes) = recv.expect("non-roots always receive");
        // SAFETY: `p` holds `bytes` writable bytes.
        return unsafe { cx.recv(p, bytes, root) };
    };
    let mut res = Ok(());
    let mut sends = Vec::new();
    for i in (0..cx.size()).filter(|&i| i != root) {
        // SAFETY: block `i` holds `lens[i]` readable bytes until the send is waited for below.
        match unsafe { cx.isend(blocks.ptr(i), blocks.lens[i], i) } {
            Ok(s) => sends.push(s),
            Err(e) => first(&mut res, Err(e)),
        }
    }
    if let Some((p, bytes)) = recv {
        // SAFETY: the root's block holds `lens[root]` readable bytes, `p` `bytes` writable ones.
        first(&mut res, unsafe { copy_own(blocks.ptr(root), blocks.lens[root], p, bytes) });
    }
    let sent = cx.wait_sends(&sends);
    first(&mut res, sent);
    res
}

/// MPI_Scatter(v) on an intercommunicator (MPI 4.1 section 6.2.2): the root sends block `i` of
/// `send` to rank `i` of the other group; the root's own group is idle.
///
/// # Safety
/// At the root `send` describes readable blocks, one per remote rank; in the other group `recv`
/// holds its byte count writable.
pub unsafe fn inter(cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: InterRoot) -> MpiResult {
    match root {
        InterRoot::Idle => Ok(()),
        InterRoot::Remote(r) => {
            let (p, bytes) = recv.expect("the other group always receives");
            // SAFETY: `p` holds `bytes` writable bytes.
            unsafe { super::inter::recv_cross(cx, p, bytes, r) }
        }
        InterRoot::Root => {
            let blocks = send.expect("the root always sends");
            let mut res = Ok(());
            for i in 0..blocks.lens.len() {
                // SAFETY: block `i` holds `lens[i]` readable bytes.
                first(&mut res, unsafe { super::inter::send_cross(cx, blocks.ptr(i), blocks.lens[i], i) });
            }
            res
        }
    }
}
