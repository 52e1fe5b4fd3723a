//! The target side of RMA between nodes: a progress hook of the engine (`p2p::Progress`) that
//! takes the requests other nodes' ranks sent to this rank's windows and answers them, so they
//! are served whenever this rank is inside MPI (any wait, test or probe loop, as MPICH serves its
//! active messages without a progress thread). The hook has work while a window spanning nodes
//! exists, which keeps the engine's loops running it.
//!
//! A request is applied to this rank's own window memory as the shared-memory path would: puts
//! and gets copy, accumulates and compare-and-swap run under this rank's accumulate mutex (the
//! one same-node origins take too), locks take this rank's reader-writer lock of the node's
//! region. A lock that is not free now waits in `locks` and is tried again on each pass; a
//! same-node holder that releases it rings this rank (`ffi::rma::sync`), so the pass comes.
use super::window::{Flavor, Window};
use super::wire::{self, Kind, Request};
use crate::error::{err, ErrorClass, MpiResult};
use crate::p2p::{Buf, Engine, Progress, ReqId, SendMode};
use std::sync::{Arc, Mutex, Weak};

#[derive(Default)]
pub struct Server {
    /// Taken with try_lock: a pass that finds it held (another thread of this rank, or the
    /// engine calling hooks again from inside this one) leaves the work to the holder.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The windows spanning nodes of this rank, by the point-to-point context of their
    /// communicator.
    windows: Vec<(u32, Weak<Window>)>,
    /// Replies UCX has not completed yet, with their bytes.
    sends: Vec<(ReqId, Vec<u8>)>,
    /// Receives of requests not complete yet: (context, origin's world rank, request, bytes).
    recvs: Vec<(u32, usize, ReqId, Vec<u8>)>,
    /// Lock requests waiting for the lock: (context, origin's world rank, request).
    locks: Vec<(u32, usize, Request)>,
}

/// Makes this rank serve the requests of other nodes to window `w` (if it spans nodes).
pub fn register(e: &Engine, w: &Arc<Window>) {
    if !w.spans {
        return;
    }
    let s = e.hook(Server::default);
    s.state.lock().unwrap_or_else(|p| p.into_inner()).windows.push((w.comm.context, Arc::downgrade(w)));
    e.hook_busy(true);
}

/// Stops serving window `w` (MPI_Win_free, after its closing barrier: no request is in flight).
pub fn unregister(e: &Engine, w: &Window) {
    if !w.spans {
        return;
    }
    let s = e.hook(Server::default);
    s.state.lock().unwrap_or_else(|p| p.into_inner()).windows.retain(|(c, _)| *c != w.comm.context);
    e.hook_busy(false);
}

impl Progress for Server {
    fn progress(&self, e: &Engine) -> bool {
        let Ok(mut guard) = self.state.try_lock() else { return false };
        // One reborrow, so the loops below can read `windows` while they push to `recvs`.
        let st = &mut *guard;
        let mut any = false;
        st.sends.retain(|(id, _)| e.take_done(*id).is_none());
        // Receives of requests that had not completed at once (requests come from other nodes
        // whole, through UCX, so there are none in practice), then the new requests.
        let mut ready = Vec::new();
        st.recvs.retain_mut(|r| match e.take_done(r.2) {
            None => true,
            Some(s) => {
                if s.error.is_none() {
                    ready.push((r.0, r.1, std::mem::take(&mut r.3)));
                }
                false
            }
        });
        for (ctx, _) in &st.windows {
            while let Some((m, status)) = e.take_arrived(wire::TAG_REQ, *ctx) {
                any = true;
                let mut buf = vec![0u8; status.bytes as usize];
                // SAFETY: `buf` has the message's length; it stays in `recvs` (its heap block does
                // not move) until the receive completed.
                let Ok(id) = (unsafe { e.imrecv(m, Buf::flat(buf.as_mut_ptr()), buf.len()) }) else { continue };
                match e.take_done(id) {
                    // A failed receive (its origin died) has no one to answer.
                    Some(s) if s.error.is_none() => ready.push((*ctx, status.source as usize, buf)),
                    Some(_) => {}
                    None => st.recvs.push((*ctx, status.source as usize, id, buf)),
                }
            }
        }
        for (ctx, src, buf) in ready {
            let Some(w) = window(st, ctx) else { continue };
            let Some(req) = Request::decode(&buf) else { continue };
            match req.kind() {
                Some(Kind::Lock) => st.locks.push((ctx, src, req)),
                Some(Kind::Unlock) => {
                    let a = w.region.rank(w.rank);
                    super::sync::rw_release(&a.lock, &a.lock_waiters, req.flag);
                    reply(e, st, ctx, src, req.reply_tag, wire::ok(&[]));
                }
                _ => {
                    let r = apply(&w, &req).map_or_else(|e| wire::failed(&e), |d| wire::ok(&d));
                    reply(e, st, ctx, src, req.reply_tag, r);
                }
            }
        }
        // Locks, in the order asked.
        let waiting = std::mem::take(&mut st.locks);
        for (ctx, src, req) in waiting {
            let Some(w) = window(st, ctx) else { continue };
            let a = w.region.rank(w.rank);
            if super::sync::rw_acquire(&a.lock, &a.lock_waiters, req.flag, &|| true) {
                any = true;
                reply(e, st, ctx, src, req.reply_tag, wire::ok(&[]));
            } else {
                st.locks.push((ctx, src, req));
            }
        }
        any
    }
}

