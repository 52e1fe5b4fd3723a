//! Argument checks shared by the collective FFI functions: roots, buffers, MPI_IN_PLACE,
//! aliasing, and the handle lookups that make a buffer plan (`plan_of`) or a reduction
//! (`reduction`). How a plan's buffer becomes contiguous bytes is `crate::coll::stage`.
use crate::ffi::check;
use crate::abi::datatypes::PAIRS;
use crate::abi::*;
use crate::comm::Comm;
use crate::datatype::{LeafKind, TypeRepr};
use crate::error::{err, MpiResult};
use crate::op::{Op, Reduction};
use std::os::raw::{c_int, c_void};

pub use crate::coll::inter::InterRoot;

pub use crate::ffi::check::count;

pub fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE_ADDR
}

/// The root as a communicator rank: MPI_ERR_ROOT unless it is one.
pub fn root_rank(c: &Comm, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= c.size() {
        return Err(err(MPI_ERR_ROOT, format!("invalid root {root}: the communicator has {} ranks ({})", c.size(), crate::error::indices(c.size()))));
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
        _ => Err(err(MPI_ERR_ROOT, format!("invalid root {root} on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group ({})", crate::error::indices(c.peer_size())))),
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

pub use crate::coll::stage::{private, stage, unstage, unstage_now, Plan, Shape, UserPtr};

/// The plan of `count_` elements of `datatype`: the handle looked up, the count checked.
pub fn plan_of(count_: i64, datatype: MPI_Datatype) -> MpiResult<Plan> {
    let n = count(count_)?;
    if let Ok(size) = check::datatype_size(datatype) {
        return Plan::predefined(n, size, || check::datatype_name(datatype));
    }
    let t = check::committed_dtype(datatype)?;
    Plan::derived(n, t, || format!("datatype 0x{:08x}", datatype as u32))
}

/// The argument checks of a plan's user buffer that need ABI values.
pub trait PlanCheck {
    /// Checks one significant user buffer: not MPI_IN_PLACE, not NULL for a predefined type.
    fn check(&self, p: *const c_void, what: &str) -> MpiResult;
}

impl PlanCheck for Plan {
    fn check(&self, p: *const c_void, what: &str) -> MpiResult {
        if self.derived && !in_place(p) {
            return Ok(());
        }
        buffer(p, self.bytes, what)
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
    let user = match crate::ffi::coll::op::resolve(u, op)? {
        crate::ffi::coll::op::OpRef::User(user) => user,
        crate::ffi::coll::op::OpRef::Predefined(p) => {
            if matches!(p, Op::Replace | Op::NoOp) {
                return Err(err(MPI_ERR_OP, format!("{} is only valid in one-sided accumulate operations, not in reductions", p.name())));
            }
            return predefined_reduction(count, datatype, p);
        }
    };
    let n = self::count(count)?;
    if let Ok(size) = check::datatype_size(datatype) {
        let plan = plan_of(count, datatype)?;
        return Ok((Reduction::user(user, crate::ffi::coll::op::call_user, datatype, size, 0), n, plan));
    }
    let t = check::committed_dtype(datatype)?;
    let (extent, lb) = (t.layout.extent().max(0) as usize, t.layout.true_lb as isize);
    let plan = Plan::native(n, t)?;
    Ok((Reduction::user(user, crate::ffi::coll::op::call_user, datatype, extent, lb), n, plan))
}

/// `reduction` for a predefined op.
fn predefined_reduction(count: i64, datatype: MPI_Datatype, op: Op) -> MpiResult<(Reduction, usize, Plan)> {
    let plan = plan_of(count, datatype)?;
    let red = if !plan.derived {
        crate::ffi::coll::op::reduction_of(op, datatype)?
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
        crate::ffi::coll::op::reduction_of(op, elem)?
    };
    let n = plan.bytes.checked_div(red.size).unwrap_or(0);
    Ok((red, n, plan))
}
