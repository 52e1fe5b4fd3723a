//! The reference generator: the fixed Clairvoyant pseudocode (Listing 2 of Proficz &
//! Ocetkiewicz 2021, as reconstructed in `docs/design/clairvoyant.md` section 3.2), with
//! idle-round skipping, written plainly: a full scan of the group for every peer search.
//! O(R * |G|^2 * N) per schedule; kept to check `segtree` and `holders` against.
use super::{Problem, Schedule, Transfer};

/// The schedule of `pb` (which must pass `Problem::check`).
pub fn schedule(pb: &Problem) -> Schedule {
    let (p, n, d, root) = (pb.arrivals.len(), pb.segments, pb.round, pb.root);
    // m[p * n + s]: true while p holds segment s (state A or P); false for E and P'.
    let w = n.div_ceil(64);
    let start = super::start_columns(pb);
    let mut m: Vec<bool> = (0..p * n).map(|i| start[(i / n) * w + (i % n) / 64] >> (i % n % 64) & 1 == 1).collect();
    let mut avail = pb.arrivals.clone();
    // Processes that hold nothing (and are not the root) have nothing to do.
    let mut done: Vec<bool> = (0..p).map(|x| x != root && !m[x * n..(x + 1) * n].iter().any(|&b| b)).collect();
    let mut left = done.iter().enumerate().filter(|&(x, &d)| x != root && !d).count(); // unfinished non-root processes
    let mut out = Vec::new();
    let mut round: u64 = 0;
    let mut sent = vec![false; p];
    while left > 0 {
        // The queue in (availability, rank) order; the group is the half-open window after its head.
        let mut q: Vec<usize> = (0..p).filter(|&x| !done[x]).collect();
        q.sort_by_key(|&x| (avail[x], x));
        let head = avail[q[0]];
        let g_len = q.iter().take_while(|&&x| avail[x] < head + d).count();
        if g_len == 1 {
            // Nobody to exchange with until the next arrival: skip the idle rounds at once.
            let k = (avail[q[1]] - head) / d;
            avail[q[0]] += k * d;
            round += k as u64;
            continue;
        }
        let mut g: Vec<usize> = q[..g_len].to_vec();
        if let Some(i) = g.iter().position(|&x| x == root) {
            g.remove(i);
            g.insert(0, root);
        }
        let sink = g[0];
        for &x in &g {
            sent[x] = false;
        }
        let mut primed: Vec<(usize, usize)> = Vec::new();
        for &i in &g {
            let mut found = None;
            'seg: for j in 0..n {
                if i != sink && !m[i * n + j] {
                    continue;
                }
                for &z in &g {
                    if z != i && !sent[z] && m[z * n + j] {
                        found = Some((z, j));
                        break 'seg;
                    }
                }
            }
            if let Some((z, j)) = found {
                out.push(Transfer { round, from: z as u32, to: i as u32, seg: j as u32, copy: !m[i * n + j] });
                m[z * n + j] = false;
                sent[z] = true;
                m[i * n + j] = false; // P'
                primed.push((i, j));
            }
        }
        for (i, j) in primed {
            m[i * n + j] = true;
        }
        for &x in &g {
            avail[x] += d;
            if x != root && !m[x * n..(x + 1) * n].iter().any(|&b| b) {
                done[x] = true;
                left -= 1;
            }
        }
        round += 1;
    }
    Schedule { transfers: out }
}
