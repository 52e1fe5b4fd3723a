//! Intercommunicators (MPI 4.1 section 7.6): creation from two disjoint intracommunicator groups,
//! dup, merge into an intracommunicator, and split and create (section 7.4.2).
//!
//! Both groups of an intercommunicator use the same context-id pair. Point-to-point traffic runs on
//! `context` between the two groups; collective traffic on `context + 1`, both inside each group
//! (through `Comm::local_view`, an intracommunicator over the local group on the same contexts: its
//! messages never cross groups, so they cannot meet the inter-group ones) and between the two
//! leaders (local rank 0 of each group), with tags of their own.
use super::intra::{agree_context, agree_context_tagged, agree_context_with};
use crate::comm::Comm;
use crate::coll::allreduce::allreduce_internal;
use crate::coll::bcast::bcast;
use crate::coll::{Coll, TAG_INTER};
use crate::error::{err, MpiResult, ErrorClass};
use crate::datatype::basic::Basic;
use crate::op::{Op, Reduction};
use crate::p2p::SendMode;
use crate::comm::Universe;


/// Collective-context tag of the leaders' exchange in MPI_Intercomm_merge.
const TAG_MERGE: i32 = TAG_INTER | 1;

/// Where the leader of the local group talks to the remote leader: world rank, tag, context.
#[derive(Clone, Copy)]
pub struct LeaderLink {
    pub remote_leader: usize,
    pub tag: i32,
    pub context: u32,
}

/// Sends `data` to world rank `link.remote_leader` and receives at most `cap` u64 from it.
fn exchange(u: &Universe, link: LeaderLink, data: &[u64], cap: usize) -> MpiResult<Vec<u64>> {
    let mut got = vec![0u64; cap];
    // SAFETY: `got` and `data` outlive both requests, which are waited for below.
    let r = unsafe { u.engine.irecv(crate::p2p::Buf::Flat(got.as_mut_ptr() as *mut u8), cap * 8, Some(link.remote_leader), link.tag, link.context) };
    // SAFETY: as above.
    let s = unsafe { u.engine.isend(crate::p2p::Buf::flat(data.as_ptr() as *const u8), data.len() * 8, link.remote_leader, link.tag, link.context, SendMode::Standard)? };
    let sent = crate::p2p::engine::failure_result(&u.engine.wait(s));
    let st = u.engine.wait(r);
    // A dead remote leader or a revoked peer communicator fails the setup with its own class.
    sent.map_err(|e| err(e.class, format!("intercommunicator setup: the message to the remote leader (world rank {}) failed: {}", link.remote_leader, e.msg)))?;
    if matches!(st.error, Some(ErrorClass::ProcFailed | ErrorClass::Revoked)) {
        crate::p2p::engine::failure_result(&st).map_err(|e| err(e.class, format!("intercommunicator setup: the message from the remote leader (world rank {}) failed: {}", link.remote_leader, e.msg)))?;
    }
    if st.error.is_some() || st.bytes % 8 != 0 {
        return Err(err(ErrorClass::Other, "intercommunicator setup: malformed message from the remote leader (is the same tag used for other messages on the peer communicator?)"));
    }
    got.truncate(st.bytes as usize / 8);
    Ok(got)
}

/// Broadcasts `v` (same length everywhere) from local rank `root` of `local`.
fn bcast_u64(u: &Universe, local: &Comm, v: &mut [u64], root: usize) -> MpiResult {
    // SAFETY: `v` holds v.len() u64 elements on every rank.
    unsafe { bcast(&Coll::fixed(u, local, TAG_INTER), v.as_mut_ptr() as *mut u8, v.len() * 8, root) }
}

