//! What the engine does when a rank dies or a communicator is revoked (ULFM, see `crate::ulfm`).
//!
//! The launcher marks a dead rank failed in the segment and rings every doorbell (processes
//! mode, in a job that survives failures). Each progress pass compares the segment's failure
//! count with the one it saw last (one relaxed load); on a change, `note_failures` first drains
//! what the dead rank sent before dying (still receivable, in order), then completes with
//! ErrorClass::ProcFailed every operation that waits for it: receives from it, sends to it (queued,
//! or waiting for a rendezvous Fin or a synchronous acknowledgement), receives it was streaming.
//! A pending MPI_ANY_SOURCE receive whose communicator has an unacknowledged failed member
//! completes with ErrorClass::ProcFailedPending (ULFM keeps such a request pending; oxmpi completes
//! it, documented in README "Failures"). Operations started later are refused at once.
//!
//! MPIX_Comm_revoke sends a `Revoke` slot with the communicator's context pair to every live
//! member; each rank then completes the pending operations of both contexts with
//! ErrorClass::Revoked and refuses new ones, except the messages of MPIX_Comm_shrink and
//! MPIX_Comm_agree (tags of `is_ulfm_tag`), which must work on a revoked communicator.
use super::{Engine, Inner, Out};
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::{OpArgs, ReqId, Status};
use crate::transport::Transport;
use crate::transport::packet::{Kind, SlotHeader};
use std::sync::atomic::{fence, Ordering};

/// `unacked(ctx, w)`: world rank `w` is a failed member of the communicator of context pair
/// `ctx` (even id) whose failure the rank has not acknowledged (MPIX_Comm_failure_ack).
pub type UnackedFn = dyn Fn(u32, usize) -> bool + Send + Sync;

/// Fixed collective tags of MPIX_Comm_shrink and MPIX_Comm_agree: ids 0x100..=0x1ff of the
/// fixed-tag space of `crate::coll` (bit 30 clear). Revocation spares them.
pub fn is_ulfm_tag(tag: i32) -> bool {
    tag & (1 << 30) == 0 && (tag >> 16) & 0x3f00 == 0x100
}

/// The result of a finished send or receive whose caller has no other way to see its error.
pub fn status_result(st: &Status) -> MpiResult {
    match st.error {
        None => Ok(()),
        Some(ErrorClass::ProcFailed) => Err(err(ErrorClass::ProcFailed, format!("world rank {} has failed (it died before the operation could complete)", st.source))),
        Some(ErrorClass::Revoked) => Err(err(ErrorClass::Revoked, "the communicator was revoked (MPIX_Comm_revoke)")),
        Some(ErrorClass::ProcFailedPending) => Err(err(
            ErrorClass::ProcFailedPending,
            "a rank of the communicator has failed, so this MPI_ANY_SOURCE receive may never match; acknowledge with MPIX_Comm_failure_ack and post it again",
        )),
        Some(class) => Err(err(class, "the operation failed")),
    }
}

impl<X: Transport> Engine<X> {
    /// Installs the membership test of MPI_ANY_SOURCE receives (once, at MPI_Init).
    pub fn set_unacked(&self, f: Box<UnackedFn>) {
        let _ = self.unacked.set(f);
    }

    /// World ranks this rank knows to have failed (after a progress pass).
    pub fn failed_ranks(&self) -> Vec<usize> {
        let mut g = self.lock();
        self.progress(&mut g);
        (0..self.n).filter(|&r| g.dead[r]).collect()
    }

    /// The launcher's failure count changed to `count`: takes in the newly failed ranks.
    pub(super) fn note_failures(&self, g: &mut Inner, count: u32) {
        g.failures_seen = count;
        fence(Ordering::Acquire);
        let mut new = false;
        for r in 0..self.n {
            if !g.dead[r] && self.t.peer_failed(r) {
                g.dead[r] = true;
                new = true;
                // Whatever it sent before dying is still to be received, in order.
                self.drain(g, r);
            }
        }
        if new {
            g.any_dead = true;
            self.faults.store(true, Ordering::Release);
            self.fail_pending(g);
        }
    }

