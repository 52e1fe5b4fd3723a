//! The MPI instance of one rank: its universe (engine and communicators) and the registry of its
//! other objects (groups, ops, windows, attributes, sessions), created by MPI_Init or the first
//! MPI_Session_init, whichever comes first, and never torn down.
//!
//! Two things keep MPI usable on a rank: the World model (MPI_Init until MPI_Finalize; `phase`,
//! which alone answers MPI_Initialized and MPI_Finalized) and live sessions (MPI 4.1 section
//! 11.3: before MPI_Init, beside it, after MPI_Finalize). The launcher counts a rank as inside MPI
//! while either holds.
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
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// One rank's MPI objects. Dereferences to its `Universe`, which the layers below take.
pub struct Instance {
    pub universe: Universe,
    /// Thread level granted by MPI_Init_thread (the first session's until MPI_Init).
    thread_level: std::sync::atomic::AtomicU8,
    /// `caller_id()` of the thread (or fiber) that initialised MPI.
    main_thread: std::sync::atomic::AtomicU64,
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
    /// This rank's open files (MPI_File handles name them).
    pub files: crate::io::file::FileTable,
    /// This rank's live MPI sessions (MPI_Session handles index it).
    pub sessions: crate::session::SessionTable,
}

impl Instance {
    /// Thread level granted by MPI_Init_thread (before MPI_Init: the first session's).
    pub fn thread_level(&self) -> ThreadLevel {
        match self.thread_level.load(Ordering::Acquire) {
            0 => ThreadLevel::Single,
            1 => ThreadLevel::Funneled,
            2 => ThreadLevel::Serialized,
            _ => ThreadLevel::Multiple,
        }
    }
    /// `caller_id()` of the thread (or fiber) that called MPI_Init (before it: the first
    /// MPI_Session_init).
    pub fn main_thread(&self) -> u64 {
        self.main_thread.load(Ordering::Acquire)
    }
    /// Records a level asked for: the engine serves several threads at once from the first
    /// MPI_THREAD_MULTIPLE on (a session's or MPI_Init_thread's) and never goes back.
    fn grant(&self, level: ThreadLevel) {
        if level == ThreadLevel::Multiple {
            self.engine.set_threaded(true);
        }
    }
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
    /// Serialises the making of this rank's instance (MPI_Init and MPI_Session_init from two
    /// threads). Per rank: in threads mode over nodes, making one rank's instance waits in a PMI
    /// fence for the other ranks of its host, which make theirs meanwhile.
    making: std::sync::Mutex<()>,
}

impl RankSlot {
    pub const fn new() -> RankSlot {
        RankSlot { instance: OnceLock::new(), phase: AtomicU32::new(PHASE_NONE), infos: crate::info::InfoTable::new(), making: std::sync::Mutex::new(()) }
    }
    /// Inside MPI: called MPI_Init but not MPI_Finalize, or holds a live session.
    pub fn is_active(&self) -> bool {
        self.phase.load(Ordering::Acquire) == PHASE_INIT || self.instance.get().is_some_and(|i| i.sessions.live() > 0)
    }
}

impl Default for RankSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// The one rank of a processes-mode (or singleton) process.
static PROCESS_SLOT: RankSlot = RankSlot::new();
/// Threads mode: one slot per rank of the job, made at the first look-up. A slot is a leaked
/// box, replaced when a finished spawned rank's slot goes to a new rank (`recycle_rank`).
static THREAD_SLOTS: OnceLock<Vec<AtomicPtr<RankSlot>>> = OnceLock::new();

fn thread_slots(n: usize) -> &'static [AtomicPtr<RankSlot>] {
    THREAD_SLOTS.get_or_init(|| (0..n).map(|_| AtomicPtr::new(Box::into_raw(Box::new(RankSlot::new())))).collect())
}

