//! The origin side of RMA between nodes: an operation on a member of another node is a request
//! message served by that member's progress (`super::serve`), and this rank waits for the reply
//! (progressing, so it serves requests to itself meanwhile). Every operation has thus completed
//! at the target when it returns, as on shared memory, and the synchronisation calls stay what
//! they are there (`ffi::rma::sync`), plus messages for the locks and PSCW notices.
use super::window::Window;
use super::wire::{self, Kind, Request};
use crate::datatype::Layout;
use crate::error::{err, ErrorClass, MpiResult};
use crate::p2p::{Buf, Engine, SendMode};
use std::sync::atomic::Ordering::Relaxed;

/// The (offset, length) blocks of `count` elements of `l` in stream order.
pub fn blocks(l: &Layout, count: usize) -> Vec<(u64, u64)> {
    l.map().pieces(count, 0, l.size * count).map(|(off, len)| (off as u64, len as u64)).collect()
}

/// Sends `req` to window rank `t` and returns the data of its reply; `want` is the data the
/// reply carries when it succeeds.
pub fn call(e: &Engine, w: &Window, t: usize, mut req: Request, want: usize) -> MpiResult<Vec<u8>> {
    let peer = w.comm.world_rank(t);
    let ctx = w.comm.context;
    req.reply_tag = wire::REPLY_BASE + (w.reply_tag.fetch_add(1, Relaxed) % (1 << 28)) as i32;
    let cap = 1 + want.max(wire::ERROR_ROOM);
    let mut reply = vec![0u8; cap];
    // SAFETY: `reply` outlives the receive, waited for below.
    let rid = unsafe { e.irecv(Buf::flat(reply.as_mut_ptr()), cap, Some(peer), req.reply_tag, ctx) };
    let msg = req.encode();
    let who = format!("RMA at window rank {t} (rank {peer} of MPI_COMM_WORLD, on another node)");
    // SAFETY: `msg` outlives the send, waited for below.
    let sent = crate::monitoring::unrecorded(|| unsafe { e.isend(Buf::flat(msg.as_ptr()), msg.len(), peer, wire::TAG_REQ, ctx, SendMode::Standard) });
    let sent = sent.map(|id| e.wait(id));
    let got = e.wait(rid);
    if let Ok(st) = &sent {
        if let Some(class) = st.error {
            return Err(err(class, format!("{who}: the request could not be sent")));
        }
    }
    sent?;
    if let Some(class) = got.error {
        return Err(err(class, format!("{who}: no reply")));
    }
    reply.truncate(got.bytes as usize);
    wire::result(reply, &who)
}

/// The request for `count` elements of `l` at window offset `addr` of the target.
pub fn request(kind: Kind, addr: i128, l: &Layout, count: usize) -> Request {
    Request { kind: kind as u8, addr: addr as u64, blocks: blocks(l, count), ..Default::default() }
}

/// Sends a notice (PSCW: `wire::TAG_POST`, `wire::TAG_DONE`) to window rank `t`.
pub fn notify(e: &Engine, w: &Window, t: usize, tag: i32) -> MpiResult {
    let none = [0u8; 1];
    // SAFETY: an empty message (from a valid address all the same).
    let id = crate::monitoring::unrecorded(|| unsafe { e.isend(Buf::flat(none.as_ptr()), 0, w.comm.world_rank(t), tag, w.comm.context, SendMode::Standard) })?;
    match e.wait(id).error {
        Some(class) => Err(err(class, format!("cannot notify window rank {t} on another node"))),
        None => Ok(()),
    }
}

/// Receives a notice with `tag` from window rank `t` (waiting, progressing meanwhile).
pub fn await_notice(e: &Engine, w: &Window, t: usize, tag: i32) -> MpiResult {
    let mut none = [0u8; 1];
    // SAFETY: an empty receive (into a valid address all the same), waited for below.
    let id = unsafe { e.irecv(Buf::flat(none.as_mut_ptr()), 0, Some(w.comm.world_rank(t)), tag, w.comm.context) };
    match e.wait(id).error {
        Some(class) => Err(err(class, format!("no notice from window rank {t} on another node"))),
        None => Ok(()),
    }
}

/// Whether a notice with `tag` from window rank `t` has arrived (not taken).
pub fn notice_arrived(e: &Engine, w: &Window, t: usize, tag: i32) -> MpiResult<bool> {
    Ok(e.iprobe(Some(w.comm.world_rank(t)), tag, w.comm.context).is_some())
}

/// MPI_Win_lock's part at window rank `t` of another node: returns once it holds the lock.
pub fn lock(e: &Engine, w: &Window, t: usize, exclusive: bool) -> MpiResult {
    call(e, w, t, Request { kind: Kind::Lock as u8, flag: exclusive, ..Default::default() }, 0).map(drop)
}

pub fn unlock(e: &Engine, w: &Window, t: usize, exclusive: bool) -> MpiResult {
    call(e, w, t, Request { kind: Kind::Unlock as u8, flag: exclusive, ..Default::default() }, 0).map(drop)
}

/// The error of a request whose reply does not have the size asked for.
pub fn size_mismatch(got: usize, want: usize) -> crate::error::MpiError {
    err(ErrorClass::Intern, format!("an RMA reply carried {got} bytes instead of {want}"))
}
