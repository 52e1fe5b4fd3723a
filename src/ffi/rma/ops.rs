//! RMA communication calls (MPI 4.1 section 12.3): put, get, the accumulate family, their
//! request-based forms and the `_c` variants. Argument checks here; the data movement is
//! `crate::osc::access` (on this node) or `crate::osc::remote` (another node). Every operation
//! has completed when the call returns (`crate::osc`), so the request of an `MPI_R*` call is
//! complete at once.
use crate::ffi::check;
use crate::ffi::pointer_args::out;
use crate::ffi::families::{CountArg, Launch};
use crate::ffi::rma::win_of;
use crate::export;
use crate::abi::*;
use crate::datatype::{Layout, TypeRepr};
use crate::error::{err, MpiResult};
use crate::osc::access::{self, TargetSpan};
use crate::osc::{remote, wire};
use crate::datatype::basic::Basic;
use crate::osc::window::{Flavor, Target, Window};
use crate::op::{Op, Reduction};
use std::borrow::Cow;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// What an operation does at the target.
#[derive(Clone, Copy)]
enum Kind {
    Put,
    Get,
    Acc(MPI_Op),
    /// Get_accumulate: the old target data goes to (result, count, datatype).
    GetAcc(MPI_Op, *mut c_void, i64, MPI_Datatype),
}

/// A typed buffer of the origin side.
struct Typed {
    p: *mut c_void,
    t: check::DtypeRef,
    count: usize,
}

impl Typed {
    fn new(p: *const c_void, count: i64, dt: MPI_Datatype, what: &str) -> MpiResult<Typed> {
        if count < 0 {
            return Err(err(MPI_ERR_COUNT, format!("invalid {what} count {count}: must be non-negative")));
        }
        let t = check::committed_dtype_ref(dt)?;
        let count = count as usize;
        let bytes = count.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("{what} count {count} overflows")))?;
        // The target side has no buffer here (NULL): its address comes from the window.
        if p.is_null() && bytes > 0 && t.leaf_id.is_some() && what != "target" {
            return Err(err(MPI_ERR_BUFFER, format!("{what} buffer is NULL with {bytes} bytes of data")));
        }
        Ok(Typed { p: p as *mut c_void, t, count })
    }

    fn bytes(&self) -> usize {
        self.count * self.t.layout.size
    }

    /// The buffer's bytes are one range at this address.
    fn contiguous(&self) -> Option<*mut u8> {
        contiguous(&self.t.layout, self.count).map(|off| (self.p as *mut u8).wrapping_offset(off as isize))
    }

    /// The data as packed bytes (borrowed when contiguous).
    ///
    /// # Safety
    /// The buffer must hold `count` readable elements.
    unsafe fn packed(&self) -> Cow<'_, [u8]> {
        let n = self.bytes();
        if let Some(p) = self.contiguous() {
            // SAFETY: per contract, `n` readable bytes there.
            return Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, n) });
        }
        let mut v = vec![0u8; n];
        // SAFETY: per contract; `v` holds the packed bytes.
        unsafe { crate::datatype::copy(&self.t.layout, self.p as *mut u8, self.count, v.as_mut_ptr(), n, 0, true) };
        Cow::Owned(v)
    }

    /// Unpacks `data` into the buffer.
    ///
    /// # Safety
    /// The buffer must hold `count` writable elements, not overlapping `data`.
    unsafe fn unpack(&self, data: &[u8]) {
        // SAFETY: per contract.
        unsafe { crate::datatype::copy(&self.t.layout, self.p as *mut u8, self.count, data.as_ptr() as *mut u8, data.len(), 0, false) };
    }
}

/// Offset of the only block when `count` elements of `l` are one contiguous range.
pub(super) fn contiguous(l: &Layout, count: usize) -> Option<i64> {
    if l.blocks.is_empty() || count == 0 {
        return Some(0);
    }
    (l.blocks.len() == 1 && (count == 1 || l.size as i64 == l.extent())).then(|| l.blocks.get(0).0)
}

