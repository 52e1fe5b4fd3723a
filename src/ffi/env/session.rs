//! MPI-4 sessions (MPI 4.1 section 11.3): MPI_Session_* and MPI_Group_from_session_pset, over
//! `crate::session` and `instance`. A session handle is `DIRECT | SESSION | index` into the rank's
//! session table (MPI_SESSION_NULL is the INVALID kind of the same object, as in MPICH).
//!
//! Errors go to the session's error handler (`on session`); an invalid session's to
//! MPI_COMM_SELF's, as every call without a valid object in oxmpi. MPI_Session_init's own errors go
//! to the handler it is given (`on handler`). Error classes follow MPICH 4: an invalid session is
//! MPI_ERR_SESSION, an unknown process set name MPI_ERR_ARG.
use crate::abi::*;
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use crate::ffi::env::errhandler::{create_user_handler, deliver, is_valid_errhandler};
use crate::ffi::pointer_args::{c_str, out};
use crate::instance::{self, Instance};
use crate::runtime::thread_level::ThreadLevel;
use crate::session::{pset_info, pset_members, Session, PSETS};
use std::os::raw::{c_char, c_int};
use std::sync::Arc;

fn handle(index: usize) -> MPI_Session {
    make_handle(HANDLE_KIND_DIRECT, OBJ_SESSION, index as u32)
}

/// The table index handle `h` would have, or MPI_ERR_SESSION.
fn index(h: MPI_Session) -> MpiResult<usize> {
    match h {
        MPI_SESSION_NULL => Err(err(MPI_ERR_SESSION, "invalid session: MPI_SESSION_NULL")),
        _ if handle_kind(h) == HANDLE_KIND_DIRECT && handle_object(h) == OBJ_SESSION => Ok(handle_index(h) as usize),
        _ => Err(err(MPI_ERR_SESSION, format!("invalid session: 0x{:08x} is not a session handle", h as u32))),
    }
}

/// The rank's instance and the live session `h`; MPI_ERR_SESSION when no session is open at all.
fn lookup(h: MPI_Session) -> MpiResult<(&'static Instance, Arc<Session>)> {
    let i = index(h)?;
    let u = instance::get().map_err(|_| err(MPI_ERR_SESSION, format!("invalid session 0x{:08x}: no session is open", h as u32)))?;
    let s = u.sessions.get(i).ok_or_else(|| err(MPI_ERR_SESSION, format!("invalid session 0x{:08x} (finalized, or never initialized by this rank)", h as u32)))?;
    Ok((u, s))
}

/// The table index of the live session `h` (MPI_ERR_SESSION if it is none).
pub(in crate::ffi) fn live_index(h: MPI_Session) -> MpiResult<usize> {
    lookup(h)?;
    index(h)
}

/// The error path of `on session`: `e`, raised by `name`, goes to the handler of session `h`, or
/// MPI_COMM_SELF's when `h` is no live session.
pub fn raise_session(name: &'static str, h: MPI_Session, e: MpiError) -> c_int {
    match lookup(h) {
        Ok((_, s)) => {
            let code = crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg));
            deliver(name, s.errhandler(), h, &e, code)
        }
        Err(_) => crate::ffi::env::errhandler::raise(name, MPI_COMM_SELF, e),
    }
}

/// The error path of `on handler`: `e`, raised by `name`, goes to error handler `h` with object
/// handle `obj` (MPI_Session_init, the group constructors: no object exists yet); an invalid `h`
/// makes the error fatal.
pub fn raise_with_handler(name: &'static str, h: MPI_Errhandler, obj: c_int, e: MpiError) -> c_int {
    let code = crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg));
    let h = if is_valid_errhandler(h) { h } else { MPI_ERRORS_ARE_FATAL };
    deliver(name, h, obj, &e, code)
}

