//! Attribute keyvals of an ABI layer (the MPI-5 standard ABI's and Open MPI's): the keyval's
//! extra_state becomes a `Keyval` holding the user's copy/delete functions and state, and the
//! engine calls trampolines that give those functions this ABI's handles, keyvals and codes.
//! MPI_*_DUP_FN (0x1 in the standard ABI) and a NULL function (MPI_*_NULL_*_FN there) are
//! handled here; Open MPI's MPI_*_DUP_FN are real functions (`abi_ompi::hand`), called as any.

/// Defines the keyval creators `$name` (over the MPICH-ABI `crate::ffi::$inner`), with the `conv`
/// functions in scope where it is used (h_out, keyval_out, code_in, code_out, Handle, ERR_INTERN).
macro_rules! keyval_layer {
    ($($name:ident $inner:ident;)*) => {

    type AbiCopyFn = unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
    type AbiDeleteFn = unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void) -> c_int;
    type MpichCopyFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
    type MpichDeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;
    
    /// A keyval's user functions and state (its MPICH-level extra_state). Kept for the life of the
    /// process: attributes may outlive MPI_*_free_keyval.
    struct Keyval {
        copy: usize,
        delete: usize,
        extra: *mut c_void,
    }
    
    unsafe extern "C" fn copy_tramp(obj: c_int, keyval: c_int, extra: *mut c_void, val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
        // SAFETY: `extra` is the `Keyval` this keyval was created with; `copy` is a user function.
        unsafe {
            let k = &*(extra as *const Keyval);
            match k.copy {
                0 => {
                    *flag = 0;
                    0
                }
                1 => crate::ffi::data_symbols::MPIR_Dup_fn(obj, keyval, k.extra, val_in, val_out, flag),
                f => {
                    let f = std::mem::transmute::<usize, AbiCopyFn>(f);
                    code_in(f(h_out(obj), keyval_out(keyval), k.extra, val_in, val_out, flag))
                }
            }
        }
    }
    unsafe extern "C" fn delete_tramp(obj: c_int, keyval: c_int, val: *mut c_void, extra: *mut c_void) -> c_int {
        // SAFETY: as in `copy_tramp`.
        unsafe {
            let k = &*(extra as *const Keyval);
            match k.delete {
                0 => 0,
                f => code_in(std::mem::transmute::<usize, AbiDeleteFn>(f)(h_out(obj), keyval_out(keyval), val, k.extra)),
            }
        }
    }
    
    unsafe fn create_keyval(copy: usize, delete: usize, keyval: *mut c_int, extra: *mut c_void, inner: unsafe fn(MpichCopyFn, MpichDeleteFn, *mut c_int, *mut c_void) -> c_int) -> c_int {
        run_value(ERR_INTERN, || {
            let k = Box::into_raw(Box::new(Keyval { copy, delete, extra })) as *mut c_void;
            let mut kv = 0;
            // SAFETY: the trampolines have the MPICH-ABI callback types; `k` lives forever.
            let rc = unsafe { inner(copy_tramp, delete_tramp, &mut kv, k) };
            if rc == 0 && !keyval.is_null() {
                // SAFETY: non-NULL; the caller passes the address of an int.
                unsafe { *keyval = keyval_out(kv) };
            }
            code_out(rc)
        })
    }

    $(
        /// # Safety
        /// `keyval` is NULL or writable; the functions are NULL, 0x1 (DUP) or user functions.
        #[no_mangle]
        pub unsafe extern "C" fn $name(copy: usize, delete: usize, keyval: *mut c_int, extra: *mut c_void) -> c_int {
            unsafe fn inner(c: MpichCopyFn, d: MpichDeleteFn, k: *mut c_int, e: *mut c_void) -> c_int {
                // SAFETY: the MPICH-ABI callback types of this kind have the same shape (int handle).
                unsafe { crate::ffi::$inner(Some(std::mem::transmute(c)), Some(std::mem::transmute(d)), k, e) }
            }
            // SAFETY: forwarded caller contract.
            unsafe { create_keyval(copy, delete, keyval, extra, inner) }
        }
        )*
    };
}
pub(crate) use keyval_layer;
