//! MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Allgather and MPI_Allgatherv (MPI 4.1
//! sections 6.5-6.7) in their blocking, nonblocking, persistent and large-count forms, on intra-
//! and intercommunicators.
//!
//! One side of each call is a single buffer (a `Plan`); the other is a buffer of per-rank blocks
//! (`TypedBlocks`, both in `crate::coll::stage`): block `i` is `counts[i]` elements of the datatype at `displs[i]` extents from
//! the buffer address (for the non-v forms `counts[i] = count`, `displs[i] = i * count`). The two
//! sides may use different datatypes with the same type signature; each is staged on its own.
//! The algorithms (`crate::coll::{gather, scatter, allgather}`) move the blocks as bytes.
//!
//! On intracommunicators the nonblocking and persistent forms always run as schedules
//! (`crate::coll::nbc`), whatever the datatypes: a rank's datatypes may be contiguous where
//! another's are not, so the choice must not depend on them. Non-contiguous buffers are packed
//! and unpacked by local steps of the schedule, per block. Intercommunicator forms run as the
//! schedules of `crate::coll::nbc_inter`.
use crate::ffi::check;
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::{CountArg, CountArray};
use crate::abi::*;
use crate::coll::stage::{Fill, TypedBlocks};
use crate::coll::schedule::Schedule;
use crate::coll::{allgather, gather, nbc, nbc_inter as nbi, scatter};
use crate::error::{err, MpiResult};
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// The counts of a buffer of per-rank blocks: one for all ranks (MPI_Gather), or per rank with
/// displacements (MPI_Gatherv).
#[derive(Clone, Copy)]
enum Counts {
    Same(i64),
    Each(CountArray, CountArray),
}

impl Counts {
    fn varying(self) -> bool {
        matches!(self, Counts::Each(..))
    }
}

/// A checked buffer of `n` per-rank blocks of `dt` (`TypedBlocks`): the datatype, counts,
/// displacements and buffer checked.
///
/// # Safety
/// The arrays in `counts` must hold `n` entries when not NULL.
unsafe fn typed_blocks(counts: Counts, n: usize, dt: MPI_Datatype, buf: *const c_void, what: &str) -> MpiResult<TypedBlocks> {
    let t = check::committed_dtype(dt)?;
    let (cs, ds) = match counts {
        Counts::Same(k) => {
            let k = count(k)? as i64;
            (vec![k; n], (0..n as i64).map(|i| i * k).collect())
        }
        // SAFETY: per this function's contract.
        Counts::Each(c, d) => unsafe { (c.read(n, "the counts array")?, d.read(n, "the displacements array")?) },
    };
    let counts = cs.into_iter().map(count).collect::<MpiResult<Vec<usize>>>()?;
    let leaf = t.leaf_id.is_some();
    let blocks = TypedBlocks::new(t, counts, &ds, || check::datatype_name(dt))?;
    if in_place(buf) {
        return Err(err(MPI_ERR_BUFFER, format!("MPI_IN_PLACE is not allowed as the {what} here")));
    }
    if leaf && buf.is_null() && blocks.lens.iter().any(|&l| l > 0) {
        return Err(err(MPI_ERR_BUFFER, format!("invalid {what}: NULL with a non-empty message")));
    }
    Ok(blocks)
}

/// A checked single buffer of `count` elements.
fn single(p: *const c_void, count: i64, dt: MPI_Datatype, what: &str) -> MpiResult<Plan> {
    let plan = plan_of(count, dt)?;
    plan.check(p, what)?;
    Ok(plan)
}

