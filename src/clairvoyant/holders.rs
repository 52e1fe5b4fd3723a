//! The production generator: the same schedule as `segtree` (and `linear`), found with
//! word-parallel sets that persist from round to round instead of a tree rebuilt every round.
//!
//! * Processes are renumbered by (arrival mod d, rank). Availability only ever gains whole
//!   rounds, so it stays congruent to the arrival mod d, and a group, which spans less than d,
//!   in (availability, rank) order is this numbering rotated to start at the head (the paper's
//!   i / i+P trick, §5.5 of the design note, exact with the half-open window).
//! * `hold`: per segment, the set of processes holding it (A or P), a bit per number; with
//!   `en`, the group members that have not sent this round, the peer of a receiver is the first
//!   set bit of `hold[s] & en` from the head on (the sink, who comes first, checked apart).
//! * `cnt`: per segment, how many group members hold it at the start of the round; `one` and
//!   `two` are the segments with at least one and two. A receiver wants its lowest segment that
//!   another unsent member holds: at least two holders if it holds the segment and has not sent,
//!   one otherwise. Sends and P' clears only lower those counts during a round, so copies of
//!   `one` and `two` taken at the start are supersets of the true sets: a receiver tries their
//!   candidates in order and removes each that proves to have no peer, which stays true for the
//!   rest of the round, so every segment fails at most twice a round.
//!
//! Per transfer O(1) word operations plus the scans (a candidate's peer search is at most
//! P/64 words); per round O(|G| + N/64); per schedule O(P * N / 64) more to set up. Failed
//! peer searches dominate large schedules (a segment fails at most twice a round, so up to
//! O(R * N * P/64) words): they are answered by one vectorised pass before the ordered search
//! (same instruction count, fewer mispredicted branches: measured 20-26 % faster at P = N =
//! 4096 uniform, about 10 % slower skewed, where searches rarely fail, level at 512).
//! (Word summaries of `hold` and `en` were tried and lost: both are dense at word level, so
//! they pruned nothing and cost 1.8x the instructions at P = N = 512.)
//!
//! The generator is compiled twice, portable and with AVX2 (`build_avx2`, chosen once per call
//! by `is_x86_feature_detected!`); both give the same schedule (tested). In the search the
//! filter is picked by offset and the sink's extra candidates by a mask, not by branches, and
//! the peer's word comes from a mask of nonzero words (rotated order: after the head's word,
//! then before it, then the head's word below the head). Branch mispredicts (callgrind's
//! simulation) at P = N = 512: uniform 749 K -> 436 K, skewed 74 K -> 16 K; instructions
//! 132.1 -> 121.1 M and 86.5 -> 84.2 M.
//! Tried and lost: scanning q's column four words at a time (one vector op for the filter
//! words): most receivers find their candidate in the first word, so it cost 8-24 % more
//! instructions (143 M uniform, 107 M skewed at 512) and was slower skewed. Still open (about
//! 354 K failed peer searches per schedule at 512 uniform: receivers whose candidates' holders
//! have all sent this round): counts of unsent holders per segment would cost a pass over the
//! sender's column per transfer (estimated, not tried). Keeping lo[q] in a local
//! during the scan: 2 % more instructions (register pressure), lost.
//!
//! Where the instructions go (issue 21 item 4, callgrind at P = N = 512, clv21e): the work is
//! O(1) per member and round (312 K member-rounds for 262 K transfers, uniform), but the path of
//! one receive-and-transfer was about 220 instructions, mostly register spills around the
//! loop's calls and bookkeeping; scanning (692 K words) and failed searches (365 K, about 30
//! instructions each) were the rest. The hot loop now expands one receiver's turn for the
//! sink and for each of (q unsent, the sink unsent), so each copy is compiled with those
//! known; stores transfers, finished processes and P' cells into room reserved before the
//! round (no call that could grow a vector inside it); advances lo[q] once per receiver instead
//! of testing it on every word scanned; indexes the end-of-round group pass unchecked; and adds
//! a joining member's column to the holder counts a word at a time (vectorised). Uniform
//! 121.4 -> 92.1 M instructions, skewed 84.6 -> 60.8 M (the out vector is also sized past
//! P * N, so the 6 MB schedule is no longer moved by a regrowth). At 1024: 570 -> 443 M and
//! 360 -> 269 M; at 4096: 17.0 -> 12.6 G and 6.9 -> 5.5 G. Wall medians gain less (load 6-9,
//! interleaved fresh runs: 512 uniform 26.7 -> 19.6 ms, skewed 19.1 -> 20.0 ms, 1024 uniform
//! 111 -> 101 ms, 4096 uniform 3.69 -> 3.41 s): time goes to the peer search's loads of holder
//! rows and to stores into the schedule, which fewer instructions do not shorten.
//! `holders_v1` keeps the previous loop as the tests' reference.
//! Tried and lost here: the loop rewritten with the sink handled before it (and checked
//! indexing), 128.2 M uniform; a count of unsent members to skip receivers with no possible
//! peer plus a skip of members holding nothing, added to the old loop, 127.8 M (more live
//! values in the loop, more spills).
use super::{Problem, Schedule, Transfer};

