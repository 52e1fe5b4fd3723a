//! Fortran attribute callbacks: the trampolines that let C call a Fortran copy/delete subroutine,
//! and the predefined Fortran callbacks (`MPI_COMM_DUP_FN`, `MPI_NULL_COPY_FN`, ...).
//!
//! A Fortran copy callback takes every argument by reference, values as
//! INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for the MPI-1 `MPI_KEYVAL_CREATE`), the flag as
//! LOGICAL and an IERROR, where C passes values and returns the error. The keyval is registered
//! with C trampolines whose `extra_state` is a `KeyvalState` holding the Fortran subroutines and
//! the user's extra state. The state lives as long as the process (MPI does not tell the creator
//! when a keyval's last attribute is gone; it is a few words per keyval).
use crate::abi::{MPI_Aint, MPI_Copy_function, MPI_Delete_function, MPI_Fint};
use std::os::raw::{c_int, c_void};

/// `SUBROUTINE COPY(OLD, KEYVAL, EXTRA_STATE, VAL_IN, VAL_OUT, FLAG, IERROR)`.
type FortranCopy = unsafe extern "C" fn(*const MPI_Fint, *const c_int, *const MPI_Aint, *const MPI_Aint, *mut MPI_Aint, *mut c_int, *mut c_int);
/// `SUBROUTINE DELETE(OBJ, KEYVAL, VAL, EXTRA_STATE, IERROR)`.
type FortranDelete = unsafe extern "C" fn(*const MPI_Fint, *const c_int, *const MPI_Aint, *const MPI_Aint, *mut c_int);

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum KeyvalKind {
    Comm,
    Type,
    Win,
    /// `MPI_KEYVAL_CREATE`: INTEGER values; the callbacks see the low 32 bits.
    Legacy,
}

/// How a Fortran library's callbacks see what the engine passes them: its INTEGER handles, its
/// keyvals, and its error codes taken back. Identity for the MPICH ABI (Fortran handles are the
/// C ones); Open MPI's Fortran library (`abi_ompi::fortran`) gives its own.
pub struct FortranAbi {
    pub handle: fn(c_int) -> MPI_Fint,
    pub keyval: fn(c_int) -> c_int,
    pub code_in: fn(c_int) -> c_int,
}
const MPICH: FortranAbi = FortranAbi { handle: |h| h, keyval: |k| k, code_in: |c| c };

pub struct KeyvalState {
    abi: &'static FortranAbi,
    kind: KeyvalKind,
    copy: Option<FortranCopy>,
    delete: Option<FortranDelete>,
    extra: MPI_Aint,
}

/// Boxes the Fortran callbacks (addresses of the caller's EXTERNAL subroutines) for the C
/// keyval's `extra_state`.
///
/// # Safety
/// `copy` and `delete` are null or Fortran subroutines with the signatures above.
pub unsafe fn keyval_state(kind: KeyvalKind, copy: *const c_void, delete: *const c_void, extra: MPI_Aint) -> *mut c_void {
    // SAFETY: forwarded caller contract.
    unsafe { keyval_state_for(&MPICH, kind, copy, delete, extra) }
}

/// `keyval_state` for the Fortran library of `abi`.
///
/// # Safety
/// As `keyval_state`.
pub unsafe fn keyval_state_for(abi: &'static FortranAbi, kind: KeyvalKind, copy: *const c_void, delete: *const c_void, extra: MPI_Aint) -> *mut c_void {
    // SAFETY: the caller vouches for the subroutines' signatures; null stays None.
    let (copy, delete) = unsafe {
        (
            (!copy.is_null()).then(|| std::mem::transmute::<*const c_void, FortranCopy>(copy)),
            (!delete.is_null()).then(|| std::mem::transmute::<*const c_void, FortranDelete>(delete)),
        )
    };
    Box::into_raw(Box::new(KeyvalState { abi, kind, copy, delete, extra })) as *mut c_void
}

