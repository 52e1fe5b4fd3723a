//! User error handlers created through a foreign ABI layer (the MPI-5 standard ABI's C functions,
//! Open MPI's C and Fortran ones). The engine calls a handler as the MPICH ABI declares it, with
//! the address of the object's MPICH handle and of an MPICH error code, and no user state. So
//! each layer holds a fixed pool of trampolines, one per handler it creates: trampoline `I`
//! finds the user's function in slot `I`, gives it the object and the code in the layer's own
//! encoding, and writes back the code the handler may have changed.
use std::os::raw::c_int;

/// How many error handlers one layer can create in a process (each takes a trampoline for good:
/// handlers may be freed while objects still use them, as the standard allows). The ranks of a
/// threads-mode job share them: mpi4py's test_errhandler makes about 130 per rank.
pub const MAX_ERRHANDLERS: usize = 1024;

/// The kind of object a handler is for: what the engine's first argument points to (an MPICH
/// int handle, or for files the `MPI_File` pointer).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Comm,
    Win,
    File,
    Session,
}

/// The MPICH-ABI error handler function type every trampoline has (the variadic tail of the C
/// types is never used).
pub type MpichErrFn = unsafe extern "C" fn(*mut c_int, *mut c_int);

/// Creates an MPICH-ABI error handler of `kind` that calls `tramp`: its handle, or the MPICH
/// code of the failure (already through MPI_COMM_SELF's handler, as the C call does).
pub fn create_mpich(kind: Kind, tramp: MpichErrFn) -> Result<c_int, c_int> {
    let mut h = 0;
    // SAFETY: the trampoline has the shape of every MPICH-ABI handler function (object pointer,
    // code pointer); `h` is a local handle.
    let rc = unsafe {
        match kind {
            Kind::Comm => crate::ffi::PMPI_Comm_create_errhandler(Some(std::mem::transmute::<MpichErrFn, crate::abi::MPI_Comm_errhandler_function>(tramp)), &mut h),
            Kind::Win => crate::ffi::PMPI_Win_create_errhandler(Some(std::mem::transmute::<MpichErrFn, crate::abi::MPI_Win_errhandler_function>(tramp)), &mut h),
            Kind::File => crate::ffi::PMPI_File_create_errhandler(Some(std::mem::transmute::<MpichErrFn, crate::abi::MPI_File_errhandler_function>(tramp)), &mut h),
            Kind::Session => crate::ffi::PMPI_Session_create_errhandler(Some(std::mem::transmute::<MpichErrFn, crate::abi::MPI_Session_errhandler_function>(tramp)), &mut h),
        }
    };
    if rc == crate::abi::MPI_SUCCESS {
        Ok(h)
    } else {
        Err(rc)
    }
}

/// Raises an argument error of an errhandler constructor through MPI_COMM_SELF's handler.
pub fn refuse(name: &'static str, class: c_int, what: String) -> c_int {
    crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, crate::error::err(class, what))
}

