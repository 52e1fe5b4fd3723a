//! Threads mode, MPI_Alltoall `peer_copy`: blocks copied straight from the sender's buffer to
//! the receiver's, without messages. Every rank's send and receive buffers are published in one
//! arena episode.
//! - Small exchanges (all n x n blocks together at most `GATHERED_MAX` bytes): the episode's
//!   last arriver copies every block itself while the others wait, so the call is one episode
//!   (one synchronisation instead of the n - 1 or log2 n message rounds of the others).
//! - Larger ones: the episode only shares the addresses; every rank then copies its column
//!   (block `me` of every rank's send buffer) into its receive buffer, in parallel with the
//!   others, and a second episode (a barrier) keeps the send buffers alive until all are done.
use super::arena::Arena;
use super::Coll;
use crate::error::MpiResult;

/// Exchanges of at most this many bytes in all (n x n blocks) are copied by the last arriver.
const GATHERED_MAX: usize = 64 << 10;

/// Alltoall of `block`-byte blocks between the ranks of `arena`'s communicator. Ok(false)
/// without doing anything when the arena is a processes-mode region (the caller then picks
/// another algorithm, as every rank does).
///
/// # Safety
/// As `alltoall::alltoall` on an intracommunicator with equal send and receive blocks; `block`
/// is the same on every rank.
pub unsafe fn alltoall(cx: &Coll, arena: &Arena, send: *const u8, recv: *mut u8, block: usize) -> MpiResult<bool> {
    if arena.region().is_some() {
        return Ok(false);
    }
    let (n, me) = (cx.size(), cx.rank());
    if n.saturating_mul(n).saturating_mul(block) <= GATHERED_MAX {
        let mine = [send as usize, recv as usize];
        let copy_all = |all: &[*const u8], _out: *mut u8| {
            // SAFETY: every contribution is a rank's `[send, recv]` pair, alive until the
            // episode completes, as are the buffers they name (n blocks each, disjoint).
            unsafe {
                let bufs: Vec<[usize; 2]> = all.iter().map(|&p| *(p as *const [usize; 2])).collect();
                for (j, rb) in bufs.iter().enumerate() {
                    for (i, sb) in bufs.iter().enumerate() {
                        std::ptr::copy_nonoverlapping((sb[0] as *const u8).add(j * block), (rb[1] as *mut u8).add(i * block), block);
                    }
                }
            }
        };
        // SAFETY: `mine` lives until the episode returns; the threads-mode store never copies
        // contributions; the result is empty.
        unsafe { arena.episode(cx, me, mine.as_ptr() as *const u8, 0, copy_all)? };
        return Ok(true);
    }
    let Some(bufs) = arena.share_addresses(cx, [send as usize])? else { return Ok(false) };
    for (i, sb) in bufs.iter().enumerate() {
        // SAFETY: rank i's send buffer holds n blocks and stays valid until the barrier below;
        // our receive buffer holds n blocks, disjoint from every send buffer.
        unsafe { std::ptr::copy_nonoverlapping((sb[0] as *const u8).add(me * block), recv.add(i * block), block) };
    }
    arena.barrier(cx)?;
    Ok(true)
}
