//! Attributes on communicators (MPI 4.1 section 7.7): the predefined attributes of MPI_COMM_WORLD /
//! MPI_COMM_SELF (section 9.1.2), user keyvals with their copy/delete callbacks, the deprecated
//! MPI-1 names, and the user-defined error classes/codes/strings (section 9.5).
//!
//! The bookkeeping is `crate::comm::attr` (one registry per rank). Callbacks are called here with
//! no lock held. Type and window attributes come with derived datatypes and RMA.
use crate::ffi::check;
use crate::ffi::pointer_args::{c_str, out};
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::comm::attr::Attrs;
use crate::instance::Instance;
use std::os::raw::{c_char, c_int, c_void};

/// The attribute registries of one rank: of its communicators, datatypes and windows.
#[derive(Default)]
pub struct RankAttrs {
    pub comm: Attrs<MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function>,
    pub types: Attrs<MPI_Type_copy_attr_function, MPI_Type_delete_attr_function>,
    pub wins: Attrs<MPI_Win_copy_attr_function, MPI_Win_delete_attr_function>,
}

/// The attribute registries of `u`'s rank.
pub fn attrs(u: &Instance) -> &'static RankAttrs {
    static ATTRS: crate::ffi::rank_local::RankLocal<RankAttrs> = crate::ffi::rank_local::RankLocal::new();
    ATTRS.get(u)
}

const KEY_TAG_UB: c_int = MPI_TAG_UB;
const KEY_HOST: c_int = MPI_HOST;
const KEY_IO: c_int = MPI_IO;
const KEY_WTIME_IS_GLOBAL: c_int = MPI_WTIME_IS_GLOBAL;
const KEY_UNIVERSE_SIZE: c_int = MPI_UNIVERSE_SIZE;
const KEY_LASTUSEDCODE: c_int = MPI_LASTUSEDCODE;
const KEY_APPNUM: c_int = MPI_APPNUM;

/// Values of the predefined attributes; the application receives pointers to these.
struct Predefined {
    tag_ub: c_int,
    host: c_int,
    io: c_int,
    wtime_is_global: c_int,
    universe_size: c_int,
    appnum: c_int,
}

/// Per slot (a threads-mode process holds every rank, and spawned ranks differ in MPI_APPNUM):
/// made at the rank's first look-up, then kept (the application may hold the pointers).
static VALUES: std::sync::Mutex<Vec<Option<&'static Predefined>>> = std::sync::Mutex::new(Vec::new());

/// The predefined attributes' values of slot `slot`, made by `make` at the first look-up.
fn values(slot: usize, make: impl FnOnce() -> Predefined) -> &'static Predefined {
    let mut v = VALUES.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() <= slot {
        v.resize(slot + 1, None);
    }
    *v[slot].get_or_insert_with(|| Box::leak(Box::new(make())))
}

/// Predefined keyvals (MPICH: builtin keyval handles); they cannot be set, deleted or freed.
fn is_predefined(keyval: c_int) -> bool {
    handle_kind(keyval) == HANDLE_KIND_BUILTIN && handle_object(keyval) == OBJ_KEYVAL
}

fn keyval_handle(index: u32) -> c_int {
    make_handle(HANDLE_KIND_DIRECT, OBJ_KEYVAL, index)
}

/// The registry index of a valid (created, not freed) user keyval handle.
fn user_keyval(u: &Instance, keyval: c_int) -> MpiResult<u32> {
    keyval_index(u, keyval, false)
}

/// Like `user_keyval`, also accepting a keyval the application freed while attributes still use
/// it: freeing a keyval in use is deferred until the last of them is deleted (MPI 4.1 section
/// 7.7.2), so those attributes can still be read and deleted with it, as in MPICH.
fn keyval_in_use(u: &Instance, keyval: c_int) -> MpiResult<u32> {
    keyval_index(u, keyval, true)
}

