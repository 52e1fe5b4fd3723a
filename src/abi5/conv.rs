//! Conversions between the MPI-5 standard ABI and the MPICH ABI that `crate::ffi` speaks: the
//! whole cost of the layer per call. Handles: predefined ones by table (`tables.rs`), user ones
//! by arithmetic (an MPICH user handle is DIRECT or INDIRECT, i.e. `>= 0x80000000` as `u32`, and
//! that number is the ABI pointer: never in the ABI's predefined range 1..4095). Constants that
//! differ (ranks, tags, thread levels, modes, error codes, ...) by small functions. None panics.
use super::tables::{to_abi, ERR_TO_ABI, KEYVALS, TO_MPICH};
use crate::abi::MPI_Status;
use std::os::raw::{c_int, c_void};

/// A standard-ABI handle (`struct MPI_ABI_X *`).
pub type Handle = *mut c_void;

/// The standard ABI's `MPI_Status` (32 bytes). `internal[0..2]` carry MPICH's count words.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct AbiStatus {
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
    pub internal: [c_int; 5],
}
const _: () = assert!(std::mem::size_of::<AbiStatus>() == 32);

/// What each generated wrapper runs its body in: a panic becomes `fallback` and never unwinds
/// into C, as with `crate::ffi::boundary::run_value`, but inlined: the wrapper, its catch (a
/// landing pad, no instructions on the way through) and the MPICH-ABI function it calls become
/// one frame. Through `run_value`, which the optimiser left a call, the extra frame and the
/// closure's captures passed by pointer were a third of the layer's instructions per call.
#[inline(always)]
pub fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// ABI MPI_ERR_INTERN, what a panic in the layer becomes.
pub const ERR_INTERN: c_int = 17;
/// An int no MPICH-ABI call accepts as a rank or tag (an ABI value with no MPICH meaning).
const INVALID: c_int = i32::MIN + 1;

/// MPICH's predefined pair types (`0x8c00000N`) are DIRECT handles but predefined.
#[inline]
fn is_mpich_user(h: u32) -> bool {
    h >= 0x8000_0000 && !(0x8c00_0000..=0x8c00_0004).contains(&h)
}

#[inline]
pub fn h_in(p: Handle) -> c_int {
    let v = p as usize;
    if v < TO_MPICH.len() {
        TO_MPICH[v] as c_int
    } else if v <= u32::MAX as usize && is_mpich_user(v as u32) {
        v as u32 as c_int
    } else {
        0 // no MPICH handle: the call reports an invalid handle
    }
}

/// A request the engine reads (MPI_Wait...): `h_in`, a user handle first.
#[inline]
pub fn req_in(p: Handle) -> c_int {
    let v = p as usize;
    if v >> 31 == 1 { v as u32 as c_int } else { h_in(p) }
}

/// MPICH's and the standard ABI's MPI_REQUEST_NULL: what every completed request becomes, so
/// no table search for it.
const MPICH_REQUEST_NULL: u32 = crate::abi::MPI_REQUEST_NULL as u32;
const ABI_REQUEST_NULL: usize = 0x180;

#[inline]
pub fn h_out(h: c_int) -> Handle {
    let u = h as u32;
    if is_mpich_user(u) {
        return u as usize as Handle;
    }
    if u == MPICH_REQUEST_NULL {
        return ABI_REQUEST_NULL as Handle;
    }
    // An MPICH value with no ABI counterpart (an optional type we lack): pass the bits on, so
    // a later call names it in its error rather than seeing a valid ABI handle.
    to_abi(u).unwrap_or(u as usize | 0x1_0000_0000) as Handle
}

/// A request output (MPI_Isend...): a user handle or MPI_REQUEST_NULL first (a request is never
/// one of MPICH's predefined pair types, which `h_out` must tell from user handles).
#[inline]
pub fn req_out(h: c_int) -> Handle {
    let u = h as u32;
    if u >= 0x8000_0000 {
        u as usize as Handle
    } else if u == MPICH_REQUEST_NULL {
        ABI_REQUEST_NULL as Handle
    } else {
        h_out(h)
    }
}

/// MPICH's MPI_MESSAGE_NULL is its MPI_REQUEST_NULL (0x2c000000): `h_out` gives REQUEST_NULL,
/// message outputs use this.
#[inline]
pub fn msg_out(h: c_int) -> Handle {
    if h == crate::abi::MPI_MESSAGE_NULL { 0x128 as Handle } else { h_out(h) }
}

