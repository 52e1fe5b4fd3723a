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

/// User error handlers; handle = DIRECT | ERRHANDLER | index.
static USER_HANDLERS: Mutex<Vec<Option<CommErrhandlerFn>>> = Mutex::new(Vec::new());

pub fn user_handler_handle(index: usize) -> MPI_Errhandler {
    make_handle(HANDLE_KIND_DIRECT, OBJ_ERRHANDLER, index as u32)
}

pub fn create_user_handler(f: CommErrhandlerFn) -> MPI_Errhandler {
    let mut t = USER_HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.push(Some(f));
    user_handler_handle(t.len() - 1)
}

pub(crate) fn user_handler(h: MPI_Errhandler) -> Option<CommErrhandlerFn> {
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
/// returns the code the function gives back when the handler returns.
pub(crate) fn deliver<H: Copy>(name: &'static str, h: MPI_Errhandler, obj: H, e: &MpiError, code: c_int) -> c_int {
    match h {
        MPI_ERRORS_RETURN => code,
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => {
            let class_name = error_class_name(e.class.mpich()).unwrap_or("MPI_ERR_UNKNOWN");
            instance::abort_job(e.class.mpich().max(1), &format!("{}{name}: {} [{class_name}]; ending the job", rank_prefix(), e.msg))
        }
        _ => {
            if let Some(f) = user_handler(h) {
                let (mut o, mut cd) = (obj, code);
                // SAFETY: the user's handler, called with pointers to locals as the standard
                // specifies; the communicator, window and file handler types differ only in the
                // handle type the first pointer points to, which is `H` here.
                unsafe { f(&mut o as *mut H as *mut MPI_Comm, &mut cd) };
            }
            code
        }
    }
}
