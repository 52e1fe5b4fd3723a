//! What MPICH's C++ bindings library (libmpichcxx.so.12, linked into every program built with
//! Debian's `mpicxx.mpich`) calls in libmpi.so.12 beyond the MPI functions: the hooks that mark
//! an op, error handler or keyval as C++ so that MPICH calls it through the bindings' own
//! call-through function. Without these symbols a program built with `mpicxx.mpich` does not
//! load where binding is immediate (threads mode, `LD_BIND_NOW`).
//!
//! As in MPICH, the op, error handler or keyval is first made by the C function with the user's
//! C++ function(s), then the hook says to call them through the bindings' C-callable
//! call-through (`MPIR_Call_op_fn`, `MPIR_Call_errhandler_function`) or proxies, which build the
//! C++ objects (`MPI::Datatype&`, `MPI::Intracomm&`, `bool&` flags) the user's functions take.
use super::boundary::run_value;
use super::coll::op::{is_user_handle, CxxOpCall, CXX_OP_CALL, SIG_MPICH_CXX};
use crate::abi::{handle_index, handle_kind, handle_object, MPI_Op, HANDLE_KIND_DIRECT, MPI_KEYVAL_INVALID, OBJ_KEYVAL};
use crate::ffi::env::errhandler::CxxErrCall;
use crate::op::user::UserFn;
use std::os::raw::{c_int, c_void};

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

/// MPICH's hook of `MPI::Comm/Win/File::Create_errhandler`: handler `errhandler` (just made by
/// MPI_*_create_errhandler with the user's C++ function) is called through `errcall`, MPICH's
/// `MPIR_Call_errhandler_function(kind, object, code, function)`. A handle that is no user
/// handler is ignored, as in MPICH.
///
/// # Safety
/// `errcall` is MPICH's C++ call-through of that signature.
#[no_mangle]
pub unsafe extern "C" fn MPII_Errhandler_set_cxx(errhandler: c_int, errcall: Option<unsafe extern "C" fn()>) {
    run_value((), || {
        let Some(call) = errcall else { return };
        // SAFETY: MPICH passes its call-through, of CxxErrCall's signature, cast to `void (*)(void)`.
        let call = unsafe { std::mem::transmute::<unsafe extern "C" fn(), CxxErrCall>(call) };
        crate::ffi::env::errhandler::set_cxx(errhandler, call);
    })
}

/// MPICH's attribute copy proxy: `proxy(user_fn, handle, keyval, extra_state, attr_type, value,
/// &new_value, &flag)`; `attr_type` 0 (MPIR_ATTR_PTR) says the value is a pointer, as every
/// attribute set from C or C++ is.
type CopyProxy = unsafe extern "C" fn(usize, c_int, c_int, *mut c_void, c_int, *mut c_void, *mut *mut c_void, *mut c_int) -> c_int;
/// MPICH's attribute delete proxy: `proxy(user_fn, handle, keyval, attr_type, value, extra_state)`.
type DeleteProxy = unsafe extern "C" fn(usize, c_int, c_int, c_int, *mut c_void, *mut c_void) -> c_int;
/// MPIR_ATTR_PTR: the attribute value is the pointer itself.
const ATTR_PTR: c_int = 0;

/// A C++ keyval's user functions, the bindings' proxies and the user's extra_state: the
/// keyval's extra_state in the engine once `MPII_Keyval_set_proxy` ran. Kept for the life of
/// the process (attributes may outlive the keyval's handle).
struct CxxKeyval {
    copy: usize,
    delete: usize,
    copy_proxy: CopyProxy,
    delete_proxy: DeleteProxy,
    extra: usize,
}

/// The engine's copy callback of a C++ keyval: the bindings' proxy calls the user's function.
unsafe extern "C" fn cxx_copy(obj: c_int, keyval: c_int, extra: *mut c_void, val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
    // SAFETY: `extra` is the CxxKeyval this keyval was given (never freed); the proxy receives
    // the user's function and state and the engine's value and out-pointers, as MPICH passes them.
    unsafe {
        let k = &*(extra as *const CxxKeyval);
        (k.copy_proxy)(k.copy, obj, keyval, k.extra as *mut c_void, ATTR_PTR, val_in, val_out as *mut *mut c_void, flag)
    }
}

/// The engine's delete callback of a C++ keyval.
unsafe extern "C" fn cxx_delete(obj: c_int, keyval: c_int, val: *mut c_void, extra: *mut c_void) -> c_int {
    // SAFETY: as in `cxx_copy`.
    unsafe {
        let k = &*(extra as *const CxxKeyval);
        (k.delete_proxy)(k.delete, obj, keyval, ATTR_PTR, val, k.extra as *mut c_void)
    }
}

/// MPICH's hook of `MPI::Comm/Win/Datatype::Create_keyval`: keyval `keyval` (just made by
/// MPI_*_create_keyval with the user's C++ functions, NULL for the null functions) calls them
/// through the bindings' proxies from now on. A handle that is no live user keyval, or a NULL
/// proxy, is ignored, as MPICH's unchecked hook would misbehave on it.
///
/// # Safety
/// The proxies are MPICH's C++ proxies of those signatures.
#[no_mangle]
pub unsafe extern "C" fn MPII_Keyval_set_proxy(keyval: c_int, copy_proxy: Option<unsafe extern "C" fn()>, delete_proxy: Option<unsafe extern "C" fn()>) {
    run_value((), || {
        let (Some(cp), Some(dp), Some(u)) = (copy_proxy, delete_proxy, crate::instance::peek()) else { return };
        if keyval == MPI_KEYVAL_INVALID || handle_kind(keyval) != HANDLE_KIND_DIRECT || handle_object(keyval) != OBJ_KEYVAL {
            return;
        }
        // SAFETY: MPICH passes its proxies, of these signatures, cast to `void (*)(void)`.
        let (copy_proxy, delete_proxy) = unsafe { (std::mem::transmute::<unsafe extern "C" fn(), CopyProxy>(cp), std::mem::transmute::<unsafe extern "C" fn(), DeleteProxy>(dp)) };
        let i = handle_index(keyval);
        let attrs = crate::ffi::comm::attr::attrs(u);
        let (win, ty) = (crate::ffi::rma::win_attr::WIN_KEYVAL_BITS, crate::ffi::datatype::type_attr::TYPE_KEYVAL_BITS);
        // Each kind keeps its own registry; the handle's index bits say which.
        macro_rules! route {
            ($reg:expr, $k:expr) => {{
                let Some(kv) = $reg.live_keyval($k) else { return };
                let state = Box::into_raw(Box::new(CxxKeyval {
                    copy: kv.copy.map_or(0, |f| f as usize),
                    delete: kv.delete.map_or(0, |f| f as usize),
                    copy_proxy,
                    delete_proxy,
                    extra: kv.extra_state,
                })) as usize;
                $reg.set_callbacks($k, kv.copy.map(|_| cxx_copy as _), kv.delete.map(|_| cxx_delete as _), state);
            }};
        }
        if i & win == win {
            route!(attrs.wins, i & !win)
        } else if i & ty == ty {
            route!(attrs.types, i & !ty)
        } else {
            route!(attrs.comm, i)
        }
    })
}
