//! Threads mode loader: one private instance of the user's program per rank, in one process.
//!
//! Each rank runs the program's `main` with its own copy of the program's globals and static
//! locals, without changing its source. How (`docs/design/engine.md` §2.5 and §2.6):
//!
//! * `dlopen` of the same path returns the same instance, so every rank gets its own path: the
//!   image is written into a `memfd_create` file per rank and opened as `/proc/self/fd/N`
//!   (distinct paths, distinct instances, nothing on disk, no namespace limit).
//! * glibc (≥ 2.30) refuses to `dlopen` an object whose `DT_FLAGS_1` has `DF_1_PIE`. The per-rank
//!   copies of a PIE have that bit cleared (in the copy; the original file is never touched).
//! * A PIE's `__thread` variables use the local-exec TLS model: loaded as a DSO they silently alias
//!   the *host's* TLS block. A PIE with a `PT_TLS` segment is therefore refused; the same source
//!   built `-shared -fPIC` uses general-dynamic TLS and is accepted.
//! * A PIE's `-fPIE` code reaches libc variables it names (`stdout`, `optarg`) through a private
//!   copy (`R_X86_64_COPY`). In an executable, libc then uses that copy too; in a loaded instance
//!   libc keeps its own, so the copy is a load-time snapshot. Each instance's copies are found
//!   from their relocations (`Instance::copy_address`): the preload library's `getopt` family
//!   keeps getopt's copies (`optarg`, `optind`, `opterr`, `optopt`) up to date per rank. A PIE
//!   copying another variable libc later changes (`tzname`, ...) is refused; `-fPIC` or
//!   `-shared` code has no copies.
//! * A PIE built without `-rdynamic` (e.g. by MPICH's `mpicc`) does not export `main`; its address
//!   is then taken from the ELF `.symtab` (`st_value`, a global or a local symbol) plus the
//!   instance's load base (`l_addr`); in a stripped PIE, from the entry point: glibc's `_start`
//!   loads `main`'s address into `%rdi` for `__libc_start_main` (`entry::main_from_start`).
//!
//! `prepare` inspects the file once (ELF64 x86-64 little-endian only, parsed here with bounds
//! checks: a truncated or garbage file is an error, never a panic); `Prepared::load_instance` is
//! called once per rank, possibly from several threads at once.
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};

mod entry;
mod copy_bind;
mod copy_refresh;
mod copy_source;
mod got_vars;
mod loaded;
mod memfd;
mod private_libs;
pub mod rank_dlopen;
mod scope_object;

/// Why a program cannot run in threads mode, with a one-line, user-facing reason that names the fix.
#[derive(Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LoadError({:?})", self.0)
    }
}
impl std::error::Error for LoadError {}

/// The C `main` signature: int main(int argc, char **argv, char **envp).
pub type MainFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// The fix every refusal names: processes mode runs any program (one process per rank).
pub const FIX_PROCESSES: &str = "run it with --mode processes";
/// Reason for refusing a PIE with thread-local variables (kept in one place: the fix may change).
pub const PIE_TLS_REASON: &str = "has thread-local variables and is a PIE";
/// The alternative fix for a PIE whose thread-local variables or copies of libc variables cannot
/// work when loaded per rank: a `-shared -fPIC` build (kept in one place: the fix may change).
pub const REBUILD_FIX: &str = "rebuild it with oxmpi's mpicc";

/// One-line refusal: "PROG REASON: run it with --mode processes[, or ALSO]".
fn refusal(program: &Path, reason: impl fmt::Display, also: Option<&str>) -> LoadError {
    let mut msg = format!("{} {}: {}", program.display(), reason, FIX_PROCESSES);
    if let Some(also) = also {
        msg.push_str(", or ");
        msg.push_str(also);
    }
    // One line, whatever dlerror or an OS error had to say.
    LoadError(msg.replace('\n', " "))
}

/// How the program file is built, which decides how its copies are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A shared object (`-shared`): loaded as is, one copy per rank.
    SharedObject,
    /// A position-independent executable: copies get `DF_1_PIE` cleared so glibc will load them.
    Pie,
}

/// A program inspected by `prepare` and known to be loadable once per rank.
pub struct Prepared {
    program: PathBuf,
    /// The bytes every rank's copy is made of (for a PIE, with `DF_1_PIE` already cleared).
    image: Vec<u8>,
    kind: Kind,
    /// `st_value` of `main`: its address relative to the load base.
    main_value: u64,
    /// `main` is in `.dynsym`, so `dlsym` finds it (otherwise only `.symtab` has it).
    main_exported: bool,
    /// Where `main` was found.
    main_source: MainSource,
    /// Symbols the program holds copies of (`R_X86_64_COPY`), see `copy_relocated`.
    copies: Vec<String>,
    /// The link-time address (`r_offset`) of each copy, same order as `copies`.
    copy_offsets: Vec<u64>,
    /// The GOT slots through which -fPIC code reaches getopt's variables (`got_vars`).
    got_slots: got_vars::Slots,
    /// The program's DT_INIT function (link-time address), run by `Instance::constructors`.
    init: Option<u64>,
    /// The program's DT_INIT_ARRAY: link-time address and number of entries.
    init_array: Option<(u64, u64)>,
    /// The libraries each rank gets copies of, found when rank 0's instance is loaded
    /// (`private_libs`); None inside: there are none.
    private: std::sync::OnceLock<Option<std::sync::Arc<private_libs::PrivateLibs>>>,
    /// The first instance's copies (`R_X86_64_COPY`, name and address), whose values the
    /// shared libraries' constructors set: later instances take them (`copy_refresh`).
    first_copies: std::sync::OnceLock<Vec<(String, usize)>>,
}

/// Where `prepare` found the address of `main`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainSource {
    /// `.dynsym`: exported, `dlsym` finds it.
    Exported,
    /// `.symtab`, a global or weak symbol (a PIE linked without `-rdynamic`).
    SymtabGlobal,
    /// `.symtab`, a local symbol.
    SymtabLocal,
    /// A stripped program: decoded from `_start`, which hands `main` to `__libc_start_main`.
    EntryPoint,
}

/// One rank's private instance of the program.
///
/// The `dlopen` handle is closed only by `unload`, once a spawned rank ended entirely (until
/// then its code may run, and registered `atexit` handlers or destructors may point into it),
/// and so is the memfd, only after its object left: glibc matches an already loaded object by
/// its path string first, so if descriptor N were closed and reused by a later copy while the
/// object stayed, `dlopen("/proc/self/fd/N")` would hand back the *old* instance.
pub struct Instance {
    /// This instance's `main`.
    pub main: MainFn,
    handle: *mut c_void,
    base: usize,
    fd: c_int,
    /// The memfds of this instance's private library copies (`private_libs`).
    lib_fds: Vec<c_int>,
    /// (name, address) of this instance's copies of library variables (`R_X86_64_COPY`, and
    /// the storage `got_vars` gave the getopt variables its GOT names).
    copies: Vec<(String, usize)>,
    /// That storage (null if none), which the instance's GOT points at: the rank's code uses it
    /// as long as the object stays loaded, so it is freed only when `unload` sees the object
    /// leave, and never for an instance dropped without `unload` (like its handle).
    got_vars: *mut got_vars::Vars,
    /// The program's own constructors, in the order the dynamic loader would run them.
    constructors: Vec<InitFn>,
}

/// An ELF constructor: glibc passes it (argc, argv, envp).
pub type InitFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char);

// SAFETY: the handle is only used with dlsym/dlinfo, which glibc makes thread-safe; the instance
// is created on one thread and typically run on the rank's own thread.
unsafe impl Send for Instance {}
// SAFETY: as above; no method mutates the instance.
unsafe impl Sync for Instance {}