/// The element-wise reduction of predefined `op` on the target's datatype (MPI 4.1 section
/// 12.3.4: the target datatype's basic elements, all of one predefined type), and that basic
/// type's layout when its packed size differs from the kernels' element (a C pair type with a
/// gap: `crate::osc::access::accumulate` then combines padded structs).
fn element_reduction(op: MPI_Op, dt: MPI_Datatype, t: &TypeRepr) -> MpiResult<(Reduction, Option<Arc<TypeRepr>>, Basic)> {
    if crate::ffi::coll::op::predefined(op).is_err() {
        return Err(err(MPI_ERR_OP, format!("invalid op 0x{:08x} for an accumulate: only predefined ops (and MPI_REPLACE, MPI_NO_OP) are allowed", op as u32)));
    }
    let elem = if t.leaf_id.is_some() {
        dt
    } else {
        let mut leaf = None;
        if !crate::ffi::coll::args::uniform_leaf(t, &mut leaf) {
            return Err(err(MPI_ERR_TYPE, format!("the target datatype 0x{:08x} of an accumulate mixes basic types; it must consist of one predefined type", dt as u32)));
        }
        leaf.unwrap_or(crate::abi::datatypes::MPI_INT)
    };
    let red = crate::ffi::coll::op::reduction(op, elem)?;
    let basic = crate::abi::datatypes::basic(elem).ok_or_else(|| err(MPI_ERR_TYPE, format!("invalid datatype 0x{:08x} (not a predefined datatype)", elem as u32)))?;
    let et = check::dtype(elem)?;
    Ok((red, (et.layout.size != red.size).then_some(et), basic))
}

fn window_rank(w: &Window, rank: c_int) -> MpiResult<usize> {
    if rank < 0 || rank as usize >= w.size {
        return Err(err(MPI_ERR_RANK, format!("invalid target rank {rank}: the window's group has {} ranks", w.size)));
    }
    Ok(rank as usize)
}

/// Checks that an operation on `tt` at `disp` of target `t` may run now (the epoch, the range):
/// the window offset of its target elements (an address for a dynamic window).
fn target_offset(w: &Window, t: usize, disp: MPI_Aint, tt: &Typed, passive_only: bool) -> MpiResult<i128> {
    if !w.lock_all_open.load(std::sync::atomic::Ordering::Relaxed) && !w.epochs().may_access(t, passive_only) {
        let what = if passive_only { "a passive-target epoch (MPI_Win_lock/lock_all): request-based operations need one" } else { "an access epoch (fence, MPI_Win_start or a lock)" };
        return Err(err(MPI_ERR_RMA_SYNC, format!("operation on target rank {t} outside {what}")));
    }
    w.check_alive(check::universe()?, t)?;
    let (_, unit) = w.extent_of(t);
    let off: i128 = if w.flavor == Flavor::Dynamic { disp as i128 } else { disp as i128 * unit as i128 };
    if disp < 0 && w.flavor != Flavor::Dynamic {
        return Err(err(MPI_ERR_DISP, format!("invalid target displacement {disp}: must be non-negative")));
    }
    let l = &tt.t.layout;
    if tt.count > 0 && l.size > 0 {
        let lo = off + l.true_lb as i128;
        let hi = off + (tt.count as i128 - 1) * l.extent() as i128 + l.true_ub as i128;
        w.check_range(&check::universe()?.engine, t, lo, hi)?;
    }
    Ok(off)
}

/// The target elements of an operation (`off` from `target_offset`) on this node.
fn span<'a>(w: &Window, t: usize, off: i128, tt: &'a Typed) -> MpiResult<TargetSpan<'a>> {
    let l = &tt.t.layout;
    let target = w.target(t);
    let base = match target {
        Target::Direct(b) => b,
        Target::Remote { base, .. } => base as usize,
    };
    Ok(TargetSpan { engine: &check::universe()?.engine, target, addr: base.wrapping_add(off as usize), layout: l, count: tt.count })
}

