//! Generalized requests (MPI 4.1 section 13.2) and MPICH's extension of them with poll and wait
//! functions (`MPIX_Grequest_start`, `MPIX_Grequest_class_*`).
//!
//! A generalized request is an external engine request (`Engine::new_external`): waits and tests
//! see it like any other and block until the application calls MPI_Grequest_complete (from any
//! thread), which completes it with `Engine::complete_external`. What the application supplies
//! (query, free, cancel and the MPIX poll and wait functions) is a [`Callbacks`] object kept here,
//! one table per rank, which is also that rank's engine progress hook: while a request with a
//! poll function is pending, every progress loop of the rank calls it, so a request that
//! completes itself from its poll function completes while the rank waits for it.
//!
//! The C boundary, after a wait or test released such a request, calls [`Grequests::finish`]:
//! the query function fills the status, then the free function runs (exactly once per request).
use super::engine::{Engine, Progress};
use super::{ReqId, Status};
use crate::error::{err, ErrorClass, MpiResult};
use crate::transport::Transport;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Generalized requests alive in this process (all ranks): while none is, completion paths skip
/// looking for them.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Whether any generalized request may be alive (a relaxed load for the completion paths).
#[inline]
pub fn any_live() -> bool {
    LIVE.load(Ordering::Relaxed) != 0
}

/// The result of an application callback: the error it returned, as a class (or its own code).
pub type CbResult = Result<(), ErrorClass>;

/// The application's functions of one generalized request (its extra state included).
pub trait Callbacks: Send + Sync {
    /// Fills `st` (source, tag, count, cancelled) once the request is complete.
    fn query(&self, st: &mut Status) -> CbResult;
    /// Releases the application's resources; called once, when the request is freed.
    fn free(&self) -> CbResult;
    /// MPI_Cancel; `complete` tells whether MPI_Grequest_complete was already called.
    fn cancel(&self, complete: bool) -> CbResult;
    /// MPIX poll function: None if the request has none.
    fn poll(&self) -> Option<CbResult>;
    /// MPIX wait function (blocks until the request is complete): None if the request has none.
    fn wait(&self) -> Option<CbResult>;
}

struct Entry {
    /// The engine request's generation: tells this request from a later one reusing the id.
    gen: u32,
    cb: Arc<dyn Callbacks>,
    /// MPI_Grequest_complete was called.
    completed: bool,
    /// MPI_Request_free was called before completion: the free function runs at completion.
    freed: bool,
    /// Has a poll function (and so counts in the engine's hook work while not completed).
    polls: bool,
    /// The first error a poll or wait function returned: the request's error.
    error: Option<ErrorClass>,
}

/// The generalized requests of one rank (its engine's progress hook).
#[derive(Default)]
pub struct Grequests {
    map: Mutex<HashMap<ReqId, Entry>>,
}

fn invalid() -> crate::error::MpiError {
    err(ErrorClass::Request, "not a generalized request (or already completed and freed)")
}

impl Grequests {
    /// The table of the rank of engine `e`.
    pub fn of<X: Transport>(e: &Engine<X>) -> Arc<Grequests> {
        e.hook(Grequests::default)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ReqId, Entry>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new generalized request with callbacks `cb` (whether it has a poll function: `polls`).
    pub fn start<X: Transport>(&self, e: &Engine<X>, cb: Arc<dyn Callbacks>, polls: bool) -> ReqId {
        let id = e.new_external();
        let gen = e.generation(id).unwrap_or(0);
        LIVE.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, Entry { gen, cb, completed: false, freed: false, polls, error: None });
        if polls {
            e.hook_busy(true);
        }
        id
    }

    /// Whether request `id` of generation `gen` is a generalized request.
    pub fn contains(&self, id: ReqId, gen: u32) -> bool {
        self.lock().get(&id).is_some_and(|en| en.gen == gen)
    }

    /// MPI_Grequest_complete on request `id` (the handle's index; the user may have freed the
    /// request already). Runs the free function if the request was freed; its error is the result.
    pub fn complete<X: Transport>(&self, e: &Engine<X>, id: ReqId) -> MpiResult {
        let mut map = self.lock();
        let en = map.get_mut(&id).filter(|en| e.generation(id) == Some(en.gen)).ok_or_else(invalid)?;
        if en.completed {
            return Err(err(ErrorClass::Request, "MPI_Grequest_complete was already called on this generalized request"));
        }
        en.completed = true;
        if en.polls {
            e.hook_busy(false);
        }
        let error = en.error;
        let freed = if en.freed { map.remove(&id) } else { None };
        if freed.is_some() {
            LIVE.fetch_sub(1, Ordering::Relaxed);
        }
        drop(map);
        e.complete_external(id, error);
        match freed {
            Some(en) => en.cb.free().map_err(|c| err(c, "the free function of the generalized request returned an error")),
            None => Ok(()),
        }
    }