pub(super) fn bit(i: usize) -> u64 {
    1 << (i % 64)
}

/// Holder sets get a fixed width, the next power of two words (padded with zero words), so
/// their peer searches compile to straight-line code without bounds checks: 10-14 % fewer
/// instructions at P = N = 512 and 1024, 30 % at 64 (callgrind).
macro_rules! by_width {
    ($pb:expr, $f:ident) => {
        match $pb.arrivals.len().div_ceil(64) {
            0..=1 => $f::<1>($pb),
            2 => $f::<2>($pb),
            3..=4 => $f::<4>($pb),
            5..=8 => $f::<8>($pb),
            9..=16 => $f::<16>($pb),
            17..=32 => $f::<32>($pb),
            33..=64 => $f::<64>($pb),
            _ => $f::<0>($pb),
        }
    };
}

/// The schedule of `pb` (which must pass `Problem::check`): the AVX2 build of the generator
/// where the CPU has it, the portable one elsewhere (the same schedule, tested).
pub fn schedule(pb: &Problem) -> Schedule {
    #[cfg(target_arch = "x86_64")]
    if let Some(s) = schedule_avx2(pb) {
        return s;
    }
    schedule_portable(pb)
}

/// `schedule` compiled for the baseline target (SSE2 on x86-64); public for benchmarks.
pub fn schedule_portable(pb: &Problem) -> Schedule {
    by_width!(pb, build)
}

/// `schedule` compiled with AVX2 (4-word vector passes over holder sets and columns), or
/// `None` where the CPU lacks it.
#[cfg(target_arch = "x86_64")]
pub(super) fn schedule_avx2(pb: &Problem) -> Option<Schedule> {
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("bmi1") && is_x86_feature_detected!("popcnt")) {
        return None;
    }
    // SAFETY: the CPU has the features `build_avx2` is compiled for (checked just above).
    Some(unsafe { by_width!(pb, build_avx2) })
}


/// `schedule` with the holder sets as wide as the processes need (no fixed width): the path
/// above 4096 processes, tested against the fixed widths.
#[cfg(test)]
pub(super) fn schedule_any_width(pb: &Problem) -> Schedule {
    build::<0>(pb)
}

/// `build` compiled with AVX2, BMI1 and POPCNT: `build` and its helpers are inlined here
/// (`inline(always)`), so the whole generator is.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,popcnt")]
fn build_avx2<const K: usize>(pb: &Problem) -> Schedule {
    build::<K>(pb)
}

