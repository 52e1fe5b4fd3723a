//! Process topologies (MPI 4.1 chapter 8): the virtual topology attached to a communicator and the
//! pure computations on it (coordinates, shifts, neighbours, balanced dimensions). No C types here:
//! `ffi::topo` checks arguments, creates the communicators and attaches a `Topology` once.


use crate::error::{err, MpiResult, ErrorClass};

/// The topology of a communicator, fixed when the communicator is created (and copied by dup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// A Cartesian grid; rank r has coordinates in row-major order (the last dimension varies
    /// fastest), as MPI 4.1 section 8.5.4 prescribes.
    Cart { dims: Vec<i32>, periods: Vec<bool> },
    /// A general graph in MPI_Graph_create's compressed form: node i's neighbours are
    /// `edges[index[i-1]..index[i]]` (with index[-1] = 0).
    Graph { index: Vec<i32>, edges: Vec<i32> },
    /// A distributed graph: only this process's own in- and out-edges are known.
    DistGraph(DistGraph),
}

/// This process's view of a distributed graph topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<i32>,
    pub dest_weights: Vec<i32>,
    /// False if created with MPI_UNWEIGHTED (the weight vectors are then all 1s and unreported).
    pub weighted: bool,
}

/// Number of processes in a grid of these dimensions (1 for zero dimensions).
pub fn grid_size(dims: &[i32]) -> usize {
    dims.iter().map(|&d| d as usize).product()
}

/// Coordinates of `rank` in a row-major grid of `dims` (`rank` must be below the grid size).
pub fn cart_coords(dims: &[i32], rank: usize) -> Vec<i32> {
    let mut c = vec![0; dims.len()];
    let mut r = rank;
    for i in (0..dims.len()).rev() {
        let d = dims[i] as usize;
        c[i] = (r % d) as i32;
        r /= d;
    }
    c
}

/// Rank of the process at `coords`: periodic dimensions wrap, an out-of-range coordinate in a
/// non-periodic dimension is ErrorClass::Arg (MPICH's class for MPI_Cart_rank).
pub fn cart_rank(dims: &[i32], periods: &[bool], coords: &[i32]) -> MpiResult<usize> {
    let mut r = 0usize;
    for (i, (&d, &c)) in dims.iter().zip(coords).enumerate() {
        let c = if periods[i] {
            c.rem_euclid(d)
        } else if (0..d).contains(&c) {
            c
        } else {
            return Err(err(ErrorClass::Arg, format!("coordinate {c} of dimension {i} is outside 0..{d} and the dimension is not periodic")));
        };
        r = r * d as usize + c as usize;
    }
    Ok(r)
}

/// MPI_Cart_shift: (source, destination) of a shift by `disp` along `direction` for `rank`;
/// None where a non-periodic boundary is crossed (MPI_PROC_NULL).
pub fn cart_shift(dims: &[i32], periods: &[bool], rank: usize, direction: usize, disp: i32) -> (Option<usize>, Option<usize>) {
    let me = cart_coords(dims, rank);
    let at = |delta: i64| {
        let mut c = me.clone();
        let v = c[direction] as i64 + delta;
        let d = dims[direction] as i64;
        c[direction] = if periods[direction] {
            v.rem_euclid(d) as i32
        } else if (0..d).contains(&v) {
            v as i32
        } else {
            return None;
        };
        cart_rank(dims, periods, &c).ok()
    };
    (at(-(disp as i64)), at(disp as i64))
}

/// MPI_Dims_create: fills the zero entries of `dims` so that the product is `nnodes` and the
/// dimensions are as balanced as possible, in non-increasing order. "Balanced" is taken as the
/// smallest spread (largest minus smallest free dimension), ties broken towards the smaller
/// largest dimension; this gives the same answers as MPICH on the usual cases (6x1 -> 3x2,
/// 12x3 -> 3x2x2, 16x2 -> 4x4, prime nnodes -> nnodes x 1 ...). Nonzero entries are kept;
/// ErrorClass::Dims if their product does not divide `nnodes` or an entry is negative.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> MpiResult {
    if nnodes < 0 {
        return Err(err(ErrorClass::Arg, format!("invalid nnodes {nnodes}: must be non-negative")));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(err(ErrorClass::Dims, format!("invalid dimension {d}: entries of dims must be non-negative")));
    }
    let fixed: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| d as i64).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if free == 0 {
        if fixed != nnodes as i64 {
            return Err(err(ErrorClass::Dims, format!("the product of dims ({fixed}) is not nnodes ({nnodes})")));
        }
        return Ok(());
    }
    if nnodes == 0 || nnodes as i64 % fixed != 0 {
        return Err(err(ErrorClass::Dims, format!("nnodes ({nnodes}) is not a multiple of the product of the fixed dims ({fixed})")));
    }
    let rest = (nnodes as i64 / fixed) as u64;
    let mut best: Option<Vec<u64>> = None;
    let mut cur = Vec::with_capacity(free);
    search(rest, free, rest, &mut cur, &mut best);
    let best = best.expect("a factorisation with 1s always exists");
    let mut it = best.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free dimension") as i32;
    }
    Ok(())
}

