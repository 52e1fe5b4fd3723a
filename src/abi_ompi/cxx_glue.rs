//! What Open MPI's C++ bindings library (libmpi_cxx.so.40) needs of Open MPI's internals:
//! c-src/ompi_cxx_glue.c defines those internal symbols in libmpi.so.40 so that libmpi_cxx
//! loads, and calls this for `MPI::Op::Init` (`oxompi_cxx_op_set`) and, for the C++-only
//! features oxmpi does not have, to end the job with one line (`oxompi_cxx_unsupported`).
use super::conv::{h_in, Handle};
use crate::ffi::boundary::run_value;
use crate::op::user::UserFn;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// libmpi_cxx's `ompi_mpi_cxx_op_intercept(in, inout, &len, &datatype, user_fn)`: builds the
/// `MPI::Datatype&` the user's C++ function takes and calls it.
pub type OpIntercept = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut Handle, usize);
/// The intercept of the C++ ops (one bindings library per process).
pub static OP_INTERCEPT: std::sync::OnceLock<OpIntercept> = std::sync::OnceLock::new();

/// Open MPI's `ompi_op_set_cxx_callback(op, fn)`, as `MPI::Op::Init` calls it right after
/// `MPI_Op_create(ompi_mpi_cxx_op_intercept, commute, &op)`: the op's function so far is the
/// intercept; from now on the engine calls the intercept with the user's C++ function `f` as
/// its fifth argument, as Open MPI does. A handle that is no live user op is ignored.
///
/// # Safety
/// `op` was just made by MPI_Op_create with libmpi_cxx's intercept; `f` is the user's function.
#[no_mangle]
pub unsafe extern "C" fn oxompi_cxx_op_set(op: Handle, f: *mut c_void) {
    run_value((), || {
        let (Some(u), false) = (crate::instance::peek(), f.is_null()) else { return };
        let op = h_in(op);
        if !crate::ffi::coll::op::is_user_handle(op) {
            return;
        }
        let i = crate::abi::handle_index(op) as usize;
        let Some(old) = u.ops.get(i) else { return };
        // SAFETY: the op's function is libmpi_cxx's intercept (this function's contract).
        let intercept = unsafe { std::mem::transmute::<usize, OpIntercept>(old.f.addr) };
        let _ = OP_INTERCEPT.set(intercept);
        u.ops.set_fn(i, UserFn { addr: f as usize, signature: crate::ffi::coll::op::SIG_ABI_CXX });
    })
}

/// Ends the job with one line naming the unsupported C++ feature `what` and what to do instead.
///
/// # Safety
/// `what` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxompi_cxx_unsupported(what: *const c_char) -> ! {
    // The panic boundary: nothing here is expected to panic, but if it did, the job still ends.
    let _ = std::panic::catch_unwind(|| {
        let what = if what.is_null() {
            "a C++ binding".into()
        } else {
            // SAFETY: non-null and NUL-terminated (caller contract).
            unsafe { CStr::from_ptr(what) }.to_string_lossy()
        };
        let rank = crate::instance::peek().map(|u| u.rank.to_string()).unwrap_or_else(|| "?".into());
        crate::instance::abort_job(
            1,
            &format!("oxmpi: rank {rank}: {what} of Open MPI's C++ bindings (libmpi_cxx) is not supported by oxmpi; use the MPI C API for it"),
        )
    });
    std::process::abort()
}

// ---- C++ error handlers ----
//
// `MPI::Comm/Win/File::Create_errhandler` call `ompi_errhandler_create(type, fn, lang)` and then
// write the C++ dispatcher into the returned `ompi_errhandler_t` (its `eh_cxx_dispatch_fn`, at
// offset 0x78 in Open MPI 4.1). So the handle must be real memory with that layout: one of
// `CXX_ERRHANDLERS`, whose first 4 bytes hold the MPICH handle, as a predefined object's do
// (`objects::handle` reads them; `objects::object` maps the MPICH handle back to it). The
// engine's handler is a trampoline of kind `kind` that finds the object through the object's
// current error handler and calls `dispatch(&handle, &code, message, user_fn)` as Open MPI does.

