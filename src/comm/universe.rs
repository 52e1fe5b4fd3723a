//! The universe of one rank as the layers below the MPI instance see it: who it is, the segment,
//! the engine, the predefined and user communicators. The instance (`crate::instance`) wraps it
//! with the rest of the rank's objects (groups, ops, windows, attributes).
use super::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::p2p::Engine;
use crate::runtime::segment::Segment;
use std::sync::Arc;

pub struct Universe {
    /// The job's shared segment (one per job; in threads mode shared by every rank's universe).
    pub seg: Arc<Segment>,
    /// This rank's slot in the segment, the number communicator groups know it by (its rank in
    /// MPI_COMM_WORLD unless it was spawned: see `runtime::spawn_desk`).
    pub rank: usize,
    /// Number of slots of the segment (the universe size; every group lists slots below it).
    pub size: usize,
    /// This rank's point-to-point engine.
    pub engine: Engine,
    pub world: Comm,
    pub self_comm: Comm,
    /// User communicators (MPI_Comm_dup, split, ...).
    pub comms: super::table::CommTable,
    /// Issue order of MPI_Comm_idup per parent communicator.
    pub idups: super::idup::IdupOrder,
    /// The parent intercommunicator (MPI_Comm_get_parent) of a spawned rank, until freed or
    /// disconnected.
    pub parent: std::sync::Mutex<Option<u32>>,
}

impl Universe {
    /// The universe of rank `rank` of `seg`'s job over `engine`; the predefined communicators
    /// start with error handler `errhandler` (an opaque handle value of the C boundary).
    /// `world` is the slots of MPI_COMM_WORLD in rank order (`rank` among them).
    pub fn new(seg: Arc<Segment>, rank: usize, world: Vec<usize>, engine: Engine, errhandler: i32) -> Universe {
        let size = seg.nranks();
        let world_rank = world.iter().position(|&s| s == rank).expect("the world holds the rank's slot");
        Universe {
            seg,
            rank,
            size,
            engine,
            world: Comm::new(WORLD_CONTEXT, world, world_rank, errhandler).with_name("MPI_COMM_WORLD"),
            self_comm: Comm::new(SELF_CONTEXT, vec![rank], 0, errhandler).with_name("MPI_COMM_SELF"),
            comms: Default::default(),
            idups: Default::default(),
            parent: std::sync::Mutex::new(None),
        }
    }

    /// Frees user communicator `index` (MPI_Comm_free, a window's or a failed constructor's
    /// communicator): its pair goes back to the free ones, and its messages that nobody received
    /// or that are still on their way never reach a later communicator on the pair
    /// (`p2p::incarnation`). Callers go through `coll::remove_comm`, which also tells the collectives.
    pub fn remove_comm(&self, index: u32) -> Option<Arc<Comm>> {
        let c = self.comms.remove(index)?;
        let mut parent = self.parent.lock().unwrap_or_else(|p| p.into_inner());
        if *parent == Some(index) {
            *parent = None;
        }
        drop(parent);
        self.engine.retire_context(c.context);
        Some(c)
    }
}
