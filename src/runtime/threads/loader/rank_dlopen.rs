//! `dlopen` called by a rank (threads mode): a plugin that needs the rank's program loads once
//! per rank and binds to that rank's program and libraries.
//!
//! Each rank's program is an `RTLD_LOCAL` instance, so its symbols and those of its private
//! libraries are not in the global scope. A plugin the program loads later that uses them (a
//! Python extension module uses the interpreter's `PyTuple_Type`, which is in the rank's own
//! `libpython`) would fail to load ("undefined symbol"), and if it loaded, one copy of its globals
//! would serve every rank. So when a rank's thread calls `dlopen(path)` (the preload library's
//! `dlopen` asks `oxmpi_threads_dlopen` first) and the object has an undefined symbol that the
//! global scope does not define, the object is loaded for that rank only: through a scope object
//! (`scope_object`) that needs `[the rank's program instance, the object]`, the object being the
//! file itself for the first rank that loads it and a memfd copy of it for every other rank
//! (distinct paths, distinct objects). The handle returned is the scope object's: `dlsym` on it
//! finds the object's symbols, `dlclose` releases both. A later `dlopen` of the same path by the
//! same rank returns the same objects. Every other `dlopen` is libc's, unchanged (a library that
//! binds in the global scope stays one per process). `RTLD_GLOBAL` is dropped for a per-rank
//! object: it must not serve other ranks.
//!
//! `dlopen(NULL)` by a rank returns the rank's program instance (a process's `dlopen(NULL)` is
//! its program): `dlsym` on it searches the program and its libraries (`ctypes.pythonapi` finds
//! the rank's interpreter), though not, as in a process, objects only in the global scope that
//! the program does not need (preloaded libraries).
//!
//! Limits: a per-rank object's own `DT_NEEDED` dependencies are loaded as they name themselves
//! (a dependency on a private library of the rank's is found through the scope as the rank's
//! copy only when the object needs it by a name that the program's copy also uses); bare names
//! (searched in library paths) are libc's. The descriptors stay open for the life of the process
//! (see `private_libs`: ld.so matches loaded objects by path).
use super::scope_object;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::Mutex;

/// What per-rank loading keeps, under one lock (a `dlopen` is rare and slow anyway).
struct State {
    /// Each slot's program instance path (`/proc/self/fd/N`), set when its instance is loaded.
    programs: HashMap<usize, String>,
    /// (slot, canonical path) -> the scope object's path, for a second `dlopen` of the same.
    scopes: HashMap<(usize, PathBuf), String>,
    /// Files some rank already uses as themselves: other ranks get copies.
    used: HashSet<PathBuf>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

thread_local! {
    /// Set while this thread is inside the hook: its own `dlopen` calls are libc's.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(|| State { programs: HashMap::new(), scopes: HashMap::new(), used: HashSet::new() }))
}

/// Records that rank slot `slot`'s program instance is loaded from `path`.
pub fn set_program(slot: usize, path: &str) {
    with_state(|s| {
        s.programs.insert(slot, path.to_string());
        s.scopes.retain(|(k, _), _| *k != slot);
    });
}

/// A file of `bytes` in memory, as `/proc/self/fd/N` (kept open, see the module comment).
fn memfd(name: &str, bytes: &[u8]) -> Option<String> {
    super::memfd::with_image(name, bytes).ok().map(super::memfd::path)
}

/// Whether the object in `b` has a (non-weak, named) undefined symbol the global scope lacks.
/// False when it cannot tell (no section headers, not ELF): such objects load as libc loads them.
fn needs_rank_scope(b: &[u8]) -> bool {
    let Ok(secs) = super::shdrs(b) else { return false };
    let Some(dynsym) = secs.iter().find(|s| s.sh_type == super::SHT_DYNSYM) else { return false };
    let Some(strtab) = secs.get(dynsym.sh_link as usize) else { return false };
    for i in 1..dynsym.sh_size / 24 {
        let o = dynsym.sh_offset + i * 24;
        let (Some(name), Some(info), Some(shndx)) = (super::u32_at(b, o), b.get(o as usize + 4).copied(), super::u16_at(b, o + 6)) else {
            return false;
        };
        if shndx != super::SHN_UNDEF || name == 0 || info >> 4 == super::STB_WEAK {
            continue;
        }
        let start = (strtab.sh_offset + u64::from(name)) as usize;
        let Some(rest) = b.get(start..) else { return false };
        let Some(len) = rest.iter().position(|&c| c == 0) else { return false };
        let Ok(sym) = CString::new(&rest[..len]) else { continue };
        // SAFETY: a C string; RTLD_DEFAULT searches the global scope.
        if unsafe { libc::dlsym(libc::RTLD_DEFAULT, sym.as_ptr()) }.is_null() {
            return true;
        }
    }
    false
}

/// Libc's `dlopen` (through the preload library, which hands it on: `BUSY` is set).
fn real_dlopen(path: &str, flags: c_int) -> *mut c_void {
    let Ok(p) = CString::new(path) else { return std::ptr::null_mut() };
    // SAFETY: a valid C string; loading runs the object's constructors, as the caller asked.
    unsafe { libc::dlopen(p.as_ptr(), flags) }
}

/// `dlopen(NULL, flags)` by a rank's thread: the rank's program instance; None for any other caller.
pub fn dlopen_program(flags: c_int) -> Option<*mut c_void> {
    let ctx = crate::runtime::job::context();
    if ctx < 0 || BUSY.with(|b| b.get()) {
        return None;
    }
    let program = with_state(|s| s.programs.get(&(ctx as usize)).cloned())?;
    BUSY.with(|b| b.set(true));
    let h = real_dlopen(&program, flags & !libc::RTLD_GLOBAL);
    BUSY.with(|b| b.set(false));
    Some(h)
}

/// The hook: `Some(handle)` (NULL with `dlerror` set on failure) when the calling rank's thread
/// loads `file` for itself; None to let libc's `dlopen` do it.
pub fn dlopen_for_rank(file: &CStr, flags: c_int) -> Option<*mut c_void> {
    let ctx = crate::runtime::job::context();
    if ctx < 0 || BUSY.with(|b| b.get()) {
        return None;
    }
    let slot = ctx as usize;
    let path = file.to_str().ok()?;
    // Bare names are searched by libc (from the caller's own run path); our own copies are ours.
    if !path.contains('/') || path.starts_with("/proc/self/fd/") {
        return None;
    }
    let program = with_state(|s| s.programs.get(&slot).cloned())?;
    BUSY.with(|b| b.set(true));
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            BUSY.with(|b| b.set(false));
        }
    }
    let _reset = Reset;
    let canon = std::fs::canonicalize(path).ok()?;
    let flags = flags & !libc::RTLD_GLOBAL;
    if let Some(scope) = with_state(|s| s.scopes.get(&(slot, canon.clone())).cloned()) {
        return Some(real_dlopen(&scope, flags));
    }
    let image = std::fs::read(&canon).ok()?;
    if !needs_rank_scope(&image) {
        return None;
    }
    let first = with_state(|s| s.used.insert(canon.clone()));
    let object = if first { path.to_string() } else { memfd(&format!("oxmpi-rank-{slot}-dlopen"), &image)? };
    let scope = memfd(&format!("oxmpi-rank-{slot}-scope"), &scope_object::build(&[&program, &object]).ok()?)?;
    let handle = real_dlopen(&scope, flags);
    if !handle.is_null() {
        with_state(|s| s.scopes.insert((slot, canon), scope));
    }
    Some(handle)
}
