//! MPI_Reduce along a Clairvoyant schedule (`crate::clairvoyant`; Marendic et al. 2016,
//! Proficz & Ocetkiewicz 2021): the vector is cut into the schedule's N segments
//! (`super::block`), and each transfer (round, from, to, segment) is one message of that
//! segment's partial result.
//!
//! Execution is data-driven (`docs/design/clairvoyant.md` section 8): a rank walks its own
//! rounds in order, posting at most one receive and one send per round and waiting for both, so
//! a transfer waits for its data, never for a clock; a wrong arrival prediction costs time, never
//! correctness. Every round depends only on earlier rounds, so the walk cannot deadlock. P' makes
//! the segment sent in a round differ from the one received, so both can be in flight at once.
//! Messages carry the round in the tag's round bits (`Coll::tag_at`); between two ranks they
//! match in round order anyway (non-overtaking). Waiting for the send in its own round is
//! deliberate: a waiting sender of a large message copies half of it itself (split copies, see
//! `OXMPI_SPLIT`); leaving sends in flight across rounds measured slower.
//!
//! Live arrivals (issue 21 item 2): with a board cell (`Live`), the waits also watch the cell's
//! re-plan version. When the watchdog (`clairvoyant_watch`) declares ranks late, every rank
//! finishes the cut of the schedule it runs (`clairvoyant::replan`: its steps up to the cut,
//! the send of the next one, that step's receive cancelled, then the orphans addressed to it)
//! and goes on with the schedule built from the holdings at the cut, on a fresh phase of the
//! tag. Ranks that arrive after a re-plan do the same for each re-plan they missed (they were
//! late in each). From the first re-plan on, sends are no longer waited for in their round
//! (the cut assumes sends never hold a rank back) but at the end, and a segment received while
//! its accumulator cell is still being read lands in a stash buffer instead.
//!
//! Data: each segment lives in the caller's send buffer (the rank's own contribution, read
//! only), in the accumulator (the root's receive buffer, else one vector-sized scratch allocated
//! at the first receive), or in a stash; or nowhere, once sent. A combine into a segment still in
//! the send buffer receives straight into the accumulator and folds the own contribution in
//! (commutative ops only), so no segment is copied before it is needed. One more segment-sized
//! buffer takes the incoming data of combines into the accumulator.
//!
//! Threads mode moves addresses: a transfer is the sender's (address, length) of its partial
//! result; the receiver reads (copies or combines) the sender's memory and answers with an
//! empty acknowledgement, until which the sender leaves that memory alone.
use super::clairvoyant_watch::{self, Watched};
use super::{block, Coll};
use crate::clairvoyant::replan::{self, Step};
use crate::clairvoyant::{cache, Problem, Schedule};
use crate::error::{err, ErrorClass, MpiResult};
use crate::op::Reduction;
use crate::p2p::{ReqId, Status};
use crate::runtime::pap_board::{CellRef, Replan};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Phases of the tag used by re-plan v (1..=MAX_REPLANS): PHASE_REPLAN + v.
const PHASE_REPLAN: i32 = 240;
/// Phases of the acknowledgements of re-plan v (0..=MAX_REPLANS): PHASE_ACK + v.
const PHASE_ACK: i32 = 230;

/// What an executor needs to follow re-plans of its call.
pub struct Live {
    pub cell: CellRef,
    /// Re-plans published before this rank entered (it was late in each).
    pub missed: Vec<Replan>,
    /// Arrival quantum and round length (ns) the call's problems use.
    pub quantum: i64,
    pub round: i64,
    /// For the watchdog.
    pub watch: Watched,
}

/// Where a segment's partial result is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Loc {
    /// The own contribution, in the send buffer.
    Own,
    /// The accumulator's cell of the segment.
    Acc,
    /// Stash buffer k.
    Stash(usize),
}

/// A request whose peer reads our memory (a send; in threads mode the acknowledgement we wait
/// for), to finish before that memory is reused or freed.
struct Reading {
    req: ReqId,
    /// Communicator rank of the peer.
    peer: usize,
    /// An acknowledgement (a receive) rather than a send.
    ack: bool,
    /// The accumulator cell it reads, if that is where the data is.
    acc_seg: Option<usize>,
    /// Threads mode: the (address, length) message, alive until the send completes.
    _msg: Option<Box<[u64; 2]>>,
}

