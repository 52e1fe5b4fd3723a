//! MPI_REGISTER_DATAREP (MPI 4.1 section 14.5.3) for `mpif.h` and `use mpi`, the same with
//! INTEGER(KIND=MPI_COUNT_KIND) counts for `mpi_f08`'s `MPI_Register_datarep_c` (no `use mpi`
//! form: `mpi_f08` calls `pmpi_register_datarep_c_`), and MPI_CONVERSION_FN_NULL. The
//! conversion subroutines are called through `crate::ffi::io::datarep`.
use super::set_ierr;
use super::strings::{input, FLen};
use crate::abi::{MPI_Aint, MPI_Fint, MPI_Offset};
use crate::ffi::io::datarep::{register_fortran, CONVERSION_FN_NULL_CODE, MPICH_FORTRAN};
use std::os::raw::{c_char, c_void};

fortran_binding!(register_datarep, REGISTER_DATAREP; (datarep: *const c_char, read: *const c_void, write: *const c_void, extent: *const c_void, extra: *const MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    let name = input(datarep, len, false).to_string_lossy().into_owned();
    set_ierr(ierr, register_fortran(&name, read, write, extent, *extra, false, MPICH_FORTRAN));
});
fortran_binding!(register_datarep_c, REGISTER_DATAREP_C; (datarep: *const c_char, read: *const c_void, write: *const c_void, extent: *const c_void, extra: *const MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    let name = input(datarep, len, false).to_string_lossy().into_owned();
    set_ierr(ierr, register_fortran(&name, read, write, extent, *extra, true, MPICH_FORTRAN));
});
// A conversion subroutine that converts nothing: the trampoline sees its IERROR and stores the
// data unconverted, as the standard says of MPI_CONVERSION_FN_NULL.
fortran_binding!(conversion_fn_null, CONVERSION_FN_NULL; (_userbuf: *mut c_void, _datatype: *const MPI_Fint, _count: *const c_void, _filebuf: *mut c_void, _position: *const MPI_Offset, _extra: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, CONVERSION_FN_NULL_CODE);
});
