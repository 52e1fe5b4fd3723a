//! Nonblocking and persistent collectives that have no schedule yet: the blocking algorithm, run
//! on a background worker thread of the communicator, completing an engine request.
//!
//! On intracommunicators every nonblocking and persistent collective of chapter 6 (barrier,
//! bcast, reduce, allreduce, gather, scatter, allgather, alltoall with their v/w forms,
//! reduce_scatter, scan, exscan) runs as a schedule the engine progresses (`schedule`, `nbc`),
//! with no thread. What still comes here: the intercommunicator forms and the neighborhood
//! collectives.
//!
//! Why a thread per communicator, not one per rank: MPI fixes the order of collectives only per
//! communicator. A rank may start Ibcast on A then on B while another starts B then A; one worker
//! per rank running jobs in order would deadlock there, one per communicator cannot. Jobs of one
//! communicator run in start order, which is the same on every rank, so they pair up; blocking
//! collectives the application runs meanwhile on the same communicator have their own sequence
//! tags (`Coll::next`), so they never take a job's messages.
//!
//! The thread that queues a job on a queue without a worker spawns one; the worker runs jobs in
//! start order and lingers a little when idle (`LINGER`), then exits. A collective therefore
//! progresses on its own (no MPI_Test needed), and an idle communicator costs no thread. A thread
//! that waits for a job's request before the worker got to it runs the job itself (`take`). While
//! it runs, a job waits like any rank thread (spin, yield, then sleep on the doorbell), so
//! oversubscribed jobs stay fast.
use crate::error::MpiResult;
use crate::p2p::ReqId;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A collective to run: it does the whole blocking operation and completes its request.
pub type Run = Box<dyn FnOnce() -> MpiResult + Send>;

/// How long an idle worker waits for the next job before its thread exits: long enough that a
/// loop of `MPI_I*` + `MPI_Wait` reuses one thread, short enough that idle communicators hold none.
const LINGER: Duration = Duration::from_millis(50);

/// The jobs of one communicator.
#[derive(Default)]
pub struct Queue {
    state: Mutex<State>,
    /// Signalled when a job is queued for a lingering worker.
    more: Condvar,
}

#[derive(Default)]
struct State {
    /// Jobs in start order, with the request each completes.
    jobs: VecDeque<(ReqId, Run)>,
    /// A worker thread exists (running a job or lingering).
    worker: bool,
}

impl Queue {
    /// Appends `job` (completing request `id`); returns true if the caller must start a worker
    /// thread running `drain` for this queue.
    pub fn push(&self, id: ReqId, job: Run) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.jobs.push_back((id, job));
        self.more.notify_one();
        !std::mem::replace(&mut s.worker, true)
    }

    /// Takes the job of request `id` if no worker has started it: a thread about to wait for
    /// that request runs it itself, which saves a hand-off to the worker. Running it out of turn
    /// is safe: every collective has its own tags, so jobs never depend on each other's order,
    /// only on every rank running each one.
    pub fn take(&self, id: ReqId) -> Option<Run> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let i = s.jobs.iter().position(|(r, _)| *r == id)?;
        s.jobs.remove(i).map(|(_, j)| j)
    }

    /// The worker's body: runs jobs in start order, lingers when idle, exits after `LINGER`
    /// without work. Each job completes its own request.
    pub fn drain(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some((_, job)) = s.jobs.pop_front() {
                drop(s);
                // A job reports its own errors through its request.
                let _ = job();
                s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let (g, timeout) = self.more.wait_timeout(s, LINGER).unwrap_or_else(|p| p.into_inner());
            s = g;
            if timeout.timed_out() && s.jobs.is_empty() {
                s.worker = false;
                return;
            }
        }
    }

    /// Removes the queued jobs and marks the queue workerless (the worker could not be
    /// started); the caller runs them.
    pub fn take_all(&self) -> Vec<Run> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.worker = false;
        s.jobs.drain(..).map(|(_, j)| j).collect()
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
            if q.push(i, Box::new(move || {
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

    #[test]
    fn a_queued_job_can_be_taken_once() {
        let q = Queue::default();
        assert!(q.push(7, Box::new(|| Ok(()))));
        assert!(!q.push(8, Box::new(|| Ok(()))), "one worker per queue");
        assert!(q.take(8).is_some());
        assert!(q.take(8).is_none());
        assert_eq!(q.take_all().len(), 1);
    }
}
