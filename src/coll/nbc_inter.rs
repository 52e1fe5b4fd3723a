//! The intercommunicator forms of the nonblocking and persistent collectives, as schedules
//! (`schedule.rs`), built from the same parts as the blocking forms (`inter.rs`): a schedule of
//! the local group (`nbc`, on the local view of the communicator) and messages between the
//! groups to remote ranks (`Schedule::send_peer`). Every part runs on its own phase of the
//! collective's tag (`inter::LOCAL`, `CROSS`, `LOCAL_AFTER`), as in the blocking forms, so the
//! parts never take each other's messages.
//!
//! Rooted forms follow MPI 4.1 section 6.2.2: the root passes MPI_ROOT, the rest of its group
//! MPI_PROC_NULL (and takes no part), the other group the root's rank. Buffers are contiguous
//! bytes; the FFI layer stages derived datatypes inside the schedule. Intercommunicators may not
//! reduce in place, so send and receive buffers never overlap.
use super::gather::Blocks;
use super::inter::{InterRoot, CROSS, LOCAL, LOCAL_AFTER};
use super::schedule::Schedule;
use super::{nbc, Coll};
use crate::op::Reduction;
use std::sync::Arc;

/// MPI_Ibarrier: local barrier, the two ranks 0 swap a token, local barrier again (which nobody
/// leaves before its rank 0 got the remote token).
pub fn barrier(s: &mut Schedule, cx: &Coll) {
    let local = cx.c.local_view();
    nbc::barrier(s, &cx.on(&local).phase(LOCAL));
    if cx.rank() == 0 {
        let x = cx.phase(CROSS);
        s.send_peer(&x, std::ptr::null(), 0, 0);
        s.recv_peer(&x, std::ptr::null_mut(), 0, 0);
        s.round();
    }
    nbc::barrier(s, &cx.on(&local).phase(LOCAL_AFTER));
}

/// MPI_Ibcast of `bytes` at `buf`: the root sends to rank 0 of the other group, which
/// broadcasts within its group.
pub fn bcast(s: &mut Schedule, cx: &Coll, buf: *mut u8, bytes: usize, root: InterRoot) {
    match root {
        InterRoot::Idle => {}
        InterRoot::Root => s.send_peer(&cx.phase(CROSS), buf, bytes, 0),
        InterRoot::Remote(r) => {
            if cx.rank() == 0 {
                s.recv_peer(&cx.phase(CROSS), buf, bytes, r);
                s.round();
            }
            let local = cx.c.local_view();
            nbc::bcast(s, &cx.on(&local).phase(LOCAL), buf, bytes, 0);
        }
    }
}

/// MPI_Ireduce of `count` elements: the other group reduces `send` to its rank 0 (in rank order
/// for a non-commutative op), which sends the result to the root's `recv`.
pub fn reduce(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, count: usize, red: Arc<Reduction>, root: InterRoot) {
    let bytes = count * red.size;
    match root {
        InterRoot::Idle => {}
        InterRoot::Root => s.recv_peer(&cx.phase(CROSS), recv, bytes, 0),
        InterRoot::Remote(r) => {
            let partial = to_lead(s, cx, send, count, red);
            if cx.rank() == 0 {
                // In the round of the last combination, which runs before the send is posted.
                s.send_peer(&cx.phase(CROSS), partial, bytes, r);
            }
        }
    }
}

/// Appends the reduction of every local rank's `send` to local rank 0 (phase LOCAL); returns
/// the scratch buffer that holds it there once its round ran (null elsewhere).
fn to_lead(s: &mut Schedule, cx: &Coll, send: *const u8, count: usize, red: Arc<Reduction>) -> *mut u8 {
    let local = cx.c.local_view();
    let partial = if cx.rank() == 0 { s.scratch(count * red.size) } else { std::ptr::null_mut() };
    // Rooted at local rank 0, the binomial tree combines in rank order for any op.
    nbc::reduce(s, &cx.on(&local).phase(LOCAL), send, partial, count, red, 0);
    partial
}

/// Appends the swap of the two ranks 0: `mine` to the remote rank 0, its `bytes` into `theirs`.
fn swap_leads(s: &mut Schedule, cx: &Coll, mine: *const u8, theirs: *mut u8, bytes: usize) {
    if cx.rank() == 0 {
        let x = cx.phase(CROSS);
        s.send_peer(&x, mine, bytes, 0);
        s.recv_peer(&x, theirs, bytes, 0);
        s.round();
    }
}

/// MPI_Iallreduce: every rank gets the reduction of the OTHER group's `send`. Each group
/// reduces to its rank 0, the ranks 0 swap their results, and each broadcasts the remote one in
/// its group.
pub fn allreduce(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, count: usize, red: Arc<Reduction>) {
    let bytes = count * red.size;
    let partial = to_lead(s, cx, send, count, red);
    swap_leads(s, cx, partial, recv, bytes);
    let local = cx.c.local_view();
    nbc::bcast(s, &cx.on(&local).phase(LOCAL_AFTER), recv, bytes, 0);
}

