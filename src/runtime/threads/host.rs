//! The threads-mode host: runs every rank of a job as a thread of this process (TMPI, seed 003),
//! each on its own private instance of the program loaded by `loader` (own globals and statics).
//!
//! A rank's thread (or fiber) runs the program's constructors, in its rank's context, then its
//! `main` (so `MPI_Init` in a constructor initialises that rank). Process-level behaviour is kept
//! per rank: a rank that returns from `main` (or calls `exit`, via
//! the preload library's interposer and `exit_hook`) ends only itself, unless it failed (non-zero
//! code) or left MPI initialised, which ends the job with a one-line message; a crash signal in any
//! rank ends the job naming the rank. Standard output is line-buffered so ranks' lines do not mix.
//!
//! Failure survival (`mpiexec --survive`, `OXMPI_SURVIVE=1`, or a rank set a non-fatal error
//! handler: `Segment::survival_wanted`): a rank that dies instead (exits with a non-zero code or
//! before MPI_Finalize, ends its thread with pthread_exit, or crashes: SIGSEGV, SIGBUS, SIGFPE,
//! SIGILL, SIGABRT on its own thread) ends alone and is marked failed in the segment, as the
//! launcher marks a dead process in processes mode; the others go on (`crate::ulfm`). A crashed
//! rank thread leaves its frames by a jump back to its start (`c-src/rank_guard.c`), a crashed
//! rank fiber by a switch back to its carrier. The job's status is then the first death's.
use super::loader::{self, MainFn};
use super::sched;
use crate::runtime::segment::Segment;
use crate::runtime::job::{self, ThreadsJob};
use std::ffi::{CString, OsStr};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

extern "C" {
    static mut environ: *mut *mut c_char;
    /// libc's getopt state, shared by every rank's instance (programs built -fPIC use libc's copy).
    static mut optind: c_int;
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// What a rank thread needs; leaked on purpose (lives as long as the process).
pub(super) struct RankStart {
    pub rank: usize,
    pub main: MainFn,
    /// The program's own constructors, run on the rank's thread before `main`.
    pub constructors: Vec<loader::InitFn>,
    /// This rank's own argv strings and the NULL-terminated pointer array into them: `main` may
    /// permute or modify its argv (getopt does), so ranks must not share one.
    pub _args: Vec<CString>,
    pub argv: Vec<*mut c_char>,
    /// A spawned rank's working directory (info key `wdir`), or an MPMD segment's (`-wdir`);
    /// kernel-thread ranks only.
    pub wdir: Option<CString>,
    /// The CPUs the rank's thread is bound to (`mpiexec --bind-to`; kernel-thread ranks only).
    pub cpus: Option<Vec<usize>>,
}

/// The CPUs of each of the host's `n` ranks, from `env::BIND` (None: no binding); Err: one line.
fn binds_from_env(n: usize) -> Result<Option<Vec<Vec<usize>>>, String> {
    let Ok(v) = std::env::var(crate::runtime::env::BIND) else { return Ok(None) };
    let bad = || format!("{}={v} is not {n} CPU lists as this oxmpi's mpiexec writes them", crate::runtime::env::BIND);
    let cpu = |s: &str| s.parse::<usize>().ok().filter(|&c| c < libc::CPU_SETSIZE as usize);
    let mut all = Vec::new();
    for rank in v.split(';') {
        let mut cpus = Vec::new();
        for part in rank.split(',') {
            match part.split_once('-') {
                Some((a, b)) => cpus.extend(cpu(a).ok_or_else(bad)?..=cpu(b).ok_or_else(bad)?),
                None => cpus.push(cpu(part).ok_or_else(bad)?),
            }
        }
        all.push(cpus);
    }
    if all.len() != n {
        return Err(bad());
    }
    Ok(Some(all))
}

/// Slots of a job in all, at least: room for spawned ranks above MPI_UNIVERSE_SIZE, as
/// processes mode's `mpiexec` keeps (slots cost address space only until used).
const SPAWN_SLOTS: usize = 64;

/// MPI_UNIVERSE_SIZE of a job of `n` ranks: `OXMPI_UNIVERSE_SIZE` (`mpiexec -usize` sets it),
/// at least `n`.
fn universe_size(n: usize) -> usize {
    std::env::var(crate::runtime::env::UNIVERSE).ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(n).max(n)
}

/// How `run` starts ranks, for the ranks spawned later (`super::spawn`); set before any rank starts.
pub(super) struct Starter {
    pub fibers: Option<&'static sched::Sched>,
    pub stack: usize,
}
pub(super) static STARTER: std::sync::OnceLock<Starter> = std::sync::OnceLock::new();

/// Threads of spawned ranks (slot, thread), for `run` to join (or `retire`, once ended).
static SPAWNED_THREADS: std::sync::Mutex<Vec<(usize, libc::pthread_t)>> = std::sync::Mutex::new(Vec::new());

/// Spawned ranks' loaded program instances, by slot, unloaded by `retire`.
static LOADED: std::sync::Mutex<Vec<Option<loader::Instance>>> = std::sync::Mutex::new(Vec::new());

/// Keeps spawned rank `slot`'s loaded instance until `retire` unloads it.
pub(super) fn keep_instance(slot: usize, inst: loader::Instance) {
    let mut l = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if l.len() <= slot {
        l.resize_with(slot + 1, || None);
    }
    l[slot] = Some(inst);
}

/// Whether spawned rank `slot` ended cleanly and entirely: it finalized MPI and returned from
/// main (or exited) with 0, did not fail, and its kernel thread was joined now (a try, never a
/// wait) or its fiber's stack freed. A rank still alive, or one that died, is never retired.
fn ended_entirely(seg: &Segment, slot: usize) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    let ended = ENDED.get().and_then(|v| v.get(slot)).is_some_and(|e| e.load(SeqCst));
    if !ended || seg.is_failed(slot) || seg.rank(slot).state.load(SeqCst) != crate::runtime::segment::RANK_FINALIZED {
        return false;
    }
    let Some(st) = STARTER.get() else { return false };
    let mut threads = SPAWNED_THREADS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(i) = threads.iter().position(|&(r, _)| r == slot) else {
        // Not a kernel thread: a fiber, if the job has them.
        return st.fibers.is_some_and(|s| s.retired(slot));
    };
    // SAFETY: a thread we created and never detached nor joined (it leaves the list when joined).
    if unsafe { libc::pthread_tryjoin_np(threads[i].1, std::ptr::null_mut()) } != 0 {
        return false;
    }
    threads.swap_remove(i);
    true
}

