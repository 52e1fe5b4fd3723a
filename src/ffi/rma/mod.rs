//! One-sided communication, the window objects (MPI 4.1 sections 12.2, 12.4 and 9.3.3 for their
//! error handlers): constructors, MPI_Win_free, shared query, attach/detach, group, name, info,
//! error handlers, MPI_Alloc_mem. The operations are in `ops`, synchronisation in `sync`,
//! attributes in `win_attr`; the engine is `crate::osc`.
//!
//! Errors of calls on a window go to the window's error handler (`export!` with `on win`); errors of the
//! constructors go to the communicator's.
mod fast;
pub mod ops;
pub mod sync;
pub mod win_attr;
use crate::ffi::check;
use crate::ffi::families::CountArg;
use crate::ffi::pointer_args::{c_str, out};
use crate::abi::*;
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use crate::osc::window::{Flavor, Spec, Window};
use crate::instance::{self, Instance};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// Delivers `e` to the error handler of `win` (an invalid window's errors go to
/// MPI_COMM_WORLD's handler, as in MPICH); `code` overrides the error code handed out.
pub(crate) fn raise_win(name: &'static str, win: MPI_Win, e: MpiError, code: Option<c_int>) -> c_int {
    let code = code.unwrap_or_else(|| crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg)));
    let Some(w) = instance::get().ok().and_then(|u| window(u, win).ok()) else {
        return crate::ffi::env::errhandler::raise_code(name, MPI_COMM_WORLD, e, code);
    };
    crate::ffi::env::errhandler::deliver(name, w.errhandler.load(std::sync::atomic::Ordering::Acquire), win, &e, code)
}

/// The window hints of MPI 4.1 section 12.2.1 and their defaults: what MPI_Win_get_info reports
/// (the values in effect; unknown keys are ignored, as hints may be, and not reported).
const WINDOW_HINTS: &[(&str, &str)] = &[
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("mpi_accumulate_granularity", "0"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
];

/// The hints of a window as MPI_Win_get_info reports them: every window hint oxmpi knows, the
/// application's value where it gave one, else the default.
fn hints_in_effect(given: &crate::info::Info, flavor: Flavor) -> crate::info::Info {
    let mut used = crate::info::Info::new();
    let shared = [("alloc_shared_noncontig", "false")];
    let extra: &[(&str, &str)] = if flavor == Flavor::Shared { &shared } else { &[] };
    for (k, default) in WINDOW_HINTS.iter().chain(extra) {
        used.set(k.as_bytes(), given.get(k.as_bytes()).unwrap_or(default.as_bytes()));
    }
    used
}

/// The window behind handle `h`.
pub(crate) fn window(u: &Instance, h: MPI_Win) -> MpiResult<Arc<Window>> {
    if h == MPI_WIN_NULL {
        return Err(err(MPI_ERR_WIN, "invalid window: MPI_WIN_NULL"));
    }
    if handle_kind(h) != HANDLE_KIND_DIRECT || handle_object(h) != OBJ_WIN {
        return Err(err(MPI_ERR_WIN, format!("invalid window: 0x{:08x} is not a window handle", h as u32)));
    }
    u.wins.get(handle_index(h)).ok_or_else(|| err(MPI_ERR_WIN, format!("invalid window 0x{:08x} (freed, or never created)", h as u32)))
}

/// The window of handle `h` of the calling rank.
pub(crate) fn win_of(h: MPI_Win) -> MpiResult<(&'static Instance, Arc<Window>)> {
    let u = check::universe()?;
    Ok((u, window(u, h)?))
}

/// The collective constructor common to all flavors.
///
/// # Safety
/// `win` must be NULL or writable.
unsafe fn construct(comm: MPI_Comm, info: MPI_Info, flavor: Flavor, base: *mut c_void, size: MPI_Aint, disp_unit: i64, win: *mut MPI_Win) -> MpiResult<Arc<Window>> {
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let win = out(win, "win")?;
    if c.is_inter() {
        return Err(err(MPI_ERR_COMM, "windows cannot be created on an intercommunicator"));
    }
    if size < 0 {
        return Err(err(MPI_ERR_SIZE, format!("invalid window size {size}: must be non-negative")));
    }
    if disp_unit <= 0 || disp_unit > i32::MAX as i64 {
        return Err(err(MPI_ERR_DISP, format!("invalid displacement unit {disp_unit}: must be positive")));
    }
    if flavor == Flavor::Create && base.is_null() && size > 0 {
        return Err(err(MPI_ERR_BASE, format!("base is NULL with a window size of {size} bytes")));
    }
    let hints = crate::ffi::info::hints_of(info)?;
    let w = Window::create(u, &c, Spec {
        flavor,
        base: base as usize,
        size: size as usize,
        disp_unit: disp_unit as usize,
        hints,
        flavor_attr: match flavor {
            Flavor::Create => MPI_WIN_FLAVOR_CREATE,
            Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
            Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
            Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
        },
        model_attr: MPI_WIN_UNIFIED,
        errhandler: MPI_ERRORS_ARE_FATAL,
    })?;
    let w = u.wins.insert(w);
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *win = make_handle(HANDLE_KIND_DIRECT, OBJ_WIN, w) };
    let w = u.wins.get(w).ok_or_else(|| err(MPI_ERR_INTERN, "the new window vanished"))?;
    crate::osc::serve::register(&u.engine, &w);
    Ok(w)
}

