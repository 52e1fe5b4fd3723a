//! Messages of freed communicators (issue 22): they never reach the communicator that reuses
//! the context pair, and their senders are released.
//!
//! Freeing a communicator with messages nobody received is erroneous for the program, but must
//! not corrupt a later communicator. Context ids carry a generation (`p2p::incarnation`), so no
//! receive of a later communicator matches them; `retire_context` also drops them here, the
//! unexpected ones at once and those still on their way when they arrive, answering what their
//! senders wait for (a rendezvous Fin, a synchronous send's acknowledgement) so that no sender
//! hangs. A receive still posted on the freed communicator keeps matching its messages: MPI 4.1
//! section 7.4.3 lets pending operations on a freed communicator complete normally.
use super::{Body, Engine, Inner, Out, Unexpected};
use crate::transport::packet::{Kind, SlotHeader, FLAG_SYNC};
use crate::transport::Transport;

impl<X: Transport> Engine<X> {
    /// The communicator of context id `ctx` (the point-to-point one of its pair) is freed at this
    /// rank: its unexpected messages go, later ones for it are dropped on arrival, and a revocation
    /// of it no longer counts (nor will a late one).
    pub fn retire_context(&self, ctx: u32) {
        let mut g = self.lock();
        self.progress(&mut g);
        g.floors.retire(ctx);
        g.revoked.remove(&(ctx & !1));
        let (stale, keep): (Vec<Unexpected>, Vec<Unexpected>) = std::mem::take(&mut g.unexpected).into_iter().partition(|u| g.floors.is_stale(u.ctx));
        g.unexpected = keep.into();
        self.gauges.set_unexpected(g.unexpected.len());
        for u in stale {
            self.release_sender(&mut g, u.src, &u.body);
        }
    }

    /// Whether an arriving Eager or Rts `hdr` from `src`, which no posted receive matched, belongs
    /// to a freed communicator; if so its sender is released and the message dropped.
    pub(super) fn dropped_stale(&self, g: &mut Inner, src: usize, hdr: &SlotHeader) -> bool {
        if !g.floors.is_stale(hdr.context) {
            return false;
        }
        let body = if hdr.kind == Kind::Rts as u32 {
            Body::Rts { sreq: hdr.sreq, remote: super::Remote::from_rts(hdr), flags: hdr.flags }
        } else {
            Body::Eager { data: Vec::new(), sync_sreq: (hdr.flags & FLAG_SYNC != 0).then_some(hdr.sreq) }
        };
        self.release_sender(g, src, &body);
        true
    }

    /// Answers what the sender of a dropped message waits for, if anything.
    fn release_sender(&self, g: &mut Inner, src: usize, body: &Body) {
        let answer = match *body {
            Body::Eager { sync_sreq: Some(sreq), .. } => SlotHeader { kind: Kind::SyncAck as u32, sreq, ..Default::default() },
            Body::Rts { sreq, ref remote, .. } => {
                // An off-node sender's payload waits in the transport until read or dropped.
                if self.t.locality(src) == crate::transport::Locality::OtherNode {
                    self.t.drop_payload(src, remote.addr);
                }
                SlotHeader { kind: Kind::Fin as u32, sreq, ..Default::default() }
            }
            Body::Eager { sync_sreq: None, .. } => return,
        };
        if !g.dead[src] {
            self.enqueue(g, src, Out::Ctl { hdr: answer });
            self.flush_dest(g, src);
        }
    }
}
