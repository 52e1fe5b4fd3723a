//! MPI_Comm_idup runs MPI_Comm_dup on a background thread. Its context agreement must pair up
//! across ranks in issue order per parent communicator (the only order MPI fixes), while idups of
//! different parents proceed independently, whatever order each rank issued them in. So every
//! idup takes a ticket for its parent and runs when the parent's earlier idups have finished.
use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

#[derive(Default)]
pub struct IdupOrder {
    /// Parent context id -> (next ticket to hand out, ticket whose turn it is).
    turns: Mutex<HashMap<u32, (u64, u64)>>,
    cv: Condvar,
}

impl IdupOrder {
    /// Takes the next ticket for `parent` (called in issue order, by the calling thread).
    pub fn ticket(&self, parent: u32) -> u64 {
        let mut t = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        let e = t.entry(parent).or_insert((0, 0));
        e.0 += 1;
        e.0 - 1
    }

    /// Blocks until it is `ticket`'s turn on `parent`.
    pub fn wait_turn(&self, parent: u32, ticket: u64) {
        let t = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        let _t = self.cv.wait_while(t, |t| t.get(&parent).is_some_and(|e| e.1 != ticket)).unwrap_or_else(|p| p.into_inner());
    }

    /// The current idup on `parent` finished: the next may run.
    pub fn done(&self, parent: u32) {
        let mut t = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = t.get_mut(&parent) {
            e.1 += 1;
        }
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    #[test]
    fn turns_follow_tickets_per_parent() {
        let o = Arc::new(IdupOrder::default());
        let (a, b) = (o.ticket(4), o.ticket(4));
        assert_eq!((a, b), (0, 1));
        assert_eq!(o.ticket(6), 0, "another parent has its own order");
        let o2 = o.clone();
        let second = std::thread::spawn(move || {
            o2.wait_turn(4, 1);
            o2.done(4);
        });
        o.wait_turn(4, 0);
        o.done(4);
        second.join().unwrap();
        o.wait_turn(6, 0);
    }
}
