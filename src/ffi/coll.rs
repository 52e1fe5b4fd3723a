//! Collective communication (MPI 4.1 chapter 6): MPI_Bcast, MPI_Reduce, MPI_Allreduce, and the
//! local reduction helpers MPI_Reduce_local and MPI_Op_commutative. The algorithms are in
//! `crate::coll`, the reduction kernels in `crate::op`.
use super::check;
use crate::abi::*;
use crate::abi::datatypes::PAIRS;
use crate::comm::Comm;
use crate::datatype::{LeafKind, TypeRepr};
use std::sync::Arc;
use crate::error::{err, MpiResult};
use crate::export;
use crate::comm::inter::InterRoot;
use crate::op::{Op, Reduction};
use std::os::raw::{c_int, c_void};

fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE_ADDR
}

/// The root as a communicator rank: MPI_ERR_ROOT unless it is one.
fn root_rank(c: &Comm, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= c.size() {
        return Err(err(MPI_ERR_ROOT, format!("invalid root {root}: the communicator has {} ranks (0..{})", c.size(), c.size())));
    }
    Ok(root as usize)
}

/// The root argument of a rooted collective on an intercommunicator: MPI_ROOT, MPI_PROC_NULL, or
/// a rank of the remote group.
fn inter_root(c: &Comm, root: c_int) -> MpiResult<InterRoot> {
    match root {
        MPI_ROOT => Ok(InterRoot::Root),
        MPI_PROC_NULL => Ok(InterRoot::Idle),
        _ if root >= 0 && (root as usize) < c.peer_size() => Ok(InterRoot::Remote(root as usize)),
        _ => Err(err(MPI_ERR_ROOT, format!("invalid root {root} on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0..{})", c.peer_size()))),
    }
}