const ABI_FILE_NULL: usize = 0x118;
pub fn file_in(p: *mut c_void) -> *mut c_void {
    if p as usize == ABI_FILE_NULL { std::ptr::null_mut() } else { p }
}
pub fn file_out(p: *mut c_void) -> *mut c_void {
    if p.is_null() { ABI_FILE_NULL as *mut c_void } else { p }
}

/// ABI ANY_SOURCE -1, PROC_NULL -3, ROOT -4; MPICH -2, -1, -3.
#[inline]
pub fn rank_in(r: c_int) -> c_int {
    match r {
        0.. => r,
        -1 => -2,
        -3 => -1,
        -4 => -3,
        -32766 => r,
        _ => INVALID,
    }
}
#[inline]
pub fn rank_out(r: c_int) -> c_int {
    match r {
        -2 => -1,
        -1 => -3,
        -3 => -4,
        _ => r,
    }
}
/// ABI ANY_TAG -2; MPICH -1.
#[inline]
pub fn tag_in(t: c_int) -> c_int {
    if t >= 0 {
        t
    } else if t == -2 {
        -1
    } else {
        INVALID
    }
}
#[inline]
pub fn tag_out(t: c_int) -> c_int {
    if t == -1 { -2 } else { t }
}
/// ABI thread levels 0/1024/2048/4096; MPICH 0..3.
pub fn thread_in(l: c_int) -> c_int {
    match l {
        0 => 0,
        1024 => 1,
        2048 => 2,
        4096 => 3,
        _ => INVALID,
    }
}
pub fn thread_out(l: c_int) -> c_int {
    match l {
        1 => 1024,
        2 => 2048,
        3 => 4096,
        _ => 0,
    }
}
/// MPI_IDENT .. MPI_UNEQUAL: MPICH 0..3, ABI 201..204.
pub fn compare_out(r: c_int) -> c_int {
    r + 201
}
/// MPI_Topo_test: MPICH GRAPH 1, CART 2, DIST_GRAPH 3; ABI CART 211, GRAPH 212, DIST_GRAPH 213
/// (UNDEFINED stays).
pub fn topo_out(t: c_int) -> c_int {
    match t {
        1 => 212,
        2 => 211,
        3 => 213,
        _ => t,
    }
}
/// MPI_COMM_TYPE_SHARED, HW_UNGUIDED, HW_GUIDED, RESOURCE_GUIDED: ABI 221..224.
pub fn split_in(t: c_int) -> c_int {
    match t {
        221 => crate::abi::MPI_COMM_TYPE_SHARED,
        222 => crate::abi::MPI_COMM_TYPE_HW_UNGUIDED,
        223 => crate::abi::MPI_COMM_TYPE_HW_GUIDED,
        224 => crate::abi::MPI_COMM_TYPE_RESOURCE_GUIDED,
        _ => t, // MPI_UNDEFINED is the same in both
    }
}
pub fn lock_in(t: c_int) -> c_int {
    match t {
        301 => crate::abi::MPI_LOCK_EXCLUSIVE,
        302 => crate::abi::MPI_LOCK_SHARED,
        _ => INVALID,
    }
}
/// Maps the bits of `v` present in `pairs` (from, to); other bits pass unchanged.
fn bits(v: c_int, pairs: &[(c_int, c_int)]) -> c_int {
    let mut out = v;
    for &(from, _) in pairs {
        out &= !from;
    }
    for &(from, to) in pairs {
        if v & from != 0 {
            out |= to;
        }
    }
    out
}
const ASSERTS: [(c_int, c_int); 5] = [(1024, 1024), (2048, 8192), (4096, 4096), (8192, 2048), (16384, 16384)];
pub fn assert_in(a: c_int) -> c_int {
    bits(a, &ASSERTS)
}
/// File modes: ABI APPEND 1, CREATE 2, DELETE_ON_CLOSE 4, EXCL 8, RDONLY 16, RDWR 32,
/// SEQUENTIAL 64, UNIQUE_OPEN 128, WRONLY 256; MPICH's from include/mpi.h.
const AMODES: [(c_int, c_int); 9] = [(1, 128), (2, 1), (4, 16), (8, 64), (16, 2), (32, 8), (64, 256), (128, 32), (256, 4)];
pub fn amode_in(a: c_int) -> c_int {
    bits(a, &AMODES)
}
pub fn amode_out(a: c_int) -> c_int {
    let rev: Vec<(c_int, c_int)> = AMODES.iter().map(|&(x, y)| (y, x)).collect();
    bits(a, &rev)
}
pub fn whence_in(w: c_int) -> c_int {
    match w {
        401 => crate::abi::MPI_SEEK_SET,
        402 => crate::abi::MPI_SEEK_CUR,
        403 => crate::abi::MPI_SEEK_END,
        _ => INVALID,
    }
}
pub fn order_in(o: c_int) -> c_int {
    match o {
        12 => 56, // MPICH MPI_ORDER_C
        15 => 57, // MPICH MPI_ORDER_FORTRAN
        _ => INVALID,
    }
}
pub fn distrib_in(d: c_int) -> c_int {
    match d {
        16 => crate::abi::MPI_DISTRIBUTE_NONE,
        17 => crate::abi::MPI_DISTRIBUTE_BLOCK,
        18 => crate::abi::MPI_DISTRIBUTE_CYCLIC,
        _ => INVALID,
    }
}
/// MPI_DISTRIBUTE_DFLT_DARG is 19 in the ABI (the standard's value, though 19 is also a valid
/// block size: the ABI gives it the default's meaning).
pub fn darg_in(d: c_int) -> c_int {
    if d == 19 { crate::abi::MPI_DISTRIBUTE_DFLT_DARG } else { d }
}
pub fn typeclass_in(t: c_int) -> c_int {
    match t {
        192 => crate::abi::MPI_TYPECLASS_INTEGER,
        193 => crate::abi::MPI_TYPECLASS_REAL,
        194 => crate::abi::MPI_TYPECLASS_COMPLEX,
        _ => INVALID,
    }
}
/// MPICH combiners (include/mpi.h) to the ABI's 101..117.
pub fn combiner_out(c: c_int) -> c_int {
    const MAP: [c_int; 20] = [0, 101, 102, 103, 104, 0, 105, 106, 0, 107, 108, 0, 110, 111, 112, 114, 115, 113, 116, 109];
    MAP.get(c as usize).copied().filter(|&v| v != 0).unwrap_or(c)
}
pub fn keyval_in(k: c_int) -> c_int {
    KEYVALS.iter().find(|p| p.0 == k).map_or(k, |p| p.1)
}
pub fn keyval_out(k: c_int) -> c_int {
    KEYVALS.iter().find(|p| p.1 == k).map_or(k, |p| p.0)
}