impl Instance {
    /// Load base (`l_addr`) of this instance: add a symbol's `st_value` to get its address.
    pub fn base(&self) -> usize {
        self.base
    }

    /// The memfd this instance was loaded from (kept open, see the type's documentation).
    pub fn fd(&self) -> c_int {
        self.fd
    }

    /// Address of an exported (`.dynsym`) symbol as resolved from this instance and its
    /// dependencies, e.g. a helper function or this instance's copy of a global.
    pub fn symbol(&self, name: &str) -> Option<*mut c_void> {
        let name = CString::new(name).ok()?;
        // SAFETY: the handle is a live dlopen handle (never closed); the name is a C string.
        let p = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// Address of this instance's own copy of the library variable `name` (`R_X86_64_COPY`),
    /// if the program keeps one: what its code reads and writes instead of the library's.
    pub fn copy_address(&self, name: &str) -> Option<usize> {
        self.copies.iter().find(|(n, _)| n == name).map(|&(_, a)| a)
    }

    /// The program's own constructors (DT_INIT, then DT_INIT_ARRAY in order), which dlopen did
    /// not run: the caller runs them on the rank's thread before `main`, with main's arguments.
    pub fn constructors(&self) -> &[InitFn] {
        &self.constructors
    }

    /// Every copy of a library variable this instance holds: (name, address).
    pub fn copies(&self) -> &[(String, usize)] {
        &self.copies
    }

    /// Unloads the instance of a rank that ended entirely (no code of it runs, no thread is
    /// inside it, its own exit handlers ran): `dlclose` runs its ELF destructors as the end of a
    /// process would, on the calling thread acting for rank `rank`. Each memfd is closed only if
    /// its object left (RTLD_NOLOAD no longer finds it); one glibc keeps (a NODELETE object, e.g.
    /// with C++ unique symbols) keeps its descriptor, see the type's documentation. Returns
    /// whether everything left.
    pub fn unload(self, rank: usize) -> bool {
        let ctx = crate::runtime::job::context();
        crate::runtime::job::set_context(rank as c_int);
        // SAFETY: a live handle from dlopen, closed once (self is consumed); the rank's code is
        // no longer running (caller contract).
        unsafe { libc::dlclose(self.handle) };
        crate::runtime::job::set_context(ctx);
        let mut all = true;
        for fd in std::iter::once(self.fd).chain(self.lib_fds.iter().copied()) {
            let path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a formatted number");
            // SAFETY: a valid C string; RTLD_NOLOAD only looks the object up, never loads it.
            let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NOLOAD) };
            if h.is_null() {
                // SAFETY: our memfd; its object is gone, nothing refers to it.
                unsafe { libc::close(fd) };
                if fd == self.fd && !self.got_vars.is_null() {
                    // SAFETY: from Box::into_raw in load_instance, freed once (self is consumed);
                    // the object whose GOT pointed at it is gone.
                    drop(unsafe { Box::from_raw(self.got_vars) });
                }
            } else {
                // SAFETY: drops the reference RTLD_NOLOAD just took.
                unsafe { libc::dlclose(h) };
                all = false;
            }
        }
        all
    }

    /// Whether the program defines thread-local variables (a PT_TLS segment: glibc gives the
    /// instance a TLS module id).
    pub fn has_tls(&self) -> bool {
        let mut modid: libc::size_t = 0;
        // SAFETY: RTLD_DI_TLS_MODID writes one size_t; the handle is live.
        let rc = unsafe { libc::dlinfo(self.handle, libc::RTLD_DI_TLS_MODID, &mut modid as *mut libc::size_t as *mut c_void) };
        rc == 0 && modid != 0
    }
}

impl Prepared {
    /// The program this was prepared from (for messages).
    pub fn program(&self) -> &Path {
        &self.program
    }
    /// Shared object or PIE.
    pub fn kind(&self) -> Kind {
        self.kind
    }
    /// Whether `main` is exported (`.dynsym`); if not, see `main_source`.
    pub fn main_exported(&self) -> bool {
        self.main_exported
    }
    /// Where `main` was found.
    pub fn main_source(&self) -> MainSource {
        self.main_source
    }
    /// `main`'s address relative to the load base (`st_value`).
    pub fn main_offset(&self) -> u64 {
        self.main_value
    }
    /// Library variables the program keeps its own copy of (`R_X86_64_COPY`, typical of a PIE
    /// that names `stdout`, `environ`, ...). In a loaded instance such a copy is a snapshot taken
    /// at load time: the library keeps using its own variable, so later changes are not seen on
    /// either side. Harmless for values the library never changes (`stdout`, `stderr`); getopt's
    /// are kept up to date per rank by the preload library (`KEPT_LIBC_DATA`); `prepare` refuses
    /// the other ones libc changes (`MUTABLE_LIBC_DATA`).
    pub fn copy_relocated(&self) -> &[String] {
        &self.copies
    }