/// MPI_Intercomm_create, collective over `local` (an intracommunicator). `link` is Some at the
/// local leader (local rank `leader`) only. Returns the new table index.
pub fn create(u: &Universe, local: &Comm, leader: usize, link: Option<LeaderLink>) -> MpiResult<u32> {
    // The leader swaps [leader world rank, group...] with the remote leader, then broadcasts
    // [ok, remote size, remote leader world rank, remote group..., padding] to its group.
    let mut info = vec![0u64; u.size + 3];
    if let Some(link) = link {
        let mut mine = vec![local.world_rank(leader) as u64];
        mine.extend(local.group.iter().map(|&w| w as u64));
        let theirs = exchange(u, link, &mine, u.size + 1)?;
        let disjoint = theirs.len() > 1 && theirs[1..].iter().all(|&w| !local.group.contains(&(w as usize)));
        info[0] = disjoint as u64;
        info[1] = theirs.len().saturating_sub(1) as u64;
        info[2..2 + theirs.len()].copy_from_slice(&theirs);
    }
    bcast_u64(u, local, &mut info, leader)?;
    if info[0] == 0 {
        return Err(err(ErrorClass::Comm, "MPI_Intercomm_create: the local and remote groups overlap; they must be disjoint"));
    }
    let n = info[1] as usize;
    let remote: Vec<usize> = info[3..3 + n].iter().map(|&w| w as usize).collect();
    // The reduction over both groups: within the group, across the leaders, back within the group.
    let ctx = agree_context_with(u, |how, mine, agreed| {
        let r = Reduction::new(how.op(), Basic::Uint64T)?;
        // SAFETY: both slices hold mine.len() u64 elements; distinct buffers.
        unsafe { allreduce_internal(u, local, mine.as_ptr() as *const u8, agreed.as_mut_ptr() as *mut u8, mine.len(), &r)? };
        if let Some(link) = link {
            let theirs = exchange(u, link, agreed, agreed.len())?;
            if theirs.len() != agreed.len() {
                return Err(err(ErrorClass::Other, "MPI_Intercomm_create: the remote leader sent a malformed context mask"));
            }
            how.fold(agreed, &theirs);
        }
        bcast_u64(u, local, agreed, leader)
    })?;
    // MPICH's rule: the group whose rank 0 has the lower world rank is the low group.
    let low = remote.first().map_or(true, |&r0| local.group[0] < r0);
    Ok(u.comms.insert(Comm::new_inter(ctx, local.group.clone(), local.rank, remote, low, local.errhandler())))
}

/// The link between the two leaders (local rank 0 of each group) on the collective context.
fn leader_link(inter: &Comm, tag: i32) -> Option<LeaderLink> {
    (inter.rank == 0).then(|| LeaderLink { remote_leader: inter.peer_world_rank(0), tag, context: inter.coll_context() })
}

/// Both groups as one ordered list, `first_local` deciding which comes first, and this process's
/// rank in it.
fn union(inter: &Comm, first_local: bool) -> (Vec<usize>, usize) {
    let remote = inter.peers();
    if first_local {
        (inter.group.iter().chain(remote).copied().collect(), inter.rank)
    } else {
        (remote.iter().chain(&inter.group).copied().collect(), remote.len() + inter.rank)
    }
}

/// MPI_Comm_dup of an intercommunicator: same groups, a new context pair agreed over the union
/// (low group first, so both groups build the same temporary communicator), with the agreement's
/// messages on `tag` (MPI_Comm_idup runs it beside the application's collectives: `TAG_IDUP`).
pub fn dup_tagged(u: &Universe, inter: &Comm, tag: i32) -> MpiResult<u32> {
    let (all, rank) = union(inter, inter.low_group);
    let ctx = agree_context_tagged(u, &Comm::new(inter.context, all, rank, inter.errhandler()), tag)?;
    let remote = inter.peers().to_vec();
    Ok(u.comms.insert(Comm::new_inter(ctx, inter.group.clone(), inter.rank, remote, inter.low_group, inter.errhandler())))
}

/// MPI_Intercomm_merge: the group that passed `high` = false comes first; when both passed the
/// same value, the low group (MPICH's rule) does. Returns the new intracommunicator's index.
pub fn merge(u: &Universe, inter: &Comm, high: bool) -> MpiResult<u32> {
    let local = inter.local_view();
    let mut flags = [high as u64, 0];
    if let Some(link) = leader_link(inter, TAG_MERGE) {
        let theirs = exchange(u, link, &flags[..1], 1)?;
        flags[1] = *theirs.first().ok_or_else(|| err(ErrorClass::Other, "MPI_Intercomm_merge: empty message from the remote leader"))?;
    }
    bcast_u64(u, &local, &mut flags, 0)?;
    // Every local rank uses the leader's `high` (the standard asks all to pass the same one).
    let (mine, theirs) = (flags[0] != 0, flags[1] != 0);
    let first_local = if mine == theirs { inter.low_group } else { !mine };
    let (all, rank) = union(inter, first_local);
    let ctx = agree_context(u, &Comm::new(inter.context, all.clone(), rank, inter.errhandler()))?;
    Ok(u.comms.insert(Comm::new(ctx, all, rank, inter.errhandler())))
}

