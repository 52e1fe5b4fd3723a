//! The MPI_T boundary (MPI 4.1 chapter 15): pointer checks, handle conversion, string rules; the
//! engine is `crate::mpit`. MPI_T calls return their error code and never call error handlers,
//! so they use `export!`'s `on tool` form.
//!
//! The SAFETY comments below rely on the standard's rules for MPI_T arguments: an out-argument is
//! NULL (then `out` skips it, or `need` rejects it) or points to the type its prototype gives, and
//! a string buffer holds `*len` chars (section 15.3.3, `strings::put`).
use crate::abi::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info, MPI_T_cb_safety, MPI_T_cvar_handle, MPI_T_enum, MPI_T_event_cb_function, MPI_T_event_dropped_cb_function, MPI_T_event_free_cb_function, MPI_T_event_instance, MPI_T_event_registration, MPI_T_pvar_handle, MPI_T_pvar_session, MPI_T_source_order, MPI_THREAD_MULTIPLE};
use crate::abi::datatypes::basic_handle;
use crate::datatype::basic::Basic;
use crate::error::ErrorClass;
use crate::mpit::{self, categories, cvars, enums, pvars, session, strings, TResult, *};
use crate::export;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// Stores `v` through an optional out pointer.
///
/// # Safety
/// `p` is null or valid for a write.
unsafe fn out<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-null and valid (caller contract).
        unsafe { p.write(v) };
    }
}

/// A required pointer argument.
fn need<T>(p: *const T) -> TResult {
    if p.is_null() {
        Err(ErrorClass::TInvalid)
    } else {
        Ok(())
    }
}

/// A name argument.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn name_arg<'a>(p: *const c_char) -> TResult<&'a str> {
    need(p)?;
    // SAFETY: non-null NUL-terminated string (caller contract).
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| ErrorClass::TInvalidName)
}

fn session_id(s: MPI_T_pvar_session) -> TResult<usize> {
    if s.is_null() {
        Err(ErrorClass::TInvalidSession)
    } else {
        Ok(s as usize)
    }
}

/// A pvar handle: None for MPI_T_PVAR_ALL_HANDLES.
fn handle_id(h: MPI_T_pvar_handle) -> TResult<Option<usize>> {
    if h.is_null() {
        Err(ErrorClass::TInvalidHandle)
    } else if h == crate::ffi::data_symbols::MPI_T_PVAR_ALL_HANDLES.get() {
        Ok(None)
    } else {
        Ok(Some(h as usize))
    }
}

fn one_handle(h: MPI_T_pvar_handle) -> TResult<usize> {
    handle_id(h)?.ok_or(ErrorClass::TInvalidHandle)
}

/// An `MPI_T_enum` is the enumeration's index plus one (null is MPI_T_ENUM_NULL).
fn enum_handle(i: Option<usize>) -> MPI_T_enum {
    i.map_or(std::ptr::null_mut(), |i| (i + 1) as MPI_T_enum)
}

fn enum_of(h: MPI_T_enum) -> TResult<&'static enums::EnumType> {
    enums::get((h as usize).checked_sub(1).ok_or(ErrorClass::TInvalidHandle)?)
}

/// A cvar handle is the cvar index plus one.
fn cvar_of(h: MPI_T_cvar_handle) -> TResult<&'static cvars::Cvar> {
    (h as usize).checked_sub(1).and_then(|i| cvars::all().get(i)).ok_or(ErrorClass::TInvalidHandle)
}

/// Fills `indices` with at most `len` entries of `v`.
///
/// # Safety
/// `indices` has `len` ints when `len > 0`.
unsafe fn put_indices(v: &[usize], len: c_int, indices: *mut c_int) -> TResult {
    if len < 0 {
        return Err(ErrorClass::TInvalid);
    }
    let n = v.len().min(len as usize);
    if n > 0 {
        need(indices)?;
    }
    for (k, &x) in v.iter().take(n).enumerate() {
        // SAFETY: `indices` has `len >= n` ints (caller contract).
        unsafe { *indices.add(k) = x as c_int };
    }
    Ok(())
}

