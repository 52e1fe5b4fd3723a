//! The uniform C boundary (after rustls-ffi): every exported function runs inside `run`, which
//! catches panics and routes errors through the error handler of the object the call concerns.
use crate::error::{MpiError, MpiResult};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f` for the exported function `name`; errors go to the error handler of communicator
/// `comm` (pass `MPI_COMM_SELF` when the call concerns no communicator).
pub fn run(name: &'static str, comm: c_int, f: impl FnOnce() -> MpiResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => crate::abi::MPI_SUCCESS,
        Ok(Err(e)) => super::errhandler::raise(name, comm, e),
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            super::errhandler::raise(name, comm, MpiError::new(crate::abi::MPI_ERR_INTERN, format!("internal error (a bug in oxmpi, please report it): {what}")))
        }
    }
}

/// `run` with the communicator given by `comm`, called only when `f` fails (finding it may cost
/// more than the call itself, e.g. the communicator of a request).
pub fn run_lazy(name: &'static str, comm: impl FnOnce() -> c_int, f: impl FnOnce() -> MpiResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => crate::abi::MPI_SUCCESS,
        Ok(Err(e)) => super::errhandler::raise(name, comm_or_world(comm), e),
        Err(p) => run(name, comm_or_world(comm), move || std::panic::resume_unwind(p)),
    }
}

/// Evaluates `comm` without letting a panic escape (MPI_COMM_WORLD then).
fn comm_or_world(comm: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(comm)).unwrap_or(crate::abi::MPI_COMM_WORLD)
}

/// Like `run` for functions that return something other than an error code (MPI_Wtime, the
/// `_f2c` converters): a panic yields `fallback` instead of unwinding into C.
pub fn run_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Defines an exported MPI function under both its `MPI_` and `PMPI_` names.
///
/// ```ignore
/// export! {
///     fn MPI_Comm_size / PMPI_Comm_size (comm: MPI_Comm, size: *mut c_int) on comm {
///         ...; Ok(())
///     }
/// }
/// ```
/// The body returns `MpiResult`; `on EXPR` names the communicator whose error handler receives
/// errors. `MPI_X` calls `PMPI_X`, so a profiling tool that interposes `MPI_X` and calls `PMPI_X`
/// sees exactly one call. `build.rs` scans for `fn MPI_*` in this form to know what is implemented.
#[macro_export]
macro_rules! export {
    ($(
        $(#[$meta:meta])*
        fn $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $eh:expr => $body:block
    )*) => {$(
        $(#[$meta])*
        #[no_mangle]
        #[allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> ::std::os::raw::c_int {
            // The communicator whose handler takes the errors: worked out only when there is one.
            let __eh = move || -> ::std::os::raw::c_int { $eh };
            $crate::ffi::boundary::run_lazy(stringify!($name), __eh, move || -> $crate::error::MpiResult { $body })
        }
        #[no_mangle]
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ::std::os::raw::c_int {
            $pname($($arg),*)
        }
    )*};
}