/// Makes the slot of spawned rank `slot` free for a new rank if that rank ended entirely
/// (`ended_entirely`): unloads its program instance, forgets its per-rank state here (exit flag,
/// start-up flag, crash dispositions, library-variable copies, exit-handler base) and has the
/// layers above make its MPI state and inbound channels new (`Upcalls::rank_recycled`); then
/// resets its control block. False (nothing touched) while the rank may still run.
pub(super) fn retire(seg: &Segment, slot: usize) -> bool {
    use std::sync::atomic::Ordering::{Release, SeqCst};
    if !ended_entirely(seg, slot) {
        return false;
    }
    if let Some(inst) = LOADED.lock().unwrap_or_else(|p| p.into_inner()).get_mut(slot).and_then(Option::take) {
        inst.unload(slot);
    }
    if let Some(c) = COPIES.write().unwrap_or_else(|p| p.into_inner()).get_mut(slot) {
        c.clear();
    }
    super::atexit::set_base(slot, 0);
    if let Some(d) = DISPOSITIONS.get().and_then(|v| v.get(slot)) {
        for x in d {
            x.handler.store(libc::SIG_DFL, SeqCst);
            x.flags.store(0, SeqCst);
        }
    }
    if let Some(u) = UPCALLS.get() {
        (u.rank_recycled)(slot);
    }
    if let Some(job) = job::threads_job() {
        if let Some(x) = job.started.lock().unwrap_or_else(|p| p.into_inner()).get_mut(slot) {
            *x = false;
        }
    }
    let rc = seg.rank(slot);
    rc.pid.store(0, std::sync::atomic::Ordering::Relaxed);
    rc.state.store(crate::runtime::segment::RANK_NOT_STARTED, Release);
    // Last: `past_startup` of the next rank here reads it.
    if let Some(e) = ENDED.get().and_then(|v| v.get(slot)) {
        e.store(false, SeqCst);
    }
    true
}

/// Each slot's program file (what `/proc/self/exe` means to its rank: see `super::spawn`).
pub(super) static PROGRAMS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Makes spawned rank `slot`'s loaded instance of `program` known, as `run` does for the first
/// ranks', before the rank starts.
pub(super) fn register_instance(slot: usize, inst: &loader::Instance, program: &Path) {
    if let Some(u) = UPCALLS.get() {
        (u.instance_loaded)(slot, &|name| inst.symbol(name));
    }
    let mut c = COPIES.write().unwrap_or_else(|p| p.into_inner());
    if c.len() <= slot {
        c.resize(slot + 1, Vec::new());
    }
    c[slot] = inst.copies().to_vec();
    drop(c);
    super::atexit::set_base(slot, inst.base());
    let mut p = PROGRAMS.lock().unwrap_or_else(|p| p.into_inner());
    if p.len() <= slot {
        p.resize(slot + 1, std::path::PathBuf::new());
    }
    p[slot] = program.to_path_buf();
}

/// Starts a spawned rank as the job's ranks run: a fiber, or a kernel thread (joined by `run`);
/// a kernel thread also in a job of fibers when `thread` (a rank that cannot be a fiber: waits
/// choose futex or park per call, `runtime::wait`, so the two kinds of ranks talk as usual).
pub(super) fn start_spawned(start: RankStart, thread: bool) -> Result<(), String> {
    let Some(st) = STARTER.get() else { return Err("the threads-mode host is not running ranks".into()) };
    let rank = start.rank;
    let start = Box::into_raw(Box::new(start));
    // getopt starts afresh for the new rank, as in `run`.
    restart_getopt();
    if let Some(s) = st.fibers.filter(|_| !thread) {
        let fs = FiberStart(start);
        let body = Box::new(move || {
            let fs = fs;
            // SAFETY: the leaked RankStart of this rank, used by this fiber only.
            run_rank(unsafe { &mut *fs.0 })
        });
        return s.add_spawned(rank, st.stack, body).map_err(|e| format!("cannot start the fiber of rank {rank}: {e}"));
    }
    let t = spawn(start, st.stack).map_err(|e| format!("cannot start the thread of rank {rank}: {e}"))?;
    SPAWNED_THREADS.lock().unwrap_or_else(|p| p.into_inner()).push((rank, t));
    Ok(())
}

/// Whether rank `rank` is past its start-up (entered MPI, or ended). Lock-free: a parked fiber's
/// condition.
pub(super) fn past_startup(seg: &Segment, rank: usize) -> bool {
    seg.rank(rank).state.load(std::sync::atomic::Ordering::Acquire) != crate::runtime::segment::RANK_NOT_STARTED
        || ENDED.get().and_then(|v| v.get(rank)).is_some_and(|e| e.load(std::sync::atomic::Ordering::SeqCst))
}

