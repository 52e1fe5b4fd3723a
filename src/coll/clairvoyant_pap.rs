//! The arrival side of Clairvoyant MPI_Reduce: measuring, sharing and predicting each rank's
//! arrival, and the schedule a call runs (`docs/design/clairvoyant.md` section 7).
//!
//! Every rank must build the schedule from bit-identical inputs, so ranks share *measurements*
//! and run the same integer predictor on the same history:
//! * at the entry of every candidate call (`candidate`) a rank reads CLOCK_MONOTONIC (one clock
//!   for all processes of a node and all threads of a process) and sends the reading, 8 bytes, to
//!   every other rank on a phase of that call's tag, without waiting;
//! * at the entry of the next candidate call on the communicator, it receives the readings of the
//!   previous call (sent long before, so normally already queued: this is off the critical path
//!   in practice) and appends them to the history;
//! * call k runs the schedule predicted from the history up to call k-2; at call k-1 that
//!   prediction was handed to the background builder (`clairvoyant::cache::prefetch`) with call
//!   k-1's root, segment count and round length, so a repeating iteration finds it built.
//!
//! The round length is `clairvoyant_calib`'s cost model, agreed by every rank of the
//! communicator at its first candidate call (a MAX over ranks, so bit-identical everywhere).
//!
//! Limitation: the history is per (communicator, rank) in call order, so a blocking MPI_Reduce
//! overlapping an MPI_Ireduce of the same communicator (both large and commutative) could be
//! recorded in different orders on different ranks; that combination is not supported with the
//! predictor (forcing another algorithm avoids it).
use super::clairvoyant_calib::{self, RoundCost, DEFAULT};
use super::Coll;
use super::clairvoyant_exec::Live;
use super::clairvoyant_watch::{self, Watched};
use crate::runtime::pap_board::{self as board, Board, CellRef, Planned, Replan};
use crate::runtime::segment::Segment;
use crate::clairvoyant::estimate::Estimator;
use crate::clairvoyant::predict::{error_ns, History};
use crate::clairvoyant::{cache, Problem, Schedule};
use crate::comm::{Comm, Universe};
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::ReqId;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, OnceLock};

/// The phase carrying arrival readings (a sub-collective of the reduce that reads them).
const PHASE_ARRIVAL: i32 = 250;

/// Default segment size target and the bounds of the default segment count.
const SEGMENT_BYTES: usize = 64 << 10;

/// One call's Clairvoyant parameters, identical on every rank.
pub struct Plan {
    pub segments: usize,
    pub sched: Arc<Schedule>,
    /// Predicted imbalance: the largest predicted arrival offset over the time of one
    /// point-to-point transfer of the whole vector (Faraj et al.: > 1 means imbalanced); 0 when
    /// the predictor missed the previous call too widely to be trusted.
    pub imbalance: f64,
    /// The schedule's root (chosen by `plan_rooted`'s caller).
    pub root: usize,
    /// The agreed arrival pattern (quanta from the first arrival).
    pub pattern: Vec<i64>,
    /// What the executor needs to follow re-plans (None: no board, or re-planning off).
    pub live: Option<Live>,
    /// The call's board cell, released when the plan is dropped (the end of the call).
    _lease: Option<Lease>,
}

/// A rank's hold on its call's board cell: the cell may serve a later call only once every
/// member has dropped its lease (re-plans may be published into it until then).
struct Lease {
    cell: CellRef,
    seg: Arc<Segment>,
    members: Vec<usize>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.cell.release() {
            // A member ahead by `pap_board::CELLS` calls may wait to claim the cell.
            for &w in &self.members {
                crate::runtime::wait::ring(self.seg.doorbell(w));
            }
        }
    }
}

/// How long past its expected arrival a rank may be before the watchdog re-plans without it:
/// `OXMPI_CLV_REPLAN_SLACK_US`, else four rounds and at least 500 us.
fn slack_ns(round: i64) -> i64 {
    match env_usize("OXMPI_CLV_REPLAN_SLACK_US") {
        0 => (4 * round).max(500_000),
        us => us as i64 * 1000,
    }
}

