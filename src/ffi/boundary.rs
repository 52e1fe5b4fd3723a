//! The uniform C boundary (after rustls-ffi): every exported function runs inside `run`, which
//! catches panics (the one `catch_unwind` of `ffi`) and hands a failure to the error path of the
//! object the call concerns: a communicator's, window's or file's error handler, or, for the tools
//! interface, the plain MPI_T return code.
use crate::error::{ErrorClass, MpiError};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// An error an exported function can fail with, and what a panic inside it becomes.
pub trait Failure {
    /// The failure reported for a panic (a bug in oxmpi) with message `what`.
    fn internal(what: String) -> Self;
}

impl Failure for MpiError {
    fn internal(what: String) -> Self {
        MpiError::new(crate::abi::MPI_ERR_INTERN, format!("internal error (a bug in oxmpi, please report it): {what}"))
    }
}

/// MPI_T calls have no error handlers and no internal-error class: a panic is MPI_T_ERR_INVALID.
impl Failure for ErrorClass {
    fn internal(_what: String) -> Self {
        ErrorClass::TInvalid
    }
}

/// Runs `f` without letting a panic unwind into C: a panic becomes `Err` with its message.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into())
    })
}

/// Runs the body `f` of an exported function: MPI_SUCCESS, or the code `raise` makes of its
/// error (a panic counts as `E::internal`). `raise` is where the kinds differ (whose handler).
pub fn run<E: Failure>(f: impl FnOnce() -> Result<(), E>, raise: impl FnOnce(E) -> c_int) -> c_int {
    match catch(f).unwrap_or_else(|what| Err(E::internal(what))) {
        Ok(()) => crate::abi::MPI_SUCCESS,
        Err(e) => raise(e),
    }
}

/// The error path of `on comm`: errors of `name` go to the handler of the communicator `comm`
/// gives, worked out only on failure (it may cost more than the call, e.g. a request's
/// communicator) and MPI_COMM_WORLD if working it out panics.
pub fn raise_on_comm(name: &'static str, comm: impl FnOnce() -> c_int, e: MpiError) -> c_int {
    crate::ffi::env::errhandler::raise(name, catch(comm).unwrap_or(crate::abi::MPI_COMM_WORLD), e)
}

/// Like `run` for functions that return something other than an error code (MPI_Wtime, the
/// `_f2c` converters): a panic yields `fallback` instead of unwinding into C.
pub fn run_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch(f).unwrap_or(fallback)
}

/// Defines an exported MPI function under both its `MPI_` and `PMPI_` names.
///
/// ```ignore
/// export! {
///     fn MPI_Comm_size / PMPI_Comm_size (comm: MPI_Comm, size: *mut c_int) on comm comm => {
///         ...; Ok(())
///     }
/// }
/// ```
/// `on KIND [EXPR]` says where errors go:
/// * `on comm C`: the handler of communicator `C` (`MPI_COMM_SELF` when the call concerns none),
///   evaluated only if the call fails;
/// * `on win W`: the handler of window `W`, evaluated before the body (which may free it);
/// * `on file F`: the handler of file `F`;
/// * `on session S`: the handler of session `S` (MPI_COMM_SELF's if `S` is no live session),
///   `S` evaluated before the body (which may finalize it);
/// * `on handler (H, OBJ)`: error handler `H` itself, with `OBJ` as the handle it sees (calls
///   whose object does not exist yet: MPI_Session_init, the communicators made from groups);
/// * `on tool`: none; an MPI_T function returns its `ErrorClass` as MPICH's MPI_T code.
///
/// The body returns `MpiResult` (`TResult` for `on tool`). `MPI_X` calls `PMPI_X`, so a profiling
/// tool that interposes `MPI_X` and calls `PMPI_X` sees exactly one call. `build.rs` scans for
/// `fn MPI_* /` in this form to know what is implemented, and generates the variants of the
/// families of `ffi/families.rs` (`_c`, `I*`, `*_init`, ...) in this form too.
#[macro_export]
macro_rules! export {
    ($(
        $(#[$meta:meta])*
        fn $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $kind:ident $($on:expr)? => $body:block
    )*) => {$(
        $(#[$meta])*
        #[no_mangle]
        #[allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> ::std::os::raw::c_int {
            let __raise = $crate::export!(@raise $name $kind $($on)?);
            $crate::ffi::boundary::run(move || -> ::std::result::Result<(), $crate::export!(@error $kind)> { $body }, __raise)
        }
        #[no_mangle]
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ::std::os::raw::c_int {
            // SAFETY: the same function under its other name, with the caller's arguments.
            unsafe { $pname($($arg),*) }
        }
    )*};
    (@error tool) => { $crate::error::ErrorClass };
    (@error $kind:ident) => { $crate::error::MpiError };
    (@raise $name:ident comm $c:expr) => {
        move |e| $crate::ffi::boundary::raise_on_comm(stringify!($name), move || -> ::std::os::raw::c_int { $c }, e)
    };
    (@raise $name:ident win $w:expr) => {{
        let w: $crate::abi::MPI_Win = $w;
        move |e| $crate::ffi::rma::raise_win(stringify!($name), w, e, None)
    }};
    (@raise $name:ident file $f:expr) => {{
        let f: $crate::abi::MPI_File = $f;
        move |e| $crate::ffi::io::raise_file(stringify!($name), f, e)
    }};
    (@raise $name:ident session $s:expr) => {{
        let s: $crate::abi::MPI_Session = $s;
        move |e| $crate::ffi::env::session::raise_session(stringify!($name), s, e)
    }};
    (@raise $name:ident handler $h:expr) => {{
        let (h, obj): ($crate::abi::MPI_Errhandler, ::std::os::raw::c_int) = $h;
        move |e| $crate::ffi::env::session::raise_with_handler(stringify!($name), h, obj, e)
    }};
    (@raise $name:ident tool) => {
        |e: $crate::error::ErrorClass| e.mpich()
    };
}