/// A posted receive of one transfer.
struct Incoming {
    req: ReqId,
    from: usize,
    seg: usize,
    tag: i32,
    how: Landing,
}

enum Landing {
    /// Processes mode: the data lands at `loc` (the segment was held nowhere or in the send
    /// buffer; `fold` then folds the own contribution in).
    At { loc: Loc, fold: bool },
    /// Processes mode: the data lands in `incoming`, to combine into where the segment is.
    Combine,
    /// Threads mode: the sender's (address, length).
    Address(Box<[u64; 2]>),
}

/// Why a walk stopped early: a re-plan appeared. `started`: step `step` had its operations
/// posted (its receive, if any, still pending as `recv`); else steps before `step` are done and
/// `step` was not begun.
struct Interrupt {
    step: usize,
    started: bool,
    recv: Option<Incoming>,
}

/// Reduces `count` elements along `sched` (built for `cx.size()` processes, root `root` and
/// `segments` segments, `segments <= count`), following re-plans when `live` is given.
/// Arguments otherwise as `reduce::binomial`; `red` must be commutative.
///
/// # Safety
/// As `reduce::binomial`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, sched: &Arc<Schedule>, segments: usize, live: Option<Live>) -> MpiResult {
    let is_root = cx.rank() == root;
    let own = if is_root && std::ptr::eq(sendbuf, recvbuf) { Loc::Acc } else { Loc::Own };
    let mut ex = Exec {
        cx,
        sendbuf,
        count,
        red,
        segments,
        sz: red.size,
        threads: super::select::threads_mode(),
        loc: vec![Some(own); segments],
        scratch: None,
        acc: if is_root { recvbuf } else { std::ptr::null_mut() },
        stashes: Vec::new(),
        incoming: Vec::new(),
        reading: Vec::new(),
        relaxed: false,
        cell: None,
    };
    let (res, _registration) = match live {
        Some(l) => {
            ex.cell = Some(l.cell);
            let reg = clairvoyant_watch::watch(l.watch);
            // SAFETY: per this function's contract.
            (unsafe { ex.run_live(sched, root, l.missed, l.quantum, l.round) }, reg)
        }
        // SAFETY: per this function's contract.
        None => (unsafe { ex.walk(&replan::steps(sched, cx.rank()), 0, 0) }.map(|_| ()), None),
    };
    // Memory peers read (sends, acknowledgements) must outlive their reads. After an error an
    // acknowledgement may never come: the memory is left to the peers (leaked) instead.
    if res.is_err() {
        let reading = std::mem::take(&mut ex.reading);
        if !reading.is_empty() {
            std::mem::forget(ex.scratch.take());
            std::mem::forget(std::mem::take(&mut ex.stashes));
            std::mem::forget(reading);
        }
        return res;
    }
    for r in std::mem::take(&mut ex.reading) {
        ex.finish_reading(r)?;
    }
    if is_root {
        for s in 0..segments {
            let (off, bytes, _) = ex.seg(s);
            let from = match ex.loc[s] {
                Some(Loc::Acc) => continue,
                Some(Loc::Own) => sendbuf.wrapping_add(off),
                Some(Loc::Stash(k)) => ex.stashes[k].as_ptr(),
                None => return Err(err(ErrorClass::Intern, format!("Clairvoyant reduce: the root ended without segment {s}"))),
            };
            // SAFETY: `from` holds the segment's `bytes` bytes (send buffer or a stash), disjoint
            // from recvbuf (not in place when the own contribution is still in the send buffer).
            unsafe { std::ptr::copy_nonoverlapping(from, recvbuf.wrapping_add(off), bytes) };
        }
    }
    Ok(())
}

