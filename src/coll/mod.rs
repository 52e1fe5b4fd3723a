//! Collective operations built on the point-to-point engine, one file per algorithm family.
//!
//! All traffic goes on the communicator's collective context (`Comm::coll_context`), which user
//! point-to-point messages never use, with a tag per algorithm: consecutive collectives of the same
//! kind between the same two ranks then match in order by the engine's non-overtaking rule, and
//! collectives of different kinds never match each other. The tags stay clear of the dissemination
//! barrier's round numbers (0..64).
pub mod allreduce;
pub mod bcast;
pub mod reduce;

use crate::comm::Comm;
use crate::error::{err, MpiResult};
use crate::p2p::SendMode;
use crate::runtime::universe::Universe;

pub const TAG_BCAST: i32 = 0x100;
pub const TAG_REDUCE: i32 = 0x200;
pub const TAG_ALLREDUCE: i32 = 0x300;
/// MPI_Comm_idup's context agreement (runs in the background, beside user collectives).
pub const TAG_IDUP: i32 = 0x500;

/// Sends `bytes` at `buf` to communicator rank `to` on the collective context and returns the
/// engine request, which the caller must wait for.
///
/// # Safety
/// `buf` must hold `bytes` readable bytes until the request completes.
pub(crate) unsafe fn isend(u: &Universe, c: &Comm, buf: *const u8, bytes: usize, to: usize, tag: i32) -> MpiResult<crate::p2p::ReqId> {
    u.engine.isend(buf, bytes, c.world_rank(to), tag, c.coll_context(), SendMode::Standard)
}

/// Receives exactly `bytes` into `buf` from communicator rank `from` and waits for it. A shorter
/// or longer message means the ranks passed different counts: MPI_ERR_TRUNCATE.
///
/// # Safety
/// `buf` must hold `bytes` writable bytes.
pub(crate) unsafe fn recv(u: &Universe, c: &Comm, buf: *mut u8, bytes: usize, from: usize, tag: i32) -> MpiResult {
    let st = u.engine.wait(u.engine.irecv(buf, bytes, Some(c.world_rank(from)), tag, c.coll_context()));
    check_received(&st, bytes, from)
}

/// Turns a receive status into an error if the message did not have the expected size.
pub(crate) fn check_received(st: &crate::p2p::Status, bytes: usize, from: usize) -> MpiResult {
    if st.error != crate::abi::MPI_SUCCESS || st.bytes != bytes as u64 {
        return Err(err(
            crate::abi::MPI_ERR_TRUNCATE,
            format!("collective message from rank {from} has {} bytes, expected {bytes}: the ranks passed different counts or datatypes", st.bytes),
        ));
    }
    Ok(())
}