/// Rich codes carry a message slot above the class: MPICH `class | slot << 7`, ABI
/// `class | slot << 14` (above the ABI's MPI_ERR_LASTCODE 0x3fff, whose range is the standard's).
const USER_BASE: c_int = crate::ffi::error_codes::USER_CLASS_BASE;
#[inline]
pub fn code_out(c: c_int) -> c_int {
    if c == 0 {
        return 0;
    }
    if !(0..USER_BASE).contains(&c) {
        return c; // user classes and codes (MPI_Add_error_class/code) are the same numbers
    }
    let class = ERR_TO_ABI[(c & 0x7f) as usize];
    if class < 0 {
        return c;
    }
    let slot = c >> 7;
    if class >= 1000 { class } else { class | (slot << 14) }
}
pub fn code_in(c: c_int) -> c_int {
    if !(0..USER_BASE).contains(&c) {
        return c;
    }
    let (class, slot) = if c < 0x4000 { (c, 0) } else { (c & 0x3fff, c >> 14) };
    match ERR_TO_ABI.iter().position(|&a| a == class) {
        Some(m) => m as c_int | (slot << 7),
        None => c,
    }
}

/// `MPI_IN_PLACE` is `(void *)1` in the ABI, `(void *)-1` in MPICH's.
#[inline]
pub fn buf_in<T>(p: *const T) -> *const T {
    if p as usize == 1 { usize::MAX as *const T } else { p }
}
#[inline]
pub fn buf_in_mut<T>(p: *mut T) -> *mut T {
    if p as usize == 1 { usize::MAX as *mut T } else { p }
}
/// `MPI_UNWEIGHTED` (10) and `MPI_WEIGHTS_EMPTY` (11) to MPICH's data-symbol sentinels.
pub fn weights_in<T>(p: *mut T) -> *mut T {
    match p as usize {
        10 => crate::ffi::data_symbols::MPI_UNWEIGHTED.0 as *mut T,
        11 => crate::ffi::data_symbols::MPI_WEIGHTS_EMPTY.0 as *mut T,
        _ => p,
    }
}
pub fn weights_in_const<T>(p: *const T) -> *const T {
    weights_in(p as *mut T)
}