/// Every RMA communication call.
///
/// # Safety
/// The buffers must hold their elements as MPI requires (readable origin, writable result).
#[allow(clippy::too_many_arguments)]
unsafe fn rma(win: MPI_Win, kind: Kind, origin: *const c_void, ocount: i64, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: i64, tdt: MPI_Datatype, passive_only: bool) -> MpiResult {
    let (u, w) = win_of(win)?;
    let get = match kind {
        Kind::Put => Some(false),
        Kind::Get => Some(true),
        _ => None,
    };
    if let Some(get) = get {
        // SAFETY: per this function's contract (the origin buffer holds its elements).
        if unsafe { super::fast::put_get(u, &w, get, origin as *mut c_void, ocount, odt, rank, disp, tcount, tdt) }.is_some() {
            return Ok(());
        }
    }
    let no_op = matches!(kind, Kind::GetAcc(op, ..) if op == crate::abi::ops::op_handle(Op::NoOp));
    let o = if no_op { None } else { Some(Typed::new(origin, ocount, odt, "origin")?) };
    let tt = Typed::new(std::ptr::null(), tcount, tdt, "target")?;
    let red = match kind {
        Kind::Acc(op) | Kind::GetAcc(op, ..) => match element_reduction(op, tdt, &tt.t) {
            // An empty access combines nothing: like MPICH, any predefined op goes (mpi4py
            // issues MPI_SUM on zero MPI_BYTEs); MPI_REPLACE stands in for it.
            Err(e) if tt.count == 0 && e.class == MPI_ERR_OP && crate::ffi::coll::op::predefined(op).is_ok() => {
                Some((crate::op::Reduction::new(Op::Replace, Basic::Byte)?, None, Basic::Byte))
            }
            r => Some(r?),
        },
        _ => None,
    };
    let res = match kind {
        Kind::GetAcc(_, p, n, dt) => Some(Typed::new(p, n, dt, "result")?),
        _ => None,
    };
    if rank == MPI_PROC_NULL {
        return Ok(());
    }
    let t = window_rank(&w, rank)?;
    if let Some(o) = &o {
        if o.bytes() != tt.bytes() {
            return Err(err(MPI_ERR_TYPE, format!("the origin data ({} bytes) and the target data ({} bytes) differ in size: their type signatures must match", o.bytes(), tt.bytes())));
        }
    }
    if let Some(r) = &res {
        if r.bytes() != tt.bytes() {
            return Err(err(MPI_ERR_TYPE, format!("the result buffer ({} bytes) and the target data ({} bytes) differ in size", r.bytes(), tt.bytes())));
        }
    }
    let off = target_offset(&w, t, disp, &tt, passive_only)?;
    if let Ok(u) = crate::instance::get() {
        let peer = w.comm.world_rank(t);
        let to_target = !matches!(kind, Kind::Get) && o.is_some();
        let from_target = matches!(kind, Kind::Get) || res.is_some();
        for (moved, sent) in [(to_target, true), (from_target, false)] {
            if moved {
                crate::monitoring::record_osc(u.rank, u.size, peer, tt.bytes(), sent);
            }
        }
    }
    if w.far[t] {
        // SAFETY: per this function's contract.
        return unsafe { rma_far(&w, t, off, kind, o.as_ref(), &tt, red, res) };
    }
    let s = span(&w, t, off, &tt)?;
    match kind {
        Kind::Put => {
            let o = o.expect("put has an origin");
            // SAFETY: the origin holds its elements (caller); the span was range-checked.
            unsafe { s.write(&o.packed()) }
        }
        Kind::Get => {
            let o = o.expect("get has an origin");
            // SAFETY: as for put, the origin being writable.
            unsafe {
                match o.contiguous() {
                    Some(p) => s.read(std::slice::from_raw_parts_mut(p, o.bytes())),
                    None => {
                        let mut v = vec![0u8; o.bytes()];
                        s.read(&mut v)?;
                        o.unpack(&v);
                        Ok(())
                    }
                }
            }
        }
        Kind::Acc(_) | Kind::GetAcc(..) => {
            let (red, elem, _) = red.expect("accumulates have a reduction");
            let elem = elem.as_ref().map(|e| &e.layout);
            let n = tt.bytes().checked_div(elem.map_or(red.size, |l| l.size)).unwrap_or(0);
            let data: Cow<[u8]> = match &o {
                // SAFETY: the origin holds its elements (caller).
                Some(o) => unsafe { o.packed() },
                None => Cow::Owned(Vec::new()),
            };
            let mut old = Vec::new();
            // SAFETY: range-checked span; `data` holds n elements unless the op is MPI_NO_OP.
            unsafe { access::accumulate(&w, t, &s, &red, n, &data, res.as_ref().map(|_| &mut old), elem)? };
            if let Some(r) = res {
                // SAFETY: the result buffer holds its elements, writable (caller).
                unsafe { r.unpack(&old) };
            }
            Ok(())
        }
    }
}