/// One rank's execution state.
struct Exec<'a, 'b> {
    cx: &'a Coll<'b>,
    sendbuf: *const u8,
    count: usize,
    red: &'a Reduction,
    segments: usize,
    sz: usize,
    threads: bool,
    /// Where each segment's partial result is (None: sent, nothing held).
    loc: Vec<Option<Loc>>,
    scratch: Option<Vec<u8>>,
    acc: *mut u8,
    stashes: Vec<Vec<u8>>,
    /// Processes mode: incoming data of combines.
    incoming: Vec<u8>,
    reading: Vec<Reading>,
    /// After a re-plan: sends are not waited for in their round.
    relaxed: bool,
    cell: Option<CellRef>,
}

impl Exec<'_, '_> {
    /// Byte offset, byte length and element count of segment `s`.
    fn seg(&self, s: usize) -> (usize, usize, usize) {
        let (start, len) = block(self.count, self.segments, s);
        (start * self.sz, len * self.sz, len)
    }

    /// The accumulator, allocated (one vector) at the first receive.
    fn acc(&mut self) -> *mut u8 {
        if self.acc.is_null() {
            self.acc = self.scratch.insert(vec![0u8; self.count * self.sz]).as_mut_ptr();
        }
        self.acc
    }

    /// The address of segment `s` at `loc`.
    fn at(&mut self, s: usize, loc: Loc) -> *mut u8 {
        let off = self.seg(s).0;
        match loc {
            Loc::Own => self.sendbuf.wrapping_add(off) as *mut u8,
            Loc::Acc => self.acc().wrapping_add(off),
            Loc::Stash(k) => self.stashes[k].as_mut_ptr(),
        }
    }

    /// The tag of round `round` of re-plan `ver`.
    fn tag(&self, ver: usize, round: u64) -> i32 {
        if ver == 0 { self.cx.tag_at(round as usize) } else { self.cx.phase(PHASE_REPLAN + ver as i32).tag_at(round as usize) }
    }

    /// The tag of the acknowledgements of the transfer on data tag `tag` (threads mode): a phase
    /// of their own, so an acknowledgement never matches an address message of the same round
    /// between the same two ranks (in a swap round whose one half became an orphan at a re-plan,
    /// the orphan's acknowledgement reaches its sender before that sender's own address message
    /// of the round is taken).
    fn ack_of(tag: i32) -> i32 {
        let phase = (tag >> 8) & 0xff;
        let ver = if phase == 0 { 0 } else { phase - PHASE_REPLAN };
        (tag & !0xff00) | ((PHASE_ACK + ver) << 8)
    }

    /// Whether a re-plan newer than `ver` was published.
    fn replanned(&self, ver: usize) -> bool {
        self.cell.is_some_and(|c| c.version() > ver)
    }

    /// Waits for `req`; with `watch`, gives up (None) when a re-plan newer than `ver` appears.
    fn wait(&self, req: ReqId, watch: Option<usize>) -> Option<Status> {
        match (watch, self.cell) {
            (Some(ver), Some(c)) => {
                self.cx.u.engine.wait_or(req, || c.version() > ver)
            }
            _ => Some(self.cx.u.engine.wait(req)),
        }
    }

    fn finish_reading(&self, r: Reading) -> MpiResult {
        let st = self.cx.u.engine.wait(r.req);
        if r.ack { super::check_received(&st, 0, r.peer) } else { super::sent_result(&st) }
    }

    /// Where a segment arriving into an empty or send-buffer cell can land: the accumulator cell,
    /// unless a peer still reads it (then, before any re-plan, wait for that read, watching; after
    /// one, or if a re-plan interrupts the wait, a new stash).
    fn landing(&mut self, s: usize, ver: usize) -> MpiResult<Loc> {
        loop {
            let Some(i) = self.reading.iter().position(|r| r.acc_seg == Some(s)) else { return Ok(Loc::Acc) };
            if self.relaxed {
                break;
            }
            let req = self.reading[i].req;
            match self.wait(req, Some(ver)) {
                Some(st) => {
                    let r = self.reading.swap_remove(i);
                    if r.ack { super::check_received(&st, 0, r.peer)? } else { super::sent_result(&st)? }
                }
                None => {
                    self.relaxed = true;
                    break;
                }
            }
        }
        let bytes = self.seg(s).1;
        self.stashes.push(vec![0u8; bytes]);
        Ok(Loc::Stash(self.stashes.len() - 1))
    }

