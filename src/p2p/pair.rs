//! One request for a send and a receive that run together (MPI_Isendrecv,
//! MPI_Isendrecv_replace; MPI 4.1 section 3.10): an external engine request that this rank's
//! progress hook completes once both parts are done, with the receive's status (or the send's
//! error if only the send failed).
use super::engine::{Engine, Progress};
use super::{ReqId, Status};
use crate::transport::Transport;
use std::sync::{Arc, Mutex};

struct Pair {
    /// The request the application holds.
    outer: ReqId,
    /// The parts still running (None once done, or for MPI_PROC_NULL).
    send: Option<ReqId>,
    recv: Option<ReqId>,
    /// The send's status once done (its error matters when the receive succeeds).
    send_status: Option<Status>,
    recv_status: Option<Status>,
    /// Packed send data of MPI_Isendrecv_replace, kept until the send is done.
    _keep: Option<Vec<u8>>,
}

/// The running send-receive pairs of one rank (its engine's progress hook).
#[derive(Default)]
pub struct Pairs {
    runs: Mutex<Vec<Pair>>,
}

impl Pairs {
    pub fn of<X: Transport>(e: &Engine<X>) -> Arc<Pairs> {
        e.hook(Pairs::default)
    }

    /// A request for send `send` and receive `recv` (None: with MPI_PROC_NULL) already started;
    /// `keep` is memory the send reads from, released when it is done.
    pub fn start<X: Transport>(&self, e: &Engine<X>, send: Option<ReqId>, recv: Option<ReqId>, keep: Option<Vec<u8>>) -> ReqId {
        let outer = e.new_external();
        let pair = Pair {
            outer,
            send,
            recv,
            send_status: send.is_none().then(Status::proc_null),
            recv_status: recv.is_none().then(Status::proc_null),
            _keep: keep,
        };
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).push(pair);
        e.hook_busy(true);
        // Parts with MPI_PROC_NULL only, or already done: complete now.
        self.progress(e);
        outer
    }
}

impl<X: Transport> Progress<X> for Pairs {
    fn progress(&self, e: &Engine<X>) -> bool {
        // Another thread of this rank is at it: report movement so this waiter looks again.
        let Ok(mut runs) = self.runs.try_lock() else { return true };
        let mut moved = false;
        let mut i = 0;
        while i < runs.len() {
            let p = &mut runs[i];
            if let Some(s) = p.send {
                if let Some(st) = e.take_done(s) {
                    p.send_status = Some(st);
                    p.send = None;
                    p._keep = None;
                }
            }
            if let Some(r) = p.recv {
                if let Some(st) = e.take_done(r) {
                    p.recv_status = Some(st);
                    p.recv = None;
                }
            }
            if let (Some(ss), Some(rs)) = (p.send_status, p.recv_status) {
                let mut st = rs;
                st.error = rs.error.or(ss.error);
                if st.error.is_some() && rs.error.is_none() {
                    st.context = ss.context;
                }
                let outer = p.outer;
                runs.swap_remove(i);
                e.complete_external_status(outer, st);
                e.hook_busy(false);
                moved = true;
            } else {
                i += 1;
            }
        }
        moved
    }
}