#[inline]
pub fn len(n: impl TryInto<usize>) -> usize {
    n.try_into().unwrap_or(0)
}

/// # Safety
/// `p` is NULL or `n` readable handles.
pub unsafe fn handles_in(p: *const Handle, n: usize) -> Vec<c_int> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: caller contract.
    unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&h| h_in(h)).collect()
}
/// # Safety
/// `p` is NULL or `v.len()` writable handles.
pub unsafe fn handles_out(p: *mut Handle, v: &[c_int]) {
    if !p.is_null() {
        for (i, &h) in v.iter().enumerate() {
            // SAFETY: caller contract.
            unsafe { *p.add(i) = h_out(h) };
        }
    }
}
pub fn arr_ptr<T>(p: *const T, v: &mut [c_int]) -> *mut c_int {
    if p.is_null() { std::ptr::null_mut() } else { v.as_mut_ptr() }
}
/// # Safety
/// `p` is NULL or `n` readable ints.
pub unsafe fn ints_in(p: *const c_int, n: usize, f: fn(c_int) -> c_int) -> Vec<c_int> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: caller contract.
    unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&x| f(x)).collect()
}

/// # Safety
/// `p` is NULL or `n` writable ints.
pub unsafe fn ints_out(p: *mut c_int, n: usize, f: fn(c_int) -> c_int) {
    if !p.is_null() {
        for i in 0..n {
            // SAFETY: caller contract.
            unsafe { *p.add(i) = f(*p.add(i)) };
        }
    }
}

/// The window attributes whose values are constants (MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL):
/// the attribute points at the MPICH value, so point it at the ABI's instead.
static FLAVORS: [c_int; 4] = [311, 312, 313, 314];
static MODELS: [c_int; 2] = [321, 322];
/// # Safety
/// Arguments as MPI_Win_get_attr's after a successful call.
pub unsafe fn win_attr_out(keyval: c_int, val: *mut c_void, flag: *mut c_int) {
    if val.is_null() || flag.is_null() || unsafe { *flag } == 0 {
        return;
    }
    let slot = val as *mut *const c_int;
    // SAFETY: after a successful MPI_Win_get_attr with flag set, `*slot` points at the value.
    unsafe {
        match keyval {
            604 => {
                let i = match **slot {
                    crate::abi::MPI_WIN_FLAVOR_CREATE => 0,
                    crate::abi::MPI_WIN_FLAVOR_ALLOCATE => 1,
                    crate::abi::MPI_WIN_FLAVOR_DYNAMIC => 2,
                    _ => 3,
                };
                *slot = &FLAVORS[i];
            }
            605 => *slot = if **slot == crate::abi::MPI_WIN_UNIFIED { &MODELS[0] } else { &MODELS[1] },
            _ => {}
        }
    }
}

/// The communicator attributes whose values are ranks (MPI_HOST 503, MPI_IO 502): MPI_PROC_NULL
/// and MPI_ANY_SOURCE differ between the ABIs, so point the attribute at the ABI's value.
static RANK_SENTINELS: [(c_int, c_int); 2] = [(-1, -2), (-3, -1)]; // (ABI, MPICH): ANY_SOURCE, PROC_NULL
/// # Safety
/// Arguments as MPI_Comm_get_attr's after a successful call.
pub unsafe fn comm_attr_out(keyval: c_int, val: *mut c_void, flag: *mut c_int) {
    if val.is_null() || flag.is_null() || unsafe { *flag } == 0 || !(keyval == 502 || keyval == 503) {
        return;
    }
    let slot = val as *mut *const c_int;
    // SAFETY: after a successful get with flag set, a predefined rank attribute points at the
    // engine's int; the replacement points into the static table.
    unsafe {
        let v = **slot;
        if let Some(p) = RANK_SENTINELS.iter().find(|p| p.1 == v) {
            *slot = &p.0;
        }
    }
}

