//! Threads mode: a communicator's shared arena, where small blocking collectives meet in memory
//! instead of exchanging messages. Every rank of the communicator is a thread (or fiber) of this
//! process, so one `Arena` per communicator is shared by all its ranks through a process-wide
//! registry keyed by (context id, member world ranks).
//!
//! An *episode* is one collective: each rank publishes a pointer to its contribution and counts
//! itself in; the last to arrive computes the result from every contribution (they stay valid:
//! their owners wait for the episode), stores it in the result buffer of the episode's parity,
//! resets the count and publishes the next generation, then rings every member's doorbell. The
//! others wait for the generation to move (an ordinary engine wait: spin, yield or park the
//! fiber, then sleep) and read the result. A centralised sense-reversing barrier (Mellor-Crummey &
//! Scott 1991, section 3.1, with the generation as the sense) carrying data, as the shared-memory
//! collectives of MPICH and Open MPI do.
//!
//! Memory orderings: a rank's pointer store happens before its AcqRel `arrived.fetch_add`, so the
//! last arriver, whose fetch_add reads the final count, sees every pointer. It writes the result
//! and resets `arrived` before its Release store of `gen`; a waiter's Acquire load of the new `gen`
//! then sees the result, and nobody counts into the next episode before seeing that `gen`. Two
//! result buffers suffice: a rank can only start episode k+2 (which rewrites the buffer of k) after
//! every rank arrived at k+1, that is, after every rank finished reading the result of k.
//!
//! Only blocking collectives use the arena, and only on communicators on which no nonblocking or
//! persistent collective was ever started: those run on a worker thread, in an order per rank
//! that may differ from the blocking ones', which generation counting cannot tell apart (the
//! message-based algorithms can: each collective has its own tags). Every rank starts the same
//! collectives in the same order, so all of them make the same choice.
use super::Coll;
use crate::abi::MPIX_ERR_REVOKED;
use crate::comm::Comm;
use crate::error::{err, MpiResult};
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

/// The shared state of one communicator's ranks.
pub struct Arena {
    /// Number of ranks.
    n: usize,
    /// World rank of each member (whose doorbells the last arriver rings).
    members: Vec<usize>,
    /// Completed episodes.
    gen: AtomicU64,
    /// Ranks counted into the current episode.
    arrived: AtomicUsize,
    /// Each rank's contribution to the current episode, by communicator rank.
    contributions: Vec<AtomicPtr<u8>>,
    /// Results of the episodes, by parity of their generation.
    results: [UnsafeCell<Vec<u8>>; 2],
    /// Ranks (of this process) that hold this arena; the last one out unregisters it.
    users: AtomicUsize,
}

// SAFETY: `results[p]` is written only by the last arriver of an episode of parity p, while no rank
// reads it (see the module comment); everything else is atomic.
unsafe impl Sync for Arena {}
// SAFETY: as above.
unsafe impl Send for Arena {}

type Key = (u32, Vec<usize>);

fn registry() -> &'static Mutex<HashMap<Key, Arc<Arena>>> {
    static R: OnceLock<Mutex<HashMap<Key, Arc<Arena>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// A rank's hold on its communicator's arena (kept in `Comm::arena`).
pub struct ArenaRef {
    arena: Arc<Arena>,
    key: Key,
}

impl Drop for ArenaRef {
    fn drop(&mut self) {
        let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
        if self.arena.users.fetch_sub(1, AcqRel) == 1 && r.get(&self.key).is_some_and(|a| Arc::ptr_eq(a, &self.arena)) {
            r.remove(&self.key);
        }
    }
}

impl ArenaRef {
    /// The arena of communicator `c` (created by its first rank to ask). Two live communicators
    /// with the same context id have disjoint groups, so the key tells them apart.
    fn attach(c: &Comm) -> ArenaRef {
        let key = (c.context, c.group.clone());
        let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
        let arena = r
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Arena {
                    n: c.group.len(),
                    members: c.group.clone(),
                    gen: AtomicU64::new(0),
                    arrived: AtomicUsize::new(0),
                    contributions: (0..c.group.len()).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
                    results: [UnsafeCell::new(Vec::new()), UnsafeCell::new(Vec::new())],
                    users: AtomicUsize::new(0),
                })
            })
            .clone();
        arena.users.fetch_add(1, AcqRel);
        ArenaRef { arena, key }
    }
}

/// The arena `cx` may use, if any: threads mode, a blocking collective on an intracommunicator
/// that never ran a nonblocking or persistent one (see the module comment).
pub fn of<'a>(cx: &Coll<'a>) -> Option<&'a Arena> {
    if !cx.shared || cx.c.remote.is_some() || !super::select::threads_mode() {
        return None;
    }
    Some(&cx.c.arena.get_or_init(|| ArenaRef::attach(cx.c)).arena)
}

impl Arena {
    /// Runs one episode: contributes `mine` as communicator rank `me`; the last arriver runs
    /// `combine(contributions, result)`. Returns the result, valid until this rank's next episode.
    ///
    /// # Safety
    /// `mine` must stay valid until this returns; `combine` must only read the contributions as
    /// the collective defines them.
    pub unsafe fn episode(&self, cx: &Coll, me: usize, mine: *const u8, combine: impl FnOnce(&[*const u8], &mut Vec<u8>)) -> MpiResult<&[u8]> {
        // A revoked communicator (ULFM) fails its collectives: at the revoker before it counts
        // itself in, at the others while they wait (the revocation reaches them as a message).
        let revoked = || err(MPIX_ERR_REVOKED, "the communicator was revoked (MPIX_Comm_revoke)");
        if cx.u.engine.revoked_now(cx.c.context) {
            return Err(revoked());
        }
        let k = self.gen.load(Acquire);
        self.contributions[me].store(mine as *mut u8, Relaxed);
        let parity = (k & 1) as usize;
        if self.arrived.fetch_add(1, AcqRel) == self.n - 1 {
            let all: Vec<*const u8> = self.contributions.iter().map(|p| p.load(Relaxed) as *const u8).collect();
            // SAFETY: we are the last arriver: nobody reads results[parity] until `gen` moves.
            combine(&all, unsafe { &mut *self.results[parity].get() });
            self.arrived.store(0, Relaxed);
            self.gen.store(k + 1, Release);
            for &w in &self.members {
                cx.u.engine.ring_rank(w);
            }
        } else if !cx.u.engine.wait_for_unless_revoked(cx.c.context, || self.gen.load(Acquire) != k) {
            // The episode never completes: the communicator is unusable for collectives now.
            return Err(revoked());
        }
        // SAFETY: the episode is complete; the buffer is not rewritten before our next episode.
        Ok(unsafe { &*self.results[parity].get() })
    }
}
