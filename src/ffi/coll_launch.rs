//! How a checked collective call runs: now (blocking), as a schedule the engine progresses
//! (`MPI_I*`, and `MPI_*_init` whose every MPI_Start re-runs the schedule), or, for the calls that
//! have no schedule (see `launch_scheduled`'s callers), on the communicator's background worker
//! completing a request. Every collective's FFI function checks its arguments, builds the body (a
//! closure that does the whole operation given its `Coll`, staging included) and, when the call
//! can run as a schedule, the schedule's builder, and hands them here, so the forms share one
//! argument check.
use super::check::{self, CommRef};
use crate::abi::*;
use crate::coll::schedule::{self, Schedule};
use crate::coll::Coll;
use crate::error::MpiResult;
use crate::p2p::ReqId;
use crate::instance::Instance;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub use crate::monitoring::comms::Pattern;

/// What the monitoring counts for one collective call: a collective of `pattern` whose per-peer
/// block is `count` elements of `dt`, on the ranks Open MPI counts at (`counted`: the root of a
/// rooted collective, every rank otherwise). Built at each collective entry (no work), counted
/// by `launch`: at the call for blocking and nonblocking forms, at each MPI_Start for persistent
/// ones. One relaxed load when monitoring is off.
#[derive(Clone, Copy)]
pub struct Tally {
    pattern: Pattern,
    count: i64,
    dt: MPI_Datatype,
    counted: bool,
}

impl Tally {
    pub fn new(pattern: Pattern, count: i64, dt: MPI_Datatype, counted: bool) -> Tally {
        Tally { pattern, count, dt, counted }
    }

    /// The bytes one call moves (0 when not counted on this rank), for `c`.
    fn bytes(&self, c: &crate::comm::Comm) -> u64 {
        let size = if self.count > 0 { check::datatype_size(self.dt).unwrap_or(0) as u64 } else { 0 };
        let peers = if c.is_inter() { c.peer_size() } else { c.size().saturating_sub(1) } as u64;
        self.count.max(0) as u64 * size * peers
    }

    fn record(&self, u: &Instance, c: &crate::comm::Comm) {
        if crate::monitoring::on() && self.counted {
            crate::monitoring::comms::collective(u.rank, u.size, c.context, || c.name(), &c.group, self.pattern, self.bytes(c));
        }
    }
}

pub use super::families::Launch;

/// A collective's body. It captures user buffer addresses, which MPI requires to stay valid and
/// untouched until the operation completes.
type Body = Box<dyn FnMut(&Coll) -> MpiResult>;

/// A body (or a job made of one) that may move to the worker thread.
struct SendBody<T>(T);
// SAFETY: the only non-Send captures of a body are user buffer addresses; the standard forbids the
// application to touch those buffers until the request completes (MPI 4.1 section 6.12), and the
// body runs on one thread at a time (the worker, or the caller for blocking calls). Its other
// captures are owned values and Arcs of Send + Sync data.
unsafe impl<T> Send for SendBody<T> {}

/// Builds a nonblocking or persistent collective's schedule for collective `Coll`.
pub type Build = Box<dyn FnOnce(&Coll, &mut Schedule)>;

/// What each MPI_Start of a persistent collective runs.
enum Work {
    /// The body, queued on the worker.
    Body(Arc<Mutex<SendBody<Body>>>),
    /// The schedule, re-run with the start's sequence tag.
    Sched(Arc<Mutex<Schedule>>),
}

/// A persistent collective request: its communicator and work, run once per MPI_Start.
struct Persistent {
    comm: CommRef,
    /// Counted at each start: every start is one collective.
    tally: Tally,
    work: Work,
}

/// This rank's collective requests: the persistent ones by engine request id, and the
/// communicators of the runs queued and not yet started (so a thread that waits for one can run
/// it: `run_queued`).
#[derive(Default)]
pub struct CollRequests {
    reqs: Mutex<HashMap<ReqId, Persistent>>,
    queued: Mutex<HashMap<ReqId, CommRef>>,
    /// `queued.len()`, read without the lock on every MPI_Wait.
    n_queued: AtomicUsize,
}

/// The collective requests of `u`'s rank: one table per rank of the job (in threads mode every
/// rank of the process has its own), made at the first use.
fn requests(u: &Instance) -> &'static CollRequests {
    static REQUESTS: super::rank_local::RankLocal<CollRequests> = super::rank_local::RankLocal::new();
    REQUESTS.get(u)
}

impl CollRequests {
    fn set_queued(&self, id: ReqId, c: Option<CommRef>) {
        let mut q = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        match c {
            Some(c) => {
                q.insert(id, c);
            }
            None => {
                q.remove(&id);
            }
        }
        self.n_queued.store(q.len(), Ordering::Release);
    }
}

/// Runs `body` as the user asked: see `Launch`.
///
/// # Safety
/// For the nonblocking and persistent forms, the request pointer must be writable.
#[inline]
pub unsafe fn launch(u: &'static Instance, c: CommRef, how: Launch, tally: Tally, mut body: impl FnMut(&Coll) -> MpiResult + 'static) -> MpiResult {
    match how {
        // Run at once: no box, no allocation on the latency path.
        Launch::Blocking => {
            tally.record(u, &c);
            let mut cx = Coll::next(u, &c);
            cx.shared = !c.nbc_used.load(Ordering::Relaxed);
            body(&cx)
        }
        Launch::Nonblocking(request) => {
            c.nbc_used.store(true, Ordering::Relaxed);
            tally.record(u, &c);
            let id = u.engine.new_external();
            submit(u, c, id, Box::new(body));
            // SAFETY: `request` is writable (caller contract of `launch`).
            unsafe { *request = check::req_handle(id) };
            Ok(())
        }
        Launch::Persistent(request) => {
            c.nbc_used.store(true, Ordering::Relaxed);
            let id = u.engine.new_external_persistent();
            let body: Body = Box::new(body);
            let p = Persistent { comm: c, work: Work::Body(Arc::new(Mutex::new(SendBody(body)))), tally };
            requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).insert(id, p);
            // SAFETY: as above.
            unsafe { *request = check::req_handle(id) };
            Ok(())
        }
    }
}

