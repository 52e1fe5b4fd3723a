//! MPI_Comm_spawn and MPI_Comm_spawn_multiple of the MPI-5 standard ABI, by hand: the generator
//! cannot size `array_of_info` (count handles) and `array_of_errcodes` (one code per process asked
//! for: maxprocs, or the sum of array_of_maxprocs), whose codes are converted back. The
//! Open MPI ABI has the same pair (`abi_ompi::spawn`).
/// Defines the ABI's MPI_Comm_spawn (`$spawn`) and MPI_Comm_spawn_multiple (`$multiple`) over the
/// MPICH-ABI functions, with the `conv` functions in scope where it is used (h_in, h_out, rank_in,
/// code_out, Handle, ERR_INTERN): both ABI layers convert spawn the same way.
macro_rules! spawn_pair {
    ($spawn:ident, $multiple:ident) => {
/// Converts `n` error codes written by the engine back to this ABI's values, in place.
///
/// # Safety
/// `codes` is NULL (MPI_ERRCODES_IGNORE) or holds `n` ints.
unsafe fn codes_out(codes: *mut c_int, n: c_int) {
    if codes.is_null() {
        return;
    }
    for i in 0..n.max(0) as usize {
        // SAFETY: within the caller's array (function contract).
        unsafe { *codes.add(i) = code_out(*codes.add(i)) };
    }
}

/// # Safety
/// The arguments follow the C prototype of MPI_Comm_spawn.
#[no_mangle]
pub unsafe extern "C" fn $spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: Handle, root: c_int, comm: Handle, intercomm: *mut Handle, array_of_errcodes: *mut c_int) -> c_int {
    // SAFETY: the caller passes what the ABI prototype says; each conversion reads or writes only
    // what the MPICH-ABI function it stands for would.
    run_value(ERR_INTERN, || unsafe {
        let mut t_inter: c_int = 0;
        let rc = crate::ffi::PMPI_Comm_spawn(command, argv, maxprocs, h_in(info), rank_in(root), h_in(comm), if intercomm.is_null() { std::ptr::null_mut() } else { &mut t_inter }, array_of_errcodes);
        if !intercomm.is_null() && t_inter != 0 {
            *intercomm = h_out(t_inter);
        }
        if rc == 0 {
            codes_out(array_of_errcodes, maxprocs);
        }
        code_out(rc)
    })
}

/// # Safety
/// The arguments follow the C prototype of MPI_Comm_spawn_multiple.
#[no_mangle]
pub unsafe extern "C" fn $multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const Handle, root: c_int, comm: Handle, intercomm: *mut Handle, array_of_errcodes: *mut c_int) -> c_int {
    // SAFETY: as above; the arrays hold `count` entries where not NULL (the engine reports NULL).
    run_value(ERR_INTERN, || unsafe {
        let n = if array_of_info.is_null() { 0 } else { count.max(0) as usize };
        let infos: Vec<c_int> = (0..n).map(|i| h_in(*array_of_info.add(i))).collect();
        let total: c_int = if array_of_maxprocs.is_null() { 0 } else { (0..count.max(0) as usize).map(|i| (*array_of_maxprocs.add(i)).max(0)).sum() };
        let mut t_inter: c_int = 0;
        let rc = crate::ffi::PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs, if array_of_info.is_null() { std::ptr::null() } else { infos.as_ptr() }, rank_in(root), h_in(comm), if intercomm.is_null() { std::ptr::null_mut() } else { &mut t_inter }, array_of_errcodes);
        if !intercomm.is_null() && t_inter != 0 {
            *intercomm = h_out(t_inter);
        }
        if rc == 0 {
            codes_out(array_of_errcodes, total);
        }
        code_out(rc)
    })
}
    };
}
pub(crate) use spawn_pair;

use super::conv::*;
use crate::ffi::boundary::run_value;
use std::os::raw::{c_char, c_int};
spawn_pair!(oxabi_MPI_Comm_spawn, oxabi_MPI_Comm_spawn_multiple);