fn keyval_index(u: &Instance, keyval: c_int, freed_in_use: bool) -> MpiResult<u32> {
    if keyval == MPI_KEYVAL_INVALID {
        return Err(err(MPI_ERR_KEYVAL, "invalid keyval MPI_KEYVAL_INVALID"));
    }
    if is_predefined(keyval) {
        return Err(err(MPI_ERR_KEYVAL, format!("keyval 0x{:08x} is predefined: its attribute cannot be set, deleted or freed", keyval as u32)));
    }
    let i = handle_index(keyval);
    if handle_kind(keyval) != HANDLE_KIND_DIRECT || handle_object(keyval) != OBJ_KEYVAL || !(if freed_in_use { attrs(u).comm.keyval(i).is_some() } else { attrs(u).comm.live_keyval(i).is_some() }) {
        return Err(err(MPI_ERR_KEYVAL, format!("invalid keyval 0x{:08x} (freed, or never created with MPI_Comm_create_keyval)", keyval as u32)));
    }
    Ok(i)
}

/// The error a callback returned, as an MPI error (its code is the callback's, so a user class or
/// code survives; anything unknown becomes MPI_ERR_OTHER).
pub(crate) fn callback_error(what: &str, keyval: c_int, rc: c_int) -> crate::error::MpiError {
    let class = crate::ffi::error_codes::class_of(rc).unwrap_or(MPI_ERR_OTHER);
    err(class, format!("the {what} callback of keyval 0x{:08x} returned error {rc}", keyval as u32))
}

/// Runs the delete callback of attribute `k` = `value` on `comm` (no-op for a NULL callback).
///
/// # Safety
/// Calls the application's callback, which must follow the MPI_Comm_delete_attr_function contract.
unsafe fn call_delete(u: &Instance, comm: MPI_Comm, k: u32, value: usize) -> MpiResult {
    let Some(kv) = attrs(u).comm.keyval(k) else { return Ok(()) };
    let Some(f) = kv.delete else { return Ok(()) };
    // SAFETY: the application registered `f` as a delete callback; it receives exactly the values
    // the application gave us (attribute value and extra_state), as the standard specifies.
    let rc = unsafe { f(comm, keyval_handle(k), value as *mut c_void, kv.extra_state as *mut c_void) };
    if rc != MPI_SUCCESS {
        return Err(callback_error("delete", keyval_handle(k), rc));
    }
    Ok(())
}

/// Deletes every attribute of `comm`, most recently set first, stopping at the first callback
/// that fails (that attribute and the older ones stay). Called by MPI_Comm_free before the
/// communicator goes away, and by MPI_Finalize for MPI_COMM_SELF then MPI_COMM_WORLD (MPI 4.1
/// section 11.2.4).
///
/// # Safety
/// Calls application callbacks (see `call_delete`).
pub unsafe fn delete_all(u: &Instance, comm: MPI_Comm) -> MpiResult {
    for (k, value) in attrs(u).comm.list(comm).into_iter().rev() {
        // SAFETY: the callback is the application's (this function's contract).
        unsafe { call_delete(u, comm, k, value)? };
        attrs(u).comm.remove(comm, k);
    }
    Ok(())
}

/// MPI_Comm_dup's attribute step (MPI 4.1 section 7.7.2): each attribute of `old` whose copy
/// callback sets the flag is set on `new` with the value the callback produced. If a callback
/// fails, the attributes already copied are deleted again and the error is returned (the caller
/// then frees `new`).
///
/// # Safety
/// Calls application callbacks (copy and, on failure, delete).
pub unsafe fn copy_all(u: &Instance, old: MPI_Comm, new: MPI_Comm) -> MpiResult {
    for (k, value) in attrs(u).comm.list(old) {
        let Some(kv) = attrs(u).comm.keyval(k) else { continue };
        let Some(f) = kv.copy else { continue };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: the application registered `f` as a copy callback; `out` and `flag` are valid
        // locals it may write (a `void *` and an `int`), the other arguments are its own values.
        let rc = unsafe { f(old, keyval_handle(k), kv.extra_state as *mut c_void, value as *mut c_void, &mut out as *mut *mut c_void as *mut c_void, &mut flag) };
        if rc != MPI_SUCCESS {
            let e = callback_error("copy", keyval_handle(k), rc);
            // The copies made so far get their delete callbacks; whatever remains is dropped
            // because the new communicator's handle is about to be reused.
            // SAFETY: this function's contract (the delete callbacks are the application's).
            let _ = unsafe { delete_all(u, new) };
            attrs(u).comm.clear(new);
            return Err(e);
        }
        if flag != 0 {
            attrs(u).comm.put(new, k, out as usize);
        }
    }
    Ok(())
}

