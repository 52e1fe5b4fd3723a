//! MPI_T (tool interface) conversions of Open MPI 4.1's ABI, under the names the generated
//! wrappers call (as `crate::abi5::mpit`'s, whose helpers it shares): Open MPI numbers its MPI_T
//! enums from 0 (`tables.rs` pairs them with MPICH's), and its MPI_T_PVAR_ALL_HANDLES is
//! `(MPI_T_pvar_handle)-1`. Open MPI 4.1 (MPI 3.1) has no events, sources or callback safety.
use super::conv::{file_in, h_in};
use super::tables::{T_BINDS, T_PVAR_CLASSES, T_SCOPES, T_VERBOSITIES};
use crate::abi5::mpit::{obj_in_with, pair_in, pair_out};
pub use crate::abi5::mpit::{ObjSlot, TVar};
use std::os::raw::{c_int, c_void};

crate::abi5::mpit::t_enum_conversions!();

/// Open MPI's MPI_T_PVAR_ALL_HANDLES (-1) and the engine's sentinel; the other handles are the
/// engine's small numbers, unchanged.
pub fn pvar_h_in(h: *mut c_void) -> *mut c_void {
    if h as isize == -1 {
        crate::ffi::data_symbols::MPI_T_PVAR_ALL_HANDLES.get()
    } else {
        h
    }
}
pub fn pvar_h_out(h: *mut c_void) -> *mut c_void {
    if h == crate::ffi::data_symbols::MPI_T_PVAR_ALL_HANDLES.get() {
        -1isize as *mut c_void
    } else {
        h
    }
}

/// # Safety
/// As `crate::abi5::mpit::obj_in_with`.
pub unsafe fn t_obj_in(kind: TVar, index: c_int, obj: *mut c_void, slot: &mut ObjSlot) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { obj_in_with(kind, index, obj, slot, h_in, file_in) }
}
