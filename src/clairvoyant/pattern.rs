//! Random arrival patterns for tests and benchmarks, per the protocol of Proficz & Ocetkiewicz
//! 2021 section 5.7: uniform (a_i ~ U[0, P + 0.1], random root) and skewed (all 0 but
//! a_{P-1} = N, root 0), with d ~ U[0.001, 1]. Times are in units of `UNIT` per paper time unit.
use super::Problem;

/// Integer time units per paper time unit.
pub const UNIT: i64 = 1_000_000;

/// A small deterministic generator (SplitMix64), so patterns are reproducible from a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The two patterns of section 5.7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Uniform,
    Skewed,
}

/// A problem of `procs` processes and `segments` segments drawn with `pattern`; `root` and
/// `round` (in `UNIT`s) are drawn as the protocol says when not given.
pub fn draw(pattern: Pattern, procs: usize, segments: usize, root: Option<usize>, round: Option<i64>, rng: &mut Rng) -> Problem {
    let arrivals = match pattern {
        Pattern::Uniform => (0..procs).map(|_| (rng.unit() * (procs as f64 + 0.1) * UNIT as f64) as i64).collect(),
        Pattern::Skewed => (0..procs).map(|p| if p + 1 == procs && procs > 1 { segments as i64 * UNIT } else { 0 }).collect(),
    };
    let root = root.unwrap_or_else(|| match pattern {
        Pattern::Uniform => rng.below(procs as u64) as usize,
        Pattern::Skewed => 0,
    });
    let round = round.unwrap_or_else(|| ((0.001 + rng.unit() * 0.999) * UNIT as f64).max(1.0) as i64);
    Problem { arrivals, root, segments, round, holds: Vec::new() }
}