// The cores of the window families (src/ffi/families.rs): `disp_unit` is an int or, in the `_c`
// forms, an MPI_Aint.

/// MPI_Win_create(_c).
///
/// # Safety
/// `win` must be NULL or writable.
pub(in crate::ffi) unsafe fn create(base: *mut c_void, size: MPI_Aint, disp_unit: impl CountArg, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> MpiResult {
    // SAFETY: `win` is NULL or writable (this function's contract).
    unsafe { construct(comm, info, Flavor::Create, base, size, disp_unit.get(), win) }.map(drop)
}

/// MPI_Win_allocate(_c) (`flavor` Allocate) and MPI_Win_allocate_shared(_c) (Shared):
/// `baseptr` receives this rank's memory.
///
/// # Safety
/// `baseptr` must be NULL or point to a writable `void *`; `win` as in `construct`.
pub(in crate::ffi) unsafe fn allocate(size: MPI_Aint, disp_unit: impl CountArg, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win, flavor: Flavor) -> MpiResult {
    let baseptr = out(baseptr as *mut *mut c_void, "baseptr")?;
    // SAFETY: `win` is NULL or writable (this function's contract).
    let w = unsafe { construct(comm, info, flavor, std::ptr::null_mut(), size, disp_unit.get(), win)? };
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    // A rank that asked for no memory gets NULL (as from MPICH), not an address inside the
    // segment of another rank.
    unsafe { *baseptr = if size == 0 { std::ptr::null_mut() } else { w.base as *mut c_void } };
    Ok(())
}

/// MPI_Win_shared_query(_c): `rank`'s memory as this process addresses it (MPI_PROC_NULL: the
/// lowest rank with a non-empty segment). MPI 4.1 section 12.2.3 allows any flavour but dynamic:
/// a segment this process cannot load from and store to (another process's MPI_Win_create
/// memory in processes mode) reads as size 0 and NULL; in threads mode every segment is
/// addressable.
///
/// # Safety
/// The output pointers must be NULL or writable (`disp_unit` an int or an MPI_Aint).
pub(in crate::ffi) unsafe fn shared_query<C: CountArg>(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut C, baseptr: *mut c_void) -> MpiResult {
    let (_, w) = win_of(win)?;
    let (size, disp_unit, baseptr) = (out(size, "size")?, out(disp_unit, "disp_unit")?, out(baseptr as *mut *mut c_void, "baseptr")?);
    if matches!(w.flavor, Flavor::Dynamic) {
        return Err(err(MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query is not defined on a dynamic window (made by MPI_Win_create_dynamic); query the attached memory's address another way"));
    }
    let r = if rank == MPI_PROC_NULL {
        (0..w.size).find(|&r| w.extent_of(r).0 > 0)
    } else if rank < 0 || rank as usize >= w.size {
        return Err(err(MPI_ERR_RANK, format!("invalid rank {rank}: the window's group has {} ranks", w.size)));
    } else {
        Some(rank as usize)
    };
    let (s, d, p) = match r.map(|r| (w.extent_of(r), w.target(r))) {
        Some(((s, d), crate::osc::window::Target::Direct(p))) => (s as MPI_Aint, d as i64, p as *mut c_void),
        // Not addressable from here: MPI 4.1 says size 0 and a NULL pointer.
        Some(((_, d), crate::osc::window::Target::Remote { .. })) => (0, d as i64, std::ptr::null_mut()),
        None => (0, 1, std::ptr::null_mut()),
    };
    // A zero-size segment has no address (NULL, as in MPICH), so a program cannot mistake
    // another rank's memory for it.
    let p = if s == 0 { std::ptr::null_mut() } else { p };
    // The unit was checked to fit an int when the window was made, so `put` cannot fail here.
    let d = C::put(d, "disp_unit")?;
    // SAFETY: the three are non-NULL (`out`) and writable (this function's contract).
    unsafe {
        *size = s;
        *disp_unit = d;
        *baseptr = p;
    }
    Ok(())
}

export! {
    fn MPI_Win_create_dynamic / PMPI_Win_create_dynamic (info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) on comm comm => {
        // SAFETY: `win` is NULL or writable (caller contract).
        unsafe { construct(comm, info, Flavor::Dynamic, std::ptr::null_mut(), 0, 1, win) }.map(drop)
    }

    /// Memory for RMA (MPI 4.1 section 9.2): any memory works with oxmpi's windows, so malloc.
    fn MPI_Alloc_mem / PMPI_Alloc_mem (size: MPI_Aint, info: MPI_Info, baseptr: *mut c_void) on comm MPI_COMM_WORLD => {
        let baseptr = out(baseptr as *mut *mut c_void, "baseptr")?;
        if size < 0 {
            return Err(err(MPI_ERR_SIZE, format!("invalid size {size}: must be non-negative")));
        }
        crate::ffi::info::hints_of(info)?;
        // SAFETY: malloc of a positive size; the result is checked.
        let p = unsafe { libc::malloc((size as usize).max(1)) };
        if p.is_null() {
            return Err(err(MPI_ERR_NO_MEM, format!("cannot allocate {size} bytes")));
        }
        // SAFETY: non-NULL (`out`); the caller passes the address of a `void *`.
        unsafe { *baseptr = p };
        Ok(())
    }
    fn MPI_Free_mem / PMPI_Free_mem (base: *mut c_void) on comm MPI_COMM_WORLD => {
        // SAFETY: `base` is NULL or came from MPI_Alloc_mem (caller contract), i.e. from malloc.
        unsafe { libc::free(base) };
        Ok(())
    }

    fn MPI_Win_create_errhandler / PMPI_Win_create_errhandler (win_errhandler_fn: Option<MPI_Win_errhandler_function>, errhandler: *mut MPI_Errhandler) on comm MPI_COMM_WORLD => {
        let errhandler = out(errhandler, "errhandler")?;
        let f = win_errhandler_fn.ok_or_else(|| err(MPI_ERR_ARG, "win_errhandler_fn is NULL"))?;
        let h = crate::ffi::env::errhandler::create_user_handler(f);
        // SAFETY: non-NULL (`out`); the caller passes the address of a handle.
        unsafe { *errhandler = h };
        Ok(())
    }
}

export! {
    // The handle is read before the body to find the error handler; SAFETY: the caller passes the
    // address of a window handle (NULL is checked).
    fn MPI_Win_free / PMPI_Win_free (win: *mut MPI_Win) on win if win.is_null() { MPI_WIN_NULL } else { unsafe { *win } } => {
        let win = out(win, "win")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a window handle.
        let h = unsafe { *win };
        let (u, w) = win_of(h)?;
        if w.epochs().passive() {
            return Err(err(MPI_ERR_RMA_SYNC, "the window is still locked by this rank (MPI_Win_unlock/unlock_all first)"));
        }
        // Collective: every rank's operations on the window are done once all arrived.
        w.barrier(u)?;
        // SAFETY: runs the application's delete callbacks, registered for this window's attributes.
        unsafe { crate::ffi::rma::win_attr::delete_win_attrs(u, h)? };
        crate::osc::serve::unregister(&u.engine, &w);
        u.wins.remove(handle_index(h));
        crate::coll::remove_comm(u, w.comm_index);
        // SAFETY: as above.
        unsafe { *win = MPI_WIN_NULL };
        Ok(())
    }

    fn MPI_Win_attach / PMPI_Win_attach (win: MPI_Win, base: *mut c_void, size: MPI_Aint) on win win => {
        let (_, w) = win_of(win)?;
        if w.flavor != Flavor::Dynamic {
            return Err(err(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window made by MPI_Win_create_dynamic"));
        }
        if size < 0 {
            return Err(err(MPI_ERR_SIZE, format!("invalid size {size}: must be non-negative")));
        }
        if base.is_null() && size > 0 {
            return Err(err(MPI_ERR_RMA_ATTACH, "base is NULL"));
        }
        w.attach(base as u64, size as u64)
    }
    fn MPI_Win_detach / PMPI_Win_detach (win: MPI_Win, base: *const c_void) on win win => {
        let (_, w) = win_of(win)?;
        if w.flavor != Flavor::Dynamic {
            return Err(err(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window made by MPI_Win_create_dynamic"));
        }
        w.detach(base as u64)
    }

    fn MPI_Win_get_group / PMPI_Win_get_group (win: MPI_Win, group: *mut MPI_Group) on win win => {
        let (u, w) = win_of(win)?;
        let group = out(group, "group")?;
        let i = u.groups.insert(crate::group::Group::new(w.comm.group.clone())).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many groups exist; free some with MPI_Group_free"))?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a group handle.
        unsafe { *group = make_handle(HANDLE_KIND_DIRECT, OBJ_GROUP, i as u32) };
        Ok(())
    }

    fn MPI_Win_set_name / PMPI_Win_set_name (win: MPI_Win, win_name: *const c_char) on win win => {
        let (_, w) = win_of(win)?;
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let s = unsafe { c_str(win_name, "win_name")? }.to_string_lossy();
        *w.name.lock().unwrap_or_else(|p| p.into_inner()) = s.chars().take(MPI_MAX_OBJECT_NAME - 1).collect();
        Ok(())
    }
    fn MPI_Win_get_name / PMPI_Win_get_name (win: MPI_Win, win_name: *mut c_char, resultlen: *mut c_int) on win win => {
        let (name, len) = (out(win_name, "win_name")?, out(resultlen, "resultlen")?);
        // MPI 4.1 section 7.8: the null handle is predefined and has its name.
        let s = if win == MPI_WIN_NULL {
            "MPI_WIN_NULL".to_string()
        } else {
            win_of(win)?.1.name.lock().unwrap_or_else(|p| p.into_inner()).clone()
        };
        // SAFETY: `win_name` has room for MPI_MAX_OBJECT_NAME chars and `resultlen` is an int
        // (caller contract); both non-NULL (`out`).
        unsafe { *len = crate::ffi::env::init::write_cstr(name, MPI_MAX_OBJECT_NAME, &s) as c_int };
        Ok(())
    }

    fn MPI_Win_set_info / PMPI_Win_set_info (win: MPI_Win, info: MPI_Info) on win win => {
        let (_, w) = win_of(win)?;
        let new = crate::ffi::info::hints_of(info)?;
        let mut h = w.hints.lock().unwrap_or_else(|p| p.into_inner());
        for i in 0..new.nkeys() {
            if let Some(k) = new.nth_key(i) {
                let v = new.get(k).unwrap_or_default().to_vec();
                h.set(k, &v);
            }
        }
        *h = hints_in_effect(&h, w.flavor);
        Ok(())
    }
    fn MPI_Win_get_info / PMPI_Win_get_info (win: MPI_Win, info_used: *mut MPI_Info) on win win => {
        let (_, w) = win_of(win)?;
        let o = out(info_used, "info_used")?;
        let hints = hints_in_effect(&w.hints.lock().unwrap_or_else(|p| p.into_inner()), w.flavor);
        let h = crate::ffi::info::new_handle(hints)?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an info handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Win_set_errhandler / PMPI_Win_set_errhandler (win: MPI_Win, errhandler: MPI_Errhandler) on win win => {
        let (_, w) = win_of(win)?;
        if !crate::ffi::env::errhandler::is_valid_errhandler(errhandler) {
            return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
        }
        w.errhandler.store(errhandler, std::sync::atomic::Ordering::Release);
        Ok(())
    }
    fn MPI_Win_get_errhandler / PMPI_Win_get_errhandler (win: MPI_Win, errhandler: *mut MPI_Errhandler) on win win => {
        let (_, w) = win_of(win)?;
        let errhandler = out(errhandler, "errhandler")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a handle.
        unsafe { *errhandler = w.errhandler.load(std::sync::atomic::Ordering::Acquire) };
        Ok(())
    }
    fn MPI_Win_call_errhandler / PMPI_Win_call_errhandler (win: MPI_Win, errorcode: c_int) on win win => {
        win_of(win)?;
        let class = crate::ffi::error_codes::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        // The call itself succeeds when the handler returns.
        raise_win("MPI_Win_call_errhandler", win, err(class, format!("error code {errorcode} raised by the application")), Some(errorcode));
        Ok(())
    }
}