/// `schedule` with holder sets of `K` words (0: as many as the processes need).
#[inline(always)]
fn build<const K: usize>(pb: &Problem) -> Schedule {
    let (p, n, d) = (pb.arrivals.len(), pb.segments, pb.round);
    let (w, pw) = (n.div_ceil(64), if K == 0 { p.div_ceil(64) } else { K });
    let cw = w;
    // rank[x]: the rank of process number x; numbers in (arrival mod d, rank) order.
    let mut rank: Vec<usize> = (0..p).collect();
    rank.sort_by_key(|&r| (pb.arrivals[r].rem_euclid(d), r));
    let mut num = vec![0usize; p];
    for (x, &r) in rank.iter().enumerate() {
        num[r] = x;
    }
    let root = num[pb.root];
    let mut avail: Vec<i64> = rank.iter().map(|&r| pb.arrivals[r]).collect();
    // col[x * cw ..][..w]: the segments x holds (A or P).
    let start = super::start_columns(pb);
    let mut col = vec![0u64; p * cw];
    for (x, &r) in rank.iter().enumerate() {
        col[x * cw..x * cw + w].copy_from_slice(&start[r * w..(r + 1) * w]);
    }
    // hold[s * pw ..][..pw]: the holders of segment s.
    let mut hold = vec![0u64; n * pw];
    if pb.holds.is_empty() {
        for h in hold.chunks_mut(pw) {
            h.fill(u64::MAX);
            if p % 64 != 0 {
                h[p / 64] = bit(p) - 1;
            }
            h[p.div_ceil(64)..].fill(0);
        }
    } else {
        for x in 0..p {
            for (j, &c) in col[x * cw..x * cw + w].iter().enumerate() {
                let mut c = c;
                while c != 0 {
                    let s = j * 64 + c.trailing_zeros() as usize;
                    hold[s * pw + x / 64] |= bit(x);
                    c &= c - 1;
                }
            }
        }
    }
    let mut held: Vec<u32> = col.chunks(cw).map(|c| c.iter().map(|c| c.count_ones()).sum()).collect();
    // lo[x]: col[x]'s words below it are all zero (a process sends its lowest segments first,
    // and only a copy into an empty cell moves it down).
    let mut lo = vec![0usize; p];
    // Processes that hold nothing (and are not the root) have nothing to do.
    let mut done: Vec<bool> = (0..p).map(|x| x != root && held[x] == 0).collect();
    let mut left = done.iter().enumerate().filter(|&(x, &d)| x != root && !d).count();
    // The awaiting queue, sorted once by (arrival, rank); processes leave it at its head.
    let mut awaiting: Vec<usize> = (0..p).filter(|&x| !done[x]).collect();
    awaiting.sort_by_key(|&x| (avail[x], rank[x]));
    let mut ai = 0;
    // The group, in (availability, rank) order, and the previous one while merging.
    let (mut g, mut prev): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    // Holder counts over the group members, and the segments with at least one and two.
    let mut cnt = vec![0u32; n];
    let (mut one, mut two) = (vec![0u64; cw], vec![0u64; cw]);
    // This round's filters: f[..cw] from `one`, f[cw..] from `two`.
    let mut f = vec![0u64; 2 * cw];
    // The members other than the sink that have not sent this round.
    let mut en = vec![0u64; pw];
    let mut primed: Vec<(usize, usize)> = Vec::with_capacity(p);
    let mut out: Vec<Transfer> = Vec::with_capacity(if pb.holds.is_empty() { p * n + p * n / 16 } else { 0 });
    let mut round: u64 = 0;
    // Processes that finished this round (candidates: they may still receive a copy).
    let mut fin: Vec<usize> = Vec::with_capacity(p);
    while left > 0 {
        // merge-and-clean, as in `segtree`: every unfinished member of the previous group is in
        // the new one (design note §5.2), so only the queue's head can change it; a process
        // taken from the queue joins the counts and `en`.
        let h = match (g.first(), awaiting.get(ai)) {
            (Some(&a), Some(&b)) => avail[a].min(avail[b]),
            (Some(&a), None) => avail[a],
            (None, Some(&b)) => avail[b],
            (None, None) => unreachable!("the root is always pending"),
        };
        if awaiting.get(ai).is_some_and(|&c| avail[c] < h + d) {
            std::mem::swap(&mut prev, &mut g);
            g.clear();
            let mut gi = 0;
            loop {
                let from_prev = match (prev.get(gi), awaiting.get(ai)) {
                    (None, None) => break,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (Some(&a), Some(&b)) => (avail[a], rank[a]) < (avail[b], rank[b]),
                };
                let c = if from_prev { prev[gi] } else { awaiting[ai] };
                if avail[c] >= h + d {
                    break;
                }
                g.push(c);
                if from_prev {
                    gi += 1;
                    continue;
                }
                ai += 1;
                en[c / 64] |= bit(c);
                let cc = &col[c * cw..(c + 1) * cw];
                // A word of the column at a time, so the 64 counts vectorise.
                for (ks, &c) in cnt.chunks_mut(64).zip(cc) {
                    for (b, k) in ks.iter_mut().enumerate() {
                        *k += (c >> b & 1) as u32;
                    }
                }
                for i in 0..cw {
                    two[i] |= one[i] & cc[i];
                    one[i] |= cc[i];
                }
            }
            debug_assert_eq!(gi, prev.len());
        }
        if g.len() == 1 {
            let h = g[0];
            let next = awaiting.get(ai).map(|&x| avail[x]).expect("the root is always pending");
            let k = (next - avail[h]) / d;
            avail[h] += k * d;
            round += k as u64;
            continue;
        }
        let sink = if g.contains(&root) { root } else { g[0] };
        // A round has at most one transfer per member: room for all of them, so the pushes
        // below are plain stores (no call that could grow the vector in the hot loop).
        out.reserve(g.len());
        let (out_ptr, mut out_len) = (out.as_mut_ptr(), out.len());
        f[..cw].copy_from_slice(&one);
        f[cw..].copy_from_slice(&two);
        en[sink / 64] &= !bit(sink);
        let mut sink_en = true;
        let (hw, hmask) = (g[0] / 64, u64::MAX << (g[0] % 64));
        debug_assert!(hw < pw);
        // One receiver's turn, expanded for the sink and for each of (q unsent, the sink unsent)
        // so every copy is compiled with those known: fewer live values in the hot loop, fewer
        // spills (P = N = 512 uniform 107.1 -> 92.1 M instructions, skewed 73.8 -> 60.8 M).
        macro_rules! receive {
            ($q:expr, $is_sink:expr, $q_en:expr, $sink_en:expr) => {{
                let (q, is_sink, q_en, sink_en_now): (usize, bool, bool, bool) = ($q, $is_sink, $q_en, $sink_en);
                debug_assert!(q < p);
                // q's own bit is out of `en` during its search, so every bit left is a peer.
                // SAFETY (the unchecked indexing below): q < p, so q / 64 < pw and the column
                // q * cw .. (q + 1) * cw lies in `col` (p * cw words); segments s < n, so s / 64
                // < cw and s * pw + pw <= hold.len(); each with a debug_assert.
                let q_en_bit = if q_en && !is_sink { bit(q) } else { 0 };
                unsafe { *en.get_unchecked_mut(q / 64) &= !q_en_bit };
                // A non-sink wants a segment it holds (with a second unsent holder if q has not
                // sent: f2, else one: f1); the sink also any segment it lacks that someone holds.
                // Chosen without branches: the filter by offset, the sink's extra by mask.
                let sel = if q_en { cw } else { 0 };
                let sink_mask = if is_sink { u64::MAX } else { 0 };
                let sink_bit = if !is_sink && sink_en_now { bit(sink) } else { 0 };
                let from = if is_sink {
                    0
                } else {
                    // Words below lo[q] are zero; zero words right there move it up.
                    let mut l = lo[q];
                    while l < cw && unsafe { *col.get_unchecked(q * cw + l) } == 0 {
                        l += 1;
                    }
                    lo[q] = l;
                    l
                };
                let mut found = None;
                let cq = q * cw;
                debug_assert!(cq + cw <= col.len() && 2 * cw <= f.len());
                'words: for i in from..cw {
                    // SAFETY: see above (i < cw).
                    let (c, f1, fs) = unsafe { (*col.get_unchecked(cq + i), *f.get_unchecked(i), *f.get_unchecked(sel + i)) };
                    let mut m = (c & fs) | (!c & f1 & sink_mask);
                    while m != 0 {
                        let b = m & m.wrapping_neg();
                        let s = i * 64 + b.trailing_zeros() as usize;
                        debug_assert!(s < n && (s + 1) * pw <= hold.len());
                        // SAFETY: s < n (filter bits are segments), so the slice is in `hold`.
                        let hs = unsafe { hold.get_unchecked(s * pw..(s + 1) * pw) };
                        let z = if unsafe { *hs.get_unchecked(sink / 64) } & sink_bit != 0 {
                            Some(sink)
                        } else if K == 0 {
                            first_from(hs, &en, hw, hmask)
                        } else {
                            first_from_k::<K>(hs.try_into().unwrap(), en[..K].try_into().unwrap(), hw, hmask)
                        };
                        if let Some(z) = z {
                            found = Some((s, z, c & b == 0));
                            break 'words;
                        }
                        // No peer: the segment has no holder left but q (if q holds it and has
                        // not sent), else none at all; neither changes before the round ends.
                        // SAFETY: i < cw.
                        unsafe {
                            *f.get_unchecked_mut(i) &= !(b & !(if q_en { c } else { 0 }));
                            *f.get_unchecked_mut(cw + i) &= !b;
                        }
                        m &= !b;
                    }
                }
                unsafe { *en.get_unchecked_mut(q / 64) |= q_en_bit };
                if let Some((s, z, copy)) = found {
                    debug_assert!(z < p && s < n && z * cw + s / 64 < col.len());
                    let (sw, sb) = (s / 64, bit(s));
                    // SAFETY: z and q are process numbers (< p: z is a set bit of `hold[s] & en`, which
                    // hold no bit at or past p, or the sink) and s < n, so every index below is in its
                    // vector: col (p * cw), hold (n * pw), held, rank, lo (p), cnt (n), two (cw); the
                    // writes through out_ptr and into fin stay within the capacities noted at each.
                    unsafe {
                        // out has room for this round's transfers (reserved at its start).
                        debug_assert!(out_len < out.capacity());
                        out_ptr.add(out_len).write(Transfer { round, from: *rank.get_unchecked(z) as u32, to: *rank.get_unchecked(q) as u32, seg: s as u32, copy });
                        out_len += 1;
                        // The sender drops the segment and sends nothing more this round (the sink's
                        // `en` bit is already clear).
                        *col.get_unchecked_mut(z * cw + sw) &= !sb;
                        *hold.get_unchecked_mut(s * pw + z / 64) &= !bit(z);
                        let hz = held.get_unchecked_mut(z);
                        *hz -= 1;
                        if *hz == 0 && z != root {
                            // A process finishes at most once a round: fin has room for p.
                            debug_assert!(fin.len() < fin.capacity());
                            fin.as_mut_ptr().add(fin.len()).write(z);
                            fin.set_len(fin.len() + 1);
                        }
                        sink_en &= z != sink;
                        *en.get_unchecked_mut(z / 64) &= !bit(z);
                        // The receiver's copy is P' (not forwardable) until the round ends; a combine
                        // leaves one holder fewer, a copy moves the segment.
                        if copy {
                            *held.get_unchecked_mut(q) += 1;
                            let l = lo.get_unchecked_mut(q);
                            *l = (*l).min(sw);
                        } else {
                            *col.get_unchecked_mut(q * cw + sw) &= !sb;
                            *hold.get_unchecked_mut(s * pw + q / 64) &= !bit(q);
                            let k = cnt.get_unchecked_mut(s);
                            *k -= 1;
                            if *k == 1 {
                                *two.get_unchecked_mut(sw) &= !sb;
                            }
                        }
                    }
                    // SAFETY: at most one receive per member and round, and primed has room for p.
                    unsafe {
                        debug_assert!(primed.len() < primed.capacity());
                        primed.as_mut_ptr().add(primed.len()).write((q, s));
                        primed.set_len(primed.len() + 1);
                    }
                }
            }};
        }
        // The sink first, then the other members in group order.
        receive!(sink, true, true, true);
        for gi in 0..g.len() {
            let q = g[gi];
            if q != sink {
                // Specialised for whether q has sent this round.
                // SAFETY: q < p, so q / 64 < pw.
                match (unsafe { *en.get_unchecked(q / 64) } & bit(q) != 0, sink_en) {
                    (true, true) => receive!(q, false, true, true),
                    (true, false) => receive!(q, false, true, false),
                    (false, true) => receive!(q, false, false, true),
                    (false, false) => receive!(q, false, false, false),
                }
            }
        }
        // SAFETY: out_len transfers were written, within the capacity reserved above.
        unsafe { out.set_len(out_len) };
        for &(q, s) in &primed {
            debug_assert!(q < p && s < n);
            // SAFETY: as above (q < p, s < n).
            unsafe {
                *col.get_unchecked_mut(q * cw + s / 64) |= bit(s);
                *hold.get_unchecked_mut(s * pw + q / 64) |= bit(q);
            }
        }
        primed.clear();
        // Next round: the members still in the group, all unsent again, a round later.
        let mut finished = false;
        for z in fin.drain(..) {
            if held[z] == 0 {
                done[z] = true;
                finished = true;
                left -= 1;
            }
        }
        if finished {
            g.retain(|&x| !done[x]);
        }
        for &x in &g {
            debug_assert!(x < p);
            // SAFETY: group members are process numbers (< p), so x / 64 < pw.
            unsafe {
                *en.get_unchecked_mut(x / 64) |= bit(x);
                *avail.get_unchecked_mut(x) += d;
            }
        }
        round += 1;
    }
    Schedule { transfers: out }
}

