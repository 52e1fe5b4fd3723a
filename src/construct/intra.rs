//! Making new communicators from a parent: dup and split (collective over the parent).
use crate::comm::Comm;
use crate::coll::allreduce::allreduce_internal;
use crate::error::{err, MpiResult, ErrorClass};
use crate::datatype::basic::Basic;
use crate::op::{Op, Reduction};
use crate::comm::Universe;
use crate::comm::context::{choose, random_word};


/// Agrees with the other members of `parent` on a context-id pair free for all of them
/// (see `context.rs`); returns its first context id.
pub fn agree_context(u: &Universe, parent: &Comm) -> MpiResult<u32> {
    agree_context_tagged(u, parent, crate::coll::TAG_ALLREDUCE)
}

/// How `agree_context_with`'s reduction combines the members' words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Bitwise AND (the masks of free pairs).
    And,
    /// Maximum (the generation of the agreed pair).
    Max,
}

impl Combine {
    pub fn op(self) -> Op {
        match self {
            Combine::And => Op::Band,
            Combine::Max => Op::Max,
        }
    }
    /// Combines `theirs` into `mine`, word by word.
    pub fn fold(self, mine: &mut [u64], theirs: &[u64]) {
        for (a, t) in mine.iter_mut().zip(theirs) {
            *a = match self {
                Combine::And => *a & t,
                Combine::Max => (*a).max(*t),
            };
        }
    }
}

/// `agree_context` with the agreement's messages on `tag` (see `allreduce_tagged`).
pub fn agree_context_tagged(u: &Universe, parent: &Comm, tag: i32) -> MpiResult<u32> {
    agree_context_with(u, |how, mine, agreed| {
        let r = Reduction::new(how.op(), Basic::Uint64T)?;
        // SAFETY: both slices hold mine.len() u64 elements; distinct buffers.
        unsafe { crate::coll::allreduce::allreduce_tagged(u, parent, mine.as_ptr() as *const u8, agreed.as_mut_ptr() as *mut u8, mine.len(), &r, tag) }
    })
}

/// The agreement loop of `agree_context` (see `comm::context`), with the reduction over all the
/// members done by `reduce(how, mine, agreed)`, which every member must call the same number of
/// times (this lets an intercommunicator's two groups agree without a communicator spanning
/// both). Each attempt: a `Combine::And` round over the masks of free pairs, a pick, a local
/// claim of it, then a `Combine::Max` round over [claim failed, generation, seed] that ends the
/// agreement when every member claimed the pick.
pub fn agree_context_with(u: &Universe, mut reduce: impl FnMut(Combine, &[u64], &mut [u64]) -> MpiResult) -> MpiResult<u32> {
    let ids = &u.comms.contexts;
    let mut seed = 0;
    loop {
        let mine = ids.offer();
        let mut agreed = vec![0u64; mine.len()];
        reduce(Combine::And, &mine, &mut agreed)?;
        let none_claimed = agreed.pop() == Some(1);
        let Some(pair) = choose(&agreed, seed) else {
            if none_claimed {
                return Err(err(
                    ErrorClass::Other,
                    format!("no communicator context id is free on all members (at most {} communicators at once): free some with MPI_Comm_free", crate::comm::context::PAIRS),
                ));
            }
            // Another agreement of some member holds a pair for a moment: look again.
            crate::runtime::threads::sched::yield_now();
            continue;
        };
        let claimed = ids.claim(pair);
        let mine = [!claimed as u64, ids.next_generation(pair) as u64, random_word()];
        let mut outcome = [0u64; 3];
        let r = reduce(Combine::Max, &mine, &mut outcome);
        if r.is_ok() && outcome[0] == 0 {
            return Ok(ids.settle(pair, outcome[1] as u32));
        }
        if claimed {
            ids.abandon(pair);
        }
        r?;
        // A concurrent agreement of some member took the pick first: try again elsewhere.
        seed = outcome[2];
    }
}

/// MPI_Comm_dup: same group, new contexts, same error handler and topology (MPI 4.1 section
/// 7.4.2: dup "duplicates topology information"). Returns the new table index. An
/// intercommunicator's dup agrees over both groups (`inter::dup_tagged`).
pub fn dup(u: &Universe, parent: &Comm) -> MpiResult<Option<u32>> {
    dup_tagged(u, parent, crate::coll::TAG_ALLREDUCE)
}