    /// Posts the receive of segment `s` from `from` on `tag`.
    fn post_recv(&mut self, from: usize, s: usize, tag: i32, ver: usize) -> MpiResult<Incoming> {
        let w = self.cx.c.world_rank(from);
        if self.threads {
            let mut msg = Box::new([0u64; 2]);
            // SAFETY: 16 writable bytes, boxed: they stay put until the receive completes or is
            // cancelled (the box lives in the returned `Incoming`).
            let req = unsafe { self.cx.irecv_world(msg.as_mut_ptr() as *mut u8, 16, w, tag) };
            return Ok(Incoming { req, from, seg: s, tag, how: Landing::Address(msg) });
        }
        let bytes = self.seg(s).1;
        let (dst, how) = match self.loc[s] {
            None | Some(Loc::Own) => {
                let fold = self.loc[s] == Some(Loc::Own);
                let loc = self.landing(s, ver)?;
                (self.at(s, loc), Landing::At { loc, fold })
            }
            Some(_) => {
                let max = self.seg(0).1;
                if self.incoming.len() < max {
                    self.incoming = vec![0u8; max];
                }
                (self.incoming.as_mut_ptr(), Landing::Combine)
            }
        };
        // SAFETY: `dst` has `bytes` writable bytes (a segment's cell, a stash, or `incoming`,
        // at least the largest segment) that nothing else touches until the receive completes.
        let req = unsafe { self.cx.irecv_world(dst, bytes, w, tag) };
        Ok(Incoming { req, from, seg: s, tag, how })
    }

    /// Completes a received transfer (`st` its status): copies or combines the data.
    fn finish_recv(&mut self, inc: Incoming, st: &Status, ver: usize) -> MpiResult {
        let s = inc.seg;
        let (_, bytes, len) = self.seg(s);
        match inc.how {
            Landing::At { loc, fold } => {
                super::check_received(st, bytes, inc.from)?;
                if fold {
                    let own = self.at(s, Loc::Own);
                    let dst = self.at(s, loc);
                    // SAFETY: disjoint cells of `len` elements: the own contribution (send
                    // buffer) folded into where the partial result landed (commutative op).
                    unsafe { self.red.apply(own, dst, len) };
                }
                self.loc[s] = Some(loc);
            }
            Landing::Combine => {
                super::check_received(st, bytes, inc.from)?;
                let loc = self.loc[s].expect("combines go to a held segment");
                let dst = self.at(s, loc);
                // SAFETY: `incoming` holds the received `len` elements; `dst` is our partial
                // result of `s` (accumulator or stash), disjoint from it.
                unsafe { self.red.apply(self.incoming.as_ptr(), dst, len) };
            }
            Landing::Address(msg) => {
                super::check_received(st, 16, inc.from)?;
                if msg[1] != bytes as u64 || msg[0] == 0 {
                    return Err(err(ErrorClass::Intern, format!("Clairvoyant reduce: a peer announced {} bytes of segment {s}, expected {bytes}", msg[1])));
                }
                let peer = msg[0] as usize as *const u8;
                match self.loc[s] {
                    None | Some(Loc::Own) => {
                        let fold = self.loc[s] == Some(Loc::Own);
                        let loc = self.landing(s, ver)?;
                        let dst = self.at(s, loc);
                        // SAFETY: `peer` is the sender's `bytes`-byte partial result of `s` in this
                        // process, unchanged until our acknowledgement; `dst` is ours, read by no
                        // one (`landing`), disjoint from it and from the send buffer.
                        unsafe {
                            std::ptr::copy_nonoverlapping(peer, dst, bytes);
                            if fold {
                                self.red.apply(self.sendbuf.wrapping_add(self.seg(s).0), dst, len);
                            }
                        }
                        self.loc[s] = Some(loc);
                    }
                    Some(loc) => {
                        let dst = self.at(s, loc);
                        // SAFETY: as above; `dst` is our private partial result of `s`.
                        unsafe { self.red.apply(peer, dst, len) };
                    }
                }
                let nothing = std::ptr::NonNull::<u8>::dangling().as_ptr();
                // SAFETY: zero bytes are sent.
                let ack = unsafe { self.cx.isend_world(nothing, 0, self.cx.c.world_rank(inc.from), Self::ack_of(inc.tag))? };
                self.reading.push(Reading { req: ack, peer: inc.from, ack: false, acc_seg: None, _msg: None });
            }
        }
        Ok(())
    }

