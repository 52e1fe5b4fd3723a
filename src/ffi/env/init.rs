//! Environment management: init, finalize, abort, versions, timers, error strings.
use crate::ffi::check;
use crate::ffi::pointer_args::out;
use crate::abi::*;
use crate::error::err;
use crate::ffi::error_codes::{class_of, string_of};
use crate::export;
use crate::instance;
use crate::runtime::thread_level::ThreadLevel;
use std::os::raw::{c_char, c_int};
use std::time::Instant;

pub const LIBRARY_VERSION: &str = concat!("oxmpi ", env!("CARGO_PKG_VERSION"), " (MPI 4.1, MPICH ABI, shared-memory engine in Rust)");

/// Copies `s` into a C buffer of `cap` bytes with a terminating NUL; returns the length written.
///
/// # Safety
/// `dst` must be writable for `cap` bytes.
pub unsafe fn write_cstr(dst: *mut c_char, cap: usize, s: &str) -> usize {
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: `n + 1` bytes, at most `cap`, of `dst` are writable (contract); `s` is a Rust
    // string, not in the caller's buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, dst, n);
        *dst.add(n) = 0;
    }
    n
}

static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn epoch() -> Instant {
    *EPOCH.get_or_init(Instant::now)
}

export! {
    fn MPI_Init / PMPI_Init (argc: *mut c_int, argv: *mut *mut *mut c_char) on comm MPI_COMM_WORLD => {
        epoch();
        instance::init(ThreadLevel::Single, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN)?;
        Ok(())
    }

    fn MPI_Init_thread / PMPI_Init_thread (argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) on comm MPI_COMM_WORLD => {
        let provided = out(provided, "provided")?;
        let Some(level) = crate::abi::thread_level(required) else {
            return Err(err(MPI_ERR_ARG, format!("invalid thread level {required}: use one of MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE")));
        };
        epoch();
        let u = instance::init(level, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN)?;
        // SAFETY: checked non-NULL above; the caller passes an int for the level provided.
        unsafe { *provided = crate::abi::thread_level_value(u.thread_level()) };
        Ok(())
    }

    // The handler is MPI_COMM_WORLD's, read before the body: an error found while finalizing
    // (a delete callback's) is raised after MPI is gone.
    fn MPI_Finalize / PMPI_Finalize () on handler (instance::get().map_or(MPI_ERRORS_ARE_FATAL, |u| u.world.errhandler()), MPI_COMM_WORLD) => {
        // Attribute caching: MPI_COMM_SELF's attributes are deleted first thing (MPI 4.1 section
        // 11.2.4), then MPI_COMM_WORLD's, each most recent first (ffi/comm/attr.rs).
        // A delete callback's error is returned, but MPI is finalized all the same (as in
        // MPICH): the rank must not be taken for one that ended without MPI_Finalize.
        let u = instance::get()?;
        // SAFETY: the callbacks called are the application's, registered with their keyvals.
        let deleted = unsafe { crate::ffi::comm::attr::delete_all(u, MPI_COMM_SELF).and(crate::ffi::comm::attr::delete_all(u, MPI_COMM_WORLD)) };
        crate::monitoring::dump::at_finalize(u.rank, u.size);
        instance::finalize()?;
        deleted
    }

    fn MPI_Initialized / PMPI_Initialized (flag: *mut c_int) on comm MPI_COMM_SELF => {
        let flag = out(flag, "flag")?;
        // SAFETY: checked non-NULL above; the caller passes an int for the flag.
        unsafe { *flag = instance::initialized() as c_int };
        Ok(())
    }

    fn MPI_Finalized / PMPI_Finalized (flag: *mut c_int) on comm MPI_COMM_SELF => {
        let flag = out(flag, "flag")?;
        // SAFETY: checked non-NULL above; the caller passes an int for the flag.
        unsafe { *flag = instance::finalized() as c_int };
        Ok(())
    }

    fn MPI_Abort / PMPI_Abort (comm: MPI_Comm, errorcode: c_int) on comm MPI_COMM_WORLD => {
        let rank = instance::peek().map_or(0, |u| u.rank);
        let name = match comm { MPI_COMM_WORLD => "MPI_COMM_WORLD".to_string(), MPI_COMM_SELF => "MPI_COMM_SELF".to_string(), c => format!("0x{:08x}", c as u32) };
        instance::abort_job(errorcode, &format!("oxmpi: rank {rank}: MPI_Abort({name}, {errorcode}) called; ending the job"))
    }

    fn MPI_Query_thread / PMPI_Query_thread (provided: *mut c_int) on comm MPI_COMM_SELF => {
        let provided = out(provided, "provided")?;
        let level = crate::abi::thread_level_value(check::universe()?.thread_level());
        // SAFETY: checked non-NULL above; the caller passes an int for the level.
        unsafe { *provided = level };
        Ok(())
    }

    fn MPI_Is_thread_main / PMPI_Is_thread_main (flag: *mut c_int) on comm MPI_COMM_SELF => {
        let flag = out(flag, "flag")?;
        let main = check::universe()?.main_thread() == crate::runtime::job::caller_id();
        // SAFETY: checked non-NULL above; the caller passes an int for the flag.
        unsafe { *flag = main as c_int };
        Ok(())
    }

    fn MPI_Get_version / PMPI_Get_version (version: *mut c_int, subversion: *mut c_int) on comm MPI_COMM_SELF => {
        let version = out(version, "version")?;
        let subversion = out(subversion, "subversion")?;
        // SAFETY: both checked non-NULL above; the caller passes two ints.
        unsafe {
            *version = MPI_VERSION;
            *subversion = MPI_SUBVERSION;
        }
        Ok(())
    }

    fn MPI_Get_library_version / PMPI_Get_library_version (version: *mut c_char, resultlen: *mut c_int) on comm MPI_COMM_SELF => {
        let version = out(version, "version")?;
        let resultlen = out(resultlen, "resultlen")?;
        // SAFETY: both checked non-NULL above; the standard makes `version` hold
        // MPI_MAX_LIBRARY_VERSION_STRING chars and `resultlen` an int.
        unsafe { *resultlen = write_cstr(version, MPI_MAX_LIBRARY_VERSION_STRING, LIBRARY_VERSION) as c_int };
        Ok(())
    }

    fn MPI_Get_processor_name / PMPI_Get_processor_name (name: *mut c_char, resultlen: *mut c_int) on comm MPI_COMM_SELF => {
        let name = out(name, "name")?;
        let resultlen = out(resultlen, "resultlen")?;
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most `len` bytes into the local buffer; the last byte is
        // left out so that it stays a terminator.
        if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len() - 1) } != 0 {
            return Err(err(MPI_ERR_OTHER, format!("gethostname failed: {}", std::io::Error::last_os_error())));
        }
        let host = std::ffi::CStr::from_bytes_until_nul(&buf).map_or_else(|_| String::new(), |h| h.to_string_lossy().into_owned());
        // SAFETY: both checked non-NULL above; the standard makes `name` hold
        // MPI_MAX_PROCESSOR_NAME chars and `resultlen` an int.
        unsafe { *resultlen = write_cstr(name, MPI_MAX_PROCESSOR_NAME, &host) as c_int };
        Ok(())
    }

    fn MPI_Error_class / PMPI_Error_class (errorcode: c_int, errorclass: *mut c_int) on comm MPI_COMM_SELF => {
        let errorclass = out(errorclass, "errorclass")?;
        let class = class_of(errorcode).ok_or_else(|| err(MPI_ERR_ARG, format!("{errorcode} is not a valid error code")))?;
        // SAFETY: checked non-NULL above; the caller passes an int for the class.
        unsafe { *errorclass = class };
        Ok(())
    }

    fn MPI_Error_string / PMPI_Error_string (errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) on comm MPI_COMM_SELF => {
        let string = out(string, "string")?;
        let resultlen = out(resultlen, "resultlen")?;
        let s = string_of(errorcode).ok_or_else(|| err(MPI_ERR_ARG, format!("{errorcode} is not a valid error code")))?;
        // SAFETY: both checked non-NULL above; the standard makes `string` hold
        // MPI_MAX_ERROR_STRING chars and `resultlen` an int.
        unsafe { *resultlen = write_cstr(string, MPI_MAX_ERROR_STRING, &s) as c_int };
        Ok(())
    }
}

/// Seconds since an arbitrary point in the past (the first MPI call), from the monotonic clock.
#[no_mangle]
pub extern "C" fn PMPI_Wtime() -> f64 {
    crate::ffi::boundary::run_value(0.0, || epoch().elapsed().as_secs_f64())
}
#[no_mangle]
pub extern "C" fn MPI_Wtime() -> f64 {
    PMPI_Wtime()
}

/// Resolution of MPI_Wtime: the monotonic clock's resolution as the kernel reports it.
#[no_mangle]
pub extern "C" fn PMPI_Wtick() -> f64 {
    crate::ffi::boundary::run_value(1e-9, || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_getres writes into a local timespec.
        unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
        let t = ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        if t > 0.0 { t } else { 1e-9 }
    })
}
#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    PMPI_Wtick()
}
