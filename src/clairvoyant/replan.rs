//! Taking a reduction over mid-way (issue 21, live arrivals): when ranks the schedule expected
//! have not arrived, the ranks that did stop following the stale schedule and follow a new one,
//! built for the ranks not yet arrived (the `late` set) from what every process holds at that
//! point. Every rank must reach the same verdict without talking, so the point is not a moment
//! in time but the *cut*: how far the old schedule can go when the late ranks never take part.
//!
//! The model of execution the cut rests on (`coll::clairvoyant_exec` runs it): a rank walks its
//! steps in order; at each it posts its send and its receive at once, and the step completes when
//! the receive does (sends never hold a rank back: a send whose receiver stops before it is
//! received at the cut by that receiver, an *orphan*). So with `pos[p]` the index of the first
//! step of p that does not complete,
//! * p (not late) has posted the sends of steps `0..=pos[p]`;
//! * step i of p completes iff its receive's sender is not late and has reached the matching
//!   step (`pos[sender] >= that step`);
//!
//! and `pos` is the least fixed point of these rules (monotone, so iterating from 0 finds it).
//! Real execution never gets past the cut (what it did is a prefix of this), and everything up to
//! the cut completes without the late ranks, so every rank can finish the cut on its own: it
//! completes its steps up to `pos`, posts the send of step `pos`, cancels that step's receive,
//! and receives the orphans addressed to it. Then the holdings are those of the replayed posted
//! transfers, and the new schedule starts from them (`Problem::holds`).
use super::{Schedule, Transfer};

/// One rank's part of one round: what it receives and what it sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub round: u64,
    /// (from, segment, index of the transfer in the schedule)
    pub recv: Option<(usize, usize, usize)>,
    /// (to, segment, index of the transfer in the schedule)
    pub send: Option<(usize, usize, usize)>,
}

/// The steps of process `me` in `s`, in round order.
pub fn steps(s: &Schedule, me: usize) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for (i, t) in s.transfers.iter().enumerate().filter(|(_, t)| t.from as usize == me || t.to as usize == me) {
        if out.last().is_none_or(|x| x.round != t.round) {
            out.push(Step { round: t.round, ..Default::default() });
        }
        let st = out.last_mut().expect("pushed above");
        if t.to as usize == me {
            st.recv = Some((t.from as usize, t.seg as usize, i));
        } else {
            st.send = Some((t.to as usize, t.seg as usize, i));
        }
    }
    out
}

/// Where a schedule stops when the `late` processes take no part (module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Per process, the steps that complete; the process also posts the send of step `pos[p]`.
    pub pos: Vec<usize>,
    /// Holdings after the cut, as `Problem::holds` (bit columns).
    pub holds: Vec<u64>,
    /// Posted transfers whose receiver stops before them, in schedule order: each receiver takes
    /// its own after completing its steps.
    pub orphans: Vec<Transfer>,
}