    /// Loads one private instance (own globals) for rank `rank`; returns its `main`.
    ///
    /// The instance's own constructors (`.init_array`, C++ static initialisers) do not run here:
    /// see `Instance::constructors`. Its undefined symbols (libc, MPI) bind like any `RTLD_LOCAL` object's:
    /// to the objects already in the global scope (the host and its libraries) and to its own
    /// `DT_NEEDED` libraries, which are loaded once and shared by all ranks.
    pub fn load_instance(&self, rank: usize) -> Result<Instance, LoadError> {
        let fail = |what: String| refusal(&self.program, format!("cannot be loaded for rank {rank}: {what}"), None);
        let fd = memfd::create(&format!("oxmpi-rank-{rank}")).map_err(|e| fail(format!("memfd_create: {e}")))?;
        // Rank 0 loads the program's libraries as it asks; later ranks get private copies of
        // those built on MPI (`private_libs`), unless they cannot be made.
        if self.private.get().is_none() {
            // A program loaded before in this process (the job's, spawned again): its libraries
            // are loaded, so this instance needs copies from the start.
            if let Some(known) = private_libs::known(&self.program) {
                let _ = self.private.set(known);
            }
        }
        let first = self.private.get().is_none();
        let before = if first { private_libs::loaded_objects() } else { Vec::new() };
        let mut image = std::borrow::Cow::Borrowed(&self.image[..]);
        let mut relative = false;
        let mut lib_fds = Vec::new();
        if let Some(Some(p)) = self.private.get() {
            let mut copy = self.image.clone();
            match p.make_copies(rank, &mut copy) {
                Ok((r, fds)) => {
                    relative = r;
                    lib_fds = fds;
                    image = std::borrow::Cow::Owned(copy);
                }
                Err(e) => {
                    static TOLD: std::sync::Once = std::sync::Once::new();
                    TOLD.call_once(|| eprintln!("oxmpi: threads mode: the ranks share {} ({e})", p.names().join(", ")));
                }
            }
        }
        if let Err(e) = memfd::fill(fd, &image) {
            // SAFETY: fd was created above and nothing refers to it yet.
            unsafe { libc::close(fd) };
            return Err(fail(format!("writing the private copy: {e}")));
        }
        let path = CString::new(memfd::path(fd)).expect("no NUL in a formatted number");
        // SAFETY: path is a valid C string. dlopen runs the instance's constructors, which is
        // the program's own code: what running the program means.
        let handle = private_libs::in_fd_dir(relative, || unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) }).map_err(fail)?;
        if first {
            let after = private_libs::loaded_objects();
            let new: Vec<String> = after.into_iter().filter(|o| !o.starts_with("/proc/") && !before.contains(o)).collect();
            let found = private_libs::PrivateLibs::find(&new, &private_libs::needed_names(&self.image)).map(std::sync::Arc::new);
            private_libs::remember(&self.program, found.clone());
            let _ = self.private.set(found);
        }
        if handle.is_null() {
            let msg = dlerror_text();
            // SAFETY: fd is ours; nothing refers to it after a failed dlopen.
            unsafe { libc::close(fd) };
            return Err(fail(msg));
        }
        let base = match link_map_base(handle) {
            Some(b) => b,
            None => return Err(fail(format!("dlinfo(RTLD_DI_LINKMAP): {}", dlerror_text()))),
        };
        rank_dlopen::set_program(rank, &memfd::path(fd));
        let addr = if self.main_exported {
            // SAFETY: live handle, C string literal.
            let p = unsafe { libc::dlsym(handle, c"main".as_ptr()) } as usize;
            // The object itself is searched before its dependencies, so this is our `main`.
            debug_assert!(p == 0 || p == base.wrapping_add(self.main_value as usize));
            if p != 0 {
                p
            } else {
                base.wrapping_add(self.main_value as usize)
            }
        } else {
            // Not exported (a PIE without -rdynamic): dlsym would not find it, or would find
            // some dependency's `main`. Its .symtab st_value plus the load base is its address.
            base.wrapping_add(self.main_value as usize)
        };
        if addr == 0 {
            return Err(fail("main is at address 0".into()));
        }
        // SAFETY: `addr` is the address of the STT_FUNC symbol `main` of this loaded instance
        // (prepare checked it lies in an executable PT_LOAD segment); C's main has this signature
        // (the envp argument is ignored by a two- or zero-argument main, per the x86-64 ABI).
        let main: MainFn = unsafe { std::mem::transmute::<usize, MainFn>(addr) };
        let mut copies: Vec<(String, usize)> = self.copies.iter().zip(&self.copy_offsets).map(|(n, &o)| (n.clone(), base.wrapping_add(o as usize))).collect();
        if !copies.is_empty() {
            // The copies ld.so filled from the instance itself (`copy_source`): sources are
            // looked up in its direct dependencies, by the names its (rewritten) image needs.
            let deps: Vec<loaded::Loaded> = private_libs::needed_names(&image)
                .into_iter()
                .filter_map(|n| CString::new(n).ok())
                .filter_map(|n| private_libs::in_fd_dir(relative, || loaded::Loaded::find(&n)).ok().flatten())
                .collect();
            let handles: Vec<*mut c_void> = deps.iter().map(loaded::Loaded::handle).collect();
            let protected = got_vars::relro_pages(base, self.got_slots.relro());
            if let Err(e) = copy_source::fill(&copies, &handles, protected) {
                static TOLD: std::sync::Once = std::sync::Once::new();
                TOLD.call_once(|| eprintln!("oxmpi: threads mode: cannot fill {}'s copies of its libraries' variables ({e})", self.program.display()));
            }
        }
        let got_vars = if self.got_slots.is_empty() {
            std::ptr::null_mut()
        } else {
            let (vars, more) = self.got_slots.redirect(base).map_err(fail)?;
            copies.extend(more);
            Box::into_raw(vars)
        };
        if !copies.is_empty() {
            if let Some(first) = self.first_copies.get() {
                // Handles of this rank's private library copies, already loaded (RTLD_NOLOAD
                // finds them by their file).
                let libs: Vec<loaded::Loaded> = lib_fds
                    .iter()
                    .filter_map(|&fd| CString::new(memfd::path(fd)).ok())
                    .filter_map(|p| loaded::Loaded::find(&p))
                    .collect();
                let handles: Vec<*mut c_void> = libs.iter().map(loaded::Loaded::handle).collect();
                copy_refresh::take_first(&copies, first, &handles);
            } else {
                let _ = self.first_copies.set(copies.clone());
            }
        }
        // This rank's private libraries: the copies just made, or the originals the first
        // instance loaded (not when a later rank shares them, copies having failed).
        let own_libs = match self.private.get() {
            Some(Some(p)) if !lib_fds.is_empty() => p.loaded_as(Some(&lib_fds)),
            Some(Some(p)) if first => p.loaded_as(None),
            _ => Vec::new(),
        };
        if !copies.is_empty() && !own_libs.is_empty() {
            let libs: Vec<(&[u8], loaded::Loaded)> = own_libs
                .iter()
                .filter_map(|(image, path)| Some((*image, loaded::Loaded::find(&CString::new(path.as_str()).ok()?)?)))
                .collect();
            let handles: Vec<(&[u8], *mut c_void)> = libs.iter().map(|(image, l)| (*image, l.handle())).collect();
            if let Err(e) = copy_bind::bind(&handles, &copies) {
                static TOLD: std::sync::Once = std::sync::Once::new();
                TOLD.call_once(|| eprintln!("oxmpi: threads mode: cannot bind the libraries of {} to its own MPI objects ({e}); comparisons with MPI's predefined handles may fail in its libraries", self.program.display()));
            }
        }
        let mut constructors = Vec::new();
        if let Some(init) = self.init.filter(|&a| a != 0) {
            // SAFETY: DT_INIT of this loaded instance: a function of this signature (glibc calls
            // it with argc, argv, envp).
            constructors.push(unsafe { std::mem::transmute::<usize, InitFn>(base.wrapping_add(init as usize)) });
        }
        if let Some((at, n)) = self.init_array {
            for i in 0..n as usize {
                // SAFETY: prepare checked the array lies in a loaded segment; dlopen relocated its
                // entries (function addresses, or 0 / -1 which glibc's crt never leaves but we skip).
                let f = unsafe { std::ptr::read((base.wrapping_add(at as usize) as *const usize).add(i)) };
                if f != 0 && f != usize::MAX {
                    // SAFETY: a relocated DT_INIT_ARRAY entry is a constructor of this signature.
                    constructors.push(unsafe { std::mem::transmute::<usize, InitFn>(f) });
                }
            }
        }
        Ok(Instance { main, handle, base, fd, lib_fds, copies, got_vars, constructors })
    }
}

/// The text of the calling thread's last dl* error (glibc keeps it per thread).
fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call on
    // this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown dynamic loader error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The leading fields of glibc's `struct link_map` (`<link.h>`, public and stable ABI).
#[repr(C)]
struct LinkMapHead {
    l_addr: usize,
    l_name: *const c_char,
    l_ld: *const c_void,
    l_next: *const c_void,
    l_prev: *const c_void,
}

/// The load base (`l_addr`, the difference between run-time and link-time addresses).
fn link_map_base(handle: *mut c_void) -> Option<usize> {
    let mut lm: *const LinkMapHead = std::ptr::null();
    // SAFETY: live handle; RTLD_DI_LINKMAP stores a `struct link_map *` into the pointer we pass.
    let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&mut lm as *mut *const LinkMapHead).cast()) };
    if rc != 0 || lm.is_null() {
        return None;
    }
    // SAFETY: glibc returned the object's link map, which lives as long as the object (forever).
    Some(unsafe { (*lm).l_addr })
}

// ---------------------------------------------------------------------------------------------
// ELF inspection (ELF64 little-endian; every read bounds-checked).

const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const PT_TLS: u32 = 7;
const PF_X: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_DYNSYM: u32 = 11;
const DT_NULL: i64 = 0;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_STRSZ: i64 = 10;
const DT_INIT: i64 = 12;
const DT_DEBUG: i64 = 21;
const DT_INIT_ARRAY: i64 = 25;
const DT_INIT_ARRAYSZ: i64 = 27;
const DT_FLAGS_1: i64 = 0x6fff_fffb;
const R_X86_64_COPY: u32 = 5;
const R_X86_64_GLOB_DAT: u32 = 6;
const DF_1_PIE: u64 = 0x0800_0000;
const STT_FUNC: u8 = 2;
const STB_LOCAL: u8 = 0;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const SHN_UNDEF: u16 = 0;
const SHN_LORESERVE: u16 = 0xff00;

