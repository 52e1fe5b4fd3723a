//! The universe of one rank: who it is, the segment, the engine, the predefined communicators.
//! Created by MPI_Init, never torn down (MPI cannot be re-initialised after MPI_Finalize).
use super::segment::{Segment, RANK_FINALIZED, RANK_INITIALIZED};
use super::wait::WaitPolicy;
use crate::comm::{Comm, SELF_CONTEXT, WORLD_CONTEXT};
use crate::error::{err, MpiResult};
use crate::p2p::Engine;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::ThreadId;

pub struct Universe {
    pub seg: Arc<Segment>,
    pub rank: usize,
    pub size: usize,
    pub engine: Engine,
    pub world: Comm,
    pub self_comm: Comm,
    /// Thread level granted by MPI_Init_thread.
    pub thread_level: i32,
    pub main_thread: ThreadId,
    /// Started without mpiexec.
    pub singleton: bool,
}

static UNIVERSE: OnceLock<Universe> = OnceLock::new();

const PHASE_NONE: u32 = 0;
const PHASE_INIT: u32 = 1;
const PHASE_FINALIZED: u32 = 2;
static PHASE: AtomicU32 = AtomicU32::new(PHASE_NONE);

pub fn initialized() -> bool {
    PHASE.load(Ordering::Acquire) != PHASE_NONE
}
pub fn finalized() -> bool {
    PHASE.load(Ordering::Acquire) == PHASE_FINALIZED
}

/// The universe of an initialised, not yet finalised MPI.
pub fn get() -> MpiResult<&'static Universe> {
    match PHASE.load(Ordering::Acquire) {
        PHASE_INIT => Ok(UNIVERSE.get().expect("phase says initialised")),
        PHASE_NONE => Err(err(crate::abi::MPI_ERR_OTHER, "MPI is not initialized; call MPI_Init or MPI_Init_thread first")),
        _ => Err(err(crate::abi::MPI_ERR_OTHER, "MPI has already been finalized (MPI_Finalize was called)")),
    }
}

/// Whatever state exists, even after finalize (for error reporting).
pub fn peek() -> Option<&'static Universe> {
    UNIVERSE.get()
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// MPI_Init / MPI_Init_thread. `default_errhandler` is the handle value of MPI_ERRORS_ARE_FATAL.
pub fn init(required: i32, default_errhandler: i32) -> MpiResult<&'static Universe> {
    if PHASE.load(Ordering::Acquire) != PHASE_NONE {
        return Err(err(crate::abi::MPI_ERR_OTHER, "MPI_Init or MPI_Init_thread was already called; MPI can be initialized only once"));
    }
    let fd = std::env::var(super::env::SHM_FD).ok().and_then(|v| v.parse::<i32>().ok());
    let (seg, rank, singleton) = match fd {
        Some(fd) => {
            let seg = Segment::attach(fd).map_err(|e| err(crate::abi::MPI_ERR_OTHER, format!("cannot attach the job segment: {e}")))?;
            let rank = env_usize(super::env::RANK).ok_or_else(|| err(crate::abi::MPI_ERR_OTHER, "OXMPI_RANK is not set; start the program with oxmpi's mpiexec"))?;
            if rank >= seg.nranks() {
                return Err(err(crate::abi::MPI_ERR_OTHER, format!("OXMPI_RANK={rank} but the job has {} ranks", seg.nranks())));
            }
            (seg, rank, false)
        }
        None => (Segment::anonymous(1).map_err(|e| err(crate::abi::MPI_ERR_NO_MEM, format!("cannot create a segment: {e}")))?, 0, true),
    };
    let seg = Arc::new(seg);
    let size = seg.nranks();
    crate::transport::cma::allow_peers();
    seg.rank(rank).pid.store(std::process::id() as i32, Ordering::Release);
    seg.rank(rank).state.store(RANK_INITIALIZED, Ordering::Release);
    let engine = Engine::new(seg.clone(), rank, WaitPolicy::choose(size));
    engine.set_threaded(required >= crate::abi::MPI_THREAD_MULTIPLE);
    let split = std::env::var("OXMPI_SPLIT").map(|v| v != "0").unwrap_or(true);
    engine.set_split_copies(split && size <= super::wait::available_cpus());
    let u = Universe {
        seg,
        rank,
        size,
        engine,
        world: Comm::new(WORLD_CONTEXT, (0..size).collect(), rank, default_errhandler),
        self_comm: Comm::new(SELF_CONTEXT, vec![rank], 0, default_errhandler),
        thread_level: required.clamp(0, crate::abi::MPI_THREAD_MULTIPLE),
        main_thread: std::thread::current().id(),
        singleton,
    };
    if UNIVERSE.set(u).is_err() {
        return Err(err(crate::abi::MPI_ERR_OTHER, "MPI_Init raced with another MPI_Init"));
    }
    PHASE.store(PHASE_INIT, Ordering::Release);
    Ok(UNIVERSE.get().unwrap())
}

/// MPI_Finalize: flushes pending traffic, tells the launcher this rank finished cleanly.
pub fn finalize() -> MpiResult {
    let u = get()?;
    u.engine.flush_all();
    u.seg.rank(u.rank).state.store(RANK_FINALIZED, Ordering::Release);
    PHASE.store(PHASE_FINALIZED, Ordering::Release);
    Ok(())
}

/// Ends the whole job: prints `message` (one line), records the abort for the launcher, exits.
pub fn abort_job(code: i32, message: &str) -> ! {
    eprintln!("{message}");
    if let Some(u) = UNIVERSE.get() {
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
