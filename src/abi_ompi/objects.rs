//! Open MPI handles are pointers: to a predefined object (`ompi_mpi_comm_world`, defined with
//! Open MPI's exact size in libmpi.so.40, c-src/ompi_abi_entry.S), or to an object the library
//! made. A predefined object carries its MPICH-ABI handle in its first 4 bytes; a made one
//! needs no object at all: an MPICH user handle (`0x80000000..=0xffffffff` as `u32`) is itself
//! the pointer, an address range no object reaches in a 64-bit process (a non-PIE program's
//! data sits far below 2 GiB; PIE programs and libraries are mapped far above 4 GiB). So `pointer -> handle` is one compare and, for
//! predefined objects, one load; `handle -> pointer` is a match on the handle (tables.rs) and a
//! load from the address table libmpi.so.40 registers at load time (after its relocations: the
//! address of a program's copy, if the program copy-relocated the object). In threads mode each
//! rank's instance of the program has copies of its own: the host registers them per rank
//! (`register_instance`), and a handle goes out as the calling rank's copy.
//!
//! A pointer is only dereferenced inside the memory that holds objects: libmpi.so.40's block of
//! them, the span of a program's copies (inside its data segment), or the C++ error handlers'
//! objects (`cxx_glue`, which carry their MPICH handle the same way). Anything else (a garbage
//! handle, a freed one) is handle 0, which the engine reports as invalid.
use super::tables::{object_of, OBJECT_HANDLES, OBJECT_SYMBOLS};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use crate::runtime::threads::rank_table::RankTable;

/// The addresses of the predefined objects, in `OBJECT_HANDLES` order (libmpi.so.40's table).
static OBJECTS: AtomicPtr<*mut c_void> = AtomicPtr::new(std::ptr::null_mut());
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// libmpi.so.40's block of objects, and the span of the program's copies (processes mode):
/// `[start, length]` each (one subtraction and one compare per test); empty until registered.
static LIB_SPAN: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
static COPY_SPAN: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
/// The largest object (Open MPI's ompi_predefined_op_t): a copy's span ends this far past its
/// last start at most.
const MAX_OBJECT: usize = 0x800;

/// The span of the addresses of `addrs` outside `[lo, hi)` (a program's copies).
fn copy_span(addrs: impl Iterator<Item = usize>, lo: usize, hi: usize) -> (usize, usize) {
    let outside = addrs.filter(|&a| a != 0 && !(lo..hi).contains(&a));
    let (mut a, mut b) = (usize::MAX, 0);
    for x in outside {
        a = a.min(x);
        b = b.max(x + MAX_OBJECT);
    }
    if a > b { (0, 0) } else { (a, b) }
}

/// Called by libmpi.so.40's constructor with its table of object addresses.
///
/// # Safety
/// `table` holds `n` addresses and lives as long as the process (libmpi.so.40 is never unloaded
/// while a program uses it).
#[no_mangle]
pub unsafe extern "C" fn oxompi_register(table: *mut *mut c_void, n: u32, begin: usize, end: usize) {
    if n as usize != OBJECT_HANDLES.len() {
        // A libmpi.so.40 of another oxmpi build: its objects are numbered differently.
        eprintln!("oxmpi: libmpi.so.40 registers {n} predefined objects, liboxmpi.so expects {}; install both from the same build (scripts/install.sh)", OBJECT_HANDLES.len());
        return;
    }
    // SAFETY: `table` holds `n` addresses (caller contract).
    let addrs = unsafe { std::slice::from_raw_parts(table, n as usize) };
    let (lo, hi) = copy_span(addrs.iter().map(|&p| p as usize), begin, end);
    LIB_SPAN[0].store(begin, Ordering::Relaxed);
    LIB_SPAN[1].store(end.saturating_sub(begin), Ordering::Relaxed);
    COPY_SPAN[0].store(lo, Ordering::Relaxed);
    COPY_SPAN[1].store(hi - lo, Ordering::Relaxed);
    COUNT.store(n as usize, Ordering::Relaxed);
    OBJECTS.store(table, Ordering::Release);
    if !PER_RANK.load(Ordering::Acquire) {
        REQUEST_NULL_OBJECT.store(addrs[REQUEST_NULL], Ordering::Relaxed);
    }
}

#[inline]
fn within(span: &[AtomicUsize; 2], v: usize) -> bool {
    v.wrapping_sub(span[0].load(Ordering::Relaxed)) < span[1].load(Ordering::Relaxed)
}

