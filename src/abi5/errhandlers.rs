//! User error handlers created through a foreign ABI layer (the MPI-5 standard ABI's C functions,
//! Open MPI's C and Fortran ones). The engine calls a handler as the MPICH ABI declares it, with
//! the address of the object's MPICH handle and of an MPICH error code, and no user state. So
//! each layer holds a fixed pool of trampolines, one per handler it creates: trampoline `I`
//! finds the user's function in slot `I`, gives it the object and the code in the layer's own
//! encoding, and writes back the code the handler may have changed.
use std::os::raw::c_int;

/// How many error handlers one layer can create in a process (each takes a trampoline for good:
/// handlers may be freed while objects still use them, as the standard allows).
pub const MAX_ERRHANDLERS: usize = 64;

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
        static POOL: [$crate::abi5::errhandlers::MpichErrFn; MAX_ERRHANDLERS] = $crate::abi5::errhandlers::tramp_pool!(tramp);

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
            $crate::abi5::errhandlers::create_mpich(kind, POOL[slot])
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

/// The `MAX_ERRHANDLERS` instances of trampoline `$t` as MPICH-ABI handler functions.
macro_rules! tramp_pool {
    ($t:ident) => {
        [$t::<0>, $t::<1>, $t::<2>, $t::<3>, $t::<4>, $t::<5>, $t::<6>, $t::<7>, $t::<8>, $t::<9>, $t::<10>, $t::<11>, $t::<12>, $t::<13>, $t::<14>, $t::<15>, $t::<16>, $t::<17>, $t::<18>, $t::<19>, $t::<20>, $t::<21>, $t::<22>, $t::<23>, $t::<24>, $t::<25>, $t::<26>, $t::<27>, $t::<28>, $t::<29>, $t::<30>, $t::<31>, $t::<32>, $t::<33>, $t::<34>, $t::<35>, $t::<36>, $t::<37>, $t::<38>, $t::<39>, $t::<40>, $t::<41>, $t::<42>, $t::<43>, $t::<44>, $t::<45>, $t::<46>, $t::<47>, $t::<48>, $t::<49>, $t::<50>, $t::<51>, $t::<52>, $t::<53>, $t::<54>, $t::<55>, $t::<56>, $t::<57>, $t::<58>, $t::<59>, $t::<60>, $t::<61>, $t::<62>, $t::<63>]
    };
}
pub(crate) use tramp_pool;