/// MPI_Comm_dup / MPI_Comm_dup_with_info: the new communicator with its parent's attributes
/// copied; if a copy callback fails the new communicator is freed and the dup fails with its error.
///
/// # Safety
/// Calls application callbacks (see `copy_all`).
pub unsafe fn dup_with_attrs(u: &'static Instance, comm: MPI_Comm, parent: &crate::comm::Comm) -> MpiResult<MPI_Comm> {
    // SAFETY: the callbacks are the application's (this function's contract).
    unsafe { dup_with_attrs_tagged(u, comm, parent, crate::coll::TAG_ALLREDUCE) }
}

/// `dup_with_attrs` with the context agreement on `tag` (MPI_Comm_idup).
///
/// # Safety
/// As `dup_with_attrs`.
pub unsafe fn dup_with_attrs_tagged(u: &'static Instance, comm: MPI_Comm, parent: &crate::comm::Comm, tag: i32) -> MpiResult<MPI_Comm> {
    let new = crate::construct::intra::dup_tagged(u, parent, tag)?.map_or(MPI_COMM_NULL, check::comm_handle);
    if new != MPI_COMM_NULL {
        // SAFETY: the callbacks are the application's (this function's contract).
        if let Err(e) = unsafe { copy_all(u, comm, new) } {
            crate::coll::remove_comm(u, handle_index(new));
            return Err(e);
        }
    }
    Ok(new)
}

