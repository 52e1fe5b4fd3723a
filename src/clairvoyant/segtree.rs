//! The paper's fast generator (Proficz & Ocetkiewicz 2021, section 5; reconstructed in
//! `docs/design/clairvoyant.md` section 5), now the test oracle of `holders`, which replaced it:
//! the same schedule as `linear`, found with
//! * merge-and-clean: the group comes from merging the previous group (still in availability
//!   order, every member having gained d) with the queue of processes yet to arrive, sorted once;
//! * idle-round skipping when the group has one member;
//! * the state matrix as one bit column per process (1 = holds the segment: A or P), and a
//!   segment tree whose internal nodes hold the OR of their children's columns, so "the lowest
//!   segment another group member holds" is O(log |G|) column ORs and "the first member holding
//!   segment s" one descent;
//! * the leaves laid out in group order each round (the sink at leaf 0, then the others by
//!   (availability, rank)), the note's simpler equivalent of the paper's i / i+P index trick and
//!   pseudo-root; the tree is rebuilt once per round, as in the paper.
//!
//! Cost O(R * |G| * (N/64) * log |G|) at worst; leaf updates stop climbing where an OR stays
//! the same, so most cost O(1).
use super::{Problem, Schedule, Transfer};

/// The OR segment tree over `leaves` columns of `w` words: node v (root 1) at `t[v*w..][..w]`,
/// leaf k at node `m + k`.
struct Tree {
    m: usize,
    w: usize,
    t: Vec<u64>,
}

impl Tree {
    fn reset(&mut self, leaves: usize) {
        self.m = leaves.next_power_of_two().max(1);
        self.t.clear();
        self.t.resize(2 * self.m * self.w, 0);
    }
    fn bit(&self, v: usize, s: usize) -> bool {
        self.t[v * self.w + s / 64] >> (s % 64) & 1 == 1
    }
    fn put_leaf(&mut self, k: usize, col: &[u64]) {
        let v = self.m + k;
        self.t[v * self.w..(v + 1) * self.w].copy_from_slice(col);
    }
    fn pull(&mut self, v: usize) {
        let w = self.w;
        for i in 0..w {
            self.t[v * w + i] = self.t[2 * v * w + i] | self.t[(2 * v + 1) * w + i];
        }
    }
    /// Recomputes every internal node (after `put_leaf` on all leaves).
    fn build(&mut self) {
        for v in (1..self.m).rev() {
            self.pull(v);
        }
    }
    /// Sets leaf k and the path above it, one word at a time: only words that change are
    /// pulled up, and only until a node's OR stays the same (a sibling still holds the bits),
    /// which early in a schedule, when everyone holds most segments, is at once.
    fn set(&mut self, k: usize, col: &[u64]) {
        let w = self.w;
        for (i, &x) in col.iter().enumerate() {
            let mut v = self.m + k;
            if self.t[v * w + i] == x {
                continue;
            }
            self.t[v * w + i] = x;
            while v > 1 {
                let up = v / 2;
                let or = self.t[(v & !1) * w + i] | self.t[(v | 1) * w + i];
                if self.t[up * w + i] == or {
                    break;
                }
                self.t[up * w + i] = or;
                v = up;
            }
        }
    }
    /// The lowest segment set both in `mask` (None: every segment) and in some leaf other
    /// than k: the OR of the siblings along k's path (Listing 3), one word at a time, so the
    /// search stops at the first word with a candidate.
    fn lowest_except(&self, k: usize, mask: Option<&[u64]>) -> Option<usize> {
        for i in 0..self.w {
            let m = mask.map_or(u64::MAX, |c| c[i]);
            if m == 0 {
                continue;
            }
            let (mut v, mut o) = (self.m + k, 0u64);
            while v > 1 {
                o |= self.t[(v ^ 1) * self.w + i];
                v /= 2;
            }
            if o & m != 0 {
                return Some(i * 64 + (o & m).trailing_zeros() as usize);
            }
        }
        None
    }
    /// The leftmost leaf under node v holding bit s (Listing 4).
    fn leftmost(&self, mut v: usize, s: usize) -> Option<usize> {
        if !self.bit(v, s) {
            return None;
        }
        while v < self.m {
            v = if self.bit(2 * v, s) { 2 * v } else { 2 * v + 1 };
        }
        Some(v - self.m)
    }
    /// The leftmost leaf strictly right of leaf k holding bit s (Listing 5).
    fn leftmost_after(&self, k: usize, s: usize) -> Option<usize> {
        let mut v = self.m + k;
        while v > 1 {
            if v % 2 == 0 && self.bit(v + 1, s) {
                return self.leftmost(v + 1, s);
            }
            v /= 2;
        }
        None
    }
}

