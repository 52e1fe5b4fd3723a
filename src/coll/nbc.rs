//! The algorithms of nonblocking and persistent collectives, as schedules (`schedule.rs`).
//!
//! Each function appends the rounds of one collective to a schedule for rank `cx.rank()`. They
//! move contiguous bytes, like the blocking algorithms; the FFI layer stages derived datatypes
//! inside the schedule, so that on an intracommunicator every rank runs the schedule whatever
//! its datatypes. Latency-optimal choices, since a nonblocking collective is posted and then
//! overlapped, and since a round costs a trip through the progress loop:
//! - barrier: dissemination (Hensgen, Finkel and Manber 1988), ceil(log2 n) rounds;
//! - bcast: binomial tree (MPICH `MPIR_Ibcast_intra_sched_binomial`), 2 rounds per rank;
//! - reduce: binomial tree, receiving from every child at once (libnbc's `NBC_Ireduce` binomial),
//!   rooted at the root for commutative ops, at rank 0 in rank order otherwise, then forwarded;
//! - allreduce: recursive doubling with the pre/post steps of Thakur, Rabenseifner and Gropp
//!   (2005) for non-power-of-two rank counts (MPICH `MPIR_Iallreduce_intra_sched_recursive_doubling`);
//! - gather, scatter, allgather, alltoall: linear, every message of the rank posted in one round
//!   (libnbc's linear `NBC_Igather`, `NBC_Iscatter`, `NBC_Iallgather`, `NBC_Ialltoall`; MPICH's
//!   "scattered" alltoall): one round, which on shared memory beats log-depth trees at the rank
//!   counts of one node (the v/w forms the same, with per-rank blocks);
//! - reduce_scatter, scan, exscan: linear, one round of messages (every block to its rank; every
//!   contribution to every higher rank), then the blocks combined in rank order, which keeps
//!   non-commutative ops right;
//! - neighborhood collectives: one round, the schedule form of `alltoall::linear` (`exchange`).
//!
//! The intercommunicator forms are in `nbc_inter`.
use super::alltoall::Slot;
use super::gather::Blocks;
use super::schedule::{Schedule, Step};
use super::Coll;
use crate::op::Reduction;
use std::sync::Arc;

/// MPI_Ibarrier: dissemination, round k sends to rank + 2^k and receives from rank - 2^k.
pub fn barrier(s: &mut Schedule, cx: &Coll) {
    let (n, r) = (cx.size(), cx.rank());
    let mut d = 1;
    while d < n {
        s.send(cx, std::ptr::null(), 0, (r + d) % n);
        s.recv(cx, std::ptr::null_mut(), 0, (r + n - d) % n);
        s.round();
        d <<= 1;
    }
}

/// MPI_Ibcast of `bytes` at `buf` from `root`: binomial tree over ranks relative to the root.
pub fn bcast(s: &mut Schedule, cx: &Coll, buf: *mut u8, bytes: usize, root: usize) {
    let n = cx.size();
    if n == 1 || bytes == 0 {
        return;
    }
    let vr = (cx.rank() + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.recv(cx, buf, bytes, (vr - mask + root) % n);
            s.round();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            s.send(cx, buf, bytes, (vr + mask + root) % n);
        }
        mask >>= 1;
    }
}

/// MPI_Ireduce of `count` elements from `send` into `recv` at `root` (`send == recv` allowed:
/// in place, or a staged buffer).
pub fn reduce(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, count: usize, red: Arc<Reduction>, root: usize) {
    let (n, r) = (cx.size(), cx.rank());
    let bytes = count * red.size;
    if n == 1 || bytes == 0 {
        if r == root && !std::ptr::eq(send, recv) && bytes > 0 {
            s.push(Step::Copy { src: send, dst: recv, bytes });
        }
        return;
    }
    let commutative = red.commutative();
    // The tree's root: the root itself, or rank 0 (ranks in order) for a non-commutative op.
    let top = if commutative { root } else { 0 };
    let vr = (r + n - top) % n;
    let mut children = Vec::new();
    let mut parent = None;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            parent = Some((vr - mask + top) % n);
            break;
        }
        if vr | mask < n {
            children.push(((vr | mask) + top) % n);
        }
        mask <<= 1;
    }
    // The partial result: the root's receive buffer, a private copy where children contribute,
    // the send buffer itself at a leaf.
    let acc: *mut u8 = if r == root && r == top {
        if !std::ptr::eq(send, recv) {
            s.push(Step::Copy { src: send, dst: recv, bytes });
        }
        recv
    } else if !children.is_empty() || r == top || r == root {
        let a = s.scratch(bytes);
        s.push(Step::Copy { src: send, dst: a, bytes });
        a
    } else {
        send as *mut u8
    };
    let tmps: Vec<*mut u8> = children.iter().map(|&c| {
        let t = s.scratch(bytes);
        s.recv(cx, t, bytes, c);
        t
    }).collect();
    s.round();
    // Children in increasing relative rank: each covers the ranks just above what acc holds.
    for &t in &tmps {
        combine(s, t, acc, count, &red, true);
    }
    if r == root && r != top {
        // The result, from the tree's root; posted with our own contribution's send, which the
        // tree's root needs first.
        s.recv(cx, recv, bytes, top);
    }
    if let Some(p) = parent {
        s.send(cx, acc, bytes, p);
    } else if r != root {
        s.send(cx, acc, bytes, root);
    }
}

