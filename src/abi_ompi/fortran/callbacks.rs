//! Open MPI Fortran procedures that take the application's functions: `MPI_OP_CREATE`, the
//! error handler constructors and the keyval constructors. The engine calls those functions with MPICH-ABI handles and codes;
//! here they get Open MPI's Fortran INTEGER handles (`handles`) and Open MPI's codes, all by
//! reference as Fortran passes them.
use super::super::conv::{code_in, code_out, keyval_out, ERR_INTERN};
use super::{handles, set_ierr};
use crate::abi::{MPI_Aint, MPI_Fint};
use crate::fortran::callbacks::{keyval_state_for, trampolines, FortranAbi, KeyvalKind};
use crate::ffi::boundary::run_value;
use crate::op::user::UserFn;
use std::os::raw::{c_int, c_void};

// ---- user reduction ops ----

/// A Fortran user function: `SUBROUTINE f(invec, inoutvec, len, datatype)`, all by reference.
type FortranUserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Fint);

#[derive(Clone, Copy)]
struct FortranOp(FortranUserFn);
impl crate::ffi::coll::op::UserCallback for FortranOp {
    fn user_fn(self) -> UserFn {
        // Called through the Open MPI layer's caller (ABI_CALLER), which hands this signature here.
        UserFn { addr: self.0 as usize, signature: crate::ffi::coll::op::SIG_ABI_FORTRAN }
    }
}

/// Calls a Fortran user op on `count` elements `size` bytes apart, in chunks of at most
/// `i32::MAX` elements, with the datatype as Open MPI's Fortran INTEGER.
///
/// # Safety
/// As `crate::ffi::coll::op::call_user`; `f` was stored from a `FortranOp`.
pub(crate) unsafe fn call_user_op(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: i32, size: usize) {
    let mut dt = handles::fortran(datatype);
    // SAFETY: stored from a Fortran user function (`FortranOp`).
    let func: FortranUserFn = unsafe { std::mem::transmute::<usize, FortranUserFn>(f.addr) };
    crate::ffi::coll::op::in_int_chunks(count, size, |off, mut len| {
        // SAFETY: the chunk at byte `off` of both buffers, `len` elements (caller contract).
        unsafe { func(inp.wrapping_add(off) as *mut c_void, inout.wrapping_add(off) as *mut c_void, &mut len, &mut dt) };
    });
}

ompi_fortran!(op_create; (user_fn: Option<FortranUserFn>, commute: *const c_int, op: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, run_value(ERR_INTERN, || {
        crate::ffi::coll::op::ABI_CALLER.get_or_init(|| super::super::callbacks::call_user_op);
        let mut h = 0;
        // SAFETY: `h` is a local handle; `commute` is the caller's LOGICAL.
        match unsafe { crate::ffi::coll::op::create(user_fn.map(FortranOp), *commute, &mut h) } {
            Ok(()) => {
                // SAFETY: the caller's INTEGER (Fortran passes every argument).
                unsafe { *op = handles::fortran(h) };
                0
            }
            Err(e) => code_out(crate::ffi::env::errhandler::raise("MPI_OP_CREATE", crate::abi::MPI_COMM_SELF, e)),
        }
    }));
});

// ---- error handlers ----

/// A file's Fortran INTEGER: MPI_File_c2f of the engine's `MPI_File`, as the Fortran I/O bindings use.
fn file_fortran(p: *mut c_void) -> MPI_Fint {
    crate::ffi::PMPI_File_c2f(p)
}

crate::abi5::errhandlers::errhandler_pool!(obj: MPI_Fint, handles::fortran, file_fortran; code: code_out, code_in; lib: "Open MPI Fortran library (libmpi_mpifh.so.40)");

