//! How a checked collective call runs: now (blocking), or as a schedule the engine progresses
//! (`MPI_I*`, and `MPI_*_init` whose every MPI_Start re-runs the schedule), with no thread.
//! Every collective's FFI function checks its arguments, builds the body (a closure that does the
//! whole blocking operation given its `Coll`, staging included) and, for the nonblocking and
//! persistent forms, the schedule's builder, and hands them here, so the forms share one argument
//! check.
use crate::ffi::check::{self, CommRef};
use crate::abi::*;
use crate::coll::schedule::{self, Schedule};
use crate::coll::Coll;
use crate::error::MpiResult;
use crate::p2p::ReqId;
use crate::instance::Instance;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
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

pub use crate::ffi::families::Launch;

/// Builds a nonblocking or persistent collective's schedule for collective `Coll`.
pub type Build = Box<dyn FnOnce(&Coll, &mut Schedule)>;

/// A persistent collective request: its communicator and schedule, run once per MPI_Start with
/// the start's sequence tag.
struct Persistent {
    comm: CommRef,
    /// Counted at each start: every start is one collective.
    tally: Tally,
    sched: Arc<Mutex<Schedule>>,
    /// The tag every start runs on (`Coll::persistent`).
    tag: i32,
}

/// This rank's persistent collective requests, by engine request id.
#[derive(Default)]
pub struct CollRequests {
    reqs: Mutex<HashMap<ReqId, Persistent>>,
}

/// The collective requests of `u`'s rank: one table per rank of the job (in threads mode every
/// rank of the process has its own), made at the first use.
fn requests(u: &Instance) -> &'static CollRequests {
    static REQUESTS: crate::ffi::rank_local::RankLocal<CollRequests> = crate::ffi::rank_local::RankLocal::new();
    REQUESTS.get(u)
}

/// Runs a blocking collective now: counted, on `c`'s next sequence number, the shared arena
/// allowed while `c` never ran a nonblocking collective. The body may borrow the caller's locals:
/// nothing is boxed, moved or shared on the latency path.
#[inline]
pub fn blocking(u: &'static Instance, c: &crate::comm::Comm, tally: Tally, body: impl FnOnce(&Coll) -> MpiResult) -> MpiResult {
    tally.record(u, c);
    let mut cx = Coll::next(u, c);
    cx.shared = !c.nbc_used.load(Ordering::Relaxed);
    body(&cx)
}

/// Starts the nonblocking or persistent collective `how` (never `Launch::Blocking`, which runs
/// through `blocking`) as `build`'s schedule, progressed by the engine.
///
/// # Safety
/// `how`'s request pointer must be writable; `build` must only capture buffers that stay valid as
/// the MPI contract of the call requires.
pub unsafe fn scheduled(u: &'static Instance, c: CommRef, how: Launch, tally: Tally, build: Build) -> MpiResult {
    c.nbc_used.store(true, Ordering::Relaxed);
    match how {
        Launch::Blocking => unreachable!("blocking collectives run through coll::launch::blocking"),
        Launch::Nonblocking(request) => {
            tally.record(u, &c);
            let cx = Coll::next_nonblocking(u, &c);
            let mut s = Schedule::new(&cx);
            build(&cx, &mut s);
            let id = u.engine.new_external();
            // SAFETY: `request` is writable (caller contract).
            unsafe { *request = check::req_handle(id) };
            schedule::start(&u.engine, Arc::new(Mutex::new(s)), cx.tag, id);
            Ok(())
        }
        Launch::Persistent(request) => {
            // The tag is the request's for life: ranks may start their persistent collectives
            // in different orders (see `Coll::persistent`).
            let cx = Coll::persistent(u, &c);
            let tag = cx.tag;
            let mut s = Schedule::new(&cx);
            build(&cx, &mut s);
            let id = u.engine.new_external_persistent();
            let p = Persistent { comm: c, sched: Arc::new(Mutex::new(s)), tally, tag };
            requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).insert(id, p);
            // SAFETY: as above.
            unsafe { *request = check::req_handle(id) };
            Ok(())
        }
    }
}

/// MPI_Start on request `id` if it is a persistent collective: Some(result), else None.
pub fn start(u: &'static Instance, id: ReqId) -> Option<MpiResult> {
    let (comm, sched, tally, tag) = {
        let t = requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner());
        let p = t.get(&id)?;
        (p.comm.clone(), p.sched.clone(), p.tally, p.tag)
    };
    if let Err(e) = u.engine.start_external(id) {
        return Some(Err(e));
    }
    tally.record(u, &comm);
    schedule::start(&u.engine, sched, tag, id);
    Some(Ok(()))
}

/// Whether request `id` is a collective's (MPI_Cancel refuses those).
pub fn is_collective(u: &Instance, id: ReqId) -> bool {
    requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&id) || schedule::running(&u.engine, id)
}

/// MPI_Request_free on request `id`: forgets it if it is a persistent collective (a run in
/// progress keeps its own reference and still finishes).
pub fn forget(u: &Instance, id: ReqId) {
    requests(u).reqs.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
}