/// Appends `acc = acc op tmp` (`tmp_above`: tmp holds higher ranks' data) or `acc = tmp op acc`.
fn combine(s: &mut Schedule, tmp: *mut u8, acc: *mut u8, count: usize, red: &Arc<Reduction>, tmp_above: bool) {
    if !tmp_above || red.commutative() {
        s.push(Step::Reduce { inp: tmp, inout: acc, count, red: red.clone() });
    } else {
        s.push(Step::Reduce { inp: acc, inout: tmp, count, red: red.clone() });
        s.push(Step::Copy { src: tmp, dst: acc, bytes: count * red.size });
    }
}

/// MPI_Iallreduce of `count` elements from `send` into `recv` (`send == recv` allowed).
pub fn allreduce(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, count: usize, red: Arc<Reduction>) {
    let (n, r) = (cx.size(), cx.rank());
    let bytes = count * red.size;
    if !std::ptr::eq(send, recv) && bytes > 0 {
        s.push(Step::Copy { src: send, dst: recv, bytes });
    }
    if n == 1 || bytes == 0 {
        return;
    }
    let tmp = s.scratch(bytes);
    let p2 = 1 << (usize::BITS - 1 - n.leading_zeros());
    let rem = n - p2;
    // Pre-step: of the first 2 * rem ranks, the even ones hand their data to the odd ones and
    // sit out; the rest renumber to 0..p2.
    let me = if r < 2 * rem {
        if r % 2 == 0 {
            s.send(cx, recv, bytes, r + 1);
            s.round();
            None
        } else {
            s.recv(cx, tmp, bytes, r - 1);
            s.round();
            combine(s, tmp, recv, count, &red, false);
            Some(r / 2)
        }
    } else {
        Some(r - rem)
    };
    if let Some(nr) = me {
        let mut mask = 1;
        while mask < p2 {
            let nd = nr ^ mask;
            let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
            s.send(cx, recv, bytes, dst);
            s.recv(cx, tmp, bytes, dst);
            s.round();
            combine(s, tmp, recv, count, &red, dst > r);
            mask <<= 1;
        }
    }
    if r < 2 * rem {
        if r % 2 == 1 {
            s.send(cx, recv, bytes, r - 1);
        } else {
            s.recv(cx, recv, bytes, r + 1);
        }
    }
}

/// MPI_Igather: `send` (None: in place at the root) to block `i` of `recv` (the root's).
pub fn gather(s: &mut Schedule, cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: usize) {
    let r = cx.rank();
    match recv {
        Some(b) if r == root => {
            for i in 0..cx.size() {
                if i == r {
                    if let Some((p, len)) = send {
                        if len > 0 {
                            s.push(Step::Copy { src: p, dst: b.ptr(i), bytes: len.min(b.lens[i]) });
                        }
                    }
                } else if b.lens[i] > 0 {
                    s.recv(cx, b.ptr(i), b.lens[i], i);
                }
            }
        }
        _ => {
            if let Some((p, len)) = send.filter(|s| s.1 > 0) {
                s.send(cx, p, len, root);
            }
        }
    }
}

/// MPI_Iscatter: block `i` of `send` (the root's) to `recv` (None: in place at the root).
pub fn scatter(s: &mut Schedule, cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: usize) {
    let r = cx.rank();
    match send {
        Some(b) if r == root => {
            for i in 0..cx.size() {
                if i == r {
                    if let Some((p, len)) = recv {
                        if len > 0 {
                            s.push(Step::Copy { src: b.ptr(i), dst: p, bytes: len.min(b.lens[i]) });
                        }
                    }
                } else if b.lens[i] > 0 {
                    s.send(cx, b.ptr(i), b.lens[i], i);
                }
            }
        }
        _ => {
            if let Some((p, len)) = recv.filter(|r| r.1 > 0) {
                s.recv(cx, p, len, root);
            }
        }
    }
}

/// MPI_Iallgather: this rank's `send` (None: already in its block of `recv`) to every rank's
/// block of `recv`.
pub fn allgather(s: &mut Schedule, cx: &Coll, send: Option<(*const u8, usize)>, recv: &Blocks) {
    let r = cx.rank();
    if let Some((p, len)) = send {
        if len > 0 {
            s.push(Step::Copy { src: p, dst: recv.ptr(r), bytes: len.min(recv.lens[r]) });
        }
    }
    let (own, own_len) = (recv.ptr(r) as *const u8, recv.lens[r]);
    for i in (0..cx.size()).filter(|&i| i != r) {
        if recv.lens[i] > 0 {
            s.recv(cx, recv.ptr(i), recv.lens[i], i);
        }
        if own_len > 0 {
            s.send(cx, own, own_len, i);
        }
    }
}

