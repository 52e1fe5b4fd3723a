//! Performance-variable sessions and handles (MPI 4.1 section 15.3.7).
//!
//! A session or handle given to C is an id (a small non-null integer cast to a pointer), looked
//! up here, so a stale or foreign value gives an error instead of a crash. Each handle remembers
//! its session: using it with another session is MPI_T_ERR_INVALID_HANDLE.
//!
//! Values, as Open MPI's MPI_T layer (`docs/design/monitoring.md` section 3.3):
//! * SIZE arrays: while started, a read gives the live counters; while stopped, the values at the
//!   last stop (or at allocation). Read-only: write and reset give MPI_T_ERR_PVAR_NO_WRITE.
//! * COUNTER / AGGREGATE: the sum of what happened while the handle was started, since its
//!   allocation or last reset; writable, and `readreset` is atomic for them.
//! * `pml_monitoring_flush`: write a file name, then stop: the rank's counters are written and reset.
//!
//! * Continuous variables (STATE, LEVEL, PERCENTAGE): started from allocation, never stopped
//!   (start/stop give MPI_T_ERR_PVAR_NO_STARTSTOP); a read gives the current value; read-only.
//! * TIMER: as COUNTER, in nanoseconds.
//! * HIGH/LOWWATERMARK: while started, the largest/smallest level seen since the start or the
//!   last reset, which both begin at the current level; while stopped, the value at the stop.
//!   The engine keeps one pair of watermarks per rank; starting or resetting a handle first
//!   folds them into every other started watermark handle of that rank, then restarts them.
//!
//! Starting any monitoring handle turns recording on for its rank (`monitoring::hold_rank`) until
//! it is stopped; starting a `p2p_wait_blocked_ns` handle turns wait timing on.
use super::pvars::{ClvStat, Field, Pvar, Source, PVARS};
use crate::p2p::gauges::Gauges;
use super::*;
use crate::monitoring;
use std::collections::HashMap;

/// What a handle is bound to: the communicator seen by the rank that allocated it.
#[derive(Clone, Debug)]
pub struct Bound {
    /// World rank and world size of the allocating rank (None: MPI not initialised).
    pub me: Option<(usize, usize)>,
    pub context: u32,
    /// Members as world ranks, in communicator rank order (empty for NO_OBJECT).
    pub members: Vec<usize>,
    /// The allocating rank's engine gauges (None: MPI not initialised).
    pub gauges: Option<&'static Gauges>,
}

struct Handle {
    session: usize,
    pvar: usize,
    bound: Bound,
    started: bool,
    /// SIZE: the frozen values.
    frozen: Vec<u64>,
    /// COUNTER/AGGREGATE/TIMER: accumulated, and the live value at the last start/reset.
    /// Watermarks: the extreme seen before the rank's watermarks were last restarted.
    acc: u64,
    base: u64,
    flush_name: String,
}

#[derive(Default)]
struct Registry {
    next: usize,
    /// Session id -> the rank context that created it.
    sessions: HashMap<usize, i32>,
    handles: HashMap<usize, Handle>,
}

static REG: std::sync::Mutex<Option<Registry>> = std::sync::Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Registry) -> TResult<T>) -> TResult<T> {
    ready()?;
    let mut g = REG.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Default::default))
}