/// Ends the whole job from any thread: one line on stderr, flushed stdio, exit status `code`.
pub fn end_job(code: i32, message: &str) -> ! {
    // SAFETY: flush C stdio, report, then leave at once; other ranks are in unknown states.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        job::say(message);
        libc::_exit(if code & 0xff == 0 { 1 } else { code & 0xff });
    }
}

/// What the host needs from the layers above the runtime, which it runs below: given to `run`.
pub struct Upcalls {
    /// Called with each rank's number and a symbol look-up in its loaded program instance (the
    /// Fortran boundary finds the instance's own MPI_BOTTOM & co. with it).
    pub instance_loaded: fn(usize, &dyn Fn(&str) -> Option<*mut c_void>),
    /// Whether rank r is inside MPI (called MPI_Init, not yet MPI_Finalize).
    pub rank_in_mpi: fn(usize) -> bool,
    /// How the transport wants the segment's channels laid out for a job of n ranks.
    pub channel_geometry: fn(usize) -> crate::runtime::segment::ChannelGeometry,
    /// Slot r's finished spawned rank is gone: its MPI state and inbound channels are made new
    /// for the next rank spawned there.
    pub rank_recycled: fn(usize),
}

/// Makes libc's getopt start afresh (optind = 0) for the next rank, under the preload library's
/// getopt lock when it is loaded: an earlier rank, past its start-up wait (MPI_Init), may be
/// inside getopt (ncmpidiff parses its options after MPI_Init), and the bare write would derail
/// its parse (it then printed its usage).
fn restart_getopt() {
    static RESTART: std::sync::OnceLock<Option<extern "C" fn()>> = std::sync::OnceLock::new();
    let f = *RESTART.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; a non-null result is the preload library's
        // `void oxmpi_preload_getopt_restart(void)`.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"oxmpi_preload_getopt_restart".as_ptr()) };
        // SAFETY: as above: the symbol is that function.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, extern "C" fn()>(p) })
    });
    match f {
        Some(f) => f(),
        // SAFETY: without the preload library no getopt call is serialised anyway; ranks start
        // one at a time, so this write races only with a rank parsing after MPI_Init.
        None => unsafe { optind = 0 },
    }
}

/// Each rank's instance's copies of library variables (name, address), by slot, set before the
/// rank starts; the preload library's getopt family reads and writes getopt's through
/// `copy_address`.
static COPIES: std::sync::RwLock<Vec<Vec<(String, usize)>>> = std::sync::RwLock::new(Vec::new());

/// The address of rank `rank`'s own copy of the library variable `name`, if its program keeps
/// one (`R_X86_64_COPY`, see `loader::Instance::copy_address`).
pub fn copy_address(rank: usize, name: &str) -> Option<usize> {
    COPIES.read().unwrap_or_else(|p| p.into_inner()).get(rank)?.iter().find(|(n, _)| n == name).map(|&(_, a)| a)
}

/// Set by `run` before any rank starts.
static UPCALLS: std::sync::OnceLock<Upcalls> = std::sync::OnceLock::new();

extern "C" {
    /// `c-src/rank_guard.c`: runs `body(arg)`; 0 when it returned, 1 when the thread abandoned
    /// it (`oxmpi_rank_abandon`). `vanished(arg)` runs if the thread ends inside (pthread_exit).
    fn oxmpi_rank_guarded(body: extern "C-unwind" fn(*mut c_void), vanished: extern "C" fn(*mut c_void), arg: *mut c_void) -> c_int;
    /// Whether the calling thread runs a guarded body.
    fn oxmpi_rank_guard_set() -> c_int;
    /// Jumps back to the calling thread's `oxmpi_rank_guarded`; returns if it has none.
    fn oxmpi_rank_abandon();
}

/// Per rank: it has ended (returned from main, called exit, or died), so a later pthread_exit
/// of its thread is no news. Set by `run` before any rank starts.
static ENDED: std::sync::OnceLock<Vec<std::sync::atomic::AtomicBool>> = std::sync::OnceLock::new();

/// The exit status of the job's first survived death (0: none).
static SURVIVED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