/// Runs a collective as `launch` does, except that the nonblocking and persistent forms run
/// `build`'s schedule, progressed by the engine (`crate::coll::schedule`), when it is given.
///
/// # Safety
/// As `launch`; `build` must only capture buffers that stay valid as the MPI contract of the call
/// requires.
#[inline]
pub unsafe fn launch_scheduled(u: &'static Instance, c: CommRef, how: Launch, tally: Tally, body: impl FnMut(&Coll) -> MpiResult + 'static, build: Option<Build>) -> MpiResult {
    // SAFETY (both calls): the caller gives `launch`'s guarantees.
    let Some(build) = build else { return unsafe { launch(u, c, how, tally, body) } };
    match how {
        // SAFETY: as above.
        Launch::Blocking => unsafe { launch(u, c, how, tally, body) },
        Launch::Nonblocking(request) => {
            c.nbc_used.store(true, Ordering::Relaxed);
            tally.record(u, &c);
            let cx = Coll::next(u, &c);
            let mut s = Schedule::new(&cx);
            build(&cx, &mut s);
            let id = u.engine.new_external();
            // SAFETY: `request` is writable (caller contract).
            unsafe { *request = check::req_handle(id) };
            schedule::start(&u.engine, Arc::new(Mutex::new(s)), cx.tag, id);
            Ok(())
        }
        Launch::Persistent(request) => {
            c.nbc_used.store(true, Ordering::Relaxed);
            // Built with sequence 0; each start sets the tag of its own sequence number.
            let mut s = Schedule::new(&Coll::sequenced(u, &c, 0));
            build(&Coll::sequenced(u, &c, 0), &mut s);
            let id = u.engine.new_external_persistent();
            let p = Persistent { comm: c, work: Work::Sched(Arc::new(Mutex::new(s))), tally };
            requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).insert(id, p);
            // SAFETY: as above.
            unsafe { *request = check::req_handle(id) };
            Ok(())
        }
    }
}

/// Queues a run of `body` on `c`'s worker, completing engine request `id` (taking the
/// collective's sequence number now, in the caller's start order).
fn submit(u: &'static Instance, c: CommRef, id: ReqId, mut body: Body) {
    // Another thread of this rank now uses the engine: completions must wake other waiters.
    u.engine.set_threaded(true);
    let seq = c.coll_seq.fetch_add(1, Ordering::Relaxed);
    let comm = c.clone();
    let job = SendBody(move || {
        requests(u).set_queued(id, None);
        let r = body(&Coll::sequenced(u, &comm, seq));
        u.engine.complete_external(id, r.as_ref().err().map(|e| e.class));
        r
    });
    requests(u).set_queued(id, Some(c.clone()));
    if !crate::coll::state(&c).nbc.push(
        id,
        Box::new(move || {
            let mut job = job;
            (job.0)()
        }),
    ) {
        return;
    }
    let ctx = crate::runtime::job::context();
    let worker = c.clone();
    let spawned = std::thread::Builder::new().name("oxmpi-coll".into()).spawn(move || {
        crate::runtime::job::set_context(ctx);
        crate::coll::state(&worker).nbc.drain();
    });
    if spawned.is_err() {
        // No thread: run the queue here, which still completes every request (the call then
        // blocks like its blocking form).
        for job in crate::coll::state(&c).nbc.take_all() {
            let _ = job();
        }
    }
}

/// Before a thread waits for request `id`: if it is a collective still queued for its
/// communicator's worker, runs it here and now (see `Queue::take`).
pub fn run_queued(u: &'static Instance, id: ReqId) {
    if requests(u).n_queued.load(Ordering::Acquire) == 0 {
        return;
    }
    let Some(c) = requests(u).queued.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned() else { return };
    if let Some(job) = crate::coll::state(&c).nbc.take(id) {
        let _ = job();
    }
}

/// MPI_Start on request `id` if it is a persistent collective: Some(result), else None.
pub fn start(u: &'static Instance, id: ReqId) -> Option<MpiResult> {
    let (comm, work, tally) = {
        let t = requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner());
        let p = t.get(&id)?;
        let work = match &p.work {
            Work::Body(b) => Work::Body(b.clone()),
            Work::Sched(s) => Work::Sched(s.clone()),
        };
        (p.comm.clone(), work, p.tally)
    };
    if let Err(e) = u.engine.start_external(id) {
        return Some(Err(e));
    }
    tally.record(u, &comm);
    match work {
        Work::Body(body) => submit(u, comm, id, Box::new(move |cx| (body.lock().unwrap_or_else(|p| p.into_inner()).0)(cx))),
        Work::Sched(s) => schedule::start(&u.engine, s, Coll::next(u, &comm).tag, id),
    }
    Some(Ok(()))
}

/// Whether request `id` is a collective's (MPI_Cancel refuses those).
pub fn is_collective(u: &Instance, id: ReqId) -> bool {
    requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&id)
        || requests(u).queued.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&id)
        || schedule::running(&u.engine, id)
}

/// MPI_Request_free on request `id`: forgets it if it is a persistent collective (a run in
/// progress keeps its own reference and still finishes).
pub fn forget(u: &Instance, id: ReqId) {
    requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
}