fn bytes<const N: usize>(b: &[u8], off: u64) -> Option<[u8; N]> {
    let off = usize::try_from(off).ok()?;
    b.get(off..off.checked_add(N)?)?.try_into().ok()
}
fn u16_at(b: &[u8], off: u64) -> Option<u16> {
    bytes(b, off).map(u16::from_le_bytes)
}
fn u32_at(b: &[u8], off: u64) -> Option<u32> {
    bytes(b, off).map(u32::from_le_bytes)
}
fn u64_at(b: &[u8], off: u64) -> Option<u64> {
    bytes(b, off).map(u64::from_le_bytes)
}

/// The parts of a program header we use.
#[derive(Clone, Copy)]
struct Phdr {
    p_type: u32,
    p_flags: u32,
    p_offset: u64,
    p_vaddr: u64,
    p_filesz: u64,
    p_memsz: u64,
}

/// The parts of a section header we use.
#[derive(Clone, Copy)]
struct Shdr {
    sh_type: u32,
    sh_offset: u64,
    sh_size: u64,
    sh_link: u32,
    sh_entsize: u64,
}

fn phdrs(b: &[u8]) -> Result<Vec<Phdr>, &'static str> {
    let phoff = u64_at(b, 0x20).ok_or("truncated ELF header")?;
    let phentsize = u16_at(b, 0x36).ok_or("truncated ELF header")?;
    let phnum = u16_at(b, 0x38).ok_or("truncated ELF header")?;
    if phnum == 0 {
        return Err("no program headers");
    }
    if phentsize != 56 {
        return Err("bad program header size");
    }
    (0..u64::from(phnum))
        .map(|i| {
            let o = phoff.checked_add(i * 56)?;
            Some(Phdr {
                p_type: u32_at(b, o)?,
                p_flags: u32_at(b, o + 4)?,
                p_offset: u64_at(b, o + 8)?,
                p_vaddr: u64_at(b, o + 16)?,
                p_filesz: u64_at(b, o + 32)?,
                p_memsz: u64_at(b, o + 40)?,
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("truncated program headers")
}

/// Section headers; empty when the file has none (then only `.dynsym` via `dlsym` could help,
/// and we cannot tell in advance that `main` exists).
fn shdrs(b: &[u8]) -> Result<Vec<Shdr>, &'static str> {
    let shoff = u64_at(b, 0x28).ok_or("truncated ELF header")?;
    let shentsize = u16_at(b, 0x3a).ok_or("truncated ELF header")?;
    let mut shnum = u64::from(u16_at(b, 0x3c).ok_or("truncated ELF header")?);
    if shoff == 0 {
        return Ok(Vec::new());
    }
    if shentsize != 64 {
        return Err("bad section header size");
    }
    let read = |i: u64| -> Option<Shdr> {
        let o = shoff.checked_add(i.checked_mul(64)?)?;
        Some(Shdr {
            sh_type: u32_at(b, o + 4)?,
            sh_offset: u64_at(b, o + 24)?,
            sh_size: u64_at(b, o + 32)?,
            sh_link: u32_at(b, o + 40)?,
            sh_entsize: u64_at(b, o + 56)?,
        })
    };
    if shnum == 0 {
        // Extended numbering: the real count is in section 0's sh_size.
        shnum = read(0).ok_or("truncated section headers")?.sh_size;
    }
    // Every header must be in the file, which also bounds the allocation below.
    if shnum.checked_mul(64).and_then(|n| n.checked_add(shoff)).is_none_or(|end| end > b.len() as u64) {
        return Err("truncated section headers");
    }
    (0..shnum).map(read).collect::<Option<Vec<_>>>().ok_or("truncated section headers")
}

/// A NUL-terminated name at `off` in string table `strtab`, compared with `want`.
fn name_is(b: &[u8], strtab: &Shdr, off: u32, want: &[u8]) -> bool {
    let start = strtab.sh_offset.checked_add(u64::from(off));
    let (Some(start), Some(end)) = (start, strtab.sh_offset.checked_add(strtab.sh_size)) else {
        return false;
    };
    if u64::from(off) >= strtab.sh_size {
        return false;
    }
    let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
        return false;
    };
    let Some(s) = b.get(start..end.min(b.len())) else {
        return false;
    };
    s.len() > want.len() && s.starts_with(want) && s[want.len()] == 0
}

/// `st_value` of a defined function `main` in the symbol table `sec`, if any: a global or weak
/// one first, else a local one (bool: whether it is global or weak).
fn main_in(b: &[u8], secs: &[Shdr], sec: &Shdr) -> Result<Option<(u64, bool)>, &'static str> {
    if sec.sh_entsize != 24 {
        return Err("bad symbol table entry size");
    }
    let strtab = secs.get(sec.sh_link as usize).ok_or("bad symbol string table index")?;
    let end = sec.sh_offset.checked_add(sec.sh_size).ok_or("bad symbol table")?;
    if end > b.len() as u64 {
        return Err("truncated symbol table");
    }
    let mut local = None;
    for i in 0..sec.sh_size / 24 {
        let o = sec.sh_offset + i * 24;
        let (Some(st_name), Some(st_info), Some(st_shndx), Some(st_value)) =
            (u32_at(b, o), bytes::<1>(b, o + 4), u16_at(b, o + 6), u64_at(b, o + 8))
        else {
            return Err("truncated symbol table");
        };
        let (bind, typ) = (st_info[0] >> 4, st_info[0] & 0xf);
        if typ == STT_FUNC && st_shndx != SHN_UNDEF && st_shndx < SHN_LORESERVE && name_is(b, strtab, st_name, b"main") {
            if bind == STB_GLOBAL || bind == STB_WEAK {
                return Ok(Some((st_value, true)));
            }
            if bind == STB_LOCAL && local.is_none() {
                local = Some((st_value, false));
            }
        }
    }
    Ok(local)
}

/// libc variables that libc itself changes after start-up, or reads after the program set them:
/// a copy of one (`R_X86_64_COPY`) in a loaded instance would never see the change (`tzname`
/// after `tzset`), or libc would never see the program's (`error_print_progname`).
pub const MUTABLE_LIBC_DATA: &[&str] = &[
    "tzname",
    "timezone",
    "daylight",
    // what glibc's <time.h> names them
    "__tzname",
    "__timezone",
    "__daylight",
    "signgam",
    "getdate_err",
    "error_message_count",
    "error_one_per_line",
    "error_print_progname",
    "obstack_alloc_failed_handler",
    "obstack_exit_failure",
];

/// libc variables a copy of which is kept right per rank: getopt's, which the preload library's
/// `getopt`, `getopt_long` and `getopt_long_only` read from and write back to the calling rank's
/// copies (c-src/threads-preload.c).
pub const KEPT_LIBC_DATA: &[&str] = &["optarg", "optind", "opterr", "optopt"];

/// The copies (name, address) the post-load passes (`copy_source`, `copy_bind`) may rewrite,
/// with their names as C strings for `dlsym`: all but getopt's (`KEPT_LIBC_DATA`).
fn rewritable_copies(copies: &[(String, usize)]) -> impl Iterator<Item = (&str, CString, usize)> {
    copies
        .iter()
        .filter(|(name, _)| !KEPT_LIBC_DATA.contains(&name.as_str()))
        .filter_map(|(name, at)| Some((name.as_str(), CString::new(name.as_str()).ok()?, *at)))
}

/// File offset of `len` bytes at virtual address `vaddr`, if a PT_LOAD maps them from the file.
fn vaddr_to_off(ph: &[Phdr], vaddr: u64, len: u64) -> Option<u64> {
    let p = ph.iter().find(|p| {
        p.p_type == PT_LOAD
            && vaddr >= p.p_vaddr
            && vaddr.checked_add(len).is_some_and(|end| end <= p.p_vaddr.saturating_add(p.p_filesz))
    })?;
    (vaddr - p.p_vaddr).checked_add(p.p_offset)
}