    /// Posts the send of segment `s` to `to` on `tag`; returns the data send's request.
    fn post_send(&mut self, to: usize, s: usize, tag: i32) -> MpiResult<ReqId> {
        let loc = self.loc[s].take().ok_or_else(|| err(ErrorClass::Intern, format!("Clairvoyant reduce: segment {s} sent but not held")))?;
        let src = self.at(s, loc);
        let bytes = self.seg(s).1;
        let w = self.cx.c.world_rank(to);
        let acc_seg = (loc == Loc::Acc).then_some(s);
        if self.threads {
            let msg = Box::new([src as u64, bytes as u64]);
            // SAFETY: 16 readable bytes, boxed and kept in `reading` until the send completes.
            let req = unsafe { self.cx.isend_world(msg.as_ptr() as *const u8, 16, w, tag)? };
            let nothing = std::ptr::NonNull::<u8>::dangling().as_ptr();
            // SAFETY: zero bytes are received.
            let ack = unsafe { self.cx.irecv_world(nothing, 0, w, Self::ack_of(tag)) };
            self.reading.push(Reading { req: ack, peer: to, ack: true, acc_seg, _msg: None });
            self.reading.push(Reading { req, peer: to, ack: false, acc_seg: None, _msg: Some(msg) });
            return Ok(req);
        }
        // SAFETY: the segment's `bytes` bytes at `src` stay unwritten until the send completes:
        // it is in `reading`, and `landing` never writes a cell being read.
        let req = unsafe { self.cx.isend_world(src, bytes, w, tag)? };
        self.reading.push(Reading { req, peer: to, ack: false, acc_seg, _msg: None });
        Ok(req)
    }

    /// Runs `steps[from..]` of re-plan `ver`, watching for newer re-plans when there is a cell.
    ///
    /// # Safety
    /// As `reduce`.
    unsafe fn walk(&mut self, steps: &[Step], from: usize, ver: usize) -> MpiResult<Option<Interrupt>> {
        for (i, st) in steps.iter().enumerate().skip(from) {
            let tag = self.tag(ver, st.round);
            let inc = match st.recv {
                Some((f, s, _)) => Some(self.post_recv(f, s, tag, ver)?),
                None => None,
            };
            let sent = match st.send {
                Some((t, s, _)) => Some(self.post_send(t, s, tag)?),
                None => None,
            };
            if let Some(inc) = inc {
                match self.wait(inc.req, Some(ver)) {
                    Some(status) => self.finish_recv(inc, &status, ver)?,
                    None => return Ok(Some(Interrupt { step: i, started: true, recv: Some(inc) })),
                }
            }
            if let (false, false, Some(req)) = (self.relaxed, self.threads, sent) {
                // Before any re-plan, a send is waited for in its round (split copies).
                match self.wait(req, Some(ver)) {
                    Some(st) => {
                        self.reading.retain(|r| r.req != req);
                        super::sent_result(&st)?;
                    }
                    None => {
                        self.relaxed = true;
                        return Ok(Some(Interrupt { step: i + 1, started: false, recv: None }));
                    }
                }
            }
            if self.replanned(ver) {
                return Ok(Some(Interrupt { step: i + 1, started: false, recv: None }));
            }
        }
        Ok(None)
    }