fn mark_ended(rank: usize) {
    if let Some(e) = ENDED.get().and_then(|v| v.get(rank)) {
        e.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The segment of the running job when it survives failures. Async-signal-safe (atomics only).
fn surviving_segment() -> Option<&'static Segment> {
    job::threads_job().map(|j| &*j.seg).filter(|s| s.survival_wanted())
}

/// Rank `rank` died with job status `code`: in a job that survives failures, marks it failed
/// (every rank's doorbell rings) and returns true: the caller ends just the rank. Async-signal-
/// safe: atomics and futex wake-ups only.
fn survive_death(rank: usize, code: i32) -> bool {
    let Some(seg) = surviving_segment() else { return false };
    mark_ended(rank);
    let _ = SURVIVED.compare_exchange(0, code, std::sync::atomic::Ordering::SeqCst, std::sync::atomic::Ordering::SeqCst);
    seg.mark_failed(rank);
    true
}

/// Ends a death's message when the job goes on (processes mode's launcher says the same).
const GO_ON: &str = "; the other ranks go on (failure survival is on)";

/// A rank died (`what`, job status `code`): the others go on if the job survives failures, else
/// the job ends with the rank named.
fn rank_died(rank: usize, code: i32, what: &str) {
    if survive_death(rank, code) {
        // SAFETY: flushing C stdio keeps the rank's output ahead of the message.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        job::say(&format!("oxmpi: rank {rank} {what}{GO_ON}"));
    } else {
        end_job(code, &format!("oxmpi: rank {rank} {what}; ending the job"));
    }
}

/// A rank finished with `code` (returned from main or called exit): fine if 0 and MPI is not left
/// initialised; anything else is the rank's death, as a dying process's in processes mode.
pub fn rank_finished(rank: usize, code: i32) {
    if let Some(job) = job::threads_job() {
        job.mark_started(rank);
    }
    mark_ended(rank);
    if code != 0 {
        rank_died(rank, code, &format!("exited with code {code}"));
    } else if job::threads_job().is_some() && UPCALLS.get().is_some_and(|u| (u.rank_in_mpi)(rank)) {
        rank_died(rank, 1, "exited before calling MPI_Finalize");
    }
}

/// The cleanup handler of a rank thread's frame: the thread ends inside the rank's program
/// (pthread_exit). News only when the rank had not ended otherwise: like a process's main thread
/// calling pthread_exit, it ends the rank with status 0, which is a death while MPI is initialised.
extern "C" fn rank_vanished(arg: *mut c_void) {
    // SAFETY: `arg` is the leaked RankStart of this thread (see `rank_thread`).
    rank_ended_inside(unsafe { (*(arg as *const RankStart)).rank });
}

/// Called by the preload library's `pthread_exit`: on a rank fiber (whose frames pthread_exit
/// would unwind past, ending the carrier), ends the fiber as `rank_vanished` ends a thread.
/// Returns at once anywhere else.
pub fn fiber_exit_hook() {
    let rank = job::context();
    if rank < 0 || !sched::in_fiber() || job::threads_job().is_none() {
        return;
    }
    rank_ended_inside(rank as usize);
    sched::exit_current();
}

/// Rank `rank`'s thread or fiber ends inside its program (pthread_exit), see `rank_vanished`.
fn rank_ended_inside(rank: usize) {
    if ENDED.get().and_then(|v| v.get(rank)).is_some_and(|e| e.load(std::sync::atomic::Ordering::SeqCst)) {
        return;
    }
    if let Some(job) = job::threads_job() {
        job.mark_started(rank);
    }
    mark_ended(rank);
    if job::threads_job().is_some() && UPCALLS.get().is_some_and(|u| (u.rank_in_mpi)(rank)) {
        rank_died(rank, 1, "ended its thread (pthread_exit) before calling MPI_Finalize");
    }
}

/// The guarded body of a rank thread: the rank's program. "C-unwind": a rank's `exit` (or its
/// own pthread_exit) ends the thread with forced unwinding through this frame, which holds
/// nothing to drop.
extern "C-unwind" fn rank_body(arg: *mut c_void) {
    // SAFETY: `arg` is the leaked RankStart given to this thread.
    run_rank(unsafe { &mut *(arg as *mut RankStart) });
}

/// Called by the preload library's `exit` interposer. Returns true when the caller is a rank's
/// thread: the exit was recorded and the caller must end just its thread (pthread_exit).
pub fn exit_hook(code: i32) -> bool {
    let ctx = job::context();
    if ctx < 0 || job::threads_job().is_none() {
        return false;
    }
    // SAFETY: flushing C stdio is always allowed; the rank's output must not be lost.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    super::atexit::run(ctx as usize);
    // SAFETY: as above, for what the handlers wrote.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    rank_finished(ctx as usize, code);
    // A rank fiber ends here (never returns); a rank thread returns and pthread_exits.
    sched::exit_current();
    true
}

/// The start routine of a rank thread. "C-unwind": a rank's `exit` ends its thread with
/// pthread_exit, whose forced unwinding passes through this frame, which holds nothing to drop.
extern "C-unwind" fn rank_thread(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the leaked RankStart given to pthread_create for this thread.
    let start = unsafe { &mut *(arg as *mut RankStart) };
    job::set_context(start.rank as c_int);
    install_alt_stack();
    if let Some(d) = &start.wdir {
        // The thread gets a working directory of its own (the threads it creates share it).
        // SAFETY: unshare and chdir with a valid C string affect this thread only.
        if unsafe { libc::unshare(libc::CLONE_FS) != 0 || libc::chdir(d.as_ptr()) != 0 } {
            job::say(&format!("oxmpi: rank {}: cannot enter its working directory {}: {}", start.rank, d.to_string_lossy(), std::io::Error::last_os_error()));
        }
    }
    if let Some(cpus) = &start.cpus {
        // SAFETY: cpu_set_t is plain data; every CPU number is below CPU_SETSIZE
        // (`binds_from_env`); pid 0 is the calling thread.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            job::say(&format!("oxmpi: rank {}: cannot bind to CPU {cpus:?}: {}", start.rank, std::io::Error::last_os_error()));
        }
    }
    // SAFETY: C functions of c-src/rank_guard.c, given this thread's RankStart.
    if unsafe { oxmpi_rank_guarded(rank_body, rank_vanished, arg) } == 1 {
        // The rank crashed and the job survives it (`on_crash`): the thread ends here.
        if let Some(job) = job::threads_job() {
            job.mark_started(start.rank);
        }
    }
    std::ptr::null_mut()
}