/// MPI_Type_get_contents(_c) of a darray or subarray returns MPICH's order and distribution
/// constants among its integers: give the ABI's. `large`: the `_c` form, whose sizes are in
/// the MPI_Count array, not among the integers.
/// # Safety
/// `ints` is NULL or `max` writable ints filled by a successful MPI_Type_get_contents(_c).
pub unsafe fn contents_out(datatype: c_int, max: usize, ints: *mut c_int, large: bool) {
    let (mut ni, mut na, mut nc, mut nd, mut comb) = (0, 0, 0i64, 0, 0);
    // SAFETY: local out-parameters.
    let rc = unsafe {
        if large {
            let (mut a, mut b, mut c, mut d) = (0i64, 0i64, 0i64, 0i64);
            let rc = crate::ffi::PMPI_Type_get_envelope_c(datatype, &mut a, &mut b, &mut c, &mut d, &mut comb);
            (ni, na, nc, nd) = (a as c_int, b as c_int, c, d as c_int);
            rc
        } else {
            crate::ffi::PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, &mut comb)
        }
    };
    let _ = (na, nc, nd, large);
    if rc != 0 || ints.is_null() || max < len(ni) {
        return;
    }
    // SAFETY: caller contract; `ni <= max`.
    let v = unsafe { std::slice::from_raw_parts_mut(ints, len(ni)) };
    let order = |o: c_int| match o {
        56 => 12,
        57 => 15,
        _ => o,
    };
    let distrib = |d: c_int| match d {
        121 => 17,
        122 => 18,
        123 => 16,
        _ => d,
    };
    let darg = |d: c_int| if d == crate::abi::MPI_DISTRIBUTE_DFLT_DARG { 19 } else { d };
    let n = |i: usize| v.get(i).map_or(0, |&x| len(x));
    if comb == 14 {
        // darray: size, rank, ndims, [gsizes,] distribs, dargs, psizes, order
        // Which layout: gsizes among the integers (4 arrays) or among the large counts (3).
        let nd = n(2);
        let d0 = 3 + if v.len() == 4 + 4 * nd { nd } else { 0 };
        for i in 0..nd {
            if let Some(x) = v.get_mut(d0 + i) {
                *x = distrib(*x);
            }
            if let Some(x) = v.get_mut(d0 + nd + i) {
                *x = darg(*x);
            }
        }
        if let Some(x) = v.last_mut() {
            *x = order(*x);
        }
    } else if comb == 13 {
        // subarray: ndims, [sizes, subsizes, starts,] order
        if let Some(x) = v.last_mut() {
            *x = order(*x);
        }
    }
}

/// MPICH's MPI_STATUS(ES)_IGNORE.
const MPICH_IGNORE: usize = 1;

/// # Safety
/// `p` is NULL (MPI_STATUS_IGNORE) or a readable status.
#[inline]
pub unsafe fn status_in(p: *const AbiStatus) -> MPI_Status {
    if p.is_null() {
        return MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
    }
    // SAFETY: caller contract.
    let s = unsafe { *p };
    MPI_Status {
        count_lo: s.internal[0],
        count_hi_and_cancelled: s.internal[1],
        MPI_SOURCE: rank_in(s.source),
        MPI_TAG: if s.tag == -2 { -1 } else { s.tag },
        MPI_ERROR: code_in(s.error),
    }
}
#[inline]
pub fn status_ptr(p: *const AbiStatus, t: &mut MPI_Status) -> *mut MPI_Status {
    if p.is_null() { MPICH_IGNORE as *mut MPI_Status } else { t }
}
/// # Safety
/// `p` is NULL or a writable status.
#[inline]
pub unsafe fn status_out(p: *mut AbiStatus, s: &MPI_Status) {
    if p.is_null() || !written(s) {
        return;
    }
    let mut a = abi_status(s);
    if !error_written(s) {
        // SAFETY: caller contract (a status the call may read and write).
        a.error = unsafe { (*p).error };
    }
    // SAFETY: caller contract.
    unsafe { *p = a };
}
#[inline]
fn abi_status(s: &MPI_Status) -> AbiStatus {
    AbiStatus {
        source: rank_out(s.MPI_SOURCE),
        tag: tag_out(s.MPI_TAG),
        error: code_out(s.MPI_ERROR),
        internal: [s.count_lo, s.count_hi_and_cancelled, 0, 0, 0],
    }
}

/// The standard ABI's requests and statuses as the engine's point-to-point entries write them
/// (`crate::ffi::layer`, what the generated wrappers of its `DIRECT` functions call).
pub struct Abi;

