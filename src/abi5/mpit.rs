//! MPI_T (tool interface) conversions of the MPI-5 standard ABI, under the names the generated
//! wrappers call: the enums (verbosity, binding, scope, pvar class, callback safety, source
//! order) by the (ABI, MPICH) pairs of `tables.rs`, MPI_T_PVAR_ALL_HANDLES, and the object a
//! handle allocation binds. The other MPI_T handles are the engine's own numbers, which the
//! program only passes back: unchanged. `obj_in_with` serves Open MPI's layer too.
use super::conv::{file_in, h_in, Handle};
use super::tables::{T_BINDS, T_CB_SAFETIES, T_PVAR_CLASSES, T_SCOPES, T_SOURCE_ORDERS, T_VERBOSITIES};
use crate::abi::mpit::{MPI_T_BIND_MPI_FILE, MPI_T_BIND_NO_OBJECT};
use std::os::raw::{c_int, c_void};

/// `v` from the MPICH side of (other ABI, MPICH) pairs; unknown values pass unchanged.
#[inline]
pub fn pair_out(v: c_int, pairs: &[(c_int, c_int)]) -> c_int {
    pairs.iter().find(|p| p.1 == v).map_or(v, |p| p.0)
}
/// `v` from the other ABI's side; unknown values become `other`.
#[inline]
pub fn pair_in(v: c_int, pairs: &[(c_int, c_int)], other: c_int) -> c_int {
    pairs.iter().find(|p| p.0 == v).map_or(other, |p| p.1)
}

/// The enum conversions of a layer's MPI_T (both foreign ABIs): expanded in a module that has
/// `c_int`, `pair_out`, `pair_in` and its `tables`' T_VERBOSITIES, T_BINDS, T_SCOPES and
/// T_PVAR_CLASSES in scope.
macro_rules! t_enum_conversions {
    () => {
        pub fn t_verbosity_out(v: c_int) -> c_int {
            pair_out(v, &T_VERBOSITIES)
        }
        pub fn t_bind_out(v: c_int) -> c_int {
            pair_out(v, &T_BINDS)
        }
        pub fn t_scope_out(v: c_int) -> c_int {
            pair_out(v, &T_SCOPES)
        }
        pub fn t_class_out(v: c_int) -> c_int {
            pair_out(v, &T_PVAR_CLASSES)
        }
        /// A class no variable has matches none (MPI_T_pvar_get_index: MPI_T_ERR_INVALID_NAME);
        /// MPICH's MPI_T_PVAR_CLASS_INVALID is 0.
        pub fn t_class_in(v: c_int) -> c_int {
            pair_in(v, &T_PVAR_CLASSES, 0)
        }
    };
}
pub(crate) use t_enum_conversions;
t_enum_conversions!();
pub fn t_cb_safety_in(v: c_int) -> c_int {
    pair_in(v, &T_CB_SAFETIES, -1)
}
pub fn t_source_order_out(v: c_int) -> c_int {
    pair_out(v, &T_SOURCE_ORDERS)
}

/// The ABI's MPI_T_PVAR_ALL_HANDLES is `(MPI_T_pvar_handle)1`, a number the engine gives its
/// own handles: the ABI's handle is the engine's plus one, and 1 the engine's sentinel.
pub fn pvar_h_in(h: *mut c_void) -> *mut c_void {
    match h as usize {
        0 => std::ptr::null_mut(),
        1 => crate::ffi::data_symbols::MPI_T_PVAR_ALL_HANDLES.get(),
        v => (v - 1) as *mut c_void,
    }
}
pub fn pvar_h_out(h: *mut c_void) -> *mut c_void {
    if h.is_null() {
        h
    } else if h == crate::ffi::data_symbols::MPI_T_PVAR_ALL_HANDLES.get() {
        1 as *mut c_void
    } else {
        (h as usize).wrapping_add(1) as *mut c_void
    }
}

/// The kind of variable a handle allocation names.
#[derive(Clone, Copy)]
pub enum TVar {
    Cvar,
    Pvar,
    Event,
}

/// Where the MPICH-ABI form of the object behind `obj_handle` lives during the call.
pub struct ObjSlot {
    int: c_int,
    ptr: *mut c_void,
}
impl Default for ObjSlot {
    fn default() -> Self {
        ObjSlot { int: 0, ptr: std::ptr::null_mut() }
    }
}

