//! Partitioned communication (MPI 4.1 chapter 4): MPI_Psend_init, MPI_Precv_init, MPI_Pready*,
//! MPI_Parrived, over the engine's ordinary messages. Works on world ranks and packed bytes.
//!
//! Each partitioned request is an external persistent request of the engine (so MPI_Wait, MPI_Test
//! and the rest complete it as any other) plus an entry of this rank's [`Partitioned`] table, the
//! engine progress hook that moves its data. All its messages travel on the *hidden* context of
//! the communicator (`ctx | HIDDEN_CONTEXT`), which no user receive or probe ever names:
//!
//! - matching: MPI_Psend_init sends a handshake on the user's tag (the sender's channel tag, its
//!   partition count and partition size); MPI_Precv_init posts the receive for it. Handshakes match
//!   like point-to-point messages, in the order of the initialization calls, once for the life of
//!   the requests (MPI 4.1 section 4.2.2);
//! - data: MPI_Pready sends each contiguous run of newly ready send partitions at once, as a small
//!   header (first and last partition) and then the run's bytes, both on the sender's channel tag (a
//!   negative tag, unique per sending rank). The receiver, while its request is active, keeps one
//!   receive posted for the next header and, when it arrives, posts the receive of the run's bytes
//!   straight into the user's buffer (through a staging buffer only when the run does not fall on
//!   whole elements of a derived receive type, or goes past the receive buffer). Per pair, messages
//!   do not overtake, so each run lands where its header says, and the runs of a later activation
//!   wait, unexpected, until the receive is started again.
//!
//! Send and receive partitionings may differ: receive partition `i` covers packed bytes
//! `[i * rb, (i + 1) * rb)` and has arrived once every send partition overlapping that range has.
use super::buffer::Buf;
use super::engine::Engine;
use super::{Progress, ReqId, SendMode, Status};
use crate::error::{err, ErrorClass, MpiResult};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Added to a communicator's point-to-point context: the context of its partitioned traffic.
/// Context ids stay below it (`incarnation`: pair and generation use bits 0 to 29), and the id
/// stays even (point-to-point in the monitoring's terms).
pub const HIDDEN_CONTEXT: u32 = 1 << 30;

fn hidden(ctx: u32) -> u32 {
    ctx | HIDDEN_CONTEXT
}

/// Handshake: channel tag, send partitions, bytes per send partition, total bytes.
type Handshake = Box<[u64; 4]>;
/// Header of a run of send partitions: first, one past the last.
type Header = Box<[u64; 2]>;

fn words<const N: usize>(w: &[u64; N]) -> Buf {
    Buf::Flat(w.as_ptr() as *mut u8)
}

/// What the receiver learnt from the handshake.
#[derive(Clone, Copy)]
struct Sender {
    channel: i32,
    parts: usize,
    part_bytes: usize,
    total: usize,
}

/// The receive of a run's bytes.
struct Incoming {
    id: ReqId,
    first: usize,
    end: usize,
    /// The staging buffer and the stream offset its bytes go to, when not received in place.
    staging: Option<(Vec<u8>, usize)>,
}

enum Side {
    Send {
        channel: i32,
        ready: Vec<bool>,
        nready: usize,
    },
    Recv {
        /// The posted handshake receive, until it completes.
        hs: Option<(ReqId, Handshake)>,
        sender: Option<Sender>,
        /// Packed size of the receive buffer.
        cap: usize,
        /// Per send partition: its bytes are in the buffer (this activation).
        arrived: Vec<bool>,
        narrived: usize,
        /// Send partitions whose header arrived (this activation).
        headed: usize,
        header: Option<(ReqId, Header)>,
        data: Vec<Incoming>,
    },
}

struct Part {
    /// World rank of the peer; None for MPI_PROC_NULL.
    peer: Option<usize>,
    tag: i32,
    /// The communicator's point-to-point context (statuses map the source through it).
    ctx: u32,
    buf: Buf,
    parts: usize,
    part_bytes: usize,
    active: bool,
    /// MPI_Request_free came while active: drop the entry once it completes.
    freed: bool,
    /// Internal sends in flight, with the header each sends from (the handshake's words live in
    /// `hs_words`).
    sends: Vec<(ReqId, Option<Header>)>,
    hs_words: Option<Handshake>,
    error: Option<ErrorClass>,
    side: Side,
}