    /// Finishes this rank's part of the cut of `sched` (re-plan `ver`) for late set `late`, from
    /// where `stop` left it (module documentation of `clairvoyant::replan`).
    fn finish_cut(&mut self, sched: &Schedule, holds: &[u64], late: &[bool], stop: Interrupt, ver: usize) -> MpiResult<replan::Cut> {
        self.relaxed = true;
        let me = self.cx.rank();
        let cut = replan::cut(sched, late.len(), self.segments, holds, late);
        let steps = replan::steps(sched, me);
        let pos = cut.pos[me];
        if stop.step > pos || (stop.started && stop.step == pos && late[me]) {
            return Err(err(ErrorClass::Intern, format!("Clairvoyant reduce: step {} of rank {me} is past its re-plan cut {pos}", stop.step)));
        }
        let mut j = stop.step;
        if stop.started {
            if j < pos {
                if let Some(inc) = stop.recv {
                    let st = self.cx.u.engine.wait(inc.req);
                    self.finish_recv(inc, &st, ver)?;
                }
                j += 1;
            } else if let Some(inc) = stop.recv {
                // Its sender stops before this transfer: nothing can match it.
                self.cx.u.engine.cancel(inc.req);
                let st = self.cx.u.engine.wait(inc.req);
                if !st.cancelled {
                    return Err(err(ErrorClass::Intern, "Clairvoyant reduce: a receive past the re-plan cut matched"));
                }
            }
        }
        while j < pos {
            let st = steps[j];
            let tag = self.tag(ver, st.round);
            let inc = match st.recv {
                Some((f, s, _)) => Some(self.post_recv(f, s, tag, ver)?),
                None => None,
            };
            if let Some((t, s, _)) = st.send {
                self.post_send(t, s, tag)?;
            }
            if let Some(inc) = inc {
                let status = self.cx.u.engine.wait(inc.req);
                self.finish_recv(inc, &status, ver)?;
            }
            j += 1;
        }
        // The send of the step at the cut is posted (a late rank posts nothing).
        if j == pos && !late[me] && !(stop.started && stop.step == pos) {
            if let Some(Step { send: Some((t, s, _)), round, .. }) = steps.get(pos).copied() {
                let tag = self.tag(ver, round);
                self.post_send(t, s, tag)?;
            }
        }
        for t in cut.orphans.iter().filter(|t| t.to as usize == me) {
            let tag = self.tag(ver, t.round);
            let inc = self.post_recv(t.from as usize, t.seg as usize, tag, ver)?;
            let status = self.cx.u.engine.wait(inc.req);
            self.finish_recv(inc, &status, ver)?;
        }
        cache::stats().takeovers.fetch_add(1, Relaxed);
        Ok(cut)
    }

    /// Runs the call, following every re-plan (those missed before entering first).
    ///
    /// # Safety
    /// As `reduce`.
    unsafe fn run_live(&mut self, first: &Arc<Schedule>, root: usize, missed: Vec<Replan>, quantum: i64, round: i64) -> MpiResult {
        let n = self.cx.size();
        let me = self.cx.rank();
        let mut sched = first.clone();
        let mut holds: Vec<u64> = crate::clairvoyant::start_columns(&Problem { arrivals: vec![0; n], root, segments: self.segments, round, holds: Vec::new() });
        let mut ver = 0;
        // Re-plans published before this rank entered: it was late in each.
        let mut pending = missed.into_iter();
        let mut stop = Interrupt { step: 0, started: false, recv: None };
        loop {
            let record = match pending.next() {
                Some(r) => r,
                None => {
                    let steps = replan::steps(&sched, me);
                    // SAFETY: per this function's contract.
                    match unsafe { self.walk(&steps, stop.step, ver) }? {
                        None => return Ok(()),
                        Some(i) => stop = i,
                    }
                    // A rank that entered sees every record from ver + 1 on.
                    self.cell.expect("live").record(ver + 1)
                }
            };
            let late: Vec<bool> = (0..n).map(|i| record.late >> i & 1 == 1).collect();
            let cut = self.finish_cut(&sched, &holds, &late, std::mem::replace(&mut stop, Interrupt { step: 0, started: false, recv: None }), ver)?;
            holds = cut.holds;
            ver += 1;
            clairvoyant_watch::poke();
            let pb = Problem { arrivals: record.pattern.iter().map(|&x| x.saturating_mul(quantum)).collect(), root, segments: self.segments, round, holds: holds.clone() };
            pb.check().map_err(|e| err(ErrorClass::Intern, format!("Clairvoyant re-plan inputs: {e}")))?;
            sched = cache::get(&pb);
        }
    }
}
