//! Communicators: context ids, the rank map to world ranks, the attached error handler.
//!
//! This first version knows MPI_COMM_WORLD and MPI_COMM_SELF; user communicators come with the
//! communicator-management work. Every communicator owns two context ids: `context` for
//! point-to-point traffic and `context + 1` for the internal traffic of its collectives, so the two
//! can never match each other.
use std::sync::atomic::{AtomicI32, Ordering};

pub const WORLD_CONTEXT: u32 = 0;
pub const SELF_CONTEXT: u32 = 2;

pub struct Comm {
    /// Context id of point-to-point messages; collectives use `context + 1`.
    pub context: u32,
    /// World rank of each rank of the communicator.
    pub group: Vec<usize>,
    /// This process's rank in the communicator.
    pub rank: usize,
    /// The error handler attached to the communicator, as an opaque handle value owned by `ffi`.
    pub errhandler: AtomicI32,
}

impl Comm {
    pub fn new(context: u32, group: Vec<usize>, rank: usize, errhandler: i32) -> Comm {
        Comm { context, group, rank, errhandler: AtomicI32::new(errhandler) }
    }
    pub fn size(&self) -> usize {
        self.group.len()
    }
    pub fn coll_context(&self) -> u32 {
        self.context + 1
    }
    /// World rank of communicator rank `r` (`r` must be in range).
    pub fn world_rank(&self, r: usize) -> usize {
        self.group[r]
    }
    /// Communicator rank of world rank `w`, if it belongs to the communicator.
    pub fn comm_rank_of(&self, w: usize) -> Option<usize> {
        if self.context == WORLD_CONTEXT {
            return Some(w);
        }
        self.group.iter().position(|&g| g == w)
    }
    pub fn errhandler(&self) -> i32 {
        self.errhandler.load(Ordering::Acquire)
    }
    pub fn set_errhandler(&self, h: i32) {
        self.errhandler.store(h, Ordering::Release)
    }
}