// SAFETY: the raw pointers are user buffers (and our own boxes) the engine reads and writes under
// the MPI contract; the table is only touched under its mutex.
unsafe impl Send for Part {}

/// The partitioned requests of one rank: its engine's progress hook.
#[derive(Default)]
pub struct Partitioned {
    parts: Mutex<HashMap<ReqId, Part>>,
    channels: AtomicU32,
}

impl Progress for Partitioned {
    fn progress(&self, e: &Engine) -> bool {
        // Another thread of this rank is at it: report movement so a waiter looks again.
        let Ok(mut t) = self.parts.try_lock() else { return true };
        let ids: Vec<ReqId> = t.iter().filter(|(_, p)| p.active).map(|(&id, _)| id).collect();
        let mut moved = false;
        for id in ids {
            moved |= advance(e, &mut t, id);
        }
        moved
    }
}

fn table(e: &Engine) -> Arc<Partitioned> {
    e.hook(Partitioned::default)
}

fn lock(t: &Partitioned) -> MutexGuard<'_, HashMap<ReqId, Part>> {
    t.parts.lock().unwrap_or_else(|p| p.into_inner())
}

/// MPI_Psend_init: `parts` partitions of `part_bytes` packed bytes each (whole elements) of `buf`,
/// to world rank `dest` (None: MPI_PROC_NULL) with `tag` on context `ctx`.
///
/// # Safety
/// `buf` holds the `parts * part_bytes` bytes for as long as the request lives (MPI contract).
pub unsafe fn psend_init(e: &Engine, buf: Buf, parts: usize, part_bytes: usize, dest: Option<usize>, tag: i32, ctx: u32) -> MpiResult<ReqId> {
    let t = table(e);
    let n = t.channels.fetch_add(1, Ordering::Relaxed) % (1 << 30);
    let channel = -2 - n as i32;
    let hs: Handshake = Box::new([channel as i64 as u64, parts as u64, part_bytes as u64, (parts * part_bytes) as u64]);
    let mut sends = Vec::new();
    if let Some(d) = dest {
        // SAFETY: the handshake's words live in the entry (leaked if it goes while still queued).
        sends.push((unsafe { e.isend(words(&hs), 32, d, tag, hidden(ctx), SendMode::Standard)? }, None));
    }
    let id = e.new_external_persistent();
    let side = Side::Send { channel, ready: vec![false; parts], nready: 0 };
    lock(&t).insert(id, Part { peer: dest, tag, ctx, buf, parts, part_bytes, active: false, freed: false, sends, hs_words: Some(hs), error: None, side });
    Ok(id)
}

/// MPI_Precv_init: `parts` partitions of `part_bytes` bytes each of `buf`, from world rank `src`
/// (None: MPI_PROC_NULL) with `tag` on context `ctx`.
///
/// # Safety
/// `buf` has room for the `parts * part_bytes` bytes for as long as the request lives.
pub unsafe fn precv_init(e: &Engine, buf: Buf, parts: usize, part_bytes: usize, src: Option<usize>, tag: i32, ctx: u32) -> ReqId {
    let t = table(e);
    let hs = src.map(|s| {
        let w: Handshake = Box::new([0; 4]);
        // SAFETY: the words live in the entry until the receive completes (or is cancelled).
        (unsafe { e.irecv(words(&w), 32, Some(s), tag, hidden(ctx)) }, w)
    });
    let id = e.new_external_persistent();
    let side = Side::Recv { hs, sender: None, cap: parts * part_bytes, arrived: Vec::new(), narrived: 0, headed: 0, header: None, data: Vec::new() };
    lock(&t).insert(id, Part { peer: src, tag, ctx, buf, parts, part_bytes, active: false, freed: false, sends: Vec::new(), hs_words: None, error: None, side });
    id
}

/// Whether `id` is a partitioned request of this rank.
pub fn is_partitioned(e: &Engine, id: ReqId) -> bool {
    lock(&table(e)).contains_key(&id)
}