impl crate::ffi::layer::CAbi for Abi {
    type Handle = Handle;
    type Request = Handle;
    type Status = AbiStatus;
    crate::ffi::layer::forward_conversions!();
    /// MPI_ERROR only if `set_error`, else left as the caller had it (MPI 4.1 section 3.2.5).
    #[inline(always)]
    unsafe fn fill_status(p: *mut AbiStatus, source: i32, st: &crate::p2p::Status, set_error: bool) {
        let mut m = MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
        m.set_count_bytes(st.bytes, st.cancelled);
        // SAFETY: a writable status (caller contract).
        unsafe {
            (*p).source = rank_out(source);
            (*p).tag = tag_out(st.tag);
            if set_error {
                (*p).error = code_out(st.error.map_or(0, crate::error::ErrorClass::mpich));
            }
            (*p).internal = [m.count_lo, m.count_hi_and_cancelled, 0, 0, 0];
        }
    }
}

/// What the engine leaves in an output status it did not write (MPI_Test with flag 0, a failed
/// call): `status_out` then leaves the caller's as it was. No status has this source.
const NOT_WRITTEN: c_int = i32::MIN + 3;
/// What the engine leaves in the MPI_ERROR of an output status it wrote without setting that
/// field (every single-completion call, MPI 4.1 section 3.2.5): `status_out` then keeps the
/// caller's. No error code has this value.
const ERROR_NOT_WRITTEN: c_int = i32::MIN + 5;
/// A fresh MPICH status for an output-only status argument (the caller's is not read unless
/// the engine leaves MPI_ERROR unset: it may be uninitialised, and reading it cost a conversion
/// per call).
#[inline]
pub fn status_tmp() -> MPI_Status {
    MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: NOT_WRITTEN, MPI_TAG: 0, MPI_ERROR: ERROR_NOT_WRITTEN }
}
#[inline]
pub fn written(s: &MPI_Status) -> bool {
    s.MPI_SOURCE != NOT_WRITTEN
}
/// Whether the engine set MPI_ERROR of a `status_tmp` (or the status came from `status_in`).
#[inline]
pub fn error_written(s: &MPI_Status) -> bool {
    s.MPI_ERROR != ERROR_NOT_WRITTEN
}

/// An array of request handles the engine reads and writes (MPI_Waitall...), converted in the
/// caller's array: a handle is 8 bytes, an MPICH handle 4, so int `i` overwrites the first half
/// of handle `i / 2`, already read. `handles_widen_with` restores the handles afterwards.
///
/// # Safety
/// `p` is NULL or `n` readable and writable handles.
#[inline]
pub unsafe fn handles_narrow_with(p: *mut Handle, n: usize, f: impl Fn(Handle) -> c_int) -> *mut c_int {
    let q = p as *mut c_int;
    if !p.is_null() {
        for i in 0..n {
            // SAFETY: handle `i` is read before int `i` (at or below it) is written.
            unsafe { q.add(i).write(f(p.add(i).read())) };
        }
    }
    q
}
/// The other way, last first: handle `i` overwrites ints `2i` and `2i + 1`, both `>= i`
/// (already converted, or past the array).
///
/// # Safety
/// `p` is NULL or `n` writable handles holding `n` ints from `handles_narrow_with`.
#[inline]
pub unsafe fn handles_widen_with(p: *mut Handle, n: usize, f: impl Fn(c_int) -> Handle) {
    let q = p as *const c_int;
    if !p.is_null() {
        for i in (0..n).rev() {
            // SAFETY: int `i` is read before handle `i` (at or above it) is written.
            unsafe { p.add(i).write(f(q.add(i).read())) };
        }
    }
}
/// # Safety
/// As `handles_narrow_with`.
#[inline]
pub unsafe fn requests_narrow(p: *mut Handle, n: usize) -> *mut c_int {
    // SAFETY: caller contract.
    unsafe { handles_narrow_with(p, n, req_in) }
}
/// # Safety
/// As `handles_widen_with`.
#[inline]
pub unsafe fn requests_widen(p: *mut Handle, n: usize) {
    // SAFETY: caller contract.
    unsafe { handles_widen_with(p, n, req_out) }
}

/// The number of peers of `comm` (the remote group's size for an intercommunicator): the length
/// of MPI_Alltoallw's datatype arrays.
pub fn peers(comm: c_int) -> usize {
    let (mut inter, mut n) = (0, 0);
    // SAFETY: plain out-parameters.
    unsafe {
        if crate::ffi::PMPI_Comm_test_inter(comm, &mut inter) != 0 {
            return 0;
        }
        let rc = if inter != 0 { crate::ffi::PMPI_Comm_remote_size(comm, &mut n) } else { crate::ffi::PMPI_Comm_size(comm, &mut n) };
        if rc != 0 {
            return 0;
        }
    }
    len(n)
}

