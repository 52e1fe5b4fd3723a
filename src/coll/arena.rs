//! A communicator's shared arena, where small blocking collectives meet in memory instead of
//! exchanging messages.
//! - Threads mode: every rank of the communicator is a thread (or fiber) of this process, so one
//!   `Arena` per communicator is shared by all its ranks through a process-wide registry keyed by
//!   (context id, member world ranks). Contributions stay in the ranks' buffers (a pointer each).
//!   The entry leaves when every member has freed the communicator (`leave`), whether it took
//!   the arena or not: with `flat` a rank may finish a collective, and free the communicator,
//!   before a slower member first takes the arena, which must then find the same arena (holding
//!   the first rank's record), not a fresh one; and an entry that a member never took must not
//!   outlive the communicator, or the next communicator with the same context id and members
//!   would inherit its episode counts.
//! - Processes mode: any intracommunicator of the job's initial ranks, in the communicator's
//!   shared region (`region`, made at the first collective that asks): each rank copies its
//!   contribution (at most `ARENA_SLOT` bytes) into its slot there, and the result goes to a slot
//!   of the region. The region also holds the large area of `shm_large`, whose algorithms use
//!   episodes without contributions as barriers.
//! - Both modes: the records of the `flat` algorithms (`flat`), apart from the episodes' slots.
//! In a job that survives failures (`crate::ulfm`) a dead member fails every later episode at
//! every rank (both modes), instead of leaving them waiting.
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
//! persistent collective was ever started. The rule dates from when those ran on a background
//! worker thread, in an order per rank that could differ from the blocking ones', which
//! generation counting cannot tell apart (the message-based algorithms can: each collective has
//! its own tags); they now run as schedules (`schedule`) and never touch the arena, and the rule
//! is kept as the conservative choice. Every rank starts the same collectives in the same order,
//! so all of them make the same choice.
use super::Coll;
use crate::comm::Comm;
use crate::error::MpiResult;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use crate::runtime::segment::{ArenaCounters, ARENA_SLOT};
use crate::comm::Universe;
use std::sync::atomic::{AtomicPtr, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

/// The shared state of one communicator's ranks.
pub struct Arena {
    /// World rank of each member (whose doorbells the last arriver rings).
    members: Vec<usize>,
    /// Where contributions and results live, and the episode counters.
    store: Store,
}

// The threads-mode counters are cache-padded in place (each arena lives once, behind an Arc):
// boxing them would add an indirection to every episode.
#[allow(clippy::large_enum_variant)]
enum Store {
    /// Threads mode.
    Pointers {
        counters: ArenaCounters,
        /// Each rank's contribution to the current episode, by communicator rank.
        contributions: Vec<AtomicPtr<u8>>,
        /// Results of the episodes, by parity of their generation.
        results: [UnsafeCell<Vec<u8>>; 2],
        /// The records of the `flat` algorithms.
        flat: super::flat::Memory,
    },
    /// Processes mode: the communicator's shared region (its slots: n contributions, then the
    /// two results, `ARENA_SLOT` bytes each).
    Region(super::region::Region),
}

// SAFETY: the result of parity p is written only by the last arriver of an episode of parity p,
// while no rank reads it, and a rank writes only its own contribution slot, before counting
// itself in (see the module comment); everything else is atomic. The region lives as long as
// the arena.
unsafe impl Sync for Arena {}
// SAFETY: as above.
unsafe impl Send for Arena {}

type Key = (u32, Vec<usize>);

/// Threads mode: a communicator's registry entry.
#[derive(Default)]
struct Entry {
    /// Made by the first member to take it.
    arena: Option<Arc<Arena>>,
    /// Members that freed the communicator so far.
    left: usize,
}

fn registry() -> &'static Mutex<HashMap<Key, Entry>> {
    static R: OnceLock<Mutex<HashMap<Key, Entry>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// A rank's hold on its communicator's arena (kept in `Comm::arena`); None where the
/// communicator has none. The arena lives as long as a rank holds it, after its registry entry
/// left.
pub struct ArenaRef {
    arena: Option<Arc<Arena>>,
}

/// Threads mode: this rank frees intracommunicator `c` (it runs no collective on it any more).
/// The registry entry leaves with the last member (see the module comment); a member that
/// leaves before any took the arena makes the entry, so that the count holds.
pub fn leave(c: &Comm) {
    if c.remote.is_none() && c.group.len() >= 2 && super::select::threads_mode() {
        leave_entry(c);
    }
}

fn leave_entry(c: &Comm) {
    let key = (c.context, c.group.clone());
    let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
    let e = r.entry(key.clone()).or_default();
    e.left += 1;
    if e.left >= c.group.len() {
        r.remove(&key);
    }
}

impl ArenaRef {
    /// Threads mode: the arena of communicator `c` (created by its first rank to ask). Two live
    /// communicators with the same context id have disjoint groups, so the key tells them apart.
    fn shared(c: &Comm) -> ArenaRef {
        let key = (c.context, c.group.clone());
        let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
        let arena = r
            .entry(key)
            .or_default()
            .arena
            .get_or_insert_with(|| {
                let counters = ArenaCounters { gen: Default::default(), arrived: Default::default() };
                Arc::new(Arena {
                    members: c.group.clone(),
                    store: Store::Pointers {
                        counters,
                        contributions: (0..c.group.len()).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
                        results: [UnsafeCell::new(Vec::new()), UnsafeCell::new(Vec::new())],
                        flat: super::flat::Memory::new(c.group.len()),
                    },
                })
            })
            .clone();
        ArenaRef { arena: Some(arena) }
    }

    /// Processes mode: the arena in the communicator's shared region, made now (collectively:
    /// every rank of the communicator calls this at the same collective). Only for
    /// communicators of the job's initial ranks, whose doorbells and process ids are in the
    /// segment (spawned or connected jobs have segments of their own).
    fn region(u: &Universe, cx: &Coll) -> MpiResult<ArenaRef> {
        let c = cx.c;
        if !c.group.iter().all(|&w| w < u.seg.initial()) {
            return Ok(ArenaRef { arena: None });
        }
        let arena = super::region::Region::create(cx)?
            .map(|r| Arc::new(Arena { members: c.group.clone(), store: Store::Region(r) }));
        Ok(ArenaRef { arena })
    }
}

/// The arena `cx` may use, if any: a blocking collective on an intracommunicator that never ran a
/// nonblocking or persistent one (see the module comment). Every rank of the communicator must
/// call this at the same collective (in processes mode the first call makes the region,
/// collectively); it fails only when that creation does (a failed member, a revoked
/// communicator), and the communicator then has no arena.
pub fn of<'a>(cx: &Coll<'a>) -> MpiResult<Option<&'a Arena>> {
    // An arena is one node's memory: a job over several nodes uses the point-to-point algorithms.
    if !cx.shared || cx.c.remote.is_some() || cx.u.engine.transport().spans_nodes() {
        return Ok(None);
    }
    let st = super::state(cx.c);
    if let Some(r) = st.arena.get() {
        return Ok(r.arena.as_deref());
    }
    let made = if super::select::threads_mode() { Ok(ArenaRef::shared(cx.c)) } else { ArenaRef::region(cx.u, cx) };
    // After a failed creation some ranks may hold the region and others not: the ones that do
    // fail their episodes on the failed member or the revocation, the others run the
    // message-based algorithms, which fail the same way.
    let (r, result) = match made {
        Ok(r) => (r, Ok(())),
        Err(e) => (ArenaRef { arena: None }, Err(e)),
    };
    let _ = st.arena.set(r);
    result?;
    Ok(st.arena.get().and_then(|r| r.arena.as_deref()))
}