/// Defines, where it is used, `create_errhandler(kind, f, name) -> Result<mpich handle, mpich
/// code>` over a pool of trampolines that call `f: unsafe extern "C" fn(*mut $obj, *mut c_int)`
/// with the object converted by `$obj_out` (an MPICH int handle) or `$file_out` (the engine's
/// `MPI_File`), and the code by `$code_out` / `$code_in`. `$lib` names the layer in messages.
macro_rules! errhandler_pool {
    (obj: $obj:ty, $obj_out:expr, $file_out:expr; code: $code_out:path, $code_in:path; lib: $lib:literal) => {
        type UserErrFn = unsafe extern "C" fn(*mut $obj, *mut std::os::raw::c_int);
        use $crate::abi5::errhandlers::{Kind as ErrKind, MAX_ERRHANDLERS};
        /// The handlers created so far, slot by slot (never removed: see MAX_ERRHANDLERS).
        static HANDLERS: std::sync::Mutex<Vec<(ErrKind, UserErrFn)>> = std::sync::Mutex::new(Vec::new());

        /// Trampoline of slot `I`: converts the object and the code, calls the user's handler,
        /// and takes back the code it may have changed.
        unsafe extern "C" fn tramp<const I: usize>(obj: *mut std::os::raw::c_int, code: *mut std::os::raw::c_int) {
            let Some((kind, f)) = HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(I).copied() else { return };
            // SAFETY: the engine passes the addresses of the object's handle (for a file, of its
            // `MPI_File` pointer) and of the code.
            unsafe {
                let mut h: $obj = if kind == ErrKind::File { ($file_out)(*(obj as *mut *mut std::os::raw::c_void)) } else { ($obj_out)(*obj) };
                let mut c = $code_out(*code);
                f(&mut h, &mut c);
                *code = $code_in(c);
            }
        }
        static POOL: [[$crate::abi5::errhandlers::MpichErrFn; 16]; MAX_ERRHANDLERS / 16] = $crate::abi5::errhandlers::tramp_pool!(tramp);

        /// An MPICH-ABI handler of `kind` calling `f`: its handle, or the MPICH code of the failure
        /// (raised through MPI_COMM_SELF's handler).
        fn create_errhandler(kind: ErrKind, f: Option<UserErrFn>, name: &'static str) -> Result<std::os::raw::c_int, std::os::raw::c_int> {
            use $crate::abi5::errhandlers::refuse;
            let Some(f) = f else { return Err(refuse(name, $crate::abi::MPI_ERR_ARG, "the error handler function is NULL".into())) };
            let slot = {
                let mut t = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() >= MAX_ERRHANDLERS {
                    None
                } else {
                    t.push((kind, f));
                    Some(t.len() - 1)
                }
            };
            let Some(slot) = slot else {
                return Err(refuse(name, $crate::abi::MPI_ERR_NO_MEM, format!(concat!("oxmpi's ", $lib, " supports at most {} user error handlers per process"), MAX_ERRHANDLERS)));
            };
            $crate::abi5::errhandlers::create_mpich(kind, POOL[slot / 16][slot % 16])
        }
    };
}
pub(crate) use errhandler_pool;

/// Defines the C errhandler constructors `$name` of kind `$kind`, over `errhandler_pool!`'s
/// `create_errhandler`, with the layer's `conv` in scope (Handle, h_out, code_out, ERR_INTERN).
macro_rules! c_errhandler_creators {
    ($($name:ident $kind:ident;)*) => {$(
        /// # Safety
        /// `errhandler` is NULL or writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(f: Option<UserErrFn>, errhandler: *mut Handle) -> c_int {
            run_value(ERR_INTERN, || match create_errhandler(ErrKind::$kind, f, stringify!($name)) {
                Ok(h) => {
                    if !errhandler.is_null() {
                        // SAFETY: non-NULL; the caller passes the address of a handle.
                        unsafe { *errhandler = h_out(h) };
                    }
                    0
                }
                Err(rc) => code_out(rc),
            })
        }
    )*};
}
pub(crate) use c_errhandler_creators;