    /// Completes request `id` with error class `class`.
    pub(super) fn fail(&self, g: &mut Inner, id: ReqId, class: ErrorClass) {
        let Some(r) = g.reqs.get_mut(id) else { return };
        if let Some(OpArgs::Recv { src: Some(s), .. }) = r.op {
            if !r.matched {
                r.status.source = s as i32;
            }
        }
        // The context tells the completion call whose error handler takes the failure.
        if let Some(OpArgs::Recv { ctx, .. } | OpArgs::Send { ctx, .. }) = r.op {
            r.status.context = ctx;
        }
        r.status.error = Some(class);
        if r.pulling {
            // The network may still write into the receive buffer: the receive completes (with
            // this error) when the transport gives the buffer back (`pulled`), which it does
            // once UCX has finished or failed the transfer (a dead sender's endpoint fails its
            // requests). Completing now would hand the user a buffer still being written.
            return;
        }
        self.complete(g, id);
    }

    /// Drops the queued slots that `gone` says belong to failed sends; returns their requests.
    fn drop_queued(g: &mut Inner, dest: usize, gone: impl Fn(&Out) -> bool) -> Vec<ReqId> {
        let mut ids = Vec::new();
        g.outq[dest].retain(|o| {
            if !gone(o) {
                return true;
            }
            match o {
                Out::Eager { req: Some(id), .. } | Out::Stream { req: id, .. } => ids.push(*id),
                Out::Ctl { hdr } if hdr.kind == Kind::Rts as u32 => ids.push(hdr.sreq as u32),
                _ => {}
            }
            false
        });
        if g.outq[dest].is_empty() {
            g.pending_dests.retain(|&d| d != dest);
        }
        ids
    }

    /// Fails every pending operation that waits for a failed rank.
    fn fail_pending(&self, g: &mut Inner) {
        let mut failed = Vec::new();
        for d in 0..self.n {
            if g.dead[d] && !g.outq[d].is_empty() {
                failed.extend(Self::drop_queued(g, d, |_| true));
                self.t.want_room(d, false);
                g.room_armed[d] = false;
            }
        }
        for id in failed {
            self.fail(g, id, ErrorClass::ProcFailed);
        }
        let posted: Vec<ReqId> = g.posted.iter().copied().collect();
        for id in posted {
            self.refuse_recv(g, id);
        }
        let ids: Vec<ReqId> = g.reqs.ids().collect();
        for id in ids {
            let r = g.reqs.get(id).unwrap();
            if r.done || (r.persistent && !r.active) {
                continue;
            }
            let dead = match r.op {
                Some(OpArgs::Send { dest, .. }) => g.dead[dest],
                Some(OpArgs::Recv { .. }) => r.matched && r.status.source >= 0 && g.dead[r.status.source as usize],
                _ => false,
            };
            if dead {
                self.fail(g, id, ErrorClass::ProcFailed);
            }
        }
    }

    /// Why receive `id` cannot complete any more, if it cannot.
    fn recv_failure(&self, g: &Inner, id: ReqId) -> Option<ErrorClass> {
        let r = g.reqs.get(id)?;
        let Some(OpArgs::Recv { src, ctx, .. }) = r.op else { return None };
        if r.matched {
            return (r.status.source >= 0 && g.dead[r.status.source as usize]).then_some(ErrorClass::ProcFailed);
        }
        match src {
            Some(s) => g.dead[s].then_some(ErrorClass::ProcFailed),
            None => {
                let unacked = self.unacked.get()?;
                (0..self.n).any(|w| g.dead[w] && unacked(ctx & !1, w)).then_some(ErrorClass::ProcFailedPending)
            }
        }
    }

    /// Fails receive `id` (posted or matched) if it waits for a failed rank.
    pub(super) fn refuse_recv(&self, g: &mut Inner, id: ReqId) {
        if g.reqs.get(id).is_none_or(|r| r.done) {
            return;
        }
        if let Some(class) = self.recv_failure(g, id) {
            if let Some(i) = g.posted.iter().position(|&p| p == id) {
                g.posted.remove(i);
            }
            self.fail(g, id, class);
        }
    }

