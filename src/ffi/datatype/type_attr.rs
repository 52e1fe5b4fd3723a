//! Attributes on datatypes (MPI 4.1 section 7.7.4): type keyvals with copy/delete callbacks,
//! copied by MPI_Type_dup and deleted by MPI_Type_free (hooked in `ffi::datatype`).
//!
//! Same bookkeeping as communicator attributes (`crate::comm::attr::Attrs`, one registry per rank
//! in `Instance::type_attrs`), keyed by datatype handle. Callbacks run with no lock held.
//! Type keyval handles carry MPICH's datatype object bits (3 << 22) in the index, so a type keyval
//! given to a communicator call (or the reverse) is an invalid keyval, not a different one.
use crate::ffi::check;
use crate::ffi::pointer_args::out;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::instance::Instance;
use std::os::raw::{c_int, c_void};

/// MPICH's keyval kind bits for datatype keyvals.
pub(crate) const TYPE_KEYVAL_BITS: u32 = 3 << 22;

fn keyval_handle(index: u32) -> c_int {
    make_handle(HANDLE_KIND_DIRECT, OBJ_KEYVAL, index | TYPE_KEYVAL_BITS)
}

/// The registry index of a valid (created, not freed) type keyval handle.
fn user_type_keyval(u: &Instance, keyval: c_int) -> MpiResult<u32> {
    let i = handle_index(keyval);
    if keyval == MPI_KEYVAL_INVALID || handle_kind(keyval) != HANDLE_KIND_DIRECT || handle_object(keyval) != OBJ_KEYVAL || i & TYPE_KEYVAL_BITS != TYPE_KEYVAL_BITS {
        return Err(err(MPI_ERR_KEYVAL, format!("invalid type keyval 0x{:08x} (not made by MPI_Type_create_keyval)", keyval as u32)));
    }
    let k = i & !TYPE_KEYVAL_BITS;
    if crate::ffi::comm::attr::attrs(u).types.live_keyval(k).is_none() {
        return Err(err(MPI_ERR_KEYVAL, format!("invalid type keyval 0x{:08x} (freed)", keyval as u32)));
    }
    Ok(k)
}

/// Runs the delete callback of attribute `k` = `value` on `dt` (no-op for a NULL callback).
///
/// # Safety
/// Calls the application's callback (MPI_Type_delete_attr_function contract).
unsafe fn call_delete(u: &Instance, dt: MPI_Datatype, k: u32, value: usize) -> MpiResult {
    let Some(kv) = crate::ffi::comm::attr::attrs(u).types.keyval(k) else { return Ok(()) };
    let Some(f) = kv.delete else { return Ok(()) };
    // SAFETY: the application registered `f` as a type delete callback; it receives the values it
    // gave us (attribute value, extra_state), as the standard specifies.
    let rc = unsafe { f(dt, keyval_handle(k), value as *mut c_void, kv.extra_state as *mut c_void) };
    if rc != MPI_SUCCESS {
        return Err(crate::ffi::comm::attr::callback_error("type delete", keyval_handle(k), rc));
    }
    Ok(())
}

/// MPI_Type_free's attribute step: deletes every attribute of `dt`, most recent first, stopping
/// at the first failing callback (the type is then not freed). A no-op before MPI_Init.
///
/// # Safety
/// Calls application callbacks.
pub unsafe fn delete_type_attrs(dt: MPI_Datatype) -> MpiResult {
    let Ok(u) = check::universe() else { return Ok(()) };
    for (k, value) in crate::ffi::comm::attr::attrs(u).types.list(dt).into_iter().rev() {
        // SAFETY: the callback is the application's (this function's contract).
        unsafe { call_delete(u, dt, k, value)? };
        crate::ffi::comm::attr::attrs(u).types.remove(dt, k);
    }
    Ok(())
}

