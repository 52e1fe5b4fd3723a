//! Collective schedules: a nonblocking or persistent collective as rounds of steps that the
//! engine's progress loop advances (`p2p::engine::Progress`), with no thread.
//!
//! The structure is libnbc's (Hoefler, Lumsdaine and Rehm, "Implementation and performance
//! analysis of non-blocking collective operations for MPI", SC07; Open MPI's `ompi/mca/coll/libnbc`)
//! and the round-by-round form of MPICH's transport schedules (`src/mpi/coll/transports/gentran`,
//! `MPIR_TSP_sched_*` with a fence between phases): a schedule is a list of rounds; a round's steps
//! all start when the round starts, local steps (copies, reductions, staging) at once and in
//! order, sends and receives posted on the engine; the round ends when every operation it posted
//! has completed, and the next one starts then. The last round's end completes the collective's
//! engine request, so MPI_Wait, MPI_Test and the rest work on it as on any request.
//!
//! Messages travel on the communicator's collective context with the collective's sequence tag
//! (`Coll::tag`), the same for every round: collectives started on one communicator match by
//! start order, and within one collective the messages of one pair of ranks match in the order
//! both post them (non-overtaking), which the round order fixes on both sides. A step keeps the
//! phase and round bits of the `Coll` it was added with (`Coll::phase`, `Coll::tag_at`), so a
//! collective built from parts (the intercommunicator forms) or one that pairs blocks by tag
//! (Cartesian neighborhoods) matches as its blocking form does; each run ORs them into its
//! sequence tag.
//!
//! Progress: every rank keeps its running schedules in one `Active` list, registered as a hook
//! of its engine. The engine calls it from every wait, test and probe while a schedule runs
//! (`Engine::hook_busy`); a waiting thread or fiber sleeps on the rank's doorbell as for
//! point-to-point, and a message's arrival wakes it to run the hook. Schedules of several
//! communicators advance independently, so collectives started in different orders on
//! different communicators cannot deadlock.
//!
//! Failures: a send or receive that fails (MPIX_ERR_PROC_FAILED, MPIX_ERR_REVOKED) or a receive
//! that brings the wrong size ends the schedule with that error on its request: no later round
//! starts, its unmatched receives are cancelled, and the request completes once every operation
//! it posted is done (a send in flight still reads the user's buffer: completing earlier would
//! let the program rewrite it under a peer that then receives the new contents as the old).
use super::Coll;
use crate::error::{MpiError, MpiResult};
use crate::op::Reduction;
use crate::p2p::{Engine, Progress, ReqId};
use std::sync::{Arc, Mutex};

/// One step of a round.
pub enum Step {
    /// Send `bytes` at `buf` to world rank `to`, with the phase and round bits `sub` in the tag.
    Send { buf: *const u8, bytes: usize, to: usize, sub: i32 },
    /// Receive exactly `bytes` into `buf` from world rank `from` (communicator rank `rank`, for
    /// the error message), with the phase and round bits `sub` in the tag.
    Recv { buf: *mut u8, bytes: usize, from: usize, rank: usize, sub: i32 },
    /// `inout = inp op inout` over `count` elements.
    Reduce { inp: *const u8, inout: *mut u8, count: usize, red: Arc<Reduction> },
    /// Copy `bytes` from `src` to `dst` (disjoint).
    Copy { src: *const u8, dst: *mut u8, bytes: usize },
    /// Any other local work: packing a derived datatype into a staging buffer, unpacking it.
    Local(Box<dyn FnMut() + Send>),
}

/// A collective as rounds of steps; built once, run once (`MPI_I*`) or at every MPI_Start
/// (`MPI_*_init`).
pub struct Schedule {
    /// The rounds, in order: round `i + 1` starts when every operation of round `i` completed.
    rounds: Vec<Vec<Step>>,
    /// The communicator's collective context, on which every message of the schedule travels.
    ctx: u32,
    /// The tag of the current run: the collective's sequence tag, set again at each start.
    tag: i32,
    /// Buffers the schedule owns (partial results, received blocks, staged datatypes); steps
    /// point into them. Boxed slices do not move when the schedule does.
    scratch: Vec<Box<[u8]>>,
}

