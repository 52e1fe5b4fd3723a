//! The re-plan watchdog (issue 21, live arrivals): a background thread per process that watches
//! the Clairvoyant calls running here and, when a rank the current schedule expected has not
//! arrived a slack after its expected time, publishes a re-plan on the call's board cell
//! (`runtime::pap_board::CellRef::replan`) and rings the members, whose executors then take the
//! call over (`clairvoyant::replan`, `clairvoyant_exec`).
//!
//! A waiting rank cannot do this itself: it may be asleep on its doorbell (or a parked fiber)
//! with nothing to wake it when a deadline passes. The thread sleeps on a condition variable
//! until the earliest deadline of the calls registered, so it costs nothing between calls.
//!
//! The late ranks' new expected arrival: their report on the board if it lies ahead, else "as
//! late again as they already are" (the time overdue, doubling the wait each re-plan), at least
//! the slack.
use super::clairvoyant_pap::now_ns;
use crate::runtime::pap_board::{Board, CellRef, MAX_REPLANS};
use crate::runtime::segment::Segment;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// One running call, as its executor registered it.
pub struct Watched {
    pub cell: CellRef,
    pub board: Board,
    /// The call's board key (for the members' reports).
    pub key: u64,
    /// World ranks of the members, in communicator order.
    pub members: Vec<usize>,
    pub seg: Arc<Segment>,
    /// Time origin and pattern (quanta) of version 0.
    pub t0: i64,
    pub pattern: Vec<i64>,
    pub quantum: i64,
    /// How long past its expected arrival a rank may be before it is declared late (ns).
    pub slack: i64,
}

impl Watched {
    /// (version, time origin, pattern) the call runs now.
    fn current(&self) -> (usize, i64, Vec<i64>) {
        let v = self.cell.version();
        if v == 0 {
            (0, self.t0, self.pattern.clone())
        } else {
            let r = self.cell.record(v);
            (v, r.t0, r.pattern)
        }
    }

    /// When some member not yet arrived becomes overdue, if one can (None: nothing to watch).
    fn deadline(&self) -> Option<i64> {
        let (v, t0, pattern) = self.current();
        if v >= MAX_REPLANS {
            return None;
        }
        let entered = self.cell.entered();
        (0..self.members.len()).filter(|&i| entered >> i & 1 == 0).map(|i| t0 + pattern[i] * self.quantum + self.slack).min()
    }

    /// Re-plans if a member is overdue at `now`; rings the members when it did.
    fn check(&self, now: i64) {
        let Some(d) = self.deadline() else { return };
        if now < d {
            return;
        }
        let (v, t0, pattern) = self.current();
        let q = self.quantum.max(1);
        let published = self.cell.replan(v, |late| {
            let p = (0..self.members.len())
                .map(|i| {
                    if late >> i & 1 == 0 {
                        return 0;
                    }
                    let overdue = (now - (t0 + pattern[i] * q)).max(self.slack);
                    let reported = self.board.estimate(self.members[i], self.key).map_or(0, |e| e - now);
                    (reported.max(overdue) + q / 2) / q
                })
                .collect();
            (now, p)
        });
        if published {
            super::super::clairvoyant::cache::stats().replans.fetch_add(1, Relaxed);
            for &w in &self.members {
                crate::runtime::wait::ring(self.seg.doorbell(w));
            }
        }
    }
}

struct Registry {
    calls: Mutex<Vec<(u64, Arc<Watched>)>>,
    changed: Condvar,
    next_id: std::sync::atomic::AtomicU64,
    running: AtomicBool,
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Registry { calls: Mutex::new(Vec::new()), changed: Condvar::new(), next_id: 1.into(), running: AtomicBool::new(false) })
}

/// Whether live re-planning is on (`OXMPI_CLV_REPLAN`, default on).
pub fn enabled() -> bool {
    static E: OnceLock<bool> = OnceLock::new();
    *E.get_or_init(|| std::env::var("OXMPI_CLV_REPLAN").map_or(true, |v| v.trim() != "0"))
}

/// Keeps a call watched until dropped.
pub struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        let r = registry();
        r.calls.lock().unwrap_or_else(|p| p.into_inner()).retain(|(id, _)| *id != self.0);
    }
}

/// Watches `w` until the returned registration is dropped (None when the watchdog thread could
/// not be started: the call then runs its schedule as planned).
pub fn watch(w: Watched) -> Option<Registration> {
    let r = registry();
    if !r.running.swap(true, Relaxed) {
        let spawned = std::thread::Builder::new().name("oxmpi-clv-watch".into()).spawn(run).is_ok();
        if !spawned {
            r.running.store(false, Relaxed);
            return None;
        }
    }
    let id = r.next_id.fetch_add(1, Relaxed);
    r.calls.lock().unwrap_or_else(|p| p.into_inner()).push((id, Arc::new(w)));
    r.changed.notify_one();
    Some(Registration(id))
}

/// Tells the watchdog a call moved to a new re-plan (perhaps published by another process's
/// watchdog): its deadlines changed.
pub fn poke() {
    let r = registry();
    let _g = r.calls.lock().unwrap_or_else(|p| p.into_inner());
    r.changed.notify_one();
}

/// The watchdog: sleeps until the earliest deadline of the registered calls, checks them.
fn run() {
    let r = registry();
    let mut calls = r.calls.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = now_ns();
        let list: Vec<Arc<Watched>> = calls.iter().map(|(_, w)| w.clone()).collect();
        drop(calls);
        // Checked without the registry lock: executors register and leave meanwhile.
        for w in &list {
            w.check(now);
        }
        let next = list.iter().filter_map(|w| w.deadline()).min();
        drop(list);
        calls = r.calls.lock().unwrap_or_else(|p| p.into_inner());
        if calls.is_empty() {
            // Between calls: asleep until a registration.
            calls = r.changed.wait(calls).unwrap_or_else(|p| p.into_inner());
            continue;
        }
        // Deadlines are absolute: re-read the clock. Registrations and re-plans made while the
        // lock was free notify (`watch`, `poke`), but their notification may have come before
        // this wait: 100 ms at most.
        let wait = next.map_or(100_000_000, |d| (d - now_ns()).clamp(0, 100_000_000));
        if wait > 0 {
            calls = r.changed.wait_timeout(calls, Duration::from_nanos(wait as u64)).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}
