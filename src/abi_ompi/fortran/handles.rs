//! Open MPI's Fortran INTEGER handles. A predefined one is its index in Open MPI's f2c table of
//! its kind (mpif-handles.h: MPI_COMM_WORLD = 0, MPI_DOUBLE_PRECISION = 17...), mapped through
//! `tables::F_OBJECTS` to its predefined object (`tables::F_TO_MPICH` to its MPICH-ABI handle);
//! any other is the MPICH-ABI handle itself (a user handle, negative as an INTEGER: no collision
//! with the small non-negative indices), so each direction is a table lookup. The objects of
//! types oxmpi lacks (MPI_LOGICAL1, MPI_2COMPLEX...) hold handle 0 (calls reject them): those
//! are found by address on the way back. `MPI_X_c2f`/`MPI_X_f2c` of the C layer (src/abi_ompi/hand.rs) use the same mapping,
//! so C and Fortran code of one program hand handles to each other.
use super::super::conv::{h_in, h_out, Handle};
use super::super::objects::{index_of, object_at};
use super::super::tables::{fortran_of, F_OBJECTS, F_TO_MPICH, OBJECT_FORTRAN};
use std::os::raw::c_int;

/// The MPICH-ABI handle Fortran handle `f` of kind `k` (`tables::F_*`) stands for.
#[inline]
pub fn mpich(k: usize, f: c_int) -> c_int {
    match usize::try_from(f).ok().and_then(|i| F_TO_MPICH[k].get(i)) {
        Some(&h) => h as c_int,
        None => f,
    }
}

/// The Fortran handle of MPICH-ABI handle `h`.
#[inline]
pub fn fortran(h: c_int) -> c_int {
    fortran_of(h as u32).unwrap_or(h)
}

/// Fortran handle -> Open MPI C handle.
#[inline]
pub fn to_c(k: usize, f: c_int) -> Handle {
    match usize::try_from(f).ok().and_then(|i| F_OBJECTS[k].get(i)) {
        Some(&o) if o >= 0 => object_at(o as usize),
        Some(_) => h_out(0), // a gap in the table: no handle, which calls reject
        None => h_out(f),
    }
}

/// Open MPI C handle -> Fortran handle (-1 for a pointer to no object).
#[inline]
pub fn from_c(p: Handle) -> c_int {
    match h_in(p) {
        0 => index_of(p).map_or(-1, |i| OBJECT_FORTRAN[i]),
        h => fortran(h),
    }
}

/// An array of `n` Fortran handles of kind `k` as C handles (empty for NULL).
///
/// # Safety
/// `p` is NULL or `n` readable INTEGERs.
pub unsafe fn array_to_c(k: usize, p: *const c_int, n: c_int) -> Vec<Handle> {
    if p.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: caller contract.
    unsafe { std::slice::from_raw_parts(p, n as usize) }.iter().map(|&f| to_c(k, f)).collect()
}

/// Writes C handles `v` back into the Fortran array `p`.
///
/// # Safety
/// `p` is NULL or `v.len()` writable INTEGERs.
pub unsafe fn array_from_c(p: *mut c_int, v: &[Handle]) {
    if !p.is_null() {
        for (i, &h) in v.iter().enumerate() {
            // SAFETY: caller contract.
            unsafe { *p.add(i) = from_c(h) };
        }
    }
}

/// The C array pointer for a converted array (NULL stays NULL).
pub fn array_ptr(p: *const c_int, v: &mut [Handle]) -> *mut Handle {
    if p.is_null() { std::ptr::null_mut() } else { v.as_mut_ptr() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::super::tables::{F_COMM, F_DATATYPE, F_OP};
    #[test]
    fn predefined_and_user_handles_round_trip() {
        // mpif-handles.h of Open MPI 4.1: MPI_COMM_WORLD=0, MPI_COMM_NULL=2, MPI_DOUBLE_PRECISION=17, MPI_SUM=3.
        assert_eq!(mpich(F_COMM, 0), crate::abi::MPI_COMM_WORLD);
        assert_eq!(mpich(F_COMM, 2), crate::abi::MPI_COMM_NULL);
        assert_eq!(mpich(F_DATATYPE, 17), 0x4c00081f);
        assert_eq!(mpich(F_OP, 3), 0x5800_0003);
        assert_eq!(fortran(crate::abi::MPI_COMM_WORLD), 0);
        assert_eq!(fortran(0x4c00081f), 17);
        assert_eq!(fortran(crate::abi::MPI_REQUEST_NULL), 0);
        let user = 0x8400_0003u32 as c_int;
        assert_eq!(mpich(F_COMM, user), user);
        assert_eq!(fortran(user), user);
        // An index past the table is no predefined handle: passed on for the engine to reject.
        assert_eq!(mpich(F_COMM, 77), 77);
    }
}
