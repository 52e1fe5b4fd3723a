//! MPI_Comm_split_type (MPI 4.1 section 7.4.2): by shared memory, by a hardware resource the
//! user names (guided), or by the largest resource level that splits the parent (unguided).
use super::hw_resources::{level_named, my_resources, LEVELS, SHARED_MEMORY};
use super::intra::split;
use crate::coll::allreduce::allreduce_internal;
use crate::comm::{Comm, Universe};
use crate::datatype::basic::Basic;
use crate::error::MpiResult;
use crate::op::{Op, Reduction};

/// What a rank asks MPI_Comm_split_type for.
pub enum SplitKind<'a> {
    /// MPI_COMM_TYPE_SHARED.
    Shared,
    /// MPI_COMM_TYPE_HW_GUIDED with the `mpi_hw_resource_type` value given (None: no such key).
    Guided(Option<&'a str>),
    /// MPI_COMM_TYPE_HW_UNGUIDED.
    Unguided,
    /// MPI_UNDEFINED, or a type oxmpi does not know: MPI_COMM_NULL.
    Undefined,
}

/// The split on an intracommunicator. Returns the new communicator (None: MPI_COMM_NULL) and, for
/// an unguided split, the resource type it stands for (the caller reports it in the info).
///
/// Collective over `parent` whatever each rank asks for (the standard lets some ranks pass
/// MPI_UNDEFINED): one allreduce of every rank's resource ids, then a split with colors derived
/// from them.
pub fn split_type(u: &Universe, parent: &Comm, kind: SplitKind, key: i32) -> MpiResult<(Option<u32>, Option<&'static str>)> {
    let n = parent.size();
    let l = LEVELS.len();
    // ids[r * l + level] = resource id + 1 of rank r at `level`, 0 when it spans several.
    let mut mine = vec![0i64; n * l];
    for (level, id) in my_resources().iter().enumerate() {
        mine[parent.rank * l + level] = id.map_or(0, |v| v + 1);
    }
    let mut ids = vec![0i64; n * l];
    let sum = Reduction::new(Op::Sum, Basic::Int64T)?;
    // SAFETY: both vectors hold n * l i64 elements; distinct buffers.
    unsafe { allreduce_internal(u, parent, mine.as_ptr() as *const u8, ids.as_mut_ptr() as *mut u8, n * l, &sum)? };

    // The color of the group of ranks sharing this rank's resource at `level`: level * n + the
    // lowest such rank, distinct for every group of every level.
    let group_color = |level: usize| -> Option<(i32, usize)> {
        let id = ids[parent.rank * l + level];
        if id == 0 {
            return None;
        }
        let members: Vec<usize> = (0..n).filter(|&r| ids[r * l + level] == id).collect();
        Some(((level * n + members[0]) as i32, members.len()))
    };
    // The ranks that share memory with this one: those of its node (all of them, but in a
    // job over several nodes). The lowest of them names the group, the same for each member.
    let t = u.engine.transport();
    let node = (0..n).find(|&r| crate::transport::Transport::locality(t, parent.world_rank(r)) != crate::transport::Locality::OtherNode).map(|r| r as i32);
    let (color, resource) = match kind {
        SplitKind::Shared => (node, None),
        SplitKind::Guided(Some(name)) if name == SHARED_MEMORY => (node, None),
        SplitKind::Guided(Some(name)) => (level_named(name).and_then(group_color).map(|(c, _)| c + 1), None),
        SplitKind::Guided(None) | SplitKind::Undefined => (None, None),
        // The largest resource holding this rank that is a strict subset of the parent.
        SplitKind::Unguided => match (0..l).find_map(|level| group_color(level).filter(|&(_, size)| size < n).map(|(c, _)| (c + 1, level))) {
            Some((c, level)) => (Some(c), Some(LEVELS[level])),
            None => (None, None),
        },
    };
    Ok((split(u, parent, color, key)?, resource))
}