/// MPI_Comm_split of an intercommunicator (MPI 4.1 section 7.4.2): the processes of each color
/// form an intercommunicator between that color's members of the two groups, ordered by (key,
/// rank); a color present in one group only (or MPI_UNDEFINED, `color` None) gives None.
/// Collective over both groups.
pub fn split(u: &Universe, inter: &Comm, color: Option<i32>, key: i32) -> MpiResult<Option<u32>> {
    split_or_fail(u, inter, Ok(color), key)
}

/// `split`, where a process whose arguments were bad (`color` Err) still takes part in the
/// exchange, so that every process of both groups returns an error instead of waiting for it.
fn split_or_fail(u: &Universe, inter: &Comm, color: MpiResult<Option<i32>>, key: i32) -> MpiResult<Option<u32>> {
    // Everybody's (color + 1, 0 for none or minus the error class of bad arguments; key) over the
    // union, low group first (the same list on both sides), with a SUM allreduce where each member
    // fills its own slots.
    let (all, me) = union(inter, inter.low_group);
    let union_comm = Comm::new(inter.context, all.clone(), me, inter.errhandler());
    let n = all.len();
    let mut mine = vec![0i64; 2 * n];
    mine[2 * me] = match &color {
        Ok(c) => c.map_or(0, |c| c as i64 + 1),
        Err(e) => -e.class.wire(),
    };
    mine[2 * me + 1] = key as i64;
    let mut gathered = vec![0i64; 2 * n];
    let sum = Reduction::new(Op::Sum, Basic::Int64T)?;
    // SAFETY: both vectors hold 2n i64 elements; distinct buffers.
    unsafe { allreduce_internal(u, &union_comm, mine.as_ptr() as *const u8, gathered.as_mut_ptr() as *mut u8, 2 * n, &sum)? };
    let color = color?;
    if let Some(i) = (0..n).find(|&i| gathered[2 * i] < 0) {
        let class = ErrorClass::from_wire(-gathered[2 * i]);
        return Err(err(class, format!("world rank {} passed invalid arguments to this collective call on the intercommunicator", all[i])));
    }
    let Some(color) = color else { return Ok(None) };
    let tag = color as i64 + 1;
    // Members of this color in a part of the union (union index range), ordered by (key, rank).
    let members = |range: std::ops::Range<usize>| -> Vec<usize> {
        let mut m: Vec<(i64, usize)> = range.filter(|&i| gathered[2 * i] == tag).map(|i| (gathered[2 * i + 1], i)).collect();
        m.sort_unstable();
        m.into_iter().map(|(_, i)| i).collect()
    };
    let (local_range, remote_range) = if inter.low_group {
        (0..inter.group.len(), inter.group.len()..n)
    } else {
        (inter.peers().len()..n, 0..inter.peers().len())
    };
    let local: Vec<usize> = members(local_range);
    let remote: Vec<usize> = members(remote_range);
    if remote.is_empty() {
        return Ok(None);
    }
    // Agree on a context over this color's members of both groups, low group first.
    let (low_part, high_part) = if inter.low_group { (&local, &remote) } else { (&remote, &local) };
    let color_all: Vec<usize> = low_part.iter().chain(high_part.iter()).map(|&i| all[i]).collect();
    let my_pos = color_all.iter().position(|&w| w == all[me]).expect("this process has this color");
    let ctx = agree_context(u, &Comm::new(inter.context, color_all, my_pos, inter.errhandler()))?;
    let local_world: Vec<usize> = local.iter().map(|&i| all[i]).collect();
    let remote_world: Vec<usize> = remote.iter().map(|&i| all[i]).collect();
    let rank = local_world.iter().position(|&w| w == all[me]).expect("this process is local");
    Ok(Some(u.comms.insert(Comm::new_inter(ctx, local_world, rank, remote_world, inter.low_group, inter.errhandler()))))
}

/// MPI_Comm_create of an intercommunicator (MPI 4.1 section 7.4.2): `members` (world ranks, a
/// subset of the local group, in the group's order) and the remote side's subset form a new
/// intercommunicator; a process outside its side's subset, or everybody when either subset is
/// empty, gets None. It is `split` with color 0 for the members, keyed by their place in the group.
/// Collective over both groups; `members` Err (a bad group argument) fails the call everywhere.
pub fn create_subsets(u: &Universe, inter: &Comm, members: MpiResult<Vec<usize>>) -> MpiResult<Option<u32>> {
    let me = inter.world_rank(inter.rank);
    let pos = members.as_ref().ok().and_then(|m| m.iter().position(|&w| w == me));
    split_or_fail(u, inter, members.map(|_| pos.map(|_| 0)), pos.map_or(0, |p| p as i32))
}