/// The numbers of in- and out-neighbours of the calling rank in `comm`'s topology (the lengths of
/// the neighbourhood collectives' per-neighbour arrays); (0, 0) without a topology or on error,
/// which the engine then reports.
pub fn neighbor_degrees(comm: c_int) -> (usize, usize) {
    let (mut kind, mut a, mut b, mut weighted) = (0, 0, 0, 0);
    // SAFETY: plain out-parameters.
    unsafe {
        if crate::ffi::PMPI_Topo_test(comm, &mut kind) != 0 {
            return (0, 0);
        }
        let rc = match kind {
            crate::ffi::topo::MPI_CART => {
                let rc = crate::ffi::PMPI_Cartdim_get(comm, &mut a);
                a *= 2;
                b = a;
                rc
            }
            crate::ffi::topo::MPI_GRAPH => {
                let mut rank = 0;
                let rc = crate::ffi::PMPI_Comm_rank(comm, &mut rank);
                if rc != 0 { rc } else {
                    let rc = crate::ffi::PMPI_Graph_neighbors_count(comm, rank, &mut a);
                    b = a;
                    rc
                }
            }
            crate::ffi::topo::MPI_DIST_GRAPH => crate::ffi::PMPI_Dist_graph_neighbors_count(comm, &mut a, &mut b, &mut weighted),
            _ => return (0, 0),
        };
        if rc != 0 {
            return (0, 0);
        }
    }
    (len(a), len(b))
}

