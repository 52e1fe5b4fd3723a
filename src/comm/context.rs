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
use std::sync::Mutex;

/// Number of context-id pairs (so at most this many communicators exist at once per rank).
pub const PAIRS: usize = 4096;
const WORDS: usize = PAIRS / 64;

pub struct ContextIds {
    inner: Mutex<State>,
}

struct State {
    /// Bit set = pair free.
    free: [u64; WORDS],
    /// A thread of this rank is offering `free` in an agreement round right now.
    offered: bool,
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
        ContextIds { inner: Mutex::new(State { free, offered: false }) }
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
    /// on every member) and returns its first context id, or None when the round found nothing.
    pub fn conclude(&self, offer: &Offer, agreed: &[u64]) -> Option<u32> {
        let mut s = self.lock();
        if offer.owner {
            s.offered = false;
        }
        let (w, word) = agreed.iter().enumerate().find(|(_, &w)| w != 0)?;
        let bit = word.trailing_zeros() as usize;
        // A non-empty AND means every member, this thread included, offered its real mask.
        debug_assert!(offer.owner);
        s.free[w] &= !(1u64 << bit);
        Some(((w * 64 + bit) * 2) as u32)
    }

    /// Whether any pair is left at all (else creating a communicator can never succeed).
    pub fn exhausted(&self) -> bool {
        self.lock().free.iter().all(|&w| w == 0)
    }

    /// Gives back the pair of `context` (MPI_Comm_free).
    pub fn release(&self, context: u32) {
        let p = (context / 2) as usize;
        if p >= 2 && p < PAIRS {
            self.lock().free[p / 64] |= 1u64 << (p % 64);
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
        assert_eq!(b.conclude(&o, &m), Some(4));
        let (oa, ob) = (a.offer(), b.offer());
        m = oa.mask.iter().zip(&ob.mask).map(|(x, y)| x & y).collect();
        assert_eq!(a.conclude(&oa, &m), Some(6));
        assert_eq!(b.conclude(&ob, &m), Some(6));
        b.release(4);
        let (oa, ob) = (a.offer(), b.offer());
        m = oa.mask.iter().zip(&ob.mask).map(|(x, y)| x & y).collect();
        assert_eq!(a.conclude(&oa, &m), Some(4), "a never used pair 2; b released it");
        assert_eq!(b.conclude(&ob, &m), Some(4));
    }

    #[test]
    fn a_second_concurrent_offer_is_empty() {
        let a = ContextIds::default();
        let first = a.offer();
        let second = a.offer();
        assert!(!second.owner && second.mask.iter().all(|&w| w == 0));
        assert_eq!(a.conclude(&second, &second.mask), None);
        assert_eq!(a.conclude(&first, &first.mask), Some(4));
    }
}