/// Runs a rank's `main` on the calling thread or fiber (whose rank context is set) and records
/// how it ended.
fn run_rank(start: &mut RankStart) {
    let argc = (start.argv.len() - 1) as c_int;
    // SAFETY: the rank's own constructors, then its private `main`, with a NULL-terminated argv it
    // owns and the process environment, as the C runtime would call them.
    let rc = unsafe {
        for f in &start.constructors {
            f(argc, start.argv.as_mut_ptr(), environ);
        }
        (start.main)(argc, start.argv.as_mut_ptr(), environ)
    };
    // Returning from main is exit(): the rank's own exit handlers run first.
    super::atexit::run(start.rank);
    // SAFETY: flush the program's buffered output before deciding about the job.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    rank_finished(start.rank, rc);
}

/// A leaked RankStart handed to a fiber (raw pointers inside are the rank's own argv).
struct FiberStart(*mut RankStart);
// SAFETY: the RankStart is used by exactly one fiber, whichever carrier runs it.
unsafe impl Send for FiberStart {}

/// One segment of the job as `run` starts it: `count` ranks of `program` with `args` (args[0]
/// is the program name as the user typed it), in `wdir` if given.
pub struct App {
    pub count: usize,
    pub program: std::path::PathBuf,
    pub args: Vec<CString>,
    pub wdir: Option<CString>,
}

impl App {
    /// The segments of `OXMPI_APPS` (an MPMD job, `crate::runtime::mpmd`), else the one segment
    /// of the host's arguments; Err: one line. Removes the variable: the ranks must not see it.
    pub fn from_env(n: usize, program: &Path, args: &[CString]) -> Result<Vec<App>, String> {
        let Some(v) = std::env::var_os(crate::runtime::mpmd::ENV_APPS) else {
            return Ok(vec![App { count: n, program: program.to_path_buf(), args: args.to_vec(), wdir: None }]);
        };
        // Single-threaded still (no rank has started): nothing reads the environment concurrently.
        std::env::remove_var(crate::runtime::mpmd::ENV_APPS);
        let apps = crate::runtime::mpmd::decode(&v.to_string_lossy())?;
        if apps.iter().map(|a| a.count).sum::<usize>() != n {
            return Err(format!("internal: {} describes other than {n} ranks", crate::runtime::mpmd::ENV_APPS));
        }
        let c = |w: &std::ffi::OsString| CString::new(w.as_bytes()).map_err(|_| "internal: NUL byte in a program's argument".to_string());
        apps.iter()
            .map(|a| Ok(App { count: a.count, program: a.program.clone().into(), args: a.argv.iter().map(c).collect::<Result<_, _>>()?, wdir: a.wdir.as_ref().map(c).transpose()? }))
            .collect()
    }
}

