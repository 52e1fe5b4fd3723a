//! What MPICH's C++ bindings library (libmpichcxx.so.12, linked into every program built with
//! Debian's `mpicxx.mpich`) calls in libmpi.so.12 beyond the MPI functions: the hooks that mark
//! an op, error handler or keyval as C++ so that MPICH calls it through the bindings' own
//! call-through function. Without these symbols a program built with `mpicxx.mpich` does not
//! load where binding is immediate (threads mode, `LD_BIND_NOW`).
//!
//! `MPI::Op::Init` (a C++ reduction function) works: the op keeps the user's function and is
//! called through MPICH's `MPIR_Call_op_fn`. C++ error handlers and C++ keyval callbacks
//! (`Create_errhandler`, `Create_keyval` of MPI::Comm, Win, File, Datatype) are not supported:
//! their hooks end the job with one line naming the feature (docs/UNSUPPORTED.md).
use super::boundary::run_value;
use super::coll::op::{is_user_handle, CxxOpCall, CXX_OP_CALL, SIG_MPICH_CXX};
use crate::abi::handle_index;
use crate::abi::MPI_Op;
use crate::op::user::UserFn;
use std::os::raw::c_int;

/// Ends the job: `what` of MPICH's C++ bindings is not supported.
fn unsupported(what: &str) -> ! {
    let rank = crate::instance::peek().map(|u| u.rank.to_string()).unwrap_or_else(|| "?".into());
    crate::instance::abort_job(1, &format!("oxmpi: rank {rank}: {what} of MPICH's C++ bindings (libmpichcxx) is not supported by oxmpi; use the MPI C API for it"))
}

/// MPICH's hook of `MPI::Op::Init`: op `op` (just made by MPI_Op_create with the user's C++
/// function) is called through `opcall`, MPICH's `MPIR_Call_op_fn(in, inout, len, datatype,
/// function)`. A handle that is no live user op is ignored, as MPICH's unchecked hook would
/// misbehave on it.
///
/// # Safety
/// `opcall` is MPICH's C++ call-through function of that signature.
#[no_mangle]
pub unsafe extern "C" fn MPII_Op_set_cxx(op: MPI_Op, opcall: Option<unsafe extern "C" fn()>) {
    run_value((), || {
        let (Some(call), Some(u)) = (opcall, crate::instance::peek()) else { return };
        if !is_user_handle(op) {
            return;
        }
        // SAFETY: MPICH passes its call-through, of CxxOpCall's signature, cast to `void (*)(void)`.
        let call = unsafe { std::mem::transmute::<unsafe extern "C" fn(), CxxOpCall>(call) };
        // One library, one call-through (MPICH keeps one per process too).
        let _ = CXX_OP_CALL.set(call);
        let i = handle_index(op) as usize;
        if let Some(old) = u.ops.get(i) {
            u.ops.set_fn(i, UserFn { addr: old.f.addr, signature: SIG_MPICH_CXX });
        }
    })
}

/// MPICH's hook of `MPI::Comm/Win/File::Create_errhandler`: not supported (ends the job).
#[no_mangle]
pub extern "C" fn MPII_Errhandler_set_cxx(_errhandler: c_int, _errcall: Option<unsafe extern "C" fn()>) {
    run_value((), || unsupported("MPI::Comm/Win/File::Create_errhandler (a C++ error handler)"))
}

/// MPICH's hook of `MPI::Comm/Win/Datatype::Create_keyval`: not supported (ends the job).
#[no_mangle]
pub extern "C" fn MPII_Keyval_set_proxy(_keyval: c_int, _copy: Option<unsafe extern "C" fn()>, _delete: Option<unsafe extern "C" fn()>) {
    run_value((), || unsupported("MPI::Comm/Win/Datatype::Create_keyval (C++ attribute callbacks)"))
}