/// `dup` with the context agreement on `tag` (MPI_Comm_idup: `TAG_IDUP`).
pub fn dup_tagged(u: &Universe, parent: &Comm, tag: i32) -> MpiResult<Option<u32>> {
    if parent.is_inter() {
        return super::inter::dup_tagged(u, parent, tag).map(Some);
    }
    let ctx = agree_context_tagged(u, parent, tag)?;
    let c = Comm::new(ctx, parent.group.clone(), parent.rank, parent.errhandler());
    if let Some(t) = parent.topo.get() {
        c.topo.set(t.clone()).expect("a new communicator has no topology yet");
    }
    Ok(Some(u.comms.insert(c)))
}

/// MPI_Comm_split: ranks with the same color form a communicator, ordered by (key, parent rank).
/// `color` None is MPI_UNDEFINED (no new communicator for this rank). All the new communicators
/// share one context-id pair: their member sets are disjoint.
pub fn split(u: &Universe, parent: &Comm, color: Option<i32>, key: i32) -> MpiResult<Option<u32>> {
    // Intercommunicators split in `inter::split`; what else is built on this split (topologies)
    // needs an intracommunicator parent.
    if parent.is_inter() {
        return Err(err(ErrorClass::Comm, "this operation needs an intracommunicator, not an intercommunicator (MPI 4.1 section 8.2: topologies attach to intracommunicators only)"));
    }
    let n = parent.size();
    // Everybody's (color + 1 or 0, key), gathered with a SUM allreduce of a vector where each
    // rank fills only its own slots.
    let mut mine = vec![0i64; 2 * n];
    mine[2 * parent.rank] = color.map_or(0, |c| c as i64 + 1);
    mine[2 * parent.rank + 1] = key as i64;
    let mut all = vec![0i64; 2 * n];
    let sum = Reduction::new(Op::Sum, Basic::Int64T)?;
    // SAFETY: both vectors hold 2n i64 elements; distinct buffers.
    unsafe { allreduce_internal(u, parent, mine.as_ptr() as *const u8, all.as_mut_ptr() as *mut u8, 2 * n, &sum)? };
    let ctx = agree_context(u, parent)?;
    let Some(color) = color else {
        // Not a member of any new communicator: the pair may serve this rank elsewhere.
        u.comms.contexts.release(ctx);
        return Ok(None);
    };
    let mut members: Vec<(i64, usize)> = (0..n).filter(|&r| all[2 * r] == color as i64 + 1).map(|r| (all[2 * r + 1], r)).collect();
    members.sort_unstable();
    let group: Vec<usize> = members.iter().map(|&(_, r)| parent.world_rank(r)).collect();
    let rank = members.iter().position(|&(_, r)| r == parent.rank).expect("this rank has this color");
    Ok(Some(u.comms.insert(Comm::new(ctx, group, rank, parent.errhandler()))))
}

/// MPI_Comm_create: collective over `parent`; the members of `members` (world ranks, a subset of
/// the parent's) get a communicator ordered as the group, the others None. Since MPI 2.2 the
/// ranks may pass different, disjoint groups: each group becomes its own communicator, told apart
/// by its lowest world rank as the split color.
pub fn create(u: &Universe, parent: &Comm, members: &[usize]) -> MpiResult<Option<u32>> {
    let me = parent.world_rank(parent.rank);
    let pos = members.iter().position(|&w| w == me);
    let color = members.iter().min().map(|&w| w as i32);
    split(u, parent, pos.and(color), pos.map_or(0, |p| p as i32))
}

/// MPI_Comm_create_group: collective over the members of `members` only (world ranks, a subset of
/// the parent's, including this rank). The agreement runs among the members on the parent's
/// collective context, on a tag made from the application's `tag` (`coll::tag_create_group`):
/// concurrent calls on one parent use disjoint groups or different tags (MPI 4.1 section 7.4.2),
/// so their messages never meet.
/// A caller outside the group (e.g. passing MPI_GROUP_EMPTY) gets None without communicating.
pub fn create_group(u: &Universe, parent: &Comm, members: &[usize], tag: i32) -> MpiResult<Option<u32>> {
    let me = parent.world_rank(parent.rank);
    let Some(rank) = members.iter().position(|&w| w == me) else { return Ok(None) };
    let among = Comm::new(parent.context, members.to_vec(), rank, parent.errhandler());
    let ctx = agree_context_tagged(u, &among, crate::coll::tag_create_group(tag))?;
    Ok(Some(u.comms.insert(Comm::new(ctx, members.to_vec(), rank, parent.errhandler()))))
}