/// Open MPI 4.1's `ompi_errhandler_t`, as far as libmpi_cxx touches it, with the MPICH handle
/// where the object header's class pointer is (libmpi_cxx never reads it).
#[repr(C, align(64))]
pub struct CxxErrhandler {
    handle: std::sync::atomic::AtomicI32,
    _header_and_name: [u8; 0x50 - 4],
    eh_type: c_int,
    lang: c_int,
    /// eh_comm_fn, eh_file_fn, eh_win_fn, eh_fort_fn, eh_cxx_dispatch_fn (written by libmpi_cxx).
    fns: [std::sync::atomic::AtomicUsize; 5],
    f_to_c_index: c_int,
}
const _: () = assert!(std::mem::offset_of!(CxxErrhandler, fns) == 0x58 && std::mem::offset_of!(CxxErrhandler, f_to_c_index) == 0x80);
const DISPATCH: usize = 4;

/// How many C++ error handlers a process can create (each keeps its object: handles may be
/// freed while objects still use them).
pub const MAX_CXX_ERRHANDLERS: usize = 256;

struct Objects(std::cell::UnsafeCell<[CxxErrhandler; MAX_CXX_ERRHANDLERS]>);
// SAFETY: a slot is written by its creator before `USED` publishes it (Release/Acquire); after
// that only the atomics are written (libmpi_cxx writes the dispatcher right after creation,
// before the handle is used anywhere, from the creating thread).
unsafe impl Sync for Objects {}
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: CxxErrhandler = CxxErrhandler {
    handle: std::sync::atomic::AtomicI32::new(0),
    _header_and_name: [0; 0x50 - 4],
    eh_type: 0,
    lang: 0,
    fns: [const { std::sync::atomic::AtomicUsize::new(0) }; 5],
    f_to_c_index: 0,
};
static OBJECTS: Objects = Objects(std::cell::UnsafeCell::new([EMPTY; MAX_CXX_ERRHANDLERS]));
/// Slots taken (claimed by `NEXT`, published by `USED` once filled).
static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static USED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static CREATE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn slot(i: usize) -> *mut CxxErrhandler {
    // SAFETY: `i` < MAX_CXX_ERRHANDLERS (callers); a pointer into the static array.
    unsafe { (OBJECTS.0.get() as *mut CxxErrhandler).add(i) }
}

/// Whether `v` is inside the C++ error handler objects (so its first 4 bytes may be read).
#[inline]
pub fn in_errhandler_objects(v: usize) -> bool {
    let lo = OBJECTS.0.get() as usize;
    v >= lo && v < lo + std::mem::size_of::<[CxxErrhandler; MAX_CXX_ERRHANDLERS]>()
}

/// The object of C++ error handler `h` (an MPICH handle), if it is one.
pub fn errhandler_object(h: c_int) -> Option<*mut c_void> {
    let n = USED.load(std::sync::atomic::Ordering::Acquire);
    // SAFETY: slots below USED are filled; `handle` is atomic.
    (0..n).map(slot).find(|&p| unsafe { (*p).handle.load(std::sync::atomic::Ordering::Relaxed) } == h).map(|p| p as *mut c_void)
}

/// Open MPI's `OMPI_ERRHANDLER_TYPE_COMM/WIN/FILE` (1, 2, 3), as libmpi_cxx passes them.
const TYPE_COMM: c_int = 1;
const TYPE_WIN: c_int = 2;
const TYPE_FILE: c_int = 3;

/// libmpi_cxx's dispatcher: `(&handle, &code, message, user_fn)`.
type Dispatch = unsafe extern "C" fn(*mut Handle, *mut c_int, *const c_char, usize);

