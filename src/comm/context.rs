//! Context ids: which ones this rank has free, and how the members of a new communicator agree on
//! one that is free for all of them.
//!
//! Ids come in pairs (point-to-point, collective); pair `p` is contexts `2p` and `2p + 1`. Pair 0 is
//! MPI_COMM_WORLD's, pair 1 MPI_COMM_SELF's. Agreement starts as MPICH's mask algorithm: every
//! member contributes its mask of free pairs to a bitwise-AND reduction over the members, and all
//! pick the same pair of the result (`choose`).
//!
//! Threads of one rank may create communicators at the same time (MPI_THREAD_MULTIPLE, different
//! parents), so two agreements of a rank may pick the same pair. MPICH lets one thread at a time
//! offer the mask (the others offer nothing and retry; the lowest parent context id goes first),
//! which makes an agreement whose members are all present wait for one whose member is late,
//! and that member may be waiting for the first (`c-tests/comm_threads_dependent`). Here every
//! agreement offers the whole free mask, optimistically, and then `claim`s its pick on each
//! member; a second reduction (MAX, which also agrees on the generation) tells whether every
//! member got it. If not, those that did give it back and the members try again, each attempt
//! picking among the common free pairs with a seed they agreed on in the failed attempt, so two
//! agreements that collided are unlikely to pick the same pair again. No agreement ever waits
//! for another.
//!
//! A pair is used again after its communicator is freed, but under a new generation
//! (`p2p::incarnation`), so that the freed communicator's messages and revocations, which may still
//! be on their way, never reach the new one. The generation is the MAX over the members'
//! `next_generation`s: above every member's last use of the pair.
use crate::p2p::incarnation::{compose, generation_of, pair_of, GENERATIONS};
use std::sync::Mutex;

pub use crate::p2p::incarnation::PAIRS;
const WORDS: usize = PAIRS / 64;

pub struct ContextIds {
    inner: Mutex<State>,
}

struct State {
    /// Bit set = pair free.
    free: [u64; WORDS],
    /// Pairs taken out of `free` by `claim` whose agreement has not settled or abandoned them yet.
    claimed: usize,
    /// Per pair, the generation above every one this rank has used the pair with.
    next: Vec<u32>,
}

impl Default for ContextIds {
    fn default() -> Self {
        let mut free = [u64::MAX; WORDS];
        free[0] &= !0b11; // WORLD and SELF
        ContextIds { inner: Mutex::new(State { free, claimed: 0, next: vec![0; PAIRS] }) }
    }
}

/// The pair the members take from `agreed` (the AND of their masks; the same on every member):
/// the lowest with seed 0 (an agreement's first attempt), else the one at position `seed` modulo
/// the number of common free pairs.
pub fn choose(agreed: &[u64], seed: u64) -> Option<usize> {
    let total: u64 = agreed.iter().map(|w| w.count_ones() as u64).sum();
    if total == 0 {
        return None;
    }
    let mut k = seed % total;
    for (i, &w) in agreed.iter().enumerate() {
        let ones = w.count_ones() as u64;
        if k < ones {
            let mut w = w;
            for _ in 0..k {
                w &= w - 1;
            }
            return Some(i * 64 + w.trailing_zeros() as usize);
        }
        k -= ones;
    }
    None
}

/// A fresh random word, each member's share of the seed of an agreement's next attempt.
pub fn random_word() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState's keys come from the OS once per thread and change with every new one.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64));
    h.finish()
}

impl ContextIds {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This rank's contribution to an agreement's AND round: its free mask, then one word that is
    /// 1 when no agreement of this rank holds a claimed pair. The AND of that word tells "no pair
    /// is free on every member" (an error) from "a concurrent agreement holds one for a moment".
    pub fn offer(&self) -> Vec<u64> {
        let s = self.lock();
        let mut words = s.free.to_vec();
        words.push((s.claimed == 0) as u64);
        words
    }

    /// Takes `pair` for an agreement in progress, if it is still free here (a concurrent
    /// agreement of this rank may have taken it since `offer`). The agreement then `settle`s or
    /// `abandon`s it.
    pub fn claim(&self, pair: usize) -> bool {
        let mut s = self.lock();
        let bit = 1u64 << (pair % 64);
        if s.free[pair / 64] & bit == 0 {
            return false;
        }
        s.free[pair / 64] &= !bit;
        s.claimed += 1;
        true
    }