/// MPI_Type_dup's attribute step: copies the attributes of `old` whose copy callback sets the flag
/// onto `new`. If a callback fails the copies made so far are deleted and the error returned (the
/// caller then frees `new`).
///
/// # Safety
/// Calls application callbacks.
pub unsafe fn copy_type_attrs(old: MPI_Datatype, new: MPI_Datatype) -> MpiResult {
    let Ok(u) = check::universe() else { return Ok(()) };
    for (k, value) in crate::ffi::comm::attr::attrs(u).types.list(old) {
        let Some(kv) = crate::ffi::comm::attr::attrs(u).types.keyval(k) else { continue };
        let Some(f) = kv.copy else { continue };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: `f` is the application's copy callback; `out` and `flag` are valid locals it may
        // write (a `void *` and an `int`), the other arguments are its own values.
        let rc = unsafe { f(old, keyval_handle(k), kv.extra_state as *mut c_void, value as *mut c_void, &mut out as *mut *mut c_void as *mut c_void, &mut flag) };
        if rc != MPI_SUCCESS {
            let e = crate::ffi::comm::attr::callback_error("type copy", keyval_handle(k), rc);
            // SAFETY: the delete callbacks are the application's (this function's contract).
            let _ = unsafe { delete_type_attrs(new) };
            crate::ffi::comm::attr::attrs(u).types.clear(new);
            return Err(e);
        }
        if flag != 0 {
            crate::ffi::comm::attr::attrs(u).types.put(new, k, out as usize);
        }
    }
    Ok(())
}

export! {
    fn MPI_Type_create_keyval / PMPI_Type_create_keyval (type_copy_attr_fn: Option<MPI_Type_copy_attr_function>, type_delete_attr_fn: Option<MPI_Type_delete_attr_function>, type_keyval: *mut c_int, extra_state: *mut c_void) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let type_keyval = out(type_keyval, "type_keyval")?;
        let h = keyval_handle(crate::ffi::comm::attr::attrs(u).types.create_keyval(type_copy_attr_fn, type_delete_attr_fn, extra_state as usize));
        // SAFETY: checked non-NULL; the caller passes the address of an `int`.
        unsafe { *type_keyval = h };
        Ok(())
    }

    fn MPI_Type_free_keyval / PMPI_Type_free_keyval (type_keyval: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let type_keyval = out(type_keyval, "type_keyval")?;
        // SAFETY: checked non-NULL; the caller passes the address of its keyval, an `int`.
        let k = user_type_keyval(u, unsafe { *type_keyval })?;
        // Attributes still set with it keep working and get their delete callback later.
        crate::ffi::comm::attr::attrs(u).types.free_keyval(k);
        // SAFETY: as above; the keyval argument is in-out.
        unsafe { *type_keyval = MPI_KEYVAL_INVALID };
        Ok(())
    }

    fn MPI_Type_set_attr / PMPI_Type_set_attr (datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        check::dtype(datatype)?;
        let k = user_type_keyval(u, type_keyval)?;
        // Replacing a value deletes the old one first; if that fails the old value stays.
        if let Some(old) = crate::ffi::comm::attr::attrs(u).types.get(datatype, k) {
            // SAFETY: the callback is the application's, registered with its keyval.
            unsafe { call_delete(u, datatype, k, old)? };
        }
        crate::ffi::comm::attr::attrs(u).types.put(datatype, k, attribute_val as usize);
        Ok(())
    }

    fn MPI_Type_get_attr / PMPI_Type_get_attr (datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        check::dtype(datatype)?;
        let k = user_type_keyval(u, type_keyval)?;
        if flag.is_null() || attribute_val.is_null() {
            return Err(err(MPI_ERR_ARG, "attribute_val or flag is NULL"));
        }
        let found = crate::ffi::comm::attr::attrs(u).types.get(datatype, k);
        // SAFETY: both checked non-NULL; the caller passes the address of a `void *` and of an `int`.
        unsafe {
            if let Some(v) = found {
                *(attribute_val as *mut *mut c_void) = v as *mut c_void;
            }
            *flag = found.is_some() as c_int;
        }
        Ok(())
    }

    fn MPI_Type_delete_attr / PMPI_Type_delete_attr (datatype: MPI_Datatype, type_keyval: c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        check::dtype(datatype)?;
        let k = user_type_keyval(u, type_keyval)?;
        if let Some(old) = crate::ffi::comm::attr::attrs(u).types.get(datatype, k) {
            // SAFETY: the callback is the application's, registered with its keyval.
            unsafe { call_delete(u, datatype, k, old)? };
            crate::ffi::comm::attr::attrs(u).types.remove(datatype, k);
        }
        Ok(())
    }
}
