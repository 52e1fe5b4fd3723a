//! MPI-4 sessions (MPI 4.1 section 11.3): a rank's sessions and the process sets they name.
//!
//! A session needs the engine (its groups become communicators), so the first MPI_Session_init of
//! a rank brings up the rank's `Instance` just as MPI_Init would, without starting the World model:
//! MPI_Initialized and MPI_Finalized keep answering for MPI_Init and MPI_Finalize alone
//! (`instance`). Each rank has its own sessions (in threads mode, one table per rank).
//!
//! Process sets: `mpi://WORLD` (every rank of the job, in world order) and `mpi://SELF` (the calling
//! rank). Their names compare without regard to case, as in Open MPI (a lenient reading: the
//! standard spells them in mixed case).
use crate::info::Info;
use crate::runtime::thread_level::ThreadLevel;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The process sets every session knows, in the order MPI_Session_get_nth_pset gives them.
pub const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

/// The world ranks of process set `name` for world rank `me` of a job of `size` ranks, or None
/// when no such set exists.
pub fn pset_members(name: &str, me: usize, world: &[usize]) -> Option<Vec<usize>> {
    if name.eq_ignore_ascii_case(PSETS[0]) {
        Some(world.to_vec())
    } else if name.eq_ignore_ascii_case(PSETS[1]) {
        Some(vec![me])
    } else {
        None
    }
}

/// The info MPI_Session_get_pset_info gives for a set of `n` processes: `mpi_size` (MPI 4.1
/// section 11.3.2; the only key the standard requires).
pub fn pset_info(n: usize) -> Info {
    let mut i = Info::new();
    i.set(b"mpi_size", n.to_string().as_bytes());
    i
}

/// One session of a rank.
pub struct Session {
    /// The error handler attached to the session, an opaque handle value owned by `ffi`.
    errhandler: AtomicI32,
    /// The thread level the session's objects support (the `thread_level` info key asked for, or
    /// MPI_THREAD_SINGLE as MPICH gives).
    pub thread_level: ThreadLevel,
}

impl Session {
    pub fn new(errhandler: i32, thread_level: ThreadLevel) -> Session {
        Session { errhandler: AtomicI32::new(errhandler), thread_level }
    }
    pub fn errhandler(&self) -> i32 {
        self.errhandler.load(Ordering::Acquire)
    }
    pub fn set_errhandler(&self, h: i32) {
        self.errhandler.store(h, Ordering::Release)
    }
    /// What MPI_Session_get_info reports: the thread level granted.
    pub fn info(&self) -> Info {
        let mut i = Info::new();
        i.set(b"thread_level", self.thread_level.name().as_bytes());
        i
    }
}

/// The live sessions of one rank; a session's handle indexes it. A finalised session's slot is
/// reused by a later one.
#[derive(Default)]
pub struct SessionTable {
    slots: Mutex<Vec<Option<Arc<Session>>>>,
    /// Number of live sessions, read without the lock: every MPI call of a rank outside the World
    /// model asks (`instance::get`).
    live: AtomicUsize,
}

impl SessionTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Arc<Session>>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Registers `s`; returns its index.
    pub fn insert(&self, s: Session) -> usize {
        let mut t = self.lock();
        self.live.fetch_add(1, Ordering::AcqRel);
        let s = Some(Arc::new(s));
        match t.iter().position(Option::is_none) {
            Some(i) => {
                t[i] = s;
                i
            }
            None => {
                t.push(s);
                t.len() - 1
            }
        }
    }
    pub fn get(&self, i: usize) -> Option<Arc<Session>> {
        self.lock().get(i).cloned().flatten()
    }
    /// Removes session `i` (MPI_Session_finalize); false if there is none.
    pub fn remove(&self, i: usize) -> bool {
        let gone = self.lock().get_mut(i).and_then(Option::take).is_some();
        if gone {
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
        gone
    }
    /// Number of live sessions.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psets_name_world_and_self() {
        assert_eq!(pset_members("mpi://WORLD", 2, &[0, 1, 2, 3]), Some(vec![0, 1, 2, 3]));
        assert_eq!(pset_members("mpi://self", 2, &[0, 1, 2, 3]), Some(vec![2]));
        assert_eq!(pset_members("mpi://NOPE", 2, &[0, 1, 2, 3]), None);
        assert_eq!(pset_info(4).get(b"mpi_size"), Some(&b"4"[..]));
    }

    #[test]
    fn finalised_slots_are_reused() {
        let t = SessionTable::default();
        let a = t.insert(Session::new(0, ThreadLevel::Single));
        let b = t.insert(Session::new(0, ThreadLevel::Single));
        assert_eq!((a, b, t.live()), (0, 1, 2));
        assert!(t.remove(a) && !t.remove(a));
        assert!(t.get(a).is_none() && t.get(b).is_some());
        assert_eq!(t.insert(Session::new(0, ThreadLevel::Multiple)), 0);
    }
}
