//! Argument checks and buffer plans shared by the collective FFI functions: roots, buffers,
//! MPI_IN_PLACE, aliasing, and how a typed user buffer becomes the contiguous bytes the
//! algorithms move (directly, or packed into / unpacked from a temporary).
use super::check;
use crate::abi::datatypes::PAIRS;
use crate::abi::*;
use crate::comm::Comm;
use crate::datatype::{LeafKind, TypeRepr};
use crate::error::{err, MpiResult};
use crate::coll::schedule::{Schedule, Step};
use crate::op::{Op, Reduction};
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

pub use crate::coll::inter::InterRoot;

pub use super::check::count;

pub fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE_ADDR
}

/// The root as a communicator rank: MPI_ERR_ROOT unless it is one.
pub fn root_rank(c: &Comm, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= c.size() {
        return Err(err(MPI_ERR_ROOT, format!("invalid root {root}: the communicator has {} ranks (0..{})", c.size(), c.size())));
    }
    Ok(root as usize)
}

/// The root argument of a rooted collective on an intercommunicator: MPI_ROOT, MPI_PROC_NULL, or
/// a rank of the remote group.
pub fn inter_root(c: &Comm, root: c_int) -> MpiResult<InterRoot> {
    match root {
        MPI_ROOT => Ok(InterRoot::Root),
        MPI_PROC_NULL => Ok(InterRoot::Idle),
        _ if root >= 0 && (root as usize) < c.peer_size() => Ok(InterRoot::Remote(root as usize)),
        _ => Err(err(MPI_ERR_ROOT, format!("invalid root {root} on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0..{})", c.peer_size()))),
    }
}

/// Checks one significant buffer of `bytes` bytes: not MPI_IN_PLACE, not NULL unless empty.
pub fn buffer(p: *const c_void, bytes: usize, what: &str) -> MpiResult {
    if in_place(p) {
        return Err(err(MPI_ERR_BUFFER, format!("MPI_IN_PLACE is not allowed as the {what} here")));
    }
    if bytes > 0 && p.is_null() {
        return Err(err(MPI_ERR_BUFFER, format!("invalid {what}: NULL with a non-empty message")));
    }
    Ok(())
}

/// MPI forbids aliased output arguments (MPI 4.1 section 2.6.1): the send and receive buffers of
/// one call must not overlap; MPI_IN_PLACE is the way to reduce in place.
pub fn no_alias(send: *const c_void, recv: *const c_void, bytes: usize) -> MpiResult {
    let (s, r) = (send as usize, recv as usize);
    if bytes > 0 && s < r.saturating_add(bytes) && r < s.saturating_add(bytes) {
        return Err(err(MPI_ERR_BUFFER, "the send and receive buffers overlap (aliased arguments); use MPI_IN_PLACE to reduce in place"));
    }
    Ok(())
}

/// The contribution of a reduction where MPI_IN_PLACE is allowed: `recvbuf` for MPI_IN_PLACE,
/// else `sendbuf`, checked and (for predefined types, whose extent is known to be dense) not
/// overlapping `recvbuf`.
pub fn send_or_in_place(sendbuf: *const c_void, recvbuf: *mut c_void, plan: &Plan) -> MpiResult<*const c_void> {
    if in_place(sendbuf) {
        return Ok(recvbuf as *const c_void);
    }
    plan.check(sendbuf, "send buffer")?;
    if !plan.derived {
        no_alias(sendbuf, recvbuf, plan.bytes)?;
    }
    Ok(sendbuf)
}

/// How a user buffer of a collective reaches the byte algorithms: contiguous bytes at an offset
/// from the buffer address (predefined and contiguous derived types), or packed into / unpacked
/// from a temporary (non-contiguous derived types).
pub enum Shape {
    Direct(isize),
    Staged(Arc<TypeRepr>, usize),
}