impl Registry {
    fn id(&mut self) -> usize {
        self.next += 1;
        self.next
    }
    fn session(&self, s: usize) -> TResult {
        self.sessions.get(&s).map(|_| ()).ok_or(ErrorClass::TInvalidSession)
    }
    fn handle(&mut self, s: usize, h: usize) -> TResult<&mut Handle> {
        self.session(s)?;
        self.handles.get_mut(&h).filter(|x| x.session == s).ok_or(ErrorClass::TInvalidHandle)
    }
    /// Before the watermarks of `g` restart: every started watermark handle on `g` keeps what
    /// they saw.
    fn fold_watermarks(&mut self, g: &Gauges) {
        let (high, low) = g.watermarks();
        for h in self.handles.values_mut().filter(|h| h.started && h.bound.gauges.is_some_and(|x| std::ptr::eq(x, g))) {
            match h.pvar().source {
                Source::UnexpectedHigh => h.acc = h.acc.max(high),
                Source::UnexpectedLow => h.acc = h.acc.min(low),
                _ => {}
            }
        }
        g.restart_watermarks();
    }
    /// Restarts the watermarks of handle `h` at the current level (its start or reset).
    fn restart_watermark(&mut self, h: usize) {
        let Some(x) = self.handles.get(&h) else { return };
        if !is_watermark(x.pvar()) {
            return;
        }
        let Some(g) = x.bound.gauges else { return };
        self.fold_watermarks(g);
        let x = self.handles.get_mut(&h).unwrap();
        x.acc = g.unexpected();
        x.frozen = vec![x.acc];
    }
    /// Handles of session `s` (for MPI_T_PVAR_ALL_HANDLES), in allocation order.
    fn all_of(&self, s: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self.handles.iter().filter(|(_, h)| h.session == s).map(|(k, _)| *k).collect();
        v.sort();
        v
    }
}

/// The live values of a variable for a binding.
fn live(p: &Pvar, b: &Bound) -> Vec<u64> {
    let clv = crate::clairvoyant::cache::stats();
    let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
    let gauge = |f: &dyn Fn(&Gauges) -> u64| vec![b.gauges.map_or(0, f)];
    match p.source {
        Source::Clv(ClvStat::Built) => return vec![load(&clv.schedules_built)],
        Source::Clv(ClvStat::Hits) => return vec![load(&clv.cache_hits)],
        Source::Clv(ClvStat::BuildNs) => return vec![load(&clv.build_ns)],
        Source::Clv(ClvStat::ErrorNs) => return vec![load(&clv.last_error_ns)],
        Source::Clv(ClvStat::Replans) => return vec![load(&clv.replans)],
        Source::Clv(ClvStat::Takeovers) => return vec![load(&clv.takeovers)],
        Source::Unexpected => return gauge(&|g| g.unexpected()),
        Source::UnexpectedHigh => return gauge(&|g| g.watermarks().0),
        Source::UnexpectedLow => return gauge(&|g| g.watermarks().1),
        // A double, carried as its bits (read_into copies the 8 bytes).
        Source::EagerFraction => return gauge(&|g| g.eager_fraction().to_bits()),
        Source::WaitBlocked => return gauge(&|g| g.blocked_ns()),
        _ => {}
    }
    let Some((me, n)) = b.me else { return vec![0; b.members.len().max(1)] };
    if p.source == Source::MonitoringState {
        return vec![monitoring::recording(me, n) as u64];
    }
    let row = monitoring::row(me, n);
    match p.source {
        Source::Pair(kind, f) => b.members.iter().map(|&m| if m >= n { 0 } else if f == Field::Count { row.count(kind, m) } else { row.bytes(kind, m) }).collect(),
        Source::Comm(pat, f) => {
            let (c, bytes) = row.comms.get(b.context, &b.members, pat);
            vec![if f == Field::Count { c } else { bytes }]
        }
        Source::Io(d, f) => {
            let (c, bytes) = monitoring::io::counters(me, n).get(d);
            vec![if f == Field::Count { c } else { bytes }]
        }
        _ => vec![],
    }
}

fn is_sum(p: &Pvar) -> bool {
    matches!(p.class, PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer)
}

fn is_watermark(p: &Pvar) -> bool {
    matches!(p.class, PvarClass::HighWatermark | PvarClass::LowWatermark)
}

/// What starting (`yes`) or stopping a handle switches on or off: a monitoring handle keeps
/// recording on for its rank (process-wide before MPI_Init), a wait timer handle wait timing.
fn engage(p: &Pvar, b: &Bound, yes: bool) {
    match p.source {
        s if s.is_monitoring() => match b.me {
            Some((me, n)) => monitoring::hold_rank(me, n, yes),
            None => monitoring::hold(yes),
        },
        Source::WaitBlocked => Gauges::timing(yes),
        _ => {}
    }
}

