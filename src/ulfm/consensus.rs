//! The agreement under MPIX_Comm_agree and MPIX_Comm_shrink: the survivors of a communicator
//! agree on one value even when members die during the call (issue 22, item 2).
//!
//! Failure detection here is perfect: the launcher marks a dead rank in the job segment, every
//! rank eventually sees it, and a receive from a dead rank fails (after what it sent before dying
//! was received). With such a detector, consensus is the rotating coordinator of Chandra and
//! Toueg ("Unreliable failure detectors for reliable distributed systems", JACM 1996, with the
//! strong detector reduced to the perfect one):
//! 1. every member sends its words to every other one and combines (`Combine`) what it receives
//!    from each member, or notes the member dead: its estimate, with the mask of the members it
//!    combined;
//! 2. in round `r` (one per member), member `r` sends its estimate to every other one, which
//!    takes it unless member `r` is dead.
//! The first round whose coordinator survives its sends leaves everybody alive with its estimate,
//! and later rounds keep it, so all survivors decide the same. No member waits for a member
//! that waits for it (everybody waits only for the coordinator of the current round, who waits
//! for nobody then), so a death never makes the survivors wait forever. The cost is n rounds of
//! n - 1 messages; shrink and agree are recovery calls, not a fast path.
//!
//! Messages travel on the communicator's collective context with ULFM tags (spared by a
//! revocation): the call's sequence number on the communicator (`Comm::ulfm_seq`: every survivor
//! calls shrink and agree in the same order) and the round.
use crate::comm::{Comm, Universe};
use crate::construct::intra::Combine;
use crate::error::MpiResult;
use crate::p2p::{Buf, SendMode};

/// What the survivors decided: the combined words, and which members (local ranks of the
/// communicator) contributed to them. Every live member did; a member that died during the
/// call may have or not, the same for everybody.
pub struct Decision {
    pub words: Vec<u64>,
    pub contributors: Vec<bool>,
}

/// Agrees with the survivors of intracommunicator `c` on `words` (the same length everywhere)
/// combined with `how` over the members that contributed.
pub fn decide(u: &Universe, c: &Comm, words: &[u64], how: Combine) -> MpiResult<Decision> {
    let n = c.size();
    let seq = c.ulfm_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tag = |round: usize| crate::coll::tag_ulfm(seq) | round as i32;
    let ctx = c.coll_context();
    let mask_words = n.div_ceil(64);
    // The estimate: the contributors' mask, then the combined words.
    let mut estimate = vec![0u64; mask_words];
    estimate[c.rank / 64] |= 1 << (c.rank % 64);
    estimate.extend_from_slice(words);

    // 1. Everybody's words to everybody.
    let mut sends = Vec::new();
    for p in (0..n).filter(|&p| p != c.rank) {
        // SAFETY: `words` outlives the send, which is waited for before returning.
        if let Ok(id) = unsafe { u.engine.isend(Buf::flat(words.as_ptr() as *const u8), words.len() * 8, c.world_rank(p), tag(0), ctx, SendMode::Standard) } {
            sends.push(id);
        }
    }
    let mut got = vec![0u64; words.len()];
    for p in (0..n).filter(|&p| p != c.rank) {
        // SAFETY: `got` holds words.len() u64 and outlives the receive, waited for at once.
        let id = unsafe { u.engine.irecv(Buf::Flat(got.as_mut_ptr() as *mut u8), got.len() * 8, Some(c.world_rank(p)), tag(0), ctx) };
        let st = u.engine.wait(id);
        if st.error.is_none() && st.bytes as usize == got.len() * 8 {
            how.fold(&mut estimate[mask_words..], &got);
            estimate[p / 64] |= 1 << (p % 64);
        }
    }

    // 2. One round per member: its estimate to everybody.
    let mut theirs = vec![0u64; estimate.len()];
    for r in 0..n {
        if r == c.rank {
            for p in (0..n).filter(|&p| p != c.rank) {
                // SAFETY: `estimate` is not changed in this round and outlives the send (waited
                // for below, before returning).
                if let Ok(id) = unsafe { u.engine.isend(Buf::flat(estimate.as_ptr() as *const u8), estimate.len() * 8, c.world_rank(p), tag(1 + r), ctx, SendMode::Standard) } {
                    sends.push(id);
                }
            }
            // The estimate must not change while its sends are pending.
            for id in sends.drain(..) {
                u.engine.wait(id);
            }
            continue;
        }
        // SAFETY: `theirs` holds estimate.len() u64 and outlives the receive, waited for at once.
        let id = unsafe { u.engine.irecv(Buf::Flat(theirs.as_mut_ptr() as *mut u8), theirs.len() * 8, Some(c.world_rank(r)), tag(1 + r), ctx) };
        let st = u.engine.wait(id);
        if st.error.is_none() && st.bytes as usize == theirs.len() * 8 {
            estimate.copy_from_slice(&theirs);
        }
    }
    for id in sends {
        u.engine.wait(id);
    }
    let contributors = (0..n).map(|p| estimate[p / 64] & (1 << (p % 64)) != 0).collect();
    Ok(Decision { words: estimate.split_off(mask_words), contributors })
}