/// Names and link-time addresses (`r_offset`) of the symbols with relocations of type `rtype`
/// (`R_X86_64_COPY`, `R_X86_64_GLOB_DAT`) in `DT_RELA` (read through the dynamic section, which
/// stripping keeps).
fn named_relocs(b: &[u8], ph: &[Phdr], dynamic: &[(i64, u64)], rtype: u32) -> Result<Vec<(String, u64)>, &'static str> {
    let get = |tag: i64| dynamic.iter().find(|(t, _)| *t == tag).map(|&(_, v)| v);
    let (Some(rela), Some(relasz)) = (get(DT_RELA), get(DT_RELASZ)) else {
        return Ok(Vec::new());
    };
    let rela = vaddr_to_off(ph, rela, relasz).ok_or("DT_RELA outside the file")?;
    let mut names = Vec::new();
    for i in 0..relasz / 24 {
        let info = u64_at(b, rela + i * 24 + 8).ok_or("truncated relocations")?;
        if info as u32 != rtype {
            continue;
        }
        let r_offset = u64_at(b, rela + i * 24).ok_or("truncated relocations")?;
        let (Some(symtab), Some(strtab), Some(strsz)) = (get(DT_SYMTAB), get(DT_STRTAB), get(DT_STRSZ)) else {
            return Err("symbol relocation without a symbol table");
        };
        let sym = (info >> 32).checked_mul(24).and_then(|o| o.checked_add(symtab)).ok_or("bad relocation")?;
        let sym = vaddr_to_off(ph, sym, 24).ok_or("relocation symbol outside the file")?;
        let st_name = u64::from(u32_at(b, sym).ok_or("truncated dynamic symbols")?);
        let strs = vaddr_to_off(ph, strtab, strsz).ok_or("DT_STRTAB outside the file")?;
        if st_name >= strsz {
            return Err("bad symbol name");
        }
        // In bounds: vaddr_to_off checked strtab..strtab+strsz lies in a file-backed segment.
        let s = &b[(strs + st_name) as usize..(strs + strsz) as usize];
        let s = &s[..s.iter().position(|&c| c == 0).ok_or("unterminated symbol name")?];
        names.push((String::from_utf8_lossy(s).into_owned(), r_offset));
    }
    Ok(names)
}

/// Inspects a program image (the file's bytes) and decides how to load it.
fn inspect(program: &Path, mut image: Vec<u8>) -> Result<Prepared, LoadError> {
    let b = &image[..];
    let corrupt = |what: &str| refusal(program, format!("is not a valid ELF file ({what})"), None);
    if b.len() < 64 || &b[..4] != b"\x7fELF" {
        return Err(refusal(program, "is not an ELF program (a script?)", None));
    }
    if b[4] != 2 || b[5] != 1 || u16_at(b, 0x12) != Some(EM_X86_64) {
        return Err(refusal(program, "is not an x86-64 ELF64 little-endian program, the only kind threads mode loads", None));
    }
    let e_type = u16_at(b, 0x10).ok_or_else(|| corrupt("truncated ELF header"))?;
    match e_type {
        ET_DYN => {}
        ET_EXEC => {
            return Err(refusal(
                program,
                "is not position-independent (linked -no-pie), so it cannot be loaded once per rank",
                Some("rebuild it with -fPIE -pie"),
            ))
        }
        _ => return Err(refusal(program, "is not an executable or shared object (object file or core dump?)", None)),
    }
    let ph = phdrs(b).map_err(corrupt)?;
    let interp = ph.iter().any(|p| p.p_type == PT_INTERP);
    let tls = ph.iter().any(|p| p.p_type == PT_TLS);
    let dynamic = ph.iter().find(|p| p.p_type == PT_DYNAMIC).copied();

    // DT_FLAGS_1: where it is (to patch) and whether DF_1_PIE is set.
    let Some(dynamic) = dynamic else {
        return Err(refusal(program, "is statically linked (no dynamic section)", None));
    };
    let mut flags_1: Option<(u64, u64)> = None; // (file offset of d_val, value)
    let mut init_entries: Vec<u64> = Vec::new(); // file offsets of DT_INIT and DT_INIT_ARRAYSZ
    let mut entries: Vec<(i64, u64)> = Vec::new();
    let dyn_end = dynamic.p_offset.checked_add(dynamic.p_filesz).ok_or_else(|| corrupt("bad dynamic segment"))?;
    if dyn_end > b.len() as u64 {
        return Err(corrupt("truncated dynamic segment"));
    }
    for i in 0..dynamic.p_filesz / 16 {
        let o = dynamic.p_offset + i * 16;
        let tag = u64_at(b, o).ok_or_else(|| corrupt("truncated dynamic segment"))? as i64;
        let val = u64_at(b, o + 8).ok_or_else(|| corrupt("truncated dynamic segment"))?;
        match tag {
            DT_NULL => break,
            DT_FLAGS_1 => flags_1 = Some((o + 8, val)),
            DT_INIT => init_entries.push(o),
            DT_INIT_ARRAYSZ => init_entries.push(o),
            _ => {}
        }
        entries.push((tag, val));
    }
    let pie_flag = flags_1.is_some_and(|(_, v)| v & DF_1_PIE != 0);
    if pie_flag && !interp {
        return Err(refusal(program, "is statically linked (static-pie)", None));
    }
    // A PIE without DF_1_PIE (linkers before binutils 2.35 did not set it) still has PT_INTERP and
    // still uses local-exec TLS, so PT_INTERP counts as "executable" too.
    let kind = if pie_flag || interp { Kind::Pie } else { Kind::SharedObject };
    if kind == Kind::Pie && tls {
        return Err(refusal(program, PIE_TLS_REASON, Some(REBUILD_FIX)));
    }

    let (copies, copy_offsets): (Vec<String>, Vec<u64>) = named_relocs(b, &ph, &entries, R_X86_64_COPY).map_err(corrupt)?.into_iter().unzip();
    let mut glob_dat = named_relocs(b, &ph, &entries, R_X86_64_GLOB_DAT).map_err(corrupt)?;
    glob_dat.retain(|(n, _)| !copies.contains(n));
    let got_slots = got_vars::Slots::find(glob_dat, &ph);
    if let Some(bad) = copies.iter().find(|c| MUTABLE_LIBC_DATA.contains(&c.as_str())) {
        return Err(refusal(
            program,
            format!("is a PIE that keeps a private copy of libc's `{bad}`, which libc and the program would see differently"),
            Some(REBUILD_FIX),
        ));
    }

    // main: .dynsym (exported, dlsym finds it) or .symtab (st_value + load base).
    let secs = shdrs(b).map_err(corrupt)?;
    let mut dyn_main = None;
    let mut sym_main = None;
    for s in &secs {
        match s.sh_type {
            SHT_DYNSYM if dyn_main.is_none() => dyn_main = main_in(b, &secs, s).map_err(corrupt)?,
            SHT_SYMTAB if sym_main.is_none() => sym_main = main_in(b, &secs, s).map_err(corrupt)?,
            _ => {}
        }
    }
    let (main_value, main_source) = match (dyn_main, sym_main) {
        (Some((v, true)), _) => (v, MainSource::Exported),
        (_, Some((v, global))) => (v, if global { MainSource::SymtabGlobal } else { MainSource::SymtabLocal }),
        _ if kind == Kind::SharedObject => return Err(refusal(program, "is a shared object that does not define main", None)),
        _ => match entry::main_from_start(b, &ph, &entries) {
            Ok(v) => (v, MainSource::EntryPoint),
            Err(why) => {
                return Err(refusal(
                    program,
                    format!("is stripped and does not export main, and its main cannot be found from its entry point ({why})"),
                    Some("rebuild it without stripping it (or with -rdynamic)"),
                ))
            }
        },
    };
    let main_exported = main_source == MainSource::Exported;
    let in_code = ph.iter().any(|p| {
        p.p_type == PT_LOAD
            && p.p_flags & PF_X != 0
            && main_value >= p.p_vaddr
            && p.p_vaddr.checked_add(p.p_memsz).is_some_and(|end| main_value < end)
    });
    if !in_code {
        return Err(corrupt("main is not in an executable segment"));
    }

    if let Some((off, v)) = flags_1.filter(|_| pie_flag) {
        // The per-rank copies are made from this buffer; the file on disk is untouched.
        let off = off as usize; // in bounds: read above
        image[off..off + 8].copy_from_slice(&(v & !DF_1_PIE).to_le_bytes());
    }
    // The program's own constructors run on the rank's thread, in its context, just before its
    // main (`Instance::constructors`), not in dlopen on the host's thread: dlopen gets a copy
    // whose DT_INIT is renamed DT_DEBUG (which glibc ignores in a loaded object) and whose
    // DT_INIT_ARRAYSZ is 0. The libraries it needs still run theirs in dlopen (they are shared).
    let get = |tag: i64| entries.iter().find(|(t, _)| *t == tag).map(|&(_, v)| v);
    let init = get(DT_INIT);
    let init_array = match (get(DT_INIT_ARRAY), get(DT_INIT_ARRAYSZ)) {
        (Some(a), Some(sz)) if sz > 0 => {
            if sz % 8 != 0 || !ph.iter().any(|p| p.p_type == PT_LOAD && a >= p.p_vaddr && a.checked_add(sz).is_some_and(|e| e <= p.p_vaddr + p.p_memsz)) {
                return Err(corrupt("DT_INIT_ARRAY outside the loaded segments"));
            }
            Some((a, sz / 8))
        }
        _ => None,
    };
    for o in init_entries {
        let o = o as usize; // in bounds: read above
        if u64_at(&image, o as u64) == Some(DT_INIT as u64) {
            image[o..o + 8].copy_from_slice(&(DT_DEBUG as u64).to_le_bytes());
        } else {
            image[o + 8..o + 16].copy_from_slice(&0u64.to_le_bytes());
        }
    }
    Ok(Prepared { program: program.to_path_buf(), image, kind, main_value, main_exported, main_source, copies, copy_offsets, got_slots, init, init_array, private: std::sync::OnceLock::new(), first_copies: std::sync::OnceLock::new() })
}