impl Arena {
    /// The largest result (and, in processes mode, contribution) an episode can carry.
    pub fn capacity(&self) -> usize {
        match self.store {
            Store::Pointers { .. } => usize::MAX,
            Store::Region(_) => ARENA_SLOT,
        }
    }

    /// World rank of each member, by communicator rank.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// The first byte of the `flat` records (`flat::area_bytes(n)` bytes, zero-filled when
    /// made): in the shared region in processes mode, our own allocation in threads mode.
    pub fn flat_base(&self) -> *mut u8 {
        match &self.store {
            Store::Region(r) => r.flat(),
            Store::Pointers { flat, .. } => flat.base(),
        }
    }

    /// Processes mode: the communicator's shared region (for `shm_large`).
    pub fn region(&self) -> Option<&super::region::Region> {
        match &self.store {
            Store::Region(r) => Some(r),
            Store::Pointers { .. } => None,
        }
    }

    /// Episodes completed so far; the same on every rank between two episodes (none can
    /// complete before every rank arrived).
    pub fn generation(&self) -> u64 {
        self.counters().gen.load(Acquire)
    }

    /// An episode without contributions: a barrier of the communicator that fails on a failed
    /// member or a revocation instead of waiting for ever.
    pub fn barrier(&self, cx: &Coll) -> MpiResult {
        // SAFETY: no contribution is read, the result has 0 bytes.
        unsafe { self.episode(cx, cx.rank(), std::ptr::null(), 0, |_, _| {}) }.map(|_| ())
    }

