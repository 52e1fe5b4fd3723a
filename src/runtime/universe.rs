//! The universe of one rank: who it is, the segment, the engine, the predefined communicators.
//! Created by MPI_Init, never torn down (MPI cannot be re-initialised after MPI_Finalize).
//!
//! In processes mode a process is one rank: one `RankSlot`. In threads mode (`runtime::threads`)
//! the process holds every rank of the job, one slot each, and a thread finds its rank through a
//! thread-local context set when the rank's thread starts (and inherited by the threads it creates).
use super::segment::{Segment, RANK_FINALIZED, RANK_INITIALIZED};
use super::wait::WaitPolicy;
use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::error::{err, MpiResult};
use crate::p2p::Engine;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

pub struct Universe {
    pub seg: Arc<Segment>,
    pub rank: usize,
    pub size: usize,
    pub engine: Engine,
    pub world: Comm,
    pub self_comm: Comm,
    /// User communicators (MPI_Comm_dup, split, ...).
    pub comms: crate::comm::table::CommTable,
    /// Issue order of MPI_Comm_idup per parent communicator.
    pub idups: crate::comm::idup::IdupOrder,
    /// Keyvals and communicator attributes of this rank (per rank: in threads mode the ranks of a
    /// process must not share them).
    pub attrs: crate::comm::attr::Attrs,
    /// Keyvals and attributes of datatypes (MPI 4.1 section 7.7.4), per rank like `attrs`; the
    /// same bookkeeping keyed by datatype handle.
    pub type_attrs: crate::comm::attr::Attrs,
    /// Thread level granted by MPI_Init_thread.
    pub thread_level: i32,
    /// `caller_id()` of the thread (or fiber) that initialised MPI.
    pub main_thread: u64,
    /// Started without mpiexec.
    pub singleton: bool,
    /// This rank's group objects (MPI_Group handles index it); per rank, so that in threads mode
    /// one rank's handles mean nothing to another.
    pub groups: crate::group::GroupTable,
    /// This rank's user-defined reduction ops (MPI_Op_create).
    pub ops: crate::op::user::OpTable,
    /// The error handler of MPI_FILE_NULL, the default for file operations (MPI_ERRORS_RETURN
    /// until set).
    pub file_errhandler: std::sync::atomic::AtomicI32,
    /// Persistent and queued nonblocking collective requests of this rank (`ffi::coll_launch`).
    pub coll_requests: crate::ffi::coll_launch::CollRequests,
    /// This rank's RMA windows (MPI_Win handles index it).
    pub wins: crate::osc::window::WinTable,
    /// Keyvals and attributes of windows (MPI 4.1 section 7.7.3), per rank like `attrs`.
    pub win_attrs: crate::comm::attr::Attrs,
}

const PHASE_NONE: u32 = 0;
const PHASE_INIT: u32 = 1;
const PHASE_FINALIZED: u32 = 2;

/// The MPI state of one rank.
pub struct RankSlot {
    universe: OnceLock<Universe>,
    /// PHASE_NONE until MPI_Init, PHASE_INIT until MPI_Finalize, then PHASE_FINALIZED.
    phase: AtomicU32,
    /// This rank's info objects. Here, not in the `Universe`, because MPI 4 allows the info
    /// functions before MPI_Init and after MPI_Finalize.
    infos: crate::info::InfoTable,
}

impl RankSlot {
    pub const fn new() -> RankSlot {
        RankSlot { universe: OnceLock::new(), phase: AtomicU32::new(PHASE_NONE), infos: crate::info::InfoTable::new() }
    }
    /// Called MPI_Init but not MPI_Finalize.
    pub fn is_active(&self) -> bool {
        self.phase.load(Ordering::Acquire) == PHASE_INIT
    }
}

impl Default for RankSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// The ranks of a threads-mode job, all in this process.
pub struct ThreadsJob {
    pub seg: Arc<Segment>,
    pub slots: Vec<RankSlot>,
    /// Ranks that got past start-up (called MPI_Init, or ended): the host starts ranks one after
    /// another so that their start-up code, which shares libc state such as getopt's, never overlaps.
    pub started: std::sync::Mutex<Vec<bool>>,
    pub started_cv: std::sync::Condvar,
    /// The program's arguments (argv[0] first) as every rank receives them: /proc/self/cmdline
    /// is the host's command line, not the program's (used by MPI_INFO_ENV).
    pub args: Vec<String>,
}

