//! The edge exchange of MPI_Dist_graph_create: every process may name edges between any
//! processes, so each must learn the edges that touch it. Done with two SUM allreduces over the
//! parent (counts, then every edge as (source, destination, weight) in its contributor's slots):
//! simple and collective-only, O(total edges) memory per process, fine at shared-memory scale.
use crate::coll::allreduce::allreduce_internal;
use crate::comm::Comm;
use crate::error::MpiResult;
use crate::datatype::basic::Basic;
use crate::op::{Op, Reduction};
use crate::comm::Universe;


/// Gathers every process's `(source, destination, weight)` edges onto every process, in order of
/// contributing rank then of contribution. Collective over `parent`.
pub fn allgather_edges(u: &Universe, parent: &Comm, mine: &[(i32, i32, i32)]) -> MpiResult<Vec<(i32, i32, i32)>> {
    let n = parent.size();
    let sum = Reduction::new(Op::Sum, Basic::Int64T)?;
    let mut counts = vec![0i64; n];
    counts[parent.rank] = mine.len() as i64;
    let mut all_counts = vec![0i64; n];
    // SAFETY: both vectors hold n i64 elements; distinct buffers.
    unsafe { allreduce_internal(u, parent, counts.as_ptr() as *const u8, all_counts.as_mut_ptr() as *mut u8, n, &sum)? };
    let total: usize = all_counts.iter().map(|&c| c as usize).sum();
    let offset: usize = all_counts[..parent.rank].iter().map(|&c| c as usize).sum();
    let mut flat = vec![0i64; 3 * total];
    for (i, &(s, d, w)) in mine.iter().enumerate() {
        flat[3 * (offset + i)..3 * (offset + i) + 3].copy_from_slice(&[s as i64, d as i64, w as i64]);
    }
    let mut all = vec![0i64; 3 * total];
    if total == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: both vectors hold 3 * total i64 elements; distinct buffers.
    unsafe { allreduce_internal(u, parent, flat.as_ptr() as *const u8, all.as_mut_ptr() as *mut u8, 3 * total, &sum)? };
    Ok(all.chunks_exact(3).map(|e| (e[0] as i32, e[1] as i32, e[2] as i32)).collect())
}
