//! The I/O worker of nonblocking data access (MPI_File_iread*, iwrite*): a small pool of threads
//! per process that run the transfers while the ranks compute. Threads rather than io_uring:
//! a transfer is the whole `transfer` path (data sieving under byte-range locks, datarep
//! conversion, atomic mode's lock), not one syscall, and a thread pool works the same in both
//! rank modes (threads-mode ranks of one process share it; a fiber never blocks on it).
//!
//! Threads start on demand, up to `OXMPI_IO_THREADS` (default 4: the transfers wait on storage
//! more than they use a CPU), and then stay, sleeping on a condition variable while idle. Jobs
//! run in submission order but several at once, so requests complete in any order.
//!
//! `Serial` runs the nonblocking collectives of one file and rank one after another on a thread
//! of their own: a collective waits for the other ranks, so it must not hold a pool thread (the
//! ranks of a threads-mode process share the pool, and a rank's collective could wait for one
//! queued behind it). `Outstanding` counts a file's transfers not yet done: closing a file waits
//! for them.
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

struct State {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
}

static POOL: Pool = Pool { state: Mutex::new(State { jobs: VecDeque::new(), threads: 0, idle: 0 }), work: Condvar::new() };

/// The most threads the pool starts (`OXMPI_IO_THREADS`, 1 to 64).
fn max_threads() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| std::env::var("OXMPI_IO_THREADS").ok().and_then(|v| v.trim().parse().ok()).map_or(4, |n: usize| n.clamp(1, 64)))
}

/// Runs `job` on a worker thread. When no thread can be started at all, runs it here (the
/// access then completes at the call, which the standard allows).
pub fn submit(job: impl FnOnce() + Send + 'static) {
    let mut s = POOL.state.lock().unwrap_or_else(|p| p.into_inner());
    s.jobs.push_back(Box::new(job));
    if s.idle < s.jobs.len() && s.threads < max_threads() {
        match std::thread::Builder::new().name("oxmpi-io".into()).spawn(serve) {
            Ok(_) => s.threads += 1,
            Err(_) if s.threads == 0 => {
                let job = s.jobs.pop_back().expect("just queued");
                drop(s);
                job();
                return;
            }
            // The running threads will get to it.
            Err(_) => {}
        }
    }
    drop(s);
    POOL.work.notify_one();
}

/// A worker thread: runs queued jobs, sleeps while there are none.
fn serve() {
    let mut s = POOL.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if let Some(job) = s.jobs.pop_front() {
            drop(s);
            // A job completes its request itself, also on failure; a panic in it (a bug) must
            // not take the pool thread's count with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            s = POOL.state.lock().unwrap_or_else(|p| p.into_inner());
            continue;
        }
        s.idle += 1;
        s = POOL.work.wait(s).unwrap_or_else(|p| p.into_inner());
        s.idle -= 1;
    }
}

/// The transfers of one file still with the worker.
#[derive(Default)]
pub struct Outstanding {
    n: Mutex<usize>,
    none: Condvar,
}

impl Outstanding {
    pub fn begin(&self) {
        *self.n.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    }

    pub fn end(&self) {
        let mut n = self.n.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        if *n == 0 {
            self.none.notify_all();
        }
    }

    /// Blocks until no transfer is outstanding.
    pub fn wait_none(&self) {
        let mut n = self.n.lock().unwrap_or_else(|p| p.into_inner());
        while *n > 0 {
            n = self.none.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Jobs run one after another in submission order, on a thread started when the first is
/// submitted and ended when none is left.
#[derive(Default)]
pub struct Serial {
    /// The queue, and whether a thread serves it.
    q: Arc<Mutex<(VecDeque<Job>, bool)>>,
}

impl Serial {
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) {
        let mut g = self.q.lock().unwrap_or_else(|p| p.into_inner());
        g.0.push_back(Box::new(job));
        if g.1 {
            return;
        }
        g.1 = true;
        drop(g);
        let q = self.q.clone();
        let serve = move || loop {
            let job = {
                let mut g = q.lock().unwrap_or_else(|p| p.into_inner());
                match g.0.pop_front() {
                    Some(j) => j,
                    None => {
                        g.1 = false;
                        return;
                    }
                }
            };
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        };
        let q = self.q.clone();
        if std::thread::Builder::new().name("oxmpi-io-coll".into()).spawn(serve).is_err() {
            // No thread: the jobs run here, at the call (blocking, as a blocking collective).
            loop {
                let job = {
                    let mut g = q.lock().unwrap_or_else(|p| p.into_inner());
                    match g.0.pop_front() {
                        Some(j) => j,
                        None => {
                            g.1 = false;
                            return;
                        }
                    }
                };
                job();
            }
        }
    }
}