impl ThreadsJob {
    pub fn new(seg: Arc<Segment>, n: usize, args: Vec<String>) -> ThreadsJob {
        ThreadsJob { seg, slots: (0..n).map(|_| RankSlot::new()).collect(), started: std::sync::Mutex::new(vec![false; n]), started_cv: std::sync::Condvar::new(), args }
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

/// The one rank of a processes-mode (or singleton) process.
static PROCESS_SLOT: RankSlot = RankSlot::new();
/// Set once by the threads-mode host before any rank thread starts.
static THREADS_JOB: OnceLock<ThreadsJob> = OnceLock::new();

thread_local! {
    /// Threads mode: the rank the calling thread belongs to, -1 for none. Const-initialised, so
    /// reading it is a plain TLS load (also from a signal handler).
    static CONTEXT: Cell<i32> = const { Cell::new(-1) };
    /// The communicator whose handler a completion call's error goes to (`ffi::check`).
    static FAILED_COMM: Cell<i32> = const { Cell::new(crate::abi::MPI_COMM_WORLD) };
}

/// oxmpi's thread-local values of one rank. A rank running as a fiber (`threads::sched`) takes
/// them along when it parks: its carrier serves other ranks meanwhile and may even change.
#[derive(Clone, Copy, Debug)]
pub struct Locals {
    context: i32,
    failed_comm: i32,
}

impl Locals {
    /// The values of a thread that belongs to no rank.
    pub const fn none() -> Locals {
        Locals { context: -1, failed_comm: crate::abi::MPI_COMM_WORLD }
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

/// Notes the communicator whose handler the current completion call's error goes to.
#[inline(never)]
pub fn set_failed_comm(h: i32) {
    FAILED_COMM.with(|f| f.set(h));
}

/// The communicator noted by `set_failed_comm`, reset to MPI_COMM_WORLD.
#[inline(never)]
pub fn take_failed_comm() -> i32 {
    FAILED_COMM.with(|f| f.replace(crate::abi::MPI_COMM_WORLD))
}

/// Who is calling, for MPI_Is_thread_main: the rank's fiber (threads mode with fibers, where
/// several ranks share kernel threads), else the kernel thread.
pub fn caller_id() -> u64 {
    if crate::runtime::threads::sched::in_fiber() {
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

/// The slot of the calling thread's rank.
fn slot() -> MpiResult<&'static RankSlot> {
    match THREADS_JOB.get() {
        None => Ok(&PROCESS_SLOT),
        Some(job) => {
            let c = context();
            job.slots.get(c as usize).filter(|_| c >= 0).ok_or_else(|| {
                err(crate::abi::MPI_ERR_OTHER, "this thread belongs to no rank: in threads mode, call MPI from a rank's main thread or from threads it created")
            })
        }
    }
}

pub fn initialized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) != PHASE_NONE)
}
pub fn finalized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) == PHASE_FINALIZED)
}

/// The universe of an initialised, not yet finalised MPI.
pub fn get() -> MpiResult<&'static Universe> {
    let s = slot()?;
    match s.phase.load(Ordering::Acquire) {
        PHASE_INIT => Ok(s.universe.get().expect("phase says initialised")),
        PHASE_NONE => Err(err(crate::abi::MPI_ERR_OTHER, "MPI is not initialized; call MPI_Init or MPI_Init_thread first")),
        _ => Err(err(crate::abi::MPI_ERR_OTHER, "MPI has already been finalized (MPI_Finalize was called)")),
    }
}

/// The calling rank's info objects, in any phase (before MPI_Init too).
pub fn infos() -> MpiResult<&'static crate::info::InfoTable> {
    Ok(&slot()?.infos)
}

