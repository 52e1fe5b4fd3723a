//! MPI_Gather and MPI_Gatherv algorithms, and their intercommunicator forms.
//!
//! The algorithms move bytes: every rank contributes one block, and the root's buffer is described
//! by `Blocks` (a byte length and offset per rank), so the v-variants share the code.
//!
//! - `binomial` (Thakur, Rabenseifner & Gropp 2005, section 4.3, for short messages): relative to
//!   the root (`vr = (rank - root) mod n`), rank `vr` collects the blocks of its subtree
//!   `vr .. vr + lowbit(vr)` in a temporary buffer, children first, and passes it to its parent
//!   `vr - lowbit(vr)`: ceil(log2 n) rounds. Needs the same block size on every rank (MPI_Gather).
//! - `linear` (long messages): the root posts one receive per rank straight into its buffer, so
//!   each block is copied once, from the sender's buffer to its place.
//!
//! On an error (a message of the wrong size) the algorithms still do all their sends and receives,
//! so no peer waits forever, and return the first error.
use super::inter::InterRoot;
use super::select::{forced, Collective};
use super::Coll;
use crate::error::{MpiResult, ErrorClass};
use crate::p2p::ReqId;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial", "linear"];
const BINOMIAL: usize = 0;

/// Below this many bytes in total, `auto` gathers along the binomial tree.
const TREE_MAX_BYTES: usize = 64 * 1024;

/// The per-rank blocks of a buffer: block `i` is `lens[i]` bytes at `base + offs[i]`.
pub struct Blocks {
    pub base: *mut u8,
    pub offs: Vec<isize>,
    pub lens: Vec<usize>,
}

impl Blocks {
    pub fn ptr(&self, i: usize) -> *mut u8 {
        self.base.wrapping_offset(self.offs[i])
    }

    /// The common block length, if every block has the same.
    pub fn uniform(&self) -> Option<usize> {
        let b = *self.lens.first()?;
        self.lens.iter().all(|&l| l == b).then_some(b)
    }

    /// Whether the blocks follow each other in rank order without gaps (one contiguous range
    /// starting at block 0).
    pub fn dense(&self) -> bool {
        let mut at = self.offs.first().copied().unwrap_or(0);
        self.offs.iter().zip(&self.lens).all(|(&o, &l)| {
            let ok = o == at;
            at += l as isize;
            ok
        })
    }
}

/// A size mismatch found locally (the root's own contribution against its block).
pub(crate) fn own_block_mismatch(sent: usize, expected: usize) -> MpiResult {
    if sent != expected {
        return Err(crate::error::err(
            ErrorClass::Truncate,
            format!("this rank's own contribution has {sent} bytes but its block in the receive buffer {expected}: the send and receive counts or datatypes do not match"),
        ));
    }
    Ok(())
}

/// Copies this rank's contribution into its block (at most the block's length).
///
/// # Safety
/// `send` holds `bytes` readable bytes, `dst` `len` writable ones, not overlapping.
pub(crate) unsafe fn copy_own(send: *const u8, bytes: usize, dst: *mut u8, len: usize) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe { std::ptr::copy_nonoverlapping(send, dst, bytes.min(len)) };
    own_block_mismatch(bytes, len)
}

/// Keeps the first error of a sequence of steps.
pub(crate) fn first(acc: &mut MpiResult, r: MpiResult) {
    if acc.is_ok() {
        *acc = r;
    }
}

