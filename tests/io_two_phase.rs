//! Collective buffering (`io::two_phase`) end to end: N ranks, each a `Universe` over one
//! anonymous job segment, write and read one real file together, and the file's bytes are
//! checked against a reference built from the run lists.
//!
//! Both rank modes: threads (the ranks are threads of this test process, as in threads mode)
//! and processes (the ranks are forked children sharing the segment, talking through it and
//! CMA, as mpiexec's processes do). Patterns: interleaved elements, strided 2-D blocks, random
//! runs overlapping across ranks with empty ranks, offsets past 4 GiB, many 1-byte runs,
//! contiguous blocks (independent under `Automatic`), all ranks empty; hints from 7-byte
//! buffers (hundreds of rounds) to 1 MiB, one to N aggregators, aligned domains, and
//! Enable/Automatic/Disable. The file holds older bytes first, which holes must keep.
use oxmpi::coll::Coll;
use oxmpi::comm::Universe;
use oxmpi::error::ErrorClass;
use oxmpi::io::backend::{Backend, OpenMode, Posix};
use oxmpi::io::cb_hints::{CbHints, CbMode};
use oxmpi::io::two_phase::{self, Options};
use oxmpi::p2p::Engine;
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::wait::WaitPolicy;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The byte rank `r` writes at file offset `off`.
fn byte(r: usize, off: u64) -> u8 {
    (((off.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 29) as u8) ^ (r as u8).wrapping_mul(37).wrapping_add(1)
}
/// The byte the file held before the collective write.
fn old(off: u64) -> u8 {
    (off % 251) as u8 ^ 0x5A
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// One collective write and read-back: every rank's runs, the older content [pre.0, pre.1).
struct Case {
    name: String,
    runs: Vec<Vec<(u64, u64)>>,
    pre: (u64, u64),
}

fn cyclic(n: usize, base: u64, elem: u64, count: u64) -> Vec<Vec<(u64, u64)>> {
    (0..n).map(|r| (0..count).filter(|i| i % n as u64 == r as u64).map(|i| (base + i * elem, elem)).collect()).collect()
}

/// A `rows` x `cols` array of `elem`-byte elements in row-major order, split into a grid of
/// blocks, one per rank (ranks beyond the grid are empty).
fn blocks2d(n: usize, rows: u64, cols: u64, elem: u64) -> Vec<Vec<(u64, u64)>> {
    let pc = if n >= 4 { 2 } else { 1 };
    let pr = (n / pc) as u64;
    let pc = pc as u64;
    (0..n as u64)
        .map(|r| {
            if r >= pr * pc {
                return vec![];
            }
            let (br, bc) = (r / pc, r % pc);
            let (r0, r1) = (rows * br / pr, rows * (br + 1) / pr);
            let (c0, c1) = (cols * bc / pc, cols * (bc + 1) / pc);
            (r0..r1).map(|row| ((row * cols + c0) * elem, (c1 - c0) * elem)).collect()
        })
        .collect()
}

fn cases(n: usize) -> Vec<Case> {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1 ^ n as u64);
    let mut v = vec![
        Case { name: "cyclic".into(), runs: cyclic(n, 0, 3, 700), pre: (0, 1500) },
        Case { name: "blocks2d".into(), runs: blocks2d(n, 24, 20, 4), pre: (100, 900) },
        Case { name: "past4GiB".into(), runs: cyclic(n, (5 << 30) + 17, 5, 400), pre: ((5 << 30) + 100, (5 << 30) + 600) },
        Case { name: "tiny".into(), runs: cyclic(n, 1, 1, 1500), pre: (0, 2000) },
        Case { name: "contiguous".into(), runs: (0..n as u64).map(|r| vec![(r * 1000, 1000)]).collect(), pre: (0, 0) },
        Case { name: "empty".into(), runs: vec![vec![]; n], pre: (0, 10) },
    ];
    // Random runs overlapping across ranks; every third rank empty.
    let runs = (0..n)
        .map(|r| {
            if r % 3 == 2 {
                return vec![];
            }
            let mut at = rng.below(50);
            (0..1 + rng.below(60)).collect::<Vec<_>>().into_iter()
                .map(|_| {
                    at += rng.below(40);
                    let cap = if rng.below(5) == 0 { 300 } else { 12 };
                    let l = 1 + rng.below(cap);
                    let x = (at, l);
                    at += l;
                    x
                })
                .collect()
        })
        .collect();
    v.push(Case { name: "random-overlap".into(), runs, pre: (0, 700) });
    v
}

/// Hints and striping units the cases run under.
fn variants(n: usize) -> Vec<(CbHints, u64)> {
    let h = |buffer_size, nodes, mode| CbHints { buffer_size, nodes, read: mode, write: mode };
    vec![
        (h(7, 0, CbMode::Enable), 0),
        (h(64, 2, CbMode::Enable), 16),
        (h(4096, n, CbMode::Automatic), 0),
        (h(1 << 20, 1, CbMode::Disable), 0),
        (h(1000, 3, CbMode::Enable), 0),
    ]
}

/// What every rank does; returns a description of the first mismatch.
fn rank_main(u: &Universe, path: &str) -> Result<(), String> {
    let n = u.size;
    let me = u.rank;
    let barrier = || oxmpi::coll::barrier::barrier(&Coll::next(u, &u.world)).map_err(|e| format!("barrier: {e:?}"));
    let mode = OpenMode { read: true, write: true, create: true, exclusive: false };
    oxmpi::monitoring::hold_rank(me, n, true);
    for case in cases(n) {
        for (vi, (hints, stripe)) in variants(n).into_iter().enumerate() {
            let what = format!("{} ranks, case {}, variant {vi}", n, case.name);
            if me == 0 {
                let f = Posix::open(path, mode).map_err(|e| format!("{what}: open: {e}"))?;
                f.set_size(0).unwrap();
                let pre: Vec<u8> = (case.pre.0..case.pre.1).map(old).collect();
                f.write_at(&pre, case.pre.0).unwrap();
            }
            barrier()?;
            let f = Posix::open(path, mode).map_err(|e| format!("{what}: open: {e}"))?;
            let runs = &case.runs[me];
            let data: Vec<u8> = runs.iter().flat_map(|&(o, l)| (o..o + l).map(|x| byte(me, x))).collect();
            let opt = Options { lock: None, striping_unit: stripe };
            let row = oxmpi::monitoring::row(me, n);
            let sent = || (0..n).map(|p| row.bytes(oxmpi::monitoring::Kind::Coll, p)).sum::<u64>();
            let before = sent();
            two_phase::write_all_with(u, &u.world, &f, runs, &data, &hints, opt).map_err(|e| format!("{what}: write_all: {e:?}"))?;
            // With two-phase forced, the data reached the aggregators as collective transfers.
            if hints.write == CbMode::Enable && sent() < before + data.len() as u64 {
                return Err(format!("{what}: the monitoring saw {} collective bytes sent for {} bytes of data", sent() - before, data.len()));
            }
            barrier()?;
            // Every rank checks the whole touched range: each byte is one of its writers' or,
            // with no writer, the older byte (or zero in a hole past the older content).
            let lo = case.runs.iter().flatten().map(|r| r.0).min().unwrap_or(0).min(case.pre.0);
            let hi = case.runs.iter().flatten().map(|r| r.0 + r.1).max().unwrap_or(0).max(case.pre.1);
            if f.size().unwrap() != hi {
                return Err(format!("{what}: file size {} instead of {hi}", f.size().unwrap()));
            }
            let mut img = vec![0u8; (hi - lo) as usize];
            f.read_at(&mut img, lo).unwrap();
            for (i, &b) in img.iter().enumerate() {
                let off = lo + i as u64;
                let writers: Vec<usize> = (0..n).filter(|&r| case.runs[r].iter().any(|&(o, l)| o <= off && off < o + l)).collect();
                let ok = if writers.is_empty() {
                    b == if off >= case.pre.0 && off < case.pre.1 { old(off) } else { 0 }
                } else {
                    writers.iter().any(|&r| byte(r, off) == b)
                };
                if !ok {
                    return Err(format!("{what}: byte {off} is {b}, writers {writers:?}"));
                }
            }
            // Read back this rank's runs, then the same runs moved to straddle the end.
            let mut back = vec![0u8; data.len()];
            let got = two_phase::read_all_with(u, &u.world, &f, runs, &mut back, &hints, opt).map_err(|e| format!("{what}: read_all: {e:?}"))?;
            if got != data.len() {
                return Err(format!("{what}: read_all counted {got} of {}", data.len()));
            }
            for (k, (&(o, l), at)) in runs.iter().zip(runs.iter().scan(0usize, |a, r| { let x = *a; *a += r.1 as usize; Some(x) })).enumerate() {
                if back[at..at + l as usize] != img[(o - lo) as usize..(o - lo + l) as usize] {
                    return Err(format!("{what}: read_all run {k} at {o} differs from the file"));
                }
            }
            let shift = hi - lo - (hi - lo) / 3;
            let late: Vec<(u64, u64)> = runs.iter().map(|&(o, l)| (o + shift, l)).collect();
            let expect: u64 = late.iter().map(|&(o, l)| hi.saturating_sub(o).min(l)).sum();
            back.fill(0xA5);
            let got = two_phase::read_all_with(u, &u.world, &f, &late, &mut back, &hints, opt).map_err(|e| format!("{what}: read_all late: {e:?}"))?;
            if got as u64 != expect {
                return Err(format!("{what}: read_all past the end counted {got}, not {expect}"));
            }
            // Bytes past the end are left as they were, as an independent read leaves them.
            let mut at = 0usize;
            for &(o, l) in &late {
                for k in 0..l {
                    if o + k >= hi && back[at + k as usize] != 0xA5 {
                        return Err(format!("{what}: read_all wrote byte {} past the end of the file", o + k));
                    }
                }
                at += l as usize;
            }
            barrier()?;
        }
    }
    // A rank with bad runs fails the call on every rank, with the same class, before any I/O.
    let f = Posix::open(path, mode).unwrap();
    let bad: Vec<(u64, u64)> = if me == n - 1 { vec![(10, 2), (0, 1)] } else { vec![(me as u64 * 4, 4)] };
    let data = vec![1u8; bad.iter().map(|r| r.1 as usize).sum()];
    match two_phase::write_all(u, &u.world, &f, &bad, &data, &CbHints::default()) {
        Err(e) if e.class == ErrorClass::Arg => {}
        other => return Err(format!("bad runs on rank {}: {other:?}", n - 1)),
    }
    barrier()
}

fn temp(name: &str) -> String {
    std::env::temp_dir().join(format!("oxmpi-two-phase-{}-{name}", std::process::id())).to_string_lossy().into_owned()
}

fn universe(seg: &Arc<Segment>, r: usize, threads: bool) -> Universe {
    let n = seg.nranks();
    seg.rank(r).pid.store(std::process::id() as i32, Ordering::Release);
    let e = Engine::new(seg.clone(), r, WaitPolicy::choose(n));
    e.set_local_peers(threads);
    Universe::new(seg.clone(), r, (0..seg.nranks()).collect(), e, 0)
}

fn threads_job(n: usize) {
    let path = temp(&format!("threads{n}"));
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    let ts: Vec<_> = (0..n)
        .map(|r| {
            let (seg, path) = (seg.clone(), path.clone());
            std::thread::spawn(move || {
                let res = std::panic::catch_unwind(|| rank_main(&universe(&seg, r, true), &path));
                if let Some(e) = match res {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(e),
                    Err(_) => Some("panicked".to_string()),
                } {
                    // The other ranks would wait for this one forever: end the test here.
                    let msg = format!("threads mode, rank {r}: {e}\n");
                    // SAFETY: writing a live buffer to fd 2 (the test harness captures eprintln).
                    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
                    let _ = std::fs::remove_file(&path);
                    std::process::exit(1);
                }
            })
        })
        .collect();
    ts.into_iter().for_each(|t| t.join().unwrap());
    let _ = std::fs::remove_file(&path);
}

fn processes_job(n: usize) {
    let path = temp(&format!("procs{n}"));
    let seg = Arc::new(Segment::anonymous(n, oxmpi::transport::shm::geometry(n)).unwrap());
    let pids: Vec<i32> = (0..n)
        .map(|r| {
            // SAFETY: the child runs only this rank's work on memory it inherited, reports
            // through its exit status and a raw write to stderr, and never returns.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let res = std::panic::catch_unwind(|| rank_main(&universe(&seg, r, false), &path));
                let (code, msg) = match res {
                    Ok(Ok(())) => (0, String::new()),
                    Ok(Err(e)) => (1, format!("processes mode, rank {r}: {e}\n")),
                    Err(_) => (2, format!("processes mode, rank {r}: panicked\n")),
                };
                // SAFETY: writing a live buffer to fd 2, then leaving without unwinding.
                unsafe {
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                    libc::_exit(code);
                }
            }
            assert!(pid > 0, "fork failed");
            pid
        })
        .collect();
    // The first rank to fail leaves the others waiting for it: stop them.
    let mut failed = vec![];
    for _ in 0..n {
        let mut status = 0;
        // SAFETY: waiting for any of our own children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        let r = pids.iter().position(|&p| p == pid);
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            failed.push(r);
            for &p in &pids {
                // SAFETY: signalling a child of ours (already gone ones ignore it).
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
    }
    let _ = std::fs::remove_file(&path);
    assert!(failed.is_empty(), "processes mode, {n} ranks: ranks {failed:?} failed (their messages are on stderr)");
}

/// The monitoring's counters of a rank are sized by the first job of the process that uses
/// them: make that the largest, before any thread or child starts.
fn size_monitoring() {
    for r in 0..8 {
        let _ = oxmpi::monitoring::row(r, 8);
    }
}

/// One test for both modes, processes first: forking while other test threads run could copy
/// a lock some thread holds.
#[test]
fn processes_then_threads_1_2_3_4_8_ranks() {
    size_monitoring();
    for n in [1, 2, 3, 4, 8] {
        processes_job(n);
    }
    for n in [1, 2, 3, 4, 8] {
        threads_job(n);
    }
}