/// MPI_Ialltoall: block `i` of `send` to rank `i`, block `i` of `recv` from rank `i`.
pub fn alltoall(s: &mut Schedule, cx: &Coll, send: &Blocks, recv: &Blocks) {
    let n = cx.size();
    let sends: Vec<_> = (0..n).map(|i| (send.ptr(i), send.lens[i])).collect();
    let recvs: Vec<_> = (0..n).map(|i| (recv.ptr(i), recv.lens[i])).collect();
    alltoallv(s, cx, &sends, &recvs);
}

/// MPI_Ialltoallv / MPI_Ialltoallw on bytes: `sends[i]` (address, length) to rank `i`,
/// `recvs[i]` from rank `i`; the rank's own block is copied.
pub fn alltoallv(s: &mut Schedule, cx: &Coll, sends: &[(*mut u8, usize)], recvs: &[(*mut u8, usize)]) {
    let (n, r) = (cx.size(), cx.rank());
    if recvs[r].1 > 0 {
        s.push(Step::Copy { src: sends[r].0, dst: recvs[r].0, bytes: recvs[r].1.min(sends[r].1) });
    }
    // Start with the next rank up, so that not every rank sends to rank 0 first.
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        if recvs[from].1 > 0 {
            s.recv(cx, recvs[from].0, recvs[from].1, from);
        }
        if sends[to].1 > 0 {
            s.send(cx, sends[to].0, sends[to].1, to);
        }
    }
}

/// MPI_Ireduce_scatter(_block): `send` holds every rank's block (`counts[i]` elements each, in
/// rank order), `recv` takes this rank's block of the reduction. Linear: every rank sends block
/// `i` to rank `i` and receives its own block from every rank in one round, then combines them
/// in rank order (`x_0 op (x_1 op (... op x_{n-1}))`, right for non-commutative ops too).
/// `send` must not overlap `recv` (the caller copies an in-place input).
pub fn reduce_scatter(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, counts: &[usize], red: Arc<Reduction>) {
    let (n, r) = (cx.size(), cx.rank());
    let offs: Vec<usize> = counts.iter().scan(0, |at, &c| {
        let o = *at;
        *at += c * red.size;
        Some(o)
    }).collect();
    let block = |i: usize| send.wrapping_add(offs[i]);
    let bytes = counts[r] * red.size;
    let mut parts: Vec<*const u8> = vec![std::ptr::null(); n];
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        if bytes > 0 {
            let t = s.scratch(bytes);
            s.recv(cx, t, bytes, from);
            parts[from] = t;
        }
        if counts[to] > 0 {
            s.send(cx, block(to), counts[to] * red.size, to);
        }
    }
    parts[r] = block(r);
    s.round();
    if bytes > 0 {
        fold(s, &parts, recv, counts[r], &red);
    }
}

/// Appends `acc = parts[0] op (parts[1] op (... op parts[last]))` (rank order).
fn fold(s: &mut Schedule, parts: &[*const u8], acc: *mut u8, count: usize, red: &Arc<Reduction>) {
    let Some((&last, rest)) = parts.split_last() else { return };
    s.push(Step::Copy { src: last, dst: acc, bytes: count * red.size });
    for &p in rest.iter().rev() {
        s.push(Step::Reduce { inp: p, inout: acc, count, red: red.clone() });
    }
}

/// MPI_Iscan (`exclusive` false) and MPI_Iexscan of `count` elements: linear, every rank sends
/// its `send` to every higher rank and receives every lower rank's in one round, then combines
/// them in rank order into `recv` (not written by rank 0 of an exscan: it may be null there).
/// `send` must not overlap `recv`.
pub fn scan(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, count: usize, red: Arc<Reduction>, exclusive: bool) {
    let (n, r) = (cx.size(), cx.rank());
    let bytes = count * red.size;
    if bytes == 0 {
        return;
    }
    let mut parts: Vec<*const u8> = (0..r).map(|i| {
        let t = s.scratch(bytes);
        s.recv(cx, t, bytes, i);
        t as *const u8
    }).collect();
    for j in r + 1..n {
        s.send(cx, send, bytes, j);
    }
    s.round();
    if !exclusive {
        parts.push(send);
    }
    fold(s, &parts, recv, count, &red);
}

/// MPI_Ineighbor_* on bytes, the schedule form of `alltoall::linear`: every receive slot in slot
/// order, then every send slot, in one round; each slot with its round tag (`Slot::round`, which
/// pairs Cartesian blocks by direction: `neighbor::pair_blocks`); MPI_PROC_NULL slots are
/// skipped. Messages of one tag between two ranks match in slot order, which neighbors that
/// appear several times rely on.
pub fn exchange(s: &mut Schedule, cx: &Coll, sends: &[Slot], recvs: &[Slot]) {
    for r in recvs {
        if let Some(p) = r.peer {
            s.recv_peer(&Coll { tag: cx.tag_at(r.round), ..*cx }, r.buf, r.bytes, p);
        }
    }
    for x in sends {
        if let Some(p) = x.peer {
            s.send_peer(&Coll { tag: cx.tag_at(x.round), ..*cx }, x.buf, x.bytes, p);
        }
    }
}
