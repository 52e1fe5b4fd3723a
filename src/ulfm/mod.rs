//! Surviving the loss of a rank: the ULFM interface (User-Level Failure Mitigation, the MPI
//! Forum's fault-tolerance proposal, as MPICH and Open MPI 5 ship it under `MPIX_`).
//!
//! Who notices a death: the launcher (`mpiexec`, processes mode) sees a rank die, and in a job
//! that opted in (`--survive`, `OXMPI_SURVIVE=1`, or some rank set a non-fatal error handler on a
//! communicator, `want_survival`) marks it failed in the segment and wakes every rank instead of
//! ending the job. The engine then fails the operations that involve the dead rank
//! (`p2p/engine/failure.rs`). This module holds the recovery calls:
//! - `failure_ack` / `get_acked`: the failed members a rank has acknowledged, which also stops
//!   them from failing its MPI_ANY_SOURCE receives;
//! - `revoke`: every pending and later operation on the communicator fails with ErrorClass::Revoked
//!   on every member, which frees ranks blocked on a survivor that gave up;
//! - `shrink`: a new communicator of the survivors, with a context id agreed among them only;
//! - `agree`: a bitwise AND of an int over the survivors, which also reports unacknowledged
//!   failures.
//!
//! Shrink and agree rest on `consensus`: the survivors agree on one value, and on who
//! contributed to it, even when members die during the call.

pub mod consensus;

use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::error::{err, MpiError, MpiResult, ErrorClass};
use crate::comm::Universe;
use crate::construct::intra::Combine;

/// Lets the engine decide MPI_ANY_SOURCE receives: whether world rank `w` is a failed member of
/// the communicator of a context pair that this rank has not acknowledged. Called at MPI_Init.
pub fn install(u: &'static Universe) {
    u.engine.set_unacked(Box::new(move |ctx, w| with_comm(u, ctx, |c| is_member(c, w) && !acked(c).contains(&w)).unwrap_or(false)));
}

/// Runs `f` on the communicator of context pair `ctx`, if this rank has it.
fn with_comm<T>(u: &Universe, ctx: u32, f: impl FnOnce(&Comm) -> T) -> Option<T> {
    match ctx {
        WORLD_CONTEXT => Some(f(&u.world)),
        SELF_CONTEXT => Some(f(&u.self_comm)),
        _ => u.comms.by_context(ctx).map(|c| f(&c)),
    }
}

fn members(c: &Comm) -> Vec<usize> {
    let mut m = c.group.clone();
    if let Some(r) = &c.remote {
        m.extend(r);
    }
    m
}

fn is_member(c: &Comm, w: usize) -> bool {
    c.group.contains(&w) || c.remote.as_ref().is_some_and(|r| r.contains(&w))
}

fn acked(c: &Comm) -> std::sync::MutexGuard<'_, Vec<usize>> {
    c.acked.lock().unwrap_or_else(|p| p.into_inner())
}

/// The program set a non-fatal error handler: tell the launcher the job survives failures.
pub fn want_survival(u: &Universe) {
    u.seg.want_survival();
}

/// Failed members of `c` (world ranks, local group first), as this rank knows them now.
pub fn failed_members(u: &Universe, c: &Comm) -> Vec<usize> {
    let dead = u.engine.failed_ranks();
    members(c).into_iter().filter(|w| dead.contains(w)).collect()
}

/// MPIX_Comm_failure_ack: acknowledges every failure of a member of `c` known now.
pub fn failure_ack(u: &Universe, c: &Comm) {
    let failed = failed_members(u, c);
    *acked(c) = failed;
}

/// MPIX_Comm_failure_get_acked: the acknowledged failed members (world ranks, in rank order).
pub fn get_acked(c: &Comm) -> Vec<usize> {
    acked(c).clone()
}

/// MPIX_Comm_revoke.
pub fn revoke(u: &Universe, c: &Comm) {
    u.engine.revoke(c.context, &members(c));
}

/// MPIX_Comm_is_revoked.
pub fn is_revoked(u: &Universe, c: &Comm) -> bool {
    u.engine.is_revoked(c.context)
}

fn intra(c: &Comm, what: &str) -> MpiResult {
    if c.is_inter() {
        return Err(err(ErrorClass::Comm, format!("{what} on an intercommunicator is not implemented; use it on an intracommunicator")));
    }
    Ok(())
}

/// MPIX_Comm_shrink: a new communicator (its table index) of the survivors of `c`, in the order
/// of their ranks in `c`, with `c`'s error handler.
pub fn shrink(u: &Universe, c: &Comm) -> MpiResult<u32> {
    intra(c, "MPIX_Comm_shrink")?;
    // The context agreement of `construct::intra::agree_context_with`, each round a consensus;
    // the members of the new communicator are those that contributed to the last one (the
    // same on every survivor).
    let mut contributors = Vec::new();
    let ctx = crate::construct::intra::agree_context_with(u, |how, mine, agreed| {
        let d = consensus::decide(u, c, mine, how)?;
        agreed.copy_from_slice(&d.words);
        contributors = d.contributors;
        Ok(())
    })?;
    let group: Vec<usize> = (0..c.size()).filter(|&r| contributors[r]).map(|r| c.world_rank(r)).collect();
    let me = c.world_rank(c.rank);
    let rank = group.iter().position(|&w| w == me).expect("a live member always contributes");
    Ok(u.comms.insert(Comm::new(ctx, group, rank, c.errhandler())))
}

/// MPIX_Comm_agree: the bitwise AND of `flag` over the survivors of `c`. The second value is
/// the error to report with it: ErrorClass::ProcFailed when a member of `c` has failed and this
/// rank had not acknowledged it (ULFM).
pub fn agree(u: &Universe, c: &Comm, flag: i32) -> MpiResult<(i32, Option<MpiError>)> {
    intra(c, "MPIX_Comm_agree")?;
    let d = consensus::decide(u, c, &[flag as u32 as u64], Combine::And)?;
    let acked = acked(c).clone();
    let unacked: Vec<usize> = (0..c.size()).filter(|&r| !d.contributors[r]).map(|r| c.world_rank(r)).filter(|w| !acked.contains(w)).collect();
    let e = (!unacked.is_empty()).then(|| {
        err(ErrorClass::ProcFailed, format!("MPIX_Comm_agree: world rank(s) {unacked:?} of the communicator failed and were not acknowledged (MPIX_Comm_failure_ack); the flag is the survivors' agreement"))
    });
    Ok((d.words[0] as u32 as i32, e))
}
