//! Communicators: context ids, the rank map to world ranks, the attached error handler.
//!
//! MPI_COMM_WORLD and MPI_COMM_SELF live in the universe; user communicators in its `CommTable`
//! (`table.rs`), with context ids agreed on by their members (`context.rs`). Every communicator
//! owns two context ids: `context` for point-to-point traffic and `context + 1` for the internal
//! traffic of its collectives, so the two can never match each other.
pub mod attr;
pub mod context;
pub mod idup;
pub mod table;
pub mod universe;

pub use universe::Universe;

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Mutex;

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
    /// MPI_Comm_set_name / get_name.
    pub name: Mutex<String>,
    /// Info hints set with MPI_Comm_set_info or MPI_Comm_dup_with_info. oxmpi acts on none of
    /// them yet; MPI_Comm_get_info gives them back, as MPICH does.
    pub hints: Mutex<crate::info::Info>,
    /// Intercommunicators only: world rank of each rank of the remote group, which point-to-point
    /// ranks address (MPI 4.1 section 7.6). `group`/`rank` stay the local group.
    pub remote: Option<Vec<usize>>,
    /// Intercommunicators only: whether the local group is the "low" one (its rank 0 has the lower
    /// world rank of the two groups' ranks 0, as MPICH decides), which MPI_Intercomm_merge orders
    /// first when both groups pass the same `high`.
    pub low_group: bool,
    /// The virtual topology (MPI 4.1 chapter 8), set once right after creation by the topology
    /// constructors and copied by dup; empty for communicators without one.
    pub topo: std::sync::OnceLock<crate::topo::Topology>,
    /// Number of blocking collectives this rank ran on the communicator. Every rank runs them in
    /// the same order (MPI 4.1 section 6.12), so the count is the same everywhere and tags the
    /// collective's messages (`coll::Coll::next`): collectives in flight at once never match
    /// each other's messages.
    pub coll_seq: AtomicU32,
    /// The sequence number of the next nonblocking or started persistent collective on it
    /// (`coll::Coll::next_nonblocking`), counted apart from the blocking ones.
    pub nbc_seq: AtomicU32,
    /// World ranks of the failed members this rank acknowledged (MPIX_Comm_failure_ack).
    pub acked: Mutex<Vec<usize>>,
    /// Number of MPIX_Comm_shrink and MPIX_Comm_agree calls on it (`ulfm::consensus`), which
    /// the survivors make in the same order: it tells the calls' messages apart.
    pub ulfm_seq: AtomicU32,
    /// A nonblocking or persistent collective was started on this communicator: blocking ones no
    /// longer meet in the shared arena (`coll::arena`). Here, not in `coll`, because every
    /// blocking collective reads it (one load, no look-up).
    pub nbc_used: std::sync::atomic::AtomicBool,
    /// The collective component's state for this communicator (`coll::CommState`: the shared
    /// arena), made at its first use. Opaque here, so that
    /// `comm` needs nothing of `coll`: Open MPI's communicators hold their coll modules alike.
    pub coll: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
}

impl Comm {
    pub fn new(context: u32, group: Vec<usize>, rank: usize, errhandler: i32) -> Comm {
        Comm { context, group, rank, errhandler: AtomicI32::new(errhandler), name: Mutex::new(String::new()), hints: Mutex::new(crate::info::Info::new()), remote: None, low_group: false, topo: std::sync::OnceLock::new(), coll_seq: AtomicU32::new(0), nbc_seq: AtomicU32::new(0), acked: Mutex::new(Vec::new()), ulfm_seq: AtomicU32::new(0), nbc_used: Default::default(), coll: std::sync::OnceLock::new() }
    }
    /// An intercommunicator with local group `group` (this process is `rank` in it) and remote
    /// group `remote`, both as world ranks; both groups use context pair `context`.
    pub fn new_inter(context: u32, group: Vec<usize>, rank: usize, remote: Vec<usize>, low_group: bool, errhandler: i32) -> Comm {
        Comm { remote: Some(remote), low_group, ..Comm::new(context, group, rank, errhandler) }
    }
    /// An intracommunicator over the local group of intercommunicator `self` on its contexts:
    /// the collectives inside one group of an intercommunicator run on it (`construct::inter`).
    pub fn local_view(&self) -> Comm {
        Comm::new(self.context, self.group.clone(), self.rank, self.errhandler())
    }
    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }
    /// The group point-to-point ranks address: the remote group of an intercommunicator, else the
    /// communicator's own group.
    pub fn peers(&self) -> &[usize] {
        match &self.remote {
            None => &self.group,
            Some(r) => r,
        }
    }
    /// Number of ranks point-to-point calls may address (MPI_Comm_remote_size on intercomms).
    pub fn peer_size(&self) -> usize {
        self.peers().len()
    }
    /// World rank of point-to-point peer rank `r` (`r < peer_size()`).
    pub fn peer_world_rank(&self, r: usize) -> usize {
        self.peers()[r]
    }
    /// Rank among the point-to-point peers of world rank `w` (a message's sender), if any.
    pub fn peer_rank_of(&self, w: usize) -> Option<usize> {
        match &self.remote {
            None => self.comm_rank_of(w),
            Some(r) => r.iter().position(|&g| g == w),
        }
    }
    pub fn size(&self) -> usize {
        self.group.len()
    }
    pub fn coll_context(&self) -> u32 {
        self.context + 1
    }
    /// World rank of local-group rank `r` (`r` must be in range).
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
    pub fn with_name(self, name: &str) -> Comm {
        *self.name.lock().unwrap_or_else(|p| p.into_inner()) = name.to_string();
        self
    }
    pub fn name(&self) -> String {
        self.name.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    pub fn set_name(&self, name: &str) {
        *self.name.lock().unwrap_or_else(|p| p.into_inner()) = name.to_string();
    }
}
