//! Conversions between Open MPI 4.1's ABI and the MPICH ABI that `crate::ffi` speaks, under the
//! names the generated wrappers call (the same as `crate::abi5::conv`'s: one generator serves
//! both). Handles: `objects`; constants: the (Open MPI, MPICH) pairs of `tables.rs`, which the
//! generator took from both headers. None panics.
// `MPI_IN_PLACE` is `(void *)1` in Open MPI too: `buf_in`/`buf_in_mut` are the MPI-5 ABI's.
pub use crate::abi5::conv::{arr_ptr, buf_in, buf_in_mut, guard, ints_in, ints_out, len, neighbor_degrees, peers, status_tmp};
use crate::abi5::conv::{error_written, handles_narrow_with, handles_widen_with, written};
use super::objects::{handle, object, object_at, request_handle, request_object};
use super::tables::*;
use crate::abi::MPI_Status;
use std::os::raw::{c_int, c_void};

/// An Open MPI handle (`struct ompi_X_t *`).
pub type Handle = *mut c_void;

/// Open MPI's `MPI_Status` (`struct ompi_status_public_t`, 24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct OmpiStatus {
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
    pub cancelled: c_int,
    pub ucount: usize,
}
const _: () = assert!(std::mem::size_of::<OmpiStatus>() == 24);

/// Open MPI's MPI_ERR_INTERN, what a panic in the layer becomes.
pub const ERR_INTERN: c_int = 16;
/// An int no MPICH-ABI call accepts as a rank or constant (an Open MPI value with no MPICH meaning).
const INVALID: c_int = i32::MIN + 1;

#[inline]
pub fn h_in(p: Handle) -> c_int {
    handle(p)
}
#[inline]
pub fn h_out(h: c_int) -> Handle {
    object(h)
}
/// A request the engine reads (MPI_Wait...): `h_in`, a user handle first.
#[inline]
pub fn req_in(p: Handle) -> c_int {
    request_handle(p)
}

/// A request output (MPI_Isend...): `objects::request_object`, `h_out` without the checks no
/// request needs.
#[inline]
pub fn req_out(h: c_int) -> Handle {
    request_object(h)
}

/// MPICH's MPI_MESSAGE_NULL is its MPI_REQUEST_NULL: message outputs give ompi_message_null.
#[inline]
pub fn msg_out(h: c_int) -> Handle {
    if h == crate::abi::MPI_MESSAGE_NULL { object_at(MESSAGE_NULL) } else { h_out(h) }
}

/// MPICH's MPI_File is a pointer already (NULL for MPI_FILE_NULL); Open MPI's MPI_FILE_NULL is
/// `&ompi_mpi_file_null`, which holds 0.
pub fn file_in(p: *mut c_void) -> *mut c_void {
    if p.is_null() || p == object_at(FILE_NULL) { std::ptr::null_mut() } else { p }
}
pub fn file_out(p: *mut c_void) -> *mut c_void {
    if p.is_null() { object_at(FILE_NULL) } else { p }
}

/// `v` through the (Open MPI, MPICH) pairs, from Open MPI's side.
#[inline]
fn map_in(v: c_int, pairs: &[(c_int, c_int)], other: c_int) -> c_int {
    pairs.iter().find(|p| p.0 == v).map_or(other, |p| p.1)
}
#[inline]
fn map_out(v: c_int, pairs: &[(c_int, c_int)]) -> c_int {
    pairs.iter().find(|p| p.1 == v).map_or(v, |p| p.0)
}