/// Checks one significant buffer of `bytes` bytes: not MPI_IN_PLACE, not NULL unless empty.
fn buffer(p: *const c_void, bytes: usize, what: &str) -> MpiResult {
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
fn no_alias(send: *const c_void, recv: *const c_void, bytes: usize) -> MpiResult {
    let (s, r) = (send as usize, recv as usize);
    if bytes > 0 && s < r.saturating_add(bytes) && r < s.saturating_add(bytes) {
        return Err(err(MPI_ERR_BUFFER, "the send and receive buffers overlap (aliased arguments); use MPI_IN_PLACE to reduce in place"));
    }
    Ok(())
}

/// How a user buffer of a collective reaches the byte algorithms: contiguous bytes at an offset
/// from the buffer address (predefined and contiguous derived types), or packed into / unpacked
/// from a temporary (non-contiguous derived types).
enum Shape {
    Direct(isize),
    Staged(Arc<TypeRepr>, usize),
}

/// A checked buffer description: `bytes` contiguous bytes once packed.
struct Plan {
    shape: Shape,
    bytes: usize,
    /// A derived type: the buffer may be MPI_BOTTOM (NULL) with absolute displacements.
    derived: bool,
}

impl Plan {
    fn new(count: c_int, datatype: MPI_Datatype) -> MpiResult<Plan> {
        let n = check::count(count)?;
        if let Ok(size) = check::datatype_size(datatype) {
            let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(datatype))))?;
            return Ok(Plan { shape: Shape::Direct(0), bytes, derived: false });
        }
        let t = check::committed_dtype(datatype)?;
        let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of datatype 0x{:08x} overflows", datatype as u32)))?;
        Ok(match t.layout.contiguous_span(n) {
            Some((off, b)) => Plan { shape: Shape::Direct(off as isize), bytes: b, derived: true },
            None => Plan { shape: Shape::Staged(t, n), bytes, derived: true },
        })
    }

    /// Checks one significant user buffer: not MPI_IN_PLACE, not NULL for a predefined type.
    fn check(&self, p: *const c_void, what: &str) -> MpiResult {
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
    unsafe fn bytes_of(&self, p: *const c_void, tmp: &mut Vec<u8>, fill: bool) -> *mut u8 {
        match &self.shape {
            Shape::Direct(off) => (p as *mut u8).wrapping_offset(*off),
            Shape::Staged(t, n) => {
                *tmp = vec![0u8; self.bytes];
                if fill {
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
    unsafe fn unpack(&self, p: *mut c_void, tmp: &mut [u8]) {
        if let Shape::Staged(t, n) = &self.shape {
            // SAFETY: per this function's contract.
            unsafe { crate::datatype::copy(&t.layout, p as *mut u8, *n, tmp.as_mut_ptr(), tmp.len(), 0, false) };
        }
    }
}

/// The one predefined type all data of `t` consists of (MPI_LB/MPI_UB markers and empty parts
/// aside), found in how the type was built; false when it mixes types.
fn uniform_leaf(t: &TypeRepr, found: &mut Option<MPI_Datatype>) -> bool {
    if let Some(h) = t.leaf_id {
        if t.leaf_kind != LeafKind::Data || t.layout.size == 0 {
            return true;
        }
        return *found.get_or_insert(h) == h;
    }
    t.env.types.iter().all(|s| uniform_leaf(s, found))
}

/// Checks count, datatype and op; returns the reduction, the number of its elements and the
/// buffer plan. A derived type is reduced as the sequence of its basic elements, which must all be
/// the same predefined type (a vector of doubles reduces as doubles).
fn reduction(count: c_int, datatype: MPI_Datatype, op: MPI_Op) -> MpiResult<(Reduction, usize, Plan)> {
    let plan = Plan::new(count, datatype)?;
    let red = if !plan.derived {
        Reduction::new(op, datatype)?
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
        Reduction::new(op, elem)?
    };
    if matches!(red.op, Op::Replace | Op::NoOp) {
        return Err(err(MPI_ERR_OP, format!("{} is only valid in one-sided accumulate operations, not in reductions", red.op.name())));
    }
    let n = plan.bytes.checked_div(red.size).unwrap_or(0);
    Ok((red, n, plan))
}

/// Non-contiguous derived datatypes are staged through temporaries on intracommunicators only.
fn inter_staged() -> crate::error::MpiError {
    err(MPI_ERR_TYPE, "non-contiguous derived datatypes in collectives on intercommunicators are not supported yet")
}

export! {
    fn MPI_Bcast / PMPI_Bcast (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let plan = Plan::new(count, datatype)?;
        if c.is_inter() {
            let root = inter_root(c, root)?;
            let Shape::Direct(_) = plan.shape else { return Err(inter_staged()) };
            if root != InterRoot::Idle {
                plan.check(buffer, "buffer")?;
            }
            // SAFETY: buffer holds `count` contiguous elements of the datatype (checked above).
            return unsafe {
                let p = plan.bytes_of(buffer, &mut Vec::new(), true);
                crate::comm::inter::bcast_inter(u, c, p, plan.bytes, root)
            };
        }
        plan.check(buffer, "buffer")?;
        let root = root_rank(c, root)?;
        let is_root = c.rank == root;
        let mut tmp = Vec::new();
        // SAFETY: buffer holds `count` elements of the datatype (checked above); the root's are
        // packed, the others' are received into the temporary and unpacked afterwards.
        unsafe {
            let p = plan.bytes_of(buffer, &mut tmp, is_root);
            crate::coll::bcast::bcast(u, c, p, plan.bytes, root)?;
            if !is_root {
                plan.unpack(buffer, &mut tmp);
            }
        }
        Ok(())
    }

    fn MPI_Reduce / PMPI_Reduce (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (red, n, plan) = reduction(count, datatype, op)?;
        if c.is_inter() {
            let root = inter_root(c, root)?;
            let Shape::Direct(_) = plan.shape else { return Err(inter_staged()) };
            match root {
                InterRoot::Root => plan.check(recvbuf, "receive buffer")?,
                InterRoot::Remote(_) => plan.check(sendbuf, "send buffer")?,
                InterRoot::Idle => {}
            }
            // SAFETY: the significant buffers hold `n` contiguous elements of the reduction's type
            // (checked above; MPI_IN_PLACE is not allowed on intercommunicators).
            return unsafe {
                let s = plan.bytes_of(sendbuf, &mut Vec::new(), true);
                let r = plan.bytes_of(recvbuf, &mut Vec::new(), false);
                crate::comm::inter::reduce_inter(u, c, s, r, n, &red, root)
            };
        }
        let root = root_rank(c, root)?;
        let is_root = c.rank == root;
        let send = if is_root {
            plan.check(recvbuf, "receive buffer")?;
            if in_place(sendbuf) {
                recvbuf as *const c_void
            } else {
                plan.check(sendbuf, "send buffer")?;
                if !plan.derived {
                    no_alias(sendbuf, recvbuf, plan.bytes)?;
                }
                sendbuf
            }
        } else {
            if in_place(sendbuf) {
                return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer of MPI_Reduce is only valid at the root"));
            }
            plan.check(sendbuf, "send buffer")?;
            sendbuf
        };
        // SAFETY: the buffers hold `count` elements of the datatype (checked above), i.e. `n`
        // elements of the reduction's type once contiguous. A staged contribution is packed into
        // a temporary that is also the root's result (sendbuf == recvbuf is allowed), then unpacked.
        unsafe {
            match plan.shape {
                Shape::Direct(_) => {
                    let mut unused = Vec::new();
                    let s = plan.bytes_of(send, &mut unused, true);
                    let r = if is_root { plan.bytes_of(recvbuf, &mut unused, false) } else { recvbuf as *mut u8 };
                    crate::coll::reduce::reduce(u, c, s, r, n, &red, root)
                }
                Shape::Staged(..) => {
                    let mut tmp = Vec::new();
                    let p = plan.bytes_of(send, &mut tmp, true);
                    crate::coll::reduce::reduce(u, c, p, p, n, &red, root)?;
                    if is_root {
                        plan.unpack(recvbuf, &mut tmp);
                    }
                    Ok(())
                }
            }
        }
    }

    fn MPI_Allreduce / PMPI_Allreduce (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (red, n, plan) = reduction(count, datatype, op)?;
        plan.check(recvbuf, "receive buffer")?;
        if c.is_inter() {
            let Shape::Direct(_) = plan.shape else { return Err(inter_staged()) };
            // MPI_IN_PLACE is not allowed on intercommunicators (MPI 4.1 section 6.9.6).
            plan.check(sendbuf, "send buffer")?;
            if in_place(sendbuf) {
                return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on intercommunicators"));
            }
            no_alias(sendbuf, recvbuf, plan.bytes)?;
            // SAFETY: both buffers hold `n` contiguous elements of the reduction's type, disjoint.
            return unsafe {
                let s = plan.bytes_of(sendbuf, &mut Vec::new(), true);
                let r = plan.bytes_of(recvbuf, &mut Vec::new(), false);
                crate::comm::inter::allreduce_inter(u, c, s, r, n, &red)
            };
        }
        let send = if in_place(sendbuf) {
            recvbuf as *const c_void
        } else {
            plan.check(sendbuf, "send buffer")?;
            if !plan.derived {
                no_alias(sendbuf, recvbuf, plan.bytes)?;
            }
            sendbuf
        };
        // SAFETY: both buffers hold `count` elements of the datatype (`n` of the reduction's type
        // once contiguous); they are the same or disjoint. A staged contribution is packed into a
        // temporary that also takes the result (the same buffer is allowed), then unpacked.
        unsafe {
            let mut tmp = Vec::new();
            match plan.shape {
                Shape::Direct(_) => {
                    let s = plan.bytes_of(send, &mut tmp, true);
                    let r = plan.bytes_of(recvbuf, &mut tmp, false);
                    crate::coll::allreduce::allreduce(u, c, s, r, n, &red)
                }
                Shape::Staged(..) => {
                    let p = plan.bytes_of(send, &mut tmp, true);
                    crate::coll::allreduce::allreduce(u, c, p, p, n, &red)?;
                    plan.unpack(recvbuf, &mut tmp);
                    Ok(())
                }
            }
        }
    }

    fn MPI_Reduce_local / PMPI_Reduce_local (inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op) on MPI_COMM_SELF => {
        let n = check::count(count)?;
        let bytes = check::buffer_bytes(inbuf, count, datatype)?;
        let red = Reduction::new(op, datatype)?;
        buffer(inbuf, bytes, "input buffer")?;
        buffer(inoutbuf, bytes, "input/output buffer")?;
        no_alias(inbuf, inoutbuf, bytes)?;
        // SAFETY: both buffers hold `n` elements of the datatype and are disjoint.
        unsafe { red.apply(inbuf as *const u8, inoutbuf as *mut u8, n) };
        Ok(())
    }

    fn MPI_Op_commutative / PMPI_Op_commutative (op: MPI_Op, commute: *mut c_int) on MPI_COMM_SELF => {
        let op = Op::from_handle(op)?;
        if commute.is_null() {
            return Err(err(MPI_ERR_ARG, "commute is NULL"));
        }
        *commute = op.commutative() as c_int;
        Ok(())
    }
}
