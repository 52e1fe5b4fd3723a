//! The fast path of MPI_Put and MPI_Get: contiguous predefined data, the same datatype and count
//! on both sides, inside MPI_Win_lock_all, to a target whose window memory this rank maps (an
//! allocated window in processes mode, any window in threads mode). Such an operation is one
//! memcpy into or out of the target's memory; the general path (`super::ops::rma_on`) builds the
//! typed spans, takes the epoch lock and dispatches on the target, which cost several times the
//! copy of a few bytes (benches/rma_latency.c, 8 B: 0.16 us before this path).
//!
//! Anything else, including every error, goes to the general path (`None`), so the checks here
//! only decide whether the operation qualifies; the general path reports what is wrong.
use crate::abi::*;
use crate::instance::Instance;
use crate::osc::window::{Flavor, Target, Window};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::Ordering::Relaxed;

/// Runs a qualifying put (`get` false: `buf` into the target) or get (`buf` from the target):
/// Some(Ok) when done, None when the general path must run it.
///
/// # Safety
/// `buf` must hold `count` elements of `dt`, readable for a put, writable for a get.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) unsafe fn put_get(u: &Instance, w: &Window, get: bool, buf: *mut c_void, count: i64, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: i64, tdt: MPI_Datatype) -> Option<()> {
    if tdt != dt || tcount != count || count <= 0 || buf.is_null() || disp < 0 || rank < 0 || rank as usize >= w.size {
        return None;
    }
    if !w.lock_all_open.load(Relaxed) || w.flavor == Flavor::Dynamic {
        return None;
    }
    let t = rank as usize;
    if w.far[t] {
        return None;
    }
    let crate::ffi::check::DtypeRef::Static(ty) = crate::ffi::check::committed_dtype_ref(dt).ok()? else { return None };
    if super::ops::contiguous(&ty.layout, count as usize) != Some(0) {
        return None;
    }
    let bytes = (count as usize).checked_mul(ty.layout.size)?;
    let (size, unit) = w.extent_of(t);
    let off = (disp as u64).checked_mul(unit)?;
    if off.checked_add(bytes as u64)? > size || u.seg.is_failed(w.comm.world_rank(t)) {
        return None;
    }
    let Target::Direct(base) = w.target(t) else { return None };
    crate::monitoring::record_osc(u.rank, u.size, w.comm.world_rank(t), bytes, !get);
    let at = (base as *mut u8).wrapping_add(off as usize);
    // SAFETY: `at` is `bytes` in range of the target's window memory, mapped in this process
    // (`Target::Direct`, range-checked above); `buf` holds them (caller). The two may overlap
    // only when a rank targets its own window with its own window memory, hence `copy`.
    unsafe {
        if get {
            std::ptr::copy(at, buf as *mut u8, bytes);
        } else {
            std::ptr::copy(buf as *const u8, at, bytes);
        }
    }
    Some(())
}