/// A checked buffer description: `bytes` contiguous bytes once packed.
pub struct Plan {
    pub shape: Shape,
    pub bytes: usize,
    /// A derived type: the buffer may be MPI_BOTTOM (NULL) with absolute displacements.
    pub derived: bool,
    /// For a user-defined op on a non-contiguous type: the temporary of a `Staged` plan keeps the
    /// type's native layout (element i's data at `i * extent` plus its offset from the true lower
    /// bound, which is this value) instead of packed bytes, because the user's function addresses
    /// the elements through the datatype.
    pub native_lb: Option<isize>,
}

impl Plan {
    pub fn new(count_: i64, datatype: MPI_Datatype) -> MpiResult<Plan> {
        let n = count(count_)?;
        if let Ok(size) = check::datatype_size(datatype) {
            let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(datatype))))?;
            return Ok(Plan { shape: Shape::Direct(0), bytes, derived: false, native_lb: None });
        }
        let t = check::committed_dtype(datatype)?;
        let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of datatype 0x{:08x} overflows", datatype as u32)))?;
        Ok(match t.layout.contiguous_span(n) {
            Some((off, b)) => Plan { shape: Shape::Direct(off as isize), bytes: b, derived: true, native_lb: None },
            None => Plan { shape: Shape::Staged(t, n), bytes, derived: true, native_lb: None },
        })
    }

    /// The plan of `count` elements of derived type `t` for a user-defined op: the buffer in the
    /// type's native layout, `count` elements of `extent` bytes each (from the true lower bound).
    /// Direct when the elements are contiguous and gap-free, else staged through a temporary.
    fn native(n: usize, t: Arc<TypeRepr>) -> MpiResult<Plan> {
        let l = &t.layout;
        let extent = l.extent();
        if n > 0 && l.size > 0 && (extent <= 0 || l.true_extent() > extent) {
            return Err(err(MPI_ERR_TYPE, format!("a user-defined op cannot combine this datatype: its elements overlap (extent {extent}, true extent {})", l.true_extent())));
        }
        let extent = extent.max(0) as usize;
        let bytes = n.checked_mul(extent).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of a datatype of extent {extent} overflows")))?;
        if l.size == 0 || n == 0 {
            return Ok(Plan { shape: Shape::Direct(0), bytes: 0, derived: true, native_lb: None });
        }
        if l.blocks.len() == 1 && l.size == extent {
            return Ok(Plan { shape: Shape::Direct(l.true_lb as isize), bytes, derived: true, native_lb: None });
        }
        let lb = l.true_lb as isize;
        Ok(Plan { shape: Shape::Staged(t, n), bytes, derived: true, native_lb: Some(lb) })
    }

    /// Checks one significant user buffer: not MPI_IN_PLACE, not NULL for a predefined type.
    pub fn check(&self, p: *const c_void, what: &str) -> MpiResult {
        if self.derived && !in_place(p) {
            return Ok(());
        }
        buffer(p, self.bytes, what)
    }

    /// The contiguous bytes of user buffer `p`: its own address (moved by the type's offset), or a
    /// packed copy left in `tmp`. With `fill` false a staged buffer is not packed (receive only).
    ///
    /// # Safety
    /// `p` must hold the plan's elements (readable when `fill`).
    pub unsafe fn bytes_of(&self, p: *const c_void, tmp: &mut Vec<u8>, fill: bool) -> *mut u8 {
        match &self.shape {
            Shape::Direct(off) => (p as *mut u8).wrapping_offset(*off),
            Shape::Staged(t, n) => {
                *tmp = vec![0u8; self.bytes];
                if let (Some(lb), true) = (self.native_lb, fill) {
                    // Through a packed copy: the user's buffer is read only where the type has
                    // data (its holes may not even be mapped, with MPI_BOTTOM).
                    let mut packed = vec![0u8; *n * t.layout.size];
                    // SAFETY: `p` holds `n` elements of `t`; `tmp - lb` is where the elements of
                    // `t` fall inside tmp's `n * extent` bytes (checked in `Plan::native`).
                    unsafe {
                        crate::datatype::copy(&t.layout, p as *mut u8, *n, packed.as_mut_ptr(), packed.len(), 0, true);
                        crate::datatype::copy(&t.layout, tmp.as_mut_ptr().wrapping_offset(-lb), *n, packed.as_mut_ptr(), packed.len(), 0, false);
                    }
                } else if fill {
                    // SAFETY: `p` holds `n` elements of `t` (caller); tmp has `n * size` bytes.
                    unsafe { crate::datatype::copy(&t.layout, p as *mut u8, *n, tmp.as_mut_ptr(), self.bytes, 0, true) };
                }
                tmp.as_mut_ptr()
            }
        }
    }

    /// Unpacks `tmp` (from `bytes_of`) into user buffer `p`; nothing to do for direct buffers.
    ///
    /// # Safety
    /// `p` must hold the plan's elements, writable, disjoint from `tmp`.
    pub unsafe fn unpack(&self, p: *mut c_void, tmp: &mut [u8]) {
        if let Shape::Staged(t, n) = &self.shape {
            if let Some(lb) = self.native_lb {
                let mut packed = vec![0u8; *n * t.layout.size];
                // SAFETY: as in `bytes_of`, in the other direction; only the type's data bytes of
                // `p` are written.
                unsafe {
                    crate::datatype::copy(&t.layout, tmp.as_mut_ptr().wrapping_offset(-lb), *n, packed.as_mut_ptr(), packed.len(), 0, true);
                    crate::datatype::copy(&t.layout, p as *mut u8, *n, packed.as_mut_ptr(), packed.len(), 0, false);
                }
                return;
            }
            // SAFETY: per this function's contract.
            unsafe { crate::datatype::copy(&t.layout, p as *mut u8, *n, tmp.as_mut_ptr(), tmp.len(), 0, false) };
        }
    }
}