    /// After a wait or test released request `id` of generation `gen` with status `st`: if it
    /// was a generalized request, its query function fills `st`, then its free function runs.
    /// The first error of either (or of a poll function) becomes `st.error`.
    pub fn finish(&self, id: ReqId, gen: u32, st: &mut Status) {
        let en = {
            let mut map = self.lock();
            if !map.get(&id).is_some_and(|en| en.gen == gen) {
                return;
            }
            map.remove(&id).expect("present")
        };
        LIVE.fetch_sub(1, Ordering::Relaxed);
        *st = Status { error: None, ..Status::empty() };
        let q = en.cb.query(st);
        let f = en.cb.free();
        st.error = en.error.or(q.err()).or(f.err());
    }

    /// MPI_Request_get_status on a complete generalized request: the query function fills `st`
    /// (no free). Nothing happens for another request.
    pub fn peek(&self, id: ReqId, gen: u32, st: &mut Status) {
        let Some((cb, error)) = self.lock().get(&id).filter(|en| en.gen == gen).map(|en| (en.cb.clone(), en.error)) else { return };
        *st = Status { error: None, ..Status::empty() };
        let q = cb.query(st);
        st.error = error.or(q.err());
    }

    /// MPI_Cancel: None if `id` is no generalized request, else the cancel function's result.
    pub fn cancel(&self, id: ReqId, gen: u32) -> Option<CbResult> {
        let (cb, completed) = self.lock().get(&id).filter(|en| en.gen == gen).map(|en| (en.cb.clone(), en.completed))?;
        Some(cb.cancel(completed))
    }

    /// MPI_Request_free: None if `id` is no generalized request. A completed one is released at
    /// once (free function included); otherwise the free function runs at MPI_Grequest_complete.
    pub fn free<X: Transport>(&self, e: &Engine<X>, id: ReqId, gen: u32) -> Option<CbResult> {
        let mut map = self.lock();
        let en = map.get_mut(&id).filter(|en| en.gen == gen)?;
        if !en.completed {
            en.freed = true;
            drop(map);
            e.free(id);
            return Some(Ok(()));
        }
        let en = map.remove(&id).expect("present");
        drop(map);
        LIVE.fetch_sub(1, Ordering::Relaxed);
        e.free(id);
        Some(en.cb.free())
    }

    /// Before a blocking wait on `ids`: the wait function of each pending generalized request
    /// that has one (MPICH calls them rather than polling). Their errors are kept for `finish`.
    pub fn block(&self, ids: &[(ReqId, u32)]) {
        let cbs: Vec<(ReqId, Arc<dyn Callbacks>)> = {
            let map = self.lock();
            ids.iter().filter_map(|&(id, gen)| map.get(&id).filter(|en| en.gen == gen && !en.completed).map(|en| (id, en.cb.clone()))).collect()
        };
        for (id, cb) in cbs {
            if let Some(Err(c)) = cb.wait() {
                if let Some(en) = self.lock().get_mut(&id) {
                    en.error.get_or_insert(c);
                }
            }
        }
    }
}

impl<X: Transport> Progress<X> for Grequests {
    /// Calls the poll function of every pending generalized request that has one. Reports
    /// movement while any is pending, so that a waiter keeps polling instead of sleeping on a
    /// doorbell nobody rings.
    fn progress(&self, _e: &Engine<X>) -> bool {
        let polled: Vec<(ReqId, Arc<dyn Callbacks>)> = self.lock().iter().filter(|(_, en)| en.polls && !en.completed).map(|(&id, en)| (id, en.cb.clone())).collect();
        if polled.is_empty() {
            return false;
        }
        for (id, cb) in polled {
            if let Some(Err(c)) = cb.poll() {
                if let Some(en) = self.lock().get_mut(&id) {
                    en.error.get_or_insert(c);
                }
            }
        }
        // Let the thread (or rank) that makes progress for the request run.
        crate::runtime::threads::sched::yield_now();
        true
    }
}
