//! MPI_Bcast through the communicator's shared arena (`arena`): one episode whose result is the
//! root's contribution. The root's bytes go into the arena once and each other rank copies them
//! out once, after a single wake-up, where the binomial tree (`bcast::binomial`) costs
//! ceil(log2 n) rounds of messages, each a ring slot write, a doorbell and a wake-up of its own:
//! in processes mode those hops are most of a small broadcast's latency. The episode makes every
//! rank wait for the last to arrive (the root included), which MPI permits of a broadcast.
//!
//! Only messages that fit the arena (`Arena::capacity`): in processes mode MPI_COMM_WORLD's
//! arena in the job segment, `ARENA_SLOT` bytes.
use super::arena::Arena;
use super::Coll;
use crate::error::MpiResult;

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root` through `arena`.
///
/// # Safety
/// As `bcast::bcast`; `bytes` is at most `arena.capacity()` and the same on every rank.
pub unsafe fn bcast(cx: &Coll, arena: &Arena, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let me = cx.rank();
    let combine = |all: &[*const u8], out: *mut u8| {
        // SAFETY: the root's contribution holds `bytes` bytes until the episode completes, and
        // `out` has room for `bytes` (`Arena::episode`).
        unsafe { std::ptr::copy_nonoverlapping(all[root], out, bytes) };
    };
    // SAFETY: every rank's buffer holds `bytes` bytes (caller) and stays untouched until the
    // episode ends; the non-roots' contributions are never read (only the root's is).
    let result = unsafe { arena.episode(cx, me, buf, bytes, combine)? };
    if me != root {
        // SAFETY: `buf` holds `bytes` writable bytes at a non-root; the result is the arena's.
        unsafe { std::ptr::copy_nonoverlapping(result.as_ptr(), buf, bytes) };
    }
    Ok(())
}