/// RANKS's pairs as constants (a test checks them against the table): compares, not a search.
#[inline]
pub fn rank_in(r: c_int) -> c_int {
    match r {
        0.. | crate::abi::MPI_UNDEFINED => r,
        -1 => -2, // MPI_ANY_SOURCE
        -2 => -1, // MPI_PROC_NULL
        -4 => -3, // MPI_ROOT
        _ => INVALID,
    }
}
#[inline]
pub fn rank_out(r: c_int) -> c_int {
    match r {
        -2 => -1, // MPI_ANY_SOURCE
        -1 => -2, // MPI_PROC_NULL
        -3 => -4, // MPI_ROOT
        _ => r,
    }
}
/// MPI_ANY_TAG is -1 in both.
#[inline]
pub fn tag_in(t: c_int) -> c_int {
    t
}
pub fn thread_in(l: c_int) -> c_int {
    map_in(l, &THREADS, INVALID)
}
pub fn thread_out(l: c_int) -> c_int {
    map_out(l, &THREADS)
}
pub fn compare_out(r: c_int) -> c_int {
    map_out(r, &COMPARES)
}
pub fn topo_out(t: c_int) -> c_int {
    map_out(t, &TOPOS)
}
/// MPI_COMM_TYPE_SHARED; Open MPI's own OMPI_COMM_TYPE_* have no MPICH counterpart.
pub fn split_in(t: c_int) -> c_int {
    if t == crate::abi::MPI_UNDEFINED { t } else { map_in(t, &SPLITS, INVALID) }
}
pub fn lock_in(t: c_int) -> c_int {
    map_in(t, &LOCKS, INVALID)
}
/// Maps the bits of `v` present in `pairs`; other bits pass unchanged.
fn bits(v: c_int, pairs: &[(c_int, c_int)], out_dir: bool) -> c_int {
    let mut out = v;
    for &(a, b) in pairs {
        out &= !(if out_dir { b } else { a });
    }
    for &(a, b) in pairs {
        let (from, to) = if out_dir { (b, a) } else { (a, b) };
        if v & from != 0 {
            out |= to;
        }
    }
    out
}
pub fn assert_in(a: c_int) -> c_int {
    bits(a, &ASSERTS, false)
}
pub fn amode_in(a: c_int) -> c_int {
    bits(a, &AMODES, false)
}
pub fn amode_out(a: c_int) -> c_int {
    bits(a, &AMODES, true)
}
pub fn whence_in(w: c_int) -> c_int {
    map_in(w, &WHENCES, INVALID)
}
pub fn order_in(o: c_int) -> c_int {
    map_in(o, &ORDERS, INVALID)
}
pub fn distrib_in(d: c_int) -> c_int {
    map_in(d, &DISTRIBS, INVALID)
}
pub fn darg_in(d: c_int) -> c_int {
    map_in(d, &DARGS, d)
}
pub fn typeclass_in(t: c_int) -> c_int {
    map_in(t, &TYPECLASSES, INVALID)
}
/// Open MPI numbers combiners in MPI-3.1's order; MPICH's from include/mpi.h.
pub fn combiner_out(c: c_int) -> c_int {
    map_out(c, &COMBINERS)
}
/// Predefined attribute keys are 0..11 in Open MPI; a user key (MPICH's numbering) passes.
pub fn keyval_in(k: c_int) -> c_int {
    map_in(k, &KEYVALS, k)
}
pub fn keyval_out(k: c_int) -> c_int {
    map_out(k, &KEYVALS)
}

/// Error codes go out as their class, as Open MPI returns them (programs compare a code with
/// `MPI_ERR_RANK` & co.); the detailed message was already given to the error handler.
/// User classes and codes (MPI_Add_error_class/code) are the same numbers in both.
const USER_BASE: c_int = crate::ffi::error_codes::USER_CLASS_BASE;
#[inline]
pub fn code_out(c: c_int) -> c_int {
    if c == 0 || !(0..USER_BASE).contains(&c) {
        return c;
    }
    let class = ERR_TO_OMPI[(c & 0x7f) as usize];
    if class < 0 { c } else { class }
}
pub fn code_in(c: c_int) -> c_int {
    if !(0..USER_BASE).contains(&c) {
        return c;
    }
    match ERR_TO_OMPI.iter().position(|&a| a == c) {
        Some(m) => m as c_int,
        None => c,
    }
}