    /// A send to a failed rank or on a revoked communicator completes at once with the error;
    /// returns whether it did.
    pub(super) fn refuse_send(&self, g: &mut Inner, id: ReqId, dest: usize, tag: i32, ctx: u32) -> bool {
        let class = if g.dead[dest] {
            ErrorClass::ProcFailed
        } else if Self::revoked(g, ctx, tag) {
            ErrorClass::Revoked
        } else {
            return false;
        };
        if let Some(r) = g.reqs.get_mut(id) {
            r.status.source = dest as i32;
        }
        self.fail(g, id, class);
        true
    }

    /// Whether traffic on context `ctx` with tag `tag` is refused by a revocation.
    pub(super) fn revoked(g: &Inner, ctx: u32, tag: i32) -> bool {
        g.revoked.contains(&(ctx & !1)) && !(ctx & 1 == 1 && is_ulfm_tag(tag))
    }

    /// MPIX_Comm_revoke: revokes context pair `ctx` here and at every live rank of `members`
    /// (world ranks, this one included or not).
    pub fn revoke(&self, ctx: u32, members: &[usize]) {
        let base = ctx & !1;
        let mut g = self.lock();
        self.faults.store(true, Ordering::Release);
        if g.revoked.insert(base) {
            self.fail_revoked(&mut g, base);
        }
        for &w in members {
            if w != self.me && !g.dead[w] {
                self.enqueue(&mut g, w, Out::Ctl { hdr: SlotHeader { kind: Kind::Revoke as u32, context: base, ..Default::default() } });
                self.flush_dest(&mut g, w);
            }
        }
        drop(g);
        // Other threads of this rank may wait on the revoked communicator.
        self.t.wake(self.me);
    }

    /// A peer revoked context pair `ctx`.
    pub(super) fn revoked_by_peer(&self, g: &mut Inner, ctx: u32) {
        self.faults.store(true, Ordering::Release);
        if g.revoked.insert(ctx & !1) {
            self.fail_revoked(g, ctx & !1);
        }
    }

    /// Whether context pair `ctx` is revoked (MPIX_Comm_is_revoked).
    pub fn is_revoked(&self, ctx: u32) -> bool {
        let mut g = self.lock();
        self.progress(&mut g);
        g.revoked.contains(&(ctx & !1))
    }

    /// Completes with ErrorClass::Revoked every pending operation on context pair `base`, except
    /// unmatched-yet work of shrink and agree.
    fn fail_revoked(&self, g: &mut Inner, base: u32) {
        let hit = |op: &Option<OpArgs>| match op {
            Some(OpArgs::Send { ctx, tag, .. }) | Some(OpArgs::Recv { ctx, tag, .. }) => ctx & !1 == base && !(ctx & 1 == 1 && is_ulfm_tag(*tag)),
            _ => false,
        };
        let mut failed = Vec::new();
        for d in 0..self.n {
            let reqs = &g.reqs;
            let gone: Vec<ReqId> = g.outq[d]
                .iter()
                .filter_map(|o| match o {
                    Out::Eager { req: Some(id), .. } | Out::Stream { req: id, .. } => Some(*id),
                    Out::Ctl { hdr } if hdr.kind == Kind::Rts as u32 => Some(hdr.sreq as u32),
                    _ => None,
                })
                .filter(|&id| reqs.get(id).is_some_and(|r| hit(&r.op)))
                .collect();
            if !gone.is_empty() {
                failed.extend(Self::drop_queued(g, d, |o| match o {
                    Out::Eager { req: Some(id), .. } | Out::Stream { req: id, .. } => gone.contains(id),
                    Out::Ctl { hdr } if hdr.kind == Kind::Rts as u32 => gone.contains(&(hdr.sreq as u32)),
                    _ => false,
                }));
            }
        }
        let posted: Vec<ReqId> = g.posted.iter().copied().filter(|&id| g.reqs.get(id).is_some_and(|r| hit(&r.op))).collect();
        g.posted.retain(|id| !posted.contains(id));
        failed.extend(posted);
        // Sends on the wire waiting for an answer the revoked peer may never give.
        failed.extend(g.reqs.ids().filter(|&id| g.reqs.get(id).is_some_and(|r| !r.done && r.active && matches!(r.op, Some(OpArgs::Send { .. })) && hit(&r.op))));
        failed.sort_unstable();
        failed.dedup();
        for id in failed {
            self.fail(g, id, ErrorClass::Revoked);
        }
    }
}