/// Threads mode: the slot of rank `r`, if the job has it.
fn thread_slot(r: usize) -> Option<&'static RankSlot> {
    let job = threads_job()?;
    // Acquire: pairs with the Release swap of `recycle_rank`, so the new box is seen initialised.
    let p = thread_slots(job.nranks()).get(r)?.load(Ordering::Acquire);
    // SAFETY: every pointer stored is a leaked Box, never freed (see `recycle_rank`).
    Some(unsafe { &*p })
}

/// The slot of the calling thread's rank.
fn slot() -> MpiResult<&'static RankSlot> {
    match threads_job() {
        None => Ok(&PROCESS_SLOT),
        Some(_) => {
            let c = context();
            (if c >= 0 { thread_slot(c as usize) } else { None }).ok_or_else(|| {
                err(ErrorClass::Other, "this thread belongs to no rank: in threads mode, call MPI from a rank's main thread or from threads it created")
            })
        }
    }
}

/// Threads mode: whether rank `r` is inside MPI (see `RankSlot::is_active`).
pub fn rank_active(r: usize) -> bool {
    thread_slot(r).is_some_and(RankSlot::is_active)
}

/// Threads mode: gives slot `r`, whose spawned rank finished (MPI finalized, its thread or fiber
/// gone), a fresh MPI state for the next rank spawned there. The old state is left allocated,
/// not dropped: `&'static` references to it were handed out (`get`), and though only the
/// finished rank's own threads held them, its windows' helper threads or a caller racing on a
/// stale pointer must never see freed memory. Its monitoring row is zeroed (the new rank's
/// counts start afresh; other ranks' counts to the slot stay, as sent to that world rank).
pub fn recycle_rank(r: usize) {
    let Some(job) = threads_job() else { return };
    if let Some(p) = thread_slots(job.nranks()).get(r) {
        p.store(Box::into_raw(Box::new(RankSlot::new())), Ordering::Release);
    }
    if let Some(row) = crate::monitoring::existing_row(r) {
        row.clear();
    }
}

pub fn initialized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) != PHASE_NONE)
}
pub fn finalized() -> bool {
    slot().is_ok_and(|s| s.phase.load(Ordering::Acquire) == PHASE_FINALIZED)
}

/// The instance of an initialised, not yet finalised MPI, or of a rank with a live session.
pub fn get() -> MpiResult<&'static Instance> {
    let s = slot()?;
    match s.phase.load(Ordering::Acquire) {
        PHASE_INIT => Ok(s.instance.get().expect("phase says initialised")),
        _ if s.is_active() => Ok(s.instance.get().expect("a live session has an instance")),
        PHASE_NONE => Err(err(ErrorClass::Other, "MPI is not initialized; call MPI_Init, MPI_Init_thread or MPI_Session_init first")),
        _ => Err(err(ErrorClass::Other, "MPI has already been finalized (MPI_Finalize was called) and no session is open")),
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

/// This rank's MPI_COMM_WORLD in slots of the segment: the initial ranks, or those of one spawn
/// (`runtime::spawned`).
fn world_of(seg: &Segment, slot: usize) -> MpiResult<Vec<usize>> {
    match crate::runtime::spawned::of(slot, seg.nranks()).map_err(|m| err(ErrorClass::Other, m))? {
        Some(s) => Ok(s.world),
        None => Ok((0..seg.initial()).collect()),
    }
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
            // Started by a foreign launcher that speaks PMI (hydra, srun --mpi=pmi2)?
            if let Some(p) = crate::runtime::pmi::connect_from_env().map_err(|m| err(ErrorClass::Other, m))? {
                // Installed first, so that a failure to form the job reaches the launcher as
                // a PMI abort (abort_job).
                let p = crate::runtime::pmi::install(p);
                let seg = crate::runtime::pmi_job::form(p, crate::transport::shm::geometry(p.size())).map_err(|m| err(ErrorClass::Other, m))?;
                return Ok((Arc::new(seg), p.rank(), false, false));
            }
            // A launcher we cannot talk to must not get N singletons.
            if let Some(m) = crate::runtime::pmi::foreign::unsupported(&|k| std::env::var(k).ok()) {
                return Err(err(ErrorClass::Other, m));
            }
            let seg = Segment::anonymous(1, crate::transport::shm::geometry(1)).map_err(|e| err(ErrorClass::NoMem, format!("cannot create a segment: {e}")))?;
            Ok((Arc::new(seg), 0, true, false))
        }
    }
}

