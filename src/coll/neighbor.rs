//! Neighborhood collectives (MPI 4.1 section 8.6): who a process exchanges with, and in which
//! order, on each kind of virtual topology. The exchange itself is `alltoall::linear` over one
//! slot per neighbor.
//!
//! The order is the standard's: for a Cartesian topology, for each dimension the source then the
//! destination of MPI_Cart_shift(dim, 1), i.e. the -1 then the +1 neighbor, MPI_PROC_NULL
//! across a non-periodic boundary (its buffer block is left untouched); for a graph the
//! MPI_Graph_neighbors list, both ways; for a distributed graph the sources (incoming) and the
//! destinations (outgoing) in the order they were given. A neighbor may appear several times
//! (periodic dimensions of size 1 or 2, multigraphs): all messages of one collective share a tag
//! and are posted in neighbor order, so the k-th message from a process to a neighbor matches
//! the k-th receive that neighbor posted for it (as in MPICH).
use crate::topo::{cart_shift, Topology};

/// A process's neighbors: (sources it receives from, destinations it sends to), as communicator
/// ranks, None for MPI_PROC_NULL.
pub fn neighbors(t: &Topology, rank: usize) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    match t {
        Topology::Cart { dims, periods } => {
            let mut v = Vec::with_capacity(2 * dims.len());
            for d in 0..dims.len() {
                let (lo, hi) = cart_shift(dims, periods, rank, d, 1);
                v.push(lo);
                v.push(hi);
            }
            (v.clone(), v)
        }
        Topology::Graph { index, edges } => {
            let v: Vec<Option<usize>> = Topology::graph_neighbors(index, edges, rank).into_iter().map(|r| Some(r as usize)).collect();
            (v.clone(), v)
        }
        Topology::DistGraph(g) => {
            let f = |v: &[i32]| v.iter().map(|&r| Some(r as usize)).collect();
            (f(&g.sources), f(&g.destinations))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cart_order_and_repeats() {
        // A periodic ring of 2: both neighbors are the other process.
        let t = Topology::Cart { dims: vec![2], periods: vec![true] };
        assert_eq!(neighbors(&t, 0), (vec![Some(1), Some(1)], vec![Some(1), Some(1)]));
        // 2x3, non-periodic second dimension: rank 0 = (0,0).
        let t = Topology::Cart { dims: vec![2, 3], periods: vec![true, false] };
        assert_eq!(neighbors(&t, 0).1, vec![Some(3), Some(3), None, Some(1)]);
        // A periodic ring of 1: itself, twice.
        let t = Topology::Cart { dims: vec![1], periods: vec![true] };
        assert_eq!(neighbors(&t, 0).0, vec![Some(0), Some(0)]);
    }
}
