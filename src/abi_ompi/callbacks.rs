//! The application's callbacks under Open MPI's ABI: the engine calls them with MPICH-ABI
//! handles, so each goes through a trampoline that gives the function Open MPI handles.
//! User reduction ops (`MPI_Op_create`, also for Open MPI's Fortran library: `call_user_op`
//! converts the datatype by the function's signature), attribute copy/delete functions (the
//! keyval creators, as the standard ABI's: `abi5::keyvals`) and error handlers (the standard
//! ABI's pool of trampolines: `abi5::errhandlers`).
use super::conv::*;
use crate::ffi::boundary::run_value;
use crate::op::user::UserFn;
use std::os::raw::{c_int, c_void};

type OmpiUserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut Handle);

#[derive(Clone, Copy)]
struct OmpiOp(OmpiUserFn);
impl crate::ffi::coll::op::UserCallback for OmpiOp {
    fn user_fn(self) -> UserFn {
        // The engine's "ABI" signature: called through the caller the ABI layer registers
        // (`ABI_CALLER`). One process runs one program, so one ABI layer registers it: the MPI-5
        // layer's (libmpi_abi.so.1) or this one (libmpi.so.40).
        UserFn { addr: self.0 as usize, signature: crate::ffi::coll::op::SIG_ABI_INT }
    }
}

/// Calls an Open MPI user op on `count` elements `size` bytes apart, in chunks of at most
/// `i32::MAX` elements, with the datatype as an Open MPI handle.
///
/// # Safety
/// As `crate::ffi::coll::op::call_user`; `f` was stored from an `OmpiOp`.
pub(crate) unsafe fn call_user_op(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: i32, size: usize) {
    if f.signature == crate::ffi::coll::op::SIG_ABI_FORTRAN {
        // SAFETY: forwarded caller contract; the signature says who stored it.
        return unsafe { super::fortran::callbacks::call_user_op(f, inp, inout, count, datatype, size) };
    }
    let mut dt = h_out(datatype);
    if f.signature == crate::ffi::coll::op::SIG_ABI_CXX {
        let Some(intercept) = super::cxx_glue::OP_INTERCEPT.get() else { return };
        crate::ffi::coll::op::in_int_chunks(count, size, |off, mut len| {
            // SAFETY: libmpi_cxx's intercept with the user's C++ function it gave for this op
            // (`oxompi_cxx_op_set`), on the chunk at byte `off` of both buffers (caller contract).
            unsafe { intercept(inp.wrapping_add(off) as *mut c_void, inout.wrapping_add(off) as *mut c_void, &mut len, &mut dt, f.addr) };
        });
        return;
    }
    // SAFETY: stored from an Open MPI `MPI_User_function` (`OmpiOp`).
    let func: OmpiUserFn = unsafe { std::mem::transmute::<usize, OmpiUserFn>(f.addr) };
    crate::ffi::coll::op::in_int_chunks(count, size, |off, mut len| {
        // SAFETY: the chunk at byte `off` of both buffers, `len` elements (caller contract).
        unsafe { func(inp.wrapping_add(off) as *mut c_void, inout.wrapping_add(off) as *mut c_void, &mut len, &mut dt) };
    });
}

/// # Safety
/// `op` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Op_create(user_fn: Option<OmpiUserFn>, commute: c_int, op: *mut Handle) -> c_int {
    run_value(ERR_INTERN, || {
        crate::ffi::coll::op::ABI_CALLER.get_or_init(|| call_user_op);
        let mut h = 0;
        // SAFETY: `h` is a local handle.
        match unsafe { crate::ffi::coll::op::create(user_fn.map(OmpiOp), commute, &mut h) } {
            Ok(()) if op.is_null() => {
                let e = crate::error::err(crate::abi::MPI_ERR_ARG, "MPI_Op_create: op is NULL");
                code_out(crate::ffi::env::errhandler::raise("MPI_Op_create", crate::abi::MPI_COMM_SELF, e))
            }
            Ok(()) => {
                // SAFETY: non-NULL; the caller passes the address of a handle.
                unsafe { *op = h_out(h) };
                0
            }
            Err(e) => code_out(crate::ffi::env::errhandler::raise("MPI_Op_create", crate::abi::MPI_COMM_SELF, e)),
        }
    })
}

crate::abi5::errhandlers::errhandler_pool!(obj: Handle, h_out, file_out; code: code_out, code_in; lib: "Open MPI library (libmpi.so.40)");

// Open MPI 4.1 (MPI 3.1) has no sessions.
crate::abi5::errhandlers::c_errhandler_creators! {
    oxompi_MPI_Comm_create_errhandler Comm;
    oxompi_MPI_Errhandler_create Comm;
    oxompi_MPI_Win_create_errhandler Win;
    oxompi_MPI_File_create_errhandler File;
}

crate::abi5::keyvals::keyval_layer! {
    oxompi_MPI_Keyval_create PMPI_Keyval_create;
    oxompi_MPI_Comm_create_keyval PMPI_Comm_create_keyval;
    oxompi_MPI_Type_create_keyval PMPI_Type_create_keyval;
    oxompi_MPI_Win_create_keyval PMPI_Win_create_keyval;
}

/// Data representations' functions see Open MPI datatype handles and return Open MPI codes.
const DATAREP: crate::ffi::io::datarep::CAbi = crate::ffi::io::datarep::CAbi { dtype: h_out, code_in };

/// # Safety
/// As MPI_Register_datarep: `datarep` a string, the functions of Open MPI's types.
#[no_mangle]
pub unsafe extern "C" fn oxompi_MPI_Register_datarep(datarep: *const std::os::raw::c_char, read_conversion_fn: *mut c_void, write_conversion_fn: *mut c_void, dtype_file_extent_fn: *mut c_void, extra_state: *mut c_void) -> c_int {
    // SAFETY: per this function's contract.
    code_out(unsafe { crate::ffi::io::datarep::register_c_abi(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state, false, DATAREP) })
}

// ---- generalized requests ----

crate::abi5::grequests::grequest_layer!(oxompi_MPI_Grequest_start, OmpiStatus);
