//! Communicators made from groups alone (MPI 4.1 sections 7.4.2 and 7.6.2): MPI_Comm_create_from_group
//! and MPI_Intercomm_create_from_groups, the constructors of the Sessions model, which have no
//! parent communicator to agree on a context id over.
//!
//! As in MPICH (`MPIR_Comm_create_from_group_impl`: MPI_Comm_create_group over its internal world
//! with a tag hashed from the string tag), the members agree among themselves on MPI_COMM_WORLD's
//! collective context, which every rank has whether or not it called MPI_Init, with a tag made
//! from a hash of the string tag (`coll::tag_from_group`): concurrent calls, which the standard
//! requires to have different string tags, do not meet each other's messages (unless their hashes
//! collide), nor those of the application's collectives, whose tags are sequenced.
use super::intra::agree_context_tagged;
use crate::comm::{Comm, Universe, WORLD_CONTEXT};
use crate::error::{err, ErrorClass, MpiResult};

/// FNV-1a of the string tag: the same on every member.
fn hash(stringtag: &[u8]) -> u32 {
    stringtag.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// The members as a communicator on MPI_COMM_WORLD's contexts, for the agreement only.
fn among(members: &[usize], rank: usize) -> Comm {
    Comm::new(WORLD_CONTEXT, members.to_vec(), rank, 0)
}

/// MPI_Comm_create_from_group: collective over `members` (world ranks, this rank among them),
/// which every member passes in the same order with the same `stringtag`. Returns the new table
/// index, the communicator carrying error handler `errhandler`.
pub fn create(u: &Universe, members: &[usize], stringtag: &[u8], errhandler: i32) -> MpiResult<u32> {
    let rank = members.iter().position(|&w| w == u.rank).ok_or_else(|| err(ErrorClass::Group, "MPI_Comm_create_from_group: the calling process is not in the group"))?;
    let ctx = agree_context_tagged(u, &among(members, rank), crate::coll::tag_from_group(hash(stringtag), false))?;
    Ok(u.comms.insert(Comm::new(ctx, members.to_vec(), rank, errhandler)))
}

/// MPI_Intercomm_create_from_groups: collective over both groups (disjoint; this rank in
/// `local`). The members agree over the union of the two groups, ordered so that both sides list
/// it alike: first the group holding the lowest world rank. Returns the new table index.
pub fn create_inter(u: &Universe, local: &[usize], remote: &[usize], stringtag: &[u8], errhandler: i32) -> MpiResult<u32> {
    let rank = local.iter().position(|&w| w == u.rank).ok_or_else(|| err(ErrorClass::Group, "MPI_Intercomm_create_from_groups: the calling process is not in the local group"))?;
    if remote.is_empty() || remote.iter().any(|w| local.contains(w)) {
        return Err(err(ErrorClass::Group, "MPI_Intercomm_create_from_groups: the local and remote groups must be disjoint and not empty"));
    }
    let local_first = local.iter().min() < remote.iter().min();
    let (all, me): (Vec<usize>, usize) = if local_first {
        (local.iter().chain(remote).copied().collect(), rank)
    } else {
        (remote.iter().chain(local).copied().collect(), remote.len() + rank)
    };
    let ctx = agree_context_tagged(u, &among(&all, me), crate::coll::tag_from_group(hash(stringtag), true))?;
    // MPICH's rule (as in `inter::create`): the group whose rank 0 has the lower world rank is low.
    let low = local[0] < remote[0];
    Ok(u.comms.insert(Comm::new_inter(ctx, local.to_vec(), rank, remote.to_vec(), low, errhandler)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn string_tags_hash_apart() {
        assert_ne!(super::hash(b"a"), super::hash(b"b"));
        assert_eq!(super::hash(b"org.mpi-forum.sess"), super::hash(b"org.mpi-forum.sess"));
    }
}