/// Calls the C++ handler that is the current handler of the object (its MPICH error handler
/// is `eh`), with `obj` the address of the object's Open MPI handle and `code` an Open MPI code.
unsafe fn dispatch(eh: c_int, kind: c_int, obj: *mut Handle, code: *mut c_int) {
    let Some(p) = errhandler_object(eh) else { return };
    let p = p as *const CxxErrhandler;
    // SAFETY: a published slot; its function fields are atomics.
    let (f, d) = unsafe { ((*p).fns[(kind - 1) as usize].load(std::sync::atomic::Ordering::Relaxed), (*p).fns[DISPATCH].load(std::sync::atomic::Ordering::Relaxed)) };
    if f == 0 || d == 0 {
        return;
    }
    // SAFETY: `d` is the dispatcher libmpi_cxx stored, `f` the user's C++ function it gave to
    // ompi_errhandler_create; called as Open MPI's ompi_errhandler_invoke calls them.
    unsafe { std::mem::transmute::<usize, Dispatch>(d)(obj, code, c"".as_ptr(), f) };
}

unsafe extern "C" fn comm_tramp(comm: *mut Handle, code: *mut c_int) {
    let mut eh = 0;
    // SAFETY: the engine passes the address of the communicator's handle; `eh` is a local.
    unsafe {
        crate::ffi::PMPI_Comm_get_errhandler(h_in(*comm), &mut eh);
        dispatch(eh, TYPE_COMM, comm, code);
    }
}
unsafe extern "C" fn win_tramp(win: *mut Handle, code: *mut c_int) {
    let mut eh = 0;
    // SAFETY: as in comm_tramp, for a window.
    unsafe {
        crate::ffi::PMPI_Win_get_errhandler(h_in(*win), &mut eh);
        dispatch(eh, TYPE_WIN, win, code);
    }
}
unsafe extern "C" fn file_tramp(file: *mut Handle, code: *mut c_int) {
    let mut eh = 0;
    // SAFETY: as in comm_tramp, for a file (the engine's MPI_File is the pointer).
    unsafe {
        crate::ffi::PMPI_File_get_errhandler(super::conv::file_in(*file) as _, &mut eh);
        dispatch(eh, TYPE_FILE, file, code);
    }
}

/// Open MPI's `ompi_errhandler_create(type, fn, lang)` as libmpi_cxx calls it: a C++ error
/// handler of `eh_type` calling `f` through the dispatcher libmpi_cxx then stores. Ends the job
/// with one line when no object is left or the handler cannot be made (libmpi_cxx dereferences
/// the result unchecked).
///
/// # Safety
/// `f` is the user's C++ handler function of that type.
#[no_mangle]
pub unsafe extern "C" fn oxompi_cxx_errhandler_create(eh_type: c_int, f: usize, lang: c_int) -> *mut c_void {
    let made = std::panic::catch_unwind(|| {
        let tramp: unsafe extern "C" fn(*mut Handle, *mut c_int) = match eh_type {
            TYPE_COMM => comm_tramp,
            TYPE_WIN => win_tramp,
            TYPE_FILE => file_tramp,
            _ => return Err(format!("ompi_errhandler_create: unknown object type {eh_type}")),
        };
        let _g = CREATE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let i = NEXT.load(std::sync::atomic::Ordering::Relaxed);
        if i >= MAX_CXX_ERRHANDLERS {
            return Err(format!("MPI::Comm/Win/File::Create_errhandler: oxmpi's Open MPI library supports at most {MAX_CXX_ERRHANDLERS} C++ error handlers per process"));
        }
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: the layer's own constructors, with a trampoline of their handler type.
        let rc = unsafe {
            match eh_type {
                TYPE_COMM => super::callbacks::oxompi_MPI_Comm_create_errhandler(Some(tramp), &mut h),
                TYPE_WIN => super::callbacks::oxompi_MPI_Win_create_errhandler(Some(tramp), &mut h),
                _ => super::callbacks::oxompi_MPI_File_create_errhandler(Some(tramp), &mut h),
            }
        };
        if rc != 0 {
            return Err(format!("MPI::Comm/Win/File::Create_errhandler: the error handler could not be made (error {rc})"));
        }
        NEXT.store(i + 1, std::sync::atomic::Ordering::Relaxed);
        let p = slot(i);
        // SAFETY: slot `i` is unpublished (below NEXT, not yet below USED): only this thread,
        // holding CREATE_LOCK, writes it.
        unsafe {
            (*p).handle.store(h_in(h), std::sync::atomic::Ordering::Relaxed);
            (*p).eh_type = eh_type;
            (*p).lang = lang;
            (*p).fns[(eh_type - 1) as usize].store(f, std::sync::atomic::Ordering::Relaxed);
        }
        USED.store(i + 1, std::sync::atomic::Ordering::Release);
        Ok(p as *mut c_void)
    });
    match made {
        Ok(Ok(p)) => p,
        Ok(Err(msg)) => {
            let rank = crate::instance::peek().map(|u| u.rank.to_string()).unwrap_or_else(|| "?".into());
            crate::instance::abort_job(1, &format!("oxmpi: rank {rank}: {msg}; ending the job"))
        }
        Err(_) => std::process::abort(),
    }
}