/// MPI_Igather(v): the root receives block `i` of `recv` from remote rank `i`; the other group
/// each sends its `send`.
pub fn gather(s: &mut Schedule, cx: &Coll, send: Option<(*const u8, usize)>, recv: Option<&Blocks>, root: InterRoot) {
    let x = cx.phase(CROSS);
    match (root, send, recv) {
        (InterRoot::Remote(r), Some((p, len)), _) => s.send_peer(&x, p, len, r),
        (InterRoot::Root, _, Some(b)) => {
            for i in 0..b.lens.len() {
                s.recv_peer(&x, b.ptr(i), b.lens[i], i);
            }
        }
        _ => {}
    }
}

/// MPI_Iscatter(v): the root sends block `i` of `send` to remote rank `i`, which receives it
/// into `recv`.
pub fn scatter(s: &mut Schedule, cx: &Coll, send: Option<&Blocks>, recv: Option<(*mut u8, usize)>, root: InterRoot) {
    let x = cx.phase(CROSS);
    match (root, send, recv) {
        (InterRoot::Remote(r), _, Some((p, len))) => s.recv_peer(&x, p, len, r),
        (InterRoot::Root, Some(b), _) => {
            for i in 0..b.lens.len() {
                s.send_peer(&x, b.ptr(i), b.lens[i], i);
            }
        }
        _ => {}
    }
}

/// MPI_Iallgather(v): every rank sends `send` to every remote rank and receives block `i` of
/// `recv` from remote rank `i`, in one round.
pub fn allgather(s: &mut Schedule, cx: &Coll, send: (*const u8, usize), recv: &Blocks) {
    let x = cx.phase(CROSS);
    let m = recv.lens.len();
    for i in 0..m {
        s.recv_peer(&x, recv.ptr(i), recv.lens[i], i);
    }
    // Start with the next rank up, so that not every rank sends to remote rank 0 first.
    for k in 0..m {
        s.send_peer(&x, send.0, send.1, (cx.rank() + k) % m);
    }
}

/// MPI_Ialltoall: block `j` of `send` to remote rank `j`, block `j` of `recv` from it.
pub fn alltoall(s: &mut Schedule, cx: &Coll, send: &Blocks, recv: &Blocks) {
    let m = cx.c.peer_size();
    let sends: Vec<_> = (0..m).map(|j| (send.ptr(j), send.lens[j])).collect();
    let recvs: Vec<_> = (0..m).map(|j| (recv.ptr(j), recv.lens[j])).collect();
    alltoallv(s, cx, &sends, &recvs);
}

/// MPI_Ialltoallv / MPI_Ialltoallw: `sends[j]` (address, length) to remote rank `j`, `recvs[j]` from it, in
/// one round. Every message is posted, empty ones too, as the blocking form does.
pub fn alltoallv(s: &mut Schedule, cx: &Coll, sends: &[(*mut u8, usize)], recvs: &[(*mut u8, usize)]) {
    let x = cx.phase(CROSS);
    for (j, &(p, len)) in recvs.iter().enumerate() {
        s.recv_peer(&x, p, len, j);
    }
    let m = sends.len();
    for k in 0..m {
        let j = (cx.rank() + k) % m;
        s.send_peer(&x, sends[j].0, sends[j].1, j);
    }
}

/// MPI_Ireduce_scatter(_block): each group gets the reduction of the OTHER group's `send`
/// (`sum(counts)` elements), scattered over its ranks by its own `counts`. Each group reduces to
/// its rank 0, the ranks 0 swap the results (a mismatch of the totals is ErrorClass::Truncate
/// there), and each scatters the remote result.
pub fn reduce_scatter(s: &mut Schedule, cx: &Coll, send: *const u8, recv: *mut u8, counts: &[usize], red: Arc<Reduction>) {
    let size = red.size;
    let total: usize = counts.iter().sum();
    let lead = cx.rank() == 0;
    let mine = to_lead(s, cx, send, total, red);
    let theirs = if lead { s.scratch(total * size) } else { std::ptr::null_mut() };
    swap_leads(s, cx, mine, theirs, total * size);
    let offs = counts.iter().scan(0isize, |at, &c| {
        let o = *at;
        *at += (c * size) as isize;
        Some(o)
    });
    let blocks = Blocks { base: theirs, offs: offs.collect(), lens: counts.iter().map(|&c| c * size).collect() };
    let local = cx.c.local_view();
    let me = counts[cx.rank()] * size;
    nbc::scatter(s, &cx.on(&local).phase(LOCAL_AFTER), lead.then_some(&blocks), Some((recv, me)), 0);
}
