//! Collective communication (MPI 4.1 chapter 6): MPI_Barrier, MPI_Bcast, MPI_Reduce,
//! MPI_Allreduce in their blocking, nonblocking (`MPI_I*`), persistent (`*_init`) and large-count
//! (`*_c`) forms, and the local helpers MPI_Reduce_local and MPI_Op_commutative.
//!
//! Each collective has one function here that checks the arguments and builds the body; the form
//! only changes how it runs (`coll::launch`: `blocking` now, or `scheduled` as a schedule). The algorithms are in `crate::coll`, the
//! reduction kernels in `crate::op`.
pub mod alltoall;
pub mod args;
pub mod gather;
pub mod launch;
pub mod neighbor;
pub mod op;
pub mod reduce_scatter;
pub mod scan;
use crate::ffi::check;
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::CountArg;
use crate::coll::{nbc, nbc_inter as nbi};
use crate::abi::*;
use crate::coll::inter as xc;
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// MPI_Barrier and its forms.
///
/// # Safety
/// `how`'s request pointer must be writable (checked for NULL).
pub(in crate::ffi) unsafe fn barrier(comm: MPI_Comm, how: Launch) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, 0, 0, true);
    if c.is_inter() {
        if how.is_blocking() {
            return blocking(u, &c, tally, xc::barrier);
        }
        let build: Build = Box::new(|cx, s| nbi::barrier(s, cx));
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    if how.is_blocking() {
        return blocking(u, &c, tally, crate::coll::barrier::barrier);
    }
    let build: Build = Box::new(|cx, s| nbc::barrier(s, cx));
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Bcast and its forms.
///
/// # Safety
/// `buffer` must hold `count` elements of `datatype` (the MPI contract); `how` as in `barrier`.
pub(in crate::ffi) unsafe fn bcast(buffer: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    let count = count.get();
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::OneToAll, count, datatype, root == c.rank as c_int || root == MPI_ROOT);
    let plan = plan_of(count, datatype)?;
    if c.is_inter() {
        let root = inter_root(&c, root)?;
        if root != InterRoot::Idle {
            plan.check(buffer, "buffer")?;
        }
        if how.is_blocking() {
            return blocking(u, &c, tally, |cx| {
                let mut tmp = Vec::new();
                // SAFETY: buffer holds `count` elements of the datatype (checked above): packed at
                // the root, received into the temporary and unpacked in the remote group.
                unsafe {
                    let p = plan.bytes_of(buffer, &mut tmp, root == InterRoot::Root);
                    xc::bcast(cx, p, plan.bytes, root)?;
                    if let InterRoot::Remote(_) = root {
                        plan.unpack(buffer, &mut tmp);
                    }
                }
                Ok(())
            });
        }
        let sp = Arc::new(plan);
        let build: Build = Box::new(move |cx, s| {
            if root == InterRoot::Idle {
                return;
            }
            let p = stage(&sp, s, buffer, root == InterRoot::Root);
            nbi::bcast(s, cx, p, sp.bytes, root);
            if root != InterRoot::Root {
                unstage(&sp, s, buffer, p);
            }
        });
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    plan.check(buffer, "buffer")?;
    let root = root_rank(&c, root)?;
    let is_root = c.rank == root;
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let mut tmp = Vec::new();
            // SAFETY: buffer holds `count` elements of the datatype (checked above); the root's
            // are packed, the others' are received into the temporary and unpacked afterwards.
            unsafe {
                let p = plan.bytes_of(buffer, &mut tmp, is_root);
                crate::coll::bcast::bcast(cx, p, plan.bytes, root)?;
                if !is_root {
                    plan.unpack(buffer, &mut tmp);
                }
            }
            Ok(())
        });
    }
    let sp = Arc::new(plan);
    let build: Build = Box::new(move |cx, s| {
        let p = stage(&sp, s, buffer, is_root);
        nbc::bcast(s, cx, p, sp.bytes, root);
        if !is_root {
            unstage(&sp, s, buffer, p);
        }
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Reduce and its forms.
///
/// # Safety
/// The significant buffers must hold `count` elements of `datatype`; `how` as in `barrier`.
pub(in crate::ffi) unsafe fn reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    let count = count.get();
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToOne, count, datatype, root == c.rank as c_int || root == MPI_ROOT);
    let (red, n, plan) = match reduction(count, datatype, op) {
        // The MPI_PROC_NULL ranks of an intercommunicator reduce pass nothing significant
        // (mpi4py passes MPI_SUM on MPI_BYTE): an empty MPI_BOR on MPI_BYTE stands in.
        Err(_) if c.is_inter() && root == MPI_PROC_NULL => reduction(0, crate::abi::datatypes::MPI_BYTE, crate::abi::ops::op_handle(crate::op::Op::Bor))?,
        r => r?,
    };
    if c.is_inter() {
        let root = inter_root(&c, root)?;
        match root {
            InterRoot::Root => plan.check(recvbuf, "receive buffer")?,
            InterRoot::Remote(_) => plan.check(sendbuf, "send buffer")?,
            InterRoot::Idle => {}
        }
        if how.is_blocking() {
            return blocking(u, &c, tally, |cx| {
                let (mut ts, mut tr) = (Vec::new(), Vec::new());
                // SAFETY: the significant buffers hold `n` elements of the reduction's type once
                // contiguous (checked above; MPI_IN_PLACE is not allowed on intercommunicators).
                unsafe {
                    let s = if matches!(root, InterRoot::Remote(_)) { plan.bytes_of(sendbuf, &mut ts, true) } else { std::ptr::null_mut() };
                    let r = if root == InterRoot::Root { plan.bytes_of(recvbuf, &mut tr, false) } else { std::ptr::null_mut() };
                    xc::reduce(cx, s, r, n, &red, root)?;
                    if root == InterRoot::Root {
                        plan.unpack(recvbuf, &mut tr);
                    }
                }
                Ok(())
            });
        }
        let (sp, red2) = (Arc::new(plan), Arc::new(red));
        let build: Build = Box::new(move |cx, s| {
            let snd = if matches!(root, InterRoot::Remote(_)) { stage(&sp, s, sendbuf, true) } else { std::ptr::null_mut() };
            let rcv = if root == InterRoot::Root { stage(&sp, s, recvbuf, false) } else { std::ptr::null_mut() };
            nbi::reduce(s, cx, snd, rcv, n, red2, root);
            if root == InterRoot::Root {
                unstage(&sp, s, recvbuf, rcv);
            }
        });
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    let root = root_rank(&c, root)?;
    let is_root = c.rank == root;
    let send = if is_root {
        plan.check(recvbuf, "receive buffer")?;
        send_or_in_place(sendbuf, recvbuf, &plan)?
    } else {
        if in_place(sendbuf) {
            return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer of MPI_Reduce is only valid at the root"));
        }
        plan.check(sendbuf, "send buffer")?;
        sendbuf
    };
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            // SAFETY: the buffers hold `count` elements of the datatype (checked above), i.e. `n`
            // elements of the reduction's type once contiguous. A staged contribution is packed
            // into a temporary that is also the root's result (sendbuf == recvbuf is allowed),
            // then unpacked.
            unsafe {
                match plan.shape {
                    Shape::Direct(_) => {
                        let mut unused = Vec::new();
                        let s = plan.bytes_of(send, &mut unused, true);
                        let r = if is_root { plan.bytes_of(recvbuf, &mut unused, false) } else { recvbuf as *mut u8 };
                        crate::coll::reduce::reduce(cx, s, r, n, &red, root)
                    }
                    Shape::Staged(..) => {
                        let mut tmp = Vec::new();
                        let p = plan.bytes_of(send, &mut tmp, true);
                        crate::coll::reduce::reduce(cx, p, p, n, &red, root)?;
                        if is_root {
                            plan.unpack(recvbuf, &mut tmp);
                        }
                        Ok(())
                    }
                }
            }
        });
    }
    let (sp, red) = (Arc::new(plan), Arc::new(red));
    let build: Build = Box::new(move |cx, s| match sp.shape {
        Shape::Direct(_) => {
            let snd = stage(&sp, s, send, false);
            let rcv = if is_root { stage(&sp, s, recvbuf, false) } else { recvbuf as *mut u8 };
            nbc::reduce(s, cx, snd, rcv, n, red, root);
        }
        Shape::Staged(..) => {
            // The contribution is packed into a staging buffer that also takes the root's result.
            let t = stage(&sp, s, send, true);
            s.round();
            nbc::reduce(s, cx, t, t, n, red, root);
            if is_root {
                unstage(&sp, s, recvbuf, t);
            }
        }
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Allreduce and its forms.
///
/// # Safety
/// The buffers must hold `count` elements of `datatype`; `how` as in `barrier`.
pub(in crate::ffi) unsafe fn allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, how: Launch) -> MpiResult {
    let count = count.get();
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, count, datatype, true);
    let (red, n, plan) = reduction(count, datatype, op)?;
    plan.check(recvbuf, "receive buffer")?;
    if c.is_inter() {
        // MPI_IN_PLACE is not allowed on intercommunicators (MPI 4.1 section 6.9.6): `check`
        // refuses it.
        plan.check(sendbuf, "send buffer")?;
        send_or_in_place(sendbuf, recvbuf, &plan)?;
        if how.is_blocking() {
            return blocking(u, &c, tally, |cx| {
                let (mut ts, mut tr) = (Vec::new(), Vec::new());
                // SAFETY: both buffers hold `n` elements of the reduction's type once contiguous,
                // disjoint.
                unsafe {
                    let s = plan.bytes_of(sendbuf, &mut ts, true);
                    let r = plan.bytes_of(recvbuf, &mut tr, false);
                    xc::allreduce(cx, s, r, n, &red)?;
                    plan.unpack(recvbuf, &mut tr);
                }
                Ok(())
            });
        }
        let (sp, red2) = (Arc::new(plan), Arc::new(red));
        let build: Build = Box::new(move |cx, s| {
            let snd = stage(&sp, s, sendbuf, true);
            let rcv = stage(&sp, s, recvbuf, false);
            nbi::allreduce(s, cx, snd, rcv, n, red2);
            unstage(&sp, s, recvbuf, rcv);
        });
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    let send = send_or_in_place(sendbuf, recvbuf, &plan)?;
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            // SAFETY: both buffers hold `count` elements of the datatype (`n` of the reduction's
            // type once contiguous); they are the same or disjoint. A staged contribution is
            // packed into a temporary that also takes the result (the same buffer is allowed),
            // then unpacked.
            unsafe {
                let mut tmp = Vec::new();
                match plan.shape {
                    Shape::Direct(_) => {
                        let s = plan.bytes_of(send, &mut tmp, true);
                        let r = plan.bytes_of(recvbuf, &mut tmp, false);
                        crate::coll::allreduce::allreduce(cx, s, r, n, &red)
                    }
                    Shape::Staged(..) => {
                        let p = plan.bytes_of(send, &mut tmp, true);
                        crate::coll::allreduce::allreduce(cx, p, p, n, &red)?;
                        plan.unpack(recvbuf, &mut tmp);
                        Ok(())
                    }
                }
            }
        });
    }
    let (sp, red) = (Arc::new(plan), Arc::new(red));
    let build: Build = Box::new(move |cx, s| {
        // A staged contribution is packed into a staging buffer that also takes the result.
        let (snd, rcv) = match sp.shape {
            Shape::Direct(_) => (stage(&sp, s, send, false) as *const u8, stage(&sp, s, recvbuf, false)),
            Shape::Staged(..) => {
                let t = stage(&sp, s, send, true);
                (t as *const u8, t)
            }
        };
        s.round();
        nbc::allreduce(s, cx, snd, rcv, n, red);
        unstage(&sp, s, recvbuf, rcv);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Reduce_local and its large-count form.
///
/// # Safety
/// Both buffers must hold `count` elements of `datatype`.
pub(in crate::ffi) unsafe fn reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, op: MPI_Op) -> MpiResult {
    let count = count.get();
    let n = self::count(count)?;
    let u = check::universe()?;
    if let crate::ffi::coll::op::OpRef::User(user) = crate::ffi::coll::op::resolve(u, op)? {
        // A user function gets the buffers as they are: it addresses them through the datatype.
        let extent = match check::datatype_size(datatype) {
            Ok(size) => size,
            Err(_) => check::committed_dtype(datatype)?.layout.extent().max(0) as usize,
        };
        if n > 0 && (inbuf.is_null() || inoutbuf.is_null() || in_place(inbuf) || in_place(inoutbuf as *const c_void)) {
            return Err(err(MPI_ERR_BUFFER, "invalid buffer for MPI_Reduce_local: NULL or MPI_IN_PLACE"));
        }
        if n > 0 {
            // SAFETY: both buffers hold `n` elements of the datatype (the MPI contract).
            unsafe { crate::ffi::coll::op::call_user(user.f, inbuf as *mut u8, inoutbuf as *mut u8, n, datatype, extent) };
        }
        return Ok(());
    }
    let size = check::datatype_size(datatype)?;
    let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} overflows")))?;
    let red = crate::ffi::coll::op::reduction(op, datatype)?;
    buffer(inbuf, bytes, "input buffer")?;
    buffer(inoutbuf, bytes, "input/output buffer")?;
    no_alias(inbuf, inoutbuf, bytes)?;
    // SAFETY: both buffers hold `n` elements of the datatype and are disjoint.
    unsafe { red.apply(inbuf as *const u8, inoutbuf as *mut u8, n) };
    Ok(())
}

export! {
    fn MPI_Op_commutative / PMPI_Op_commutative (op: MPI_Op, commute: *mut c_int) on comm MPI_COMM_SELF => {
        let op = crate::ffi::coll::op::resolve(check::universe()?, op)?;
        let commute = crate::ffi::pointer_args::out(commute, "commute")?;
        // SAFETY: a non-NULL output argument: one writable int (the C prototype).
        unsafe { *commute = op.commutative() as c_int };
        Ok(())
    }
}