/// A function the layer does not convert yet: MPI_ERR_UNSUPPORTED_OPERATION through
/// MPI_COMM_SELF's handler, naming the function (docs/MPI_ABI_UNSUPPORTED.md lists them).
#[allow(dead_code)] // the generated wrappers of functions not converted call it (none today)
pub fn unsupported(name: &'static str) -> c_int {
    let e = crate::error::err(crate::abi::MPI_ERR_UNSUPPORTED_OPERATION, format!("{name} is not supported by oxmpi's MPI-5 ABI library (libmpi_abi.so.1) yet; see docs/MPI_ABI_UNSUPPORTED.md, or build with plain mpicc"));
    code_out(crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The p2p entries' status writer (`crate::ffi::layer`) gives what the wrappers' conversion of
    /// an MPICH status gives: sources (ranks, ANY_SOURCE, PROC_NULL), tags, counts past 2^32,
    /// cancelled, MPI_ERROR only when asked (the caller's kept otherwise).
    #[test]
    fn layer_status_matches_the_wrappers_conversion() {
        use crate::ffi::layer::{CAbi, Mpich};
        use crate::p2p::Status;
        for (source, tag, bytes, cancelled, error) in [(0, 0, 8u64, false, None), (3, 77, (5u64 << 32) | 9, true, None),
                                                       (-2, -1, 0, false, None), (-1, -1, 0, false, Some(crate::error::ErrorClass::Truncate))] {
            let st = Status { source, tag, error, bytes, cancelled, context: 0 };
            for set_error in [false, true] {
                let mut m = status_tmp();
                // SAFETY: writable statuses.
                unsafe { <Mpich as CAbi>::fill_status(&mut m, source, &st, set_error) };
                // The caller's MPI_ERROR before the call: kept unless `set_error`.
                let mut a = AbiStatus { error: 99, ..Default::default() };
                // SAFETY: as above.
                unsafe { <Abi as CAbi>::fill_status(&mut a, source, &st, set_error) };
                let mut b = AbiStatus { error: 99, ..Default::default() };
                // SAFETY: as above.
                unsafe { status_out(&mut b, &m) };
                assert_eq!(bytes_of(&a), bytes_of(&b), "source {source} tag {tag} bytes {bytes} set_error {set_error}");
                assert_eq!(a.error == 99, !set_error, "MPI_ERROR is set only when asked");
            }
        }
        assert!(<Abi as CAbi>::status_ignored(std::ptr::null_mut()));
    }
    fn bytes_of(s: &AbiStatus) -> Vec<u8> {
        // SAFETY: a plain struct of ints, no padding (asserted sizes).
        unsafe { std::slice::from_raw_parts(s as *const AbiStatus as *const u8, std::mem::size_of::<AbiStatus>()) }.to_vec()
    }

    #[test]
    fn predefined_handles_round_trip() {
        let mut n = 0;
        for (abi, &m) in TO_MPICH.iter().enumerate() {
            if m == 0 || abi == 0x128 {
                continue; // unused value; MESSAGE_NULL is REQUEST_NULL's MPICH value (msg_out)
            }
            let back = h_out(m as c_int) as usize;
            // Aliases (MPI_LONG_LONG_INT...) share an ABI value, so compare through MPICH again.
            assert_eq!(h_in(back as Handle) as u32, m, "ABI 0x{abi:x} -> MPICH 0x{m:x} -> ABI 0x{back:x}");
            n += 1;
        }
        assert!(n > 90, "only {n} predefined handles mapped");
        assert_eq!(msg_out(crate::abi::MPI_MESSAGE_NULL) as usize, 0x128);
        assert_eq!(h_out(crate::abi::MPI_REQUEST_NULL) as usize, 0x180);
        assert_eq!(h_in(0x101 as Handle), crate::abi::MPI_COMM_WORLD);
    }

    #[test]
    fn user_handles_are_arithmetic() {
        let user = 0x8400_0005u32 as c_int;
        let p = h_out(user);
        assert!(p as usize >= 4096);
        assert_eq!(h_in(p), user);
        assert_eq!(h_in(0xdead_beef_0000 as Handle), 0, "a pointer no MPICH handle maps to is invalid");
    }

    #[test]
    fn constants_and_codes() {
        for r in [0, 5, -1, -3, -4, -32766] {
            assert_eq!(rank_out(rank_in(r)), r);
        }
        assert_eq!(rank_in(-2), INVALID, "-2 is no rank in the ABI (it is MPI_ANY_TAG)");
        assert_eq!(tag_out(tag_in(-2)), -2);
        for l in [0, 1024, 2048, 4096] {
            assert_eq!(thread_out(thread_in(l)), l);
        }
        for m in [1, 2, 4, 8, 16, 32, 64, 128, 256, 2 | 16 | 256] {
            assert_eq!(amode_out(amode_in(m)), m);
        }
        assert_eq!(amode_in(2 | 32), crate::abi::MPI_MODE_CREATE | crate::abi::MPI_MODE_RDWR);
        // MPICH MPI_ERR_TRUNCATE (14) is the ABI's 15; a rich code keeps its message slot.
        assert_eq!(code_out(14), 15);
        let rich = 14 | (7 << 7);
        assert_eq!(code_out(rich), 15 | (7 << 14));
        assert_eq!(code_in(code_out(rich)), rich);
        assert_eq!(code_out(crate::abi::MPI_T_ERR_INVALID), 1006);
        let user_class = crate::ffi::error_codes::USER_CLASS_BASE + 3;
        assert_eq!(code_out(user_class), user_class);
        for k in [501, 507, 601, 605, 0] {
            assert_eq!(keyval_out(keyval_in(k)), k);
        }
        assert_eq!(combiner_out(19), 109, "MPICH MPI_COMBINER_HINDEXED_BLOCK");
        assert_eq!(combiner_out(6), 105, "MPICH MPI_COMBINER_HVECTOR");
    }

    #[test]
    fn requests_and_statuses_convert_in_place() {
        // Handles: user handles (MPICH numbers as pointers) survive the round trip; the ints the
        // engine sees are their MPICH values, in order.
        let hs: Vec<u32> = (0..7).map(|i| 0x8400_0000 + i).collect();
        let mut a: Vec<Handle> = hs.iter().map(|&h| h as usize as Handle).collect();
        // SAFETY: 7 handles.
        let q = unsafe { requests_narrow(a.as_mut_ptr(), 7) };
        // SAFETY: 7 ints at the start of the array.
        let ints = unsafe { std::slice::from_raw_parts(q, 7) }.to_vec();
        assert_eq!(ints, hs.iter().map(|&h| h as c_int).collect::<Vec<_>>());
        // SAFETY: as above.
        unsafe { requests_widen(a.as_mut_ptr(), 7) };
        assert_eq!(a.iter().map(|&p| p as usize as u32).collect::<Vec<_>>(), hs);
        // An output status the engine did not write leaves the caller's alone.
        let mut one = AbiStatus { source: 5, ..Default::default() };
        // SAFETY: a writable status.
        unsafe { status_out(&mut one, &status_tmp()) };
        assert_eq!(one.source, 5);
        // One it wrote without MPI_ERROR (a single completion) keeps the caller's MPI_ERROR.
        let mut m = status_tmp();
        m.MPI_SOURCE = 1;
        one.error = 4242;
        // SAFETY: as above.
        unsafe { status_out(&mut one, &m) };
        assert_eq!((one.source, one.error), (1, 4242));
    }
}
