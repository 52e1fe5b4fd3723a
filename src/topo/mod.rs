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
            return Err(err(ErrorClass::Arg, format!("coordinate {c} of dimension {i} is outside {} and the dimension is not periodic", crate::error::range(0, d as i64 - 1))));
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

/// MPI_Dims_create: fills the zero entries of `dims` so that the product is `nnodes`, with
/// MPICH's choice among the balanced factorisations (see [`balanced_factors`]), in
/// non-increasing order. Nonzero entries are kept; ErrorClass::Dims if their product does not
/// divide `nnodes` or an entry is negative.
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
    let mut it = balanced_factors(rest, free).into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free dimension") as i32;
    }
    Ok(())
}

/// Prime factorisation of `n` (at most 2^31), ascending primes with their multiplicities.
fn prime_factors(mut n: u64) -> Vec<(u64, u32)> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        if n % p == 0 {
            let mut c = 0;
            while n % p == 0 {
                n /= p;
                c += 1;
            }
            f.push((p, c));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if n > 1 {
        f.push((n, 1));
    }
    f
}

/// `k` factors of `n` in non-increasing order, chosen as MPICH 4 does (its algorithm follows
/// Träff and Lübbe, "Specification guideline violations by MPI_Dims_create", EuroMPI'15):
/// 1. while more than one dimension and more than one prime are left, a largest prime that
///    occurs once and exceeds the square root of what is left gets a dimension of its own;
/// 2. shortcuts: no more prime factors (with multiplicity) than dimensions: one prime per
///    dimension, then 1s; one dimension left: all of it; a single prime p^c: spread round
///    robin; every multiplicity divisible by the dimensions left: equal dimensions;
/// 3. otherwise the factorisation with the smallest spread (largest minus smallest); among
///    equally spread ones, MPICH keeps the last it meets when it tries the smallest dimension
///    in increasing order, then the next smallest in increasing order, and so on, which is the
///    one whose dimensions read from the smallest up are lexicographically greatest.
///
/// The search only visits non-decreasing divisor chains that can still be completed and that
/// can still beat the best spread, so it is quick for any `int` (2^30, large primes, highly
/// composite numbers).
fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    if k == 1 {
        return vec![n];
    }
    let mut primes = prime_factors(n);
    let mut n = n;
    let mut out = Vec::with_capacity(k);
    while out.len() < k - 1 && primes.len() > 1 {
        let (p, c) = *primes.last().expect("more than one prime");
        if c != 1 || p * p <= n {
            break;
        }
        out.push(p);
        n /= p;
        primes.pop();
    }
    let left = k - out.len();
    let nprimes: usize = primes.iter().map(|&(_, c)| c as usize).sum();
    if nprimes <= left {
        for &(p, c) in primes.iter().rev() {
            out.extend(std::iter::repeat_n(p, c as usize));
        }
        out.resize(k, 1);
        return out;
    }
    if left == 1 {
        out.push(n);
        return out;
    }
    if let [(p, c)] = primes[..] {
        let base = out.len();
        out.resize(k, 1);
        for i in 0..c as usize {
            out[base + i % left] *= p;
        }
        return out;
    }
    if primes.iter().all(|&(_, c)| c as usize % left == 0) {
        let d: u64 = primes.iter().map(|&(p, c)| p.pow(c / left as u32)).product();
        out.resize(k, d);
        return out;
    }
    let mut divisors = vec![1u64];
    for &(p, c) in &primes {
        let len = divisors.len();
        let mut pk = 1;
        for _ in 0..c {
            pk *= p;
            for i in 0..len {
                divisors.push(divisors[i] * pk);
            }
        }
    }
    divisors.sort_unstable();
    let mut s = Search { divisors: &divisors, smallest_first: Vec::with_capacity(left), best: None };
    s.run(n, left, 1);
    let (_, mut best) = s.best.expect("1 x ... x 1 x n always completes");
    best.reverse();
    out.extend(best);
    out
}

/// Depth-first search of [`balanced_factors`]: dimensions are chosen from the smallest up.
struct Search<'a> {
    divisors: &'a [u64],
    /// The dimensions chosen so far, smallest first.
    smallest_first: Vec<u64>,
    /// (spread, dimensions smallest first) of the best complete choice.
    best: Option<(u64, Vec<u64>)>,
}

impl Search<'_> {
    /// Chooses the remaining `m` (at least 2) dimensions, each at least `lo`, of product `rem`.
    fn run(&mut self, rem: u64, m: usize, lo: u64) {
        let divisors = self.divisors;
        let start = divisors.partition_point(|&d| d < lo);
        if m == 2 {
            // The most even pair: the largest divisor d >= lo with d * d <= rem.
            let Some(&d) = divisors[start..].iter().take_while(|&&d| d * d <= rem).filter(|&&d| rem % d == 0).last() else {
                return;
            };
            let smallest = self.smallest_first.first().copied().unwrap_or(d);
            let spread = rem / d - smallest;
            if self.best.as_ref().is_none_or(|(b, _)| spread <= *b) {
                let mut v = self.smallest_first.clone();
                v.push(d);
                v.push(rem / d);
                self.best = Some((spread, v));
            }
            return;
        }
        for &d in &divisors[start..] {
            // d^m <= rem: the m - 1 dimensions after d are at least d.
            if d.checked_pow(m as u32).is_none_or(|p| p > rem) {
                break;
            }
            if let (Some(&s), Some((b, _))) = (self.smallest_first.first(), &self.best) {
                if d - s > *b {
                    break; // the largest dimension would be at least d
                }
            }
            if rem % d != 0 {
                continue;
            }
            self.smallest_first.push(d);
            self.run(rem / d, m - 1, d);
            self.smallest_first.pop();
        }
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
        assert_eq!(dc(5040, &[0, 0, 0]), [21, 16, 15]);
        assert_eq!(dc(735134400, &[0; 10]), [17, 13, 11, 8, 7, 6, 6, 6, 5, 5]);
        assert_eq!(dc(1 << 30, &[0; 7]), [32, 32, 16, 16, 16, 16, 16]);
        assert_eq!(dc(i32::MAX, &[0, 0, 0]), [i32::MAX, 1, 1]);
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