/// The live window of context `ctx`, if this rank still serves one.
fn window(st: &State, ctx: u32) -> Option<Arc<Window>> {
    st.windows.iter().find(|(c, _)| *c == ctx).and_then(|(_, w)| w.upgrade())
}

fn reply(e: &Engine, st: &mut State, ctx: u32, dest: usize, tag: i32, bytes: Vec<u8>) {
    // SAFETY: the bytes stay in `sends` until the send completed.
    if let Ok(id) = crate::monitoring::unrecorded(|| unsafe { e.isend(Buf::flat(bytes.as_ptr()), bytes.len(), dest, tag, ctx, SendMode::Standard) }) {
        st.sends.push((id, bytes));
    }
}

/// The address in this process of the target bytes `[addr + off, + len)`, checked to lie in
/// this rank's window memory.
fn place(w: &Window, addr: u64, off: u64, len: u64) -> MpiResult<*mut u8> {
    let lo = addr as i128 + off as i64 as i128;
    let hi = lo + len as i128;
    if w.flavor == Flavor::Dynamic {
        let at = w.attached.lock().unwrap_or_else(|p| p.into_inner());
        if len > 0 && !super::window::covered(&at, lo, hi) {
            return Err(err(ErrorClass::RmaRange, format!("no attached memory covers addresses 0x{lo:x} to 0x{:x} of this dynamic window", hi - 1)));
        }
        return Ok(lo as u64 as usize as *mut u8);
    }
    if lo < 0 || hi > w.size_attr as i128 {
        return Err(err(ErrorClass::RmaRange, format!("target bytes {lo} to {} are outside the window of {} bytes", hi - 1, w.size_attr)));
    }
    Ok((w.base as u64).wrapping_add(lo as u64) as usize as *mut u8)
}

/// Checks every block of `req` and returns their places with their lengths.
fn places(w: &Window, req: &Request) -> MpiResult<Vec<(*mut u8, usize)>> {
    req.blocks.iter().map(|&(off, len)| Ok((place(w, req.addr, off, len)?, len as usize))).collect()
}

/// Copies the target blocks into one packed buffer.
///
/// # Safety
/// Every place is `len` readable bytes (checked by `places` to be window memory).
unsafe fn gather(ps: &[(*mut u8, usize)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ps.iter().map(|p| p.1).sum());
    for &(p, len) in ps {
        // SAFETY: per contract.
        v.extend_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
    }
    v
}

/// Copies packed `data` into the target blocks (as many bytes as they hold).
///
/// # Safety
/// Every place is `len` writable bytes of window memory, not overlapping `data`.
unsafe fn scatter(ps: &[(*mut u8, usize)], data: &[u8]) {
    let mut at = 0;
    for &(p, len) in ps {
        let n = len.min(data.len() - at);
        // SAFETY: per contract; `n` bytes remain in `data`.
        unsafe { std::ptr::copy_nonoverlapping(data[at..].as_ptr(), p, n) };
        at += n;
    }
}