// SAFETY: the raw pointers in steps point into the schedule's own scratch or into user buffers,
// which the standard forbids the application to touch until the collective completes (MPI 4.1
// section 6.12); the schedule runs on one thread at a time (under `Active`'s lock). The other
// contents are owned values and Arcs of Send + Sync data.
unsafe impl Send for Schedule {}

impl Schedule {
    /// An empty schedule for collective `cx` (its communicator's context and its tag).
    pub fn new(cx: &Coll) -> Schedule {
        Schedule { rounds: vec![Vec::new()], ctx: cx.c.coll_context(), tag: cx.tag, scratch: Vec::new() }
    }

    /// Ends the current round: the steps added next start once it completed. No-op on an empty
    /// round.
    pub fn round(&mut self) {
        if !self.rounds.last().is_some_and(|r| r.is_empty()) {
            self.rounds.push(Vec::new());
        }
    }

    /// Adds `step` to the current round.
    pub fn push(&mut self, step: Step) {
        self.rounds.last_mut().expect("a schedule has a round").push(step);
    }

    /// A zeroed buffer of `bytes` bytes owned by the schedule, for its whole life.
    pub fn scratch(&mut self, bytes: usize) -> *mut u8 {
        let mut b = vec![0u8; bytes].into_boxed_slice();
        let p = b.as_mut_ptr();
        self.scratch.push(b);
        p
    }

    /// Sends `bytes` at `buf` to communicator rank `to` of `cx` in the current round.
    pub fn send(&mut self, cx: &Coll, buf: *const u8, bytes: usize, to: usize) {
        self.push(Step::Send { buf, bytes, to: cx.c.world_rank(to), sub: sub(cx) });
    }

    /// Receives exactly `bytes` into `buf` from communicator rank `from` of `cx` in the current
    /// round.
    pub fn recv(&mut self, cx: &Coll, buf: *mut u8, bytes: usize, from: usize) {
        self.push(Step::Recv { buf, bytes, from: cx.c.world_rank(from), rank: from, sub: sub(cx) });
    }

    /// `send` to point-to-point peer `to` of `cx`'s communicator (the remote group of an
    /// intercommunicator).
    pub fn send_peer(&mut self, cx: &Coll, buf: *const u8, bytes: usize, to: usize) {
        self.push(Step::Send { buf, bytes, to: cx.c.peer_world_rank(to), sub: sub(cx) });
    }

    /// `recv` from point-to-point peer `from` of `cx`'s communicator.
    pub fn recv_peer(&mut self, cx: &Coll, buf: *mut u8, bytes: usize, from: usize) {
        self.push(Step::Recv { buf, bytes, from: cx.c.peer_world_rank(from), rank: from, sub: sub(cx) });
    }

    /// Number of rounds (for tests).
    pub fn rounds(&self) -> usize {
        self.rounds.iter().filter(|r| !r.is_empty()).count()
    }

    /// Runs round `i`'s steps: local ones now, in order; the operations it posts are appended
    /// to `pending`.
    fn start_round(&mut self, e: &Engine, i: usize, pending: &mut Vec<Pending>) -> MpiResult {
        let (ctx, tag) = (self.ctx, self.tag);
        for step in &mut self.rounds[i] {
            match step {
                Step::Send { buf, bytes, to, sub } => {
                    // SAFETY: `buf` holds `bytes` bytes (the builder's contract) until the
                    // schedule completes, which waits for this send.
                    let id = unsafe { e.isend(crate::p2p::Buf::flat(*buf), *bytes, *to, tag | *sub, ctx, crate::p2p::SendMode::Standard)? };
                    pending.push(Pending { id, recv: None });
                }
                Step::Recv { buf, bytes, from, rank, sub } => {
                    // SAFETY: `buf` holds `bytes` writable bytes until the schedule completes.
                    let id = unsafe { e.irecv(crate::p2p::Buf::Flat(*buf), *bytes, Some(*from), tag | *sub, ctx) };
                    pending.push(Pending { id, recv: Some((*bytes, *rank)) });
                }
                // SAFETY: the builder placed `count` elements at both (disjoint or equal), and
                // the rounds before this one filled them.
                Step::Reduce { inp, inout, count, red } => unsafe { red.apply(*inp, *inout, *count) },
                // SAFETY: both hold `bytes` bytes and are disjoint (the builder's contract).
                Step::Copy { src, dst, bytes } => unsafe { std::ptr::copy_nonoverlapping(*src, *dst, *bytes) },
                Step::Local(f) => f(),
            }
        }
        Ok(())
    }
}