/// Runs the ranks of `apps` (rank blocks in order; one segment but for an MPMD job). Returns the
/// job's exit status; loading problems print one line and return 2.
pub fn run(apps: &[App], upcalls: Upcalls) -> i32 {
    let upcalls = UPCALLS.get_or_init(|| upcalls);
    let n: usize = apps.iter().map(|a| a.count).sum();
    let mut prepared = Vec::with_capacity(apps.len());
    for a in apps {
        match loader::prepare(&a.program) {
            Ok(p) => prepared.push(p),
            Err(e) => {
                eprintln!("oxmpi: {}", e.0);
                return 2;
            }
        }
    }
    let app_of = crate::runtime::mpmd::app_of(&apps.iter().map(|a| a.count).collect::<Vec<_>>());
    // Slots above the world wait for spawned ranks (`spawn`), as in processes mode.
    let universe = universe_size(n);
    let nslots = universe.max(SPAWN_SLOTS);
    // One node of a job over several (`mpiexec --nodes K`): this host runs that node's ranks
    // only; the other slots of the world stay empty, as in a processes-mode node's segment.
    let ours = match crate::runtime::node_map::host_from_env(n) {
        Ok(Some((first, fds))) => first..first + fds.len(),
        Ok(None) => 0..n,
        Err(e) => {
            eprintln!("oxmpi: {e}");
            return 2;
        }
    };
    let binds = match binds_from_env(ours.len()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("oxmpi: internal: {e}");
            return 2;
        }
    };
    let mut mains = Vec::with_capacity(ours.len());
    let mut copies = vec![Vec::new(); nslots];
    let mut bases = vec![0; nslots];
    let mut no_fibers: Option<String> = None;
    for r in ours.clone() {
        crate::runtime::mpmd::record(r, app_of[r]);
        match prepared[app_of[r]].load_instance(r) {
            Ok(inst) => {
                if no_fibers.is_none() {
                    no_fibers = fiber_blocker(&inst).map(|why| format!("rank {r}'s program {why}"));
                }
                (upcalls.instance_loaded)(r, &|name| inst.symbol(name));
                copies[r] = inst.copies().to_vec();
                bases[r] = inst.base();
                mains.push((inst.main, inst.constructors().to_vec()))
            }
            Err(e) => {
                eprintln!("oxmpi: rank {r}: {}", e.0);
                return 2;
            }
        }
    }
    *COPIES.write().unwrap_or_else(|p| p.into_inner()) = copies;
    *PROGRAMS.lock().unwrap_or_else(|p| p.into_inner()) = app_of.iter().map(|&a| apps[a].program.clone()).collect();
    let _ = ENDED.set((0..nslots).map(|_| std::sync::atomic::AtomicBool::new(false)).collect());
    super::atexit::install(&bases);
    let seg = match Segment::anonymous_world(nslots, n, (upcalls.channel_geometry)(n)) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("oxmpi: cannot create the shared segment for {n} ranks: {e}");
            return 2;
        }
    };
    seg.set_universe_size(universe);
    if std::env::var(crate::runtime::env::SURVIVE).is_ok_and(|v| v == "1") {
        seg.want_survival();
    }
    if !job::install_threads_job(ThreadsJob::new(seg, nslots, app_of.iter().map(|&a| apps[a].args.iter().map(|w| w.to_string_lossy().into_owned()).collect()).collect())) {
        eprintln!("oxmpi: internal: a threads-mode job is already running in this process");
        return 2;
    }
    // SAFETY: setvbuf on the process's stdout/stderr before any rank writes to them.
    unsafe {
        libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOLBF, 0);
        libc::setvbuf(stderr, std::ptr::null_mut(), libc::_IOLBF, 0);
    }
    install_crash_handlers(nslots);
    let job = job::threads_job().expect("installed above");
    let stack = stack_size();
    let setting = sched::Setting::from_env();
    let fibers = if !setting.enabled(ours.len()) {
        None
    } else if ours.len() < n {
        // A rank of a job over nodes polls UCX while it waits, never parking: kernel threads.
        if setting == sched::Setting::Always {
            eprintln!("oxmpi: ranks of a job over several nodes run as kernel threads, not fibers");
        }
        None
    } else if binds.is_some() {
        // A fiber moves between carriers: only a kernel thread can be bound.
        if setting == sched::Setting::Always {
            eprintln!("oxmpi: ranks bound to cores (--bind-to core) run as kernel threads, not fibers");
        }
        None
    } else if apps.iter().any(|a| a.wdir.is_some()) {
        // A fiber shares its carrier's working directory.
        if setting == sched::Setting::Always {
            eprintln!("oxmpi: ranks given a working directory (-wdir of an MPMD segment) run as kernel threads, not fibers");
        }
        None
    } else if let Some(why) = &no_fibers {
        if setting == sched::Setting::Always {
            eprintln!("oxmpi: {why}; running ranks as kernel threads, not fibers");
        }
        None
    } else {
        match sched::Sched::install(n, nslots, crate::runtime::wait::available_cpus()) {
            Ok(s) => Some(s),
            Err(e) => end_job(2, &format!("oxmpi: cannot start the fiber scheduler: {e}; set OXMPI_FIBERS=0 to run ranks as kernel threads")),
        }
    };
    let _ = STARTER.set(Starter { fibers, stack });
    let mut threads = Vec::with_capacity(ours.len());
    for (rank, (main, constructors)) in ours.clone().zip(mains) {
        if rank > ours.start {
            // Start-up code runs one rank at a time (up to MPI_Init, or 1 s), and getopt starts
            // afresh for each rank: optind = 0 makes glibc reinitialise its internal state.
            job.wait_started(rank - 1, std::time::Duration::from_secs(1));
        }
        restart_getopt();
        let app = &apps[app_of[rank]];
        let own: Vec<CString> = app.args.to_vec();
        let mut argv: Vec<*mut c_char> = own.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        argv.push(std::ptr::null_mut());
        let cpus = binds.as_ref().map(|b| b[rank - ours.start].clone());
        let start = Box::into_raw(Box::new(RankStart { rank, main, constructors, _args: own, argv, wdir: app.wdir.clone(), cpus }));
        if let Some(s) = fibers {
            let st = FiberStart(start);
            let body = Box::new(move || {
                let st = st;
                // SAFETY: the leaked RankStart of this rank, used by this fiber only.
                run_rank(unsafe { &mut *st.0 })
            });
            if let Err(e) = s.add(rank, stack, body) {
                end_job(2, &format!("oxmpi: cannot start the fiber of rank {rank}: {e}; set OXMPI_FIBERS=0 to run ranks as kernel threads"));
            }
            continue;
        }
        match spawn(start, stack) {
            Ok(t) => threads.push(t),
            Err(e) => end_job(2, &format!("oxmpi: cannot start the thread of rank {rank}: {e}")),
        }
    }
    if let Some(s) = fibers {
        s.join();
    }
    for t in threads {
        // SAFETY: joining threads we created and never detached.
        unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
    }
    // Spawned ranks' threads: each was listed by a rank still running, so once the list is empty
    // every rank has ended.
    loop {
        let next = SPAWNED_THREADS.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let Some((_, t)) = next else { break };
        // SAFETY: as above.
        unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
    }
    // SAFETY: flush whatever the ranks left buffered.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    SURVIVED.load(std::sync::atomic::Ordering::SeqCst)
}

/// The stack size the process's main thread would get (RLIMIT_STACK, 1 MiB to 1 GiB).
fn stack_size() -> usize {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into a local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut rl) } == 0 && rl.rlim_cur != libc::RLIM_INFINITY {
        (rl.rlim_cur as usize).clamp(1 << 20, 1 << 30)
    } else {
        8 << 20
    }
}

/// Why a program instance must not run as fibers, if it must not. Fibers share their carrier's
/// thread-local state and may move to another carrier, so the program's own thread-local variables
/// would be shared or lost; an OpenMP runtime keeps its team per kernel thread, so two ranks of one
/// carrier inside parallel regions (MPI called from the master thread) would share it.
pub(super) fn fiber_blocker(inst: &loader::Instance) -> Option<&'static str> {
    if inst.has_tls() {
        return Some("defines thread-local variables");
    }
    if ["GOMP_parallel", "GOMP_parallel_start", "__kmpc_fork_call"].iter().any(|s| inst.symbol(s).is_some()) {
        return Some("uses OpenMP");
    }
    // CPython finds a thread's state through thread-specific data (PyGILState): a fiber moved
    // to another carrier would lose it.
    if inst.symbol("Py_Initialize").is_some() {
        return Some("runs a Python interpreter");
    }
    None
}

