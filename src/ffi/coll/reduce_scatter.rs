//! MPI_Reduce_scatter and MPI_Reduce_scatter_block (MPI 4.1 section 6.11) in their six forms, on
//! intra- and intercommunicators. The block form is the general one with equal counts. Algorithms
//! in `crate::coll::reduce_scatter`.
use crate::ffi::check;
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::CountArg;
use crate::coll::{nbc, nbc_inter as nbi};
use std::sync::Arc;
use crate::abi::*;
use crate::coll::reduce_scatter as rs;
use crate::error::{err, MpiResult};
use std::os::raw::c_void;

/// The `n` entries of a recvcounts array, as i64.
///
/// # Safety
/// `p` must point to `n` readable elements when `n > 0` (checked for NULL).
unsafe fn counts_of<T: CountArg>(p: *const T, n: usize) -> MpiResult<Vec<i64>> {
    if n > 0 && p.is_null() {
        return Err(err(MPI_ERR_ARG, "recvcounts is NULL"));
    }
    // SAFETY: `n` readable elements at the non-NULL `p` (caller contract).
    Ok((0..n).map(|i| unsafe { *p.add(i) }.into()).collect())
}

/// Whether byte ranges `[a, a + alen)` and `[b, b + blen)` overlap.
fn overlap(a: *const c_void, alen: usize, b: *const c_void, blen: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    alen > 0 && blen > 0 && a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// MPI_Reduce_scatter (and the block form) with the local group's `recvcounts`.
///
/// # Safety
/// The buffers must hold the elements the counts describe; `how`'s request must be writable.
unsafe fn reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: MpiResult<Vec<i64>>, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, how: Launch) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let recvcounts = recvcounts?;
    let tally = Tally::new(Pattern::AllToAll, recvcounts.get(c.rank).copied().unwrap_or(0), datatype, true);
    let mut total: i64 = 0;
    for (i, &n) in recvcounts.iter().enumerate() {
        if n < 0 {
            return Err(err(MPI_ERR_COUNT, format!("invalid recvcounts[{i}] = {n}: must be non-negative")));
        }
        total = total.checked_add(n).ok_or_else(|| err(MPI_ERR_COUNT, "the sum of recvcounts overflows"))?;
    }
    let (red, _, all) = reduction(total, datatype, op)?;
    let (_, _, mine) = reduction(recvcounts[c.rank], datatype, op)?;
    // Elements of the reduction per datatype element (basic elements of a derived type under a
    // predefined op; 1 otherwise).
    let per = reduction(1, datatype, op)?.1;
    let counts: Vec<usize> = recvcounts.iter().map(|&n| n as usize * per).collect();
    mine.check(recvbuf, "receive buffer")?;
    if c.is_inter() {
        // MPI_IN_PLACE is not allowed on intercommunicators (MPI 4.1 section 6.11).
        all.check(sendbuf, "send buffer")?;
        if !all.derived && overlap(sendbuf, all.bytes, recvbuf, mine.bytes) {
            return Err(err(MPI_ERR_BUFFER, "the send and receive buffers overlap (aliased arguments)"));
        }
        if how.is_blocking() {
            return blocking(u, &c, tally, |cx| {
                let (mut ts, mut tr) = (Vec::new(), Vec::new());
                // SAFETY: sendbuf holds the whole vector, recvbuf this rank's block (checked
                // above), contiguous once staged, disjoint.
                unsafe {
                    let s = all.bytes_of(sendbuf, &mut ts, true);
                    let r = mine.bytes_of(recvbuf, &mut tr, false);
                    rs::inter(cx, s, r, &counts, &red)?;
                    mine.unpack(recvbuf, &mut tr);
                }
                Ok(())
            });
        }
        let (all, mine, red) = (Arc::new(all), Arc::new(mine), Arc::new(red));
        let build: Build = Box::new(move |cx, s| {
            let inp = stage(&all, s, sendbuf, true);
            let out = stage(&mine, s, recvbuf, false);
            nbi::reduce_scatter(s, cx, inp, out, &counts, red);
            unstage(&mine, s, recvbuf, out);
        });
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    let inplace = in_place(sendbuf);
    if inplace {
        // The input vector is in recvbuf, which must hold all of it.
        all.check(recvbuf, "receive buffer")?;
    } else {
        all.check(sendbuf, "send buffer")?;
        if !all.derived && overlap(sendbuf, all.bytes, recvbuf, mine.bytes) {
            return Err(err(MPI_ERR_BUFFER, "the send and receive buffers overlap (aliased arguments); use MPI_IN_PLACE to reduce in place"));
        }
    }
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: the buffers hold the elements the counts describe (checked above); in place
            // the input is copied first, so the algorithms get disjoint buffers.
            unsafe {
                let s = if inplace {
                    ts = all.owned(recvbuf);
                    ts.as_ptr()
                } else {
                    all.bytes_of(sendbuf, &mut ts, true)
                };
                let r = mine.bytes_of(recvbuf, &mut tr, false);
                rs::reduce_scatter(cx, s, r, &counts, &red)?;
                mine.unpack(recvbuf, &mut tr);
            }
            Ok(())
        });
    }
    let (all, mine, red) = (Arc::new(all), Arc::new(mine), Arc::new(red));
    let build: Build = Box::new(move |cx, s| {
        // The input, disjoint from the result: packed, or a private copy when in place.
        let inp = if inplace { private(&all, s, recvbuf) } else { stage(&all, s, sendbuf, true) };
        let out = stage(&mine, s, recvbuf, false);
        nbc::reduce_scatter(s, cx, inp, out, &counts, red);
        unstage(&mine, s, recvbuf, out);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Reduce_scatter_block: every rank gets `recvcount` elements.
///
/// # Safety
/// As `reduce_scatter`.
pub(in crate::ffi) unsafe fn block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: impl CountArg, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, how: Launch) -> MpiResult {
    let recvcount = recvcount.get();
    let size = check::universe().and_then(|u| check::comm(u, comm)).map(|c| c.size());
    // SAFETY: per this function's contract (the comm error, if any, is reported by `reduce_scatter`).
    unsafe { reduce_scatter(sendbuf, recvbuf, Ok(vec![recvcount; size.unwrap_or(0)]), datatype, op, comm, how) }
}

/// MPI_Reduce_scatter: rank `i` of the local group gets `recvcounts[i]` elements.
///
/// # Safety
/// As `reduce_scatter`; `recvcounts` holds one entry per rank of the local group.
pub(in crate::ffi) unsafe fn varying<C: CountArg>(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const C, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, how: Launch) -> MpiResult {
    let n = check::universe().and_then(|u| check::comm(u, comm)).map(|c| c.size()).unwrap_or(0);
    // SAFETY: per this function's contract (the comm error, if any, is reported by `reduce_scatter`).
    unsafe { reduce_scatter(sendbuf, recvbuf, counts_of(recvcounts, n), datatype, op, comm, how) }
}