/// An operation on target `t` of another node (`crate::osc::remote`), at window offset `off`.
///
/// # Safety
/// As `rma`.
#[allow(clippy::too_many_arguments)]
unsafe fn rma_far(w: &Window, t: usize, off: i128, kind: Kind, o: Option<&Typed>, tt: &Typed, red: Option<(Reduction, Option<Arc<TypeRepr>>, Basic)>, res: Option<Typed>) -> MpiResult {
    let l = &tt.t.layout;
    match kind {
        Kind::Put => {
            let o = o.expect("put has an origin");
            let mut r = remote::request(wire::Kind::Put, off, l, tt.count);
            // SAFETY: the origin holds its elements (caller).
            r.data = unsafe { o.packed() }.into_owned();
            remote::call(&check::universe()?.engine, w, t, r, 0).map(drop)
        }
        Kind::Get => {
            let o = o.expect("get has an origin");
            let d = remote::call(&check::universe()?.engine, w, t, remote::request(wire::Kind::Get, off, l, tt.count), o.bytes())?;
            if d.len() != o.bytes() {
                return Err(remote::size_mismatch(d.len(), o.bytes()));
            }
            // SAFETY: the origin holds its elements, writable (caller).
            unsafe {
                match o.contiguous() {
                    Some(p) => std::ptr::copy_nonoverlapping(d.as_ptr(), p, d.len()),
                    None => o.unpack(&d),
                }
            }
            Ok(())
        }
        Kind::Acc(_) | Kind::GetAcc(..) => {
            let (red, elem, basic) = red.expect("accumulates have a reduction");
            let elem = elem.as_ref().map(|e| &e.layout);
            let mut r = remote::request(wire::Kind::Acc, off, l, tt.count);
            r.op = red.op().ok_or_else(|| err(MPI_ERR_OP, "accumulates take predefined ops only"))? as u8;
            r.basic = basic as u8;
            r.n = tt.bytes().checked_div(elem.map_or(red.size, |l| l.size)).unwrap_or(0) as u64;
            r.flag = res.is_some();
            if let Some(el) = elem {
                r.elem = remote::blocks(el, 1);
                r.elem_extent = red.size as u64;
            }
            // SAFETY: the origin holds its elements (caller).
            r.data = o.map(|o| unsafe { o.packed() }.into_owned()).unwrap_or_default();
            let want = if res.is_some() { tt.bytes() } else { 0 };
            let old = remote::call(&check::universe()?.engine, w, t, r, want)?;
            if let Some(rb) = res {
                if old.len() != want {
                    return Err(remote::size_mismatch(old.len(), want));
                }
                // SAFETY: the result buffer holds its elements, writable (caller).
                unsafe { rb.unpack(&old) };
            }
            Ok(())
        }
    }
}

/// A request-based operation: runs it, then hands out a request that is already complete.
///
/// # Safety
/// As `rma`; `request` must be NULL or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn rma_request(win: MPI_Win, kind: Kind, origin: *const c_void, ocount: i64, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: i64, tdt: MPI_Datatype, request: *mut MPI_Request) -> MpiResult {
    let request = out(request, "request")?;
    // SAFETY: per this function's contract.
    unsafe { rma(win, kind, origin, ocount, odt, rank, disp, tcount, tdt, true)? };
    let u = check::universe()?;
    let id = u.engine.new_external();
    u.engine.complete_external(id, None);
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *request = check::req_handle(id) };
    Ok(())
}

/// Runs an operation in the form the user called: at once (`MPI_Put`), or request-based
/// (`MPI_Rput`). RMA operations have no persistent form.
///
/// # Safety
/// As `rma`; a request pointer must be NULL or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(win: MPI_Win, kind: Kind, origin: *const c_void, ocount: i64, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: i64, tdt: MPI_Datatype, how: Launch) -> MpiResult {
    // SAFETY (both calls): the buffers and the request are as `rma` and `rma_request` need (this
    // function's contract).
    match how {
        Launch::Blocking => unsafe { rma(win, kind, origin, ocount, odt, rank, disp, tcount, tdt, false) },
        Launch::Nonblocking(request) => unsafe { rma_request(win, kind, origin, ocount, odt, rank, disp, tcount, tdt, request) },
        Launch::Persistent(_) => Err(err(MPI_ERR_INTERN, "RMA operations have no persistent form")),
    }
}

// The cores of the RMA families (src/ffi/families.rs).

/// MPI_Put, MPI_Rput and their `_c` forms.
///
/// # Safety
/// As `rma`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn put(origin_addr: *const c_void, origin_count: impl CountArg, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: impl CountArg, target_datatype: MPI_Datatype, win: MPI_Win, how: Launch) -> MpiResult {
    // SAFETY: the buffers are as `rma` needs (this function's contract).
    unsafe { launch(win, Kind::Put, origin_addr, origin_count.get(), origin_datatype, target_rank, target_disp, target_count.get(), target_datatype, how) }
}

/// MPI_Get, MPI_Rget and their `_c` forms.
///
/// # Safety
/// As `rma`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn get(origin_addr: *mut c_void, origin_count: impl CountArg, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: impl CountArg, target_datatype: MPI_Datatype, win: MPI_Win, how: Launch) -> MpiResult {
    // SAFETY: the buffers are as `rma` needs (this function's contract).
    unsafe { launch(win, Kind::Get, origin_addr, origin_count.get(), origin_datatype, target_rank, target_disp, target_count.get(), target_datatype, how) }
}

