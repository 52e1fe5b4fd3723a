//! Attributes on windows (MPI 4.1 section 7.7.3): the predefined MPI_WIN_BASE, MPI_WIN_SIZE,
//! MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL (section 12.2.6), and user keyvals
//! whose delete callbacks run at MPI_Win_free (windows cannot be duplicated, so copy callbacks
//! are kept but never called).
//!
//! Same bookkeeping as communicator attributes (`crate::comm::attr::Attrs`, one registry per rank
//! in `Instance::win_attrs`), keyed by window handle. Callbacks run with no lock held.
//! Window keyval handles carry MPICH's window object bits (8 << 22) in the index, so a window
//! keyval given to a communicator or datatype call (or the reverse) is an invalid keyval.
use crate::ffi::check;
use crate::ffi::pointer_args::out;
use crate::ffi::rma::win_of;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::instance::Instance;
use std::os::raw::{c_int, c_void};

pub(crate) const WIN_KEYVAL_BITS: u32 = 8 << 22;

const KEY_WIN_BASE: c_int = MPI_WIN_BASE;
const KEY_WIN_SIZE: c_int = MPI_WIN_SIZE;
const KEY_WIN_DISP_UNIT: c_int = MPI_WIN_DISP_UNIT;
const KEY_WIN_CREATE_FLAVOR: c_int = MPI_WIN_CREATE_FLAVOR;
const KEY_WIN_MODEL: c_int = MPI_WIN_MODEL;

fn keyval_handle(index: u32) -> c_int {
    make_handle(HANDLE_KIND_DIRECT, OBJ_KEYVAL, index | WIN_KEYVAL_BITS)
}

/// The registry index of a valid (created, not freed) window keyval handle.
fn user_win_keyval(u: &Instance, keyval: c_int) -> MpiResult<u32> {
    let i = handle_index(keyval);
    if keyval == MPI_KEYVAL_INVALID || handle_kind(keyval) != HANDLE_KIND_DIRECT || handle_object(keyval) != OBJ_KEYVAL || i & WIN_KEYVAL_BITS != WIN_KEYVAL_BITS {
        return Err(err(MPI_ERR_KEYVAL, format!("invalid window keyval 0x{:08x} (not made by MPI_Win_create_keyval)", keyval as u32)));
    }
    let k = i & !WIN_KEYVAL_BITS;
    if crate::ffi::comm::attr::attrs(u).wins.live_keyval(k).is_none() {
        return Err(err(MPI_ERR_KEYVAL, format!("invalid window keyval 0x{:08x} (freed)", keyval as u32)));
    }
    Ok(k)
}

/// Runs the delete callback of attribute `k` = `value` on `win` (no-op for a NULL callback).
///
/// # Safety
/// Calls the application's callback (MPI_Win_delete_attr_function contract).
unsafe fn call_delete(u: &Instance, win: MPI_Win, k: u32, value: usize) -> MpiResult {
    let Some(kv) = crate::ffi::comm::attr::attrs(u).wins.keyval(k) else { return Ok(()) };
    let Some(f) = kv.delete else { return Ok(()) };
    // SAFETY: the application registered `f` as a window delete callback; it receives the values
    // it gave us (attribute value, extra_state), as the standard specifies.
    let rc = unsafe { f(win, keyval_handle(k), value as *mut c_void, kv.extra_state as *mut c_void) };
    if rc != MPI_SUCCESS {
        return Err(crate::ffi::comm::attr::callback_error("window delete", keyval_handle(k), rc));
    }
    Ok(())
}

/// MPI_Win_free's attribute step: deletes every attribute of `win`, most recent first, stopping
/// at the first failing callback.
///
/// # Safety
/// Calls application callbacks.
pub unsafe fn delete_win_attrs(u: &Instance, win: MPI_Win) -> MpiResult {
    for (k, value) in crate::ffi::comm::attr::attrs(u).wins.list(win).into_iter().rev() {
        // SAFETY: per this function's contract.
        unsafe { call_delete(u, win, k, value)? };
        crate::ffi::comm::attr::attrs(u).wins.remove(win, k);
    }
    Ok(())
}

