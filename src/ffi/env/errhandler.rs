//! Error handlers: the predefined ones, user handlers made with MPI_Comm_create_errhandler, and the
//! dispatch of an error to the handler attached to a communicator.
use crate::abi::*;
use crate::error::{err, MpiError};
use crate::instance;
use std::os::raw::c_int;
use std::sync::Mutex;

/// `MPI_Comm_errhandler_function`: `void f(MPI_Comm *, int *, ...)`; called with exactly two
/// arguments, which is how MPICH calls it too.
pub type CommErrhandlerFn = MPI_Comm_errhandler_function;

/// User error handlers, and whether each is a C++ one (MPICH's C++ bindings mark it with
/// `MPII_Errhandler_set_cxx`); handle = DIRECT | ERRHANDLER | index.
static USER_HANDLERS: Mutex<Vec<Option<(CommErrhandlerFn, bool)>>> = Mutex::new(Vec::new());

/// MPICH's C++ call-through (`MPIR_Call_errhandler_function` of libmpichcxx): called as
/// `call(kind, object, code, user_fn)`, kind 0 for a communicator, 1 a file, 2 a window; the
/// object is the address of the MPICH handle (of the `MPI_File` for a file).
pub type CxxErrCall = unsafe extern "C" fn(c_int, *mut c_int, *mut c_int, CommErrhandlerFn);
static CXX_ERR_CALL: std::sync::OnceLock<CxxErrCall> = std::sync::OnceLock::new();

/// Marks user handler `h` as a C++ one, called through `call` (one bindings library per
/// process, so one call-through, as in MPICH); false if `h` is no user handler.
pub fn set_cxx(h: MPI_Errhandler, call: CxxErrCall) -> bool {
    if handle_kind(h) != HANDLE_KIND_DIRECT || handle_object(h) != OBJ_ERRHANDLER {
        return false;
    }
    let mut t = USER_HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    match t.get_mut(handle_index(h) as usize) {
        Some(Some(e)) => {
            let _ = CXX_ERR_CALL.set(call);
            e.1 = true;
            true
        }
        _ => false,
    }
}

/// The kind number MPICH's C++ call-through expects for the object `obj` a handler is raised
/// on: a file's handle is a pointer, communicators and windows are told by their handle.
fn cxx_kind<H: Copy>(obj: &H) -> c_int {
    if std::mem::size_of::<H>() != std::mem::size_of::<c_int>() {
        return 1;
    }
    // SAFETY: `H` is an int handle (same size; the callers pass MPI_Comm or MPI_Win).
    let h: c_int = unsafe { std::mem::transmute_copy(obj) };
    if handle_object(h) == OBJ_WIN { 2 } else { 0 }
}

pub fn user_handler_handle(index: usize) -> MPI_Errhandler {
    make_handle(HANDLE_KIND_DIRECT, OBJ_ERRHANDLER, index as u32)
}

pub fn create_user_handler(f: CommErrhandlerFn) -> MPI_Errhandler {
    let mut t = USER_HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.push(Some((f, false)));
    user_handler_handle(t.len() - 1)
}

pub(crate) fn user_handler(h: MPI_Errhandler) -> Option<CommErrhandlerFn> {
    user_handler_lang(h).map(|e| e.0)
}

/// A user handler's function and whether it is a C++ one.
fn user_handler_lang(h: MPI_Errhandler) -> Option<(CommErrhandlerFn, bool)> {
    if handle_kind(h) != HANDLE_KIND_DIRECT || handle_object(h) != OBJ_ERRHANDLER {
        return None;
    }
    let t = USER_HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.get(handle_index(h) as usize).copied().flatten()
}

/// Whether `h` names an error handler a communicator may carry.
pub fn is_valid_errhandler(h: MPI_Errhandler) -> bool {
    matches!(h, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) || user_handler(h).is_some()
}

/// MPI_Errhandler_free. User handlers stay callable while a communicator still uses them (the
/// standard's reference semantics), so freeing only forgets the user's handle. A predefined
/// handler's handle, as MPI_Comm_get_errhandler returns it, may be freed too (MPI 4.1 section
/// 9.3: get_errhandler returns a new reference the caller frees; MPICH and Open MPI accept it);
/// the handler itself stays.
pub fn free_errhandler(h: MPI_Errhandler) -> Result<(), MpiError> {
    if matches!(h, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) {
        return Ok(());
    }
    if user_handler(h).is_none() {
        return Err(err(MPI_ERR_ARG, format!("0x{:x} is not an error handler", h as u32)));
    }
    Ok(())
}