/// The `MAX_ERRHANDLERS` instances of trampoline `$t` as MPICH-ABI handler functions, 64 rows
/// of 16 (slot `I` is `POOL[I / 16][I % 16]`).
macro_rules! tramp_pool {
    ($t:ident) => {
        [$crate::abi5::errhandlers::tramp_row!($t, 0), $crate::abi5::errhandlers::tramp_row!($t, 1), $crate::abi5::errhandlers::tramp_row!($t, 2), $crate::abi5::errhandlers::tramp_row!($t, 3), $crate::abi5::errhandlers::tramp_row!($t, 4), $crate::abi5::errhandlers::tramp_row!($t, 5), $crate::abi5::errhandlers::tramp_row!($t, 6), $crate::abi5::errhandlers::tramp_row!($t, 7), $crate::abi5::errhandlers::tramp_row!($t, 8), $crate::abi5::errhandlers::tramp_row!($t, 9), $crate::abi5::errhandlers::tramp_row!($t, 10), $crate::abi5::errhandlers::tramp_row!($t, 11), $crate::abi5::errhandlers::tramp_row!($t, 12), $crate::abi5::errhandlers::tramp_row!($t, 13), $crate::abi5::errhandlers::tramp_row!($t, 14), $crate::abi5::errhandlers::tramp_row!($t, 15), $crate::abi5::errhandlers::tramp_row!($t, 16), $crate::abi5::errhandlers::tramp_row!($t, 17), $crate::abi5::errhandlers::tramp_row!($t, 18), $crate::abi5::errhandlers::tramp_row!($t, 19), $crate::abi5::errhandlers::tramp_row!($t, 20), $crate::abi5::errhandlers::tramp_row!($t, 21), $crate::abi5::errhandlers::tramp_row!($t, 22), $crate::abi5::errhandlers::tramp_row!($t, 23), $crate::abi5::errhandlers::tramp_row!($t, 24), $crate::abi5::errhandlers::tramp_row!($t, 25), $crate::abi5::errhandlers::tramp_row!($t, 26), $crate::abi5::errhandlers::tramp_row!($t, 27), $crate::abi5::errhandlers::tramp_row!($t, 28), $crate::abi5::errhandlers::tramp_row!($t, 29), $crate::abi5::errhandlers::tramp_row!($t, 30), $crate::abi5::errhandlers::tramp_row!($t, 31), $crate::abi5::errhandlers::tramp_row!($t, 32), $crate::abi5::errhandlers::tramp_row!($t, 33), $crate::abi5::errhandlers::tramp_row!($t, 34), $crate::abi5::errhandlers::tramp_row!($t, 35), $crate::abi5::errhandlers::tramp_row!($t, 36), $crate::abi5::errhandlers::tramp_row!($t, 37), $crate::abi5::errhandlers::tramp_row!($t, 38), $crate::abi5::errhandlers::tramp_row!($t, 39), $crate::abi5::errhandlers::tramp_row!($t, 40), $crate::abi5::errhandlers::tramp_row!($t, 41), $crate::abi5::errhandlers::tramp_row!($t, 42), $crate::abi5::errhandlers::tramp_row!($t, 43), $crate::abi5::errhandlers::tramp_row!($t, 44), $crate::abi5::errhandlers::tramp_row!($t, 45), $crate::abi5::errhandlers::tramp_row!($t, 46), $crate::abi5::errhandlers::tramp_row!($t, 47), $crate::abi5::errhandlers::tramp_row!($t, 48), $crate::abi5::errhandlers::tramp_row!($t, 49), $crate::abi5::errhandlers::tramp_row!($t, 50), $crate::abi5::errhandlers::tramp_row!($t, 51), $crate::abi5::errhandlers::tramp_row!($t, 52), $crate::abi5::errhandlers::tramp_row!($t, 53), $crate::abi5::errhandlers::tramp_row!($t, 54), $crate::abi5::errhandlers::tramp_row!($t, 55), $crate::abi5::errhandlers::tramp_row!($t, 56), $crate::abi5::errhandlers::tramp_row!($t, 57), $crate::abi5::errhandlers::tramp_row!($t, 58), $crate::abi5::errhandlers::tramp_row!($t, 59), $crate::abi5::errhandlers::tramp_row!($t, 60), $crate::abi5::errhandlers::tramp_row!($t, 61), $crate::abi5::errhandlers::tramp_row!($t, 62), $crate::abi5::errhandlers::tramp_row!($t, 63)]
    };
}
pub(crate) use tramp_pool;

/// Row `$r` of `tramp_pool!`: trampolines `16 * $r` to `16 * $r + 15`.
macro_rules! tramp_row {
    ($t:ident, $r:literal) => {
        [$t::<{ $r * 16 + 0 }>, $t::<{ $r * 16 + 1 }>, $t::<{ $r * 16 + 2 }>, $t::<{ $r * 16 + 3 }>, $t::<{ $r * 16 + 4 }>, $t::<{ $r * 16 + 5 }>, $t::<{ $r * 16 + 6 }>, $t::<{ $r * 16 + 7 }>, $t::<{ $r * 16 + 8 }>, $t::<{ $r * 16 + 9 }>, $t::<{ $r * 16 + 10 }>, $t::<{ $r * 16 + 11 }>, $t::<{ $r * 16 + 12 }>, $t::<{ $r * 16 + 13 }>, $t::<{ $r * 16 + 14 }>, $t::<{ $r * 16 + 15 }>]
    };
}
pub(crate) use tramp_row;