/// Inspects `program` once (ELF64 x86-64 only) and decides how to load it; errors say why not.
///
/// Accepts a shared object that defines `main`, and a PIE whose `main` is exported or present
/// in `.symtab` and that has no thread-local variables. Refuses everything else with one line
/// naming the program, the reason and the fix (`--mode processes`).
pub fn prepare(program: &Path) -> Result<Prepared, LoadError> {
    let image = std::fs::read(program).map_err(|e| refusal(program, format!("cannot be read ({e})"), None))?;
    inspect(program, image)
}


#[cfg(test)]
mod tests {
    //! Small C programs compiled with gcc (not linked against MPI) into a temp directory, then
    //! prepared and loaded into the test process.
    use super::*;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "oxmpi-loader-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Compiles `src` with `cc` and `flags` into `dir/name`; None if the compiler is missing or
    /// refuses (only used for optional toolchains).
    fn try_build(cc: &str, dir: &TempDir, name: &str, src: &str, flags: &[&str]) -> Option<PathBuf> {
        let c = dir.0.join(format!("{name}.c"));
        std::fs::write(&c, src).unwrap();
        let out = dir.0.join(name);
        let st = Command::new(cc).args(flags).arg("-o").arg(&out).arg(&c).status().ok()?;
        st.success().then_some(out)
    }
    fn build(dir: &TempDir, name: &str, src: &str, flags: &[&str]) -> PathBuf {
        try_build("gcc", dir, name, src, flags).unwrap_or_else(|| panic!("gcc failed to build {name} with {flags:?}"))
    }

    /// Globals in .bss and .data and a static local: main returns 100 * counter + 10 * calls +
    /// (initialized - 5), so 111 on a fresh instance and 222 on its second call.
    const COUNTER: &str = r#"
        #include <string.h>
        int counter;
        int initialized = 5;
        static int bump(void) { static int calls; return ++calls; }
        int get_counter(void) { return counter; }
        int main(int argc, char **argv) {
            if (argc != 2 || strcmp(argv[1], "x") != 0) return -1;
            counter++;
            initialized++;
            return counter * 100 + bump() * 10 + (initialized - 5);
        }
    "#;
    const TLS: &str = "__thread int t; int main(void) { return ++t; }";

    fn call_main(inst: &Instance) -> c_int {
        let a0 = CString::new("prog").unwrap();
        let a1 = CString::new("x").unwrap();
        let mut argv = [a0.as_ptr() as *mut c_char, a1.as_ptr() as *mut c_char, std::ptr::null_mut()];
        let mut envp = [std::ptr::null_mut::<c_char>()];
        // SAFETY: the test programs' main takes (argc, argv) and only reads argv[1]; both arrays
        // are NULL-terminated and outlive the call.
        unsafe { (inst.main)(2, argv.as_mut_ptr(), envp.as_mut_ptr()) }
    }

    /// The program's constructors are not run by `load_instance` but handed to the caller.
    #[test]
    fn constructors_run_by_the_caller() {
        let d = TempDir::new("ctor");
        let src = r#"
            static int order;
            int seen;
            __attribute__((constructor(101))) static void first(void) { order = order * 10 + 1; }
            __attribute__((constructor(102))) static void second(int argc) { order = order * 10 + 2; seen = argc; }
            int main(void) { return order * 100 + seen; }
        "#;
        for flags in [&["-fPIE", "-pie"][..], &["-shared", "-fPIC"], &["-fPIE", "-pie", "-s"]] {
            let p = prepare(&build(&d, "ctor", src, flags)).unwrap();
            let a = p.load_instance(0).unwrap();
            let b = p.load_instance(1).unwrap();
            assert_eq!(call_main(&a), 0, "{flags:?}: constructors ran in dlopen");
            assert!(b.constructors().len() >= 2, "{flags:?}");
            let mut argv = [std::ptr::null_mut::<c_char>()];
            for f in b.constructors() {
                // SAFETY: the instance's constructors, called as glibc would (argc, argv, envp).
                unsafe { f(7, argv.as_mut_ptr(), argv.as_mut_ptr()) };
            }
            assert_eq!(call_main(&b), 1207, "{flags:?}");
        }
    }

    /// `unload` removes the instance and closes its memfd; a new instance loaded after it (which
    /// may get the same descriptor number) starts from fresh globals, not the old instance's.
    #[test]
    fn unload_then_load_fresh() {
        let d = TempDir::new("unload");
        let src = "static int calls; int main(void) { return ++calls; }";
        let p = prepare(&build(&d, "unload", src, &["-fPIE", "-pie"])).unwrap();
        let a = p.load_instance(0).unwrap();
        assert_eq!(call_main(&a), 1);
        assert_eq!(call_main(&a), 2);
        let fd = a.fd();
        assert!(a.unload(0), "a plain program leaves entirely");
        // SAFETY: F_GETFD on a number only queries it.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, -1, "the memfd is closed");
        let b = p.load_instance(0).unwrap();
        assert_eq!(call_main(&b), 1, "a fresh instance, not the unloaded one");
    }