impl Handle {
    fn pvar(&self) -> &'static Pvar {
        &PVARS[self.pvar]
    }
    fn value(&self) -> Vec<u64> {
        let p = self.pvar();
        if is_sum(p) {
            let now = if self.started { live(p, &self.bound)[0].saturating_sub(self.base) } else { 0 };
            vec![self.acc + now]
        } else if is_watermark(p) && self.started {
            let seen = live(p, &self.bound)[0];
            vec![if p.class == PvarClass::HighWatermark { self.acc.max(seen) } else { self.acc.min(seen) }]
        } else if self.started {
            live(p, &self.bound)
        } else {
            self.frozen.clone()
        }
    }
    fn start(&mut self) -> TResult {
        if self.started || self.pvar().continuous {
            return Err(ErrorClass::TPvarNoStartstop);
        }
        engage(self.pvar(), &self.bound, true);
        self.started = true;
        if is_sum(self.pvar()) {
            self.base = live(self.pvar(), &self.bound)[0];
        }
        Ok(())
    }
    fn stop(&mut self) -> TResult {
        if !self.started || self.pvar().continuous {
            return Err(ErrorClass::TPvarNoStartstop);
        }
        let p = self.pvar();
        if is_sum(p) {
            self.acc += live(p, &self.bound)[0].saturating_sub(self.base);
        } else if p.source == Source::Flush {
            self.flush();
        } else {
            self.frozen = self.value();
        }
        self.started = false;
        engage(p, &self.bound, false);
        Ok(())
    }
    /// The flush variable's stop: writes `<name>.<world rank>.prof` and resets the counters.
    fn flush(&self) {
        let Some((me, n)) = self.bound.me else { return };
        if self.flush_name.is_empty() {
            return;
        }
        let row = monitoring::row(me, n);
        let path = format!("{}.{me}.prof", self.flush_name);
        if let Err(e) = std::fs::write(&path, monitoring::dump::prof_text(row, me)) {
            crate::runtime::job::say(&format!("oxmpi: rank {me}: pml_monitoring_flush cannot write {path}: {e}"));
        }
        row.clear();
        monitoring::io::counters(me, n).clear();
    }
    fn reset(&mut self) -> TResult {
        let p = self.pvar();
        if p.readonly {
            return Err(ErrorClass::TPvarNoWrite);
        }
        if is_sum(p) {
            self.acc = 0;
            self.base = if self.started { live(p, &self.bound)[0] } else { 0 };
        } else if p.source == Source::Flush {
            self.flush_name.clear();
        }
        // Watermarks restart in `Registry::restart_watermark`, which sees the other handles.
        Ok(())
    }
}

pub fn session_create() -> TResult<usize> {
    with(|r| {
        let id = r.id();
        r.sessions.insert(id, crate::runtime::job::context());
        Ok(id)
    })
}

pub fn session_free(s: usize) -> TResult {
    with(|r| {
        r.session(s)?;
        for h in r.all_of(s) {
            if let Some(h) = r.handles.remove(&h) {
                if h.started {
                    engage(h.pvar(), &h.bound, false);
                }
            }
        }
        r.sessions.remove(&s);
        Ok(())
    })
}

/// Frees the sessions of rank context `ctx` (its last MPI_T_finalize).
pub fn free_all(ctx: i32) {
    let mut g = REG.lock().unwrap_or_else(|p| p.into_inner());
    let Some(r) = g.as_mut() else { return };
    let mine: Vec<usize> = r.sessions.iter().filter(|(_, c)| **c == ctx).map(|(s, _)| *s).collect();
    for s in mine {
        for h in r.all_of(s) {
            if let Some(h) = r.handles.remove(&h).filter(|h| h.started) {
                engage(h.pvar(), &h.bound, false);
            }
        }
        r.sessions.remove(&s);
    }
}