/// Starts a rank thread with a stack of `stack` bytes.
fn spawn(start: *mut RankStart, stack: usize) -> std::io::Result<libc::pthread_t> {
    // SAFETY: plain pthread attribute and creation calls with valid pointers; the start routine
    // has the C ABI pthread expects ("C-unwind" differs only in unwinding rules, not in calling
    // convention).
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstacksize(&mut attr, stack);
        let mut t: libc::pthread_t = 0;
        let f: extern "C" fn(*mut c_void) -> *mut c_void = std::mem::transmute(rank_thread as extern "C-unwind" fn(*mut c_void) -> *mut c_void);
        let rc = libc::pthread_create(&mut t, &attr, f, start as *mut c_void);
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(t)
    }
}

/// Each rank thread (and fiber carrier) gets an alternate signal stack so a stack overflow is
/// still reported.
pub fn install_alt_stack() {
    // Room for a program's own crash handler too (gfortran's prints a backtrace).
    const SIZE: usize = 256 * 1024;
    // SAFETY: a fresh private mapping handed to sigaltstack for this thread; never unmapped (the
    // thread may use it until it ends).
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), SIZE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p != libc::MAP_FAILED {
            let ss = libc::stack_t { ss_sp: p, ss_flags: 0, ss_size: SIZE };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
    }
}

const CRASH_SIGNALS: [(c_int, &str); 5] = [
    (libc::SIGSEGV, "Segmentation fault"),
    (libc::SIGBUS, "Bus error"),
    (libc::SIGFPE, "Floating point exception"),
    (libc::SIGILL, "Illegal instruction"),
    (libc::SIGABRT, "Aborted"),
];

/// A rank's own disposition of one crash signal: the handler (`SIG_DFL`, `SIG_IGN` or a function)
/// and its `sa_flags`. Atomics: `on_crash` reads them in a signal handler.
struct RankDisposition {
    handler: std::sync::atomic::AtomicUsize,
    flags: std::sync::atomic::AtomicI32,
}

/// Each rank's dispositions of the crash signals (`CRASH_SIGNALS` order), set by `run` before any
/// rank starts. The process keeps oxmpi's `on_crash` installed; a rank's `sigaction` and `signal`
/// for these signals (the preload library's interposers) land here instead, so each rank keeps
/// its own handler, which `on_crash` runs once for a crash of that rank before ending the job.
static DISPOSITIONS: std::sync::OnceLock<Vec<[RankDisposition; 5]>> = std::sync::OnceLock::new();

fn disposition(rank: usize, sig: c_int) -> Option<&'static RankDisposition> {
    let i = CRASH_SIGNALS.iter().position(|s| s.0 == sig)?;
    Some(&DISPOSITIONS.get()?.get(rank)?[i])
}

/// A rank's `sigaction(sig, act, old)` for a crash signal: records `act` (handler and flags) as
/// the rank's own and reports the previous one in `old`. False when `sig` is not a crash signal or
/// `rank` is not a rank of the running job: the caller then asks libc.
///
/// # Safety
/// `act` and `old` are NULL or valid `struct sigaction` pointers.
pub unsafe fn set_crash_disposition(rank: usize, sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    let Some(d) = disposition(rank, sig) else { return false };
    if !old.is_null() {
        // SAFETY: a valid, writable struct sigaction (caller contract); all-zero is a valid value.
        unsafe {
            *old = std::mem::zeroed();
            (*old).sa_sigaction = d.handler.load(SeqCst);
            (*old).sa_flags = d.flags.load(SeqCst);
        }
    }
    if !act.is_null() {
        // SAFETY: a valid struct sigaction (caller contract).
        let (h, f) = unsafe { ((*act).sa_sigaction, (*act).sa_flags) };
        d.flags.store(f, SeqCst);
        d.handler.store(h, SeqCst);
    }
    true
}