/// The root's own contribution of a gather (or its own part of a scatter) must not overlap its
/// block of the other buffer unless the call says MPI_IN_PLACE (MPI 4.1 section 2.6.2: no
/// aliasing of arguments). Checked where both are contiguous, as MPICH checks it.
fn root_not_aliased(single_buf: *const c_void, single: &Plan, blocks_buf: *const c_void, blocks: &TypedBlocks, root: usize) -> MpiResult {
    let (Shape::Direct(off), Some((boff, blen))) = (&single.shape, blocks.contiguous_block(root)) else { return Ok(()) };
    let own = (single_buf as isize).wrapping_add(*off) as *const c_void;
    let slot = (blocks_buf as isize).wrapping_add(boff) as *const c_void;
    if own.is_null() || slot.is_null() {
        return Ok(());
    }
    no_alias(own, slot, single.bytes.min(blen)).map_err(|_| err(MPI_ERR_BUFFER, "the root's send and receive buffers overlap (aliased arguments); use MPI_IN_PLACE at the root"))
}

/// The send side of a call as the algorithms take it: bytes and their length.
///
/// # Safety
/// `p` must hold the plan's elements, readable.
unsafe fn sending(plan: Option<&Plan>, p: *const c_void, tmp: &mut Vec<u8>) -> Option<(*const u8, usize)> {
    // SAFETY: per this function's contract.
    plan.map(|s| (unsafe { s.bytes_of(p, tmp, true) } as *const u8, s.bytes))
}