    fn counters(&self) -> &ArenaCounters {
        match &self.store {
            Store::Pointers { counters, .. } => counters,
            Store::Region(r) => r.counters(),
        }
    }

    /// Runs one episode: contributes the `bytes` bytes at `mine` as communicator rank `me`; the
    /// last arriver runs `combine(contributions, out)`, which writes the `bytes`-byte result to
    /// `out`. Returns the result, valid until this rank's next episode.
    ///
    /// # Safety
    /// `mine` must hold `bytes` readable bytes and stay valid until this returns; `bytes` is the
    /// same on every rank and at most `capacity()`; `combine` must only read `bytes` bytes of
    /// each contribution and write `bytes` bytes to `out`.
    pub unsafe fn episode(&self, cx: &Coll, me: usize, mine: *const u8, bytes: usize, combine: impl FnOnce(&[*const u8], *mut u8)) -> MpiResult<&[u8]> {
        // A revoked communicator (ULFM) fails its collectives: at the revoker before it counts
        // itself in, at the others while they wait (the revocation reaches them as a message).
        // So does a failed member: the episode could never complete, and the counters stay
        // off, so every later episode fails too, as ULFM wants of a communicator with a failed
        // member.
        cx.u.engine.collective_refusal(cx.c.context, &self.members)?;
        let ctr = self.counters();
        let k = ctr.gen.load(Acquire);
        let parity = (k & 1) as usize;
        match &self.store {
            Store::Pointers { contributions, .. } => contributions[me].store(mine as *mut u8, Relaxed),
            // SAFETY: slot `me` is ours and `bytes` fits it (caller contract); nobody reads it
            // before we count ourselves in below.
            Store::Region(r) => unsafe {
                if bytes > 0 {
                    std::ptr::copy_nonoverlapping(mine, r.slots().add(me * ARENA_SLOT), bytes);
                }
            },
        }
        if ctr.arrived.fetch_add(1, AcqRel) as usize == self.n() - 1 {
            // SAFETY: we are the last arriver: every contribution is in, and nobody reads the
            // result of this parity until `gen` moves.
            unsafe { combine(&self.contributions(), self.result(parity, Some(bytes))) };
            ctr.arrived.store(0, Relaxed);
            ctr.gen.store(k + 1, Release);
            for &w in &self.members {
                cx.u.engine.ring_rank(w);
            }
        } else {
            cx.u.engine.wait_for_collective(cx.c.context, &self.members, || ctr.gen.load(Acquire) != k)?;
        }
        // SAFETY: the episode is complete; its `bytes` result bytes are not rewritten before our
        // next episode.
        Ok(unsafe { std::slice::from_raw_parts(self.result(parity, None), bytes) })
    }

