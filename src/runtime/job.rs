//! Which rank the calling thread acts for, and the threads-mode job this process may host.
//!
//! In processes mode a process is one rank. In threads mode (`runtime::threads`) the process
//! holds every rank of the job, and a thread finds its rank through a thread-local context set
//! when the rank's thread starts (and inherited by the threads it creates). The MPI objects of a
//! rank live above, in `instance`; this layer only knows rank numbers.
use super::segment::Segment;
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

/// The ranks of a threads-mode job, all in this process.
pub struct ThreadsJob {
    pub seg: Arc<Segment>,
    /// Ranks that got past start-up (called MPI_Init, or ended): the host starts ranks one after
    /// another so that their start-up code, which shares libc state such as getopt's, never overlaps.
    pub started: std::sync::Mutex<Vec<bool>>,
    pub started_cv: std::sync::Condvar,
    /// The program's arguments (argv[0] first) as the first world's ranks receive them, by
    /// slot (an MPMD job's segments differ): /proc/self/cmdline is the host's command line, not
    /// the program's (used by MPI_INFO_ENV).
    pub args: Vec<Vec<String>>,
}

impl ThreadsJob {
    pub fn new(seg: Arc<Segment>, n: usize, args: Vec<Vec<String>>) -> ThreadsJob {
        ThreadsJob { seg, started: std::sync::Mutex::new(vec![false; n]), started_cv: std::sync::Condvar::new(), args }
    }

    /// Number of ranks of the job.
    pub fn nranks(&self) -> usize {
        self.seg.nranks()
    }

    /// Rank `r` is past its start-up: the host may start the next one.
    pub fn mark_started(&self, r: usize) {
        let mut s = self.started.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(x) = s.get_mut(r) {
            *x = true;
        }
        self.started_cv.notify_all();
    }

    /// Waits until rank `r` is past its start-up, at most `limit`.
    pub fn wait_started(&self, r: usize, limit: std::time::Duration) {
        let s = self.started.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.started_cv.wait_timeout_while(s, limit, |s| !s[r]);
    }
}

/// Set once by the threads-mode host before any rank thread starts.
static THREADS_JOB: OnceLock<ThreadsJob> = OnceLock::new();

thread_local! {
    /// Threads mode: the rank the calling thread belongs to, -1 for none. Const-initialised, so
    /// reading it is a plain TLS load (also from a signal handler).
    static CONTEXT: Cell<i32> = const { Cell::new(-1) };
    /// The communicator handle, noted by the C boundary, whose handler a completion call's error
    /// goes to; opaque here.
    static FAILED_COMM: Cell<Option<i32>> = const { Cell::new(None) };
}

/// oxmpi's thread-local values of one rank. A rank running as a fiber (`threads::sched`) takes
/// them along when it parks: its carrier serves other ranks meanwhile and may even change.
#[derive(Clone, Copy, Debug)]
pub struct Locals {
    context: i32,
    failed_comm: Option<i32>,
}

impl Locals {
    /// The values of a thread that belongs to no rank.
    pub const fn none() -> Locals {
        Locals { context: -1, failed_comm: None }
    }

    /// The values a rank's fiber starts with.
    pub fn for_rank(rank: usize) -> Locals {
        Locals { context: rank as i32, ..Locals::none() }
    }

    /// Makes `self` the calling thread's values.
    pub fn restore(&self) {
        CONTEXT.with(|c| c.set(self.context));
        FAILED_COMM.with(|c| c.set(self.failed_comm));
    }

    /// Takes the calling thread's values, leaving those of no rank.
    pub fn take() -> Locals {
        let l = Locals { context: context(), failed_comm: FAILED_COMM.with(|c| c.get()) };
        Locals::none().restore();
        l
    }
}

/// Notes the communicator handle whose handler the current completion call's error goes to.
#[inline(never)]
pub fn set_failed_comm(h: i32) {
    FAILED_COMM.with(|f| f.set(Some(h)));
}

/// The handle noted by `set_failed_comm` (None if none), reset for the next call.
#[inline(never)]
pub fn take_failed_comm() -> Option<i32> {
    FAILED_COMM.with(|f| f.replace(None))
}

/// Who is calling, for MPI_Is_thread_main: the rank's fiber (threads mode with fibers, where
/// several ranks share kernel threads), else the kernel thread.
pub fn caller_id() -> u64 {
    if super::threads::sched::in_fiber() {
        return (1 << 63) | context() as u64;
    }
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// Threads mode: installs the job (once, before rank threads start). Returns false if one exists.
pub fn install_threads_job(job: ThreadsJob) -> bool {
    THREADS_JOB.set(job).is_ok()
}

pub fn threads_job() -> Option<&'static ThreadsJob> {
    THREADS_JOB.get()
}

/// The calling thread's rank context (threads mode), -1 if none. Never inlined, here and in the
/// other accessors of these thread locals: a rank fiber may resume on another carrier thread
/// (`threads::sched`), so a thread local's address must not be computed once and reused across
/// a wait, which the compiler may do with an inlined access.
#[inline(never)]
pub fn context() -> i32 {
    CONTEXT.with(|c| c.get())
}

/// Makes the calling thread act for rank `ctx` (-1: for none).
#[inline(never)]
pub fn set_context(ctx: i32) {
    CONTEXT.with(|c| c.set(ctx));
}

/// The program's arguments, argv[0] first: in threads mode those the host gave the ranks, else
/// this process's /proc/self/cmdline (std::env::args without its UTF-8 panics).
pub fn program_args() -> Vec<String> {
    if let Some(job) = THREADS_JOB.get() {
        // The calling rank's; a spawned rank's slot above them: the first rank's (as before).
        let mine = usize::try_from(context()).ok().and_then(|r| job.args.get(r));
        return mine.or(job.args.first()).cloned().unwrap_or_default();
    }
    std::fs::read("/proc/self/cmdline")
        .map(|b| b.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
        .unwrap_or_default()
}

/// Writes `message` and a newline to stderr with one write(2), so that lines of different ranks
/// (threads of one process in threads mode) never mix mid-line.
pub fn say(message: &str) {
    let line = format!("{message}\n");
    // SAFETY: writing a local buffer to file descriptor 2.
    unsafe { libc::write(2, line.as_ptr() as *const libc::c_void, line.len()) };
}