/// What `agreed` found on the board.
struct Agreed {
    informed: bool,
    /// Time origin (ns) and pattern (quanta) of the first plan.
    t0: i64,
    pattern: Vec<i64>,
    cell: CellRef,
    /// Re-plans published before this rank entered.
    missed: Vec<Replan>,
}

fn env_usize(name: &str) -> usize {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// The two knobs, 0 = automatic: segment count and round length (ns). They start as
/// `OXMPI_CLV_SEGMENTS` and `OXMPI_CLV_ROUND_NS` and are rewritten by their MPI_T control
/// variables; every call reads them afresh, so a write applies from the next MPI_Reduce.
pub fn knobs() -> &'static [AtomicUsize; 2] {
    static K: OnceLock<[AtomicUsize; 2]> = OnceLock::new();
    K.get_or_init(|| [AtomicUsize::new(env_usize("OXMPI_CLV_SEGMENTS")), AtomicUsize::new(env_usize("OXMPI_CLV_ROUND_NS"))])
}

fn knob(i: usize) -> Option<usize> {
    Some(knobs()[i].load(Relaxed)).filter(|&v| v > 0)
}

/// Segment count and round length (ns) for `count` elements of `size` bytes on `n` ranks, with
/// the uncalibrated round cost (`clairvoyant_calib::DEFAULT`).
pub fn params(count: usize, size: usize, n: usize) -> (usize, i64) {
    params_with(count, size, n, &DEFAULT)
}

/// `params` with the round cost `cost`.
fn params_with(count: usize, size: usize, n: usize, cost: &RoundCost) -> (usize, i64) {
    let segments = segment_count(count, size, n);
    let round = knob(1).map_or_else(|| cost.round_ns((count * size).div_ceil(segments)), |d| d as i64);
    (segments, round.max(1))
}

/// The segment count for `count` elements of `size` bytes on `n` ranks.
fn segment_count(count: usize, size: usize, n: usize) -> usize {
    knob(0).unwrap_or_else(|| (count * size / SEGMENT_BYTES).clamp(1, 2 * n)).min(count).max(1)
}

/// CLOCK_MONOTONIC in ns.
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// Readings sent at the previous call, to be received at the next.
struct Pending {
    tag: i32,
    mine: Box<i64>,
    sends: Vec<ReqId>,
}

#[derive(Default)]
struct State {
    /// Candidate calls this rank entered on the communicator: the next one's sequence number,
    /// which progress reports refer to.
    calls: u64,
    /// The progress reports of the current compute phase.
    est: Estimator,
    history: History,
    /// The history as it stood one call earlier: what the current call predicts from.
    lagged: History,
    pending: Option<Pending>,
    /// The prediction (quanta, quantum) the previous call ran with, to measure its error.
    used: Option<(Vec<i64>, i64)>,
    /// Mean absolute error (ns) of the previous call's prediction; None before there is one.
    last_error: Option<i64>,
    /// The communicator's agreed round cost, from its first candidate call.
    cost: Option<RoundCost>,
}

type Key = (u32, Vec<usize>, usize);

fn state(c: &Comm) -> Arc<Mutex<State>> {
    static M: OnceLock<Mutex<HashMap<Key, Arc<Mutex<State>>>>> = OnceLock::new();
    let key = (c.context, c.group.clone(), c.rank);
    M.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_default().clone()
}

/// A progress report of this rank on `c` (MPIX_Pap_progress, MPIX_Pap_expect).
pub enum Report {
    /// The share of the compute phase done, checked by `estimate::check_fraction`.
    Progress(f64),
    /// Seconds until the rank enters its next reduction, checked by `estimate::check_seconds`.
    Expect(f64),
}