/// MPI_Start on request `id` if it is partitioned: Some(result), else None.
pub fn start(e: &Engine, id: ReqId) -> Option<MpiResult> {
    let t = table(e);
    let mut g = lock(&t);
    let p = g.get_mut(&id)?;
    if let Err(er) = e.start_external(id) {
        return Some(Err(er));
    }
    p.active = true;
    p.error = None;
    e.hook_busy(true);
    match &mut p.side {
        Side::Send { ready, nready, .. } => {
            ready.iter_mut().for_each(|r| *r = false);
            *nready = 0;
        }
        Side::Recv { arrived, narrived, headed, .. } => {
            arrived.iter_mut().for_each(|a| *a = false);
            *narrived = 0;
            *headed = 0;
            if p.peer.is_none() {
                finish(e, p, id, Status::proc_null());
            }
        }
    }
    advance(e, &mut g, id);
    Some(Ok(()))
}

/// MPI_Pready, MPI_Pready_range, MPI_Pready_list on request `id`: marks `list` ready and sends
/// each contiguous run of them.
pub fn pready(e: &Engine, id: ReqId, list: &[i64]) -> MpiResult {
    let t = table(e);
    let mut g = lock(&t);
    let p = g.get_mut(&id).ok_or_else(|| err(ErrorClass::Request, "MPI_Pready needs a partitioned send request (from MPI_Psend_init)"))?;
    let Part { peer, ctx, buf, parts, part_bytes, active, sends, side, .. } = p;
    let Side::Send { channel, ready, nready } = side else {
        return Err(err(ErrorClass::Request, "MPI_Pready needs a partitioned send request, not a receive (MPI_Precv_init)"));
    };
    if !*active {
        return Err(err(ErrorClass::Request, "MPI_Pready on an inactive partitioned request: start it first (MPI_Start)"));
    }
    let mut idx = Vec::with_capacity(list.len());
    for &i in list {
        if i < 0 || i as u64 >= *parts as u64 {
            return Err(err(ErrorClass::Arg, format!("invalid partition {i}: the request has {parts} partitions ({})", crate::error::indices(*parts))));
        }
        idx.push(i as usize);
    }
    idx.sort_unstable();
    for (k, &i) in idx.iter().enumerate() {
        if ready[i] || (k > 0 && idx[k - 1] == i) {
            return Err(err(ErrorClass::Arg, format!("partition {i} is already ready in this activation of the request")));
        }
    }
    for &i in &idx {
        ready[i] = true;
    }
    *nready += idx.len();
    if let Some(peer) = *peer {
        let mut k = 0;
        while k < idx.len() {
            let first = idx[k];
            let mut end = first + 1;
            while k + 1 < idx.len() && idx[k + 1] == end {
                k += 1;
                end += 1;
            }
            k += 1;
            let h: Header = Box::new([first as u64, end as u64]);
            let (start, n) = (first * *part_bytes, (end - first) * *part_bytes);
            // A send partition is whole elements, so its window always exists when non-empty.
            let data = if n == 0 { Buf::Flat(std::ptr::null_mut()) } else { buf.window(start, n).expect("send partitions are whole elements") };
            // SAFETY: the header lives in `sends` until its send completes; the user's buffer holds
            // the partitions until the request completes (MPI contract).
            unsafe {
                sends.push((e.isend(words(&h), 16, peer, *channel, hidden(*ctx), SendMode::Standard)?, Some(h)));
                sends.push((e.isend(data, n, peer, *channel, hidden(*ctx), SendMode::Standard)?, None));
            }
        }
    }
    advance(e, &mut g, id);
    Ok(())
}

/// MPI_Parrived on request `id`: whether receive partition `i` has arrived (true on an inactive
/// request).
pub fn parrived(e: &Engine, id: ReqId, i: i64) -> MpiResult<bool> {
    e.poke();
    let t = table(e);
    let mut g = lock(&t);
    let p = g.get(&id).ok_or_else(|| err(ErrorClass::Request, "MPI_Parrived needs a partitioned receive request (from MPI_Precv_init)"))?;
    if !matches!(p.side, Side::Recv { .. }) {
        return Err(err(ErrorClass::Request, "MPI_Parrived needs a partitioned receive request, not a send (MPI_Psend_init)"));
    }
    if i < 0 || i as u64 >= p.parts as u64 {
        return Err(err(ErrorClass::Arg, format!("invalid partition {i}: the request has {} partitions ({})", p.parts, crate::error::indices(p.parts as usize))));
    }
    advance(e, &mut g, id);
    let Some(p) = g.get(&id) else { return Ok(true) };
    let i = i as usize;
    let got = !p.active
        || match &p.side {
            Side::Recv { sender: Some(s), arrived, narrived, .. } => {
                let (start, end) = (i * p.part_bytes, (i + 1) * p.part_bytes);
                if s.part_bytes == 0 || p.part_bytes == 0 || start >= s.total {
                    *narrived == s.parts
                } else {
                    let last = ((end.min(s.total) - 1) / s.part_bytes).min(s.parts - 1);
                    (start / s.part_bytes..=last).all(|j| arrived[j])
                }
            }
            _ => false,
        };
    drop(g);
    if !got {
        e.poll_failed();
    }
    Ok(got)
}

