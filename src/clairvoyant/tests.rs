//! The paper's worked example, and the property tests: on random instances the generators
//! agree (`holders`, in use, against `segtree`, its oracle, and `linear`) and every schedule is a
//! correct reduction.
use super::pattern::{draw, Pattern, Rng};
use super::*;

fn example() -> Problem {
    // Proficz & Ocetkiewicz 2021 section 4.2: arrivals 0, 0, 0, 1.1, root 0, d = 1 (times x10).
    Problem { arrivals: vec![0, 0, 0, 11], root: 0, segments: 4, round: 10, holds: Vec::new() }
}

#[test]
fn paper_example() {
    let pb = example();
    let s = holders::schedule(&pb);
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
    let s = holders::schedule(&pb);
    assert_eq!(s, linear::schedule(&pb));
    let rounds: Vec<_> = s.transfers.iter().map(|t| t.round).collect();
    assert_eq!(rounds, [1000, 2000, 3000]);
}

#[test]
fn balanced_arrivals_move_the_minimum() {
    for p in 1..40 {
        for n in 1..9 {
            let pb = Problem { arrivals: vec![0; p], root: p / 2, segments: n, round: 1, holds: Vec::new() };
            let s = holders::schedule(&pb);
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
        let s = holders::schedule(&pb);
        assert_eq!(s, linear::schedule(&pb), "instance {i}: {pb:?}");
        assert_eq!(s, segtree::schedule(&pb), "instance {i}: {pb:?}");
        verify(&s, p, n, pb.root).unwrap_or_else(|e| panic!("instance {i}: {pb:?}: {e}"));
    }
}

/// A random problem for the oracle test: P up to `max_p`, random N, and arrivals drawn from the
/// paper's patterns, from a few integer values (ties everywhere), or spread over a range narrower
/// or wider than the round (idle rounds); with `holdings`, random holdings as a re-plan has them.
fn random_problem(rng: &mut Rng, max_p: u64, holdings: bool) -> Problem {
    let p = 1 + rng.below(max_p) as usize;
    let big = rng.below(4) == 0;
    let n = 1 + rng.below(if big { 300 } else { 70 }) as usize;
    let root = rng.below(p as u64) as usize;
    let round = 1 + rng.below(6) as i64;
    let mut pb = match rng.below(5) {
        0 => draw(Pattern::Uniform, p, n, None, None, rng),
        1 => draw(Pattern::Skewed, p, n, None, None, rng),
        2 => Problem { arrivals: (0..p).map(|_| rng.below(4) as i64).collect(), root, segments: n, round, holds: Vec::new() },
        3 => Problem { arrivals: (0..p).map(|_| rng.below(40) as i64 - 20).collect(), root, segments: n, round, holds: Vec::new() },
        _ => Problem { arrivals: (0..p).map(|_| rng.below(10_000) as i64).collect(), root, segments: n, round: 1 + rng.below(300) as i64, holds: Vec::new() },
    };
    if holdings {
        let w = n.div_ceil(64);
        let density = 1 + rng.below(4);
        pb.holds = (0..p * w).map(|_| (0..density).fold(u64::MAX, |a, _| a & rng.next())).collect();
        for x in 0..p {
            if n % 64 != 0 {
                pb.holds[x * w + w - 1] &= (1u64 << (n % 64)) - 1;
            }
        }
    }
    pb.check().unwrap();
    pb
}

#[test]
fn holders_matches_the_segment_tree_oracle() {
    let mut rng = Rng(0x0ac1e);
    for i in 0..1500 {
        let pb = random_problem(&mut rng, if i % 25 == 0 { 512 } else { 48 }, false);
        let s = holders::schedule(&pb);
        assert_eq!(s, segtree::schedule(&pb), "instance {i}: {pb:?}");
        verify(&s, pb.arrivals.len(), pb.segments, pb.root).unwrap_or_else(|e| panic!("instance {i}: {pb:?}: {e}"));
    }
}

#[test]
fn holders_matches_the_oracle_from_any_holdings() {
    let mut rng = Rng(0x401d5);
    for i in 0..1500 {
        let pb = random_problem(&mut rng, if i % 25 == 0 { 512 } else { 48 }, true);
        assert_eq!(holders::schedule(&pb), segtree::schedule(&pb), "instance {i}: {pb:?}");
    }
}

/// P and N both drawn from 2..=300 (the random instances above are mostly small), every arrival
/// shape of `random_problem`: the generator in use against the segment-tree oracle, transfer for
/// transfer (so the same rounds and the same cost).
#[test]
fn holders_matches_the_oracle_up_to_300() {
    let mut rng = Rng(0x300);
    for i in 0..160 {
        let mut pb = random_problem(&mut rng, 299, false);
        let p = 2 + rng.below(299) as usize;
        let n = 2 + rng.below(299) as usize;
        let old = pb.arrivals.len();
        pb.arrivals = (0..p).map(|x| pb.arrivals[x % old] + (x / old) as i64 * (1 + rng.below(3) as i64)).collect();
        pb.root %= p;
        pb.segments = n;
        pb.check().unwrap();
        let s = holders::schedule(&pb);
        let o = segtree::schedule(&pb);
        assert_eq!(s.rounds(), o.rounds(), "instance {i}: P={p} N={n}");
        assert_eq!(s, o, "instance {i}: P={p} N={n}: {pb:?}");
        verify(&s, p, n, pb.root).unwrap_or_else(|e| panic!("instance {i}: P={p} N={n}: {e}"));
    }
}

/// The fixed holder-set widths (`holders::schedule` pads to 1, 2, 4, ... 64 words) against the
/// segment-tree oracle and the unpadded path, across every width and its edges (P = 64k and
/// 64k + 1), with few segments so that the oracle stays quick at 4097 processes.
#[test]
fn holders_widths_match_the_oracle() {
    let mut rng = Rng(0x81d7);
    for (i, &p) in [1usize, 63, 64, 65, 128, 129, 200, 256, 257, 511, 512, 513, 1024, 1025, 1500, 2048, 2049, 4096, 4097].iter().enumerate() {
        let mut pb = random_problem(&mut rng, 64, false);
        let old = pb.arrivals.len();
        pb.arrivals = (0..p).map(|x| pb.arrivals[x % old] + (x / old) as i64 * (1 + rng.below(3) as i64)).collect();
        pb.root = rng.below(p as u64) as usize;
        pb.segments = 1 + rng.below(if p > 1100 { 6 } else { 40 }) as usize;
        pb.check().unwrap();
        let s = holders::schedule(&pb);
        assert_eq!(s, holders::schedule_any_width(&pb), "instance {i}: P={p}");
        assert_eq!(s, segtree::schedule(&pb), "instance {i}: P={p}");
        verify(&s, p, pb.segments, pb.root).unwrap_or_else(|e| panic!("instance {i}: P={p}: {e}"));
    }
}

/// The AVX2 build of the generator (where this CPU has it) against the portable one and the
/// segment-tree oracle, over every holder-set width up to 1024 processes, fresh and partial
/// holdings.
#[test]
fn holders_builds_agree() {
    let mut rng = Rng(0xa7c2);
    for i in 0..400 {
        let mut pb = random_problem(&mut rng, if i % 20 == 0 { 1024 } else { 300 }, i % 3 == 0);
        if i % 3 != 0 && i % 4 == 0 {
            pb.segments = 1 + rng.below(260) as usize;
        }
        let s = holders::schedule_portable(&pb);
        #[cfg(target_arch = "x86_64")]
        if let Some(a) = holders::schedule_avx2(&pb) {
            assert_eq!(a, s, "instance {i}: {pb:?}");
        }
        assert_eq!(s, holders::schedule(&pb), "instance {i}");
        if pb.arrivals.len() <= 300 {
            assert_eq!(s, segtree::schedule(&pb), "instance {i}: {pb:?}");
        }
    }
}

#[test]
fn verify_rejects_a_broken_schedule() {
    let pb = example();
    let mut s = holders::schedule(&pb);
    s.transfers.pop();
    assert!(verify(&s, 4, 4, 0).is_err());
    let mut s = holders::schedule(&pb);
    s.transfers[0].seg = 3;
    assert!(verify(&s, 4, 4, 0).is_err());
}

/// The generator in use against the previous one (`holders_v1`, the reference it was rewritten
/// from), transfer for transfer: random patterns of every shape in `random_problem`, fresh and
/// partial holdings, sizes up to P = 1100 and N = 300, and a few P = N = 512 and 1024 instances of
/// the benchmark's patterns.
#[test]
fn holders_matches_the_previous_generator() {
    let mut rng = Rng(0x71c2);
    for i in 0..1200 {
        let mut pb = random_problem(&mut rng, if i % 40 == 0 { 1100 } else if i % 4 == 0 { 300 } else { 64 }, i % 3 == 0);
        if i % 5 == 4 && pb.holds.is_empty() {
            pb.segments = 1 + rng.below(300) as usize;
        }
        let s = holders::schedule(&pb);
        assert_eq!(s, holders_v1::schedule(&pb), "instance {i}: {pb:?}");
        assert_eq!(s, holders::schedule_portable(&pb), "instance {i}");
    }
    for (i, &p) in [512usize, 512, 1024, 1024].iter().enumerate() {
        let pat = if i % 2 == 0 { Pattern::Uniform } else { Pattern::Skewed };
        let pb = draw(pat, p, p, None, None, &mut rng);
        let s = holders::schedule(&pb);
        assert_eq!(s, holders_v1::schedule(&pb), "P=N={p} {pat:?}");
        verify(&s, p, p, pb.root).unwrap();
    }
}
