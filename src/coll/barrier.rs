//! MPI_Barrier: dissemination (Hensgen, Finkel & Manber 1988). In round k every rank signals the
//! rank 2^k ahead and waits for the one 2^k behind; ceil(log2 n) rounds of zero-byte messages,
//! each round on its own tag. Blocking barriers meet in the communicator's shared memory instead
//! where it has some: `flat` (`flat.rs`: every rank publishes an empty record and waits for
//! everybody's) on 2 to 8 ranks that do not outnumber the CPUs, one episode of the arena
//! (`shared`, `arena`) otherwise.
use super::select::{forced, Collective};
use super::Coll;
use crate::error::MpiResult;

/// The algorithms, in the order `select` names them (`OXMPI_BARRIER_ALGORITHM`).
pub const ALGORITHMS: &[&str] = &["dissemination", "shared", "flat"];
const DISSEMINATION: usize = 0;
const FLAT: usize = 2;

pub fn barrier(cx: &Coll) -> MpiResult {
    let forced = forced(Collective::Barrier, ALGORITHMS)?;
    if forced.is_none() {
        if let Some(l) = super::hierarchical::Layout::of(cx) {
            return super::hierarchical::barrier(cx, &l);
        }
    }
    let n = cx.size();
    if let Some(a) = super::flat::arena(cx, forced == Some(FLAT), forced.is_none())? {
        return super::flat::barrier(cx, a);
    }
    if let Some(a) = super::arena::of(cx)?.filter(|_| n > 1 && forced != Some(DISSEMINATION)) {
        // One episode of the shared arena, with nothing to combine.
        return a.barrier(cx);
    }
    let me = cx.rank();
    let mut dist = 1;
    let mut round = 0;
    let mut token = 0u8;
    while dist < n {
        let to = cx.c.world_rank((me + dist) % n);
        let from = cx.c.world_rank((me + n - dist) % n);
        // SAFETY: zero-byte messages; `token` outlives both requests, waited for below.
        let r = unsafe { cx.irecv_world(&mut token, 0, from, cx.tag_at(round)) };
        // SAFETY: as above.
        let s = unsafe { cx.isend_world(&token, 0, to, cx.tag_at(round)) };
        let sent = s.map(|s| cx.u.engine.wait(s));
        // A dead peer or a revoked communicator (crate::ulfm) fails the barrier.
        super::check_received(&cx.u.engine.wait(r), 0, (me + n - dist) % n)?;
        crate::p2p::engine::failure_result(&sent?)?;
        dist *= 2;
        round += 1;
    }
    Ok(())
}
