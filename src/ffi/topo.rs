//! Process topologies (MPI 4.1 chapter 8): Cartesian, graph and distributed graph constructors
//! and queries, MPI_Dims_create, MPI_Topo_test. Argument checks and error classes follow MPICH
//! 4.0.2 where the standard leaves them open. Reordering is never done (`reorder` is a hint):
//! ranks keep their order, so the map functions return the identity.
//!
//! Every array argument holds the number of elements the other arguments give it (the standard's
//! rule, which the SAFETY comments below rely on); `pointer_args` rejects NULL ones.
/// `MPI_Topo_test` results: mpi.h's `MPIR_Topo_type` enum (not macros, so tests/abi_consts.rs's
/// probe cannot check them; the enum is MPICH's, values 1 to 3).
pub const MPI_GRAPH: std::os::raw::c_int = 1;
pub const MPI_CART: std::os::raw::c_int = 2;
pub const MPI_DIST_GRAPH: std::os::raw::c_int = 3;

use crate::ffi::check;
use crate::ffi::pointer_args::{input, out, output};
use crate::ffi::data_symbols::{MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY};
use crate::abi::*;
use crate::comm::Comm;
use crate::error::{err, MpiResult};
use crate::export;
use crate::instance::Instance;
use crate::topo::{self, DistGraph, Topology};
use std::os::raw::c_int;

fn topology(c: &Comm) -> MpiResult<&Topology> {
    c.topo.get().ok_or_else(|| err(MPI_ERR_TOPOLOGY, "the communicator has no topology"))
}

fn cart(c: &Comm) -> MpiResult<(&[i32], &[bool])> {
    match topology(c)? {
        Topology::Cart { dims, periods } => Ok((dims, periods)),
        _ => Err(err(MPI_ERR_TOPOLOGY, "the communicator has no Cartesian topology")),
    }
}

fn graph(c: &Comm) -> MpiResult<(&[i32], &[i32])> {
    match topology(c)? {
        Topology::Graph { index, edges } => Ok((index, edges)),
        _ => Err(err(MPI_ERR_TOPOLOGY, "the communicator has no graph topology")),
    }
}

fn dist_graph(c: &Comm) -> MpiResult<&DistGraph> {
    match topology(c)? {
        Topology::DistGraph(g) => Ok(g),
        _ => Err(err(MPI_ERR_TOPOLOGY, "the communicator has no distributed graph topology")),
    }
}

/// Attaches `t` to the freshly created communicator `index` and returns its handle
/// (MPI_COMM_NULL for a process that got none).
fn attach(u: &Instance, index: Option<u32>, t: Topology) -> MPI_Comm {
    let Some(i) = index else { return MPI_COMM_NULL };
    let c = u.comms.get(i).expect("a communicator just created is in the table");
    c.topo.set(t).expect("a new communicator has no topology yet");
    check::comm_handle(i)
}

/// Checks Cartesian dims/periods arguments; returns them as Rust vectors.
///
/// # Safety
/// `dims` and `periods` must point to `ndims` readable ints (or be anything if `ndims` is 0).
unsafe fn cart_args(ndims: c_int, dims: *const c_int, periods: *const c_int) -> MpiResult<(Vec<i32>, Vec<bool>)> {
    if ndims < 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be non-negative")));
    }
    // SAFETY: the caller's contract.
    let d = unsafe { input(dims, ndims as usize, "dims")? };
    // SAFETY: the caller's contract.
    let p = unsafe { input(periods, ndims as usize, "periods")? };
    if let Some(x) = d.iter().find(|&&x| x <= 0) {
        return Err(err(MPI_ERR_DIMS, format!("invalid dimension {x}: every dimension must be positive")));
    }
    Ok((d.to_vec(), p.iter().map(|&x| x != 0).collect()))
}