/// The cut of `s` (on `procs` processes and `segments` segments, starting from holdings
/// `start`, bit columns) when the processes with `late[p]` never act.
pub fn cut(s: &Schedule, procs: usize, segments: usize, start: &[u64], late: &[bool]) -> Cut {
    let all: Vec<Vec<Step>> = (0..procs).map(|p| steps(s, p)).collect();
    // The step index of each transfer at its sender and at its receiver.
    let mut at_sender = vec![0usize; s.transfers.len()];
    let mut at_receiver = vec![0usize; s.transfers.len()];
    for st in &all {
        for (j, x) in st.iter().enumerate() {
            if let Some((_, _, t)) = x.send {
                at_sender[t] = j;
            }
            if let Some((_, _, t)) = x.recv {
                at_receiver[t] = j;
            }
        }
    }
    let mut pos = vec![0usize; procs];
    let mut moved = true;
    while moved {
        moved = false;
        for p in (0..procs).filter(|&p| !late[p]) {
            while let Some(st) = all[p].get(pos[p]) {
                if let Some((from, _, t)) = st.recv {
                    if late[from] || pos[from] < at_sender[t] {
                        break;
                    }
                }
                pos[p] += 1;
                moved = true;
            }
        }
    }
    let w = segments.div_ceil(64);
    let mut holds = start.to_vec();
    let mut orphans = Vec::new();
    for (i, t) in s.transfers.iter().enumerate() {
        let (from, to, seg) = (t.from as usize, t.to as usize, t.seg as usize);
        if late[from] || pos[from] < at_sender[i] {
            continue;
        }
        holds[from * w + seg / 64] &= !(1 << (seg % 64));
        holds[to * w + seg / 64] |= 1 << (seg % 64);
        if late[to] || pos[to] <= at_receiver[i] {
            orphans.push(*t);
        }
    }
    Cut { pos, holds, orphans }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clairvoyant::pattern::Rng;
    use crate::clairvoyant::{holders, linear, segtree, start_columns, Problem};

    /// Contribution sets (one bit per process), per (process, segment).
    type Sets = Vec<Vec<u128>>;

    fn fresh(procs: usize, segments: usize) -> Sets {
        (0..procs).map(|p| vec![1u128 << p; segments]).collect()
    }

    /// Moves the contributions of transfer `t` (the receiver must hold none of them).
    fn apply(h: &mut Sets, t: &Transfer) {
        let (z, q, s) = (t.from as usize, t.to as usize, t.seg as usize);
        let x = std::mem::take(&mut h[z][s]);
        assert!(x != 0, "{t:?}: the sender holds nothing");
        assert_eq!(h[q][s] & x, 0, "{t:?}: a contribution combined twice");
        h[q][s] |= x;
    }

    /// Runs the cut of `old` (from sets `h`) as the ranks would: the posted transfers.
    fn run_cut(h: &mut Sets, old: &Schedule, c: &Cut, late: &[bool]) {
        let procs = h.len();
        let all: Vec<Vec<Step>> = (0..procs).map(|p| steps(old, p)).collect();
        for (i, t) in old.transfers.iter().enumerate() {
            let z = t.from as usize;
            let j = all[z].iter().position(|st| st.send.is_some_and(|x| x.2 == i)).unwrap();
            if !late[z] && c.pos[z] >= j {
                apply(h, t);
            }
        }
    }

    #[test]
    fn a_reduction_taken_over_at_any_cut_ends_exact() {
        let mut rng = Rng(21);
        for i in 0..400 {
            let procs = 2 + rng.below(9) as usize;
            let segments = 1 + rng.below(70) as usize;
            let root = rng.below(procs as u64) as usize;
            let round = 1 + rng.below(4) as i64;
            let mut pb = Problem { arrivals: (0..procs).map(|_| rng.below(12) as i64).collect(), root, segments, round, holds: Vec::new() };
            let mut sets = fresh(procs, segments);
            let mut sched = holders::schedule(&pb);
            // Up to three takeovers, each with its own late set, then the last schedule to the end.
            for _ in 0..1 + rng.below(3) {
                let late: Vec<bool> = (0..procs).map(|_| rng.below(3) == 0).collect();
                let c = cut(&sched, procs, segments, &start_columns(&pb), &late);
                run_cut(&mut sets, &sched, &c, &late);
                // The holdings the cut reports are those of the sets.
                for p in 0..procs {
                    for s in 0..segments {
                        let bit = c.holds[p * segments.div_ceil(64) + s / 64] >> (s % 64) & 1 == 1;
                        assert_eq!(bit, sets[p][s] != 0, "instance {i}: process {p} segment {s}");
                    }
                }
                pb = Problem { arrivals: (0..procs).map(|p| if late[p] { rng.below(12) as i64 } else { 0 }).collect(), root, segments, round, holds: c.holds };
                pb.check().unwrap();
                sched = holders::schedule(&pb);
                assert_eq!(sched, linear::schedule(&pb), "instance {i}: the generators differ from holdings {pb:?}");
                assert_eq!(sched, segtree::schedule(&pb), "instance {i}: the generators differ from holdings {pb:?}");
            }
            for t in &sched.transfers {
                apply(&mut sets, t);
            }
            let all = (1u128 << procs) - 1;
            for p in 0..procs {
                for s in 0..segments {
                    assert_eq!(sets[p][s], if p == root { all } else { 0 }, "instance {i}: process {p} segment {s} at the end");
                }
            }
        }
    }

    #[test]
    fn nobody_late_runs_the_whole_schedule() {
        let pb = Problem { arrivals: vec![0, 3, 1, 7], root: 2, segments: 5, round: 2, holds: Vec::new() };
        let s = holders::schedule(&pb);
        let c = cut(&s, 4, 5, &start_columns(&pb), &[false; 4]);
        assert!(c.orphans.is_empty());
        for p in 0..4 {
            assert_eq!(c.pos[p], steps(&s, p).len());
        }
    }

    #[test]
    fn a_late_process_stops_what_depends_on_it() {
        // Process 3 late: nothing it would send happens, and what is sent to it waits as orphans.
        let pb = Problem { arrivals: vec![0, 0, 0, 0], root: 0, segments: 4, round: 1, holds: Vec::new() };
        let s = holders::schedule(&pb);
        let c = cut(&s, 4, 4, &start_columns(&pb), &[false, false, false, true]);
        assert_eq!(c.pos[3], 0);
        assert!(c.orphans.iter().all(|t| t.from != 3));
        assert!(c.orphans.iter().any(|t| t.to == 3) || s.transfers.iter().all(|t| t.to != 3));
        // Process 3 still holds all of its own contribution.
        assert_eq!(c.holds[3] & 0xf, 0xf);
    }
}