    /// Three instances: each starts from fresh globals, and an instance keeps its own state.
    fn check_private_globals(p: &Prepared) {
        let insts: Vec<Instance> = (0..3).map(|r| p.load_instance(r).unwrap()).collect();
        for i in &insts {
            assert_eq!(call_main(i), 111);
        }
        assert_eq!(call_main(&insts[1]), 222);
        assert_eq!(call_main(&insts[0]), 222);
        assert_eq!(call_main(&insts[2]), 222);
        assert_eq!(call_main(&insts[1]), 333);
        let bases: std::collections::HashSet<usize> = insts.iter().map(|i| i.base()).collect();
        assert_eq!(bases.len(), 3, "distinct load addresses");
    }

    fn refused(r: Result<Prepared, LoadError>) -> String {
        match r {
            Ok(_) => panic!("accepted a program that should be refused"),
            Err(e) => {
                assert!(!e.0.contains('\n'), "one line: {e}");
                assert!(e.0.contains(FIX_PROCESSES), "names the fix: {e}");
                e.0
            }
        }
    }

    #[test]
    fn pie_without_rdynamic_uses_symtab_main() {
        let d = TempDir::new("pie");
        let prog = build(&d, "pie", COUNTER, &["-fPIE", "-pie", "-O1"]);
        let before = std::fs::read(&prog).unwrap();
        let p = prepare(&prog).unwrap();
        assert_eq!(p.kind(), Kind::Pie);
        assert!(!p.main_exported(), "main found in .symtab, not .dynsym");
        check_private_globals(&p);
        assert_eq!(std::fs::read(&prog).unwrap(), before, "the original file is never patched");
        // get_counter is not exported without -rdynamic.
        assert!(p.load_instance(9).unwrap().symbol("get_counter").is_none());
    }

    /// Stripped (no .symtab): main decoded from _start. A local main: taken from .symtab.
    #[test]
    fn stripped_pie_main_from_entry_point() {
        let d = TempDir::new("strip");
        for flags in [&["-fPIE", "-pie", "-s", "-O2"][..], &["-fPIE", "-pie", "-s", "-O0", "-fcf-protection=none"]] {
            let prog = build(&d, "stripped", COUNTER, flags);
            let p = prepare(&prog).unwrap();
            assert_eq!(p.main_source(), MainSource::EntryPoint);
            check_private_globals(&p);
        }
        if let Some(prog) = try_build("clang", &d, "clang_stripped", COUNTER, &["-fPIE", "-pie", "-s"]) {
            let p = prepare(&prog).unwrap();
            assert_eq!(p.main_source(), MainSource::EntryPoint);
            check_private_globals(&p);
        }
        let prog = build(&d, "local", COUNTER, &["-fPIE", "-pie"]);
        assert!(Command::new("objcopy").arg("--localize-symbol=main").arg(&prog).status().unwrap().success());
        let p = prepare(&prog).unwrap();
        assert_eq!(p.main_source(), MainSource::SymtabLocal);
        check_private_globals(&p);
    }

    #[test]
    fn pie_with_rdynamic_exports_main() {
        let d = TempDir::new("rdyn");
        let prog = build(&d, "rdyn", COUNTER, &["-fPIE", "-pie", "-rdynamic"]);
        let p = prepare(&prog).unwrap();
        assert_eq!(p.kind(), Kind::Pie);
        assert!(p.main_exported());
        check_private_globals(&p);
        // Stripping keeps .dynsym, so an exported main is still found.
        let stripped = build(&d, "rdyn_s", COUNTER, &["-fPIE", "-pie", "-rdynamic", "-s"]);
        let p = prepare(&stripped).unwrap();
        assert!(p.main_exported());
        check_private_globals(&p);
    }

    #[test]
    fn shared_object_instances_have_own_globals_and_tls() {
        let d = TempDir::new("so");
        let prog = build(&d, "prog.so", COUNTER, &["-shared", "-fPIC"]);
        let p = prepare(&prog).unwrap();
        assert_eq!(p.kind(), Kind::SharedObject);
        assert!(p.main_exported());
        check_private_globals(&p);
        // An exported helper reads this instance's own global.
        let a = p.load_instance(0).unwrap();
        let b = p.load_instance(1).unwrap();
        call_main(&a);
        call_main(&a);
        type GetCounter = unsafe extern "C" fn() -> c_int;
        // SAFETY: get_counter is `int get_counter(void)` in COUNTER.
        let (ga, gb) = unsafe {
            (
                std::mem::transmute::<*mut c_void, GetCounter>(a.symbol("get_counter").unwrap()),
                std::mem::transmute::<*mut c_void, GetCounter>(b.symbol("get_counter").unwrap()),
            )
        };
        // SAFETY: plain C functions of live instances.
        assert_eq!(unsafe { (ga(), gb()) }, (2, 0));

        // A -shared -fPIC build's __thread variables are per copy (general-dynamic TLS).
        let tls = build(&d, "tls.so", TLS, &["-shared", "-fPIC"]);
        let p = prepare(&tls).unwrap();
        let insts: Vec<Instance> = (0..3).map(|r| p.load_instance(r).unwrap()).collect();
        for i in &insts {
            assert_eq!(call_main(i), 1);
        }
        assert_eq!(call_main(&insts[0]), 2);
    }

    #[test]
    fn ranks_load_and_run_concurrently() {
        let d = TempDir::new("conc");
        let prog = build(&d, "pie", COUNTER, &["-fPIE", "-pie"]);
        let p = prepare(&prog).unwrap();
        std::thread::scope(|s| {
            let p = &p;
            let hs: Vec<_> = (0..4).map(|r| s.spawn(move || call_main(&p.load_instance(r).unwrap()))).collect();
            for h in hs {
                assert_eq!(h.join().unwrap(), 111);
            }
        });
    }

