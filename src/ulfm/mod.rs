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
//! Shrink and agree run an allreduce over the survivors as each rank sees them, on tags that a
//! revocation spares. A rank that dies during one of them makes it fail with ErrorClass::ProcFailed
//! at the ranks that notice, which start another attempt; the attempt also checks that all
//! survivors saw the same failures (AND of the alive masks equals their OR) and retries if not.
//! This is not a consensus protocol that tolerates every failure pattern during the call (ULFM's
//! early-returning agreement, Herault et al., "Practical scalable consensus for pseudo-synchronous
//! distributed systems", SC 2015): survivors whose attempts diverge may wait for each other.

use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::error::{err, MpiError, MpiResult, ErrorClass};
use crate::datatype::basic::Basic;
use crate::op::{Op, Reduction};
use crate::comm::Universe;
use crate::construct::intra::Combine;

/// Attempts of shrink or agree before giving up (one per failure noticed during the call).
const ATTEMPTS: u32 = 256;

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

/// The survivors of `c` as this rank sees them: a view of `c` (same contexts) over them.
fn survivors(u: &Universe, c: &Comm) -> Comm {
    let dead = u.engine.failed_ranks();
    let alive: Vec<usize> = c.group.iter().copied().filter(|w| !dead.contains(w)).collect();
    let me = c.world_rank(c.rank);
    let rank = alive.iter().position(|&w| w == me).expect("this rank is alive");
    Comm::new(c.context, alive, rank, c.errhandler())
}

/// Bitmask of `c`'s local ranks that are in `view`, and its complement, as u64 words.
fn alive_words(c: &Comm, view: &Comm) -> Vec<u64> {
    let words = c.size().div_ceil(64);
    let mut alive = vec![0u64; words];
    for (r, w) in c.group.iter().enumerate() {
        if view.group.contains(w) {
            alive[r / 64] |= 1 << (r % 64);
        }
    }
    let not: Vec<u64> = alive.iter().map(|x| !x).collect();
    alive.extend(not);
    alive
}

/// Whether the AND of everybody's alive words shows they all saw the same survivors: the AND of
/// the masks equals their OR (= the complement of the AND of the complements).
fn consistent(c: &Comm, anded: &[u64]) -> bool {
    let words = c.size().div_ceil(64);
    let (and, not_or) = anded.split_at(words);
    and.iter().zip(not_or).enumerate().all(|(i, (a, n))| {
        let valid = if (i + 1) * 64 <= c.size() { u64::MAX } else { (1u64 << (c.size() % 64)) - 1 };
        (a & valid) == (!n & valid)
    })
}

/// One allreduce (bitwise AND of u64 words) over the survivors of `c`, attempt `attempt`.
fn and_over(u: &Universe, view: &Comm, attempt: u32, mine: &[u64]) -> MpiResult<Vec<u64>> {
    reduce_over(u, view, attempt, mine, Op::Band)
}

/// One allreduce with `op` of u64 words over the survivors of `c`, attempt `attempt`.
fn reduce_over(u: &Universe, view: &Comm, attempt: u32, mine: &[u64], op: Op) -> MpiResult<Vec<u64>> {
    let r = Reduction::new(op, Basic::Uint64T)?;
    let mut out = vec![0u64; mine.len()];
    // SAFETY: both buffers hold mine.len() u64 words; distinct.
    unsafe { crate::coll::allreduce::allreduce_tagged(u, view, mine.as_ptr() as *const u8, out.as_mut_ptr() as *mut u8, mine.len(), &r, crate::coll::tag_ulfm(attempt))? };
    Ok(out)
}

/// Whether error `e` says a rank died during the call (so another attempt may succeed).
fn died_during(e: &MpiError) -> bool {
    e.class == ErrorClass::ProcFailed
}

/// MPIX_Comm_shrink: a new communicator (its table index) of the survivors of `c`, in the order
/// of their ranks in `c`, with `c`'s error handler.
pub fn shrink(u: &Universe, c: &Comm) -> MpiResult<u32> {
    intra(c, "MPIX_Comm_shrink")?;
    for attempt in 0..ATTEMPTS {
        let view = survivors(u, c);
        let alive = alive_words(c, &view);
        let mut seen = Vec::new();
        let agreed = crate::construct::intra::agree_context_with(u, |how, mine, agreed| {
            if how == Combine::Max {
                agreed.copy_from_slice(&reduce_over(u, &view, attempt, mine, Op::Max)?);
                return Ok(());
            }
            let mut words = mine.to_vec();
            words.extend(&alive);
            let out = and_over(u, &view, attempt, &words)?;
            agreed.copy_from_slice(&out[..mine.len()]);
            seen = out[mine.len()..].to_vec();
            Ok(())
        });
        match agreed {
            Ok(ctx) if consistent(c, &seen) => {
                return Ok(u.comms.insert(Comm::new(ctx, view.group.clone(), view.rank, c.errhandler())));
            }
            Ok(ctx) => u.comms.contexts.release(ctx),
            Err(e) if died_during(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Err(err(ErrorClass::Other, format!("MPIX_Comm_shrink: the survivors did not agree after {ATTEMPTS} attempts")))
}

/// MPIX_Comm_agree: the bitwise AND of `flag` over the survivors of `c`. The second value is
/// the error to report with it: ErrorClass::ProcFailed when a member of `c` has failed and this
/// rank had not acknowledged it (ULFM).
pub fn agree(u: &Universe, c: &Comm, flag: i32) -> MpiResult<(i32, Option<MpiError>)> {
    intra(c, "MPIX_Comm_agree")?;
    for attempt in 0..ATTEMPTS {
        let view = survivors(u, c);
        let mut words = vec![flag as u32 as u64];
        words.extend(alive_words(c, &view));
        match and_over(u, &view, attempt, &words) {
            Ok(out) if consistent(c, &out[1..]) => {
                let acked = acked(c).clone();
                let unacked: Vec<usize> = c.group.iter().copied().filter(|w| !view.group.contains(w) && !acked.contains(w)).collect();
                let e = (!unacked.is_empty()).then(|| {
                    err(ErrorClass::ProcFailed, format!("MPIX_Comm_agree: world rank(s) {unacked:?} of the communicator failed and were not acknowledged (MPIX_Comm_failure_ack); the flag is the survivors' agreement"))
                });
                return Ok((out[0] as u32 as i32, e));
            }
            Ok(_) => {}
            Err(e) if died_during(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Err(err(ErrorClass::Other, format!("MPIX_Comm_agree: the survivors did not agree after {ATTEMPTS} attempts")))
}