/// The engine of rank `rank` of a job over several nodes (`node_of`, from `mpiexec --nodes`):
/// shared memory inside its node's segment `seg`, UCX to the other nodes, connected through the
/// launcher's PMI server. Such a rank polls UCX while it waits, so it never sleeps on its futex.
///
/// In threads mode the process is one node's host and its ranks are threads: each has its own
/// PMI connection (`node_map::HOST_ENV`), used for the wire-up, then kept for the rank's abort
/// (`abort_job`), which must reach the node's agent before the host's exit does.
fn spanning_engine(seg: &Arc<Segment>, rank: usize, node_of: &[usize], threads: bool) -> MpiResult<Engine> {
    let fail = |m: String| err(ErrorClass::Other, m);
    let pmi = match crate::runtime::pmi::client() {
        Some(p) => p,
        None if threads => {
            // Past its start-up code: the host may start the next rank, which this one's
            // wire-up waits for.
            if let Some(job) = threads_job() {
                job.mark_started(rank);
            }
            crate::runtime::pmi::install_for_rank(rank, rank_pmi(rank, node_of.len()).map_err(fail)?)
        }
        None => {
            let p = crate::runtime::pmi::connect_from_env().map_err(fail)?.ok_or_else(|| fail(format!("{} is set but PMI_FD is not: start the program with oxmpi's mpiexec --nodes", crate::runtime::node_map::ENV)))?;
            crate::runtime::pmi::install(p)
        }
    };
    let t = crate::transport::nodes::Nodes::connect(crate::transport::shm::Shm::new(seg.clone(), rank), rank, node_of, pmi).map_err(fail)?;
    Ok(Engine::over(t, rank, spanning_policy(seg.occupied())))
}

/// Default of OXMPI_NET_LINGER_US: a one-way latency over TCP is a few microseconds, so a rank
/// waiting for an answer over the network gets it within this spin most of the time.
const NET_LINGER_US: u64 = 20;

/// How a rank of a job over nodes waits: never blocked (no doorbell covers UCX), looking at its
/// channels (each look progresses UCX). With a CPU per rank on its node, it looks for
/// OXMPI_NET_LINGER_US before it yields between looks: yielding at once made every other
/// syscall of a wait a sched_yield (0.4-0.8 us each here, against 0.2 us for UCX's epoll_wait),
/// so an answer mostly arrived during one, and MPICH, which only spins on ucp_worker_progress,
/// answered faster. With more ranks than CPUs, 16 looks, then a yield between looks (a partner
/// may need the core). OXMPI_WAIT=spin never yields.
fn spanning_policy(ranks_on_node: usize) -> WaitPolicy {
    if std::env::var("OXMPI_WAIT").is_ok_and(|m| m == "spin") {
        return WaitPolicy { spins: u32::MAX, yields: 0, block: false, linger: std::time::Duration::ZERO };
    }
    let linger = if ranks_on_node > crate::runtime::wait::available_cpus() {
        0
    } else {
        std::env::var("OXMPI_NET_LINGER_US").ok().and_then(|v| v.parse().ok()).unwrap_or(NET_LINGER_US)
    };
    WaitPolicy { spins: 16, yields: u32::MAX, block: false, linger: std::time::Duration::from_micros(linger) }
}