/// Checks MPI_Graph_create's arguments against a communicator of `size` ranks.
///
/// # Safety
/// `index` must point to `nnodes` ints and `edges` to `index[nnodes-1]` ints.
unsafe fn graph_args(nnodes: c_int, index: *const c_int, edges: *const c_int, size: usize) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    if nnodes < 0 || nnodes as usize > size {
        return Err(err(MPI_ERR_ARG, format!("invalid nnodes {nnodes}: must be {} (at most the communicator's size)", crate::error::range(0, size as i64))));
    }
    // SAFETY: the caller's contract.
    let idx = unsafe { input(index, nnodes as usize, "index")? }.to_vec();
    let mut prev = 0;
    for &x in &idx {
        if x < prev {
            return Err(err(MPI_ERR_ARG, format!("invalid index array: {x} after {prev} (must be non-decreasing and non-negative)")));
        }
        prev = x;
    }
    // SAFETY: the caller's contract.
    let e = unsafe { input(edges, prev as usize, "edges")? }.to_vec();
    if let Some(x) = e.iter().find(|&&x| x < 0 || x >= nnodes) {
        return Err(err(MPI_ERR_ARG, format!("invalid edge to node {x}: the graph has {nnodes} nodes")));
    }
    Ok((idx, e))
}

/// True if `p` is the MPI_UNWEIGHTED sentinel.
fn unweighted(p: *const c_int) -> bool {
    std::ptr::eq(p, MPI_UNWEIGHTED.get())
}

/// The weights of `n` edges: all 1 for MPI_UNWEIGHTED (or MPI_WEIGHTS_EMPTY with no edges).
///
/// # Safety
/// Unless a sentinel, `p` must point to `n` readable ints.
unsafe fn weights(p: *const c_int, n: usize, what: &str) -> MpiResult<Vec<i32>> {
    if unweighted(p) || n == 0 {
        return Ok(vec![1; n]);
    }
    if std::ptr::eq(p, MPI_WEIGHTS_EMPTY.get()) {
        return Err(err(MPI_ERR_ARG, format!("{what} is MPI_WEIGHTS_EMPTY but there are {n} edges")));
    }
    // SAFETY: the caller's contract.
    let w = unsafe { input(p, n, what)? };
    if let Some(x) = w.iter().find(|&&x| x < 0) {
        return Err(err(MPI_ERR_ARG, format!("invalid weight {x} in {what}: weights must be non-negative")));
    }
    Ok(w.to_vec())
}

fn check_ranks(v: &[i32], size: usize, what: &str) -> MpiResult {
    for &r in v {
        topo::check_rank(r, size).map_err(|_| err(MPI_ERR_ARG, format!("invalid rank {r} in {what}: the communicator has {size} ranks")))?;
    }
    Ok(())
}

