//! MPI_Bcast on a tree ordered by predicted arrival (`arrival_tree`; issue 21 item 3).
//!
//! When the root arrives early and others late, a fixed binomial tree makes every late inner
//! rank hold back its whole subtree. Here the tree keeps the binomial shape (`bcast::binomial`),
//! but its positions are dealt by the agreed arrival pattern (`clairvoyant_pap::arrivals`): the
//! root at position 0, then the other ranks from the earliest predicted to the latest, onto the
//! positions from the largest subtree to the smallest. A position's subtree is always larger
//! than any of its children's, so a parent is never predicted later than its children, and the
//! latest ranks are leaves: the data flows through the early ranks while the late ones compute,
//! and a late rank receives from an early parent the moment it arrives.
//!
//! A wrong prediction costs time, never correctness: every rank builds the same tree from the
//! same pattern, and each transfer waits for its data.
use super::clairvoyant_pap::Arrivals;
use super::Coll;
use crate::error::MpiResult;

/// The communicator ranks sorted by predicted arrival (`pattern`, quanta), ties by rank.
pub fn arrival_order(pattern: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pattern.len()).collect();
    order.sort_by_key(|&r| (pattern[r], r));
    order
}

/// Whether `auto` should run the arrival tree: the root is predicted among the first and the
/// predicted imbalance is worth it (the spread exceeds one transfer of the whole vector).
pub fn worth_it(a: &Arrivals, root: usize) -> bool {
    let first = a.pattern.iter().min().copied().unwrap_or(0);
    a.imbalance > 1.0 && a.pattern.get(root) == Some(&first)
}

/// The communicator rank at each tree position for root `root` and arrival `pattern`.
fn positions(pattern: &[i64], root: usize) -> Vec<usize> {
    let n = pattern.len();
    let others: Vec<usize> = arrival_order(pattern).into_iter().filter(|&r| r != root).collect();
    // Positions 1..n from the largest subtree to the smallest; a binomial position v holds the
    // ranks v..v + min(lowbit(v), n - v).
    let mut slots: Vec<usize> = (1..n).collect();
    slots.sort_by_key(|&v| (std::cmp::Reverse((1usize << v.trailing_zeros()).min(n - v)), v));
    let mut at = vec![root; n];
    for (&v, &r) in slots.iter().zip(&others) {
        at[v] = r;
    }
    at
}

/// Broadcasts `bytes` bytes at `buf` from `root` along the arrival-ordered tree for `pattern`
/// (identical on every rank).
///
/// # Safety
/// As `bcast::bcast`.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize, pattern: &[i64]) -> MpiResult {
    let at = positions(pattern, root);
    // SAFETY: per this function's contract; `at` is a permutation of the ranks with the root at 0.
    unsafe { among(cx, buf, bytes, &at) }
}

/// The binomial tree over `members` (communicator ranks, `members[0]` the root, this rank among
/// them): the broadcast within a subset of the ranks.
///
/// # Safety
/// As `bcast::bcast`, with the root `members[0]`.
pub unsafe fn among(cx: &Coll, buf: *mut u8, bytes: usize, members: &[usize]) -> MpiResult {
    let me = cx.rank();
    let Some(vr) = members.iter().position(|&r| r == me) else { return Ok(()) };
    // SAFETY: per this function's contract.
    unsafe { super::bcast::binomial_mapped(cx, buf, bytes, members.len(), vr, |v| members[v]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_ranks_are_leaves_and_parents_precede_children() {
        for n in 1..=17usize {
            for root in [0, n / 2, n - 1] {
                // Rank r arrives at (r * 7) mod n: a scrambled order.
                let pattern: Vec<i64> = (0..n).map(|r| ((r * 7) % n) as i64).collect();
                let at = positions(&pattern, root);
                let mut seen = at.clone();
                seen.sort();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a permutation");
                assert_eq!(at[0], root);
                for v in 1..n {
                    let parent = v & (v - 1);
                    if parent != 0 {
                        assert!((pattern[at[parent]], at[parent]) < (pattern[at[v]], at[v]), "n {n} v {v}");
                    }
                }
                // The latest non-root rank sits on a leaf (an odd position, or the last one).
                if n > 2 {
                    let last = *arrival_order(&pattern).iter().rev().find(|&&r| r != root).unwrap();
                    let v = at.iter().position(|&r| r == last).unwrap();
                    assert!(v % 2 == 1 || v == n - 1, "n {n}: latest at position {v}");
                }
            }
        }
    }
}