/// Turns a report into an estimate of when this rank enters its next candidate call on `c`, and
/// shares it on the arrival board (`runtime::pap_board`) for the rank that plans that call.
pub fn report(u: &Universe, c: &Comm, r: Report) {
    let now = now_ns();
    let st = state(c);
    let mut st = st.lock().unwrap_or_else(|p| p.into_inner());
    let e = match r {
        Report::Progress(f) => st.est.progress(now, f),
        Report::Expect(s) => Some(st.est.expect(now, s)),
    };
    if let (Some(e), Some(b)) = (e, board_of(u, c)) {
        b.report(u.rank, board::key(c.context, &c.group, st.calls), e);
    }
}

/// The arrival board, if `c` may use it: an intracommunicator of at least two ranks in a job that
/// has one.
fn board_of(u: &Universe, c: &Comm) -> Option<Board> {
    // The board is one node's memory: a job over several nodes agrees through messages only.
    if c.remote.is_some() || c.group.len() < 2 || c.group.iter().any(|&g| g >= u.seg.nranks()) || u.engine.transport().spans_nodes() {
        return None;
    }
    u.seg.board()
}

/// The arrival pattern of call `seq` (board key `key`) agreed through the board. The first rank
/// to enter plans it from what the board says now: measured arrivals, reported estimates (no
/// earlier than now: the rank has not arrived), and for ranks that said nothing the history's
/// prediction `fallback` (in quanta from the first arrival). None when the communicator cannot
/// use the board.
fn agreed(cx: &Coll, seq: u64, key: u64, arrived: i64, quantum: i64, fallback: Option<Vec<i64>>) -> MpiResult<Option<Agreed>> {
    let c = cx.c;
    let Some(b) = board_of(cx.u, c) else { return Ok(None) };
    let leader = *c.group.iter().min().expect("two ranks or more");
    if !b.owns(leader, c.context) {
        return Ok(None);
    }
    let n = c.group.len();
    let out = std::cell::RefCell::new(None);
    cx.u.engine.wait_for_collective(c.context, &c.group, || {
        let mut o = out.borrow_mut();
        if o.is_none() {
            *o = b.try_plan(leader, c.context, seq, key, n, c.rank);
        }
        o.is_some()
    })?;
    let cell = match out.into_inner().expect("waited for") {
        Planned::Read(cell, informed, t0, pattern, missed) => return Ok(Some(Agreed { informed, t0, pattern, cell, missed })),
        Planned::Planner(cell) => cell,
    };
    let now = now_ns().max(arrived);
    let mut informed = false;
    let at: Vec<i64> = c.group.iter().enumerate().map(|(i, &w)| {
        if let Some(t) = b.arrived(w, key) {
            informed |= w != cx.u.rank;
            t
        } else if let Some(e) = b.estimate(w, key) {
            informed = true;
            e.max(now)
        } else {
            fallback.as_ref().map_or(now, |f| arrived.saturating_add(f[i].saturating_mul(quantum)).max(now))
        }
    }).collect();
    let first = *at.iter().min().expect("two ranks or more");
    let pattern: Vec<i64> = at.iter().map(|&a| (a - first + quantum / 2) / quantum).collect();
    b.publish(cell, informed, first, &pattern);
    for &w in c.group.iter().filter(|&&w| w != cx.u.rank) {
        cx.u.engine.ring_rank(w);
    }
    Ok(Some(Agreed { informed, t0: first, pattern, cell, missed: Vec::new() }))
}

/// Whether a call takes part in the arrival exchange: commutative reductions of at least
/// `min_bytes` on an intracommunicator's own collective (not a phase of a larger one), enough
/// elements for the segments. Depends only on arguments every rank passes alike.
pub fn candidate(cx: &Coll, count: usize, size: usize, min_bytes: usize) -> bool {
    let n = cx.size();
    n >= 2 && cx.tag & 0xff00 == 0 && count * size >= min_bytes && count >= segment_count(count, size, n)
}

