//! Nonblocking and persistent collectives: the blocking algorithm, run on a background worker
//! thread of the communicator, completing an engine request.
//!
//! Why a thread per communicator, not one per rank: MPI fixes the order of collectives only per
//! communicator. A rank may start Ibcast on A then on B while another starts B then A; one worker
//! per rank running jobs in order would deadlock there, one per communicator cannot. Jobs of one
//! communicator run in start order, which is the same on every rank, so they pair up; blocking
//! collectives the application runs meanwhile on the same communicator have their own sequence
//! tags (`Coll::next`), so they never take a job's messages.
//!
//! The worker exists only while jobs are queued: the thread that queues a job on an idle queue
//! spawns it, and it exits when the queue is empty. A collective therefore progresses on its own
//! (no MPI_Test needed), and an idle communicator costs no thread. While it runs, the worker waits
//! like any rank thread (spin, yield, then sleep on the doorbell), so oversubscribed jobs stay fast.
use crate::error::MpiResult;
use std::collections::VecDeque;
use std::sync::Mutex;

/// A collective to run: given its `Coll` (built by the worker from the sequence number taken at
/// start), it does the whole blocking operation.
pub type Run = Box<dyn FnOnce() -> MpiResult + Send>;

/// The jobs of one communicator.
#[derive(Default)]
pub struct Queue {
    /// (jobs in start order, whether a worker thread is draining them).
    state: Mutex<(VecDeque<Run>, bool)>,
}

impl Queue {
    /// Appends `job`; returns true if the caller must start a worker (`drain`) for this queue.
    pub fn push(&self, job: Run) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0.push_back(job);
        !std::mem::replace(&mut s.1, true)
    }

    /// Runs jobs until the queue is empty (the worker's body). Each job completes its own request.
    pub fn drain(&self) {
        loop {
            let job = {
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                match s.0.pop_front() {
                    Some(j) => j,
                    None => {
                        s.1 = false;
                        return;
                    }
                }
            };
            // A job reports its own errors through its request; the result is only for callers
            // that run jobs inline.
            let _ = job();
        }
    }

    /// Removes the queued jobs and marks the queue idle (the worker could not be started); the
    /// caller fails them.
    pub fn take_all(&self) -> Vec<Run> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1 = false;
        s.0.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn jobs_run_in_order_and_one_worker_at_a_time() {
        let q = Arc::new(Queue::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let spawned = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for i in 0..200 {
            let l = log.clone();
            if q.push(Box::new(move || {
                l.lock().unwrap().push(i);
                Ok(())
            })) {
                spawned.fetch_add(1, Ordering::Relaxed);
                let q2 = q.clone();
                handles.push(std::thread::spawn(move || q2.drain()));
            }
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(*log.lock().unwrap(), (0..200).collect::<Vec<_>>());
        assert!(spawned.load(Ordering::Relaxed) >= 1);
    }
}