/// Resolves a pvar's object: the communicator behind `obj` (an `MPI_Comm*`) for communicator
/// variables, the calling rank for the others.
///
/// # Safety
/// `obj` is null or points to an `MPI_Comm` for communicator-bound variables.
unsafe fn bind(p: &pvars::Pvar, obj: *mut c_void) -> TResult<session::Bound> {
    let u = crate::instance::get().ok();
    let me = u.map(|u| (u.rank, u.size));
    let gauges = u.map(|u| &u.engine.gauges);
    if p.bind != Bind::Comm {
        return Ok(session::Bound { me, context: 0, members: vec![], gauges });
    }
    need(obj)?;
    // The communicator handle needs MPI initialised (and not finalised).
    let u = u.ok_or(ErrorClass::TInvalid)?;
    // SAFETY: for a communicator variable `obj` is an `MPI_Comm*` (MPI 4.1 section 15.3.7).
    let h = unsafe { *(obj as *const MPI_Comm) };
    let c = crate::ffi::check::comm(u, h).map_err(|_| ErrorClass::TInvalidHandle)?;
    Ok(session::Bound { me, context: c.context, members: c.group.clone(), gauges })
}

export! {
    fn MPI_T_init_thread / PMPI_T_init_thread (required: c_int, provided: *mut c_int) on tool => {
        mpit::init();
        // SAFETY: `provided` is NULL (skipped) or an int.
        unsafe { out(provided, MPI_THREAD_MULTIPLE) };
        Ok(())
    }

    fn MPI_T_finalize / PMPI_T_finalize () on tool => {
        mpit::finalize()
    }

    // ---------------------------------------------------------------- enums

    fn MPI_T_enum_get_info / PMPI_T_enum_get_info (enumtype: MPI_T_enum, num: *mut c_int, name: *mut c_char, name_len: *mut c_int) on tool => {
        ready()?;
        let e = enum_of(enumtype)?;
        // SAFETY: `num` is NULL (skipped) or an int; `name` holds `*name_len` chars.
        unsafe {
            out(num, e.items.len() as c_int);
            strings::put(&e.name, name, name_len);
        }
        Ok(())
    }

    fn MPI_T_enum_get_item / PMPI_T_enum_get_item (enumtype: MPI_T_enum, indx: c_int, value: *mut c_int, name: *mut c_char, name_len: *mut c_int) on tool => {
        ready()?;
        let e = enum_of(enumtype)?;
        let (v, n) = &e.items[mpit::index(indx, e.items.len()).map_err(|_| ErrorClass::TInvalidItem)?];
        // SAFETY: `value` is NULL (skipped) or an int; `name` holds `*name_len` chars.
        unsafe {
            out(value, *v);
            strings::put(n, name, name_len);
        }
        Ok(())
    }

    // ---------------------------------------------------------------- control variables

    fn MPI_T_cvar_get_num / PMPI_T_cvar_get_num (num_cvar: *mut c_int) on tool => {
        ready()?;
        need(num_cvar)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_cvar, cvars::all().len() as c_int) };
        Ok(())
    }

    fn MPI_T_cvar_get_info / PMPI_T_cvar_get_info (cvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut MPI_T_enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int) on tool => {
        ready()?;
        let c = &cvars::all()[mpit::index(cvar_index, cvars::all().len())?];
        // SAFETY: each out-argument is NULL (skipped) or of its prototype's type; `name` and
        // `desc` hold `*name_len` and `*desc_len` chars.
        unsafe {
            strings::put(&c.name, name, name_len);
            out(verbosity, c.verbosity.mpich());
            out(datatype, basic_handle(cvars::DATATYPE));
            out(enumtype, enum_handle(c.enumtype));
            strings::put(&c.desc, desc, desc_len);
            out(bind, cvars::BIND.mpich());
            out(scope, c.scope.mpich());
        }
        Ok(())
    }

    fn MPI_T_cvar_get_index / PMPI_T_cvar_get_index (name: *const c_char, cvar_index: *mut c_int) on tool => {
        ready()?;
        need(cvar_index)?;
        // SAFETY: `name` is a NUL-terminated string (NULL is rejected).
        let i = cvars::get_index(unsafe { name_arg(name)? })? as c_int;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(cvar_index, i) };
        Ok(())
    }

    fn MPI_T_cvar_handle_alloc / PMPI_T_cvar_handle_alloc (cvar_index: c_int, obj_handle: *mut c_void, handle: *mut MPI_T_cvar_handle, count: *mut c_int) on tool => {
        ready()?;
        need(handle)?;
        need(count)?;
        let i = mpit::index(cvar_index, cvars::all().len())?;
        // SAFETY: both checked non-NULL above; the caller passes a handle and an int.
        unsafe {
            out(handle, (i + 1) as MPI_T_cvar_handle);
            out(count, 1);
        }
        Ok(())
    }

    fn MPI_T_cvar_handle_free / PMPI_T_cvar_handle_free (handle: *mut MPI_T_cvar_handle) on tool => {
        ready()?;
        need(handle)?;
        // SAFETY: checked non-NULL above; the caller passes its handle.
        cvar_of(unsafe { *handle })?;
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *handle = std::ptr::null_mut() };
        Ok(())
    }

    fn MPI_T_cvar_read / PMPI_T_cvar_read (handle: MPI_T_cvar_handle, buf: *mut c_void) on tool => {
        ready()?;
        let c = cvar_of(handle)?;
        need(buf)?;
        // SAFETY: checked non-NULL above; the buffer holds the variable's one int (count 1).
        unsafe { out(buf as *mut c_int, c.read()) };
        Ok(())
    }

    fn MPI_T_cvar_write / PMPI_T_cvar_write (handle: MPI_T_cvar_handle, buf: *const c_void) on tool => {
        ready()?;
        let c = cvar_of(handle)?;
        need(buf)?;
        // SAFETY: checked non-NULL above; the buffer holds the variable's one int (count 1).
        c.write(unsafe { *(buf as *const c_int) })
    }

    // ---------------------------------------------------------------- performance variables

    fn MPI_T_pvar_get_num / PMPI_T_pvar_get_num (num_pvar: *mut c_int) on tool => {
        ready()?;
        need(num_pvar)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_pvar, pvars::PVARS.len() as c_int) };
        Ok(())
    }

    fn MPI_T_pvar_get_info / PMPI_T_pvar_get_info (pvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, var_class: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut MPI_T_enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) on tool => {
        ready()?;
        let p = &pvars::PVARS[mpit::index(pvar_index, pvars::PVARS.len())?];
        let enumtype_value = enum_handle((p.source == pvars::Source::MonitoringState).then(enums::monitoring_state));
        // SAFETY: each out-argument is NULL (skipped) or of its prototype's type; `name` and
        // `desc` hold `*name_len` and `*desc_len` chars.
        unsafe {
            strings::put(p.name, name, name_len);
            out(verbosity, p.verbosity.mpich());
            out(var_class, p.class.mpich());
            out(datatype, basic_handle(p.datatype));
            out(enumtype, enumtype_value);
            strings::put(p.desc, desc, desc_len);
            out(bind, p.bind.mpich());
            out(readonly, p.readonly as c_int);
            out(continuous, p.continuous as c_int);
            out(atomic, p.atomic as c_int);
        }
        Ok(())
    }

    fn MPI_T_pvar_get_index / PMPI_T_pvar_get_index (name: *const c_char, var_class: c_int, pvar_index: *mut c_int) on tool => {
        ready()?;
        need(pvar_index)?;
        // SAFETY: `name` is a NUL-terminated string (NULL is rejected).
        let name = unsafe { name_arg(name)? };
        // A value that names no class matches no variable.
        let class = PvarClass::from_mpich(var_class).ok_or(ErrorClass::TInvalidName)?;
        let i = pvars::get_index(name, class)? as c_int;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(pvar_index, i) };
        Ok(())
    }

    fn MPI_T_pvar_session_create / PMPI_T_pvar_session_create (session: *mut MPI_T_pvar_session) on tool => {
        ready()?;
        need(session)?;
        let s = session::session_create()? as MPI_T_pvar_session;
        // SAFETY: checked non-NULL above; the caller passes a session handle to set.
        unsafe { *session = s };
        Ok(())
    }

    fn MPI_T_pvar_session_free / PMPI_T_pvar_session_free (session: *mut MPI_T_pvar_session) on tool => {
        ready()?;
        need(session)?;
        // SAFETY: checked non-NULL above; the caller passes its session handle.
        session::session_free(session_id(unsafe { *session })?)?;
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *session = std::ptr::null_mut() };
        Ok(())
    }

    fn MPI_T_pvar_handle_alloc / PMPI_T_pvar_handle_alloc (session: MPI_T_pvar_session, pvar_index: c_int, obj_handle: *mut c_void, handle: *mut MPI_T_pvar_handle, count: *mut c_int) on tool => {
        ready()?;
        let s = session_id(session)?;
        let i = mpit::index(pvar_index, pvars::PVARS.len())?;
        need(handle)?;
        need(count)?;
        // SAFETY: for a communicator variable `obj_handle` is NULL (rejected) or an MPI_Comm*.
        let b = unsafe { bind(&pvars::PVARS[i], obj_handle)? };
        let (h, n) = session::handle_alloc(s, i, b)?;
        // SAFETY: both checked non-NULL above; the caller passes a handle and an int.
        unsafe {
            *handle = h as MPI_T_pvar_handle;
            *count = n as c_int;
        }
        Ok(())
    }

    fn MPI_T_pvar_handle_free / PMPI_T_pvar_handle_free (session: MPI_T_pvar_session, handle: *mut MPI_T_pvar_handle) on tool => {
        ready()?;
        need(handle)?;
        // SAFETY: checked non-NULL above; the caller passes its handle.
        session::handle_free(session_id(session)?, one_handle(unsafe { *handle })?)?;
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *handle = std::ptr::null_mut() };
        Ok(())
    }

    fn MPI_T_pvar_start / PMPI_T_pvar_start (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) on tool => {
        ready()?;
        session::start_stop(session_id(session)?, handle_id(handle)?, true)
    }

    fn MPI_T_pvar_stop / PMPI_T_pvar_stop (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) on tool => {
        ready()?;
        session::start_stop(session_id(session)?, handle_id(handle)?, false)
    }

    fn MPI_T_pvar_read / PMPI_T_pvar_read (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void) on tool => {
        // SAFETY: `buf` holds the handle's count of elements of the variable's datatype.
        unsafe { read_into(session, handle, buf, false) }
    }

    fn MPI_T_pvar_readreset / PMPI_T_pvar_readreset (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void) on tool => {
        // SAFETY: `buf` holds the handle's count of elements of the variable's datatype.
        unsafe { read_into(session, handle, buf, true) }
    }

    fn MPI_T_pvar_write / PMPI_T_pvar_write (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *const c_void) on tool => {
        ready()?;
        let s = session_id(session)?;
        let h = one_handle(handle)?;
        let p = session::pvar_of(s, h)?;
        if p.readonly {
            return Err(ErrorClass::TPvarNoWrite);
        }
        need(buf)?;
        let w = if p.datatype == Basic::Char {
            // The flush variable takes a file name; an empty string (or, as Open MPI, a pointer
            // to a NULL pointer, whose first byte is 0) clears it.
            // SAFETY: checked non-NULL above; a char variable's buffer is a NUL-terminated string.
            session::Written::Name(unsafe { CStr::from_ptr(buf as *const c_char) }.to_string_lossy().into_owned())
        } else {
            // SAFETY: checked non-NULL above; the other variables hold one 8-byte value.
            session::Written::Value(unsafe { *(buf as *const u64) })
        };
        session::write(s, h, w)
    }

    fn MPI_T_pvar_reset / PMPI_T_pvar_reset (session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) on tool => {
        ready()?;
        session::reset(session_id(session)?, handle_id(handle)?)
    }

    // ---------------------------------------------------------------- categories

    fn MPI_T_category_get_num / PMPI_T_category_get_num (num_cat: *mut c_int) on tool => {
        ready()?;
        need(num_cat)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_cat, categories::all().len() as c_int) };
        Ok(())
    }

    fn MPI_T_category_get_info / PMPI_T_category_get_info (cat_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int) on tool => {
        ready()?;
        let c = &categories::all()[mpit::index(cat_index, categories::all().len())?];
        // SAFETY: each out-argument is NULL (skipped) or an int; `name` and `desc` hold
        // `*name_len` and `*desc_len` chars.
        unsafe {
            strings::put(c.name, name, name_len);
            strings::put(c.desc, desc, desc_len);
            out(num_cvars, c.cvars.len() as c_int);
            out(num_pvars, c.pvars.len() as c_int);
            out(num_categories, 0);
        }
        Ok(())
    }

    fn MPI_T_category_get_index / PMPI_T_category_get_index (name: *const c_char, cat_index: *mut c_int) on tool => {
        ready()?;
        need(cat_index)?;
        // SAFETY: `name` is a NUL-terminated string (NULL is rejected).
        let i = categories::get_index(unsafe { name_arg(name)? })? as c_int;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(cat_index, i) };
        Ok(())
    }

    fn MPI_T_category_get_cvars / PMPI_T_category_get_cvars (cat_index: c_int, len: c_int, indices: *mut c_int) on tool => {
        ready()?;
        let c = &categories::all()[mpit::index(cat_index, categories::all().len())?];
        // SAFETY: `indices` holds `len` ints.
        unsafe { put_indices(&c.cvars, len, indices) }
    }

    fn MPI_T_category_get_pvars / PMPI_T_category_get_pvars (cat_index: c_int, len: c_int, indices: *mut c_int) on tool => {
        ready()?;
        let c = &categories::all()[mpit::index(cat_index, categories::all().len())?];
        // SAFETY: `indices` holds `len` ints.
        unsafe { put_indices(&c.pvars, len, indices) }
    }

    fn MPI_T_category_get_categories / PMPI_T_category_get_categories (cat_index: c_int, len: c_int, indices: *mut c_int) on tool => {
        ready()?;
        mpit::index(cat_index, categories::all().len())?;
        // SAFETY: `indices` holds `len` ints (none is written).
        unsafe { put_indices(&[], len, indices) }
    }

    fn MPI_T_category_get_num_events / PMPI_T_category_get_num_events (cat_index: c_int, num_events: *mut c_int) on tool => {
        ready()?;
        mpit::index(cat_index, categories::all().len())?;
        need(num_events)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_events, 0) };
        Ok(())
    }

    fn MPI_T_category_get_events / PMPI_T_category_get_events (cat_index: c_int, len: c_int, indices: *mut c_int) on tool => {
        ready()?;
        mpit::index(cat_index, categories::all().len())?;
        // SAFETY: `indices` holds `len` ints (none is written).
        unsafe { put_indices(&[], len, indices) }
    }

    fn MPI_T_category_changed / PMPI_T_category_changed (update_number: *mut c_int) on tool => {
        ready()?;
        need(update_number)?;
        // The variables and categories never change after start-up.
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(update_number, 0) };
        Ok(())
    }

    // ---------------------------------------------------------------- events: none are defined

    fn MPI_T_source_get_num / PMPI_T_source_get_num (num_sources: *mut c_int) on tool => {
        ready()?;
        need(num_sources)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_sources, 0) };
        Ok(())
    }

    fn MPI_T_source_get_info / PMPI_T_source_get_info (source_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, ordering: *mut MPI_T_source_order, ticks_per_second: *mut MPI_Count, max_ticks: *mut MPI_Count, info: *mut MPI_Info) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidIndex)
    }

    fn MPI_T_source_get_timestamp / PMPI_T_source_get_timestamp (source_index: c_int, timestamp: *mut MPI_Count) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidIndex)
    }

    fn MPI_T_event_get_num / PMPI_T_event_get_num (num_events: *mut c_int) on tool => {
        ready()?;
        need(num_events)?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { out(num_events, 0) };
        Ok(())
    }

    fn MPI_T_event_get_info / PMPI_T_event_get_info (event_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, array_of_datatypes: *mut MPI_Datatype, array_of_displacements: *mut MPI_Aint, num_elements: *mut c_int, enumtype: *mut MPI_T_enum, info: *mut MPI_Info, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidIndex)
    }

    fn MPI_T_event_get_index / PMPI_T_event_get_index (name: *const c_char, event_index: *mut c_int) on tool => {
        ready()?;
        // SAFETY: `name` is a NUL-terminated string (NULL is rejected).
        unsafe { name_arg(name)? };
        Err(ErrorClass::TInvalidName)
    }

    fn MPI_T_event_handle_alloc / PMPI_T_event_handle_alloc (event_index: c_int, obj_handle: *mut c_void, info: MPI_Info, event_registration: *mut MPI_T_event_registration) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidIndex)
    }

    fn MPI_T_event_handle_free / PMPI_T_event_handle_free (event_registration: MPI_T_event_registration, user_data: *mut c_void, free_cb_function: Option<MPI_T_event_free_cb_function>) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_handle_get_info / PMPI_T_event_handle_get_info (event_registration: MPI_T_event_registration, info_used: *mut MPI_Info) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_handle_set_info / PMPI_T_event_handle_set_info (event_registration: MPI_T_event_registration, info: MPI_Info) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_register_callback / PMPI_T_event_register_callback (event_registration: MPI_T_event_registration, cb_safety: MPI_T_cb_safety, info: MPI_Info, user_data: *mut c_void, event_cb_function: Option<MPI_T_event_cb_function>) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_callback_get_info / PMPI_T_event_callback_get_info (event_registration: MPI_T_event_registration, cb_safety: MPI_T_cb_safety, info_used: *mut MPI_Info) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_callback_set_info / PMPI_T_event_callback_set_info (event_registration: MPI_T_event_registration, cb_safety: MPI_T_cb_safety, info: MPI_Info) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_set_dropped_handler / PMPI_T_event_set_dropped_handler (event_registration: MPI_T_event_registration, dropped_cb_function: Option<MPI_T_event_dropped_cb_function>) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_read / PMPI_T_event_read (event_instance: MPI_T_event_instance, element_index: c_int, buffer: *mut c_void) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_copy / PMPI_T_event_copy (event_instance: MPI_T_event_instance, buffer: *mut c_void) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_get_timestamp / PMPI_T_event_get_timestamp (event_instance: MPI_T_event_instance, event_timestamp: *mut MPI_Count) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }

    fn MPI_T_event_get_source / PMPI_T_event_get_source (event_instance: MPI_T_event_instance, source_index: *mut c_int) on tool => {
        ready()?;
        Err(ErrorClass::TInvalidHandle)
    }
}

/// MPI_T_pvar_read / readreset: stores `count` values of the variable's type at `buf`.
///
/// # Safety
/// `buf` holds the handle's count of elements of the variable's datatype.
unsafe fn read_into(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void, reset: bool) -> TResult {
    ready()?;
    let s = session_id(session)?;
    let h = one_handle(handle)?;
    let (v, p) = session::read(s, h, reset)?;
    if !v.is_empty() {
        need(buf)?;
        if p.datatype == Basic::Int {
            for (k, &x) in v.iter().enumerate() {
                // SAFETY: the buffer holds `count` ints (caller contract; count = v.len()).
                unsafe { *(buf as *mut c_int).add(k) = x as c_int };
            }
        } else {
            // SAFETY: the buffer holds `count` 8-byte values (unsigned long long, or double
            // carried as its bits) (caller contract; count = v.len()).
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), buf as *mut u64, v.len()) };
        }
    }
    Ok(())
}