/// The first number set in `h & en` in the numbering rotated to start at the lowest bit of
/// `hmask` in word `hw`: the first unsent peer holding the segment, in group order after the
/// sink.
#[inline(always)]
pub(super) fn first_from(h: &[u64], en: &[u64], hw: usize, hmask: u64) -> Option<usize> {
    let en = &en[..h.len()];
    let at = |i: usize, x: u64| Some(i * 64 + x.trailing_zeros() as usize);
    let x = h[hw] & en[hw];
    if x & hmask != 0 {
        return at(hw, x & hmask);
    }
    // Most searches that get this far fail (at P = N = 4096, 54.5 M of 71 M peer searches): one
    // pass without early exits, which the compiler vectorises, tells whether any word matches.
    if h.iter().zip(en).fold(0, |a, (h, e)| a | (h & e)) == 0 {
        return None;
    }
    for i in hw + 1..h.len() {
        if h[i] & en[i] != 0 {
            return at(i, h[i] & en[i]);
        }
    }
    for i in 0..hw {
        if h[i] & en[i] != 0 {
            return at(i, h[i] & en[i]);
        }
    }
    if x & !hmask != 0 {
        return at(hw, x & !hmask);
    }
    None
}

/// `first_from` for holder sets of exactly `K` words (a power of two up to 64, so `hw % K` is
/// `hw` without a bounds check and the nonzero words fit one u64 mask).
#[inline(always)]
pub(super) fn first_from_k<const K: usize>(h: &[u64; K], en: &[u64; K], hw: usize, hmask: u64) -> Option<usize> {
    // The head's own word first: where it matches (most searches in skewed patterns), nothing
    // else is read.
    let x = h[hw % K] & en[hw % K] & hmask;
    if x != 0 {
        return Some(hw * 64 + x.trailing_zeros() as usize);
    }
    // Most searches that get this far fail (at P = N = 4096, 54.5 M of 71 M): one pass without
    // early exits, vectorised, tells.
    let mut any = 0;
    for i in 0..K {
        any |= h[i] & en[i];
    }
    if any == 0 {
        return None;
    }
    // The words after hw, then those before, then hw's bits below the head: the first nonzero
    // word after hw, else the lowest nonzero word (hw itself only if none lies before it). The
    // nonzero words as a bit mask, so no branch per word.
    let mut nz = 0u64;
    for i in 0..K {
        // 1 where the word is nonzero, in arithmetic the compiler vectorises (x | -x has the
        // top bit set unless x is 0).
        let x = h[i] & en[i];
        nz |= ((x | x.wrapping_neg()) >> 63) << i;
    }
    let after = nz & (u64::MAX << (hw % K)) << 1;
    let j = if after != 0 { after.trailing_zeros() } else { nz.trailing_zeros() } as usize % K;
    Some(j * 64 + (h[j] & en[j]).trailing_zeros() as usize)
}