/// A user buffer address a schedule's local step keeps.
#[derive(Clone, Copy)]
pub struct UserPtr(pub *mut c_void);
// SAFETY: the buffer is the application's, which MPI forbids it to touch until the collective
// completes; the schedule's steps run on one thread at a time.
unsafe impl Send for UserPtr {}

/// The contiguous bytes of user buffer `p` in schedule `s`: its own address, or a staging buffer
/// of the schedule, packed by a local step of the current round when `fill` (every run packs
/// afresh: a persistent collective's buffer may change between starts).
pub fn stage(plan: &Arc<Plan>, s: &mut Schedule, p: *const c_void, fill: bool) -> *mut u8 {
    let Shape::Staged(..) = plan.shape else {
        // SAFETY: a plan of its own buffer: the empty Vec is not used by a direct shape.
        return unsafe { plan.bytes_of(p, &mut Vec::new(), false) };
    };
    let t = s.scratch(plan.bytes);
    if fill {
        let (plan, user, dst) = (plan.clone(), UserPtr(p as *mut c_void), UserPtr(t as *mut c_void));
        s.push(Step::Local(Box::new(move || {
            let (user, dst) = (user, dst);
            let mut tmp = Vec::new();
            // SAFETY: the user buffer holds the plan's elements (checked at the call); the
            // staging buffer holds `plan.bytes` bytes.
            unsafe {
                let src = plan.bytes_of(user.0, &mut tmp, true);
                std::ptr::copy_nonoverlapping(src, dst.0 as *mut u8, plan.bytes);
            }
        })));
    }
    t
}

/// Unpacks staging buffer `t` (from `stage`) into user buffer `p` in a last round of `s`.
pub fn unstage(plan: &Arc<Plan>, s: &mut Schedule, p: *mut c_void, t: *mut u8) {
    if let Shape::Staged(..) = plan.shape {
        s.round();
        unstage_now(plan, s, p, t);
    }
}