    /// What this rank offers in the MAX over the members that picks the generation of `pair`.
    pub fn next_generation(&self, pair: usize) -> u32 {
        self.lock().next[pair]
    }

    /// Every member claimed `pair` and they agreed on generation `generation` (the MAX of their
    /// `next_generation`s): returns the communicator's context id.
    pub fn settle(&self, pair: usize, generation: u32) -> u32 {
        let mut s = self.lock();
        s.claimed -= 1;
        s.next[pair] = s.next[pair].max(generation + 1);
        compose(pair, generation)
    }

    /// Gives back `pair`, claimed for an agreement that then failed or must try again.
    pub fn abandon(&self, pair: usize) {
        let mut s = self.lock();
        s.claimed -= 1;
        s.free[pair / 64] |= 1u64 << (pair % 64);
    }

    /// Gives back the pair of `context` (MPI_Comm_free), unless that was its last generation.
    pub fn release(&self, context: u32) {
        let (p, g) = (pair_of(context), generation_of(context));
        if p >= 2 {
            let mut s = self.lock();
            s.next[p] = s.next[p].max(g + 1);
            if s.next[p] < GENERATIONS {
                s.free[p / 64] |= 1u64 << (p % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn and(a: &[u64], b: &[u64]) -> Vec<u64> {
        a.iter().zip(b).map(|(x, y)| x & y).collect()
    }

    #[test]
    fn agreement_takes_the_lowest_common_pair() {
        let a = ContextIds::default();
        let b = ContextIds::default();
        // b already uses pair 2.
        let ob = b.offer();
        assert_eq!(choose(&ob[..WORDS], 0), Some(2));
        assert!(b.claim(2));
        let b2 = b.settle(2, b.next_generation(2));
        assert_eq!(b2, compose(2, 0));
        let m = and(&a.offer(), &b.offer());
        assert_eq!(m[WORDS], 1, "nothing claimed anywhere");
        assert_eq!(choose(&m[..WORDS], 0), Some(3));
        b.release(b2);
        let m = and(&a.offer(), &b.offer());
        assert_eq!(choose(&m[..WORDS], 0), Some(2), "a never used pair 2; b released it");
        assert!(a.claim(2) && b.claim(2));
        // The generation is above b's last use of the pair, also at a, which never used it.
        let g = a.next_generation(2).max(b.next_generation(2));
        assert_eq!(g, 1);
        assert_eq!(a.settle(2, g), b.settle(2, g));
        assert_eq!(generation_of(compose(2, g)), 1);
    }

    #[test]
    fn a_pair_whose_generations_ran_out_is_not_offered_again() {
        let a = ContextIds::default();
        assert!(a.claim(2));
        a.release(a.settle(2, GENERATIONS - 1));
        assert_eq!(choose(&a.offer()[..WORDS], 0), Some(3));
    }

    #[test]
    fn a_pair_claimed_by_a_concurrent_agreement_cannot_be_claimed_again() {
        let a = ContextIds::default();
        let first = a.offer();
        let second = a.offer();
        assert!(a.claim(choose(&first[..WORDS], 0).unwrap()));
        assert_eq!(a.offer()[WORDS], 0, "a claim is in progress");
        assert!(!a.claim(choose(&second[..WORDS], 0).unwrap()), "both picked pair 2");
        a.abandon(2);
        assert_eq!(a.offer()[WORDS], 1);
        assert!(a.claim(2));
    }

    #[test]
    fn choose_spreads_over_the_common_pairs() {
        let m = [0b1011_0000u64, 0b1];
        assert_eq!(choose(&m, 0), Some(4));
        assert_eq!(choose(&m, 1), Some(5));
        assert_eq!(choose(&m, 2), Some(7));
        assert_eq!(choose(&m, 3), Some(64));
        assert_eq!(choose(&m, 4), Some(4));
        assert_eq!(choose(&[0, 0], 9), None);
    }
}
