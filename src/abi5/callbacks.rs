//! The application's callbacks under the standard ABI: the engine calls them with MPICH-ABI
//! handles and codes, so each goes through a trampoline that converts what the function sees.
//! * user ops: `UserFn` signatures SIG_ABI_INT / SIG_ABI_COUNT (`call_user_op`);
//! * error handlers (comm, win, file, session): a fixed pool of trampolines, one per handler,
//!   each knowing its slot (the MPICH-ABI handler signature has no user state);
//! * attribute copy/delete functions: the keyval's extra_state becomes a `Keyval` holding the
//!   user's functions and state; MPI_*_DUP_FN (0x1) and MPI_*_NULL_*_FN (0) are the sentinels.
use super::conv::*;
use crate::ffi::boundary::run_value;
use crate::op::user::UserFn;
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

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

type AbiErrFn = unsafe extern "C" fn(*mut Handle, *mut c_int);
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Comm,
    Win,
    File,
    Session,
}
/// How many ABI error handlers a process can create (each needs its own trampoline).
pub const MAX_ERRHANDLERS: usize = 64;
static HANDLERS: Mutex<Vec<(Kind, AbiErrFn)>> = Mutex::new(Vec::new());

/// The trampoline of slot `I`: converts the object and the code, calls the user's handler, and
/// writes back what it changed.
unsafe extern "C" fn tramp<const I: usize>(obj: *mut c_int, code: *mut c_int) {
    let Some((kind, f)) = HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(I).copied() else { return };
    // SAFETY: the engine passes the addresses of the object's handle and of the code.
    unsafe {
        let mut h = if kind == Kind::File { file_out(*(obj as *mut *mut c_void)) } else { h_out(*obj) };
        let mut c = code_out(*code);
        f(&mut h, &mut c);
        *code = code_in(c);
    }
}
macro_rules! pool {
    ($($i:literal)*) => { [$(tramp::<$i> as unsafe extern "C" fn(*mut c_int, *mut c_int)),*] };
}
static POOL: [unsafe extern "C" fn(*mut c_int, *mut c_int); MAX_ERRHANDLERS] = pool!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);

unsafe fn create_errhandler(kind: Kind, f: Option<AbiErrFn>, errhandler: *mut Handle, name: &'static str) -> c_int {
    run_value(ERR_INTERN, || {
        let Some(f) = f else { return code_out(raise(name, crate::error::err(crate::abi::MPI_ERR_ARG, "the error handler function is NULL"))) };
        let slot = {
            let mut t = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() >= MAX_ERRHANDLERS {
                None
            } else {
                t.push((kind, f));
                Some(t.len() - 1)
            }
        };
        let Some(slot) = slot else {
            return code_out(raise(name, crate::error::err(crate::abi::MPI_ERR_NO_MEM, format!("oxmpi's MPI-5 ABI library supports at most {MAX_ERRHANDLERS} user error handlers per process"))));
        };
        let tr = POOL[slot];
        let mut h = 0;
        // SAFETY: the trampoline has the shape of every MPICH-ABI handler function (object
        // pointer, code pointer; the variadic tail is never used); `h` is local.
        let rc = unsafe {
            match kind {
                Kind::Comm => crate::ffi::PMPI_Comm_create_errhandler(Some(std::mem::transmute::<_, crate::abi::MPI_Comm_errhandler_function>(tr)), &mut h),
                Kind::Win => crate::ffi::PMPI_Win_create_errhandler(Some(std::mem::transmute::<_, crate::abi::MPI_Win_errhandler_function>(tr)), &mut h),
                Kind::File => crate::ffi::PMPI_File_create_errhandler(Some(std::mem::transmute::<_, crate::abi::MPI_File_errhandler_function>(tr)), &mut h),
                Kind::Session => crate::ffi::PMPI_Session_create_errhandler(Some(std::mem::transmute::<_, crate::abi::MPI_Session_errhandler_function>(tr)), &mut h),
            }
        };
        if rc == 0 && !errhandler.is_null() {
            // SAFETY: non-NULL; the caller passes the address of a handle.
            unsafe { *errhandler = h_out(h) };
        }
        code_out(rc)
    })
}
macro_rules! errhandler_creators {
    ($($name:ident $kind:ident;)*) => {$(
        /// # Safety
        /// `errhandler` is NULL or writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(f: Option<AbiErrFn>, errhandler: *mut Handle) -> c_int {
            // SAFETY: forwarded caller contract.
            unsafe { create_errhandler(Kind::$kind, f, errhandler, stringify!($name)) }
        }
    )*};
}
errhandler_creators! {
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