/// MPI_Gather: every rank's `send` (None: MPI_IN_PLACE at the root, whose block is already in
/// place) lands in block `rank` of `recv` at `root`. The algorithm `select` picks.
///
/// # Safety
/// `send` must hold its byte count readable; at the root `recv` (Some) must describe writable,
/// disjoint blocks not overlapping `send`.
pub unsafe fn gather(cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: usize) -> MpiResult {
    // The block size is the same on every rank of a correct program, so all ranks choose alike.
    let b = match recv {
        Some(r) => r.lens[root],
        None => send.map_or(0, |s| s.1),
    };
    let tree = match forced(Collective::Gather, ALGORITHMS)? {
        Some(a) => a == BINOMIAL,
        None => b.saturating_mul(cx.size()) <= TREE_MAX_BYTES,
    };
    if tree && recv.is_none_or(|r| r.uniform().is_some()) {
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
/// As `gather`.
pub unsafe fn binomial(cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: usize, b: usize) -> MpiResult {
    let n = cx.size();
    let vr = (cx.rank() + n - root) % n;
    // The subtree of `vr`: itself and the ranks up to its lowest set bit (all ranks at the root).
    let low = if vr == 0 { n.next_power_of_two() } else { vr & vr.wrapping_neg() };
    let span = low.min(n - vr);
    let mut res = Ok(());
    if span == 1 && vr != 0 {
        // A leaf sends straight from its buffer.
        let (p, bytes) = send.expect("non-roots always send");
        // SAFETY: `p` holds `bytes` readable bytes.
        return unsafe { cx.send(p, bytes, (vr - low + root) % n) };
    }
    // The subtree's blocks in relative rank order; this rank's own block first.
    let mut tmp = vec![0u8; span * b];
    if let Some((p, bytes)) = send {
        // SAFETY: `tmp` has at least `b` bytes; `p` holds `bytes` readable bytes.
        first(&mut res, unsafe { copy_own(p, bytes, tmp.as_mut_ptr(), b) });
    }
    let mut recvs: Vec<(ReqId, usize, usize)> = Vec::new();
    let mut mask = 1;
    while mask < low && vr + mask < n {
        let (child, bytes) = (vr + mask, mask.min(n - vr - mask) * b);
        let src = (child + root) % n;
        // SAFETY: the child's subtree ends within `span`, so its bytes fit in `tmp` from
        // `mask * b`; `tmp` outlives the receive (waited for below).
        recvs.push((unsafe { cx.irecv(tmp.as_mut_ptr().add(mask * b), bytes, src) }, bytes, src));
        mask <<= 1;
    }
    for (r, bytes, src) in recvs {
        first(&mut res, cx.wait_recv(r, bytes, src));
    }
    match recv {
        Some(blocks) => {
            for v in 0..n {
                let i = (v + root) % n;
                if v == 0 && send.is_none() {
                    continue;
                }
                // SAFETY: `tmp` holds `n * b` bytes, block `i` of `blocks` `b` writable bytes
                // (uniform), and the two are disjoint.
                unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr().add(v * b), blocks.ptr(i), b) };
            }
        }
        // SAFETY: `tmp` holds the subtree's `span * b` bytes.
        None => first(&mut res, unsafe { cx.send(tmp.as_ptr(), span * b, (vr - low + root) % n) }),
    }
    res
}

/// The root receives every block directly into place.
///
/// # Safety
/// As `gather`.
pub unsafe fn linear(cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: usize) -> MpiResult {
    let Some(blocks) = recv else {
        let (p, bytes) = send.expect("non-roots always send");
        // SAFETY: `p` holds `bytes` readable bytes.
        return unsafe { cx.send(p, bytes, root) };
    };
    let mut res = Ok(());
    let recvs: Vec<(ReqId, usize)> = (0..cx.size())
        .filter(|&i| i != root)
        // SAFETY: block `i` holds `lens[i]` writable bytes until the receive is waited for below.
        .map(|i| (unsafe { cx.irecv(blocks.ptr(i), blocks.lens[i], i) }, i))
        .collect();
    if let Some((p, bytes)) = send {
        // SAFETY: `p` holds `bytes` readable bytes, the root's block `lens[root]` writable ones.
        first(&mut res, unsafe { copy_own(p, bytes, blocks.ptr(root), blocks.lens[root]) });
    }
    for (r, i) in recvs {
        first(&mut res, cx.wait_recv(r, blocks.lens[i], i));
    }
    res
}

/// MPI_Gather(v) on an intercommunicator (MPI 4.1 section 6.2.2): the root receives block `i`
/// of `recv` from rank `i` of the other group, which all send to it; the root's own group is idle.
///
/// # Safety
/// In the other group `send` holds its byte count readable; at the root `recv` describes writable
/// blocks, one per remote rank.
pub unsafe fn inter(cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: InterRoot) -> MpiResult {
    match root {
        InterRoot::Idle => Ok(()),
        InterRoot::Remote(r) => {
            let (p, bytes) = send.expect("the other group always sends");
            // SAFETY: `p` holds `bytes` readable bytes.
            unsafe { super::inter::send_cross(cx, p, bytes, r) }
        }
        InterRoot::Root => {
            let blocks = recv.expect("the root always receives");
            let mut res = Ok(());
            for i in 0..blocks.lens.len() {
                // SAFETY: block `i` holds `lens[i]` writable bytes.
                first(&mut res, unsafe { super::inter::recv_cross(cx, blocks.ptr(i), blocks.lens[i], i) });
            }
            res
        }
    }
}
