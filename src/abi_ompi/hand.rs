//! The functions of libmpi.so.40 the generator does not write: handle <-> Fortran integer
//! (`MPI_X_c2f`/`MPI_X_f2c`, which return a handle or an integer, not an error code), status
//! conversions, and the predefined attribute callbacks Open MPI's mpi.h names
//! `OMPI_C_MPI_*_FN` (what `MPI_COMM_DUP_FN`, `MPI_NULL_COPY_FN`... expand to).
//!
//! A handle's Fortran integer is Open MPI's (MPI_COMM_WORLD = 0 as in its mpif.h; see
//! `fortran::handles`), what libmpi_mpifh.so.40's bindings take: C and Fortran code of one
//! program hand handles to each other.
use super::conv::*;
use super::fortran;
use crate::ffi::boundary::run_value;
use std::os::raw::{c_int, c_void};

macro_rules! handle_conversions {
    ($($c2f:ident $f2c:ident $kind:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $c2f(h: Handle) -> c_int {
            run_value(0, || fortran::handles::from_c(h))
        }
        #[no_mangle]
        pub extern "C" fn $f2c(f: c_int) -> Handle {
            run_value(std::ptr::null_mut(), || fortran::handles::to_c(super::tables::$kind, f))
        }
    )*};
}

handle_conversions! {
    oxompi_MPI_Comm_c2f oxompi_MPI_Comm_f2c F_COMM;
    oxompi_MPI_Type_c2f oxompi_MPI_Type_f2c F_DATATYPE;
    oxompi_MPI_Group_c2f oxompi_MPI_Group_f2c F_GROUP;
    oxompi_MPI_Info_c2f oxompi_MPI_Info_f2c F_INFO;
    oxompi_MPI_Request_c2f oxompi_MPI_Request_f2c F_REQUEST;
    oxompi_MPI_Op_c2f oxompi_MPI_Op_f2c F_OP;
    oxompi_MPI_Errhandler_c2f oxompi_MPI_Errhandler_f2c F_ERRHANDLER;
    oxompi_MPI_Win_c2f oxompi_MPI_Win_f2c F_WIN;
    oxompi_MPI_Message_c2f oxompi_MPI_Message_f2c F_MESSAGE;
}

#[no_mangle]
pub extern "C" fn oxompi_MPI_File_c2f(f: *mut c_void) -> c_int {
    run_value(0, || crate::ffi::PMPI_File_c2f(file_in(f) as _))
}
#[no_mangle]
pub extern "C" fn oxompi_MPI_File_f2c(f: c_int) -> *mut c_void {
    run_value(std::ptr::null_mut(), || file_out(crate::ffi::PMPI_File_f2c(f) as *mut c_void))
}

/// Open MPI's Fortran status is its C status as 6 integers (MPI_STATUS_SIZE 6).
const F_STATUS_INTS: usize = std::mem::size_of::<OmpiStatus>() / 4;
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Status_c2f(c: *const OmpiStatus, f: *mut c_int) -> c_int {
    if c.is_null() || f.is_null() {
        return unsupported_arg("MPI_Status_c2f");
    }
    // SAFETY: a status and MPI_STATUS_SIZE integers, as the caller promises.
    unsafe { std::ptr::copy_nonoverlapping(c as *const c_int, f, F_STATUS_INTS) };
    0
}
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Status_f2c(f: *const c_int, c: *mut OmpiStatus) -> c_int {
    if c.is_null() || f.is_null() {
        return unsupported_arg("MPI_Status_f2c");
    }
    // SAFETY: as above, the other way.
    unsafe { std::ptr::copy_nonoverlapping(f, c as *mut c_int, F_STATUS_INTS) };
    0
}
fn unsupported_arg(name: &'static str) -> c_int {
    let e = crate::error::err(crate::abi::MPI_ERR_ARG, format!("{name}: a NULL status (MPI_STATUS_IGNORE cannot be converted)"));
    code_out(crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, e))
}

/// `MPI_*_NULL_COPY_FN`: do not copy the attribute.
unsafe extern "C" fn null_copy(_: Handle, _: c_int, _: *mut c_void, _: *mut c_void, _: *mut c_void, flag: *mut c_int) -> c_int {
    if !flag.is_null() {
        // SAFETY: the engine passes a writable flag.
        unsafe { *flag = 0 };
    }
    0
}
/// `MPI_*_DUP_FN`: copy the attribute's value.
unsafe extern "C" fn dup(_: Handle, _: c_int, _: *mut c_void, attr_in: *mut c_void, attr_out: *mut c_void, flag: *mut c_int) -> c_int {
    if !flag.is_null() && !attr_out.is_null() {
        // SAFETY: the engine passes a writable value slot and flag.
        unsafe {
            *(attr_out as *mut *mut c_void) = attr_in;
            *flag = 1;
        }
    }
    0
}
/// `MPI_*_NULL_DELETE_FN`: nothing to do.
unsafe extern "C" fn null_delete(_: Handle, _: c_int, _: *mut c_void, _: *mut c_void) -> c_int {
    0
}

macro_rules! callbacks {
    ($($name:ident = $f:ident ($($a:ident: $t:ty),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> c_int {
            // SAFETY: forwarded as received.
            unsafe { $f($($a),*) }
        }
    )*};
}
callbacks! {
    oxompi_OMPI_C_MPI_COMM_NULL_COPY_FN = null_copy(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_TYPE_NULL_COPY_FN = null_copy(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_WIN_NULL_COPY_FN = null_copy(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_NULL_COPY_FN = null_copy(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_COMM_DUP_FN = dup(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_TYPE_DUP_FN = dup(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_WIN_DUP_FN = dup(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_DUP_FN = dup(h: Handle, k: c_int, e: *mut c_void, i: *mut c_void, o: *mut c_void, f: *mut c_int);
    oxompi_OMPI_C_MPI_COMM_NULL_DELETE_FN = null_delete(h: Handle, k: c_int, v: *mut c_void, e: *mut c_void);
    oxompi_OMPI_C_MPI_TYPE_NULL_DELETE_FN = null_delete(h: Handle, k: c_int, v: *mut c_void, e: *mut c_void);
    oxompi_OMPI_C_MPI_WIN_NULL_DELETE_FN = null_delete(h: Handle, k: c_int, v: *mut c_void, e: *mut c_void);
    oxompi_OMPI_C_MPI_NULL_DELETE_FN = null_delete(h: Handle, k: c_int, v: *mut c_void, e: *mut c_void);
}