/// Records this call's arrival (`arrived`, from `now_ns`), collects the previous call's, and
/// returns the schedule this call runs (see the module documentation).
pub fn plan(cx: &Coll, arrived: i64, count: usize, size: usize, root: usize) -> MpiResult<Plan> {
    arrivals(cx, arrived, count, size)?.into_plan(cx, |_, _| root)
}

/// One call's agreed arrival pattern: what algorithms that order ranks by arrival need
/// (`sorted_linear`, `prereduced_ring`, `bcast_arrival`), and what a Clairvoyant schedule is
/// built from (`into_plan`).
pub struct Arrivals {
    /// Predicted arrival of each rank, in quanta from the first; identical on every rank.
    pub pattern: Vec<i64>,
    /// As `Plan::imbalance`.
    pub imbalance: f64,
    /// Round length (ns) of the cost model: the time to move one segment.
    pub round: i64,
    /// Segment count of the cost model (`round * segments`: moving the whole vector once).
    pub segments: usize,
    /// Length of a pattern unit (ns).
    pub quantum: i64,
    /// Spread (ns) of the previous call's measured arrivals, first to last; 0 before one.
    pub last_spread: i64,
    key: u64,
    /// The prediction from the current history, for the next call.
    next: Option<Vec<i64>>,
    board: Option<Agreed>,
    lease: Option<Lease>,
}

impl Arrivals {
    /// This call's plan cell on the arrival board, with the members' arrival order, if the
    /// communicator plans there.
    pub fn cell(&self) -> Option<CellRef> {
        self.board.as_ref().map(|b| b.cell)
    }

    /// The Clairvoyant schedule for this pattern, rooted where `choose(pattern, problem)` says:
    /// it gets the pattern and a problem for it with a placeholder root, and must depend on its
    /// arguments only, so that every rank chooses alike.
    pub fn into_plan(self, cx: &Coll, choose: impl Fn(&[i64], &Problem) -> usize) -> MpiResult<Plan> {
        let n = cx.size();
        let quantum = self.quantum;
        let (segments, round) = (self.segments, self.round);
        let problem = |q: &[i64], root: usize| Problem { arrivals: q.iter().map(|&x| x.saturating_mul(quantum)).collect(), root, segments, round, holds: Vec::new() };
        let root = choose(&self.pattern, &problem(&self.pattern, 0)).min(n - 1);
        let pb = problem(&self.pattern, root);
        pb.check().map_err(|e| err(ErrorClass::Intern, format!("Clairvoyant schedule inputs: {e}")))?;
        if let Some(next) = &self.next {
            let npb = problem(next, choose(next, &problem(next, 0)).min(n - 1));
            if npb.check().is_ok() && npb != pb {
                cache::prefetch(npb);
            }
        }
        let live = match (self.board, board_of(cx.u, cx.c)) {
            (Some(b), Some(bd)) if clairvoyant_watch::enabled() => Some(Live {
                cell: b.cell,
                missed: b.missed,
                quantum,
                round,
                watch: Watched { cell: b.cell, board: bd, key: self.key, members: cx.c.group.clone(), seg: cx.u.seg.clone(), t0: b.t0, pattern: self.pattern.clone(), quantum, slack: slack_ns(round) },
            }),
            _ => None,
        };
        Ok(Plan { segments, sched: cache::get(&pb), imbalance: self.imbalance, root, pattern: self.pattern, live, _lease: self.lease })
    }
}

