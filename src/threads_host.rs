//! C entry points of threads mode (above both MPI boundaries: the host wires the Fortran one to each
//! rank's program), called by mpiexec's threads-mode host and by the preload
//! library `liboxmpi-threads.so` (its `exit` and `pthread_create` interposers). Not MPI functions.
use crate::runtime::threads::host;
use crate::runtime::job;
use std::os::raw::{c_char, c_int};

/// Runs a threads-mode job of `nranks` ranks of `program` in this process; returns its exit status.
///
/// # Safety
/// `program` is a C string; `argv` holds `argc` C strings (argv[0] the program as typed).
#[no_mangle]
pub unsafe extern "C" fn oxmpi_threads_main(nranks: c_int, program: *const c_char, argc: c_int, argv: *mut *mut c_char) -> c_int {
    crate::ffi::boundary::run_value(70, || {
        if nranks < 1 || program.is_null() || argv.is_null() {
            eprintln!("oxmpi: internal: bad arguments to oxmpi_threads_main");
            return 2;
        }
        // SAFETY: `program` is a non-null C string (checked above; caller contract).
        let prog = unsafe { std::ffi::CStr::from_ptr(program) };
        let upcalls = host::Upcalls {
            instance_loaded: |r, lookup| {
                crate::fortran::sentinels::register_instance(r, lookup);
                crate::abi_ompi::objects::register_instance(r, lookup);
                crate::abi_ompi::fortran::sentinels::register_instance(r, lookup);
            },
            rank_in_mpi: crate::instance::rank_active,
            channel_geometry: crate::transport::shm::geometry,
            rank_recycled: |r| {
                crate::instance::recycle_rank(r);
                if let Some(job) = job::threads_job() {
                    crate::transport::shm::discard_inbound(&job.seg, r);
                }
            },
        };
        // SAFETY: `argv` is non-null and holds `argc` C strings (caller contract).
        let args = unsafe { host::args_from_c(argc, argv) };
        let apps = match host::App::from_env(nranks as usize, host::path_from_c(prog), &args) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("oxmpi: {e}");
                return 2;
            }
        };
        host::run(&apps, upcalls)
    })
}

/// The calling thread's rank context, -1 if it belongs to no rank.
#[no_mangle]
pub extern "C" fn oxmpi_threads_current() -> c_int {
    crate::ffi::boundary::run_value(-1, job::context)
}

/// Makes the calling thread belong to rank context `ctx` (a thread created by a rank's thread).
#[no_mangle]
pub extern "C" fn oxmpi_threads_adopt(ctx: c_int) {
    crate::ffi::boundary::run_value((), || job::set_context(ctx))
}

/// `exit(code)` was called: 1 if the caller is a rank's thread (recorded; it must pthread_exit),
/// 0 if the process should exit normally.
#[no_mangle]
pub extern "C" fn oxmpi_threads_exit_hook(code: c_int) -> c_int {
    crate::ffi::boundary::run_value(0, || host::exit_hook(code) as c_int)
}

/// `pthread_exit` was called: ends the calling rank fiber (its rank's death, unless the rank had
/// ended already) and never returns; returns at once for any other caller (libc's pthread_exit
/// then runs).
#[no_mangle]
pub extern "C" fn oxmpi_threads_fiber_exit() {
    crate::ffi::boundary::run_value((), host::fiber_exit_hook)
}

/// A sleep of `ns` nanoseconds was asked (the preload library's `nanosleep` & co.): 1 if the
/// caller is a rank fiber, which slept by parking so its carrier ran other ranks meanwhile;
/// 0 if the caller must sleep in the kernel itself.
#[no_mangle]
pub extern "C" fn oxmpi_threads_sleep(ns: u64) -> c_int {
    crate::ffi::boundary::run_value(0, || crate::runtime::threads::sched::sleep(std::time::Duration::from_nanos(ns)) as c_int)
}

/// The address of rank context `ctx`'s own copy of the library variable `name` (a C string), or
/// NULL if its program keeps none (the preload library's getopt family, for `optarg` & co.).
///
/// # Safety
/// `name` is NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_threads_copy_address(ctx: c_int, name: *const c_char) -> *mut std::ffi::c_void {
    crate::ffi::boundary::run_value(std::ptr::null_mut(), || {
        if ctx < 0 || name.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: non-null C string (caller contract).
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_str().unwrap_or("");
        host::copy_address(ctx as usize, name).map_or(std::ptr::null_mut(), |a| a as *mut std::ffi::c_void)
    })
}

/// `__cxa_atexit(func, arg, dso)` or `atexit(func)` (dso NULL) by the calling thread (the preload
/// library's interposers): 1 if the handler was recorded for the caller's rank, to run when that
/// rank exits (`runtime::threads::atexit`); 0 if libc should keep it.
#[no_mangle]
pub extern "C" fn oxmpi_threads_atexit(func: Option<crate::runtime::threads::atexit::Handler>, arg: *mut std::ffi::c_void, dso: *mut std::ffi::c_void) -> c_int {
    crate::ffi::boundary::run_value(0, || {
        let ctx = job::context();
        match func {
            Some(f) if ctx >= 0 && job::threads_job().is_some() => crate::runtime::threads::atexit::register(ctx as usize, f, arg, dso) as c_int,
            _ => 0,
        }
    })
}

/// A rank's `sigaction(sig, act, old)` (the preload library's `sigaction` and `signal`): for a
/// crash signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) of a rank thread, records the rank's
/// own disposition, which oxmpi's crash handler runs once before ending the job, and returns 1;
/// 0 when libc should handle the call.
///
/// # Safety
/// `act` and `old` are NULL or valid `struct sigaction` pointers.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_threads_sigaction(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) -> c_int {
    crate::ffi::boundary::run_value(0, || {
        let ctx = job::context();
        if ctx < 0 || job::threads_job().is_none() {
            return 0;
        }
        // SAFETY: NULL or valid pointers (caller contract).
        unsafe { host::set_crash_disposition(ctx as usize, sig, act, old) as c_int }
    })
}

/// `dlopen(file, flags)` called: 1 with `*out` set (the handle, NULL on failure with `dlerror`
/// set) if the calling rank's thread loads the object for itself
/// (`loader::rank_dlopen`), 0 to let libc's `dlopen` do it.
///
/// # Safety
/// `file` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxmpi_threads_dlopen(file: *const c_char, flags: c_int, out: *mut *mut std::ffi::c_void) -> c_int {
    crate::ffi::boundary::run_value(0, || {
        if out.is_null() {
            return 0;
        }
        use crate::runtime::threads::loader::rank_dlopen;
        let done = if file.is_null() {
            rank_dlopen::dlopen_program(flags)
        } else {
            // SAFETY: non-NULL, NUL-terminated (the caller's contract, as dlopen's).
            rank_dlopen::dlopen_for_rank(unsafe { std::ffi::CStr::from_ptr(file) }, flags)
        };
        match done {
            Some(h) => {
                // SAFETY: non-NULL and writable (the preload library's stack slot).
                unsafe { *out = h };
                1
            }
            None => 0,
        }
    })
}
