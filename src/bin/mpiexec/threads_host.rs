//! The threads-mode host: `mpiexec --threads-host N /abs/PROGRAM ARGS...` (hidden, internal).
//!
//! `threads::run` starts this executable again with those arguments, the program name as the user
//! gave it in argv[0], and liboxmpi.so (libmpi.so.12) plus liboxmpi-threads.so preloaded. The
//! host hands the whole job to the preloaded library's `oxmpi_threads_main`, which runs the N
//! ranks as threads of this process and returns the job's exit status.
//!
//! The function is looked up at run time with dlsym(RTLD_DEFAULT) rather than linked: it must be
//! the preloaded library's instance (whose hooks the preload library calls), not the copy of the
//! oxmpi crate compiled into this executable, and without the preload there is nothing to call.
use std::ffi::{c_char, c_int, CString, OsString};
use std::os::unix::ffi::OsStrExt;

/// The hidden first argument that selects the host entry.
pub const FLAG: &str = "--threads-host";

/// `int oxmpi_threads_main(int nranks, const char *program, int argc, char **argv)`
type ThreadsMain = unsafe extern "C" fn(c_int, *const c_char, c_int, *mut *mut c_char) -> c_int;

fn fail(msg: &str) -> ! {
    eprintln!("oxmpi: internal: {msg}");
    std::process::exit(2);
}

fn cstring(s: &OsString) -> CString {
    // Words of our own argv cannot hold a NUL byte.
    CString::new(s.as_bytes()).unwrap_or_else(|_| fail("NUL byte in an argument"))
}

/// Runs the job; `argv` is this process's whole argv (`[argv0, FLAG, N, PROGRAM, ARGS...]`).
pub fn main(argv: &[OsString]) -> ! {
    let (Some(n), Some(program)) = (argv.get(2), argv.get(3)) else { fail("usage: --threads-host N PROGRAM [ARGS...]") };
    let nranks = match n.to_str().and_then(|s| s.parse::<c_int>().ok()) {
        Some(v) if v >= 1 => v,
        _ => fail(&format!("--threads-host needs a positive number of ranks, not '{}'", n.to_string_lossy())),
    };
    // The ranks are C programs and expect the dispositions a fresh process has; Rust's runtime
    // ignores SIGPIPE and handles SIGSEGV/SIGBUS (stack overflow detection) in this executable.
    for sig in [libc::SIGPIPE, libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: restoring the default disposition; no other thread exists yet.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    // SAFETY: RTLD_DEFAULT with a NUL-terminated name.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"oxmpi_threads_main".as_ptr()) };
    if sym.is_null() {
        fail("liboxmpi.so is not preloaded in the threads-mode host");
    }
    // SAFETY: the symbol is the library's function with this C signature (the launcher/library
    // contract).
    let threads_main: ThreadsMain = unsafe { std::mem::transmute::<*mut libc::c_void, ThreadsMain>(sym) };

    // The ranks' argv: the program as the user named it (our argv[0]), then its arguments. Kept
    // alive until the process exits, like a real argv.
    let words: Vec<CString> = std::iter::once(&argv[0]).chain(&argv[4..]).map(cstring).collect();
    let mut c_argv: Vec<*mut c_char> = words.iter().map(|w| w.as_ptr() as *mut c_char).collect();
    c_argv.push(std::ptr::null_mut());
    let argc = c_int::try_from(words.len()).unwrap_or_else(|_| fail("too many arguments"));
    let program = cstring(program);
    // SAFETY: valid C strings and a NULL-terminated argv that outlive the call.
    let code = unsafe { threads_main(nranks, program.as_ptr(), argc, c_argv.as_mut_ptr()) };
    std::process::exit(code);
}