// ---- C++ attribute callbacks ----

/// Open MPI's attribute object types (`COMM_ATTR`, `TYPE_ATTR`, `WIN_ATTR`).
const COMM_ATTR: c_int = 1;
const TYPE_ATTR: c_int = 2;
const WIN_ATTR: c_int = 3;

/// The user communicators' handles as addresses (MPICH's DIRECT communicator handles,
/// `0x84000000 | index`), and the bytes past the last that libmpi_cxx reads.
const COMM_HANDLES: (usize, usize) = (0x8400_0000, 0x8800_0000 + 0x1000);

/// libmpi_cxx's communicator attribute intercepts learn the kind of communicator by reading
/// `c_flags` (offset 0xe8) of the `ompi_communicator_t` the handle points to
/// (`ompi_cxx_comm_get_type`). A user communicator's Open MPI handle is its MPICH handle, an
/// address nothing is mapped at (objects.rs): map zeros there, read-only (no memory is used
/// until read; every page reads the one zero page), so the intercepts read flags 0, an
/// intracommunicator, instead of faulting. If something is mapped there already, it stays.
fn reserve_comm_handle_range() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let (lo, hi) = COMM_HANDLES;
        // SAFETY: a new anonymous read-only mapping at an address range nothing uses;
        // MAP_FIXED_NOREPLACE never replaces an existing mapping.
        unsafe {
            libc::mmap(lo as *mut c_void, hi - lo, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE, -1, 0);
        }
    });
}

/// Open MPI's `ompi_attr_create_keyval(type, copy, delete, &key, extra, flags, bindings_extra)`
/// as libmpi_cxx calls it for `MPI::Comm/Win/Datatype::Create_keyval`: `copy` and `delete` are
/// its C-callable intercepts and `extra` their state (the user's functions and extra state),
/// so this is the C constructor of that kind. Returns an Open MPI code.
///
/// # Safety
/// As MPI_Comm_create_keyval: `key` writable, the functions of Open MPI's C callback types.
#[no_mangle]
pub unsafe extern "C" fn oxompi_cxx_attr_create_keyval(attr_type: c_int, copy: usize, delete: usize, key: *mut c_int, extra: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract; the layer's own keyval constructors.
    unsafe {
        match attr_type {
            COMM_ATTR => {
                run_value((), reserve_comm_handle_range);
                super::callbacks::oxompi_MPI_Comm_create_keyval(copy, delete, key, extra)
            }
            TYPE_ATTR => super::callbacks::oxompi_MPI_Type_create_keyval(copy, delete, key, extra),
            WIN_ATTR => super::callbacks::oxompi_MPI_Win_create_keyval(copy, delete, key, extra),
            // Open MPI's MPI_ERR_ARG.
            _ => 13,
        }
    }
}
