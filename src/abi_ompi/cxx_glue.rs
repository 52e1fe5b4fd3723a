//! The end of the C++-only features of Open MPI's C++ bindings library (libmpi_cxx.so.40) that
//! reach into Open MPI's internals: c-src/ompi_cxx_glue.c defines those internal symbols in
//! libmpi.so.40 so that libmpi_cxx loads, and calls this when a program uses one of them.
use std::ffi::CStr;
use std::os::raw::c_char;

/// Ends the job with one line naming the unsupported C++ feature `what` and what to do instead.
///
/// # Safety
/// `what` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxompi_cxx_unsupported(what: *const c_char) -> ! {
    // The panic boundary: nothing here is expected to panic, but if it did, the job still ends.
    let _ = std::panic::catch_unwind(|| {
        let what = if what.is_null() {
            "a C++ binding".into()
        } else {
            // SAFETY: non-null and NUL-terminated (caller contract).
            unsafe { CStr::from_ptr(what) }.to_string_lossy()
        };
        let rank = crate::instance::peek().map(|u| u.rank.to_string()).unwrap_or_else(|| "?".into());
        crate::instance::abort_job(
            1,
            &format!("oxmpi: rank {rank}: {what} of Open MPI's C++ bindings (libmpi_cxx) is not supported by oxmpi; use the MPI C API for it"),
        )
    });
    std::process::abort()
}