/// MPI_Gather / MPI_Gatherv and their forms.
///
/// # Safety
/// The significant buffers and arrays must be valid for the given counts (the MPI contract); `how`'s
/// request pointer writable.
#[allow(clippy::too_many_arguments)]
unsafe fn gather_any(sendbuf: *const c_void, scount: i64, stype: MPI_Datatype, recvbuf: *mut c_void, rcounts: Counts, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToOne, scount, stype, root == c.rank as c_int || root == MPI_ROOT);
    let (send, recv, root) = if c.is_inter() {
        let root = inter_root(&c, root)?;
        let send = if matches!(root, InterRoot::Remote(_)) { Some(single(sendbuf, scount, stype, "send buffer")?) } else { None };
        // SAFETY: the arrays hold one entry per remote rank at the root (MPI contract).
        let recv = if root == InterRoot::Root { Some(unsafe { typed_blocks(rcounts, c.peer_size(), rtype, recvbuf, "receive buffer")? }) } else { None };
        (send, recv, Err(root))
    } else {
        let root = root_rank(&c, root)?;
        let is_root = c.rank == root;
        let send = if is_root && in_place(sendbuf) { None } else { Some(single(sendbuf, scount, stype, "send buffer")?) };
        // SAFETY: the arrays hold one entry per rank at the root (MPI contract).
        let recv = if is_root { Some(unsafe { typed_blocks(rcounts, c.size(), rtype, recvbuf, "receive buffer")? }) } else { None };
        if let (Some(sp), Some(r)) = (&send, &recv) {
            root_not_aliased(sendbuf, sp, recvbuf, r, root)?;
        }
        (send, recv, Ok(root))
    };
    let varying = rcounts.varying();
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: the buffers hold their elements (checked above); a staged receive buffer is
            // unpacked after the gather, except the root's own block when it is in place.
            unsafe {
                let s = sending(send.as_ref(), sendbuf, &mut ts);
                let b = recv.as_ref().map(|r| r.blocks(recvbuf, &mut tr, Fill::Nothing));
                let res = match root {
                    Err(root) => gather::inter(cx, s, b.as_ref(), root),
                    Ok(root) if varying => gather::linear(cx, s, b.as_ref(), root),
                    Ok(root) => gather::gather(cx, s, b.as_ref(), root),
                };
                if let Some(r) = &recv {
                    r.unpack(recvbuf, &mut tr, if s.is_none() { root.ok() } else { None });
                }
                res
            }
        });
    }
    let (send, recv) = (send.map(Arc::new), recv.map(Arc::new));
    let build: Build = Box::new(move |cx: &crate::coll::Coll, s: &mut Schedule| {
        let snd = send.as_ref().map(|p| (stage(p, s, sendbuf, true) as *const u8, p.bytes));
        let b = recv.as_ref().map(|r| r.stage(s, recvbuf, Fill::Nothing));
        match root {
            Ok(root) => nbc::gather(s, cx, snd, b.as_ref(), root),
            Err(root) => nbi::gather(s, cx, snd, b.as_ref(), root),
        }
        if let (Some(r), Some(b)) = (&recv, &b) {
            r.unstage(s, recvbuf, b, if snd.is_none() { root.ok() } else { None });
        }
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Scatter / MPI_Scatterv and their forms.
///
/// # Safety
/// As `gather_any`.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_any(sendbuf: *const c_void, scounts: Counts, stype: MPI_Datatype, recvbuf: *mut c_void, rcount: i64, rtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::OneToAll, rcount, rtype, root == c.rank as c_int || root == MPI_ROOT);
    let (send, recv, root) = if c.is_inter() {
        let root = inter_root(&c, root)?;
        // SAFETY: the arrays hold one entry per remote rank at the root (MPI contract).
        let send = if root == InterRoot::Root { Some(unsafe { typed_blocks(scounts, c.peer_size(), stype, sendbuf, "send buffer")? }) } else { None };
        let recv = if matches!(root, InterRoot::Remote(_)) { Some(single(recvbuf, rcount, rtype, "receive buffer")?) } else { None };
        (send, recv, Err(root))
    } else {
        let root = root_rank(&c, root)?;
        let is_root = c.rank == root;
        // SAFETY: the arrays hold one entry per rank at the root (MPI contract).
        let send = if is_root { Some(unsafe { typed_blocks(scounts, c.size(), stype, sendbuf, "send buffer")? }) } else { None };
        let recv = if is_root && in_place(recvbuf) { None } else { Some(single(recvbuf, rcount, rtype, "receive buffer")?) };
        if let (Some(sb), Some(rp), true) = (&send, &recv, is_root) {
            root_not_aliased(recvbuf, rp, sendbuf, sb, root)?;
        }
        (send, recv, Ok(root))
    };
    let varying = scounts.varying();
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: the buffers hold their elements (checked above); a staged receive buffer is
            // unpacked after the scatter.
            unsafe {
                let s = send.as_ref().map(|s| s.blocks(sendbuf as *mut c_void, &mut ts, Fill::All));
                let r = recv.as_ref().map(|p| (p.bytes_of(recvbuf, &mut tr, false), p.bytes));
                let res = match root {
                    Err(root) => scatter::inter(cx, s.as_ref(), r, root),
                    Ok(root) if varying => scatter::linear(cx, s.as_ref(), r, root),
                    Ok(root) => scatter::scatter(cx, s.as_ref(), r, root),
                };
                if let Some(p) = &recv {
                    p.unpack(recvbuf, &mut tr);
                }
                res
            }
        });
    }
    let (send, recv) = (send.map(Arc::new), recv.map(Arc::new));
    let build: Build = Box::new(move |cx: &crate::coll::Coll, s: &mut Schedule| {
        let b = send.as_ref().map(|t| t.stage(s, sendbuf as *mut c_void, Fill::All));
        let r = recv.as_ref().map(|p| (stage(p, s, recvbuf, false), p.bytes));
        match root {
            Ok(root) => nbc::scatter(s, cx, b.as_ref(), r, root),
            Err(root) => nbi::scatter(s, cx, b.as_ref(), r, root),
        }
        if let (Some(p), Some((t, _))) = (&recv, r) {
            unstage(p, s, recvbuf, t);
        }
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Allgather / MPI_Allgatherv and their forms.
///
/// # Safety
/// As `gather_any`.
#[allow(clippy::too_many_arguments)]
unsafe fn allgather_any(sendbuf: *const c_void, scount: i64, stype: MPI_Datatype, recvbuf: *mut c_void, rcounts: Counts, rtype: MPI_Datatype, comm: MPI_Comm, how: Launch) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, scount, stype, true);
    let inter = c.is_inter();
    // MPI_IN_PLACE is not allowed on intercommunicators (MPI 4.1 section 6.7).
    let send = if !inter && in_place(sendbuf) { None } else { Some(single(sendbuf, scount, stype, "send buffer")?) };
    let n = if inter { c.peer_size() } else { c.size() };
    // SAFETY: the arrays hold one entry per (remote) rank (MPI contract).
    let recv = unsafe { typed_blocks(rcounts, n, rtype, recvbuf, "receive buffer")? };
    let me = c.rank;
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: the buffers hold their elements (checked above). In place, this rank's block
            // is taken from the receive buffer (packed first when staged) and not unpacked again.
            unsafe {
                let s = sending(send.as_ref(), sendbuf, &mut ts);
                let own = if s.is_none() { Some(me) } else { None };
                let b = recv.blocks(recvbuf, &mut tr, own.map_or(Fill::Nothing, Fill::One));
                let res = match s {
                    Some(s) if inter => allgather::inter(cx, s, &b),
                    _ => allgather::allgather(cx, s, &b),
                };
                recv.unpack(recvbuf, &mut tr, own);
                res
            }
        });
    }
    let (send, recv) = (send.map(Arc::new), Arc::new(recv));
    let build: Build = Box::new(move |cx: &crate::coll::Coll, s: &mut Schedule| {
        let snd = send.as_ref().map(|p| (stage(p, s, sendbuf, true) as *const u8, p.bytes));
        // In place, this rank's block is taken from the receive buffer and not unpacked.
        let own = snd.is_none().then_some(me);
        let b = recv.stage(s, recvbuf, own.map_or(Fill::Nothing, Fill::One));
        match snd {
            Some(snd) if inter => nbi::allgather(s, cx, snd, &b),
            _ => nbc::allgather(s, cx, snd, &b),
        }
        recv.unstage(s, recvbuf, &b, own);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

// The cores of the families (src/ffi/families.rs). Safety of each: as `gather_any`, the count
// arrays holding one entry per (remote) rank at the ranks that read them.

pub(in crate::ffi) unsafe fn gather(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `gather_any`'s.
    unsafe { gather_any(sendbuf, sendcount.get(), sendtype, recvbuf, Counts::Same(recvcount.get()), recvtype, root, comm, how) }
}

pub(in crate::ffi) unsafe fn gatherv<C: CountArg, D: CountArg>(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `gather_any`'s.
    unsafe { gather_any(sendbuf, sendcount.get(), sendtype, recvbuf, Counts::Each(C::array(recvcounts), D::array(displs)), recvtype, root, comm, how) }
}

pub(in crate::ffi) unsafe fn scatter(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `scatter_any`'s.
    unsafe { scatter_any(sendbuf, Counts::Same(sendcount.get()), sendtype, recvbuf, recvcount.get(), recvtype, root, comm, how) }
}

pub(in crate::ffi) unsafe fn scatterv<C: CountArg, D: CountArg>(sendbuf: *const c_void, sendcounts: *const C, displs: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `scatter_any`'s.
    unsafe { scatter_any(sendbuf, Counts::Each(C::array(sendcounts), D::array(displs)), sendtype, recvbuf, recvcount.get(), recvtype, root, comm, how) }
}

pub(in crate::ffi) unsafe fn allgather(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `allgather_any`'s.
    unsafe { allgather_any(sendbuf, sendcount.get(), sendtype, recvbuf, Counts::Same(recvcount.get()), recvtype, comm, how) }
}

pub(in crate::ffi) unsafe fn allgatherv<C: CountArg, D: CountArg>(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, how: Launch) -> MpiResult {
    // SAFETY: this function's contract is `allgather_any`'s.
    unsafe { allgather_any(sendbuf, sendcount.get(), sendtype, recvbuf, Counts::Each(C::array(recvcounts), D::array(displs)), recvtype, comm, how) }
}
