//! Clairvoyant reduction schedules: which process sends which segment to whom in which round,
//! given every process's arrival time (process arrival pattern, PAP).
//!
//! Source: Marendic, Lemeire, Vucinic & Schelkens, "A novel MPI reduction algorithm resilient to
//! imbalances in process arrival times", J. Supercomputing 72 (2016), with the fixes and the
//! segment-tree generator of Proficz & Ocetkiewicz, "Improving Clairvoyant: reduction algorithm
//! resilient to imbalanced process arrival patterns", J. Supercomputing 77 (2021). The paper's
//! listings are lost; `docs/design/clairvoyant.md` reconstructs them. Choices made here, as
//! that note recommends: integer time, the half-open group window `[a_head, a_head + d)`, peers
//! ordered sink first then by (availability, rank), the P' state (a segment received in a round
//! is not forwarded in that round), idle-round skipping, and stop when every non-root process
//! has sent everything.
//!
//! `linear` is the plain version of the fixed pseudocode (the reference); `segtree` is the
//! paper's fast one (bit columns ORed in a segment tree, rebuilt every round), kept as a test
//! oracle; `holders` is the one in use (per-segment holder sets and holder counts that persist
//! from round to round). All three produce identical schedules.
pub mod cache;
pub mod estimate;
pub mod holders;
#[cfg(test)]
mod holders_v1;
pub mod linear;
pub mod pattern;
pub mod predict;
pub mod replan;
pub mod robust_fit;
pub mod segtree;

/// One transfer: in round `round`, `from` sends its partial result of segment `seg` to `to`,
/// which combines it into its own (or, when `copy`, stores it: `to` held nothing of `seg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transfer {
    pub round: u64,
    pub from: u32,
    pub to: u32,
    pub seg: u32,
    pub copy: bool,
}

/// A schedule: its transfers in generation order (rounds ascending).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Schedule {
    pub transfers: Vec<Transfer>,
}

impl Schedule {
    /// Round indices used: the last transfer's round + 1 (idle rounds skipped in the middle
    /// count, as they would pass in time).
    pub fn rounds(&self) -> u64 {
        self.transfers.last().map_or(0, |t| t.round + 1)
    }
}

/// A schedule request: arrival times `arrivals[p]` and round length `d` in one integer time
/// unit, the root, the segment count, and what each process holds at the start.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    pub arrivals: Vec<i64>,
    pub root: usize,
    pub segments: usize,
    pub round: i64,
    /// Empty: every process holds its own contribution of every segment (a fresh reduction).
    /// Else bit columns, `segments.div_ceil(64)` words per process: bit s of process p set when p
    /// holds a partial result of segment s (a reduction taken over mid-way, see `replan`).
    pub holds: Vec<u64>,
}

impl Problem {
    /// Checks the request; the message names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let p = self.arrivals.len();
        if p == 0 {
            return Err("no processes".into());
        }
        if p > u32::MAX as usize || self.segments > u32::MAX as usize {
            return Err("too many processes or segments".into());
        }
        if self.root >= p {
            return Err(format!("root {} is not below the process count {p}", self.root));
        }
        if self.segments == 0 {
            return Err("the segment count must be at least 1".into());
        }
        if self.round <= 0 {
            return Err(format!("the round length must be positive, not {}", self.round));
        }
        if !self.holds.is_empty() && self.holds.len() != p * self.segments.div_ceil(64) {
            return Err(format!("the holdings have {} words, not {}", self.holds.len(), p * self.segments.div_ceil(64)));
        }
        let (lo, hi) = (self.arrivals.iter().min().unwrap(), self.arrivals.iter().max().unwrap());
        if hi.checked_sub(*lo).and_then(|s| s.checked_add(2 * self.round)).is_none() {
            return Err("arrival times span too wide a range".into());
        }
        Ok(())
    }
}

/// The holdings at the start as bit columns (`Problem::holds`), every bit past the segment
/// count clear.
pub fn start_columns(pb: &Problem) -> Vec<u64> {
    let (p, n) = (pb.arrivals.len(), pb.segments);
    let w = n.div_ceil(64);
    if !pb.holds.is_empty() {
        return pb.holds.clone();
    }
    let mut col = vec![u64::MAX; p * w];
    if n % 64 != 0 {
        for x in 0..p {
            col[x * w + w - 1] = (1u64 << (n % 64)) - 1;
        }
    }
    col
}

/// Replays `s` on contribution sets and checks that every round has each process sending at
/// most once and receiving at most once, never forwarding what it received in that round,
/// combining disjoint sets (or copying into an empty cell), and that at the end the root holds
/// exactly one copy of every contribution of every segment and no one else holds anything.
pub fn verify(s: &Schedule, procs: usize, segments: usize, root: usize) -> Result<(), String> {
    let w = procs.div_ceil(64);
    // hold[(p * segments + seg) * w ..][..w]: the set of contributions p holds of seg.
    let mut hold = vec![0u64; procs * segments * w];
    for p in 0..procs {
        for seg in 0..segments {
            hold[(p * segments + seg) * w + p / 64] |= 1 << (p % 64);
        }
    }
    let cell = |p: usize, seg: usize| (p * segments + seg) * w;
    let mut i = 0;
    let t = &s.transfers;
    while i < t.len() {
        let r = t[i].round;
        let j = i + t[i..].iter().take_while(|x| x.round == r).count();
        let round = &t[i..j];
        let mut sent = std::collections::HashSet::new();
        let mut got = std::collections::HashSet::new();
        for x in round {
            if x.from as usize >= procs || x.to as usize >= procs || x.seg as usize >= segments || x.from == x.to {
                return Err(format!("round {r}: bad transfer {x:?}"));
            }
            if !sent.insert(x.from) || !got.insert(x.to) {
                return Err(format!("round {r}: a process sends or receives twice ({x:?})"));
            }
        }
        let mut new = Vec::new();
        for x in round {
            let (z, q, seg) = (x.from as usize, x.to as usize, x.seg as usize);
            if round.iter().any(|y| y.to as usize == z && y.seg as usize == seg) {
                return Err(format!("round {r}: {z} forwards segment {seg} it receives in the same round"));
            }
            let (hz, hq) = (&hold[cell(z, seg)..][..w], &hold[cell(q, seg)..][..w]);
            if hz.iter().all(|&b| b == 0) {
                return Err(format!("round {r}: {z} sends segment {seg} it does not hold"));
            }
            let q_empty = hq.iter().all(|&b| b == 0);
            if x.copy != q_empty {
                return Err(format!("round {r}: {x:?} has the wrong mode"));
            }
            if hz.iter().zip(hq).any(|(a, b)| a & b != 0) {
                return Err(format!("round {r}: {x:?} combines a contribution twice"));
            }
            new.push((q, seg, hz.iter().zip(hq).map(|(a, b)| a | b).collect::<Vec<_>>()));
        }
        for x in round {
            hold[cell(x.from as usize, x.seg as usize)..][..w].fill(0);
        }
        for (q, seg, v) in new {
            hold[cell(q, seg)..][..w].copy_from_slice(&v);
        }
        i = j;
    }
    for p in 0..procs {
        for seg in 0..segments {
            let h = &hold[cell(p, seg)..][..w];
            let ok = if p == root {
                (0..procs).all(|k| h[k / 64] >> (k % 64) & 1 == 1)
            } else {
                h.iter().all(|&b| b == 0)
            };
            if !ok {
                return Err(format!("at the end process {p} holds the wrong contributions of segment {seg}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