/// The PMI connection of rank `rank` (of `size`), a thread of a node's threads-mode host: its
/// descriptor from `node_map::HOST_ENV`, taken once.
fn rank_pmi(rank: usize, size: usize) -> Result<Box<dyn crate::runtime::pmi::Pmi>, String> {
    use std::os::fd::FromRawFd;
    let env = crate::runtime::node_map::HOST_ENV;
    let (first, fds) = crate::runtime::node_map::host_from_env(size)?.ok_or_else(|| format!("{} is set but {env} is not: start the program with oxmpi's mpiexec --nodes", crate::runtime::node_map::ENV))?;
    let fd = *rank.checked_sub(first).and_then(|i| fds.get(i)).ok_or_else(|| format!("{env} names no PMI descriptor for rank {rank}"))?;
    // SAFETY: F_GETFD on a number only inspects the descriptor table.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(format!("{env}: rank {rank}'s PMI descriptor {fd} is not open"));
    }
    // SAFETY: mpiexec gave this descriptor to rank `rank` alone, whose instance is made once
    // (under its slot's `making` lock), so it is owned here once.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let p = crate::runtime::pmi::pmi1::Pmi1::start(fd, None, Some((rank, size))).map_err(|e| format!("rank {rank}: PMI-1 with mpiexec failed: {e}"))?;
    Ok(Box::new(p))
}

/// The rank's instance, made now (with thread level `level`) if neither MPI_Init nor a session
/// made it yet. The handle values are as for `init`.
fn instance_of(s: &'static RankSlot, level: ThreadLevel, default_errhandler: i32, file_errhandler: i32) -> MpiResult<&'static Instance> {
    let _making = s.making.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = s.instance.get() {
        i.grant(level);
        return Ok(i);
    }
    let (seg, rank, singleton, threads) = locate()?;
    let size = seg.nranks();
    let world = if singleton { (0..size).collect() } else { world_of(&seg, rank)? };
    seg.rank(rank).pid.store(std::process::id() as i32, Ordering::Release);
    let engine = match crate::runtime::node_map::from_env(world.len()).map_err(|m| err(ErrorClass::Other, m))? {
        Some(node_of) if !singleton => spanning_engine(&seg, rank, &node_of, threads)?,
        _ => Engine::new(seg.clone(), rank, WaitPolicy::choose(seg.occupied())),
    };
    crate::monitoring::init(rank, size);
    engine.set_threaded(level == ThreadLevel::Multiple);
    engine.set_local_peers(threads);
    let split = std::env::var("OXMPI_SPLIT").map(|v| v != "0").unwrap_or(true);
    engine.set_split_copies(split && seg.occupied() <= crate::runtime::wait::available_cpus());
    let inst = Instance {
        universe: Universe::new(seg, rank, world, engine, default_errhandler),
        thread_level: std::sync::atomic::AtomicU8::new(level as u8),
        main_thread: std::sync::atomic::AtomicU64::new(caller_id()),
        singleton,
        groups: crate::group::GroupTable::new(),
        ops: Default::default(),
        file_errhandler: std::sync::atomic::AtomicI32::new(file_errhandler),
        wins: Default::default(),
        files: Default::default(),
        sessions: Default::default(),
    };
    if s.instance.set(inst).is_err() {
        return Err(err(ErrorClass::Other, "MPI_Init raced with another MPI_Init"));
    }
    let inst: &'static Instance = s.instance.get().unwrap();
    crate::ulfm::install(&inst.universe);
    Ok(inst)
}

/// Tells the launcher (and, in threads mode, the host starting ranks) that this rank is inside MPI.
fn entered(u: &Instance) {
    u.seg.rank(u.rank).state.store(RANK_INITIALIZED, Ordering::Release);
    if let Some(job) = threads_job() {
        job.mark_started(u.rank);
    }
}

/// Leaves MPI if neither the World model nor a session still holds the rank: flushes pending
/// traffic and tells the launcher this rank finished cleanly.
fn left(s: &RankSlot, u: &Instance) {
    if s.is_active() {
        u.engine.flush_all();
    } else {
        // Peers on other nodes may still be pulling this rank's last messages.
        u.engine.depart();
        u.seg.rank(u.rank).state.store(RANK_FINALIZED, Ordering::Release);
        // A foreign launcher counts a rank that exits without PMI finalize as failed.
        if let Some(p) = crate::runtime::pmi::client() {
            if let Err(e) = p.finalize() {
                crate::runtime::job::say(&format!("oxmpi: rank {}: {} finalize failed: {e}", u.rank, p.protocol()));
            }
        }
    }
}

/// MPI_Init / MPI_Init_thread with thread level `required` (every level is granted as asked).
/// `default_errhandler` is the handle value of MPI_ERRORS_ARE_FATAL and `file_errhandler` the
/// initial handler of MPI_FILE_NULL (the C boundary owns these encodings). A session opened
/// before keeps its instance: the World model starts on it.
pub fn init(required: ThreadLevel, default_errhandler: i32, file_errhandler: i32) -> MpiResult<&'static Instance> {
    let s = slot()?;
    if s.phase.load(Ordering::Acquire) != PHASE_NONE {
        return Err(err(ErrorClass::Other, "MPI_Init or MPI_Init_thread was already called; MPI can be initialized only once"));
    }
    let inst = instance_of(s, required, default_errhandler, file_errhandler)?;
    inst.thread_level.store(required as u8, Ordering::Release);
    inst.main_thread.store(caller_id(), Ordering::Release);
    s.phase.store(PHASE_INIT, Ordering::Release);
    entered(inst);
    // A spawned rank meets its parents (who wait in MPI_Comm_spawn) before MPI_Init returns.
    crate::construct::spawn::join_parent(&inst.universe)?;
    Ok(inst)
}

