//! Context ids carry the incarnation of their context pair, so that a message or a revocation
//! of a freed communicator never reaches the communicator that reuses its pair (issue 22).
//!
//! Layout of a context id: bit 0 tells the collective context from the point-to-point one;
//! bits 1..=12 are the pair (`PAIRS` of them); bits 13..=29 are the pair's generation, which
//! goes up every time the members agree on the pair again (`construct::intra::agree_context_with`
//! takes one above every member's last); bit 30 is the partitioned traffic's
//! (`partitioned::HIDDEN_CONTEXT`). Matching compares whole ids, so two incarnations of a pair
//! never match each other's messages.
//!
//! The engine keeps, per pair, the lowest generation that may still be live here (`Floors`):
//! freeing a communicator raises it past the freed generation, and a message that arrives for
//! a generation below it, with no receive posted for it, belongs to a freed communicator: it is
//! dropped (its sender released), as is a revocation of such a generation. A message for a
//! generation at or above it may be for a communicator this rank has not finished creating:
//! it waits in the unexpected queue as any other.

/// Number of context-id pairs (so at most this many communicators exist at once per rank).
pub const PAIRS: usize = 4096;
/// Generations of one pair; a pair whose last generation was used is never handed out again.
pub const GENERATIONS: u32 = 1 << 17;
const PAIR_BITS: u32 = 12;
const GENERATION_SHIFT: u32 = PAIR_BITS + 1;
const ID_MASK: u32 = (1 << (GENERATION_SHIFT + 17)) - 1;

/// The point-to-point context id of generation `generation` of pair `pair`.
pub fn compose(pair: usize, generation: u32) -> u32 {
    debug_assert!(pair < PAIRS && generation < GENERATIONS);
    (generation << GENERATION_SHIFT) | ((pair as u32) << 1)
}

/// The pair of context id `ctx` (either of the pair, partitioned or not).
pub fn pair_of(ctx: u32) -> usize {
    ((ctx >> 1) & ((1 << PAIR_BITS) - 1)) as usize
}

/// The generation of context id `ctx`.
pub fn generation_of(ctx: u32) -> u32 {
    (ctx & ID_MASK) >> GENERATION_SHIFT
}

/// Per pair, the lowest generation that may still be live at this rank.
pub(super) struct Floors(Vec<u32>);

impl Default for Floors {
    fn default() -> Self {
        Floors(vec![0; PAIRS])
    }
}

impl Floors {
    /// Whether context id `ctx` belongs to a communicator this rank has freed.
    pub(super) fn is_stale(&self, ctx: u32) -> bool {
        generation_of(ctx) < self.0[pair_of(ctx)]
    }

    /// The communicator of context id `ctx` is freed here.
    pub(super) fn retire(&mut self, ctx: u32) {
        let f = &mut self.0[pair_of(ctx)];
        *f = (*f).max(generation_of(ctx) + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_stay_below_the_hidden_bit() {
        let top = compose(PAIRS - 1, GENERATIONS - 1);
        assert!(top + 1 < crate::p2p::partitioned::HIDDEN_CONTEXT);
        for (p, g) in [(0, 0), (1, 0), (2, 5), (PAIRS - 1, GENERATIONS - 1)] {
            let c = compose(p, g);
            assert_eq!(c & 1, 0);
            for id in [c, c + 1, c | crate::p2p::partitioned::HIDDEN_CONTEXT] {
                assert_eq!((pair_of(id), generation_of(id)), (p, g));
            }
        }
        assert_eq!(compose(0, 0), 0, "MPI_COMM_WORLD's context");
        assert_eq!(compose(1, 0), 2, "MPI_COMM_SELF's context");
    }

    #[test]
    fn freed_generations_are_stale_later_ones_not() {
        let mut f = Floors::default();
        assert!(!f.is_stale(compose(7, 0)));
        f.retire(compose(7, 3) + 1);
        assert!(f.is_stale(compose(7, 0)) && f.is_stale(compose(7, 3) + 1));
        assert!(!f.is_stale(compose(7, 4)) && !f.is_stale(compose(8, 0)));
        f.retire(compose(7, 1));
        assert!(f.is_stale(compose(7, 3)), "retiring an older generation lowers nothing");
    }
}
