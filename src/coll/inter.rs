//! Collectives on intercommunicators (MPI 4.1 section 6.2.2): each works through the local group
//! (an intracommunicator view on the same contexts, `construct::inter::local_view`) and messages between
//! the groups, on phases of the collective's tag so the parts never match each other. Their
//! nonblocking and persistent forms are schedules built alike (`nbc_inter`).
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// Phases of the intercommunicator collectives' tags (the schedules of `nbc_inter` use them too).
pub(super) const LOCAL: i32 = 1;
pub(super) const CROSS: i32 = 2;
pub(super) const LOCAL_AFTER: i32 = 3;

/// Where a rank stands in a rooted intercommunicator collective (MPI 4.1 section 6.2.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InterRoot {
    /// MPI_ROOT: this process is the root.
    Root,
    /// MPI_PROC_NULL: in the root's group, not the root: takes no part.
    Idle,
    /// The root's rank in the remote group: this process is in the other group.
    Remote(usize),
}

/// Sends `bytes` at `buf` to remote-group rank `to` and waits.
///
/// # Safety
/// `buf` must hold `bytes` readable bytes.
pub unsafe fn send_cross(cx: &Coll, buf: *const u8, bytes: usize, to: usize) -> MpiResult {
    let x = cx.phase(CROSS);
    // SAFETY: per this function's contract; the send is waited for.
    let s = unsafe { x.isend_world(buf, bytes, cx.c.peer_world_rank(to), x.tag)? };
    super::sent_result(&cx.u.engine.wait(s))
}

/// Receives exactly `bytes` into `buf` from remote-group rank `from`.
///
/// # Safety
/// `buf` must hold `bytes` writable bytes.
pub unsafe fn recv_cross(cx: &Coll, buf: *mut u8, bytes: usize, from: usize) -> MpiResult {
    let x = cx.phase(CROSS);
    // SAFETY: per this function's contract; the receive is waited for.
    let r = unsafe { x.irecv_world(buf, bytes, cx.c.peer_world_rank(from), x.tag) };
    cx.wait_recv(r, bytes, from)
}

/// Swaps `bytes` with remote-group rank `peer`: sends `sbuf`, receives exactly `bytes` into `rbuf`.
///
/// # Safety
/// `sbuf` holds `bytes` readable bytes, `rbuf` `bytes` writable ones, not overlapping.
pub unsafe fn swap_cross(cx: &Coll, sbuf: *const u8, rbuf: *mut u8, bytes: usize, peer: usize) -> MpiResult {
    let x = cx.phase(CROSS);
    let w = cx.c.peer_world_rank(peer);
    // SAFETY: per this function's contract; both requests are waited for.
    let r = unsafe { x.irecv_world(rbuf, bytes, w, x.tag) };
    // SAFETY: as above.
    let s = unsafe { x.isend_world(sbuf, bytes, w, x.tag) };
    let got = cx.wait_recv(r, bytes, peer);
    let sent = super::sent_result(&cx.u.engine.wait(s?));
    got.and(sent)
}

/// MPI_Barrier on an intercommunicator: nobody leaves before every rank of both groups entered.
/// Local barrier, leaders swap a token, local barrier again (which nobody leaves before its
/// leader got the remote token).
pub fn barrier(cx: &Coll) -> MpiResult {
    let local = cx.c.local_view();
    super::barrier::barrier(&cx.on(&local).phase(LOCAL))?;
    if cx.rank() == 0 {
        let mut token = 0u8;
        // SAFETY: zero-byte messages.
        unsafe { swap_cross(cx, &token as *const u8, &mut token, 0, 0)? };
    }
    super::barrier::barrier(&cx.on(&local).phase(LOCAL_AFTER))
}

/// MPI_Bcast on an intercommunicator: the root sends to rank 0 of the other group, which
/// broadcasts within its group.
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable in the other group.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: InterRoot) -> MpiResult {
    match root {
        InterRoot::Idle => Ok(()),
        // SAFETY: `buf` holds `bytes` readable bytes at the root.
        InterRoot::Root => unsafe { send_cross(cx, buf, bytes, 0) },
        InterRoot::Remote(r) => {
            if cx.rank() == 0 {
                // SAFETY: `buf` holds `bytes` writable bytes (caller contract).
                unsafe { recv_cross(cx, buf, bytes, r)? };
            }
            let local = cx.c.local_view();
            // SAFETY: `buf` holds `bytes` writable bytes (caller contract).
            unsafe { super::bcast::bcast(&cx.on(&local).phase(LOCAL), buf, bytes, 0) }
        }
    }
}

/// MPI_Reduce on an intercommunicator: the other group reduces to its rank 0 (in rank order),
/// which sends the result to the root.
///
/// # Safety
/// In the non-root group `sendbuf` holds `count` elements of `red`'s datatype; at the root
/// `recvbuf` holds `count` writable elements.
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: InterRoot) -> MpiResult {
    let bytes = count * red.size;
    match root {
        InterRoot::Idle => Ok(()),
        // SAFETY: `recvbuf` holds `bytes` writable bytes at the root.
        InterRoot::Root => unsafe { recv_cross(cx, recvbuf, bytes, 0) },
        InterRoot::Remote(r) => {
            let mut partial = vec![0u8; if cx.rank() == 0 { bytes } else { 0 }];
            let local = cx.c.local_view();
            // SAFETY: `sendbuf` holds `count` elements; `partial` is the distinct result buffer
            // at local rank 0 and unused elsewhere.
            unsafe { super::reduce::reduce(&cx.on(&local).phase(LOCAL), sendbuf, partial.as_mut_ptr(), count, red, 0)? };
            if cx.rank() == 0 {
                // SAFETY: `partial` holds `bytes` bytes.
                unsafe { send_cross(cx, partial.as_ptr(), bytes, r)? };
            }
            Ok(())
        }
    }
}

/// MPI_Allreduce on an intercommunicator: every process gets the reduction of the OTHER group's
/// data. Each group reduces to its rank 0, the two ranks 0 swap their results, and each
/// broadcasts the remote result within its group.
///
/// # Safety
/// `sendbuf` holds `count` elements of `red`'s datatype, `recvbuf` `count` writable ones,
/// distinct from `sendbuf`.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let bytes = count * red.size;
    let local = cx.c.local_view();
    let mut partial = vec![0u8; if cx.rank() == 0 { bytes } else { 0 }];
    // SAFETY: as in `reduce`.
    unsafe { super::reduce::reduce(&cx.on(&local).phase(LOCAL), sendbuf, partial.as_mut_ptr(), count, red, 0)? };
    if cx.rank() == 0 {
        // SAFETY: `partial` and `recvbuf` hold `bytes` bytes each and are distinct.
        unsafe { swap_cross(cx, partial.as_ptr(), recvbuf, bytes, 0)? };
    }
    // SAFETY: `recvbuf` holds `bytes` writable bytes.
    unsafe { super::bcast::bcast(&cx.on(&local).phase(LOCAL_AFTER), recvbuf, bytes, 0) }
}