/// The MPICH binding (MPI_T_BIND_*) of variable `index` of `kind`, if it names one.
fn bind_of(kind: TVar, index: c_int) -> Option<c_int> {
    let mut bind: c_int = MPI_T_BIND_NO_OBJECT;
    let n = std::ptr::null_mut();
    // SAFETY: every output but `bind` is NULL, which the MPI_T get_info functions skip.
    let rc = unsafe {
        match kind {
            TVar::Cvar => crate::ffi::PMPI_T_cvar_get_info(index, n as _, n as _, n as _, n as _, n as _, n as _, n as _, &mut bind, n as _),
            TVar::Pvar => crate::ffi::PMPI_T_pvar_get_info(index, n as _, n as _, n as _, n as _, n as _, n as _, n as _, n as _, &mut bind, n as _, n as _, n as _),
            TVar::Event => crate::ffi::PMPI_T_event_get_info(index, n as _, n as _, n as _, n as _, n as _, n as _, n as _, n as _, n as _, n as _, &mut bind),
        }
    };
    (rc == 0).then_some(bind)
}

/// `obj_handle` of MPI_T_{cvar,pvar,event}_handle_alloc: a pointer to a handle of the variable's
/// binding, converted into `slot` (a pointer to it is what the engine gets); unchanged when the
/// variable binds no object, the index names none (the engine reports it), or it is NULL.
///
/// # Safety
/// `obj` is NULL or points to a handle of the type the variable's binding says.
pub unsafe fn obj_in_with(kind: TVar, index: c_int, obj: *mut c_void, slot: &mut ObjSlot, h_in: fn(Handle) -> c_int,
                          file_in: fn(*mut c_void) -> *mut c_void) -> *mut c_void {
    match bind_of(kind, index) {
        _ if obj.is_null() => obj,
        None | Some(MPI_T_BIND_NO_OBJECT) => obj,
        Some(MPI_T_BIND_MPI_FILE) => {
            // SAFETY: a file variable's object is an MPI_File (caller contract).
            slot.ptr = file_in(unsafe { *(obj as *const *mut c_void) });
            &mut slot.ptr as *mut *mut c_void as *mut c_void
        }
        Some(_) => {
            // SAFETY: the other bindings' objects are handles of the ABI (caller contract).
            slot.int = h_in(unsafe { *(obj as *const Handle) });
            &mut slot.int as *mut c_int as *mut c_void
        }
    }
}

/// # Safety
/// As `obj_in_with`.
pub unsafe fn t_obj_in(kind: TVar, index: c_int, obj: *mut c_void, slot: &mut ObjSlot) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { obj_in_with(kind, index, obj, slot, h_in, file_in) }
}

/// The ABI's value of an MPICH MPI_T_cb_safety (what a callback is given).
pub fn t_cb_safety_out(v: c_int) -> c_int {
    pair_out(v, &T_CB_SAFETIES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::mpit::*;

    /// Every MPICH MPI_T_BIND_* maps to the standard ABI's value and back, MPI_T_BIND_MPI_SESSION
    /// (MPICH 9711, the ABI's 12) included.
    #[test]
    fn t_binds_map_both_ways() {
        let mpich = [
            MPI_T_BIND_NO_OBJECT, MPI_T_BIND_MPI_COMM, MPI_T_BIND_MPI_DATATYPE, MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE,
            MPI_T_BIND_MPI_GROUP, MPI_T_BIND_MPI_OP, MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN, MPI_T_BIND_MPI_MESSAGE,
            MPI_T_BIND_MPI_INFO, MPI_T_BIND_MPI_SESSION,
        ];
        // The standard ABI numbers them 1..=12 in this order (include/mpi_abi.h).
        for (i, &m) in mpich.iter().enumerate() {
            let abi = t_bind_out(m);
            assert_eq!(abi, i as c_int + 1, "MPICH bind {m}");
            assert_eq!(pair_in(abi, &T_BINDS, -1), m, "ABI bind {abi}");
        }
        assert_eq!(t_bind_out(MPI_T_BIND_MPI_SESSION), 12);
    }
}