/// The schedule of `pb` (which must pass `Problem::check`).
pub fn schedule(pb: &Problem) -> Schedule {
    let (p, n, d, root) = (pb.arrivals.len(), pb.segments, pb.round, pb.root);
    let w = n.div_ceil(64);
    let mut col = super::start_columns(pb);
    let mut avail = pb.arrivals.clone();
    // Processes that hold nothing (and are not the root) have nothing to do.
    let mut done: Vec<bool> = (0..p).map(|x| x != root && col[x * w..(x + 1) * w].iter().all(|&b| b == 0)).collect();
    let mut left = done.iter().enumerate().filter(|&(x, &d)| x != root && !d).count();
    // The awaiting queue, sorted once by (arrival, rank); processes leave it at its head.
    let mut awaiting: Vec<usize> = (0..p).filter(|&x| !done[x]).collect();
    awaiting.sort_by_key(|&x| (avail[x], x));
    let mut ai = 0;
    let mut g: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = Vec::new();
    let mut tree = Tree { m: 1, w, t: Vec::new() };
    let mut sent = vec![false; p];
    let mut leaf_of = vec![usize::MAX; p];
    let zero = vec![0u64; w];
    let mut primed: Vec<(usize, usize)> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut round: u64 = 0;
    while left > 0 {
        // merge-and-clean (Listing 6): weave the unfinished members of the previous group with
        // the awaiting queue, in (availability, rank) order, while inside the window.
        std::mem::swap(&mut prev, &mut g);
        g.clear();
        let mut gi = 0;
        prev.retain(|&x| !done[x]);
        let mut head = None;
        loop {
            let from_prev = match (prev.get(gi), awaiting.get(ai)) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(&a), Some(&b)) => (avail[a], a) < (avail[b], b),
            };
            let c = if from_prev { prev[gi] } else { awaiting[ai] };
            let h = *head.get_or_insert(avail[c]);
            if avail[c] >= h + d {
                break;
            }
            g.push(c);
            if from_prev {
                gi += 1;
            } else {
                ai += 1;
            }
        }
        if g.len() == 1 {
            let h = g[0];
            let next = prev.get(gi).map(|&x| avail[x]).into_iter().chain(awaiting.get(ai).map(|&x| avail[x])).min().expect("the root is always pending");
            let k = (next - avail[h]) / d;
            avail[h] += k * d;
            round += k as u64;
            continue;
        }
        // Group order: the sink (the root if present, else the head) first, then the others.
        order.clear();
        order.extend_from_slice(&g);
        if let Some(i) = order.iter().position(|&x| x == root) {
            order.remove(i);
            order.insert(0, root);
        }
        tree.reset(order.len());
        for (k, &x) in order.iter().enumerate() {
            leaf_of[x] = k;
            sent[x] = false;
            tree.put_leaf(k, &col[x * w..(x + 1) * w]);
        }
        tree.build();
        for (k, &q) in order.iter().enumerate() {
            let qc = &col[q * w..(q + 1) * w];
            // FIND-PEER-ROOT for the sink (any segment a peer holds), FIND-PEER for the others
            // (a segment both hold); the lowest segment first.
            let Some(s) = tree.lowest_except(k, if k == 0 { None } else { Some(qc) }) else { continue };
            let mut zl = tree.leftmost(1, s).expect("the bit came from the tree");
            if zl == k {
                zl = tree.leftmost_after(k, s).expect("the bit came from another leaf");
            }
            let z = order[zl];
            let copy = qc[s / 64] >> (s % 64) & 1 == 0;
            out.push(Transfer { round, from: z as u32, to: q as u32, seg: s as u32, copy });
            // The sender drops the segment and sends nothing more this round: disable its leaf.
            col[z * w + s / 64] &= !(1 << (s % 64));
            sent[z] = true;
            tree.set(zl, &zero);
            // The receiver's copy is P' (not forwardable) until the round ends.
            col[q * w + s / 64] &= !(1 << (s % 64));
            primed.push((q, s));
            if !sent[q] {
                tree.set(k, &col[q * w..(q + 1) * w]);
            }
        }
        for (q, s) in primed.drain(..) {
            col[q * w + s / 64] |= 1 << (s % 64);
        }
        for &x in &g {
            avail[x] += d;
            if x != root && col[x * w..(x + 1) * w].iter().all(|&b| b == 0) {
                done[x] = true;
                left -= 1;
            }
        }
        round += 1;
    }
    Schedule { transfers: out }
}