/// The C copy and delete callbacks to register with a `KeyvalState` as extra state (one pair
/// serves communicators, datatypes and windows: their handles are all C `int`s).
pub fn trampolines() -> (Option<MPI_Copy_function>, Option<MPI_Delete_function>) {
    (Some(copy_trampoline), Some(delete_trampoline))
}

/// Narrows a legacy (INTEGER) value the callback wrote to its sign-extended 32 bits.
fn widen(kind: KeyvalKind, v: MPI_Aint) -> MPI_Aint {
    if kind == KeyvalKind::Legacy {
        v as i32 as MPI_Aint
    } else {
        v
    }
}

unsafe extern "C" fn copy_trampoline(old: c_int, keyval: c_int, extra: *mut c_void, val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
    // SAFETY: `extra` is the KeyvalState registered with this keyval; C passes a valid `void **`
    // out value and flag (the copy-callback contract).
    unsafe {
        let st = &*(extra as *const KeyvalState);
        let Some(copy) = st.copy else {
            *flag = 0;
            return 0;
        };
        let vin = widen(st.kind, val_in as MPI_Aint);
        let (mut out, mut f, mut ierr) = (0 as MPI_Aint, 0 as c_int, 0 as c_int);
        let (old, keyval) = ((st.abi.handle)(old), (st.abi.keyval)(keyval));
        copy(&old, &keyval, &st.extra, &vin, &mut out, &mut f, &mut ierr);
        *flag = (f != 0) as c_int;
        if f != 0 {
            *(val_out as *mut *mut c_void) = widen(st.kind, out) as *mut c_void;
        }
        (st.abi.code_in)(ierr)
    }
}

unsafe extern "C" fn delete_trampoline(obj: c_int, keyval: c_int, val: *mut c_void, extra: *mut c_void) -> c_int {
    // SAFETY: `extra` is the KeyvalState registered with this keyval.
    unsafe {
        let st = &*(extra as *const KeyvalState);
        let Some(delete) = st.delete else { return 0 };
        let v = widen(st.kind, val as MPI_Aint);
        let mut ierr = 0;
        let (obj, keyval) = ((st.abi.handle)(obj), (st.abi.keyval)(keyval));
        delete(&obj, &keyval, &v, &st.extra, &mut ierr);
        (st.abi.code_in)(ierr)
    }
}

// The predefined Fortran callbacks. The trampolines always pass 8-byte values, so one version
// serves the MPI-1 (INTEGER) and the MPI-2 (ADDRESS_KIND) forms.
macro_rules! predefined_copy {
    ($($lower:ident, $upper:ident, $dup:expr;)*) => {$(
        fortran_binding!($lower, $upper; (_old: *const MPI_Fint, _keyval: *const c_int, _extra: *const MPI_Aint, vin: *const MPI_Aint, vout: *mut MPI_Aint, flag: *mut c_int, ierr: *mut c_int) => {
            if $dup {
                *vout = *vin;
            }
            *flag = $dup as c_int;
            *ierr = 0;
        });
    )*};
}
predefined_copy! {
    null_copy_fn, NULL_COPY_FN, false;
    dup_fn, DUP_FN, true;
    comm_null_copy_fn, COMM_NULL_COPY_FN, false;
    comm_dup_fn, COMM_DUP_FN, true;
    type_null_copy_fn, TYPE_NULL_COPY_FN, false;
    type_dup_fn, TYPE_DUP_FN, true;
    win_null_copy_fn, WIN_NULL_COPY_FN, false;
    win_dup_fn, WIN_DUP_FN, true;
}
macro_rules! predefined_delete {
    ($($lower:ident, $upper:ident;)*) => {$(
        fortran_binding!($lower, $upper; (_obj: *const MPI_Fint, _keyval: *const c_int, _val: *const MPI_Aint, _extra: *const MPI_Aint, ierr: *mut c_int) => {
            *ierr = 0;
        });
    )*};
}
predefined_delete! {
    null_delete_fn, NULL_DELETE_FN;
    comm_null_delete_fn, COMM_NULL_DELETE_FN;
    type_null_delete_fn, TYPE_NULL_DELETE_FN;
    win_null_delete_fn, WIN_NULL_DELETE_FN;
}