/// The Fortran errhandler constructors: an MPICH-level handler calling `f` with Fortran handles.
///
/// # Safety
/// `errhandler` and `ierr` are the caller's INTEGERs.
unsafe fn create(kind: ErrKind, f: Option<UserErrFn>, errhandler: *mut MPI_Fint, ierr: *mut MPI_Fint, name: &'static str) {
    let rc = run_value(ERR_INTERN, || match create_errhandler(kind, f, name) {
        Ok(h) => {
            // SAFETY: the caller's INTEGER (Fortran passes every argument).
            unsafe { *errhandler = handles::fortran(h) };
            0
        }
        Err(rc) => code_out(rc),
    });
    // SAFETY: the caller's IERROR (caller contract).
    unsafe { set_ierr(ierr, rc) };
}
ompi_fortran!(comm_create_errhandler; (f: Option<UserErrFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => { create(ErrKind::Comm, f, eh, ierr, "MPI_COMM_CREATE_ERRHANDLER") });
ompi_fortran!(errhandler_create; (f: Option<UserErrFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => { create(ErrKind::Comm, f, eh, ierr, "MPI_ERRHANDLER_CREATE") });
ompi_fortran!(win_create_errhandler; (f: Option<UserErrFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => { create(ErrKind::Win, f, eh, ierr, "MPI_WIN_CREATE_ERRHANDLER") });
ompi_fortran!(file_create_errhandler; (f: Option<UserErrFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => { create(ErrKind::File, f, eh, ierr, "MPI_FILE_CREATE_ERRHANDLER") });

// ---- attribute keyvals ----

/// Open MPI's Fortran callbacks see its INTEGER handles, its keyvals and return its codes. Its
/// MPI_*_DUP_FN and MPI_*_NULL_*_FN are Fortran subroutines of that shape: the program finds
/// them in liboxmpi.so (src/fortran/callbacks.rs), whose bodies touch no handle.
static OMPI: FortranAbi = FortranAbi { handle: handles::fortran, keyval: keyval_out, code_in };

/// Creates a keyval whose copy and delete functions are the Fortran subroutines `copy`/`del`.
///
/// # Safety
/// `copy`/`del` are Fortran subroutines of the kind's callback shape; the others the caller's.
unsafe fn create_keyval(kind: KeyvalKind, copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: MPI_Aint, ierr: *mut MPI_Fint) {
    let rc = run_value(ERR_INTERN, || {
        // SAFETY: caller contract (the subroutines' shapes).
        let st = unsafe { keyval_state_for(&OMPI, kind, copy, del, extra) };
        let (c, d) = trampolines();
        let mut kv = 0;
        // SAFETY: `kv` is local and `st` the keyval's state; the MPICH-ABI callback types of
        // every kind have the same shape (int handle).
        let rc = unsafe {
            match kind {
                KeyvalKind::Comm => crate::ffi::PMPI_Comm_create_keyval(c, d, &mut kv, st),
                KeyvalKind::Legacy => crate::ffi::PMPI_Keyval_create(c, d, &mut kv, st),
                KeyvalKind::Type => crate::ffi::PMPI_Type_create_keyval(std::mem::transmute(c), std::mem::transmute(d), &mut kv, st),
                KeyvalKind::Win => crate::ffi::PMPI_Win_create_keyval(std::mem::transmute(c), std::mem::transmute(d), &mut kv, st),
            }
        };
        if rc == crate::abi::MPI_SUCCESS {
            // SAFETY: the caller's INTEGER (Fortran passes every argument).
            unsafe { *keyval = keyval_out(kv) };
        }
        code_out(rc)
    });
    // SAFETY: the caller's IERROR (caller contract).
    unsafe { set_ierr(ierr, rc) };
}
ompi_fortran!(comm_create_keyval; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => { create_keyval(KeyvalKind::Comm, copy, del, keyval, *extra, ierr) });
ompi_fortran!(type_create_keyval; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => { create_keyval(KeyvalKind::Type, copy, del, keyval, *extra, ierr) });
ompi_fortran!(win_create_keyval; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => { create_keyval(KeyvalKind::Win, copy, del, keyval, *extra, ierr) });
ompi_fortran!(keyval_create; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Fint, ierr: *mut MPI_Fint) => { create_keyval(KeyvalKind::Legacy, copy, del, keyval, *extra as MPI_Aint, ierr) });

// ---- generalized requests ----

/// `SUBROUTINE QUERY(EXTRA_STATE, STATUS, IERROR)`: Open MPI's Fortran status is its C one.
type FortranGreqQuery = unsafe extern "C" fn(*const MPI_Aint, *mut super::super::conv::OmpiStatus, *mut c_int);
/// `SUBROUTINE FREE(EXTRA_STATE, IERROR)`.
type FortranGreqFree = unsafe extern "C" fn(*const MPI_Aint, *mut c_int);
/// `SUBROUTINE CANCEL(EXTRA_STATE, COMPLETE, IERROR)` (COMPLETE a LOGICAL).
type FortranGreqCancel = unsafe extern "C" fn(*const MPI_Aint, *const c_int, *mut c_int);

/// One Fortran generalized request: its subroutines and extra state, the C layer's extra state,
/// freed by `greq_free` (MPI calls the free function once per request, last).
struct FortranGreq {
    query: FortranGreqQuery,
    free: FortranGreqFree,
    cancel: FortranGreqCancel,
    extra: MPI_Aint,
}
unsafe extern "C" fn greq_query(state: *mut c_void, status: *mut super::super::conv::OmpiStatus) -> c_int {
    // SAFETY: `state` is this request's `FortranGreq`, not yet freed; `status` the C layer's.
    unsafe {
        let g = &*(state as *const FortranGreq);
        let mut ierr = 0;
        (g.query)(&g.extra, status, &mut ierr);
        ierr
    }
}
unsafe extern "C" fn greq_free(state: *mut c_void) -> c_int {
    // SAFETY: this request's `FortranGreq`, ours to take back now (the last callback).
    let g = unsafe { Box::from_raw(state as *mut FortranGreq) };
    let mut ierr = 0;
    // SAFETY: the application's subroutine, all arguments by reference.
    unsafe { (g.free)(&g.extra, &mut ierr) };
    ierr
}
unsafe extern "C" fn greq_cancel(state: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: this request's `FortranGreq`, not yet freed.
    unsafe {
        let g = &*(state as *const FortranGreq);
        let mut ierr = 0;
        (g.cancel)(&g.extra, &complete, &mut ierr);
        ierr
    }
}
ompi_fortran!(grequest_start; (query: Option<FortranGreqQuery>, free: Option<FortranGreqFree>, cancel: Option<FortranGreqCancel>, extra: *const MPI_Aint, request: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = run_value(ERR_INTERN, || {
        let mut r: super::super::conv::Handle = std::ptr::null_mut();
        let (Some(query), Some(free), Some(cancel)) = (query, free, cancel) else {
            // What the C layer says of a NULL function.
            return super::super::callbacks::oxompi_MPI_Grequest_start(None, None, None, std::ptr::null_mut(), &mut r);
        };
        // SAFETY: the caller's INTEGER(KIND=MPI_ADDRESS_KIND).
        let g = Box::into_raw(Box::new(FortranGreq { query, free, cancel, extra: unsafe { *extra } })) as *mut c_void;
        // SAFETY: the trampolines have the C layer's callback types; `g` lives until `greq_free`.
        let rc = unsafe { super::super::callbacks::oxompi_MPI_Grequest_start(Some(greq_query), Some(greq_free), Some(greq_cancel), g, &mut r) };
        if rc == 0 {
            // SAFETY: the caller's INTEGER.
            unsafe { *request = handles::from_c(r) };
        } else {
            // SAFETY: not registered: the box is still ours.
            drop(unsafe { Box::from_raw(g as *mut FortranGreq) });
        }
        rc
    });
    set_ierr(ierr, rc);
});