export! {
    fn MPI_Win_create_keyval / PMPI_Win_create_keyval (win_copy_attr_fn: Option<MPI_Win_copy_attr_function>, win_delete_attr_fn: Option<MPI_Win_delete_attr_function>, win_keyval: *mut c_int, extra_state: *mut c_void) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let win_keyval = out(win_keyval, "win_keyval")?;
        let h = keyval_handle(crate::ffi::comm::attr::attrs(u).wins.create_keyval(win_copy_attr_fn, win_delete_attr_fn, extra_state as usize));
        // SAFETY: checked non-NULL above; the caller passes the address of an `int`.
        unsafe { *win_keyval = h };
        Ok(())
    }

    fn MPI_Win_free_keyval / PMPI_Win_free_keyval (win_keyval: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let win_keyval = out(win_keyval, "win_keyval")?;
        // SAFETY: checked non-NULL above; the caller passes the address of its keyval, an `int`.
        let k = user_win_keyval(u, unsafe { *win_keyval })?;
        // Attributes still set with it keep working and get their delete callback later.
        crate::ffi::comm::attr::attrs(u).wins.free_keyval(k);
        // SAFETY: as above; the keyval argument is in-out.
        unsafe { *win_keyval = MPI_KEYVAL_INVALID };
        Ok(())
    }
}

export! {
    fn MPI_Win_set_attr / PMPI_Win_set_attr (win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void) on win win => {
        let (u, _) = win_of(win)?;
        let k = user_win_keyval(u, win_keyval)?;
        // Replacing a value deletes the old one first; if that fails the old value stays.
        if let Some(old) = crate::ffi::comm::attr::attrs(u).wins.get(win, k) {
            // SAFETY: the callback is the application's, registered with its keyval.
            unsafe { call_delete(u, win, k, old)? };
        }
        crate::ffi::comm::attr::attrs(u).wins.put(win, k, attribute_val as usize);
        Ok(())
    }

    fn MPI_Win_get_attr / PMPI_Win_get_attr (win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on win win => {
        let (u, w) = win_of(win)?;
        if flag.is_null() || attribute_val.is_null() {
            return Err(err(MPI_ERR_ARG, "attribute_val or flag is NULL"));
        }
        // The predefined attributes: MPI_WIN_BASE is the base address itself, the others
        // pointers to their values (MPI 4.1 section 12.2.6), which live as long as the window.
        let found: Option<*const c_void> = match win_keyval {
            // Memory the window allocated with size 0 has no address (as MPI_Win_allocate said).
            KEY_WIN_BASE if w.size_attr == 0 && matches!(w.flavor, crate::osc::window::Flavor::Allocate | crate::osc::window::Flavor::Shared) => Some(std::ptr::null()),
            KEY_WIN_BASE => Some(w.base as *const c_void),
            KEY_WIN_SIZE => Some(&w.size_attr as *const isize as *const c_void),
            KEY_WIN_DISP_UNIT => Some(&w.disp_unit_attr as *const i32 as *const c_void),
            KEY_WIN_CREATE_FLAVOR => Some(&w.flavor_attr as *const i32 as *const c_void),
            KEY_WIN_MODEL => Some(&w.model_attr as *const i32 as *const c_void),
            _ => {
                let k = user_win_keyval(u, win_keyval)?;
                crate::ffi::comm::attr::attrs(u).wins.get(win, k).map(|v| v as *const c_void)
            }
        };
        // SAFETY: both checked non-NULL above; the caller passes the address of a `void *` and
        // of an `int`.
        unsafe {
            if let Some(v) = found {
                *(attribute_val as *mut *const c_void) = v;
            }
            *flag = found.is_some() as c_int;
        }
        Ok(())
    }

    fn MPI_Win_delete_attr / PMPI_Win_delete_attr (win: MPI_Win, win_keyval: c_int) on win win => {
        let (u, _) = win_of(win)?;
        let k = user_win_keyval(u, win_keyval)?;
        if let Some(old) = crate::ffi::comm::attr::attrs(u).wins.get(win, k) {
            // SAFETY: the callback is the application's, registered with its keyval.
            unsafe { call_delete(u, win, k, old)? };
            crate::ffi::comm::attr::attrs(u).wins.remove(win, k);
        }
        Ok(())
    }
}
