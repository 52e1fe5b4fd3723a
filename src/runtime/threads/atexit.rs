//! Per-rank exit handlers of threads mode (`atexit`, `__cxa_atexit`).
//!
//! A rank's program expects the handlers it registers to run when *it* exits (returns from
//! `main` or calls `exit`), as a process of its own would, not when the host process ends after
//! every rank. The preload library's `__cxa_atexit`/`atexit` interposers hand each registration
//! of a rank thread here; it is the rank's when it comes from the rank's own program instance (the
//! DSO handle, or for a NULL handle the function, lies in that instance's image). Registrations
//! from shared libraries stay with libc: those libraries are shared by all ranks, so their
//! destructors must run once, at the end of the process.
use std::os::raw::c_void;
use std::sync::{Mutex, OnceLock};

/// An exit handler as `__cxa_atexit` takes it.
pub type Handler = unsafe extern "C" fn(*mut c_void);

/// Per rank: its instance's load base, and its handlers in registration order.
struct Rank {
    /// 0 until the rank's instance is loaded (a slot waiting for a spawned rank).
    base: std::sync::atomic::AtomicUsize,
    handlers: Mutex<Vec<(Handler, usize)>>,
}

static RANKS: OnceLock<Vec<Rank>> = OnceLock::new();

/// Records each rank's instance base (`loader::Instance::base`, 0: not loaded yet), before any
/// rank starts.
pub fn install(bases: &[usize]) {
    let _ = RANKS.set(bases.iter().map(|&base| Rank { base: base.into(), handlers: Mutex::new(Vec::new()) }).collect());
}

/// Records the instance base of a spawned rank, before it starts.
pub fn set_base(rank: usize, base: usize) {
    if let Some(r) = RANKS.get().and_then(|v| v.get(rank)) {
        r.base.store(base, std::sync::atomic::Ordering::Release);
    }
}

/// The load base of the object that contains `addr`, if any.
fn object_base(addr: usize) -> Option<usize> {
    // SAFETY: Dl_info is plain pointers and integers, for which all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-parameter.
    let ok = unsafe { libc::dladdr(addr as *const c_void, &mut info) };
    (ok != 0).then_some(info.dli_fbase as usize)
}

/// A registration by rank `rank`'s thread: kept for the rank (true) when `dso` (or, if NULL,
/// `func`) belongs to the rank's program instance; false: libc should keep it.
pub fn register(rank: usize, func: Handler, arg: *mut c_void, dso: *mut c_void) -> bool {
    let Some(r) = RANKS.get().and_then(|v| v.get(rank)) else { return false };
    let owner = if dso.is_null() { func as usize } else { dso as usize };
    if object_base(owner) != Some(r.base.load(std::sync::atomic::Ordering::Acquire)) {
        return false;
    }
    r.handlers.lock().unwrap_or_else(|p| p.into_inner()).push((func, arg as usize));
    true
}

/// Runs rank `rank`'s handlers, last registered first, on the calling (rank) thread. Each is
/// taken off the list before it runs, so a handler that registers another has it run next, as
/// glibc's `exit` does.
pub fn run(rank: usize) {
    let Some(r) = RANKS.get().and_then(|v| v.get(rank)) else { return };
    loop {
        let next = r.handlers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let Some((func, arg)) = next else { break };
        // SAFETY: a handler the rank's program registered with its argument, called once on the
        // rank's thread as glibc's exit would.
        unsafe { func(arg as *mut c_void) };
    }
}
