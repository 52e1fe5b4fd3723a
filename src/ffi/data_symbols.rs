//! Data symbols of the MPICH ABI and `MPIR_Dup_fn` (`docs/design/abi.md` 1.7-1.10).
//!
//! Executables built against `mpi.h` take copies of these objects (`R_X86_64_COPY`), so each must
//! exist with MPICH's size (`nm -D -S libmpich.so.12`; scripts/check-abi.sh compares them). They use
//! default visibility: never link with `-Bsymbolic` and never make them protected, or the library
//! and the executable would see different copies. Rust reaches exported statics through the GOT,
//! so after a copy relocation the library reads the executable's copy.
#![allow(non_upper_case_globals)]
use crate::abi::{MPI_Comm, MPI_Fint, MPI_Status, MPI_SUCCESS};
use std::os::raw::{c_int, c_void};
use std::ptr::{addr_of, addr_of_mut, null_mut};

/// A pointer that may live in an immutable `static` (`T * const` in C).
#[repr(transparent)]
pub struct ConstPtr<T>(pub *mut T);
unsafe impl<T> Sync for ConstPtr<T> {}

impl<T> ConstPtr<T> {
    pub fn get(&self) -> *mut T {
        self.0
    }
}

// Distinct targets for the sentinel pointers (8 bytes each, like MPICH's MPIR_C_MPI_* objects).
static UNWEIGHTED_OBJ: [c_int; 2] = [0; 2];
static WEIGHTS_EMPTY_OBJ: [c_int; 2] = [0; 2];
static PVAR_ALL_HANDLES_OBJ: u64 = 0;

/// `int * const MPI_UNWEIGHTED`: pass as the weights of a distributed graph without weights.
#[no_mangle]
pub static MPI_UNWEIGHTED: ConstPtr<c_int> = ConstPtr(addr_of!(UNWEIGHTED_OBJ) as *mut c_int);
/// `int * const MPI_WEIGHTS_EMPTY`: weights of a process that has no edges.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: ConstPtr<c_int> = ConstPtr(addr_of!(WEIGHTS_EMPTY_OBJ) as *mut c_int);
/// `MPI_T_pvar_handle const MPI_T_PVAR_ALL_HANDLES`: sentinel meaning "every handle of the session".
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: ConstPtr<c_void> = ConstPtr(addr_of!(PVAR_ALL_HANDLES_OBJ) as *mut c_void);

/// `MPI_Fint *MPI_F_STATUS_IGNORE`: null until the Fortran layer stores the address of its
/// `MPI_STATUS_IGNORE` common-block member here.
#[no_mangle]
pub static mut MPI_F_STATUS_IGNORE: *mut MPI_Fint = null_mut();
/// `MPI_Fint *MPI_F_STATUSES_IGNORE`: as `MPI_F_STATUS_IGNORE`, for arrays of statuses.
#[no_mangle]
pub static mut MPI_F_STATUSES_IGNORE: *mut MPI_Fint = null_mut();

/// The objects `MPI_F08_STATUS(ES)_IGNORE` point at (20 bytes each, `MPI_F08_status`).
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUS_IGNORE_OBJ: MPI_Status =
    MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUSES_IGNORE_OBJ: [MPI_Status; 1] =
    [MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 }];
/// `MPI_F08_status *MPI_F08_STATUS_IGNORE`.
#[no_mangle]
pub static mut MPI_F08_STATUS_IGNORE: *mut MPI_Status = addr_of_mut!(MPIR_F08_MPI_STATUS_IGNORE_OBJ);
/// `MPI_F08_status *MPI_F08_STATUSES_IGNORE`.
#[no_mangle]
pub static mut MPI_F08_STATUSES_IGNORE: *mut MPI_Status =
    addr_of_mut!(MPIR_F08_MPI_STATUSES_IGNORE_OBJ) as *mut MPI_Status;

/// `bind(C)` sentinels whose addresses `use mpi_f08` passes for `MPI_IN_PLACE` / `MPI_BOTTOM`.
#[no_mangle]
pub static mut MPIR_F08_MPI_IN_PLACE: c_int = 0;
#[no_mangle]
pub static mut MPIR_F08_MPI_BOTTOM: c_int = 0;

/// Current value of `MPI_F_STATUS_IGNORE` (read through the GOT: the executable's copy if any).
pub fn fortran_status_ignore() -> *const MPI_Fint {
    unsafe { std::ptr::read_volatile(addr_of!(MPI_F_STATUS_IGNORE)) as *const MPI_Fint }
}

/// `MPI_DUP_FN` (and, through casts, `MPI_COMM_DUP_FN`, `MPI_TYPE_DUP_FN`, `MPI_WIN_DUP_FN`):
/// the copy callback that copies the attribute value itself.
///
/// # Safety
/// Called by MPI with valid `attribute_val_out` and `flag` pointers (the copy-callback contract).
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _oldcomm: MPI_Comm,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if !attribute_val_out.is_null() {
        // SAFETY: non-null; MPI passes the address of a `void *` to fill.
        unsafe { *(attribute_val_out as *mut *mut c_void) = attribute_val_in };
    }
    if !flag.is_null() {
        // SAFETY: non-null; MPI passes the address of an int.
        unsafe { *flag = 1 };
    }
    MPI_SUCCESS
}
const _: crate::abi::MPI_Copy_function = MPIR_Dup_fn;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sentinels_are_distinct_and_dup_copies() {
        assert_ne!(MPI_UNWEIGHTED.get(), MPI_WEIGHTS_EMPTY.get());
        assert!(!MPI_UNWEIGHTED.get().is_null() && !MPI_T_PVAR_ALL_HANDLES.get().is_null());
        assert!(fortran_status_ignore().is_null());
        let mut out: *mut c_void = null_mut();
        let mut flag = 0;
        let v = 42usize as *mut c_void;
        let rc = unsafe { MPIR_Dup_fn(0, 0, null_mut(), v, addr_of_mut!(out) as *mut c_void, &mut flag) };
        assert_eq!((rc, flag, out), (MPI_SUCCESS, 1, v));
    }
}