/// Whether `v` lies where objects are, so that reading its first 4 bytes is safe, besides the
/// program's copies (`handle` looks there first: a program names MPI_COMM_WORLD, MPI_INT... as
/// data of its own, copy relocations, libmpi.so.40's objects only through pointers it got
/// back): in threads mode the calling rank's copies, libmpi.so.40's block, C++'s handlers.
#[inline]
fn readable_elsewhere(v: usize) -> bool {
    (PER_RANK.load(Ordering::Relaxed) && in_rank_copies(v)) || within(&LIB_SPAN, v) || super::cxx_glue::in_errhandler_objects(v)
}

/// MPICH's predefined pair types (`0x8c00000N`) are DIRECT handles but predefined.
#[inline]
pub fn is_mpich_user(h: u32) -> bool {
    h >= 0x8000_0000 && !(0x8c00_0000..=0x8c00_0004).contains(&h)
}

/// The MPICH-ABI handle an Open MPI handle stands for (0, an invalid handle, for NULL).
///
/// 0 (an invalid handle) for NULL and for a pointer to no object. Inline: a predefined object
/// among the program's copies (what programs pass most: MPI_COMM_WORLD, MPI_INT...), or a user
/// handle; the rest out of line (`handle_elsewhere`). Requests are mostly user handles:
/// `request_handle` tests in the other order.
#[inline]
pub fn handle(p: *mut c_void) -> i32 {
    let v = p as usize;
    if within(&COPY_SPAN, v) && v & 3 == 0 {
        // SAFETY: inside the program's copies of the predefined objects (mapped data), 4-aligned.
        unsafe { *(p as *const i32) }
    } else if v >> 31 == 1 {
        v as u32 as i32
    } else {
        handle_elsewhere(p)
    }
}
/// `handle` for a request: a user handle first, then ompi_request_null (what a completed request
/// became; a PIE program names it through the GOT, libmpi.so.40's own object, which `handle`
/// finds only out of line).
#[inline]
pub fn request_handle(p: *mut c_void) -> i32 {
    let v = p as usize;
    if v >> 31 == 1 {
        v as u32 as i32
    } else if p == REQUEST_NULL_OBJECT.load(Ordering::Relaxed) && !p.is_null() {
        REQUEST_NULL_HANDLE as i32
    } else {
        handle(p)
    }
}
#[inline(never)]
fn handle_elsewhere(p: *mut c_void) -> i32 {
    let v = p as usize;
    if v & 3 == 0 && readable_elsewhere(v) {
        // SAFETY: inside a block of objects (mapped data, `readable_elsewhere`), 4-aligned.
        unsafe { *(p as *const i32) }
    } else {
        0
    }
}

/// The Open MPI handle for an MPICH-ABI handle.
#[inline]
pub fn object(h: i32) -> *mut c_void {
    let u = h as u32;
    if is_mpich_user(u) {
        // A C++ error handler is an object libmpi_cxx writes into (cxx_glue).
        if crate::abi::handle_object(h) == crate::abi::OBJ_ERRHANDLER {
            if let Some(p) = super::cxx_glue::errhandler_object(h) {
                return p;
            }
        }
        return u as usize as *mut c_void;
    }
    // What every completed request becomes: no table search for it.
    if u == REQUEST_NULL_HANDLE {
        return object_at(REQUEST_NULL);
    }
    predefined(u)
}

/// The Open MPI handle for an MPICH-ABI request handle (what MPI_Isend... return, MPI_Wait...
/// leave): `object` without its checks for pair types and C++ error handlers, which no request
/// is, and ompi_request_null (what every completed request becomes) from one load.
#[inline]
pub fn request_object(h: i32) -> *mut c_void {
    let u = h as u32;
    if u >= 0x8000_0000 {
        return u as usize as *mut c_void;
    }
    if u == REQUEST_NULL_HANDLE {
        return request_null();
    }
    predefined(u)
}

/// ompi_request_null's address while one program's objects serve every call (processes mode;
/// set by oxompi_register, cleared when threads mode registers a rank's own: NULL = ask
/// `object_at`).
static REQUEST_NULL_OBJECT: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
#[inline]
fn request_null() -> *mut c_void {
    let p = REQUEST_NULL_OBJECT.load(Ordering::Relaxed);
    if p.is_null() { object_at(REQUEST_NULL) } else { p }
}