    #[test]
    fn refusals() {
        let d = TempDir::new("refuse");
        let tls = build(&d, "tls", TLS, &["-fPIE", "-pie"]);
        let e = refused(prepare(&tls));
        assert_eq!(e, format!("{} {PIE_TLS_REASON}: {FIX_PROCESSES}, or {REBUILD_FIX}", tls.display()));
        assert_eq!(
            e,
            format!(
                "{} has thread-local variables and is a PIE: run it with --mode processes, or rebuild it with oxmpi's mpicc",
                tls.display()
            )
        );

        let nopie = build(&d, "nopie", COUNTER, &["-no-pie"]);
        assert!(refused(prepare(&nopie)).contains("not position-independent"));

        // A stripped PIE whose entry point is not a glibc _start we know (patched to `ud2`).
        let stripped = build(&d, "stripped", COUNTER, &["-fPIE", "-pie", "-s"]);
        let mut img = std::fs::read(&stripped).unwrap();
        let entry = u64_at(&img, 0x18).unwrap();
        let ph = phdrs(&img).unwrap();
        let off = vaddr_to_off(&ph, entry, 2).unwrap() as usize;
        img[off..off + 2].copy_from_slice(&[0x0f, 0x0b]);
        let e = refused(inspect(&stripped, img));
        assert!(e.contains("is stripped and does not export main, and its main cannot be found from its entry point (its entry code is not a glibc _start"), "{e}");

        let nomain = build(&d, "nomain.so", "int f(void) { return 1; }", &["-shared", "-fPIC"]);
        assert!(refused(prepare(&nomain)).contains("does not define main"));

        let obj = d.0.join("obj.o");
        assert!(Command::new("gcc").arg("-c").arg("-o").arg(&obj).arg(d.0.join("nopie.c")).status().unwrap().success());
        assert!(refused(prepare(&obj)).contains("not an executable or shared object"));

        let script = d.0.join("script.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        assert!(refused(prepare(&script)).contains("not an ELF program"));

        assert!(refused(prepare(&d.0.join("missing"))).contains("cannot be read"));

        // Other classes, byte orders and machines, made by patching a good image.
        let good = std::fs::read(build(&d, "good", COUNTER, &["-fPIE", "-pie"])).unwrap();
        for (off, byte) in [(4, 1u8), (5, 2), (0x12, 183)] {
            let mut img = good.clone();
            img[off] = byte;
            assert!(refused(inspect(Path::new("x"), img)).contains("x86-64 ELF64 little-endian"));
        }

        // static-pie carries its own libc: refused. Needs libc.a, so only checked when it builds.
        if let Some(sp) = try_build("gcc", &d, "staticpie", COUNTER, &["-static-pie"]) {
            assert!(refused(prepare(&sp)).contains("statically linked"));
        }
        if let Some(st) = try_build("gcc", &d, "static", COUNTER, &["-static"]) {
            refused(prepare(&st));
        }
    }

    /// A PIE's copy relocations: getopt's variables are accepted and each instance's copies are
    /// found (the preload library keeps them right); `tzname` is refused; -fPIC code reaches them
    /// through the GOT instead.
    #[test]
    fn copy_relocations() {
        let d = TempDir::new("copy");
        let getopt = r#"
            #include <unistd.h>
            #include <stdlib.h>
            int main(int argc, char **argv) {
                int c, n = 0;
                while ((c = getopt(argc, argv, "n:")) != -1) n += atoi(optarg);
                return n + optind;
            }
        "#;
        let pie = build(&d, "getopt", getopt, &["-fPIE", "-pie"]);
        let p = prepare(&pie).unwrap();
        let mut c = p.copy_relocated().to_vec();
        c.sort();
        assert_eq!(c, ["optarg", "optind"]);
        let (a, b) = (p.load_instance(0).unwrap(), p.load_instance(1).unwrap());
        let (oa, ob) = (a.copy_address("optind").unwrap(), b.copy_address("optind").unwrap());
        assert_ne!(oa, ob);
        // SAFETY: the instances' own copies of libc's `int optind`, made at load time.
        assert_eq!(unsafe { (*(oa as *const c_int), *(ob as *const c_int)) }, (1, 1));
        assert!(a.copy_address("stdout").is_none());
        let tz = r#"
            #include <time.h>
            int main(void) { tzset(); return tzname[0][0]; }
        "#;
        let e = refused(prepare(&build(&d, "tz", tz, &["-fPIE", "-pie"])));
        assert!(e.contains("private copy of libc's `__tzname`"), "{e}");
        assert!(e.ends_with(REBUILD_FIX));
        let so = build(&d, "getopt.so", getopt, &["-shared", "-fPIC"]);
        assert!(prepare(&so).unwrap().copy_relocated().is_empty());
        let pic_pie = build(&d, "getopt_pic", getopt, &["-fPIC", "-pie"]);
        let p = prepare(&pic_pie).unwrap();
        assert!(p.copy_relocated().is_empty());
        // -fPIC code reaches libc's variables through its GOT: each instance's slots are pointed
        // at storage of its own (`got_vars`), with a fresh process's values.
        let (a, b) = (p.load_instance(0).unwrap(), p.load_instance(1).unwrap());
        let (oa, ob) = (a.copy_address("optind").unwrap(), b.copy_address("optind").unwrap());
        assert_ne!(oa, ob);
        // SAFETY: the instances' own `int optind` and `char *optarg`, made at load time.
        unsafe {
            assert_eq!((*(oa as *const c_int), *(ob as *const c_int)), (1, 1));
            assert!((*(a.copy_address("optarg").unwrap() as *const *const c_char)).is_null());
        }

        let hello = r#"
            #include <stdio.h>
            int main(void) { fputs("", stdout); return fflush(stdout); }
        "#;
        let pie = build(&d, "hello", hello, &["-fPIE", "-pie"]);
        let p = prepare(&pie).unwrap();
        assert_eq!(p.copy_relocated(), ["stdout"]);
        let i = p.load_instance(0).unwrap();
        assert_eq!(call_main(&i), 0);
    }

    /// Why an instance's memfd is never closed: glibc matches loaded objects by path first, so a
    /// new copy that got a closed copy's descriptor number would come back as the old instance.
    #[test]
    fn closed_memfd_number_would_alias_an_instance() {
        let d = TempDir::new("fdreuse");
        let p = prepare(&build(&d, "pie", COUNTER, &["-fPIE", "-pie"])).unwrap();
        let a = p.load_instance(0).unwrap();
        let b = p.load_instance(1).unwrap();
        assert_ne!(a.fd(), b.fd());
        assert_ne!(a.base(), b.base());
        // Only observe glibc's behaviour if the number is reused at once, the lowest-free rule
        // (another test thread may grab it first).
        // SAFETY: b's descriptor is ours; b's mapping does not need it; b is not used after.
        unsafe { libc::close(b.fd()) };
        let c = p.load_instance(2).unwrap();
        if c.fd() == b.fd() {
            assert_eq!(c.base(), b.base(), "glibc returned the old instance for the same path");
        }
    }

    /// Truncated or corrupted images are errors, never panics.
    #[test]
    fn garbage_never_panics() {
        let d = TempDir::new("fuzz");
        let good = std::fs::read(build(&d, "pie", COUNTER, &["-fPIE", "-pie"])).unwrap();
        let so = std::fs::read(build(&d, "so", COUNTER, &["-shared", "-fPIC"])).unwrap();
        let name = Path::new("fuzzed");
        for img in [&good, &so] {
            assert!(inspect(name, img.clone()).is_ok());
            let lens = (0..img.len().min(4096)).chain((4096..img.len()).step_by(61));
            for len in lens {
                let _ = inspect(name, img[..len].to_vec());
            }
            // Header-region and whole-file byte corruption, deterministic xorshift.
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut next = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            for round in 0..3000 {
                let mut m = img.clone();
                for _ in 0..1 + next() % 8 {
                    let span = if round % 2 == 0 { 512.min(m.len()) } else { m.len() };
                    let at = (next() as usize) % span;
                    m[at] = next() as u8;
                }
                // Wide values in header fields that hold offsets and counts.
                if round % 5 == 0 {
                    let field = [0x20, 0x28, 0x36, 0x38, 0x3a, 0x3c][(next() % 6) as usize];
                    let v = next().to_le_bytes();
                    let w = if field >= 0x36 { 2 } else { 8 };
                    m[field..field + w].copy_from_slice(&v[..w]);
                }
                let _ = inspect(name, m);
            }
        }
        for junk in [&b""[..], b"\x7fELF", b"\x7fELF\x02\x01\x01", &[0u8; 64], &[0xffu8; 200]] {
            assert!(inspect(name, junk.to_vec()).is_err());
        }
    }

    /// A program built by MPICH's mpicc (PIE, not -rdynamic, references MPI symbols): prepare
    /// finds main in .symtab. Not loaded: that would pull MPICH's libmpi into the test process.
    #[test]
    fn mpich_mpicc_program_is_prepared() {
        let d = TempDir::new("mpicc");
        let src = r#"
            #include <mpi.h>
            int main(int argc, char **argv) {
                int rank;
                MPI_Init(&argc, &argv);
                MPI_Comm_rank(MPI_COMM_WORLD, &rank);
                MPI_Finalize();
                return 0;
            }
        "#;
        let Some(prog) = try_build("mpicc.mpich", &d, "hello", src, &[]) else {
            eprintln!("mpicc.mpich not available: skipped");
            return;
        };
        let p = prepare(&prog).unwrap();
        assert_eq!(p.kind(), Kind::Pie);
        assert!(!p.main_exported());
        assert_ne!(p.main_offset(), 0);
    }
}
