//! Generalized requests of an ABI layer (the MPI-5 standard ABI's and Open MPI's): the
//! application's query, free and cancel functions, with its extra state, are boxed as the
//! MPICH-level request's extra state, and the engine calls trampolines that give the query
//! function a status of this ABI (converted from and back to the MPICH one) and take back this
//! ABI's error codes.

/// Defines `MPI_Grequest_start` as `$name` (over the MPICH-ABI `crate::ffi::PMPI_Grequest_start`),
/// with the `conv` functions in scope where it is used (h_out, status_in, status_out, code_in,
/// code_out, Handle, ERR_INTERN) and `$status` the ABI's status type.
macro_rules! grequest_layer {
    ($name:ident, $status:ty) => {
        type GreqQueryFn = unsafe extern "C" fn(*mut c_void, *mut $status) -> c_int;
        type GreqFreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
        type GreqCancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

        /// One request's functions and the application's extra state; freed by `greq_free`, which
        /// MPI calls once per request, last.
        struct Greq {
            query: GreqQueryFn,
            free: GreqFreeFn,
            cancel: GreqCancelFn,
            extra: *mut c_void,
        }

        unsafe extern "C" fn greq_query(state: *mut c_void, status: *mut crate::abi::MPI_Status) -> c_int {
            // SAFETY: `state` is this request's `Greq` (not freed before the query: MPI 4.1
            // section 13.2); the engine passes a writable MPICH status.
            unsafe {
                let g = &*(state as *const Greq);
                // SAFETY: the ABI's status is plain integers, all-zero a valid value.
                let mut s: $status = std::mem::zeroed();
                status_out(&mut s, &*status);
                let rc = (g.query)(g.extra, &mut s);
                *status = status_in(&s);
                code_in(rc)
            }
        }
        unsafe extern "C" fn greq_free(state: *mut c_void) -> c_int {
            // SAFETY: this request's `Greq`, ours to take back now (the last callback).
            let g = unsafe { Box::from_raw(state as *mut Greq) };
            // SAFETY: the application's free function with its extra state.
            code_in(unsafe { (g.free)(g.extra) })
        }
        unsafe extern "C" fn greq_cancel(state: *mut c_void, complete: c_int) -> c_int {
            // SAFETY: this request's `Greq`, not yet freed.
            unsafe {
                let g = &*(state as *const Greq);
                code_in((g.cancel)(g.extra, complete))
            }
        }

        /// # Safety
        /// `request` is NULL or writable; the functions are the application's (NULL is refused).
        #[no_mangle]
        pub unsafe extern "C" fn $name(query: Option<GreqQueryFn>, free: Option<GreqFreeFn>, cancel: Option<GreqCancelFn>, extra: *mut c_void, request: *mut Handle) -> c_int {
            run_value(ERR_INTERN, || {
                let mut r = 0;
                let out: *mut c_int = if request.is_null() { std::ptr::null_mut() } else { &mut r };
                let (Some(query), Some(free), Some(cancel)) = (query, free, cancel) else {
                    // What the engine says of a NULL function (through the same handler).
                    // SAFETY: no function is called; `out` is local or NULL.
                    return code_out(unsafe { crate::ffi::PMPI_Grequest_start(None, None, None, extra, out) });
                };
                let g = Box::into_raw(Box::new(Greq { query, free, cancel, extra })) as *mut c_void;
                // SAFETY: the trampolines have the MPICH callback types; `g` lives until `greq_free`.
                let rc = unsafe { crate::ffi::PMPI_Grequest_start(Some(greq_query), Some(greq_free), Some(greq_cancel), g, out) };
                if rc == crate::abi::MPI_SUCCESS {
                    // SAFETY: non-NULL (else the call failed); the caller's handle.
                    unsafe { *request = h_out(r) };
                } else {
                    // SAFETY: not registered: the box is still ours.
                    drop(unsafe { Box::from_raw(g as *mut Greq) });
                }
                code_out(rc)
            })
        }
    };
}
pub(crate) use grequest_layer;