/// Runs a Put, Get, Acc or Cas on this rank's window memory; the bytes to answer.
fn apply(w: &Window, req: &Request) -> MpiResult<Vec<u8>> {
    let ps = places(w, req)?;
    let bytes: usize = ps.iter().map(|p| p.1).sum();
    let short = |want: usize| err(ErrorClass::Intern, format!("an RMA request carries {} bytes for {want} target bytes", req.data.len()));
    let acc = &w.region.rank(w.rank).acc;
    match req.kind() {
        Some(Kind::Put) => {
            if req.data.len() != bytes {
                return Err(short(bytes));
            }
            // SAFETY: the places are checked window memory (MPI makes conflicting accesses
            // the application's error).
            unsafe { scatter(&ps, &req.data) };
            Ok(Vec::new())
        }
        // SAFETY: as above.
        Some(Kind::Get) => Ok(unsafe { gather(&ps) }),
        Some(Kind::Cas) => {
            if req.data.len() != 2 * bytes {
                return Err(short(2 * bytes));
            }
            super::sync::lock(acc);
            // SAFETY: as above, under the accumulate mutex that every accumulate takes.
            let old = unsafe { gather(&ps) };
            if old == req.data[bytes..] {
                // SAFETY: as above.
                unsafe { scatter(&ps, &req.data[..bytes]) };
            }
            super::sync::unlock(acc);
            Ok(old)
        }
        Some(Kind::Acc) => {
            let op = crate::op::ALL_OPS.iter().copied().find(|&o| o as u8 == req.op);
            let basic = crate::datatype::basic::Basic::all().find(|&b| b as u8 == req.basic);
            let (Some(op), Some(basic)) = (op, basic) else {
                return Err(err(ErrorClass::Intern, "an accumulate request names an unknown op or datatype"));
            };
            let red = crate::op::Reduction::new(op, basic)?;
            let n = req.n as usize;
            let no_op = op == crate::op::Op::NoOp;
            let elem_size: u64 = req.elem.iter().map(|b| b.1).sum();
            let padded = !req.elem.is_empty();
            let fits = if padded { req.elem_extent as usize == red.size && req.elem.iter().all(|&(o, l)| o + l <= req.elem_extent) } else { true };
            if !fits || n * if padded { elem_size as usize } else { red.size } != bytes || (!no_op && req.data.len() != bytes) {
                return Err(err(ErrorClass::Intern, "an accumulate request does not match its target bytes"));
            }
            super::sync::lock(acc);
            // SAFETY: as above, under the accumulate mutex; the kernels get `n` elements of
            // `red.size` bytes on both sides (checked above).
            let old = unsafe {
                let mut v = gather(&ps);
                let old = req.flag.then(|| v.clone());
                if !no_op {
                    if padded {
                        let (mut o, mut t) = (unpad(&req.elem, req.elem_extent as usize, n, &req.data), unpad(&req.elem, req.elem_extent as usize, n, &v));
                        red.apply(o.as_mut_ptr(), t.as_mut_ptr(), n);
                        v = pad(&req.elem, req.elem_extent as usize, n, &t);
                    } else {
                        red.apply(req.data.as_ptr(), v.as_mut_ptr(), n);
                    }
                    scatter(&ps, &v);
                }
                old
            };
            super::sync::unlock(acc);
            Ok(old.unwrap_or_default())
        }
        _ => Err(err(ErrorClass::Intern, format!("an RMA request of unknown kind {}", req.kind))),
    }
}

/// `n` elements of a packed stream as the kernels' padded structs (`extent` bytes each, the
/// element's `blocks` at their offsets).
fn unpad(blocks: &[(u64, u64)], extent: usize, n: usize, stream: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; n * extent];
    let mut at = 0;
    for i in 0..n {
        for &(off, len) in blocks {
            let (o, l) = (i * extent + off as usize, len as usize);
            v[o..o + l].copy_from_slice(&stream[at..at + l]);
            at += l;
        }
    }
    v
}

/// The inverse of `unpad`.
fn pad(blocks: &[(u64, u64)], extent: usize, n: usize, structs: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(structs.len());
    for i in 0..n {
        for &(off, len) in blocks {
            let o = i * extent + off as usize;
            v.extend_from_slice(&structs[o..o + len as usize]);
        }
    }
    v
}
