//! MPI_Scan and MPI_Exscan (MPI 4.1 sections 6.11.2-6.11.3) in their six forms, on
//! intracommunicators (the standard defines no intercommunicator scans). Algorithms in
//! `crate::coll::scan`.
use crate::ffi::check;
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::CountArg;
use crate::coll::nbc;
use std::sync::Arc;
use crate::abi::*;
use crate::error::{err, MpiResult};
use std::os::raw::c_void;

/// MPI_Scan (`exclusive` false) or MPI_Exscan and their forms.
///
/// # Safety
/// The buffers must hold `count` elements of `datatype`; `how`'s request must be writable.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, exclusive: bool, how: Launch) -> MpiResult {
    let count = count.get();
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, count, datatype, true);
    let name = if exclusive { "MPI_Exscan" } else { "MPI_Scan" };
    if c.is_inter() {
        return Err(err(MPI_ERR_COMM, format!("{name} is not defined on intercommunicators (MPI 4.1 section 6.11)")));
    }
    let (red, n, plan) = reduction(count, datatype, op)?;
    // Exscan's receive buffer at rank 0 is not significant, and left untouched.
    let writes = !(exclusive && c.rank == 0);
    let inplace = in_place(sendbuf);
    if writes || inplace {
        plan.check(recvbuf, "receive buffer")?;
    }
    if !inplace {
        plan.check(sendbuf, "send buffer")?;
        if writes && !plan.derived {
            no_alias(sendbuf, recvbuf, plan.bytes)?;
        }
    }
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: the buffers hold `count` elements of the datatype (checked above); in place
            // the input is copied first, so the algorithms get disjoint buffers.
            unsafe {
                let s = if inplace {
                    ts = plan.owned(recvbuf);
                    ts.as_ptr()
                } else {
                    plan.bytes_of(sendbuf, &mut ts, true)
                };
                let r = if writes { plan.bytes_of(recvbuf, &mut tr, false) } else { std::ptr::null_mut() };
                crate::coll::scan::scan(cx, s, r, n, &red, exclusive)?;
                if writes {
                    plan.unpack(recvbuf, &mut tr);
                }
            }
            Ok(())
        });
    }
    let (plan, red) = (Arc::new(plan), Arc::new(red));
    let build: Build = Box::new(move |cx, s| {
        // The input, disjoint from the result: packed, or a private copy when in place.
        let inp = if inplace { private(&plan, s, recvbuf) } else { stage(&plan, s, sendbuf, true) };
        let out = if writes { stage(&plan, s, recvbuf, false) } else { std::ptr::null_mut() };
        nbc::scan(s, cx, inp, out, n, red, exclusive);
        if writes {
            unstage(&plan, s, recvbuf, out);
        }
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}