/// MPICH's MPI_REQUEST_NULL and the index of ompi_request_null in `OBJECT_HANDLES`.
const REQUEST_NULL_HANDLE: u32 = crate::abi::MPI_REQUEST_NULL as u32;
const REQUEST_NULL: usize = 5;

/// Threads mode: a rank's program instance's objects: their addresses (0: not found) and the
/// span of its copies.
struct RankObjects {
    addrs: [usize; OBJECT_HANDLES.len()],
    span: (usize, usize),
}
/// Threads mode: each rank's objects (index = rank; none: not an Open MPI program), read on
/// every handle conversion, so lock-free (`RankTable`).
static RANKS: RankTable<RankObjects> = RankTable::new();

/// Threads mode: whether `v` lies in the calling rank's copies. Threads a rank creates act for
/// it (the preload library's pthread_create), so a handle is always the calling rank's object.
#[inline]
fn in_rank_copies(v: usize) -> bool {
    RANKS.current().is_some_and(|r| v >= r.span.0 && v < r.span.1)
}
static PER_RANK: AtomicBool = AtomicBool::new(false);

/// Threads mode: records the objects of rank `rank`'s program instance, found with `lookup`
/// (dlsym on the instance: its own copy of an object if it made one, else libmpi.so.40's).
pub fn register_instance(rank: usize, lookup: &dyn Fn(&str) -> Option<*mut c_void>) {
    let addrs: [usize; OBJECT_HANDLES.len()] = std::array::from_fn(|i| lookup(OBJECT_SYMBOLS[i]).map_or(0, |p| p as usize));
    if addrs.iter().all(|&a| a == 0) {
        return; // not an Open MPI program
    }
    let lib = LIB_SPAN[0].load(Ordering::Relaxed);
    let span = copy_span(addrs.iter().copied(), lib, lib + LIB_SPAN[1].load(Ordering::Relaxed));
    RANKS.set(rank, RankObjects { addrs, span });
    // Each rank's calls now give its own copy of ompi_request_null: no shared shortcut. Before
    // any of its ranks runs (the host registers every rank before starting them).
    REQUEST_NULL_OBJECT.store(std::ptr::null_mut(), Ordering::Relaxed);
    PER_RANK.store(true, Ordering::Release);
}

#[inline]
fn rank_object(i: usize) -> Option<*mut c_void> {
    RANKS.current().and_then(|r| r.addrs.get(i)).filter(|&&a| a != 0).map(|&a| a as *mut c_void)
}

/// The address of predefined object `i` of `OBJECT_HANDLES`.
#[inline]
pub fn object_at(i: usize) -> *mut c_void {
    if PER_RANK.load(Ordering::Acquire) {
        if let Some(p) = rank_object(i) {
            return p;
        }
    }
    let t = OBJECTS.load(Ordering::Acquire);
    if t.is_null() || i >= COUNT.load(Ordering::Relaxed) {
        return std::ptr::null_mut();
    }
    // SAFETY: `t` holds COUNT addresses (oxompi_register).
    unsafe { *t.add(i) }
}

/// The index (into `OBJECT_HANDLES`) of the predefined object at `p`, as the calling rank sees
/// it; a linear search, for the objects whose handle does not say (those holding 0).
#[cold]
pub fn index_of(p: *mut c_void) -> Option<usize> {
    if p.is_null() {
        return None;
    }
    (0..OBJECT_HANDLES.len()).find(|&i| object_at(i) == p)
}

/// What a predefined MPICH handle Open MPI has no object for becomes: an object holding handle
/// 0, so a later call reports an invalid handle rather than taking it for another one.
static NO_OBJECT: i32 = 0;

#[cold]
fn unmapped(_: u32) -> *mut c_void {
    &NO_OBJECT as *const i32 as *mut c_void
}

fn predefined(u: u32) -> *mut c_void {
    match object_of(u) {
        Some(i) => object_at(i),
        None => unmapped(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn request_null_shortcut_matches_the_table() {
        assert_eq!(OBJECT_HANDLES[REQUEST_NULL], REQUEST_NULL_HANDLE);
        assert_eq!(OBJECT_SYMBOLS[REQUEST_NULL], "ompi_request_null");
        assert_eq!(object_of(REQUEST_NULL_HANDLE), Some(REQUEST_NULL));
    }
}