/// MPI_Accumulate, MPI_Raccumulate and their `_c` forms.
///
/// # Safety
/// As `rma`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn accumulate(origin_addr: *const c_void, origin_count: impl CountArg, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: impl CountArg, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, how: Launch) -> MpiResult {
    // SAFETY: the buffers are as `rma` needs (this function's contract).
    unsafe { launch(win, Kind::Acc(op), origin_addr, origin_count.get(), origin_datatype, target_rank, target_disp, target_count.get(), target_datatype, how) }
}

/// MPI_Get_accumulate, MPI_Rget_accumulate and their `_c` forms.
///
/// # Safety
/// As `rma`; the result buffer holds `result_count` writable elements.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn get_accumulate(origin_addr: *const c_void, origin_count: impl CountArg, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: impl CountArg, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: impl CountArg, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, how: Launch) -> MpiResult {
    let kind = Kind::GetAcc(op, result_addr, result_count.get(), result_datatype);
    // SAFETY: the buffers are as `rma` needs (this function's contract).
    unsafe { launch(win, kind, origin_addr, origin_count.get(), origin_datatype, target_rank, target_disp, target_count.get(), target_datatype, how) }
}

export! {
    fn MPI_Fetch_and_op / PMPI_Fetch_and_op (origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) on win win => {
        if check::datatype_size(datatype).is_err() {
            check::committed_dtype(datatype)?;
            return Err(err(MPI_ERR_TYPE, "MPI_Fetch_and_op needs a predefined datatype"));
        }
        // SAFETY: the origin and result buffers hold one element of `datatype` (caller contract).
        unsafe { rma(win, Kind::GetAcc(op, result_addr, 1, datatype), origin_addr, 1, datatype, target_rank, target_disp, 1, datatype, false) }
    }
    fn MPI_Compare_and_swap / PMPI_Compare_and_swap (origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, win: MPI_Win) on win win => {
        let (_, w) = win_of(win)?;
        let size = check::datatype_size(datatype).map_err(|_| err(MPI_ERR_TYPE, "MPI_Compare_and_swap needs a predefined integer, logical or byte datatype"))?;
        // The datatypes MPI 4.1 section 12.3.5 allows: integers, logicals (MPI_C_BOOL,
        // MPI_LOGICAL), multi-language types, bytes (and no pairs or reals).
        let allowed = crate::abi::datatypes::basic(datatype).is_some_and(crate::op::compare_and_swap_allowed);
        if !allowed {
            return Err(err(MPI_ERR_TYPE, format!("MPI_Compare_and_swap on {}: only integer, logical and byte datatypes are allowed", check::datatype_name(datatype))));
        }
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        for (p, what) in [(origin_addr, "origin_addr"), (compare_addr, "compare_addr"), (result_addr as *const c_void, "result_addr")] {
            if p.is_null() {
                return Err(err(MPI_ERR_BUFFER, format!("{what} is NULL")));
            }
        }
        let t = window_rank(&w, target_rank)?;
        let tt = Typed::new(std::ptr::null(), 1, datatype, "target")?;
        let off = target_offset(&w, t, target_disp, &tt, false)?;
        let (u, peer) = (check::universe()?, w.comm.world_rank(t));
        crate::monitoring::record_osc(u.rank, u.size, peer, size, true);
        crate::monitoring::record_osc(u.rank, u.size, peer, size, false);
        if w.far[t] {
            let mut r = remote::request(wire::Kind::Cas, off, &tt.t.layout, 1);
            // SAFETY: the origin and compare buffers hold one element each (MPI contract); checked non-NULL.
            unsafe {
                r.data.extend_from_slice(std::slice::from_raw_parts(origin_addr as *const u8, size));
                r.data.extend_from_slice(std::slice::from_raw_parts(compare_addr as *const u8, size));
            }
            let old = remote::call(&u.engine, &w, t, r, size)?;
            if old.len() != size {
                return Err(remote::size_mismatch(old.len(), size));
            }
            // SAFETY: the result buffer holds one element (MPI contract); checked non-NULL.
            unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), result_addr as *mut u8, size) };
            return Ok(());
        }
        let s = span(&w, t, off, &tt)?;
        // SAFETY: the three buffers hold one element each (MPI contract); checked non-NULL.
        unsafe {
            let o = std::slice::from_raw_parts(origin_addr as *const u8, size);
            let c = std::slice::from_raw_parts(compare_addr as *const u8, size);
            let mut r = vec![0u8; size];
            access::compare_and_swap(&w, t, &s, o, c, &mut r)?;
            std::ptr::copy_nonoverlapping(r.as_ptr(), result_addr as *mut u8, size);
        }
        Ok(())
    }
}