export! {
    fn MPI_Dims_create / PMPI_Dims_create (nnodes: c_int, ndims: c_int, dims: *mut c_int) on comm MPI_COMM_SELF => {
        if ndims < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be non-negative")));
        }
        if ndims == 0 {
            return if nnodes == 1 { Ok(()) } else { Err(err(MPI_ERR_DIMS, format!("zero dimensions cannot hold {nnodes} processes"))) };
        }
        let dims = out(dims, "dims")?;
        // SAFETY: checked non-NULL above; `ndims` ints, read and written.
        let d = unsafe { std::slice::from_raw_parts_mut(dims, ndims as usize) };
        topo::dims_create(nnodes, d)
    }

    fn MPI_Cart_create / PMPI_Cart_create (comm_old: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, comm_cart: *mut MPI_Comm) on comm comm_old => {
        let comm_cart = out(comm_cart, "comm_cart")?;
        let u = check::universe()?;
        let c = check::comm(u, comm_old)?;
        // SAFETY: `dims` and `periods` hold `ndims` ints.
        let (dims, periods) = unsafe { cart_args(ndims, dims, periods)? };
        let n = topo::grid_size(&dims);
        if n > c.size() {
            return Err(err(MPI_ERR_ARG, format!("the grid has {n} processes but the communicator only {}", c.size())));
        }
        // Rank order kept; ranks beyond the grid get MPI_COMM_NULL.
        let idx = crate::construct::intra::split(u, &c, (c.rank < n).then_some(0), c.rank as i32)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *comm_cart = attach(u, idx, Topology::Cart { dims, periods }) };
        Ok(())
    }

    fn MPI_Cart_map / PMPI_Cart_map (comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) on comm comm => {
        let newrank = out(newrank, "newrank")?;
        let c = check::comm(check::universe()?, comm)?;
        // SAFETY: `dims` and `periods` hold `ndims` ints.
        let (dims, _) = unsafe { cart_args(ndims, dims, periods)? };
        let n = topo::grid_size(&dims);
        if n > c.size() {
            return Err(err(MPI_ERR_DIMS, format!("the grid has {n} processes but the communicator only {}", c.size())));
        }
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *newrank = if c.rank < n { c.rank as c_int } else { MPI_UNDEFINED } };
        Ok(())
    }

    fn MPI_Cartdim_get / PMPI_Cartdim_get (comm: MPI_Comm, ndims: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let n = cart(&c)?.0.len() as c_int;
        let ndims = out(ndims, "ndims")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *ndims = n };
        Ok(())
    }

    fn MPI_Cart_get / PMPI_Cart_get (comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (d, p) = cart(&c)?;
        // Like MPICH, at most maxdims entries are written.
        let m = (maxdims.max(0) as usize).min(d.len());
        let me = topo::cart_coords(d, c.rank);
        let p: Vec<c_int> = p.iter().map(|&x| x as c_int).collect();
        // SAFETY: each array holds `maxdims` >= `m` ints.
        unsafe {
            output(dims, &d[..m], "dims")?;
            output(periods, &p[..m], "periods")?;
            output(coords, &me[..m], "coords")?;
        }
        Ok(())
    }

    fn MPI_Cart_rank / PMPI_Cart_rank (comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) on comm comm => {
        let rank = out(rank, "rank")?;
        let c = check::comm(check::universe()?, comm)?;
        let (d, p) = cart(&c)?;
        // SAFETY: `coords` holds one int per dimension of the grid.
        let coords = unsafe { input(coords, d.len(), "coords")? };
        let r = topo::cart_rank(d, p, coords)? as c_int;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *rank = r };
        Ok(())
    }

    fn MPI_Cart_coords / PMPI_Cart_coords (comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (d, _) = cart(&c)?;
        let r = topo::check_rank(rank, c.size())?;
        if (maxdims as i64) < d.len() as i64 {
            return Err(err(MPI_ERR_ARG, format!("maxdims {maxdims} is smaller than the number of dimensions {}", d.len())));
        }
        // SAFETY: `coords` holds `maxdims` ints, checked >= the number of dimensions above.
        unsafe { output(coords, &topo::cart_coords(d, r), "coords") }
    }

    fn MPI_Cart_shift / PMPI_Cart_shift (comm: MPI_Comm, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) on comm comm => {
        let rank_source = out(rank_source, "rank_source")?;
        let rank_dest = out(rank_dest, "rank_dest")?;
        let c = check::comm(check::universe()?, comm)?;
        let (d, p) = cart(&c)?;
        if direction < 0 || direction as usize >= d.len() {
            return Err(err(MPI_ERR_ARG, format!("invalid direction {direction}: the grid has {} dimensions", d.len())));
        }
        let (s, t) = topo::cart_shift(d, p, c.rank, direction as usize, disp);
        // SAFETY: both checked non-NULL above; the caller passes two ints.
        unsafe {
            *rank_source = s.map_or(MPI_PROC_NULL, |r| r as c_int);
            *rank_dest = t.map_or(MPI_PROC_NULL, |r| r as c_int);
        }
        Ok(())
    }

    fn MPI_Cart_sub / PMPI_Cart_sub (comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) on comm comm => {
        let newcomm = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let (d, p) = cart(&c)?;
        // SAFETY: `remain_dims` holds one int per dimension of the grid.
        let keep: Vec<bool> = unsafe { input(remain_dims, d.len(), "remain_dims")? }.iter().map(|&x| x != 0).collect();
        // Processes agreeing on the dropped coordinates form one sub-grid; the color numbers the
        // dropped coordinates row-major. Rank order within a sub-grid is the parent's.
        let me = topo::cart_coords(d, c.rank);
        let mut color = 0i64;
        let (mut sd, mut sp) = (Vec::new(), Vec::new());
        for i in 0..d.len() {
            if keep[i] {
                sd.push(d[i]);
                sp.push(p[i]);
            } else {
                color = color * d[i] as i64 + me[i] as i64;
            }
        }
        // With no dimension kept the result is a zero-dimensional grid; like MPICH (which makes it
        // with Cart_create over the parent), only rank 0 is in it and the others get MPI_COMM_NULL.
        let color = if sd.is_empty() { (c.rank == 0).then_some(0) } else { Some(color as i32) };
        let idx = crate::construct::intra::split(u, &c, color, c.rank as i32)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newcomm = attach(u, idx, Topology::Cart { dims: sd, periods: sp }) };
        Ok(())
    }

    fn MPI_Graph_create / PMPI_Graph_create (comm_old: MPI_Comm, nnodes: c_int, indx: *const c_int, edges: *const c_int, reorder: c_int, comm_graph: *mut MPI_Comm) on comm comm_old => {
        let comm_graph = out(comm_graph, "comm_graph")?;
        let u = check::universe()?;
        let c = check::comm(u, comm_old)?;
        // SAFETY: `indx` holds `nnodes` ints, `edges` as many as its last entry.
        let (index, edges) = unsafe { graph_args(nnodes, indx, edges, c.size())? };
        let n = nnodes as usize;
        let idx = crate::construct::intra::split(u, &c, (c.rank < n).then_some(0), c.rank as i32)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *comm_graph = attach(u, idx, Topology::Graph { index, edges }) };
        Ok(())
    }

    fn MPI_Graph_map / PMPI_Graph_map (comm: MPI_Comm, nnodes: c_int, indx: *const c_int, edges: *const c_int, newrank: *mut c_int) on comm comm => {
        let newrank = out(newrank, "newrank")?;
        let c = check::comm(check::universe()?, comm)?;
        // SAFETY: `indx` holds `nnodes` ints, `edges` as many as its last entry.
        unsafe { graph_args(nnodes, indx, edges, c.size())? };
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *newrank = if c.rank < nnodes as usize { c.rank as c_int } else { MPI_UNDEFINED } };
        Ok(())
    }

    fn MPI_Graphdims_get / PMPI_Graphdims_get (comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (index, edges) = graph(&c)?;
        let nnodes = out(nnodes, "nnodes")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *nnodes = index.len() as c_int };
        let nedges = out(nedges, "nedges")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *nedges = edges.len() as c_int };
        Ok(())
    }

    fn MPI_Graph_get / PMPI_Graph_get (comm: MPI_Comm, maxindex: c_int, maxedges: c_int, indx: *mut c_int, edges: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (index, e) = graph(&c)?;
        // SAFETY: `indx` holds `maxindex` ints and `edges` `maxedges`; no more are written.
        unsafe {
            output(indx, &index[..(maxindex.max(0) as usize).min(index.len())], "index")?;
            output(edges, &e[..(maxedges.max(0) as usize).min(e.len())], "edges")?;
        }
        Ok(())
    }

    fn MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count (comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (index, edges) = graph(&c)?;
        let r = topo::check_rank(rank, index.len())?;
        let nneighbors = out(nneighbors, "nneighbors")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *nneighbors = Topology::graph_neighbors(index, edges, r).len() as c_int };
        Ok(())
    }

    fn MPI_Graph_neighbors / PMPI_Graph_neighbors (comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let (index, edges) = graph(&c)?;
        let r = topo::check_rank(rank, index.len())?;
        let nb = Topology::graph_neighbors(index, edges, r);
        // SAFETY: `neighbors` holds `maxneighbors` ints; no more are written.
        unsafe { output(neighbors, &nb[..(maxneighbors.max(0) as usize).min(nb.len())], "neighbors") }
    }

    fn MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent (comm_old: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: MPI_Info, reorder: c_int, comm_dist_graph: *mut MPI_Comm) on comm comm_old => {
        let comm_dist_graph = out(comm_dist_graph, "comm_dist_graph")?;
        let u = check::universe()?;
        let c = check::comm(u, comm_old)?;
        if indegree < 0 || outdegree < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid degree (indegree {indegree}, outdegree {outdegree}): must be non-negative")));
        }
        let (ni, no) = (indegree as usize, outdegree as usize);
        // SAFETY: `sources` holds `indegree` ints, `destinations` `outdegree`.
        let src = unsafe { input(sources, ni, "sources")? }.to_vec();
        // SAFETY: as above.
        let dst = unsafe { input(destinations, no, "destinations")? }.to_vec();
        check_ranks(&src, c.size(), "sources")?;
        check_ranks(&dst, c.size(), "destinations")?;
        // SAFETY: unless MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY, `sourceweights` holds `indegree`
        // ints and `destweights` `outdegree`.
        let (source_weights, dest_weights) = unsafe { (weights(sourceweights, ni, "sourceweights")?, weights(destweights, no, "destweights")?) };
        let g = DistGraph {
            source_weights,
            dest_weights,
            sources: src,
            destinations: dst,
            weighted: !unweighted(sourceweights) && !unweighted(destweights),
        };
        let idx = crate::construct::intra::dup(u, &c)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *comm_dist_graph = attach(u, idx, Topology::DistGraph(g)) };
        Ok(())
    }

    fn MPI_Dist_graph_create / PMPI_Dist_graph_create (comm_old: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights: *const c_int, info: MPI_Info, reorder: c_int, comm_dist_graph: *mut MPI_Comm) on comm comm_old => {
        let comm_dist_graph = out(comm_dist_graph, "comm_dist_graph")?;
        let u = check::universe()?;
        let c = check::comm(u, comm_old)?;
        if n < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid n {n}: must be non-negative")));
        }
        // SAFETY: `sources` and `degrees` hold `n` ints each.
        let src = unsafe { input(sources, n as usize, "sources")? };
        // SAFETY: as above.
        let deg = unsafe { input(degrees, n as usize, "degrees")? };
        check_ranks(src, c.size(), "sources")?;
        if let Some(d) = deg.iter().find(|&&d| d < 0) {
            return Err(err(MPI_ERR_ARG, format!("invalid degree {d}: must be non-negative")));
        }
        let total: usize = deg.iter().map(|&d| d as usize).sum();
        // SAFETY: `destinations` holds the sum of `degrees` ints.
        let dst = unsafe { input(destinations, total, "destinations")? };
        check_ranks(dst, c.size(), "destinations")?;
        // SAFETY: unless MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY, `weights` holds as many ints as
        // `destinations`.
        let w = unsafe { self::weights(weights, total, "weights")? };
        let mut mine = Vec::with_capacity(total);
        let mut k = 0;
        for (i, &s) in src.iter().enumerate() {
            for _ in 0..deg[i] {
                mine.push((s, dst[k], w[k]));
                k += 1;
            }
        }
        let all = crate::construct::dist_graph::allgather_edges(u, &c, &mine)?;
        let me = c.rank as i32;
        let (ins, outs): (Vec<_>, Vec<_>) = (all.iter().filter(|e| e.1 == me).collect(), all.iter().filter(|e| e.0 == me).collect());
        let g = DistGraph {
            sources: ins.iter().map(|e| e.0).collect(),
            source_weights: ins.iter().map(|e| e.2).collect(),
            destinations: outs.iter().map(|e| e.1).collect(),
            dest_weights: outs.iter().map(|e| e.2).collect(),
            weighted: !unweighted(weights),
        };
        let idx = crate::construct::intra::dup(u, &c)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *comm_dist_graph = attach(u, idx, Topology::DistGraph(g)) };
        Ok(())
    }

    fn MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count (comm: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let g = dist_graph(&c)?;
        let indegree = out(indegree, "indegree")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *indegree = g.sources.len() as c_int };
        let outdegree = out(outdegree, "outdegree")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *outdegree = g.destinations.len() as c_int };
        let weighted = out(weighted, "weighted")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *weighted = g.weighted as c_int };
        Ok(())
    }

    fn MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors (comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let g = dist_graph(&c)?;
        let ni = (maxindegree.max(0) as usize).min(g.sources.len());
        let no = (maxoutdegree.max(0) as usize).min(g.destinations.len());
        // SAFETY: `sources` and `sourceweights` hold `maxindegree` ints, `destinations` and
        // `destweights` `maxoutdegree`; no more are written, and the weights only when they are
        // not the MPI_UNWEIGHTED sentinel.
        unsafe {
            output(sources, &g.sources[..ni], "sources")?;
            output(destinations, &g.destinations[..no], "destinations")?;
            // Weights are reported only for a weighted graph and to a real array.
            if g.weighted && !unweighted(sourceweights) {
                output(sourceweights, &g.source_weights[..ni], "sourceweights")?;
            }
            if g.weighted && !unweighted(destweights) {
                output(destweights, &g.dest_weights[..no], "destweights")?;
            }
        }
        Ok(())
    }

    fn MPI_Topo_test / PMPI_Topo_test (comm: MPI_Comm, status: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let kind = match c.topo.get() {
            None => MPI_UNDEFINED,
            Some(Topology::Graph { .. }) => MPI_GRAPH,
            Some(Topology::Cart { .. }) => MPI_CART,
            Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
        };
        let status = out(status, "status")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *status = kind };
        Ok(())
    }
}