/// The program's arguments, argv[0] first: in threads mode those the host gave the ranks, else
/// this process's /proc/self/cmdline (std::env::args without its UTF-8 panics).
pub fn program_args() -> Vec<String> {
    if let Some(job) = THREADS_JOB.get() {
        return job.args.clone();
    }
    std::fs::read("/proc/self/cmdline")
        .map(|b| b.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
        .unwrap_or_default()
}

/// Whatever state exists, even after finalize (for error reporting).
pub fn peek() -> Option<&'static Universe> {
    slot().ok().and_then(|s| s.universe.get())
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Where this rank's segment comes from, and who it is.
fn locate() -> MpiResult<(Arc<Segment>, usize, bool, bool)> {
    if let Some(job) = THREADS_JOB.get() {
        let c = context();
        return Ok((job.seg.clone(), c as usize, false, true));
    }
    let fd = std::env::var(super::env::SHM_FD).ok().and_then(|v| v.parse::<i32>().ok());
    match fd {
        Some(fd) => {
            let seg = Segment::attach(fd).map_err(|e| err(crate::abi::MPI_ERR_OTHER, format!("cannot attach the job segment: {e}")))?;
            let rank = env_usize(super::env::RANK).ok_or_else(|| err(crate::abi::MPI_ERR_OTHER, "OXMPI_RANK is not set; start the program with oxmpi's mpiexec"))?;
            if rank >= seg.nranks() {
                return Err(err(crate::abi::MPI_ERR_OTHER, format!("OXMPI_RANK={rank} but the job has {} ranks", seg.nranks())));
            }
            Ok((Arc::new(seg), rank, false, false))
        }
        None => {
            let seg = Segment::anonymous(1).map_err(|e| err(crate::abi::MPI_ERR_NO_MEM, format!("cannot create a segment: {e}")))?;
            Ok((Arc::new(seg), 0, true, false))
        }
    }
}

/// MPI_Init / MPI_Init_thread. `default_errhandler` is the handle value of MPI_ERRORS_ARE_FATAL.
pub fn init(required: i32, default_errhandler: i32) -> MpiResult<&'static Universe> {
    let s = slot()?;
    if s.phase.load(Ordering::Acquire) != PHASE_NONE {
        return Err(err(crate::abi::MPI_ERR_OTHER, "MPI_Init or MPI_Init_thread was already called; MPI can be initialized only once"));
    }
    let (seg, rank, singleton, threads) = locate()?;
    let size = seg.nranks();
    if !threads {
        crate::transport::cma::allow_peers();
    }
    seg.rank(rank).pid.store(std::process::id() as i32, Ordering::Release);
    seg.rank(rank).state.store(RANK_INITIALIZED, Ordering::Release);
    let engine = Engine::new(seg.clone(), rank, WaitPolicy::choose(size));
    crate::monitoring::init(rank, size);
    engine.set_threaded(required >= crate::abi::MPI_THREAD_MULTIPLE);
    engine.set_local_peers(threads);
    let split = std::env::var("OXMPI_SPLIT").map(|v| v != "0").unwrap_or(true);
    engine.set_split_copies(split && size <= super::wait::available_cpus());
    let u = Universe {
        seg,
        rank,
        size,
        engine,
        world: Comm::new(WORLD_CONTEXT, (0..size).collect(), rank, default_errhandler).with_name("MPI_COMM_WORLD"),
        self_comm: Comm::new(SELF_CONTEXT, vec![rank], 0, default_errhandler).with_name("MPI_COMM_SELF"),
        comms: Default::default(),
        idups: Default::default(),
        attrs: Default::default(),
        type_attrs: Default::default(),
        thread_level: required.clamp(0, crate::abi::MPI_THREAD_MULTIPLE),
        main_thread: caller_id(),
        singleton,
        groups: crate::group::GroupTable::new(),
        ops: Default::default(),
        coll_requests: Default::default(),
        file_errhandler: std::sync::atomic::AtomicI32::new(crate::abi::MPI_ERRORS_RETURN),
        wins: Default::default(),
        win_attrs: Default::default(),
    };
    if s.universe.set(u).is_err() {
        return Err(err(crate::abi::MPI_ERR_OTHER, "MPI_Init raced with another MPI_Init"));
    }
    let u: &'static Universe = s.universe.get().unwrap();
    crate::ulfm::install(u);
    s.phase.store(PHASE_INIT, Ordering::Release);
    if threads {
        if let Some(job) = THREADS_JOB.get() {
            job.mark_started(rank);
        }
    }
    Ok(s.universe.get().unwrap())
}

/// MPI_Finalize: flushes pending traffic, tells the launcher this rank finished cleanly.
pub fn finalize() -> MpiResult {
    let u = get()?;
    u.engine.flush_all();
    u.seg.rank(u.rank).state.store(RANK_FINALIZED, Ordering::Release);
    slot()?.phase.store(PHASE_FINALIZED, Ordering::Release);
    Ok(())
}

/// Writes `message` and a newline to stderr with one write(2), so that lines of different ranks
/// (threads of one process in threads mode) never mix mid-line.
pub fn say(message: &str) {
    let line = format!("{message}\n");
    // SAFETY: writing a local buffer to file descriptor 2.
    unsafe { libc::write(2, line.as_ptr() as *const libc::c_void, line.len()) };
}

/// Ends the whole job: prints `message` (one line), records the abort for the launcher, exits.
pub fn abort_job(code: i32, message: &str) -> ! {
    // SAFETY: flush the program's buffered C stdio first so its output precedes our message.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    say(message);
    if let Some(u) = peek() {
        u.seg.record_abort(u.rank as i32, code);
    }
    // SAFETY: flushing C stdio so the program's own buffered output is not lost, then leaving
    // without running atexit handlers or destructors of a program in an unknown state.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let c = code & 0xff;
        libc::_exit(if c == 0 && code != 0 { 1 } else { c });
    }
}