    /// Threads mode: one episode in which every rank publishes `K` addresses (its buffers for a
    /// single-copy algorithm) and learns everybody's, by communicator rank. None in processes
    /// mode, where a peer's addresses mean nothing. The addresses stay valid as long as their
    /// owners keep them (the caller's algorithm ends with a `barrier` before anyone returns).
    pub fn share_addresses<const K: usize>(&self, cx: &Coll, mine: [usize; K]) -> MpiResult<Option<Vec<[usize; K]>>> {
        if !matches!(self.store, Store::Pointers { .. }) {
            return Ok(None);
        }
        let (n, w) = (self.n(), std::mem::size_of::<[usize; K]>());
        let combine = |all: &[*const u8], out: *mut u8| {
            for (r, &p) in all.iter().enumerate() {
                // SAFETY: every contribution is a `[usize; K]` on its owner's stack, alive until
                // the episode completes; `out` holds n of them (the episode's `bytes`).
                unsafe { std::ptr::copy_nonoverlapping(p, out.add(r * w), w) };
            }
        };
        // SAFETY: `mine` lives until this returns; the threads-mode store never copies the
        // contribution, so `bytes` is only the result's size (n arrays), within `capacity()`.
        let result = unsafe { self.episode(cx, cx.rank(), mine.as_ptr() as *const u8, n * w, combine)? };
        Ok(Some(result.chunks_exact(w).map(|c| std::array::from_fn(|i| {
            const U: usize = std::mem::size_of::<usize>();
            usize::from_ne_bytes(c[i * U..(i + 1) * U].try_into().expect("a usize"))
        })).collect()))
    }

    fn n(&self) -> usize {
        self.members.len()
    }

    /// Where each rank's contribution to the current episode is.
    fn contributions(&self) -> Vec<*const u8> {
        match &self.store {
            Store::Pointers { contributions, .. } => contributions.iter().map(|p| p.load(Relaxed) as *const u8).collect(),
            // SAFETY: the n contribution slots lie in the arena.
            Store::Region(reg) => (0..self.n()).map(|r| unsafe { reg.slots().add(r * ARENA_SLOT) as *const u8 }).collect(),
        }
    }

    /// The result buffer of parity `parity`; `grow` (the last arriver, writing it) makes room for
    /// that many bytes first.
    ///
    /// # Safety
    /// With `grow`, the caller is the episode's last arriver (nobody reads this buffer).
    unsafe fn result(&self, parity: usize, grow: Option<usize>) -> *mut u8 {
        match &self.store {
            Store::Pointers { results, .. } => {
                // SAFETY: per the contract, writers are alone; readers come after `gen` moved.
                let v = unsafe { &mut *results[parity].get() };
                if let Some(bytes) = grow {
                    v.resize(bytes.max(v.len()), 0);
                }
                v.as_mut_ptr()
            }
            // SAFETY: the two result slots follow the n contribution slots in the arena.
            Store::Region(r) => unsafe { r.slots().add((self.n() + parity) * ARENA_SLOT) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(c: &Comm) -> Option<Option<Arc<Arena>>> {
        registry().lock().unwrap().get(&(c.context, c.group.clone())).map(|e| e.arena.clone())
    }

    #[test]
    fn entry_leaves_with_the_last_member() {
        // Three members (world ranks 7, 8, 9) of a communicator with a context id of its own.
        let comms: Vec<Comm> = (0..3).map(|r| Comm::new(0x3fff_0000 + 2, vec![7, 8, 9], r, 0)).collect();
        // Member 2 frees it before anybody took the arena; member 0 takes it, then member 1,
        // which must find the same arena.
        leave_entry(&comms[2]);
        let a = ArenaRef::shared(&comms[0]);
        let b = ArenaRef::shared(&comms[1]);
        assert!(Arc::ptr_eq(a.arena.as_ref().unwrap(), b.arena.as_ref().unwrap()));
        leave_entry(&comms[0]);
        drop(a);
        assert!(registered(&comms[1]).is_some_and(|e| e.is_some()), "left before the last member");
        leave_entry(&comms[1]);
        assert!(registered(&comms[1]).is_none(), "entry outlived its communicator");
        // A member that never took the arena: the others' frees still remove the entry.
        let comms: Vec<Comm> = (0..2).map(|r| Comm::new(0x3fff_0000 + 4, vec![7, 8], r, 0)).collect();
        let a = ArenaRef::shared(&comms[0]);
        leave_entry(&comms[0]);
        drop(a);
        leave_entry(&comms[1]);
        assert!(registered(&comms[0]).is_none(), "entry of a communicator that a member never took stayed");
        drop(b);
    }
}
