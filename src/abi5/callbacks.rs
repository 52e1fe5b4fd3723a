//! The application's callbacks under the standard ABI: the engine calls them with MPICH-ABI
//! handles and codes, so each goes through a trampoline that converts what the function sees.
//! * user ops: `UserFn` signatures SIG_ABI_INT / SIG_ABI_COUNT (`call_user_op`);
//! * error handlers (comm, win, file, session): `abi5::errhandlers`' pool of trampolines;
//! * attribute copy/delete functions: the keyval's extra_state becomes a `Keyval` holding the
//!   user's functions and state; MPI_*_DUP_FN (0x1) and MPI_*_NULL_*_FN (0) are the sentinels.
use super::conv::*;
use crate::ffi::boundary::run_value;
use crate::op::user::UserFn;
use std::os::raw::{c_int, c_void};

type AbiUserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut Handle);
type AbiUserFnC = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut i64, *mut Handle);

#[derive(Clone, Copy)]
pub struct AbiOp(pub AbiUserFn);
#[derive(Clone, Copy)]
pub struct AbiOpC(pub AbiUserFnC);
impl crate::ffi::coll::op::UserCallback for AbiOp {
    fn user_fn(self) -> UserFn {
        UserFn { addr: self.0 as usize, signature: crate::ffi::coll::op::SIG_ABI_INT }
    }
}
impl crate::ffi::coll::op::UserCallback for AbiOpC {
    fn user_fn(self) -> UserFn {
        UserFn { addr: self.0 as usize, signature: crate::ffi::coll::op::SIG_ABI_COUNT }
    }
}

/// Calls an ABI user op on `count` elements `size` bytes apart, with the datatype as an ABI handle.
///
/// # Safety
/// As `crate::ffi::coll::op::call_user`; `f` was stored from an ABI user function.
pub unsafe fn call_user_op(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: i32, size: usize) {
    let mut dt = h_out(datatype);
    if f.signature == crate::ffi::coll::op::SIG_ABI_COUNT {
        // SAFETY: stored from an `MPI_User_function_c` of the ABI (`AbiOpC`).
        let func: AbiUserFnC = unsafe { std::mem::transmute::<usize, AbiUserFnC>(f.addr) };
        let mut len = count as i64;
        // SAFETY: the user's function on buffers of `count` elements (caller contract).
        unsafe { func(inp as *mut c_void, inout as *mut c_void, &mut len, &mut dt) };
        return;
    }
    // SAFETY: stored from an ABI `MPI_User_function` (`AbiOp`).
    let func: AbiUserFn = unsafe { std::mem::transmute::<usize, AbiUserFn>(f.addr) };
    crate::ffi::coll::op::in_int_chunks(count, size, |off, mut len| {
        // SAFETY: the chunk at byte `off` of both buffers, `len` elements (caller contract).
        unsafe { func(inp.wrapping_add(off) as *mut c_void, inout.wrapping_add(off) as *mut c_void, &mut len, &mut dt) };
    });
}

/// # Safety
/// `op` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Op_create(user_fn: Option<AbiUserFn>, commute: c_int, op: *mut Handle) -> c_int {
    run_value(ERR_INTERN, || {
        crate::ffi::coll::op::ABI_CALLER.get_or_init(|| call_user_op);
        let mut h = 0;
        // SAFETY: `h` is a local handle.
        let r = unsafe { crate::ffi::coll::op::create(user_fn.map(AbiOp), commute, &mut h) };
        op_result(r, h, op, "MPI_Op_create")
    })
}
/// # Safety
/// `op` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Op_create_c(user_fn: Option<AbiUserFnC>, commute: c_int, op: *mut Handle) -> c_int {
    run_value(ERR_INTERN, || {
        crate::ffi::coll::op::ABI_CALLER.get_or_init(|| call_user_op);
        let mut h = 0;
        // SAFETY: `h` is a local handle.
        let r = unsafe { crate::ffi::coll::op::create(user_fn.map(AbiOpC), commute, &mut h) };
        op_result(r, h, op, "MPI_Op_create_c")
    })
}
fn op_result(r: crate::error::MpiResult, h: c_int, op: *mut Handle, name: &'static str) -> c_int {
    match r {
        Ok(()) if op.is_null() => code_out(raise(name, crate::error::err(crate::abi::MPI_ERR_ARG, "op is NULL"))),
        Ok(()) => {
            // SAFETY: non-NULL; the caller passes the address of a handle.
            unsafe { *op = h_out(h) };
            0
        }
        Err(e) => code_out(raise(name, e)),
    }
}
fn raise(name: &'static str, e: crate::error::MpiError) -> c_int {
    crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, e)
}

// ---- error handlers ----

crate::abi5::errhandlers::errhandler_pool!(obj: Handle, h_out, file_out; code: code_out, code_in; lib: "MPI-5 ABI library");

crate::abi5::errhandlers::c_errhandler_creators! {
    oxabi_MPI_Comm_create_errhandler Comm;
    oxabi_MPI_Win_create_errhandler Win;
    oxabi_MPI_File_create_errhandler File;
    oxabi_MPI_Session_create_errhandler Session;
}

// ---- attribute keyvals ----

crate::abi5::keyvals::keyval_layer! {
    oxabi_MPI_Keyval_create PMPI_Keyval_create;
    oxabi_MPI_Comm_create_keyval PMPI_Comm_create_keyval;
    oxabi_MPI_Type_create_keyval PMPI_Type_create_keyval;
    oxabi_MPI_Win_create_keyval PMPI_Win_create_keyval;
}

/// Data representations' functions see standard-ABI datatype handles and return its codes.
const DATAREP: crate::ffi::io::datarep::CAbi = crate::ffi::io::datarep::CAbi { dtype: h_out, code_in };

/// # Safety
/// As MPI_Register_datarep: `datarep` a string, the functions of the standard ABI's types.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Register_datarep(datarep: *const std::os::raw::c_char, read_conversion_fn: *mut c_void, write_conversion_fn: *mut c_void, dtype_file_extent_fn: *mut c_void, extra_state: *mut c_void) -> c_int {
    // SAFETY: per this function's contract.
    code_out(unsafe { crate::ffi::io::datarep::register_c_abi(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state, false, DATAREP) })
}
/// # Safety
/// As MPI_Register_datarep_c.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Register_datarep_c(datarep: *const std::os::raw::c_char, read_conversion_fn: *mut c_void, write_conversion_fn: *mut c_void, dtype_file_extent_fn: *mut c_void, extra_state: *mut c_void) -> c_int {
    // SAFETY: per this function's contract.
    code_out(unsafe { crate::ffi::io::datarep::register_c_abi(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state, true, DATAREP) })
}

// ---- generalized requests ----

crate::abi5::grequests::grequest_layer!(oxabi_MPI_Grequest_start, AbiStatus);