fn rank_prefix() -> String {
    match instance::peek() {
        Some(u) => format!("oxmpi: rank {}: ", u.rank),
        None => "oxmpi: ".to_string(),
    }
}

/// Delivers `e`, raised by function `name`, to the error handler of `comm`; returns the error code
/// the function gives back to its caller (only reached when the handler returns).
/// An invalid or null `comm` uses MPI_COMM_WORLD's handler, as MPICH does, and so does
/// MPI_COMM_SELF while it has its default handler; before MPI_Init and after MPI_Finalize errors
/// are fatal.
pub fn raise(name: &'static str, comm: c_int, e: MpiError) -> c_int {
    let code = crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg));
    raise_code(name, comm, e, code)
}

/// Like `raise`, with the error code the handler receives given by the caller
/// (MPI_Comm_call_errhandler passes the user's code through unchanged).
pub fn raise_code(name: &'static str, comm: c_int, e: MpiError, code: c_int) -> c_int {
    let class_name = error_class_name(e.class.mpich()).unwrap_or("MPI_ERR_UNKNOWN");
    let Ok(u) = instance::get() else {
        instance::abort_job(e.class.mpich().max(1), &format!("{}{name}: {} [{class_name}]; ending the job", rank_prefix(), e.msg));
    };
    // An invalid communicator's errors go to MPI_COMM_WORLD's handler, as in MPICH.
    let (h, ch) = match crate::ffi::check::comm(u, comm) {
        // Calls that concern no object raise on MPI_COMM_SELF (MPI 4.1 section 9.3). Most programs
        // only ever set MPI_ERRORS_RETURN on MPI_COMM_WORLD, and MPICH raises such errors there:
        // while MPI_COMM_SELF keeps its default handler, MPI_COMM_WORLD's decides.
        Ok(c) if comm == MPI_COMM_SELF && c.errhandler() == MPI_ERRORS_ARE_FATAL => (u.world.errhandler(), MPI_COMM_WORLD),
        Ok(c) => (c.errhandler(), comm),
        Err(_) => (u.world.errhandler(), MPI_COMM_WORLD),
    };
    deliver(name, h, ch, &e, code)
}

/// Runs error handler `h` for error `e` (code `code`) raised by function `name` on the object
/// with handle `obj` (a communicator, window or file: a user handler gets a pointer to it);
/// returns the code the function gives back when the handler returns (MPI_SUCCESS after a C++
/// handler of MPICH's bindings, as in MPICH).
pub(crate) fn deliver<H: Copy>(name: &'static str, h: MPI_Errhandler, obj: H, e: &MpiError, code: c_int) -> c_int {
    match h {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => {
            let class_name = error_class_name(e.class.mpich()).unwrap_or("MPI_ERR_UNKNOWN");
            instance::abort_job(e.class.mpich().max(1), &format!("{}{name}: {} [{class_name}]; ending the job", rank_prefix(), e.msg))
        }
        _ => {
            match user_handler_lang(h) {
                Some((f, true)) => {
                    let (mut o, mut cd) = (obj, code);
                    if let Some(call) = CXX_ERR_CALL.get() {
                        // SAFETY: MPICH's C++ call-through (set with the C++ flag), given the
                        // kind, the address of the object's handle (a local), of the code, and
                        // the user's C++ function that MPI_*_create_errhandler stored, as MPICH
                        // calls it.
                        unsafe { call(cxx_kind(&obj), &mut o as *mut H as *mut c_int, &mut cd, f) };
                    }
                    // As MPICH: a C++ handler that returns leaves no error (C++ code reports
                    // errors by throwing), so the call returns MPI_SUCCESS.
                    return MPI_SUCCESS;
                }
                Some((f, _)) => {
                    let (mut o, mut cd) = (obj, code);
                    // SAFETY: the user's handler, called with pointers to locals as the standard
                    // specifies; the communicator, window and file handler types differ only in
                    // the handle type the first pointer points to, which is `H` here.
                    unsafe { f(&mut o as *mut H as *mut MPI_Comm, &mut cd) };
                }
                None => {}
            }
            code
        }
    }
}
