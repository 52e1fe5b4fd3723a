//! MPI_Get_version under Open MPI's ABI: the version Open MPI 4.1 reports (MPI 3.1, its mpi.h's
//! MPI_VERSION and MPI_SUBVERSION), not the engine's: programs built against Open MPI compare
//! the two (mpi4py's test_environ) and may take the newer report for features Open MPI lacks.
//! And MPI_Get_library_version, whose text names the ABI this library serves.
use super::conv::*;
use crate::ffi::boundary::run_value;
use std::os::raw::{c_char, c_int};

/// Open MPI 4.1's MPI_VERSION, MPI_SUBVERSION.
pub const VERSION: (c_int, c_int) = (3, 1);

/// # Safety
/// `version` and `subversion` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    run_value(ERR_INTERN, || {
        if version.is_null() || subversion.is_null() {
            let e = crate::error::err(crate::abi::MPI_ERR_ARG, "MPI_Get_version: version or subversion is NULL");
            return code_out(crate::ffi::env::errhandler::raise("MPI_Get_version", crate::abi::MPI_COMM_SELF, e));
        }
        // SAFETY: both non-NULL and writable (function contract).
        unsafe {
            *version = VERSION.0;
            *subversion = VERSION.1;
        }
        0
    })
}

/// What MPI_Get_library_version reports under Open MPI's ABI.
pub const LIBRARY_VERSION: &str = concat!("oxmpi ", env!("CARGO_PKG_VERSION"), " (MPI 4.1, Open MPI 4.1 ABI libmpi.so.40, shared-memory engine in Rust)");
/// Open MPI 4.1's MPI_MAX_LIBRARY_VERSION_STRING: the size of the caller's buffer.
const MAX_LIBRARY_VERSION_STRING: usize = 256;

/// # Safety
/// `version` is NULL or writable for Open MPI's MPI_MAX_LIBRARY_VERSION_STRING bytes, `resultlen`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
    run_value(ERR_INTERN, || {
        if version.is_null() || resultlen.is_null() {
            let e = crate::error::err(crate::abi::MPI_ERR_ARG, "MPI_Get_library_version: version or resultlen is NULL");
            return code_out(crate::ffi::env::errhandler::raise("MPI_Get_library_version", crate::abi::MPI_COMM_SELF, e));
        }
        // SAFETY: both non-NULL; `version` holds MAX_LIBRARY_VERSION_STRING bytes (contract).
        unsafe { *resultlen = crate::ffi::env::init::write_cstr(version, MAX_LIBRARY_VERSION_STRING, LIBRARY_VERSION) as c_int };
        0
    })
}