/// `unstage` in the current round of `s` (which the caller started after the one that filled
/// `t`): for several buffers unpacked in one last round.
pub fn unstage_now(plan: &Arc<Plan>, s: &mut Schedule, p: *mut c_void, t: *mut u8) {
    if let Shape::Staged(..) = plan.shape {
        let (plan, user, src) = (plan.clone(), UserPtr(p), UserPtr(t as *mut c_void));
        s.push(Step::Local(Box::new(move || {
            let (user, src) = (user, src);
            // SAFETY: the staging buffer holds `plan.bytes` bytes the schedule filled; the user
            // buffer the plan's elements, disjoint from it.
            unsafe { plan.unpack(user.0, std::slice::from_raw_parts_mut(src.0 as *mut u8, plan.bytes)) };
        })));
    }
}

/// The one predefined type all data of `t` consists of (MPI_LB/MPI_UB markers and empty parts
/// aside), found in how the type was built; false when it mixes types.
pub fn uniform_leaf(t: &TypeRepr, found: &mut Option<MPI_Datatype>) -> bool {
    if let Some(h) = t.leaf_id {
        if t.leaf_kind != LeafKind::Data || t.layout.size == 0 {
            return true;
        }
        return *found.get_or_insert(h) == h;
    }
    t.env.types.iter().all(|s| uniform_leaf(s, found))
}

/// Checks count, datatype and op; returns the reduction, the number of its elements and the
/// buffer plan. With a predefined op, a derived type is reduced as the sequence of its basic
/// elements, which must all be the same predefined type (a vector of doubles reduces as doubles).
/// A user-defined op combines whole elements of the datatype, in its native layout.
pub fn reduction(count: i64, datatype: MPI_Datatype, op: MPI_Op) -> MpiResult<(Reduction, usize, Plan)> {
    let u = check::universe()?;
    let user = match super::op::resolve(u, op)? {
        super::op::OpRef::User(user) => user,
        super::op::OpRef::Predefined(p) => {
            if matches!(p, Op::Replace | Op::NoOp) {
                return Err(err(MPI_ERR_OP, format!("{} is only valid in one-sided accumulate operations, not in reductions", p.name())));
            }
            return predefined_reduction(count, datatype, p);
        }
    };
    let n = self::count(count)?;
    if let Ok(size) = check::datatype_size(datatype) {
        let plan = Plan::new(count, datatype)?;
        return Ok((Reduction::user(user, super::op::call_user, datatype, size, 0), n, plan));
    }
    let t = check::committed_dtype(datatype)?;
    let (extent, lb) = (t.layout.extent().max(0) as usize, t.layout.true_lb as isize);
    let plan = Plan::native(n, t)?;
    Ok((Reduction::user(user, super::op::call_user, datatype, extent, lb), n, plan))
}

/// `reduction` for a predefined op.
fn predefined_reduction(count: i64, datatype: MPI_Datatype, op: Op) -> MpiResult<(Reduction, usize, Plan)> {
    let plan = Plan::new(count, datatype)?;
    let red = if !plan.derived {
        super::op::reduction_of(op, datatype)?
    } else {
        let t = check::dtype(datatype)?;
        let mut leaf = None;
        if !uniform_leaf(&t, &mut leaf) {
            return Err(err(MPI_ERR_OP, format!("cannot reduce datatype 0x{:08x}: a derived datatype can be reduced only if all its basic elements are the same predefined datatype (this one mixes several)", datatype as u32)));
        }
        let elem = leaf.unwrap_or(crate::abi::datatypes::MPI_INT);
        if PAIRS.iter().any(|p| p.0 == elem) {
            return Err(err(MPI_ERR_TYPE, format!("reductions on derived datatypes built from {} are not supported yet; reduce the pair type itself", check::datatype_name(elem))));
        }
        super::op::reduction_of(op, elem)?
    };
    let n = plan.bytes.checked_div(red.size).unwrap_or(0);
    Ok((red, n, plan))
}