/// The thread level a session asks for with the info key `thread_level` (MPI 4.1 section 11.3.1);
/// MPI_THREAD_SINGLE without it, as in MPICH. An unknown value is ignored, as hints are.
fn thread_level(info: MPI_Info) -> MpiResult<ThreadLevel> {
    let hints = crate::ffi::info::hints_of(info)?;
    let asked = hints.get(b"thread_level").map(|v| String::from_utf8_lossy(v).trim().to_ascii_uppercase());
    Ok(match asked.as_deref() {
        Some("MPI_THREAD_MULTIPLE") => ThreadLevel::Multiple,
        Some("MPI_THREAD_SERIALIZED") => ThreadLevel::Serialized,
        Some("MPI_THREAD_FUNNELED") => ThreadLevel::Funneled,
        _ => ThreadLevel::Single,
    })
}

/// The name of process set `name` (a C string), as Rust text.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
unsafe fn pset_name(name: *const c_char) -> MpiResult<String> {
    // SAFETY: per this function's contract.
    Ok(unsafe { c_str(name, "pset_name") }?.to_string_lossy().into_owned())
}

/// The world ranks of process set `name` for the calling rank; MPI_ERR_ARG for an unknown name.
fn members(u: &Instance, name: &str) -> MpiResult<Vec<usize>> {
    pset_members(name, u.rank, &u.world.group).ok_or_else(|| err(MPI_ERR_ARG, format!("unknown process set \"{name}\": oxmpi has {}", PSETS.join(" and "))))
}

