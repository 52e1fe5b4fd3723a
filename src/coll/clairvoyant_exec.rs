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
//! Data: each segment lives either in the caller's send buffer (the rank's own contribution,
//! read only) or in a private accumulator (the root's receive buffer, else one vector-sized
//! scratch allocated at the first receive). A combine into a segment still in the send buffer
//! receives straight into the accumulator and folds the own contribution in (commutative ops
//! only), so no segment is copied before it is needed. One more segment-sized buffer takes the
//! incoming data of combines into the accumulator. Scratch is thus at most one vector plus one
//! segment.
use super::{block, Coll};
use crate::clairvoyant::Schedule;
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::ReqId;
use crate::op::Reduction;

/// This rank's part of round `round`: what it receives and what it sends.
#[derive(Clone, Copy, Default)]
struct Step {
    round: u64,
    recv: Option<(usize, usize, bool)>, // (from, segment, copy)
    send: Option<(usize, usize)>,       // (to, segment)
}

/// This rank's steps of `s`, in round order.
fn steps(s: &Schedule, me: usize) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for t in s.transfers.iter().filter(|t| t.from as usize == me || t.to as usize == me) {
        if out.last().map_or(true, |x| x.round != t.round) {
            out.push(Step { round: t.round, ..Default::default() });
        }
        let st = out.last_mut().expect("pushed above");
        if t.to as usize == me {
            st.recv = Some((t.from as usize, t.seg as usize, t.copy));
        } else {
            st.send = Some((t.to as usize, t.seg as usize));
        }
    }
    out
}