/// `MPI_UNWEIGHTED` (2) and `MPI_WEIGHTS_EMPTY` (3) to MPICH's data-symbol sentinels.
pub fn weights_in<T>(p: *mut T) -> *mut T {
    match p as usize {
        2 => crate::ffi::data_symbols::MPI_UNWEIGHTED.0 as *mut T,
        3 => crate::ffi::data_symbols::MPI_WEIGHTS_EMPTY.0 as *mut T,
        _ => p,
    }
}
pub fn weights_in_const<T>(p: *const T) -> *const T {
    weights_in(p as *mut T)
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

/// Window attributes whose values are constants (flavor, model): the attribute points at the
/// MPICH value, so point it at Open MPI's.
static FLAVOR_VALUES: [c_int; 4] = [FLAVORS[0].0, FLAVORS[1].0, FLAVORS[2].0, FLAVORS[3].0];
static MODEL_VALUES: [c_int; 2] = [MODELS[0].0, MODELS[1].0];
/// # Safety
/// Arguments as MPI_Win_get_attr's after a successful call.
pub unsafe fn win_attr_out(keyval: c_int, val: *mut c_void, flag: *mut c_int) {
    if val.is_null() || flag.is_null() || unsafe { *flag } == 0 {
        return;
    }
    let slot = val as *mut *const c_int;
    // SAFETY: after a successful MPI_Win_get_attr with flag set, `*slot` is the attribute; for
    // these two predefined keyvals it points at the value (a user keyval's is any word: not
    // dereferenced).
    unsafe {
        if keyval == KEYVALS[10].0 {
            let v = **slot;
            if let Some(i) = FLAVORS.iter().position(|p| p.1 == v) {
                *slot = &FLAVOR_VALUES[i];
            }
        } else if keyval == KEYVALS[11].0 {
            let v = **slot;
            if let Some(i) = MODELS.iter().position(|p| p.1 == v) {
                *slot = &MODEL_VALUES[i];
            }
        }
    }
}

/// The communicator attributes whose values are ranks (MPI_HOST, MPI_IO): MPI_PROC_NULL and
/// MPI_ANY_SOURCE differ between the ABIs, so point the attribute at Open MPI's value.
/// # Safety
/// Arguments as MPI_Comm_get_attr's after a successful call.
pub unsafe fn comm_attr_out(keyval: c_int, val: *mut c_void, flag: *mut c_int) {
    if val.is_null() || flag.is_null() || unsafe { *flag } == 0 || (keyval != KEYVALS[1].0 && keyval != KEYVALS[2].0) {
        return;
    }
    let slot = val as *mut *const c_int;
    // SAFETY: after a successful get with flag set, a predefined rank attribute points at the
    // engine's int; the replacement points into the static RANKS table.
    unsafe {
        let v = **slot;
        if let Some(p) = RANKS.iter().find(|p| p.1 == v) {
            *slot = &p.0;
        }
    }
}

/// MPICH's MPI_COMBINER_DARRAY and MPI_COMBINER_SUBARRAY (include/mpi.h).
const MPICH_DARRAY: c_int = 14;
const MPICH_SUBARRAY: c_int = 13;
/// MPI_Type_get_contents of a darray or subarray returns MPICH's order and distribution
/// constants among its integers: give Open MPI's.
/// # Safety
/// `ints` is NULL or `max` writable ints filled by a successful MPI_Type_get_contents.
pub unsafe fn contents_out(datatype: c_int, max: usize, ints: *mut c_int, _large: bool) {
    let (mut ni, mut na, mut nd, mut comb) = (0, 0, 0, 0);
    // SAFETY: local out-parameters.
    let rc = unsafe { crate::ffi::PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, &mut comb) };
    if rc != 0 || ints.is_null() || max < len(ni) {
        return;
    }
    // SAFETY: caller contract; `ni <= max`.
    let v = unsafe { std::slice::from_raw_parts_mut(ints, len(ni)) };
    let n = |v: &[c_int], i: usize| v.get(i).map_or(0, |&x| len(x));
    if comb == MPICH_DARRAY {
        // size, rank, ndims, gsizes, distribs, dargs, psizes, order
        let nd = n(v, 2);
        for i in 0..nd {
            if let Some(x) = v.get_mut(3 + nd + i) {
                *x = map_out(*x, &DISTRIBS);
            }
            if let Some(x) = v.get_mut(3 + 2 * nd + i) {
                *x = map_out(*x, &DARGS);
            }
        }
    }
    if comb == MPICH_DARRAY || comb == MPICH_SUBARRAY {
        if let Some(x) = v.last_mut() {
            *x = map_out(*x, &ORDERS);
        }
    }
}

/// MPICH's MPI_STATUS(ES)_IGNORE; Open MPI's is NULL.
const MPICH_IGNORE: usize = 1;

/// # Safety
/// `p` is NULL (MPI_STATUS_IGNORE) or a readable status.
#[inline]
pub unsafe fn status_in(p: *const OmpiStatus) -> MPI_Status {
    if p.is_null() {
        return MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
    }
    // SAFETY: caller contract; unaligned: a Fortran status (6 INTEGERs) is 4-aligned only.
    let s = unsafe { p.read_unaligned() };
    MPI_Status {
        count_lo: s.ucount as u32 as c_int,
        count_hi_and_cancelled: (((s.ucount >> 32) as c_int) << 1) | (s.cancelled & 1),
        MPI_SOURCE: rank_in(s.source),
        MPI_TAG: s.tag,
        MPI_ERROR: code_in(s.error),
    }
}
#[inline]
pub fn status_ptr(p: *const OmpiStatus, t: &mut MPI_Status) -> *mut MPI_Status {
    if p.is_null() { MPICH_IGNORE as *mut MPI_Status } else { t }
}
/// # Safety
/// `p` is NULL or a writable status.
#[inline]
pub unsafe fn status_out(p: *mut OmpiStatus, s: &MPI_Status) {
    if p.is_null() || !written(s) {
        return;
    }
    let mut o = ompi_status(s);
    if !error_written(s) {
        // SAFETY: caller contract (a status the call may read and write); unaligned as in status_in.
        o.error = unsafe { std::ptr::addr_of!((*p).error).read_unaligned() };
    }
    // SAFETY: caller contract; unaligned as in status_in.
    unsafe { p.write_unaligned(o) };
}
#[inline]
fn ompi_status(s: &MPI_Status) -> OmpiStatus {
    let hi = (s.count_hi_and_cancelled as u32 >> 1) as usize;
    OmpiStatus {
        source: rank_out(s.MPI_SOURCE),
        tag: s.MPI_TAG,
        error: code_out(s.MPI_ERROR),
        cancelled: s.count_hi_and_cancelled & 1,
        ucount: (hi << 32) | s.count_lo as u32 as usize,
    }
}
/// # Safety
/// As `crate::abi5::conv::handles_narrow_with`.
#[inline]
pub unsafe fn requests_narrow(p: *mut Handle, n: usize) -> *mut c_int {
    // SAFETY: caller contract.
    unsafe { handles_narrow_with(p, n, req_in) }
}
/// # Safety
/// As `crate::abi5::conv::handles_widen_with`.
#[inline]
pub unsafe fn requests_widen(p: *mut Handle, n: usize) {
    // SAFETY: caller contract.
    unsafe { handles_widen_with(p, n, req_out) }
}

