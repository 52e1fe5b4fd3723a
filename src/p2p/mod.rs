//! Point-to-point: matching, requests, send modes, probe. Works on world ranks and byte counts;
//! communicators and datatypes are resolved by the caller.
pub mod bsend;
pub mod buffer;
pub mod engine;
pub mod gauges;
pub mod partitioned;
pub mod grequest;
pub mod incarnation;
pub mod pair;
pub mod request;
pub mod stackvec;

pub use buffer::Buf;
pub use bsend::Scope as BsendScope;
pub use engine::{Engine, MsgId, Progress};
pub use request::{OpArgs, ReqId, SendMode};

/// The engine's wildcard and null values of a source, destination or tag. Chosen equal to the
/// MPICH ABI's (the C boundary checks that at compile time and passes them through unconverted);
/// another ABI converts its own at its boundary.
pub const ANY_SOURCE: i32 = -2;
pub const PROC_NULL: i32 = -1;
pub const ANY_TAG: i32 = -1;

/// Completion information of an operation, in engine terms (world ranks, bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// World rank of the sender, or MPI_ANY_SOURCE / MPI_PROC_NULL values.
    pub source: i32,
    pub tag: i32,
    /// The operation's error, if it failed (truncation, a failed peer).
    pub error: Option<crate::error::ErrorClass>,
    pub bytes: u64,
    pub cancelled: bool,
    /// Context id of the operation (lets the caller map `source` to a communicator rank).
    pub context: u32,
}

impl Status {
    /// The "empty" status of MPI 4.1 section 3.7.3: source ANY_SOURCE, tag ANY_TAG, count 0.
    pub fn empty() -> Status {
        Status { source: ANY_SOURCE, tag: ANY_TAG, error: None, bytes: 0, cancelled: false, context: u32::MAX }
    }
    /// Status of an operation with MPI_PROC_NULL.
    pub fn proc_null() -> Status {
        Status { source: PROC_NULL, tag: ANY_TAG, error: None, bytes: 0, cancelled: false, context: u32::MAX }
    }
}
