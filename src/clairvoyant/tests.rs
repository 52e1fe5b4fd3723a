//! The paper's worked example, and the property test: on random instances the two generators
//! agree and every schedule is a correct reduction.
use super::pattern::{draw, Pattern, Rng};
use super::*;

fn example() -> Problem {
    // Proficz & Ocetkiewicz 2021 section 4.2: arrivals 0, 0, 0, 1.1, root 0, d = 1 (times x10).
    Problem { arrivals: vec![0, 0, 0, 11], root: 0, segments: 4, round: 10, holds: Vec::new() }
}

#[test]
fn paper_example() {
    let pb = example();
    let s = segtree::schedule(&pb);
    assert_eq!(s, linear::schedule(&pb));
    assert_eq!(s.rounds(), 6);
    assert_eq!(s.transfers.len(), 15);
    assert_eq!(s.transfers.iter().filter(|t| t.copy).count(), 3);
    // Round 1 with P': p2->p0:s0, p3->p1:s1, p0->p2:s2, p1->p3:s2.
    let r1: Vec<_> = s.transfers.iter().filter(|t| t.round == 1).map(|t| (t.from, t.to, t.seg)).collect();
    assert_eq!(r1, [(2, 0, 0), (3, 1, 1), (0, 2, 2), (1, 3, 2)]);
    verify(&s, 4, 4, 0).unwrap();
}

#[test]
fn idle_rounds_are_skipped() {
    let pb = Problem { arrivals: vec![0, 1000, 2000, 3000], root: 0, segments: 1, round: 1, holds: Vec::new() };
    let s = segtree::schedule(&pb);
    assert_eq!(s, linear::schedule(&pb));
    let rounds: Vec<_> = s.transfers.iter().map(|t| t.round).collect();
    assert_eq!(rounds, [1000, 2000, 3000]);
}

#[test]
fn balanced_arrivals_move_the_minimum() {
    for p in 1..40 {
        for n in 1..9 {
            let pb = Problem { arrivals: vec![0; p], root: p / 2, segments: n, round: 1, holds: Vec::new() };
            let s = segtree::schedule(&pb);
            verify(&s, p, n, p / 2).unwrap();
            if p > 1 {
                assert_eq!(s.transfers.len(), p * n - 1, "p={p} n={n}");
            }
        }
    }
}

#[test]
fn generators_agree_on_random_instances() {
    let mut rng = Rng(0x5eed);
    for i in 0..6000 {
        let p = 1 + rng.below(if i % 10 == 0 { 128 } else { 24 }) as usize;
        let n = 1 + rng.below(if i % 7 == 0 { 128 } else { 12 }) as usize;
        let pb = match i % 4 {
            0 => draw(Pattern::Uniform, p, n, None, None, &mut rng),
            1 => draw(Pattern::Skewed, p, n, None, None, &mut rng),
            // Equal and integer arrivals: ties everywhere.
            2 => Problem { arrivals: vec![rng.below(3) as i64; p], root: rng.below(p as u64) as usize, segments: n, round: 1 + rng.below(3) as i64, holds: Vec::new() },
            _ => Problem {
                arrivals: (0..p).map(|_| rng.below(8) as i64).collect(),
                root: rng.below(p as u64) as usize,
                segments: n,
                round: 1 + rng.below(4) as i64,
                holds: Vec::new(),
            },
        };
        pb.check().unwrap();
        let s = segtree::schedule(&pb);
        assert_eq!(s, linear::schedule(&pb), "instance {i}: {pb:?}");
        verify(&s, p, n, pb.root).unwrap_or_else(|e| panic!("instance {i}: {pb:?}: {e}"));
    }
}

#[test]
fn verify_rejects_a_broken_schedule() {
    let pb = example();
    let mut s = segtree::schedule(&pb);
    s.transfers.pop();
    assert!(verify(&s, 4, 4, 0).is_err());
    let mut s = segtree::schedule(&pb);
    s.transfers[0].seg = 3;
    assert!(verify(&s, 4, 4, 0).is_err());
}