/// Depth-first search over non-increasing factor sequences of `n` with `k` factors, each at
/// most `max`; keeps the best by (spread, largest factor).
fn search(n: u64, k: usize, max: u64, cur: &mut Vec<u64>, best: &mut Option<Vec<u64>>) {
    if k == 1 {
        if n > max {
            return;
        }
        cur.push(n);
        let score = |v: &[u64]| (v[0] - v[v.len() - 1], v[0]);
        if best.as_ref().is_none_or(|b| score(cur) < score(b)) {
            *best = Some(cur.clone());
        }
        cur.pop();
        return;
    }
    // The first of k non-increasing factors is at least the k-th root of n.
    let mut f = max.min(n);
    while f >= 1 {
        if n.is_multiple_of(f) && f.checked_pow(k as u32).is_none_or(|p| p >= n) {
            cur.push(f);
            search(n / f, k - 1, f, cur, best);
            cur.pop();
        } else if f.checked_pow(k as u32).is_some_and(|p| p < n) {
            break;
        }
        f -= 1;
    }
}

/// Checks a rank argument against a communicator of `size` ranks.
pub fn check_rank(rank: i32, size: usize) -> MpiResult<usize> {
    if rank < 0 || rank as usize >= size {
        return Err(err(ErrorClass::Rank, format!("invalid rank {rank}: the communicator has {size} ranks")));
    }
    Ok(rank as usize)
}

impl Topology {
    /// Neighbours of node `rank` of a graph topology.
    pub fn graph_neighbors(index: &[i32], edges: &[i32], rank: usize) -> Vec<i32> {
        let lo = if rank == 0 { 0 } else { index[rank - 1] as usize };
        edges[lo..index[rank] as usize].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dc(n: i32, d: &[i32]) -> Vec<i32> {
        let mut v = d.to_vec();
        dims_create(n, &mut v).unwrap();
        v
    }

    #[test]
    fn dims() {
        assert_eq!(dc(6, &[0, 0]), [3, 2]);
        assert_eq!(dc(12, &[0, 0, 0]), [3, 2, 2]);
        assert_eq!(dc(16, &[0, 0]), [4, 4]);
        assert_eq!(dc(7, &[0, 0]), [7, 1]);
        assert_eq!(dc(8, &[0, 0, 0]), [2, 2, 2]);
        assert_eq!(dc(6, &[0, 3, 0]), [2, 3, 1]);
        assert_eq!(dc(1, &[0, 0]), [1, 1]);
        assert_eq!(dc(24, &[0, 0]), [6, 4]);
        // MPICH 4.0.2's answers.
        for (n, want) in [(30, vec![5, 3, 2]), (60, vec![5, 4, 3]), (72, vec![6, 4, 3]), (128, vec![8, 4, 4]), (48, vec![4, 4, 3]), (100, vec![5, 5, 4]), (120, vec![6, 5, 4]), (1000, vec![10, 10, 10]), (54, vec![6, 3, 3])] {
            assert_eq!(dc(n, &[0, 0, 0]), want, "{n}");
        }
        assert_eq!(dc(90, &[0, 0]), [10, 9]);
        assert_eq!(dc(210, &[0, 0, 0, 0]), [7, 5, 3, 2]);
        assert_eq!(dc(36, &[0, 0, 0, 0]), [3, 3, 2, 2]);
        assert_eq!(dc(96, &[0, 0, 0, 0]), [4, 4, 3, 2]);
        assert!(dims_create(7, &mut [2, 0]).is_err());
        assert!(dims_create(6, &mut [2, 2]).is_err());
    }

    #[test]
    fn cart() {
        let (d, p) = (vec![2, 3], vec![true, false]);
        for r in 0..6 {
            assert_eq!(cart_rank(&d, &p, &cart_coords(&d, r)).unwrap(), r);
        }
        assert_eq!(cart_coords(&d, 4), [1, 1]);
        assert_eq!(cart_rank(&d, &p, &[-1, 2]).unwrap(), 5);
        assert!(cart_rank(&d, &p, &[0, 3]).is_err());
        assert_eq!(cart_shift(&d, &p, 0, 0, 1), (Some(3), Some(3)));
        assert_eq!(cart_shift(&d, &p, 0, 1, 1), (None, Some(1)));
        assert_eq!(cart_shift(&d, &p, 2, 1, 1), (Some(1), None));
    }
}