/// MPI_Cancel on request `id` if it is partitioned: Some(()), else None. An active receive of
/// which nothing has arrived in this activation is cancelled (it completes at once, marked
/// cancelled; what the sender sends for it goes to the next activation, as a cancelled receive's
/// message goes to the next matching receive). Anything else completes normally, as the
/// standard allows (MPI_Test_cancelled then reports false), like the engine's sends.
pub fn cancel(e: &Engine, id: ReqId) -> Option<()> {
    let t = table(e);
    let mut g = lock(&t);
    let p = g.get_mut(&id)?;
    if !p.active {
        return Some(());
    }
    let Side::Recv { headed, narrived, header, data, .. } = &mut p.side else { return Some(()) };
    if *headed > 0 || *narrived > 0 || !data.is_empty() {
        return Some(());
    }
    if let Some((h, _)) = header {
        e.cancel(*h);
        match e.take_done(*h) {
            Some(st) if st.cancelled => *header = None,
            // Matched meanwhile: its run is on the way, so the receive goes on.
            _ => return Some(()),
        }
    }
    finish(e, p, id, Status { cancelled: true, context: p.ctx, ..Status::empty() });
    drop_if_freed(e, &mut g, id, true);
    Some(())
}

/// MPI_Request_free on request `id` if it is partitioned: drops its entry now, or when its
/// activation completes.
pub fn forget(e: &Engine, id: ReqId) {
    let t = table(e);
    let mut g = lock(&t);
    let Some(p) = g.get_mut(&id) else { return };
    if p.active {
        p.freed = true;
    } else if let Some(p) = g.remove(&id) {
        release(e, p);
    }
}

/// Lets go of an entry's internal requests. Buffers an unfinished one may still read are leaked
/// rather than freed under it.
fn release(e: &Engine, mut p: Part) {
    let pending = !p.sends.is_empty();
    for (s, h) in p.sends.drain(..) {
        e.free(s);
        if let Some(h) = h {
            std::mem::forget(h);
        }
    }
    if pending {
        if let Some(w) = p.hs_words.take() {
            std::mem::forget(w);
        }
    }
    if let Side::Recv { hs: Some((h, w)), .. } = &mut p.side {
        // Never matched: withdraw it (a receive already matched completes at once anyway).
        e.cancel(*h);
        if e.take_done(*h).is_none() {
            e.free(*h);
            std::mem::forget(std::mem::replace(w, Box::new([0; 4])));
        }
    }
}

/// Ends the activation of `p` (request `id`) with status `st`.
fn finish(e: &Engine, p: &mut Part, id: ReqId, st: Status) {
    p.active = false;
    e.hook_busy(false);
    e.complete_external_status(id, st);
}

