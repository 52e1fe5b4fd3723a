//! Performance-variable sessions and handles (MPI 4.1 section 15.3.7).
//!
//! A session or handle given to C is an id (a small non-null integer cast to a pointer), looked
//! up here, so a stale or foreign value gives an error instead of a crash. Each handle remembers
//! its session: using it with another session is MPI_T_ERR_INVALID_HANDLE.
//!
//! Values, as Open MPI's MPI_T layer (monitoring.md section 3.3):
//! * SIZE arrays: while started, a read gives the live counters; while stopped, the values at the
//!   last stop (or at allocation). Read-only: write and reset give MPI_T_ERR_PVAR_NO_WRITE.
//! * COUNTER / AGGREGATE: the sum of what happened while the handle was started, since its
//!   allocation or last reset; writable, and `readreset` is atomic for them.
//! * `pml_monitoring_flush`: write a file name, then stop: the rank's counters are written and reset.
//!
//! Starting any monitoring handle turns recording on for its rank (`monitoring::hold_rank`) until
//! it is stopped.
use super::pvars::{Field, Pvar, Source, PVARS};
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
}

struct Handle {
    session: usize,
    pvar: usize,
    bound: Bound,
    started: bool,
    /// SIZE: the frozen values.
    frozen: Vec<u64>,
    /// COUNTER/AGGREGATE: accumulated, and the live value at the last start/reset.
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
        self.sessions.get(&s).map(|_| ()).ok_or(MPI_T_ERR_INVALID_SESSION)
    }
    fn handle(&mut self, s: usize, h: usize) -> TResult<&mut Handle> {
        self.session(s)?;
        self.handles.get_mut(&h).filter(|x| x.session == s).ok_or(MPI_T_ERR_INVALID_HANDLE)
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
    let Some((me, n)) = b.me else { return vec![0; b.members.len().max(1)] };
    let row = monitoring::row(me, n);
    match p.source {
        Source::Pair(kind, f) => b.members.iter().map(|&m| if m >= n { 0 } else if f == Field::Count { row.count(kind, m) } else { row.bytes(kind, m) }).collect(),
        Source::Comm(pat, f) => {
            let (c, bytes) = row.comms.get(b.context, &b.members, pat);
            vec![if f == Field::Count { c } else { bytes }]
        }
        Source::Flush => vec![],
    }
}

fn is_sum(p: &Pvar) -> bool {
    p.class == CLASS_COUNTER || p.class == CLASS_AGGREGATE
}

/// A started handle keeps recording on for its rank (process-wide before MPI_Init).
fn hold_for(b: &Bound, yes: bool) {
    match b.me {
        Some((me, n)) => monitoring::hold_rank(me, n, yes),
        None => monitoring::hold(yes),
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
        } else if self.started {
            live(p, &self.bound)
        } else {
            self.frozen.clone()
        }
    }
    fn start(&mut self) -> TResult {
        if self.started || self.pvar().continuous {
            return Err(MPI_T_ERR_PVAR_NO_STARTSTOP);
        }
        hold_for(&self.bound, true);
        self.started = true;
        if is_sum(self.pvar()) {
            self.base = live(self.pvar(), &self.bound)[0];
        }
        Ok(())
    }
    fn stop(&mut self) -> TResult {
        if !self.started || self.pvar().continuous {
            return Err(MPI_T_ERR_PVAR_NO_STARTSTOP);
        }
        let p = self.pvar();
        if is_sum(p) {
            self.acc += live(p, &self.bound)[0].saturating_sub(self.base);
        } else if p.source == Source::Flush {
            self.flush();
        } else {
            self.frozen = live(p, &self.bound);
        }
        self.started = false;
        hold_for(&self.bound, false);
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
            crate::runtime::universe::say(&format!("oxmpi: rank {me}: pml_monitoring_flush cannot write {path}: {e}"));
        }
        row.clear();
    }
    fn reset(&mut self) -> TResult {
        let p = self.pvar();
        if p.readonly {
            return Err(MPI_T_ERR_PVAR_NO_WRITE);
        }
        if is_sum(p) {
            self.acc = 0;
            self.base = if self.started { live(p, &self.bound)[0] } else { 0 };
        } else if p.source == Source::Flush {
            self.flush_name.clear();
        }
        Ok(())
    }
}

pub fn session_create() -> TResult<usize> {
    with(|r| {
        let id = r.id();
        r.sessions.insert(id, crate::runtime::universe::context());
        Ok(id)
    })
}

pub fn session_free(s: usize) -> TResult {
    with(|r| {
        r.session(s)?;
        for h in r.all_of(s) {
            if let Some(h) = r.handles.remove(&h) {
                if h.started {
                    hold_for(&h.bound, false);
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
                hold_for(&h.bound, false);
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
            Source::Comm(..) => 1,
            Source::Flush => 0,
        };
        let frozen = live(p, &bound);
        let id = r.id();
        r.handles.insert(id, Handle { session: s, pvar, bound, started: false, frozen, acc: 0, base: 0, flush_name: String::new() });
        Ok((id, count))
    })
}

pub fn handle_free(s: usize, h: usize) -> TResult {
    with(|r| {
        let x = r.handle(s, h)?;
        if x.started {
            hold_for(&x.bound, false);
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
                x.start()
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
                        x.start()?
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
                return Err(MPI_T_ERR_PVAR_NO_WRITE);
            }
            if !p.atomic {
                return Err(MPI_T_ERR_PVAR_NO_ATOMIC);
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
            return Err(MPI_T_ERR_PVAR_NO_WRITE);
        }
        match w {
            Written::Name(n) => x.flush_name = n,
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
        Some(h) => r.handle(s, h)?.reset(),
        None => {
            r.session(s)?;
            for id in r.all_of(s) {
                let x = r.handles.get_mut(&id).unwrap();
                if !x.pvar().readonly {
                    x.reset()?;
                }
            }
            Ok(())
        }
    })
}