export! {
    fn MPI_Session_init / PMPI_Session_init (info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) on handler (errhandler, MPI_SESSION_NULL) => {
        let session = out(session, "session")?;
        if !is_valid_errhandler(errhandler) {
            return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
        }
        let level = thread_level(info)?;
        let (_, i) = instance::session_init(level, errhandler, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Session for the new handle.
        unsafe { *session = handle(i) };
        Ok(())
    }

    fn MPI_Session_finalize / PMPI_Session_finalize (session: *mut MPI_Session) on session {
        // SAFETY: read only when non-NULL; the caller passes its session handle.
        if session.is_null() { MPI_SESSION_NULL } else { unsafe { *session } }
    } => {
        let session = out(session, "session")?;
        // SAFETY: checked non-NULL above; the caller passes its session handle, in-out.
        let h = unsafe { *session };
        // Messages still in the session's buffer are delivered first; the buffer is detached.
        if let Ok((u, _)) = lookup(h) {
            u.engine.release_session(index(h)?);
        }
        if !instance::session_finalize(index(h)?)? {
            return Err(err(MPI_ERR_SESSION, format!("invalid session 0x{:08x} (finalized, or never initialized by this rank)", h as u32)));
        }
        // SAFETY: as above.
        unsafe { *session = MPI_SESSION_NULL };
        Ok(())
    }

    fn MPI_Session_get_num_psets / PMPI_Session_get_num_psets (session: MPI_Session, info: MPI_Info, npset_names: *mut c_int) on session session => {
        lookup(session)?;
        let n = out(npset_names, "npset_names")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *n = PSETS.len() as c_int };
        Ok(())
    }

    fn MPI_Session_get_nth_pset / PMPI_Session_get_nth_pset (session: MPI_Session, info: MPI_Info, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) on session session => {
        lookup(session)?;
        let len = out(pset_len, "pset_len")?;
        let name = usize::try_from(n).ok().and_then(|n| PSETS.get(n)).ok_or_else(|| err(MPI_ERR_ARG, format!("invalid process set number {n}: there are {}", PSETS.len())))?;
        // SAFETY: checked non-NULL above; the caller passes an int, in-out.
        let cap = unsafe { *len };
        // A zero length asks for the length only (MPI 4.1 section 11.3.2); else the name is
        // written, cut to fit `cap` bytes with its terminator.
        if cap > 0 {
            let dst = out(pset_name, "pset_name")?;
            // SAFETY: the caller's buffer holds `cap` bytes (the standard's contract for pset_len).
            unsafe { crate::ffi::env::init::write_cstr(dst, cap as usize, name) };
        }
        // SAFETY: as above.
        unsafe { *len = name.len() as c_int + 1 };
        Ok(())
    }

    fn MPI_Session_get_pset_info / PMPI_Session_get_pset_info (session: MPI_Session, pset_name: *const c_char, info: *mut MPI_Info) on session session => {
        let (u, _) = lookup(session)?;
        let o = out(info, "info")?;
        // SAFETY: the caller passes a NUL-terminated string (NULL is rejected).
        let name = unsafe { self::pset_name(pset_name) }?;
        let h = crate::ffi::info::new_handle(pset_info(members(u, &name)?.len()))?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Session_get_info / PMPI_Session_get_info (session: MPI_Session, info_used: *mut MPI_Info) on session session => {
        let (_, s) = lookup(session)?;
        let o = out(info_used, "info_used")?;
        let h = crate::ffi::info::new_handle(s.info())?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Session_create_errhandler / PMPI_Session_create_errhandler (session_errhandler_fn: Option<MPI_Session_errhandler_function>, errhandler: *mut MPI_Errhandler) on comm MPI_COMM_SELF => {
        let o = out(errhandler, "errhandler")?;
        let f = session_errhandler_fn.ok_or_else(|| err(MPI_ERR_ARG, "the error handler function is NULL"))?;
        // The handler types differ only in the handle type their first argument points to.
        // SAFETY: both are `unsafe extern "C" fn(*mut c_int-sized handle, *mut c_int, ...)`.
        let f: crate::ffi::env::errhandler::CommErrhandlerFn = unsafe { std::mem::transmute::<MPI_Session_errhandler_function, crate::ffi::env::errhandler::CommErrhandlerFn>(f) };
        let h = create_user_handler(f);
        // SAFETY: checked non-NULL above; the caller passes an MPI_Errhandler for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Session_set_errhandler / PMPI_Session_set_errhandler (session: MPI_Session, errhandler: MPI_Errhandler) on session session => {
        let (_, s) = lookup(session)?;
        if !is_valid_errhandler(errhandler) {
            return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
        }
        s.set_errhandler(errhandler);
        Ok(())
    }

    fn MPI_Session_get_errhandler / PMPI_Session_get_errhandler (session: MPI_Session, errhandler: *mut MPI_Errhandler) on session session => {
        let (_, s) = lookup(session)?;
        let o = out(errhandler, "errhandler")?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Errhandler.
        unsafe { *o = s.errhandler() };
        Ok(())
    }

    fn MPI_Session_call_errhandler / PMPI_Session_call_errhandler (session: MPI_Session, errorcode: c_int) on session session => {
        let (_, s) = lookup(session)?;
        let class = crate::ffi::error_codes::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        // The handler gets the user's code unchanged; the call itself succeeds if it returns.
        deliver("MPI_Session_call_errhandler", s.errhandler(), session, &err(class, format!("error code {errorcode} raised by the application")), errorcode);
        Ok(())
    }

    fn MPI_Group_from_session_pset / PMPI_Group_from_session_pset (session: MPI_Session, pset_name: *const c_char, newgroup: *mut MPI_Group) on session session => {
        let (u, _) = lookup(session)?;
        let o = out(newgroup, "newgroup")?;
        // SAFETY: the caller passes a NUL-terminated string (NULL is rejected).
        let name = unsafe { self::pset_name(pset_name) }?;
        let g = crate::ffi::comm::group::new_handle(u, crate::group::Group::new(members(u, &name)?).of_session(index(session)?))?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *o = g };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_handles_round_trip_and_null_is_invalid() {
        assert_eq!(index(handle(5)).unwrap(), 5);
        assert_eq!(handle_object(MPI_SESSION_NULL), OBJ_SESSION);
        assert_eq!(index(MPI_SESSION_NULL).unwrap_err().class.mpich(), MPI_ERR_SESSION);
        assert_eq!(index(MPI_COMM_WORLD).unwrap_err().class.mpich(), MPI_ERR_SESSION);
    }
}