/// Open MPI's requests and statuses as the engine's point-to-point entries write them
/// (`crate::ffi::layer`, what the generated wrappers of its `DIRECT` functions call).
pub struct Abi;

impl crate::ffi::layer::CAbi for Abi {
    type Handle = Handle;
    type Request = Handle;
    type Status = OmpiStatus;
    crate::ffi::layer::forward_conversions!();
    /// MPI_ERROR only if `set_error`, else left as the caller had it (as Open MPI 4.1's single
    /// completions do: ompi_request_default_wait keeps it; MPI 4.1 section 3.2.5).
    #[inline(always)]
    unsafe fn fill_status(p: *mut OmpiStatus, source: i32, st: &crate::p2p::Status, set_error: bool) {
        use std::ptr::addr_of_mut;
        // SAFETY: a writable status (caller contract); unaligned as in status_out.
        unsafe {
            addr_of_mut!((*p).source).write_unaligned(rank_out(source));
            addr_of_mut!((*p).tag).write_unaligned(st.tag);
            if set_error {
                addr_of_mut!((*p).error).write_unaligned(code_out(st.error.map_or(0, crate::error::ErrorClass::mpich)));
            }
            addr_of_mut!((*p).cancelled).write_unaligned(st.cancelled as c_int);
            addr_of_mut!((*p).ucount).write_unaligned(st.bytes as usize);
        }
    }
}

/// A function the layer does not convert yet: MPI_ERR_UNSUPPORTED_OPERATION through
/// MPI_COMM_SELF's handler, naming the function (docs/OMPI_ABI_UNSUPPORTED.md lists them).
#[allow(dead_code)] // the generated wrappers of functions not converted call it (none today)
pub fn unsupported(name: &'static str) -> c_int {
    let e = crate::error::err(crate::abi::MPI_ERR_UNSUPPORTED_OPERATION, format!("{name} is not supported by oxmpi's Open MPI ABI library (libmpi.so.40) yet; see docs/OMPI_ABI_UNSUPPORTED.md, or build with oxmpi's mpicc"));
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
                let mut a = OmpiStatus { error: 99, ..Default::default() };
                // SAFETY: as above.
                unsafe { <Abi as CAbi>::fill_status(&mut a, source, &st, set_error) };
                let mut b = OmpiStatus { error: 99, ..Default::default() };
                // SAFETY: as above.
                unsafe { status_out(&mut b, &m) };
                assert_eq!(bytes_of(&a), bytes_of(&b), "source {source} tag {tag} bytes {bytes} set_error {set_error}");
                assert_eq!(a.error == 99, !set_error, "MPI_ERROR is set only when asked");
            }
        }
        assert!(<Abi as CAbi>::status_ignored(std::ptr::null_mut()));
    }
    fn bytes_of(s: &OmpiStatus) -> Vec<u8> {
        // SAFETY: a plain struct of ints, no padding (asserted sizes).
        unsafe { std::slice::from_raw_parts(s as *const OmpiStatus as *const u8, std::mem::size_of::<OmpiStatus>()) }.to_vec()
    }

    #[test]
    fn rank_in_matches_the_table() {
        for &(o, m) in RANKS.iter() {
            assert_eq!(rank_in(o), m);
            assert_eq!(rank_out(m), o);
        }
        for r in [0, 1, 77, crate::abi::MPI_UNDEFINED] {
            assert_eq!(rank_in(r), r);
        }
        assert_eq!(rank_in(-3), INVALID);
        assert_eq!(rank_out(crate::abi::MPI_UNDEFINED), crate::abi::MPI_UNDEFINED);
    }
}