/// `SUBROUTINE QUERY(EXTRA_STATE, STATUS, IERROR)` of MPI_GREQUEST_START.
type FortranGreqQuery = unsafe extern "C" fn(*const MPI_Aint, *mut MPI_Fint, *mut c_int);
/// `SUBROUTINE FREE(EXTRA_STATE, IERROR)`.
type FortranGreqFree = unsafe extern "C" fn(*const MPI_Aint, *mut c_int);
/// `SUBROUTINE CANCEL(EXTRA_STATE, COMPLETE, IERROR)` (COMPLETE a LOGICAL).
type FortranGreqCancel = unsafe extern "C" fn(*const MPI_Aint, *const c_int, *mut c_int);

/// The Fortran functions of one generalized request and its extra state: the C request's
/// `extra_state`, released by the free trampoline (which MPI calls exactly once per request).
pub struct GreqState {
    query: FortranGreqQuery,
    free: FortranGreqFree,
    cancel: FortranGreqCancel,
    extra: MPI_Aint,
}

/// Boxes the Fortran functions of MPI_GREQUEST_START for the C request's `extra_state`.
///
/// # Safety
/// `query`, `free` and `cancel` are Fortran subroutines with the signatures above (non-null).
pub unsafe fn greq_state(query: *const c_void, free: *const c_void, cancel: *const c_void, extra: MPI_Aint) -> *mut c_void {
    // SAFETY: the caller vouches for the subroutines' signatures.
    let state = unsafe {
        GreqState {
            query: std::mem::transmute::<*const c_void, FortranGreqQuery>(query),
            free: std::mem::transmute::<*const c_void, FortranGreqFree>(free),
            cancel: std::mem::transmute::<*const c_void, FortranGreqCancel>(cancel),
            extra,
        }
    };
    Box::into_raw(Box::new(state)) as *mut c_void
}

/// C query function of a Fortran generalized request: the Fortran status has the C layout
/// (MPICH ABI, MPI_STATUS_SIZE = 5 INTEGERs).
///
/// # Safety
/// `state` comes from `greq_state` and is not yet freed; `status` is a C status.
pub unsafe extern "C" fn greq_query(state: *mut c_void, status: *mut crate::abi::MPI_Status) -> c_int {
    // SAFETY: this function's contract.
    let s = unsafe { &*(state as *const GreqState) };
    let mut ierr: c_int = crate::abi::MPI_SUCCESS;
    // SAFETY: the Fortran subroutine with references to its arguments (see `greq_state`).
    unsafe { (s.query)(&s.extra, status as *mut MPI_Fint, &mut ierr) };
    ierr
}

/// C free function of a Fortran generalized request: calls the Fortran one, then releases the
/// state.
///
/// # Safety
/// `state` comes from `greq_state`; MPI calls this once per request, last.
pub unsafe extern "C" fn greq_free(state: *mut c_void) -> c_int {
    // SAFETY: this function's contract: the box is ours to take back now.
    let s = unsafe { Box::from_raw(state as *mut GreqState) };
    let mut ierr: c_int = crate::abi::MPI_SUCCESS;
    // SAFETY: the Fortran subroutine with references to its arguments (see `greq_state`).
    unsafe { (s.free)(&s.extra, &mut ierr) };
    ierr
}

/// C cancel function of a Fortran generalized request.
///
/// # Safety
/// `state` comes from `greq_state` and is not yet freed.
pub unsafe extern "C" fn greq_cancel(state: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: this function's contract.
    let s = unsafe { &*(state as *const GreqState) };
    let mut ierr: c_int = crate::abi::MPI_SUCCESS;
    let flag: c_int = (complete != 0) as c_int;
    // SAFETY: the Fortran subroutine with references to its arguments (see `greq_state`).
    unsafe { (s.cancel)(&s.extra, &flag, &mut ierr) };
    ierr
}
