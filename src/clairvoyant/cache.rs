//! Built schedules, shared by every rank of the process (so threads mode builds one schedule per
//! job), cached by their inputs (quantised pattern, P, N, root, d), and a background thread that
//! builds the schedule a communicator predicts for its next call, off the critical path.
//! Counters for MPI_T performance variables are kept in `Stats` (`stats()`).
use super::{holders, Problem, Schedule};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Instant;

/// Schedules kept; past this the cache starts over (patterns that never repeat must not grow it).
const CAPACITY: usize = 256;

/// Counters of the Clairvoyant machinery, process-wide (all ranks of a threads-mode job).
#[derive(Default, Debug)]
pub struct Stats {
    /// Schedules generated (cache misses, foreground or background).
    pub schedules_built: AtomicU64,
    /// Calls whose schedule was already in the cache.
    pub cache_hits: AtomicU64,
    /// Total generation time, ns.
    pub build_ns: AtomicU64,
    /// Sum over calls of the mean absolute prediction error (ns), and the number of such calls.
    pub prediction_error_ns: AtomicU64,
    pub predictions: AtomicU64,
    /// Mean absolute prediction error (ns) of the latest measured call.
    pub last_error_ns: AtomicU64,
    /// Re-plans published (a rank overdue: the call taken over with a new schedule), by this
    /// process's watchdog.
    pub replans: AtomicU64,
    /// Re-plans followed by the ranks of this process (one per rank and re-plan).
    pub takeovers: AtomicU64,
}

/// The process-wide counters (to be exposed as MPI_T performance variables).
pub fn stats() -> &'static Stats {
    static S: OnceLock<Stats> = OnceLock::new();
    S.get_or_init(Stats::default)
}

fn cache() -> &'static Mutex<HashMap<Problem, Arc<Schedule>>> {
    static C: OnceLock<Mutex<HashMap<Problem, Arc<Schedule>>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

fn lookup(pb: &Problem) -> Option<Arc<Schedule>> {
    cache().lock().unwrap_or_else(|p| p.into_inner()).get(pb).cloned()
}

fn build_and_insert(pb: &Problem) -> Arc<Schedule> {
    let t = Instant::now();
    let s = Arc::new(holders::schedule(pb));
    let st = stats();
    st.schedules_built.fetch_add(1, Relaxed);
    st.build_ns.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if c.len() >= CAPACITY {
        c.clear();
    }
    c.entry(pb.clone()).or_insert(s).clone()
}

/// The schedule of `pb` (which must pass `Problem::check`): from the cache, else built now.
pub fn get(pb: &Problem) -> Arc<Schedule> {
    if let Some(s) = lookup(pb) {
        stats().cache_hits.fetch_add(1, Relaxed);
        return s;
    }
    build_and_insert(pb)
}

/// Asks the background builder to have `pb`'s schedule ready for a later `get`.
pub fn prefetch(pb: Problem) {
    static TX: OnceLock<Option<Mutex<mpsc::Sender<Problem>>>> = OnceLock::new();
    let tx = TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Problem>();
        // The builder lives as long as the process; it sleeps in recv when there is no work.
        // Without it (no thread could be spawned) schedules are built when a call needs them.
        std::thread::Builder::new()
            .name("oxmpi-clv-builder".into())
            .spawn(move || {
                while let Ok(pb) = rx.recv() {
                    if lookup(&pb).is_none() {
                        build_and_insert(&pb);
                    }
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    if let Some(tx) = tx {
        let _ = tx.lock().unwrap_or_else(|p| p.into_inner()).send(pb);
    }
}
