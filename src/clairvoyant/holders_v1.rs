//! The previous production generator (clv21d), kept unchanged as the reference the one in use
//! (`holders`) is tested against, transfer for transfer, on random patterns and sizes: the same
//! algorithm, whose hot loop `holders` rewrote for fewer instructions (stores into reserved
//! room instead of pushes, lo[q] advanced once per receiver, unchecked group bookkeeping).
//! Portable build only (its AVX2 build was tested against it when it was in use).
use super::holders::{bit, first_from, first_from_k};
use super::{Problem, Schedule, Transfer};

/// The schedule of `pb` (which must pass `Problem::check`), as `holders` built it before.
pub fn schedule(pb: &Problem) -> Schedule {
    match pb.arrivals.len().div_ceil(64) {
        0..=1 => build::<1>(pb),
        2 => build::<2>(pb),
        3..=4 => build::<4>(pb),
        5..=8 => build::<8>(pb),
        9..=16 => build::<16>(pb),
        17..=32 => build::<32>(pb),
        33..=64 => build::<64>(pb),
        _ => build::<0>(pb),
    }
}

/// `schedule` with holder sets of `K` words (0: as many as the processes need).
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
    let mut primed: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::with_capacity(if pb.holds.is_empty() { p * n } else { 0 });
    let mut round: u64 = 0;
    // Processes that finished this round (candidates: they may still receive a copy).
    let mut fin: Vec<usize> = Vec::new();
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
                for (s, k) in cnt.iter_mut().enumerate() {
                    *k += (cc[s / 64] >> (s % 64) & 1) as u32;
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
        f[..cw].copy_from_slice(&one);
        f[cw..].copy_from_slice(&two);
        en[sink / 64] &= !bit(sink);
        let mut sink_en = true;
        let (hw, hmask) = (g[0] / 64, u64::MAX << (g[0] % 64));
        debug_assert!(hw < pw);
        for gi in 0..=g.len() {
            // The sink first, then the other members in group order.
            let q = if gi == 0 { sink } else { g[gi - 1] };
            let is_sink = gi == 0;
            if !is_sink && q == sink {
                continue;
            }
            debug_assert!(q < p);
            // q's own bit is out of `en` during its search, so every bit left is a peer.
            // SAFETY (the unchecked indexing below): q < p, so q / 64 < pw and the column
            // q * cw .. (q + 1) * cw lies in `col` (p * cw words); segments s < n, so s / 64
            // < cw and s * pw + pw <= hold.len(); each with a debug_assert.
            let q_en_bit = unsafe { *en.get_unchecked(q / 64) } & bit(q);
            unsafe { *en.get_unchecked_mut(q / 64) &= !q_en_bit };
            let q_en = if is_sink { sink_en } else { q_en_bit != 0 };
            // A non-sink wants a segment it holds (with a second unsent holder if q has not
            // sent: f2, else one: f1); the sink also any segment it lacks that someone holds.
            // Chosen without branches: the filter by offset, the sink's extra by mask.
            let sel = if q_en { cw } else { 0 };
            let sink_mask = if is_sink { u64::MAX } else { 0 };
            let sink_bit = if !is_sink && sink_en { bit(sink) } else { 0 };
            let from = if is_sink { 0 } else { lo[q] };
            let mut found = None;
            let cq = q * cw;
            debug_assert!(cq + cw <= col.len() && 2 * cw <= f.len());
            'words: for i in from..cw {
                // SAFETY: see above (i < cw).
                let (c, f1, fs) = unsafe { (*col.get_unchecked(cq + i), *f.get_unchecked(i), *f.get_unchecked(sel + i)) };
                let mut m = (c & fs) | (!c & f1 & sink_mask);
                // Words below lo[q] are zero; a zero word right there moves it up.
                lo[q] += (c == 0 && i == lo[q]) as usize;
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
            let Some((s, z, copy)) = found else { continue };
            debug_assert!(z < p && s < n && z * cw + s / 64 < col.len());
            let (sw, sb) = (s / 64, bit(s));
            // SAFETY: z and q are process numbers (< p: z is a set bit of `hold[s] & en`, which
            // hold no bit at or past p, or the sink) and s < n, so every index below is in its
            // vector: col (p * cw), hold (n * pw), held, rank, lo (p), cnt (n), two (cw).
            unsafe {
                out.push(Transfer { round, from: *rank.get_unchecked(z) as u32, to: *rank.get_unchecked(q) as u32, seg: s as u32, copy });
                // The sender drops the segment and sends nothing more this round (the sink's
                // `en` bit is already clear).
                *col.get_unchecked_mut(z * cw + sw) &= !sb;
                *hold.get_unchecked_mut(s * pw + z / 64) &= !bit(z);
                let hz = held.get_unchecked_mut(z);
                *hz -= 1;
                if *hz == 0 && z != root {
                    fin.push(z);
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
            primed.push((q, s));
        }
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
            en[x / 64] |= bit(x);
            avail[x] += d;
        }
        round += 1;
    }
    Schedule { transfers: out }
}