/// Records this call's arrival (`arrived`, from `now_ns`), collects the previous call's, and
/// agrees this call's arrival pattern (module documentation).
pub fn arrivals(cx: &Coll, arrived: i64, count: usize, size: usize) -> MpiResult<Arrivals> {
    let n = cx.size();
    let me = cx.rank();
    let st = state(cx.c);
    let mut st = st.lock().unwrap_or_else(|p| p.into_inner());
    // The arrival flag, and the end of this compute phase's reports.
    let seq = st.calls;
    st.calls += 1;
    st.est.reset();
    let key = board::key(cx.c.context, &cx.c.group, seq);
    if let Some(b) = board_of(cx.u, cx.c) {
        b.arrive(cx.u.rank, key, arrived);
    }
    let cost = match st.cost {
        Some(c) => c,
        None => *st.cost.insert(clairvoyant_calib::agree(cx, SEGMENT_BYTES)?),
    };
    let (segments, round) = params_with(count, size, n, &cost);
    // The previous call's readings.
    if let Some(p) = st.pending.take() {
        let prev = Coll { tag: p.tag, ..*cx }.phase(PHASE_ARRIVAL);
        let mut all = vec![0i64; n];
        all[me] = *p.mine;
        for (r, slot) in all.iter_mut().enumerate().filter(|&(r, _)| r != me) {
            // SAFETY: `slot` is 8 writable bytes, waited for inside `recv`.
            unsafe { prev.recv(slot as *mut i64 as *mut u8, 8, r)? };
        }
        cx.wait_sends(&p.sends)?;
        st.lagged = st.history.clone();
        st.history.push(&all);
        if let Some((q, quantum)) = st.used.take() {
            let e = error_ns(&q, quantum, st.history.last().unwrap_or(&[]));
            st.last_error = Some(e);
            let s = cache::stats();
            s.prediction_error_ns.fetch_add(e.max(0) as u64, Relaxed);
            s.predictions.fetch_add(1, Relaxed);
            s.last_error_ns.store(e.max(0) as u64, Relaxed);
        }
    }
    // This call's reading, to everyone.
    let mine = Box::new(arrived);
    let ph = cx.phase(PHASE_ARRIVAL);
    let mut sends = Vec::with_capacity(n - 1);
    for r in (0..n).filter(|&r| r != me) {
        // SAFETY: `mine` is boxed and kept in `pending` until the sends are waited for.
        sends.push(unsafe { ph.isend(&*mine as *const i64 as *const u8, 8, r)? });
    }
    st.pending = Some(Pending { tag: cx.tag, mine, sends });
    // With reports on the board, this call runs the pattern its first rank saw there. Otherwise
    // it runs the prediction from the lagged history; the one from the current history is built
    // in the background for the next call.
    let quantum = (round / 2).max(1);
    let current = st.history.predict(quantum);
    let lagged = st.lagged.predict(quantum);
    let last_error = st.last_error;
    let last_spread = st.history.last().map_or(0, |a| a.iter().max().unwrap_or(&0) - a.iter().min().unwrap_or(&0));
    drop(st);
    let board = agreed(cx, seq, key, arrived, quantum, current.clone())?;
    // Released when the plan is dropped, or now if planning fails below.
    let lease = board.as_ref().map(|b| Lease { cell: b.cell, seg: cx.u.seg.clone(), members: cx.c.group.clone() });
    let informed = board.as_ref().is_some_and(|b| b.informed);
    let pattern = match &board {
        Some(b) if b.informed => b.pattern.clone(),
        _ => lagged.unwrap_or_else(|| vec![0; n]),
    };
    // Imbalance factor (Faraj et al., via Proficz & Ocetkiewicz): the predicted spread over the
    // time of moving the whole vector once (N rounds). A prediction that missed the previous
    // call by more than a quarter of the spread is not trusted: random arrivals average out to
    // a pattern that never happens, and a schedule built for it loses to a balanced tree.
    let spread = pattern.iter().max().copied().unwrap_or(0) * quantum;
    // A pattern from reports is trusted as such.
    let trusted = informed || last_error.is_some_and(|e| e.saturating_mul(4) < spread);
    let imbalance = if trusted { spread as f64 / (round as f64 * segments as f64) } else { 0.0 };
    state(cx.c).lock().unwrap_or_else(|p| p.into_inner()).used = Some((pattern.clone(), quantum));
    Ok(Arrivals { pattern, imbalance, round, segments, quantum, last_spread, key, next: current, board, lease })
}