/// Allocates a handle of pvar `pvar` bound as `bound`; returns (handle, count).
pub fn handle_alloc(s: usize, pvar: usize, bound: Bound) -> TResult<(usize, usize)> {
    with(|r| {
        r.session(s)?;
        let p = &PVARS[pvar];
        let count = match p.source {
            Source::Pair(..) => bound.members.len(),
            Source::Flush => 0,
            _ => 1,
        };
        // A watermark's value before any start is the current level.
        let frozen = if is_watermark(p) { vec![bound.gauges.map_or(0, |g| g.unexpected())] } else { live(p, &bound) };
        let acc = if is_watermark(p) { frozen[0] } else { 0 };
        let id = r.id();
        // Continuous variables are started from allocation (MPI 4.1 section 15.3.7).
        r.handles.insert(id, Handle { session: s, pvar, bound, started: p.continuous, frozen, acc, base: 0, flush_name: String::new() });
        Ok((id, count))
    })
}

pub fn handle_free(s: usize, h: usize) -> TResult {
    with(|r| {
        let x = r.handle(s, h)?;
        if x.started {
            engage(x.pvar(), &x.bound, false);
        }
        r.handles.remove(&h);
        Ok(())
    })
}

/// Start or stop one handle, or (`h` = None: MPI_T_PVAR_ALL_HANDLES) every handle of the session
/// not already in that state.
pub fn start_stop(s: usize, h: Option<usize>, start: bool) -> TResult {
    with(|r| match h {
        Some(h) => {
            let x = r.handle(s, h)?;
            if start {
                x.start()?;
                r.restart_watermark(h);
                Ok(())
            } else {
                x.stop()
            }
        }
        None => {
            r.session(s)?;
            for id in r.all_of(s) {
                let x = r.handles.get_mut(&id).unwrap();
                if x.started != start && !x.pvar().continuous {
                    if start {
                        x.start()?;
                        r.restart_watermark(id);
                    } else {
                        x.stop()?
                    }
                }
            }
            Ok(())
        }
    })
}

/// The handle's current value(s) (`reset`: then reset it atomically).
pub fn read(s: usize, h: usize, reset: bool) -> TResult<(Vec<u64>, &'static Pvar)> {
    with(|r| {
        let x = r.handle(s, h)?;
        let p = x.pvar();
        if reset {
            if p.readonly {
                return Err(ErrorClass::TPvarNoWrite);
            }
            if !p.atomic {
                return Err(ErrorClass::TPvarNoAtomic);
            }
        }
        let v = x.value();
        if reset {
            x.reset()?;
        }
        Ok((v, p))
    })
}

/// The handle's variable (to know the buffer layout before a write).
pub fn pvar_of(s: usize, h: usize) -> TResult<&'static Pvar> {
    with(|r| Ok(r.handle(s, h)?.pvar()))
}

/// What a write carries.
pub enum Written {
    Value(u64),
    Name(String),
}

pub fn write(s: usize, h: usize, w: Written) -> TResult {
    with(|r| {
        let x = r.handle(s, h)?;
        let p = x.pvar();
        if p.readonly {
            return Err(ErrorClass::TPvarNoWrite);
        }
        match w {
            Written::Name(n) => x.flush_name = n,
            Written::Value(v) if is_watermark(p) => {
                // The handle's watermark becomes `v`; a started one goes on from there.
                let (started, gauges) = (x.started, x.bound.gauges);
                if let (true, Some(g)) = (started, gauges) {
                    r.fold_watermarks(g);
                }
                let x = r.handles.get_mut(&h).unwrap();
                x.acc = v;
                x.frozen = vec![v];
            }
            Written::Value(v) => {
                x.acc = v;
                x.base = if x.started { live(p, &x.bound)[0] } else { 0 };
            }
        }
        Ok(())
    })
}

/// Reset one handle, or every writable handle of the session.
pub fn reset(s: usize, h: Option<usize>) -> TResult {
    with(|r| match h {
        Some(h) => {
            r.handle(s, h)?.reset()?;
            r.restart_watermark(h);
            Ok(())
        }
        None => {
            r.session(s)?;
            for id in r.all_of(s) {
                let x = r.handles.get_mut(&id).unwrap();
                if !x.pvar().readonly {
                    x.reset()?;
                    r.restart_watermark(id);
                }
            }
            Ok(())
        }
    })
}