/// Reduces `count` elements along `sched` (built for `cx.size()` processes, root `root` and
/// `segments` segments, `segments <= count`). Arguments otherwise as `reduce::binomial`; `red`
/// must be commutative.
///
/// # Safety
/// As `reduce::binomial`.
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, sched: &Schedule, segments: usize) -> MpiResult {
    let is_root = cx.rank() == root;
    let mut ex = Exec {
        cx,
        sendbuf,
        count,
        red,
        segments,
        sz: red.size,
        private: vec![is_root && std::ptr::eq(sendbuf, recvbuf); segments],
        scratch: None,
        acc: if is_root { recvbuf } else { std::ptr::null_mut() },
        incoming: Vec::new(),
        acks: Vec::new(),
    };
    // SAFETY: per this function's contract.
    let res = if super::select::threads_mode() { unsafe { ex.run_direct(sched) } } else { unsafe { ex.run_copy(sched) } };
    let pending: Vec<(ReqId, usize)> = ex.acks.iter_mut().filter_map(Option::take).collect();
    let res = res.and_then(|()| pending.iter().try_for_each(|&(a, from)| cx.wait_recv(a, 0, from)));
    if res.is_err() && !pending.is_empty() {
        // A peer may still be reading the scratch accumulator: it must outlive this call.
        std::mem::forget(ex.scratch.take());
    }
    res?;
    if is_root {
        // Segments the root never received (only with one process): its own contribution.
        for s in (0..segments).filter(|&s| !ex.private[s]) {
            let (off, bytes, _) = ex.seg(s);
            // SAFETY: sendbuf and recvbuf hold the vector and are disjoint (not in place here).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf.wrapping_add(off), recvbuf.wrapping_add(off), bytes) };
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
    /// private[s]: the segment's partial result is in `acc` (else still in sendbuf).
    private: Vec<bool>,
    scratch: Option<Vec<u8>>,
    acc: *mut u8,
    /// Processes mode: incoming data of combines into the accumulator.
    incoming: Vec<u8>,
    /// Threads mode: per segment, the unanswered ack (request, from) of its last send.
    acks: Vec<Option<(ReqId, usize)>>,
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

    /// Where segment `s`'s partial result is.
    fn src(&self, s: usize) -> *const u8 {
        let off = self.seg(s).0;
        if self.private[s] {
            self.acc.wrapping_add(off)
        } else {
            self.sendbuf.wrapping_add(off)
        }
    }

    /// Processes mode: every transfer moves the data (single-copy for large segments).
    ///
    /// # Safety
    /// As `reduce`.
    unsafe fn run_copy(&mut self, sched: &Schedule) -> MpiResult {
        let cx = self.cx;
        let max_seg = self.seg(0).1;
        for st in steps(sched, cx.rank()) {
            let tag = cx.tag_at(st.round as usize);
            let mut r = None;
            if let Some((from, s, copy)) = st.recv {
                let acc = self.acc();
                let (off, bytes, _) = self.seg(s);
                // Into the accumulator when nothing is there to combine with yet (copy, or the
                // own contribution still in sendbuf); else into `incoming`.
                let dst = if copy || !self.private[s] {
                    acc.wrapping_add(off)
                } else {
                    if self.incoming.is_empty() {
                        self.incoming = vec![0u8; max_seg];
                    }
                    self.incoming.as_mut_ptr()
                };
                // SAFETY: `dst` has `bytes` writable bytes (a segment of acc, or incoming, which
                // is at least the largest segment) that nothing else touches until the wait below.
                r = Some((unsafe { cx.irecv_world(dst, bytes, cx.c.world_rank(from), tag) }, from, s, copy, bytes));
            }
            let mut sreq = None;
            if let Some((to, s)) = st.send {
                let bytes = self.seg(s).1;
                // SAFETY: the segment is `bytes` readable bytes of acc or sendbuf; P' guarantees
                // it is not the segment received this round, and the send is waited for before
                // the next.
                sreq = Some(unsafe { cx.isend_world(self.src(s), bytes, cx.c.world_rank(to), tag) });
            }
            let mut res = Ok(());
            if let Some((req, from, s, copy, bytes)) = r {
                res = cx.wait_recv(req, bytes, from);
                if res.is_ok() && !copy {
                    let (off, _, len) = self.seg(s);
                    // SAFETY: disjoint buffers of `len` elements: the received partial result
                    // and either the accumulator's segment or (first combine) the own
                    // contribution, folded into the accumulator where the message landed
                    // (commutative op).
                    unsafe {
                        if self.private[s] {
                            self.red.apply(self.incoming.as_ptr(), self.acc.wrapping_add(off), len);
                        } else {
                            self.red.apply(self.sendbuf.wrapping_add(off), self.acc.wrapping_add(off), len);
                        }
                    }
                }
                self.private[s] = true;
            }
            let sent = match sreq {
                Some(sr) => cx.wait_sends(&[sr?]),
                None => Ok(()),
            };
            res?;
            sent?;
        }
        Ok(())
    }

    /// Threads mode: transfers move addresses; the receiver reads the sender's memory (see the
    /// module documentation).
    ///
    /// # Safety
    /// As `reduce`, and every rank of the communicator runs in this process.
    unsafe fn run_direct(&mut self, sched: &Schedule) -> MpiResult {
        let cx = self.cx;
        self.acks = vec![None; self.segments];
        // A non-null address for zero-byte messages.
        let nothing = std::ptr::NonNull::<u8>::dangling().as_ptr();
        for st in steps(sched, cx.rank()) {
            let tag = cx.tag_at(st.round as usize);
            // (address, length) in and out; both live until this round's waits.
            let mut addr_in = [0u64; 2];
            let addr_out;
            let mut r = None;
            if let Some((from, s, copy)) = st.recv {
                // SAFETY: `addr_in` is 16 writable bytes, waited for in this round.
                r = Some((unsafe { cx.irecv_world(addr_in.as_mut_ptr() as *mut u8, 16, cx.c.world_rank(from), tag) }, from, s, copy));
            }
            let mut sends: Vec<MpiResult<ReqId>> = Vec::with_capacity(2);
            if let Some((to, s)) = st.send {
                addr_out = [self.src(s) as u64, self.seg(s).1 as u64];
                // SAFETY: `addr_out` is 16 readable bytes, waited for in this round.
                sends.push(unsafe { cx.isend_world(addr_out.as_ptr() as *const u8, 16, cx.c.world_rank(to), tag) });
                // SAFETY: zero bytes are received.
                self.acks[s] = Some((unsafe { cx.irecv_world(nothing, 0, cx.c.world_rank(to), tag) }, to));
            }
            let mut res = Ok(());
            if let Some((req, from, s, copy)) = r {
                res = cx.wait_recv(req, 16, from).and_then(|()| self.combine(s, copy, addr_in));
                if res.is_ok() {
                    // SAFETY: zero bytes are sent.
                    sends.push(unsafe { cx.isend_world(nothing, 0, cx.c.world_rank(from), tag) });
                }
            }
            let mut ids = Vec::with_capacity(2);
            for sr in sends {
                match sr {
                    Ok(id) => ids.push(id),
                    Err(e) => res = res.and(Err(e)),
                }
            }
            let sent = cx.wait_sends(&ids);
            res?;
            sent?;
        }
        Ok(())
    }

    /// Threads mode: copies or combines the peer's segment `s` at `peer = [address, length]`.
    fn combine(&mut self, s: usize, copy: bool, peer: [u64; 2]) -> MpiResult {
        let (off, bytes, len) = self.seg(s);
        if peer[1] != bytes as u64 || peer[0] == 0 {
            return Err(err(ErrorClass::Intern, format!("Clairvoyant reduce: a peer announced {} bytes of segment {s}, expected {bytes}", peer[1])));
        }
        // Our last copy of `s` (if we sent it) has been read before we overwrite it.
        if let Some((a, from)) = self.acks[s].take() {
            self.cx.wait_recv(a, 0, from)?;
        }
        let acc = self.acc().wrapping_add(off);
        let peer = peer[0] as usize as *const u8;
        // SAFETY: `peer` is the sender's `bytes`-byte partial result of `s` in this process,
        // unchanged until our ack (module documentation); `acc` is our segment, written by no
        // one else, disjoint from the sender's memory and from our send buffer (not in place
        // when `private[s]` is false).
        unsafe {
            if copy {
                std::ptr::copy_nonoverlapping(peer, acc, bytes);
            } else if self.private[s] {
                self.red.apply(peer, acc, len);
            } else {
                std::ptr::copy_nonoverlapping(peer, acc, bytes);
                self.red.apply(self.sendbuf.wrapping_add(off), acc, len);
            }
        }
        self.private[s] = true;
        Ok(())
    }
}