/// MPI_Comm_get_attr / MPI_Attr_get.
///
/// # Safety
/// `attribute_val` and `flag`, when not NULL, point to a `void *` and an `int` the caller owns.
unsafe fn get_attr(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> MpiResult {
    let u = check::universe()?;
    check::comm(u, comm)?;
    if flag.is_null() || attribute_val.is_null() {
        return Err(err(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    }
    let v = values(u.rank, || Predefined {
        tag_ub: MPI_TAG_UB_VALUE,
        host: MPI_PROC_NULL,
        // Every rank can do I/O.
        io: MPI_ANY_SOURCE,
        // MPI_Wtime counts from each process's first MPI call, so clocks are not synchronised.
        wtime_is_global: 0,
        universe_size: u.seg.universe_size() as c_int,
        // A spawned rank's command index in MPI_Comm_spawn_multiple (0 for MPI_Comm_spawn), a first
        // rank's segment of an MPMD command line.
        appnum: crate::runtime::pmi::client().map(|p| p.appnum()).unwrap_or_else(|| crate::runtime::mpmd::appnum(u.rank, u.seg.nranks()) as c_int),
    });
    // The predefined attributes are pointers to their values; a user attribute is its value.
    let found: Option<*const c_void> = match keyval {
        KEY_TAG_UB => Some(&v.tag_ub as *const c_int as *const c_void),
        KEY_HOST => Some(&v.host as *const c_int as *const c_void),
        KEY_IO => Some(&v.io as *const c_int as *const c_void),
        KEY_WTIME_IS_GLOBAL => Some(&v.wtime_is_global as *const c_int as *const c_void),
        KEY_UNIVERSE_SIZE => Some(&v.universe_size as *const c_int as *const c_void),
        // Follows MPI_Add_error_class / MPI_Add_error_code.
        KEY_LASTUSEDCODE => Some(crate::ffi::error_codes::last_used_code().as_ptr() as *const c_void),
        KEY_APPNUM => Some(&v.appnum as *const c_int as *const c_void),
        _ if is_predefined(keyval) => return Err(err(MPI_ERR_KEYVAL, format!("keyval 0x{:08x} is not a predefined communicator attribute oxmpi knows", keyval as u32))),
        _ => {
            let k = keyval_in_use(u, keyval)?;
            attrs(u).comm.get(comm, k).map(|value| value as *const c_void)
        }
    };
    // SAFETY: both checked non-NULL above; the caller passes the address of a `void *` and of an
    // `int` (this function's contract).
    unsafe {
        if let Some(p) = found {
            *(attribute_val as *mut *const c_void) = p;
        }
        *flag = found.is_some() as c_int;
    }
    Ok(())
}

/// MPI_Comm_set_attr / MPI_Attr_put.
///
/// # Safety
/// May call the application's delete callback on the old value.
unsafe fn set_attr(comm: MPI_Comm, keyval: c_int, value: *mut c_void) -> MpiResult {
    let u = check::universe()?;
    check::comm(u, comm)?;
    let k = user_keyval(u, keyval)?;
    // Replacing a value deletes the old one first (MPI 4.1 section 7.7.3); if that fails the
    // attribute keeps its old value.
    if let Some(old) = attrs(u).comm.get(comm, k) {
        // SAFETY: the callback is the application's (this function's contract).
        unsafe { call_delete(u, comm, k, old)? };
    }
    attrs(u).comm.put(comm, k, value as usize);
    Ok(())
}

/// MPI_Comm_delete_attr / MPI_Attr_delete.
///
/// # Safety
/// Calls the application's delete callback.
unsafe fn delete_attr(comm: MPI_Comm, keyval: c_int) -> MpiResult {
    let u = check::universe()?;
    check::comm(u, comm)?;
    let k = keyval_in_use(u, keyval)?;
    // Deleting an attribute that is not set does nothing (as MPICH).
    if let Some(old) = attrs(u).comm.get(comm, k) {
        // SAFETY: the callback is the application's (this function's contract).
        unsafe { call_delete(u, comm, k, old)? };
        attrs(u).comm.remove(comm, k);
    }
    Ok(())
}

/// MPI_Comm_create_keyval / MPI_Keyval_create.
///
/// # Safety
/// `keyval`, when not NULL, points to an `int` the caller owns.
unsafe fn create_keyval(copy: Option<MPI_Comm_copy_attr_function>, delete: Option<MPI_Comm_delete_attr_function>, keyval: *mut c_int, extra_state: *mut c_void) -> MpiResult {
    let u = check::universe()?;
    let keyval = out(keyval, "comm_keyval")?;
    let h = keyval_handle(attrs(u).comm.create_keyval(copy, delete, extra_state as usize));
    // SAFETY: checked non-NULL above; the caller passes an int for the keyval (contract).
    unsafe { *keyval = h };
    Ok(())
}

/// MPI_Comm_free_keyval / MPI_Keyval_free.
///
/// # Safety
/// `keyval`, when not NULL, points to an `int` the caller owns.
unsafe fn free_keyval(keyval: *mut c_int) -> MpiResult {
    let u = check::universe()?;
    let keyval = out(keyval, "comm_keyval")?;
    // SAFETY: checked non-NULL above; the caller passes its keyval, an int (contract).
    let k = user_keyval(u, unsafe { *keyval })?;
    // Attributes still set with it keep working and get their delete callback later.
    attrs(u).comm.free_keyval(k);
    // SAFETY: as above; the keyval argument is in-out.
    unsafe { *keyval = MPI_KEYVAL_INVALID };
    Ok(())
}

export! {
    fn MPI_Comm_get_attr / PMPI_Comm_get_attr (comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on comm comm => {
        // SAFETY: the caller passes the address of a `void *` and of an int (or NULL, rejected).
        unsafe { get_attr(comm, comm_keyval, attribute_val, flag) }
    }
    fn MPI_Attr_get / PMPI_Attr_get (comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on comm comm => {
        // SAFETY: the caller passes the address of a `void *` and of an int (or NULL, rejected).
        unsafe { get_attr(comm, keyval, attribute_val, flag) }
    }
    fn MPI_Comm_set_attr / PMPI_Comm_set_attr (comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void) on comm comm => {
        // SAFETY: the delete callback called, if any, is the application's.
        unsafe { set_attr(comm, comm_keyval, attribute_val) }
    }
    fn MPI_Attr_put / PMPI_Attr_put (comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void) on comm comm => {
        // SAFETY: the delete callback called, if any, is the application's.
        unsafe { set_attr(comm, keyval, attribute_val) }
    }
    fn MPI_Comm_delete_attr / PMPI_Comm_delete_attr (comm: MPI_Comm, comm_keyval: c_int) on comm comm => {
        // SAFETY: the delete callback called, if any, is the application's.
        unsafe { delete_attr(comm, comm_keyval) }
    }
    fn MPI_Attr_delete / PMPI_Attr_delete (comm: MPI_Comm, keyval: c_int) on comm comm => {
        // SAFETY: the delete callback called, if any, is the application's.
        unsafe { delete_attr(comm, keyval) }
    }
    fn MPI_Comm_create_keyval / PMPI_Comm_create_keyval (comm_copy_attr_fn: Option<MPI_Comm_copy_attr_function>, comm_delete_attr_fn: Option<MPI_Comm_delete_attr_function>, comm_keyval: *mut c_int, extra_state: *mut c_void) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes an int for the keyval (or NULL, rejected).
        unsafe { create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state) }
    }
    fn MPI_Keyval_create / PMPI_Keyval_create (copy_fn: Option<MPI_Copy_function>, delete_fn: Option<MPI_Delete_function>, keyval: *mut c_int, extra_state: *mut c_void) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes an int for the keyval (or NULL, rejected).
        unsafe { create_keyval(copy_fn, delete_fn, keyval, extra_state) }
    }
    fn MPI_Comm_free_keyval / PMPI_Comm_free_keyval (comm_keyval: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes its keyval, an int (or NULL, rejected).
        unsafe { free_keyval(comm_keyval) }
    }
    fn MPI_Keyval_free / PMPI_Keyval_free (keyval: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes its keyval, an int (or NULL, rejected).
        unsafe { free_keyval(keyval) }
    }

    fn MPI_Add_error_class / PMPI_Add_error_class (errorclass: *mut c_int) on comm MPI_COMM_SELF => {
        let errorclass = out(errorclass, "errorclass")?;
        let class = crate::ffi::error_codes::add_error_class()?;
        // SAFETY: checked non-NULL above; the caller passes an int for the new class.
        unsafe { *errorclass = class };
        Ok(())
    }
    fn MPI_Add_error_code / PMPI_Add_error_code (errorclass: c_int, errorcode: *mut c_int) on comm MPI_COMM_SELF => {
        let errorcode = out(errorcode, "errorcode")?;
        let code = crate::ffi::error_codes::add_error_code(errorclass)?;
        // SAFETY: checked non-NULL above; the caller passes an int for the new code.
        unsafe { *errorcode = code };
        Ok(())
    }
    fn MPI_Add_error_string / PMPI_Add_error_string (errorcode: c_int, string: *const c_char) on comm MPI_COMM_SELF => {
        // SAFETY: the standard requires a NUL-terminated string (NULL is rejected).
        let s = unsafe { c_str(string, "string")? }.to_string_lossy();
        crate::ffi::error_codes::add_error_string(errorcode, &s)
    }
    fn MPI_Remove_error_class / PMPI_Remove_error_class (errorclass: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_class(errorclass)
    }
    fn MPI_Remove_error_code / PMPI_Remove_error_code (errorcode: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_code(errorcode)
    }
    fn MPI_Remove_error_string / PMPI_Remove_error_string (errorcode: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_string(errorcode)
    }
    // MPICH 4.1's names for the same calls.
    fn MPIX_Delete_error_class / PMPIX_Delete_error_class (errorclass: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_class(errorclass)
    }
    fn MPIX_Delete_error_code / PMPIX_Delete_error_code (errorcode: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_code(errorcode)
    }
    fn MPIX_Delete_error_string / PMPIX_Delete_error_string (errorcode: c_int) on comm MPI_COMM_SELF => {
        crate::ffi::error_codes::remove_error_string(errorcode)
    }
}
