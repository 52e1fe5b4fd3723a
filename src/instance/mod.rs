//! The MPI instance of one rank: its universe (engine and communicators) and the registry of its
//! other objects (groups, ops, windows, attributes), created by MPI_Init and never torn down (MPI
//! cannot be re-initialised after MPI_Finalize).
//!
//! In processes mode a process is one rank: one `RankSlot`. In threads mode the process holds
//! every rank of the job, one slot each, found through the calling thread's rank context
//! (`runtime::job::context`).
use crate::comm::Universe;
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::Engine;
use crate::runtime::job::{caller_id, context, threads_job};
use crate::runtime::thread_level::ThreadLevel;
use crate::runtime::segment::{Segment, RANK_FINALIZED, RANK_INITIALIZED};
use crate::runtime::wait::WaitPolicy;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// One rank's MPI objects. Dereferences to its `Universe`, which the layers below take.
pub struct Instance {
    pub universe: Universe,
    /// Thread level granted by MPI_Init_thread.
    pub thread_level: ThreadLevel,
    /// `caller_id()` of the thread (or fiber) that initialised MPI.
    pub main_thread: u64,
    /// Started without mpiexec.
    pub singleton: bool,
    /// This rank's group objects (MPI_Group handles index it); per rank, so that in threads mode
    /// one rank's handles mean nothing to another.
    pub groups: crate::group::GroupTable,
    /// This rank's user-defined reduction ops (MPI_Op_create).
    pub ops: crate::op::user::OpTable,
    /// The error handler of MPI_FILE_NULL, the default for file operations (an opaque handle
    /// value of the C boundary).
    pub file_errhandler: std::sync::atomic::AtomicI32,
    /// This rank's RMA windows (MPI_Win handles index it).
    pub wins: crate::osc::window::WinTable,
}

impl std::ops::Deref for Instance {
    type Target = Universe;
    fn deref(&self) -> &Universe {
        &self.universe
    }
}

const PHASE_NONE: u32 = 0;
const PHASE_INIT: u32 = 1;
const PHASE_FINALIZED: u32 = 2;

/// The MPI state of one rank.
pub struct RankSlot {
    instance: OnceLock<Instance>,
    /// PHASE_NONE until MPI_Init, PHASE_INIT until MPI_Finalize, then PHASE_FINALIZED.
    phase: AtomicU32,
    /// This rank's info objects. Here, not in the `Instance`, because MPI 4 allows the info
    /// functions before MPI_Init and after MPI_Finalize.
    infos: crate::info::InfoTable,
}

impl RankSlot {
    pub const fn new() -> RankSlot {
        RankSlot { instance: OnceLock::new(), phase: AtomicU32::new(PHASE_NONE), infos: crate::info::InfoTable::new() }
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

/// The one rank of a processes-mode (or singleton) process.
static PROCESS_SLOT: RankSlot = RankSlot::new();
/// Threads mode: one slot per rank of the job, made at the first look-up.
static THREAD_SLOTS: OnceLock<Vec<RankSlot>> = OnceLock::new();

/// The slot of the calling thread's rank.
fn slot() -> MpiResult<&'static RankSlot> {
    match threads_job() {
        None => Ok(&PROCESS_SLOT),
        Some(job) => {
            let slots = THREAD_SLOTS.get_or_init(|| (0..job.nranks()).map(|_| RankSlot::new()).collect());
            let c = context();
            slots.get(c as usize).filter(|_| c >= 0).ok_or_else(|| {
                err(ErrorClass::Other, "this thread belongs to no rank: in threads mode, call MPI from a rank's main thread or from threads it created")
            })
        }
    }
}

/// Threads mode: whether rank `r` called MPI_Init and not yet MPI_Finalize.
pub fn rank_active(r: usize) -> bool {
    THREAD_SLOTS.get().and_then(|s| s.get(r)).is_some_and(RankSlot::is_active)
}

pub fn initialized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) != PHASE_NONE)
}
pub fn finalized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) == PHASE_FINALIZED)
}

/// The instance of an initialised, not yet finalised MPI.
pub fn get() -> MpiResult<&'static Instance> {
    let s = slot()?;
    match s.phase.load(Ordering::Acquire) {
        PHASE_INIT => Ok(s.instance.get().expect("phase says initialised")),
        PHASE_NONE => Err(err(ErrorClass::Other, "MPI is not initialized; call MPI_Init or MPI_Init_thread first")),
        _ => Err(err(ErrorClass::Other, "MPI has already been finalized (MPI_Finalize was called)")),
    }
}