/// MPI_Finalize: flushes pending traffic, tells the launcher this rank finished cleanly (unless
/// a session keeps it inside MPI).
pub fn finalize() -> MpiResult {
    let u = get()?;
    let s = slot()?;
    match s.phase.load(Ordering::Acquire) {
        PHASE_INIT => {}
        PHASE_NONE => return Err(err(ErrorClass::Other, "MPI_Finalize without MPI_Init: a session is finalized with MPI_Session_finalize")),
        _ => return Err(err(ErrorClass::Other, "MPI has already been finalized (MPI_Finalize was called)")),
    }
    s.phase.store(PHASE_FINALIZED, Ordering::Release);
    left(s, u);
    Ok(())
}

/// MPI_Session_init: the rank's instance (made now if needed) and the index of a new session
/// with error handler `errhandler` and thread level `level`. The handle values are as for `init`.
pub fn session_init(level: ThreadLevel, errhandler: i32, default_errhandler: i32, file_errhandler: i32) -> MpiResult<(&'static Instance, usize)> {
    let s = slot()?;
    let inst = instance_of(s, level, default_errhandler, file_errhandler)?;
    let i = inst.sessions.insert(crate::session::Session::new(errhandler, level));
    entered(inst);
    Ok((inst, i))
}

/// MPI_Session_finalize of session `i`; false if `i` is no live session.
pub fn session_finalize(i: usize) -> MpiResult<bool> {
    let s = slot()?;
    let Some(u) = s.instance.get() else { return Ok(false) };
    if !u.sessions.remove(i) {
        return Ok(false);
    }
    left(s, u);
    Ok(true)
}

/// Ends the whole job: prints `message` (one line), records the abort for the launcher, exits.
pub fn abort_job(code: i32, message: &str) -> ! {
    // SAFETY: flush the program's buffered C stdio first so its output precedes our message.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    crate::runtime::job::say(message);
    if let Some(u) = peek() {
        u.seg.record_abort(u.rank as i32, code);
    }
    // A foreign launcher ends the job when told through PMI (it names the rank itself); so does
    // the node agent of a job over several hosts, in either mode.
    if let Some(p) = crate::runtime::pmi::client_of_caller() {
        crate::runtime::pmi::abort_job(p, code, message);
    }
    // SAFETY: flushing C stdio so the program's own buffered output is not lost, then leaving
    // without running atexit handlers or destructors of a program in an unknown state.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let c = code & 0xff;
        libc::_exit(if c == 0 && code != 0 { 1 } else { c });
    }
}