/// The phase and round bits of `cx`'s tag (bits 0-15), which a step keeps across runs.
fn sub(cx: &Coll) -> i32 {
    cx.tag & 0xffff
}

/// An operation a running schedule posted and waits for.
struct Pending {
    id: ReqId,
    /// For a receive: the bytes it must bring and the communicator rank it comes from.
    recv: Option<(usize, usize)>,
}

/// One run of a schedule, completing engine request `req`.
struct Run {
    sched: Arc<Mutex<Schedule>>,
    req: ReqId,
    /// The next round to start.
    next: usize,
    pending: Vec<Pending>,
    /// The run's first failure: it ends with it once `pending` is empty.
    failed: Option<MpiError>,
}

impl Run {
    /// Advances as far as it can without waiting. Returns (anything moved, finished).
    fn advance(&mut self, e: &Engine) -> (bool, bool) {
        let mut moved = false;
        let mut s = self.sched.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let mut i = 0;
            while i < self.pending.len() {
                let Some(st) = e.take_done(self.pending[i].id) else {
                    i += 1;
                    continue;
                };
                moved = true;
                let p = self.pending.swap_remove(i);
                let outcome = match p.recv {
                    Some((bytes, rank)) => super::check_received(&st, bytes, rank),
                    None => super::sent_result(&st),
                };
                if let Err(er) = outcome {
                    fail(&mut self.failed, &self.pending, e, er);
                }
            }
            if !self.pending.is_empty() {
                return (moved, false);
            }
            if let Some(er) = self.failed.take() {
                drop(s);
                e.finish_external(self.req, &Err(er));
                return (true, true);
            }
            if self.next == s.rounds.len() {
                drop(s);
                e.finish_external(self.req, &Ok(()));
                return (true, true);
            }
            let i = self.next;
            self.next += 1;
            moved = true;
            if let Err(er) = s.start_round(e, i, &mut self.pending) {
                fail(&mut self.failed, &self.pending, e, er);
            }
        }
    }

}

/// Records a run's failure `er` in `failed` (the first one counts) and cancels the unmatched
/// receives of `pending`; the run ends when what is in flight is done.
fn fail(failed: &mut Option<MpiError>, pending: &[Pending], e: &Engine, er: MpiError) {
    if failed.is_some() {
        return;
    }
    *failed = Some(er);
    for p in pending {
        if p.recv.is_some() {
            e.cancel(p.id);
        }
    }
}

/// The running schedules of one rank: its engine's progress hook.
#[derive(Default)]
pub struct Active {
    runs: Mutex<Vec<Run>>,
}

impl Progress for Active {
    fn progress(&self, e: &Engine) -> bool {
        // Another thread of this rank is advancing them: report movement so that this waiter
        // looks again rather than sleeping through what that thread delivers.
        let Ok(mut runs) = self.runs.try_lock() else { return true };
        let mut moved = false;
        let mut i = 0;
        while i < runs.len() {
            let (m, done) = runs[i].advance(e);
            moved |= m;
            if done {
                runs.swap_remove(i);
                e.hook_busy(false);
            } else {
                i += 1;
            }
        }
        moved
    }
}

/// Starts a run of `sched` with tag `tag`, completing engine request `req` (already pending).
/// Its first round starts now, so its first messages leave before the caller returns.
pub fn start(e: &Engine, sched: Arc<Mutex<Schedule>>, tag: i32, req: ReqId) {
    sched.lock().unwrap_or_else(|p| p.into_inner()).tag = tag;
    let active = e.hook(Active::default);
    e.hook_busy(true);
    active.runs.lock().unwrap_or_else(|p| p.into_inner()).push(Run { sched, req, next: 0, pending: Vec::new(), failed: None });
    active.progress(e);
}

/// Whether `req` is the request of a running schedule of this rank.
pub fn running(e: &Engine, req: ReqId) -> bool {
    e.hook(Active::default).runs.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|r| r.req == req)
}