/// Moves request `id` along: takes its finished internal operations, posts the receives the
/// receiver needs next, completes it when everything is through. Whether anything moved.
fn advance(e: &Engine, t: &mut HashMap<ReqId, Part>, id: ReqId) -> bool {
    let Some(p) = t.get_mut(&id) else { return false };
    if !p.active {
        return false;
    }
    let mut moved = false;
    let error = &mut p.error;
    p.sends.retain(|&(s, _)| match e.take_done(s) {
        Some(st) => {
            if st.error.is_some() {
                error.get_or_insert(st.error.unwrap());
            }
            moved = true;
            false
        }
        None => true,
    });
    let done = match &mut p.side {
        Side::Send { nready, .. } => (*nready == p.parts && p.sends.is_empty()).then(|| Status { error: p.error, context: p.ctx, ..Status::empty() }),
        Side::Recv { hs, sender, cap, arrived, narrived, headed, header, data } => {
            let peer = p.peer.expect("a receive from MPI_PROC_NULL completes when started");
            let ctx = hidden(p.ctx);
            if sender.is_none() {
                let Some((h, w)) = hs else { return moved };
                let Some(st) = e.take_done(*h) else { return moved };
                moved = true;
                if let Some(class) = st.error {
                    *hs = None;
                    finish(e, p, id, Status { source: peer as i32, tag: p.tag, error: Some(class), bytes: 0, cancelled: false, context: p.ctx });
                    return drop_if_freed(e, t, id, moved);
                }
                let s = Sender { channel: w[0] as i64 as i32, parts: w[1] as usize, part_bytes: w[2] as usize, total: w[3] as usize };
                *sender = Some(s);
                *arrived = vec![false; s.parts];
                *hs = None;
            }
            let s = sender.expect("set above");
            // Headers: one receive posted at a time, and each run's data receive posted as soon
            // as its header is in, so the two alternate in post order as they do on the wire.
            loop {
                if let Some((h, w)) = header {
                    let Some(st) = e.take_done(*h) else { break };
                    moved = true;
                    if let Some(class) = st.error {
                        // A failed peer or a revoked communicator: nothing more will come, so
                        // the request ends with the error once its data receives are through.
                        p.error.get_or_insert(class);
                        *header = None;
                        break;
                    }
                    let (first, end) = (w[0] as usize, w[1] as usize);
                    *header = None;
                    *headed += end - first;
                    let (start, n) = (first * s.part_bytes, (end - first) * s.part_bytes);
                    let place = if start + n <= *cap { if n == 0 { Some(Buf::Flat(std::ptr::null_mut())) } else { p.buf.window(start, n) } } else { None };
                    let (rbuf, staging) = match place {
                        Some(b) => (b, None),
                        None => {
                            let mut v = vec![0u8; n];
                            (Buf::Flat(v.as_mut_ptr()), Some((v, start)))
                        }
                    };
                    // SAFETY: the user's buffer has room for its partitions while the request is
                    // active (MPI contract); a staging buffer lives in `data` until the receive is done.
                    let rid = unsafe { e.irecv(rbuf, n, Some(peer), s.channel, ctx) };
                    data.push(Incoming { id: rid, first, end, staging });
                }
                if *headed >= s.parts || p.error.is_some() {
                    break;
                }
                let w: Header = Box::new([0; 2]);
                // SAFETY: the words live in `header` until the receive completes.
                let h = unsafe { e.irecv(words(&w), 16, Some(peer), s.channel, ctx) };
                *header = Some((h, w));
            }
            let buf = &p.buf;
            let error = &mut p.error;
            data.retain(|d| match e.take_done(d.id) {
                Some(st) => {
                    if st.error.is_some() {
                        error.get_or_insert(st.error.unwrap());
                    }
                    if let Some((v, start)) = &d.staging {
                        let n = cap.saturating_sub(*start).min(v.len());
                        // SAFETY: stream bytes [start, start + n) lie inside the receive buffer
                        // (n is clipped to its size); the staging buffer holds them.
                        unsafe { buf.unpack(*start, v.as_ptr(), n) };
                    }
                    arrived[d.first..d.end].iter_mut().for_each(|a| *a = true);
                    *narrived += d.end - d.first;
                    moved = true;
                    false
                }
                None => true,
            });
            let through = header.is_none() && data.is_empty();
            (through && (*narrived == s.parts || p.error.is_some())).then(|| {
                let error = p.error.or((s.total > *cap).then_some(ErrorClass::Truncate));
                Status { source: peer as i32, tag: p.tag, error, bytes: s.total.min(*cap) as u64, cancelled: false, context: p.ctx }
            })
        }
    };
    if let Some(st) = done {
        finish(e, p, id, st);
        moved = true;
        return drop_if_freed(e, t, id, moved);
    }
    moved
}

/// After an activation ended: drops the entry if the user freed the request meanwhile.
fn drop_if_freed(e: &Engine, t: &mut HashMap<ReqId, Part>, id: ReqId, moved: bool) -> bool {
    if t.get(&id).is_some_and(|p| p.freed) {
        if let Some(p) = t.remove(&id) {
            release(e, p);
        }
    }
    moved
}