thread_local! {
    /// The last fault of this thread whose handler returned: (signal, address, instruction).
    static LAST_FAULT: std::cell::Cell<(c_int, usize, usize)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// (signal, faulting address, instruction pointer) of a fault the kernel raised; None for a signal
/// sent by a process or thread (`kill`, `raise`, `abort`).
fn fault_of(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) -> Option<(c_int, usize, usize)> {
    if info.is_null() {
        return None;
    }
    // SAFETY: the kernel's siginfo for this signal; si_addr is meaningful for the fault signals.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    if code <= 0 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: for an SA_SIGINFO handler the third argument is the interrupted ucontext.
    let ip = if uctx.is_null() { 0 } else { unsafe { (*(uctx as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as usize } };
    #[cfg(not(target_arch = "x86_64"))]
    let ip = {
        let _ = uctx;
        0
    };
    Some((sig, addr, ip))
}

fn install_crash_handlers(n: usize) {
    let fresh = || RankDisposition { handler: std::sync::atomic::AtomicUsize::new(libc::SIG_DFL), flags: std::sync::atomic::AtomicI32::new(0) };
    let _ = DISPOSITIONS.set((0..n).map(|_| [fresh(), fresh(), fresh(), fresh(), fresh()]).collect());
    for (sig, _) in CRASH_SIGNALS {
        // SAFETY: installing a handler that only uses async-signal-safe calls (write, _exit) and
        // the rank's own handler (what the signal would run in a process of its own).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_crash as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Appends `s` to `buf` at `*len` (no allocation: runs in a signal handler).
fn put(buf: &mut [u8; 160], len: &mut usize, s: &[u8]) {
    let n = s.len().min(buf.len() - *len);
    buf[*len..*len + n].copy_from_slice(&s[..n]);
    *len += n;
}

fn put_num(buf: &mut [u8; 160], len: &mut usize, mut v: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(buf, len, &digits[i..]);
}

/// Runs rank `rank`'s own handler for `sig`, if it has one; true when the rank goes on (its
/// handler returned from a fault it may have repaired, or from a sent signal, or it ignores a sent
/// signal), false when the job must end: no handler, the same fault again right after the handler
/// returned from it (re-executing the instruction cannot help: the handler would run forever), or
/// SIGABRT (abort() kills the process once the handler returns).
fn run_rank_handler(rank: usize, sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    let Some(d) = disposition(rank, sig) else { return false };
    let fault = fault_of(sig, info, uctx);
    if fault.is_some() && LAST_FAULT.with(|l| Some(l.get()) == fault) {
        return false;
    }
    let (h, flags) = (d.handler.load(SeqCst), d.flags.load(SeqCst));
    if h == libc::SIG_IGN {
        // The kernel does not let a process ignore a fault; a sent signal is ignored.
        return fault.is_none() && sig != libc::SIGABRT;
    }
    if h == libc::SIG_DFL {
        return false;
    }
    if flags & libc::SA_RESETHAND != 0 {
        d.handler.store(libc::SIG_DFL, SeqCst);
    }
    // SAFETY: the rank installed this function for `sig` with these flags; it is called as the
    // kernel would call it (SA_SIGINFO: three arguments, else one).
    unsafe {
        if flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = std::mem::transmute(h);
            f(sig, info, uctx);
        } else {
            let f: extern "C" fn(c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
    if let Some(f) = fault {
        LAST_FAULT.with(|l| l.set(f));
    }
    sig != libc::SIGABRT
}

/// Crash in some thread: name its rank and end the job, unless the rank's own handler for the
/// signal took care of it (see `run_rank_handler`: a handler that returns from a fault it did
/// not repair runs once), or the job survives failures and the crash is on the rank's own thread
/// or fiber, which then ends alone (`abandon_rank`). Async-signal-safe: TLS, atomics, write,
/// futex wake-ups, _exit (and the rank's handler, which must be, as in a process of its own).
extern "C" fn on_crash(sig: c_int, info: *mut libc::siginfo_t, uctx: *mut c_void) {
    let rank = job::context();
    if rank >= 0 && run_rank_handler(rank as usize, sig, info, uctx) {
        return;
    }
    if rank >= 0 && surviving_segment().is_some() {
        abandon_rank(rank as usize, sig);
    }
    let mut buf = [0u8; 160];
    let len = crash_message(&mut buf, rank, sig, b"; ending the job\n");
    // SAFETY: write(2) and _exit are async-signal-safe; buf is a local array.
    unsafe {
        libc::write(2, buf.as_ptr() as *const c_void, len);
        libc::_exit(128 + sig);
    }
}

/// The message of a crash, "oxmpi: rank R killed by signal S (Name)" and `tail`, into `buf`.
fn crash_message(buf: &mut [u8; 160], rank: c_int, sig: c_int, tail: &[u8]) -> usize {
    let mut len = 0;
    put(buf, &mut len, b"oxmpi: ");
    if rank >= 0 {
        put(buf, &mut len, b"rank ");
        put_num(buf, &mut len, rank as u32);
    } else {
        put(buf, &mut len, b"the threads-mode host");
    }
    put(buf, &mut len, b" killed by signal ");
    put_num(buf, &mut len, sig as u32);
    let name = CRASH_SIGNALS.iter().find(|s| s.0 == sig).map_or("?", |s| s.1);
    put(buf, &mut len, b" (");
    put(buf, &mut len, name.as_bytes());
    put(buf, &mut len, b")");
    put(buf, &mut len, tail);
    len
}

/// In a job that survives failures, rank `rank` crashed with `sig` on the calling thread: marks
/// it failed and ends the rank (its fiber, or its thread by a jump back to `rank_thread`'s
/// guarded frame). Returns only when the calling thread is neither (a thread the rank created:
/// the job ends as without survival). In a signal handler: async-signal-safe.
fn abandon_rank(rank: usize, sig: c_int) {
    let fiber = sched::in_fiber();
    // SAFETY: reads this thread's guard pointer (c-src/rank_guard.c): a TLS load.
    if !fiber && unsafe { oxmpi_rank_guard_set() } == 0 {
        return;
    }
    if !survive_death(rank, 128 + sig) {
        return;
    }
    let mut buf = [0u8; 160];
    let mut len = crash_message(&mut buf, rank as c_int, sig, GO_ON.as_bytes());
    put(&mut buf, &mut len, b"\n");
    // SAFETY: write(2) is async-signal-safe. The handler is left for good, never returned from,
    // so the signal it blocked is unblocked here for the thread's next user (carrier or none).
    unsafe {
        libc::write(2, buf.as_ptr() as *const c_void, len);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
    if fiber {
        sched::exit_current();
    }
    // SAFETY: this thread runs a guarded rank body (checked above): the jump leaves its frames.
    unsafe { oxmpi_rank_abandon() };
}

/// Converts the host entry's arguments: `program` path and the C argv.
///
/// # Safety
/// `argv` must hold `argc` valid C strings.
pub unsafe fn args_from_c(argc: c_int, argv: *mut *mut c_char) -> Vec<CString> {
    // SAFETY: `i < argc`, and argv[i] is a valid C string (caller contract).
    (0..argc.max(0) as usize).map(|i| CString::from(unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) })).collect()
}

pub fn path_from_c(p: &std::ffi::CStr) -> &Path {
    Path::new(OsStr::from_bytes(p.to_bytes()))
}
