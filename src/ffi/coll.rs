//! Collective communication (MPI 4.1 chapter 6): MPI_Bcast, MPI_Reduce, MPI_Allreduce, and the
//! local reduction helpers MPI_Reduce_local and MPI_Op_commutative. The algorithms are in
//! `crate::coll`, the reduction kernels in `crate::op`.
use super::check;
use crate::abi::*;
use crate::comm::Comm;
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

/// Checks count, datatype and op; returns the reduction and the message size in bytes.
fn reduction(count: c_int, datatype: MPI_Datatype, op: MPI_Op) -> MpiResult<(Reduction, usize, usize)> {
    let n = check::count(count)?;
    let size = check::datatype_size(datatype)?;
    let red = Reduction::new(op, datatype)?;
    if matches!(red.op, Op::Replace | Op::NoOp) {
        return Err(err(MPI_ERR_OP, format!("{} is only valid in one-sided accumulate operations, not in reductions", red.op.name())));
    }
    let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(datatype))))?;
    Ok((red, n, bytes))
}

export! {
    fn MPI_Bcast / PMPI_Bcast (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let bytes = check::buffer_bytes(buffer, count, datatype)?;
        if c.is_inter() {
            let root = inter_root(c, root)?;
            if root != InterRoot::Idle {
                self::buffer(buffer, bytes, "buffer")?;
            }
            // SAFETY: buffer holds `bytes` bytes (the caller's count and datatype, checked above).
            return unsafe { crate::comm::inter::bcast_inter(u, c, buffer as *mut u8, bytes, root) };
        }
        self::buffer(buffer, bytes, "buffer")?;
        let root = root_rank(c, root)?;
        // SAFETY: buffer holds `bytes` bytes (the caller's count and datatype, checked above).
        unsafe { crate::coll::bcast::bcast(u, c, buffer as *mut u8, bytes, root) }
    }

    fn MPI_Reduce / PMPI_Reduce (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (red, n, bytes) = reduction(count, datatype, op)?;
        if c.is_inter() {
            let root = inter_root(c, root)?;
            match root {
                InterRoot::Root => buffer(recvbuf, bytes, "receive buffer")?,
                InterRoot::Remote(_) => buffer(sendbuf, bytes, "send buffer")?,
                InterRoot::Idle => {}
            }
            // SAFETY: the significant buffers hold `n` elements of the datatype (checked above;
            // MPI_IN_PLACE is not allowed on intercommunicators).
            return unsafe { crate::comm::inter::reduce_inter(u, c, sendbuf as *const u8, recvbuf as *mut u8, n, &red, root) };
        }
        let root = root_rank(c, root)?;
        let send = if c.rank == root {
            buffer(recvbuf, bytes, "receive buffer")?;
            if in_place(sendbuf) {
                recvbuf as *const c_void
            } else {
                buffer(sendbuf, bytes, "send buffer")?;
                no_alias(sendbuf, recvbuf, bytes)?;
                sendbuf
            }
        } else {
            if in_place(sendbuf) {
                return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer of MPI_Reduce is only valid at the root"));
            }
            buffer(sendbuf, bytes, "send buffer")?;
            sendbuf
        };
        // SAFETY: the buffers hold `n` elements of the datatype (checked above); at the root the
        // send buffer is the receive buffer or disjoint from it.
        unsafe { crate::coll::reduce::reduce(u, c, send as *const u8, recvbuf as *mut u8, n, &red, root) }
    }

    fn MPI_Allreduce / PMPI_Allreduce (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (red, n, bytes) = reduction(count, datatype, op)?;
        buffer(recvbuf, bytes, "receive buffer")?;
        if c.is_inter() {
            // MPI_IN_PLACE is not allowed on intercommunicators (MPI 4.1 section 6.9.6).
            buffer(sendbuf, bytes, "send buffer")?;
            no_alias(sendbuf, recvbuf, bytes)?;
            // SAFETY: both buffers hold `n` elements of the datatype and are disjoint.
            return unsafe { crate::comm::inter::allreduce_inter(u, c, sendbuf as *const u8, recvbuf as *mut u8, n, &red) };
        }
        let send = if in_place(sendbuf) {
            recvbuf as *const c_void
        } else {
            buffer(sendbuf, bytes, "send buffer")?;
            no_alias(sendbuf, recvbuf, bytes)?;
            sendbuf
        };
        // SAFETY: both buffers hold `n` elements of the datatype; they are the same or disjoint.
        unsafe { crate::coll::allreduce::allreduce(u, c, send as *const u8, recvbuf as *mut u8, n, &red) }
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
