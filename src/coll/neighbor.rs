//! Neighborhood collectives (MPI 4.1 section 8.6): who a process exchanges with, in which order,
//! and how repeated neighbors pair their blocks, on each kind of virtual topology. The exchange
//! itself is `alltoall::linear` over one slot per neighbor, or its schedule form `nbc::exchange`
//! for the nonblocking and persistent collectives.
//!
//! The order is the standard's: for a Cartesian topology, for each dimension the source then the
//! destination of MPI_Cart_shift(dim, 1), i.e. the -1 then the +1 neighbor, MPI_PROC_NULL
//! across a non-periodic boundary (its buffer block is left untouched); for a graph the
//! MPI_Graph_neighbors list, both ways; for a distributed graph the sources (incoming) and the
//! destinations (outgoing) in the order they were given.
//!
//! A neighbor may appear several times. In a periodic Cartesian dimension of size 1 or 2 the -1
//! and +1 neighbors are the same process; the standard (MPI 4.1 section 8.6, erratum of
//! mpi-forum/mpi-issues#153) still pairs blocks by direction: what a process sends to its -1
//! neighbor (block 2d) arrives in that neighbor's block from its +1 neighbor (2d + 1), and the
//! other way round. Each Cartesian block therefore travels on its own round tag: send block s on
//! round s, receive block s on round s ^ 1. In graphs (multigraphs, self-loops) the standard's
//! reference code receives in neighbor order, so the k-th message from a process to a neighbor
//! lands in the k-th block that neighbor has for it: one tag, messages posted in neighbor order.
use super::alltoall::Slot;
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

/// Sets the round tags of a neighborhood exchange's slots (one per neighbor, in neighbor order):
/// per direction on Cartesian topologies, one tag on graphs (see the module documentation).
pub fn pair_blocks(t: &Topology, sends: &mut [Slot], recvs: &mut [Slot]) {
    if let Topology::Cart { .. } = t {
        for (s, slot) in sends.iter_mut().enumerate() {
            slot.round = s;
        }
        for (s, slot) in recvs.iter_mut().enumerate() {
            slot.round = s ^ 1;
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

    #[test]
    fn cartesian_blocks_pair_by_direction() {
        let slot = |r| Slot { peer: Some(0), buf: std::ptr::null_mut(), bytes: 0, round: r };
        let (mut s, mut r) = (vec![slot(9); 4], vec![slot(9); 4]);
        pair_blocks(&Topology::Cart { dims: vec![1, 2], periods: vec![true, true] }, &mut s, &mut r);
        assert_eq!(s.iter().map(|x| x.round).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(r.iter().map(|x| x.round).collect::<Vec<_>>(), [1, 0, 3, 2]);
        let (mut s, mut r) = (vec![slot(0); 2], vec![slot(0); 2]);
        pair_blocks(&Topology::Graph { index: vec![2], edges: vec![0, 0] }, &mut s, &mut r);
        assert!(s.iter().chain(&r).all(|x| x.round == 0));
    }
}
