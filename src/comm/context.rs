//! Context ids: which ones this rank has free, and how the members of a new communicator agree on
//! one that is free for all of them.
//!
//! Ids come in pairs (point-to-point, collective); pair `p` is contexts `2p` and `2p + 1`. Pair 0 is
//! MPI_COMM_WORLD's, pair 1 MPI_COMM_SELF's. Agreement follows MPICH's mask algorithm: every member
//! contributes its mask of free pairs to a bitwise-AND allreduce over the parent communicator and
//! all take the lowest pair free everywhere. Two threads of one rank creating communicators at the
//! same time (MPI_THREAD_MULTIPLE, different parents) must not both hand out the same pair, so only
//! one of them may offer the mask at a time; the other offers an empty mask, the round yields
//! nothing for its communicator, and it tries again (MPICH does the same).
//!
//! A pair is used again after its communicator is freed, but under a new generation
//! (`p2p::incarnation`), so that the freed communicator's messages and revocations, which may still
//! be on their way, never reach the new one. Once the members agree on a pair, they agree on its
//! generation with a MAX over their `next_generation`s: above every member's last use of the pair.
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
    /// A thread of this rank is offering `free` in an agreement round right now.
    offered: bool,
    /// Per pair, the generation above every one this rank has used the pair with.
    next: Vec<u32>,
}

/// What one agreement round contributes, and whether this thread holds the offer.
pub struct Offer {
    pub mask: Vec<u64>,
    pub owner: bool,
}

impl Default for ContextIds {
    fn default() -> Self {
        let mut free = [u64::MAX; WORDS];
        free[0] &= !0b11; // WORLD and SELF
        ContextIds { inner: Mutex::new(State { free, offered: false, next: vec![0; PAIRS] }) }
    }
}

impl ContextIds {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts an agreement round: the free mask if no other thread of this rank is offering,
    /// else an empty mask.
    pub fn offer(&self) -> Offer {
        let mut s = self.lock();
        if s.offered {
            return Offer { mask: vec![0; WORDS], owner: false };
        }
        s.offered = true;
        Offer { mask: s.free.to_vec(), owner: true }
    }

    /// Ends a round with the AND of every member's offer: takes the lowest common pair (the same
    /// on every member) and returns it, or None when the round found nothing. Its generation is
    /// agreed next (`next_generation`, `settle`).
    pub fn conclude(&self, offer: &Offer, agreed: &[u64]) -> Option<usize> {
        let mut s = self.lock();
        if offer.owner {
            s.offered = false;
        }
        let (w, word) = agreed.iter().enumerate().find(|(_, &w)| w != 0)?;
        let bit = word.trailing_zeros() as usize;
        // A non-empty AND means every member, this thread included, offered its real mask.
        debug_assert!(offer.owner);
        s.free[w] &= !(1u64 << bit);
        Some(w * 64 + bit)
    }

    /// What this rank offers in the MAX over the members that picks the generation of `pair`.
    pub fn next_generation(&self, pair: usize) -> u32 {
        self.lock().next[pair]
    }

    /// The members agreed on generation `generation` (the MAX of their `next_generation`s) of the
    /// pair they took: returns the communicator's context id.
    pub fn settle(&self, pair: usize, generation: u32) -> u32 {
        let mut s = self.lock();
        s.next[pair] = s.next[pair].max(generation + 1);
        compose(pair, generation)
    }

    /// Gives back `pair`, taken by `conclude` for an agreement that then failed.
    pub fn abandon(&self, pair: usize) {
        self.lock().free[pair / 64] |= 1u64 << (pair % 64);
    }

    /// Whether any pair is left at all (else creating a communicator can never succeed).
    pub fn exhausted(&self) -> bool {
        self.lock().free.iter().all(|&w| w == 0)
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
    #[test]
    fn agreement_takes_the_lowest_common_pair() {
        let a = ContextIds::default();
        let b = ContextIds::default();
        // b already uses pair 2.
        let o = b.offer();
        let mut m = o.mask.clone();
        assert_eq!(b.conclude(&o, &m), Some(2));
        let b2 = b.settle(2, b.next_generation(2));
        assert_eq!(b2, compose(2, 0));
        let (oa, ob) = (a.offer(), b.offer());
        m = oa.mask.iter().zip(&ob.mask).map(|(x, y)| x & y).collect();
        assert_eq!(a.conclude(&oa, &m), Some(3));
        assert_eq!(b.conclude(&ob, &m), Some(3));
        b.release(b2);
        let (oa, ob) = (a.offer(), b.offer());
        m = oa.mask.iter().zip(&ob.mask).map(|(x, y)| x & y).collect();
        assert_eq!(a.conclude(&oa, &m), Some(2), "a never used pair 2; b released it");
        assert_eq!(b.conclude(&ob, &m), Some(2));
        // The generation is above b's last use of the pair, also at a, which never used it.
        let g = a.next_generation(2).max(b.next_generation(2));
        assert_eq!(g, 1);
        assert_eq!(a.settle(2, g), b.settle(2, g));
        assert_eq!(generation_of(a.settle(2, g)), 1);
    }

    #[test]
    fn a_pair_whose_generations_ran_out_is_not_offered_again() {
        let a = ContextIds::default();
        let o = a.offer();
        assert_eq!(a.conclude(&o, &o.mask), Some(2));
        a.release(a.settle(2, GENERATIONS - 1));
        let o = a.offer();
        assert_eq!(a.conclude(&o, &o.mask), Some(3));
    }

    #[test]
    fn a_second_concurrent_offer_is_empty() {
        let a = ContextIds::default();
        let first = a.offer();
        let second = a.offer();
        assert!(!second.owner && second.mask.iter().all(|&w| w == 0));
        assert_eq!(a.conclude(&second, &second.mask), None);
        assert_eq!(a.conclude(&first, &first.mask), Some(2));
    }
}