/// The calling rank's info objects, in any phase (before MPI_Init too).
pub fn infos() -> MpiResult<&'static crate::info::InfoTable> {
    Ok(&slot()?.infos)
}

/// Whatever state exists, even after finalize (for error reporting).
pub fn peek() -> Option<&'static Instance> {
    slot().ok().and_then(|s| s.instance.get())
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Where this rank's segment comes from, and who it is.
fn locate() -> MpiResult<(Arc<Segment>, usize, bool, bool)> {
    use crate::runtime::env;
    if let Some(job) = threads_job() {
        let c = context();
        return Ok((job.seg.clone(), c as usize, false, true));
    }
    let fd = std::env::var(env::SHM_FD).ok().and_then(|v| v.parse::<i32>().ok());
    match fd {
        Some(fd) => {
            let seg = Segment::attach(fd).map_err(|e| err(ErrorClass::Other, format!("cannot attach the job segment: {e}")))?;
            let rank = env_usize(env::RANK).ok_or_else(|| err(ErrorClass::Other, "OXMPI_RANK is not set; start the program with oxmpi's mpiexec"))?;
            if rank >= seg.nranks() {
                return Err(err(ErrorClass::Other, format!("OXMPI_RANK={rank} but the job has {} ranks", seg.nranks())));
            }
            Ok((Arc::new(seg), rank, false, false))
        }
        None => {
            let seg = Segment::anonymous(1, crate::transport::shm::geometry(1)).map_err(|e| err(ErrorClass::NoMem, format!("cannot create a segment: {e}")))?;
            Ok((Arc::new(seg), 0, true, false))
        }
    }
}

/// MPI_Init / MPI_Init_thread with thread level `required` (every level is granted as asked).
/// `default_errhandler` is the handle value of MPI_ERRORS_ARE_FATAL and `file_errhandler` the
/// initial handler of MPI_FILE_NULL (the C boundary owns these encodings).
pub fn init(required: ThreadLevel, default_errhandler: i32, file_errhandler: i32) -> MpiResult<&'static Instance> {
    let s = slot()?;
    if s.phase.load(Ordering::Acquire) != PHASE_NONE {
        return Err(err(ErrorClass::Other, "MPI_Init or MPI_Init_thread was already called; MPI can be initialized only once"));
    }
    let (seg, rank, singleton, threads) = locate()?;
    let size = seg.nranks();
    seg.rank(rank).pid.store(std::process::id() as i32, Ordering::Release);
    seg.rank(rank).state.store(RANK_INITIALIZED, Ordering::Release);
    let engine = Engine::new(seg.clone(), rank, WaitPolicy::choose(size));
    crate::monitoring::init(rank, size);
    engine.set_threaded(required == ThreadLevel::Multiple);
    engine.set_local_peers(threads);
    let split = std::env::var("OXMPI_SPLIT").map(|v| v != "0").unwrap_or(true);
    engine.set_split_copies(split && size <= crate::runtime::wait::available_cpus());
    let inst = Instance {
        universe: Universe::new(seg, rank, engine, default_errhandler),
        thread_level: required,
        main_thread: caller_id(),
        singleton,
        groups: crate::group::GroupTable::new(),
        ops: Default::default(),
        file_errhandler: std::sync::atomic::AtomicI32::new(file_errhandler),
        wins: Default::default(),
    };
    if s.instance.set(inst).is_err() {
        return Err(err(ErrorClass::Other, "MPI_Init raced with another MPI_Init"));
    }
    let inst: &'static Instance = s.instance.get().unwrap();
    crate::ulfm::install(&inst.universe);
    s.phase.store(PHASE_INIT, Ordering::Release);
    if threads {
        if let Some(job) = threads_job() {
            job.mark_started(rank);
        }
    }
    Ok(inst)
}

/// MPI_Finalize: flushes pending traffic, tells the launcher this rank finished cleanly.
pub fn finalize() -> MpiResult {
    let u = get()?;
    u.engine.flush_all();
    u.seg.rank(u.rank).state.store(RANK_FINALIZED, Ordering::Release);
    slot()?.phase.store(PHASE_FINALIZED, Ordering::Release);
    Ok(())
}

/// Ends the whole job: prints `message` (one line), records the abort for the launcher, exits.
pub fn abort_job(code: i32, message: &str) -> ! {
    // SAFETY: flush the program's buffered C stdio first so its output precedes our message.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    crate::runtime::job::say(message);
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
