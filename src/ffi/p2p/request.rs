//! Completion of requests: wait, test (single, any, all, some), cancel, free, start.
use crate::ffi::check::{self, req_ref, write_status_as, ReqRef, Settled, StatusWriter};
use crate::ffi::layer::{CAbi, Mpich};
use crate::ffi::p2p::grequest::{self, settle};
use crate::ffi::pointer_args::{input, out};
use crate::abi::*;
use crate::error::{err, MpiResult, ErrorClass};
use crate::export;
use crate::p2p::stackvec::StackVec;
use crate::p2p::{ReqId, Status};
use std::os::raw::c_int;

/// Request arrays up to this long are kept on the stack (an allocation per call showed in the
/// message-rate profile).
const ON_STACK: usize = 64;
type Refs = StackVec<ReqRef, ON_STACK>;
type Ids = StackVec<Option<ReqId>, ON_STACK>;
type Statuses = StackVec<Status, ON_STACK>;

/// Resolves an array of request handles into `refs` (empty; filled in place, as returning a
/// `StackVec` copies its whole inline array): None for MPI_REQUEST_NULL and (already complete)
/// MPI_PROC_NULL requests, which are handled by the caller.
///
/// # Safety
/// `reqs` is NULL or holds `count` request handles.
unsafe fn resolve(count: c_int, reqs: *mut MPI_Request, refs: &mut Refs) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { resolve_as::<Mpich>(count, reqs, refs) }
}

/// `resolve` of an array of request handles in the caller's ABI `A` (crate::ffi::layer), each
/// converted as it is read.
///
/// # Safety
/// As `resolve`.
// Always inlined, as `finish_all_as`: left calls once several completion calls shared them, the
// two cost MPI_Waitall 9 instructions per call (callgrind, benches/abi_layer_one.c isend_wait8).
#[inline(always)]
unsafe fn resolve_as<A: CAbi>(count: c_int, reqs: *mut A::Request, refs: &mut Refs) -> MpiResult {
    let n = check::count(count)?;
    // SAFETY: `count` handles at `reqs` (this function's contract); the slice is dropped before
    // anyone writes them.
    let handles = unsafe { input(reqs as *const A::Request, n, "array_of_requests")? };
    let u = check::universe()?;
    // One engine lock for the whole array rather than one per handle.
    refs.reserve_total(n);
    u.engine.persistence_with(|look| {
        for &h in handles {
            refs.push(check::req_ref_by(A::request_in(h), look)?);
        }
        Ok(())
    })
}

/// The engine ids of `refs`, into `ids` (empty; in place as in `resolve`).
fn ids_into(refs: &[ReqRef], ids: &mut Ids) {
    ids.reserve_total(refs.len());
    for r in refs {
        ids.push(if let ReqRef::Engine(id, _, _) = r { Some(*id) } else { None });
    }
}

/// Sets the user's handle after completion: persistent requests keep theirs (they only become
/// inactive), every other request handle becomes MPI_REQUEST_NULL.
///
/// # Safety
/// `h` points to the caller's request handle (writable), in the caller's ABI `A`.
#[inline]
unsafe fn release_handle_as<A: CAbi>(h: *mut A::Request, r: ReqRef) {
    match r {
        ReqRef::Engine(_, true, _) => {}
        // SAFETY: this function's contract.
        _ => unsafe { *h = A::request_out(MPI_REQUEST_NULL) },
    }
}

fn status_error(st: &Status) -> MpiResult {
    if st.error.is_some() {
        check::note_failed_context(st.context);
    }
    match st.error {
        None => Ok(()),
        Some(ErrorClass::Truncate) => Err(err(MPI_ERR_TRUNCATE, "message truncated: the message was longer than the receive buffer")),
        Some(ErrorClass::ProcFailed | ErrorClass::ProcFailedPending | ErrorClass::Revoked) => crate::p2p::engine::failure_result(st),
        Some(class) => Err(err(class, "the operation of this request failed (MPI_Comm_idup could not agree on a context id, or a function of a generalized request returned this error)")),
    }
}

/// The `i`-th status of an array of statuses in the caller's ABI `A`, or MPI_STATUSES_IGNORE if
/// it is that. Only address arithmetic: whoever writes the status vouches for the array.
#[inline]
fn status_at_as<A: CAbi>(statuses: *mut A::Status, i: usize) -> *mut A::Status {
    if A::status_ignored(statuses) { statuses } else { statuses.wrapping_add(i) }
}

/// For multiple-completion calls: any failed request makes the call return MPI_ERR_IN_STATUS,
/// raised on the communicator of the first failed one. Inline, the error out of line: left a
/// call, the scan cost MPI_Waitall ~20 instructions (when the crate's code-generation units were
/// partitioned differently, the optimiser did not inline it into `finish_all`).
#[inline]
fn in_status<'a>(mut statuses: impl Iterator<Item = &'a Status>) -> MpiResult {
    match statuses.find(|st| st.error.is_some()) {
        Some(st) => in_status_failed(st),
        None => Ok(()),
    }
}
#[cold]
#[inline(never)]
fn in_status_failed(st: &Status) -> MpiResult {
    check::note_failed_context(st.context);
    Err(err(MPI_ERR_IN_STATUS, "one or more requests failed; see the MPI_ERROR field of their statuses"))
}

/// MPI_Wait's body, in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As MPI_Wait's arguments.
#[inline]
pub(in crate::ffi) unsafe fn wait_as<A: CAbi>(request: *mut A::Request, status: *mut A::Status) -> MpiResult {
    let request = out(request, "request")?;
    let u = check::universe()?;
    // SAFETY: checked non-NULL above; the caller passes its request handle.
    let r = req_ref(u, A::request_in(unsafe { *request }))?;
    let st = match r {
        ReqRef::Null => Status::empty(),
        ReqRef::Complete(k) => k.status(),
        ReqRef::Engine(id, _, _) => {
            grequest::block(&[r]);
            let mut st = u.engine.wait(id);
            settle(r, &mut st);
            st
        }
    };
    // SAFETY: `request` as above (in-out); `status` is MPI_STATUS_IGNORE or a status the
    // caller lets us write.
    unsafe {
        release_handle_as::<A>(request, r);
        write_status_as::<A>(status, &st, false);
    }
    status_error(&st)
}

/// MPI_Waitall's body, in the caller's ABI `A` (crate::ffi::layer): the requests are converted
/// as they are read and written, the statuses written in `A`'s layout, no copy of either array.
///
/// # Safety
/// As MPI_Waitall's arguments.
#[inline]
pub(in crate::ffi) unsafe fn waitall_as<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, array_of_statuses: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected).
    unsafe { resolve_as::<A>(count, array_of_requests, &mut refs)? };
    let u = check::universe()?;
    grequest::block(&refs);
    let (mut ids, mut sts) = (Ids::new(), Statuses::new());
    ids_into(&refs, &mut ids);
    sts.fill(Status::empty(), refs.len());
    u.engine.wait_all(&ids, &mut sts);
    // SAFETY: `array_of_requests` holds `count` handles (resolved above); the statuses are
    // MPI_STATUSES_IGNORE or `count` statuses the caller lets us write.
    unsafe { finish_all_as::<A>(&refs, &mut sts, array_of_requests, array_of_statuses) }
}

/// MPI_Test's body, in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As MPI_Test's arguments.
#[inline]
pub(in crate::ffi) unsafe fn test_as<A: CAbi>(request: *mut A::Request, flag: *mut c_int, status: *mut A::Status) -> MpiResult {
    let request = out(request, "request")?;
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    // SAFETY: checked non-NULL above; the caller passes its request handle.
    let r = req_ref(u, A::request_in(unsafe { *request }))?;
    let st = match r {
        ReqRef::Null => Some(Status::empty()),
        ReqRef::Complete(k) => Some(k.status()),
        ReqRef::Engine(id, _, _) => u.engine.test(id).map(|mut st| {
            settle(r, &mut st);
            st
        }),
    };
    // SAFETY: checked non-NULL above; the caller passes an int.
    unsafe { *flag = st.is_some() as c_int };
    if let Some(st) = st {
        // SAFETY: `request` as above (in-out); `status` is MPI_STATUS_IGNORE or a status the
        // caller lets us write.
        unsafe {
            release_handle_as::<A>(request, r);
            write_status_as::<A>(status, &st, false);
        }
        status_error(&st)?;
    }
    Ok(())
}

/// MPI_Testall's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Testall's arguments.
#[inline]
pub(in crate::ffi) unsafe fn testall_as<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, flag: *mut c_int, array_of_statuses: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected).
    unsafe { resolve_as::<A>(count, array_of_requests, &mut refs)? };
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    let (mut ids, mut sts) = (Ids::new(), Statuses::new());
    ids_into(&refs, &mut ids);
    sts.fill(Status::empty(), refs.len());
    if !u.engine.test_all(&ids, &mut sts) {
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *flag = 0 };
        return Ok(());
    }
    // SAFETY: as above.
    unsafe { *flag = 1 };
    // SAFETY: `array_of_requests` holds `count` handles (resolved above); the statuses are
    // MPI_STATUSES_IGNORE or `count` statuses the caller lets us write.
    unsafe { finish_all_as::<A>(&refs, &mut sts, array_of_requests, array_of_statuses) }
}

/// MPI_Waitany's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Waitany's arguments.
#[inline]
pub(in crate::ffi) unsafe fn waitany_as<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, index: *mut c_int, status: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected).
    unsafe { resolve_as::<A>(count, array_of_requests, &mut refs)? };
    let index = out(index, "index")?;
    let u = check::universe()?;
    // SAFETY: for all the writes of this call: `array_of_requests` holds `count` handles
    // (resolved above), `index` is an int (checked non-NULL above), `status` is
    // MPI_STATUS_IGNORE or a status the caller lets us write.
    if unsafe { any_settled_without_engine::<A>(&refs, array_of_requests, index, status) } {
        return Ok(());
    }
    // Inactive persistent requests count as null: none active means MPI_UNDEFINED.
    grequest::block(&refs);
    let mut ids = Ids::new();
    ids_into(&refs, &mut ids);
    let Some((i, mut st)) = u.engine.wait_any(&ids) else {
        // SAFETY: see above.
        unsafe {
            *index = MPI_UNDEFINED;
            write_status_as::<A>(status, &Status::empty(), false);
        }
        return Ok(());
    };
    settle(refs[i], &mut st);
    // SAFETY: see above; `i` < `count`.
    unsafe {
        release_handle_as::<A>(array_of_requests.add(i), refs[i]);
        *index = i as c_int;
        write_status_as::<A>(status, &st, false);
    }
    status_error(&st)
}

/// MPI_Testany's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Testany's arguments.
#[inline]
pub(in crate::ffi) unsafe fn testany_as<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, index: *mut c_int, flag: *mut c_int, status: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected).
    unsafe { resolve_as::<A>(count, array_of_requests, &mut refs)? };
    let index = out(index, "index")?;
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    // SAFETY: for all the writes of this call: `array_of_requests` holds `count` handles
    // (resolved above), `index` and `flag` are ints (checked non-NULL above), `status` is
    // MPI_STATUS_IGNORE or a status the caller lets us write.
    if unsafe { any_settled_without_engine::<A>(&refs, array_of_requests, index, status) } {
        // SAFETY: see above.
        unsafe { *flag = 1 };
        return Ok(());
    }
    // Complete at most one: the first active request that is done. Inactive persistent
    // requests count as null: none active means flag true and MPI_UNDEFINED.
    let mut ids = Ids::new();
    ids_into(&refs, &mut ids);
    match u.engine.test_any(&ids) {
        Some(Some((i, mut st))) => {
            settle(refs[i], &mut st);
            // SAFETY: see above; `i` < `count`.
            unsafe {
                release_handle_as::<A>(array_of_requests.add(i), refs[i]);
                *index = i as c_int;
                *flag = 1;
                write_status_as::<A>(status, &st, false);
            }
            status_error(&st)
        }
        Some(None) => {
            // SAFETY: see above.
            unsafe {
                *index = MPI_UNDEFINED;
                *flag = 1;
                write_status_as::<A>(status, &Status::empty(), false);
            }
            Ok(())
        }
        None => {
            // SAFETY: see above.
            unsafe {
                *flag = 0;
                *index = MPI_UNDEFINED;
            }
            Ok(())
        }
    }
}

/// MPI_Request_free's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Request_free's argument.
#[inline]
pub(in crate::ffi) unsafe fn request_free_as<A: CAbi>(request: *mut A::Request) -> MpiResult {
    let request = out(request, "request")?;
    let u = check::universe()?;
    // SAFETY: checked non-NULL above; the caller passes its request handle.
    let r = req_ref(u, A::request_in(unsafe { *request }))?;
    if let Some(res) = grequest::free(r) {
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *request = A::request_out(MPI_REQUEST_NULL) };
        return res;
    }
    match r {
        ReqRef::Null => return Err(err(MPI_ERR_REQUEST, "cannot free MPI_REQUEST_NULL")),
        ReqRef::Complete(_) => {}
        ReqRef::Engine(id, ..) => {
            crate::ffi::coll::launch::forget(u, id);
            crate::p2p::partitioned::forget(&u.engine, id);
            u.engine.free(id)
        }
    }
    // SAFETY: as above; the handle argument is in-out.
    unsafe { *request = A::request_out(MPI_REQUEST_NULL) };
    Ok(())
}

export! {
    fn MPI_Wait / PMPI_Wait (request: *mut MPI_Request, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Wait requires.
        unsafe { wait_as::<Mpich>(request, status) }
    }

    fn MPI_Request_get_status / PMPI_Request_get_status (request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Request_get_status requires.
        unsafe { request_get_status_as::<Mpich>(request, flag, status) }
    }

    fn MPI_Waitall / PMPI_Waitall (count: c_int, array_of_requests: *mut MPI_Request, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Waitall requires.
        unsafe { waitall_as::<Mpich>(count, array_of_requests, array_of_statuses) }
    }

    fn MPI_Test / PMPI_Test (request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Test requires.
        unsafe { test_as::<Mpich>(request, flag, status) }
    }

    fn MPI_Testall / PMPI_Testall (count: c_int, array_of_requests: *mut MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Testall requires.
        unsafe { testall_as::<Mpich>(count, array_of_requests, flag, array_of_statuses) }
    }

    fn MPI_Waitany / PMPI_Waitany (count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Waitany requires.
        unsafe { waitany_as::<Mpich>(count, array_of_requests, index, status) }
    }

    fn MPI_Testany / PMPI_Testany (count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Testany requires.
        unsafe { testany_as::<Mpich>(count, array_of_requests, index, flag, status) }
    }

    fn MPI_Waitsome / PMPI_Waitsome (incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the arrays hold `incount` elements each (or are MPI_STATUSES_IGNORE), as the
        // standard requires; `outcount` is an int (NULL pointers are rejected).
        unsafe { some_as::<Mpich>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true) }
    }

    fn MPI_Testsome / PMPI_Testsome (incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: as in MPI_Waitsome.
        unsafe { some_as::<Mpich>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, false) }
    }

    fn MPI_Cancel / PMPI_Cancel (request: *mut MPI_Request) on comm MPI_COMM_WORLD => {
        let request = out(request, "request")?;
        let u = check::universe()?;
        // SAFETY: checked non-NULL above; the caller passes its request handle.
        let r = req_ref(u, unsafe { *request })?;
        if let Some(res) = grequest::cancel(r) {
            return res;
        }
        match r {
            ReqRef::Null => Err(err(MPI_ERR_REQUEST, "cannot cancel MPI_REQUEST_NULL")),
            // Complete already: a cancel has no effect (MPI_Test_cancelled says false).
            ReqRef::Complete(_) => Ok(()),
            // MPI 4.1 section 6.12: cancelling a nonblocking or persistent collective is erroneous.
            ReqRef::Engine(id, _, _) if crate::ffi::coll::launch::is_collective(u, id) => Err(err(MPI_ERR_REQUEST, "MPI_Cancel of a collective request is not allowed; wait for it instead")),
            ReqRef::Engine(id, _, _) => {
                if crate::p2p::partitioned::cancel(&u.engine, id).is_none() {
                    u.engine.cancel(id);
                }
                Ok(())
            }
        }
    }

    fn MPI_Request_free / PMPI_Request_free (request: *mut MPI_Request) on comm MPI_COMM_WORLD => {
        // SAFETY: the caller's argument, as MPI_Request_free requires.
        unsafe { request_free_as::<Mpich>(request) }
    }

    fn MPI_Start / PMPI_Start (request: *mut MPI_Request) on comm MPI_COMM_WORLD => {
        let request = out(request, "request")?;
        let u = check::universe()?;
        // SAFETY: checked non-NULL above; the caller passes its request handle.
        match req_ref(u, unsafe { *request })? {
            ReqRef::Null => Err(err(MPI_ERR_REQUEST, "cannot start MPI_REQUEST_NULL")),
            ReqRef::Complete(Settled::ProcNull) => Ok(()),
            ReqRef::Complete(Settled::Sent) => Err(not_persistent()),
            ReqRef::Engine(id, _, _) => start_one(u, id),
        }
    }

    fn MPI_Startall / PMPI_Startall (count: c_int, array_of_requests: *mut MPI_Request) on comm MPI_COMM_WORLD => {
        let mut refs = Refs::new();
        // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected).
        unsafe { resolve(count, array_of_requests, &mut refs)? };
        let u = check::universe()?;
        for &r in refs.iter() {
            match r {
                ReqRef::Null => return Err(err(MPI_ERR_REQUEST, "cannot start MPI_REQUEST_NULL")),
                ReqRef::Complete(Settled::ProcNull) => {}
                ReqRef::Complete(Settled::Sent) => return Err(not_persistent()),
                ReqRef::Engine(id, _, _) => start_one(u, id)?,
            }
        }
        Ok(())
    }
}

fn not_persistent() -> crate::error::MpiError {
    err(MPI_ERR_REQUEST, "MPI_Start needs a persistent request (from MPI_Send_init, MPI_Recv_init, ...)")
}

/// MPI_Start of engine request `id`: a persistent collective, a partitioned request or a
/// persistent send or receive.
fn start_one(u: &'static crate::instance::Instance, id: ReqId) -> MpiResult {
    crate::ffi::coll::launch::start(u, id).or_else(|| crate::p2p::partitioned::start(&u.engine, id)).unwrap_or_else(|| u.engine.start(id))
}

/// MPI_Waitany/MPI_Testany cases the engine need not see: a PROC_NULL request or a send pushed
/// at its start (`ReqRef::Complete`) is complete at once (it is taken), and a list of only null requests gives MPI_UNDEFINED. Returns whether one
/// of them applied (index and status are then written).
///
/// # Safety
/// `reqs` holds `refs.len()` handles; `index` is writable; `status` is a status or IGNORE.
#[inline]
unsafe fn any_settled_without_engine<A: CAbi>(refs: &[ReqRef], reqs: *mut A::Request, index: *mut c_int, status: *mut A::Status) -> bool {
    if let Some((i, &ReqRef::Complete(k))) = refs.iter().enumerate().find(|(_, r)| matches!(r, ReqRef::Complete(_))) {
        // SAFETY: `i` < `refs.len()`, the handles at `reqs`; `index` and `status` as this
        // function's contract says.
        unsafe {
            *reqs.add(i) = A::request_out(MPI_REQUEST_NULL);
            *index = i as c_int;
            write_status_as::<A>(status, &k.status(), false);
        }
        return true;
    }
    if refs.iter().all(|r| *r == ReqRef::Null) {
        // SAFETY: this function's contract.
        unsafe {
            *index = MPI_UNDEFINED;
            write_status_as::<A>(status, &Status::empty(), false);
        }
        return true;
    }
    false
}

/// Ends MPI_Waitall/MPI_Testall once every request is complete: releases the handles and writes the
/// statuses; their MPI_ERROR fields are set only when the call returns MPI_ERR_IN_STATUS (MPI 4.1
/// section 3.7.5).
///
/// # Safety
/// `reqs` holds `refs.len()` handles; `statuses` is MPI_STATUSES_IGNORE or `refs.len()` statuses
/// (in the caller's ABI `A`).
#[inline(always)]
unsafe fn finish_all_as<A: CAbi>(refs: &[ReqRef], sts: &mut [Status], reqs: *mut A::Request, statuses: *mut A::Status) -> MpiResult {
    for (r, st) in refs.iter().zip(sts.iter_mut()) {
        match r {
            ReqRef::Engine(..) => settle(*r, st),
            ReqRef::Complete(k) => *st = k.status(),
            ReqRef::Null => *st = Status::empty(),
        }
    }
    let errors = sts.iter().any(|st| st.error.is_some());
    let mut w = StatusWriter::new();
    for (i, (r, st)) in refs.iter().zip(sts.iter()).enumerate() {
        // SAFETY: `i` < `refs.len()`: a handle and a status (or IGNORE) of this function's contract.
        unsafe {
            release_handle_as::<A>(reqs.add(i), *r);
            w.write_as::<A>(status_at_as::<A>(statuses, i), st, errors);
        }
    }
    in_status(sts.iter())
}

/// MPI_Waitsome (`block`) / MPI_Testsome, in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// `reqs` and `indices` are NULL or hold `incount` elements; `outcount` is NULL or an int;
/// `statuses` is MPI_STATUSES_IGNORE or holds `incount` statuses.
#[inline]
pub(in crate::ffi) unsafe fn some_as<A: CAbi>(incount: c_int, reqs: *mut A::Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut A::Status, block: bool) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: this function's contract.
    unsafe { resolve_as::<A>(incount, reqs, &mut refs)? };
    let outcount = out(outcount, "outcount")?;
    let u = check::universe()?;
    if refs.iter().all(|r| *r == ReqRef::Null) {
        // SAFETY: checked non-NULL above; an int by this function's contract.
        unsafe { *outcount = MPI_UNDEFINED };
        return Ok(());
    }
    // Checked before anything completes: a completed request's status must never be lost.
    if indices.is_null() {
        return Err(err(MPI_ERR_ARG, "array_of_indices is NULL"));
    }
    let mut done: StackVec<(usize, Status), ON_STACK> = refs.iter().enumerate().filter_map(|(i, r)| if let ReqRef::Complete(k) = r { Some((i, k.status())) } else { None }).collect();
    let procnull = done.len();
    let mut ids = Ids::new();
    ids_into(&refs, &mut ids);
    if procnull == 0 && block {
        grequest::block(&refs);
    }
    // The engine appends the requests it completed; false: no active request (inactive
    // persistent requests count as null).
    let active = if procnull == 0 && block { u.engine.wait_some(&ids, &mut done) } else { u.engine.test_some(&ids, &mut done) };
    if !active && procnull == 0 {
        // SAFETY: as above.
        unsafe { *outcount = MPI_UNDEFINED };
        return Ok(());
    }
    for (i, st) in done[procnull..].iter_mut() {
        settle(refs[*i], st);
    }
    let errors = done.iter().any(|(_, st)| st.error.is_some());
    let mut w = StatusWriter::new();
    for (k, (i, st)) in done.iter().enumerate() {
        // SAFETY: `k` <= `i` < `incount`: a handle, an index slot (`indices` checked non-NULL
        // above) and a status (or IGNORE) of this function's contract.
        unsafe {
            release_handle_as::<A>(reqs.add(*i), refs[*i]);
            *indices.add(k) = *i as c_int;
            w.write_as::<A>(status_at_as::<A>(statuses, k), st, errors);
        }
    }
    // SAFETY: checked non-NULL above; an int by this function's contract.
    unsafe { *outcount = done.len() as c_int };
    in_status(done.iter().map(|(_, st)| st))
}

/// The status of `r` if it is complete, without releasing it (MPI_Request_get_status and the
/// MPI 4.1 array forms); a generalized request's query function fills it.
fn peek(u: &crate::instance::Instance, r: ReqRef) -> Option<Status> {
    match r {
        ReqRef::Null => Some(Status::empty()),
        ReqRef::Complete(k) => Some(k.status()),
        ReqRef::Engine(id, _, _) => u.engine.peek_status(id).map(|mut st| {
            grequest::peek(r, &mut st);
            st
        }),
    }
}

/// Whether `r` counts in MPI_Request_get_status_any / _some (null and inactive persistent
/// requests do not).
fn counts(u: &crate::instance::Instance, r: ReqRef) -> bool {
    match r {
        ReqRef::Null => false,
        ReqRef::Complete(_) => true,
        ReqRef::Engine(id, _, _) => u.engine.active(id),
    }
}

/// MPI_Request_get_status's body, in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As MPI_Request_get_status's arguments.
#[inline]
pub(in crate::ffi) unsafe fn request_get_status_as<A: CAbi>(request: A::Request, flag: *mut c_int, status: *mut A::Status) -> MpiResult {
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    let st = peek(u, req_ref(u, A::request_in(request))?);
    // SAFETY: `flag` checked non-NULL above, an int; `status` is MPI_STATUS_IGNORE or a
    // status the caller lets us write.
    unsafe {
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            write_status_as::<A>(status, &st, false);
        }
    }
    Ok(())
}

/// MPI_Request_get_status_all's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Request_get_status_all's arguments.
#[inline]
pub(in crate::ffi) unsafe fn request_get_status_all_as<A: CAbi>(count: c_int, array_of_requests: *const A::Request, flag: *mut c_int, array_of_statuses: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: the standard makes `array_of_requests` hold `count` handles (NULL is rejected);
    // they are only read.
    unsafe { resolve_as::<A>(count, array_of_requests as *mut A::Request, &mut refs)? };
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    let mut sts = Vec::with_capacity(refs.len());
    for &r in refs.iter() {
        match peek(u, r) {
            Some(st) => sts.push(st),
            None => {
                // SAFETY: checked non-NULL above; the caller passes an int.
                unsafe { *flag = 0 };
                return Ok(());
            }
        }
    }
    // SAFETY: as above.
    unsafe { *flag = 1 };
    let errors = sts.iter().any(|st| st.error.is_some());
    for (i, st) in sts.iter().enumerate() {
        // SAFETY: `i` < `count`; the statuses are MPI_STATUSES_IGNORE or `count` statuses the
        // caller lets us write.
        unsafe { write_status_as::<A>(status_at_as::<A>(array_of_statuses, i), st, errors) };
    }
    in_status(sts.iter())
}

/// MPI_Request_get_status_any's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Request_get_status_any's arguments.
#[inline]
pub(in crate::ffi) unsafe fn request_get_status_any_as<A: CAbi>(count: c_int, array_of_requests: *const A::Request, index: *mut c_int, flag: *mut c_int, status: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: as in MPI_Request_get_status_all.
    unsafe { resolve_as::<A>(count, array_of_requests as *mut A::Request, &mut refs)? };
    let index = out(index, "index")?;
    let flag = out(flag, "flag")?;
    let u = check::universe()?;
    let mut any = false;
    for (i, &r) in refs.iter().enumerate() {
        if !counts(u, r) {
            continue;
        }
        any = true;
        if let Some(st) = peek(u, r) {
            // SAFETY: `index` and `flag` are ints (checked non-NULL above); `status` is
            // MPI_STATUS_IGNORE or a status the caller lets us write.
            unsafe {
                *index = i as c_int;
                *flag = 1;
                write_status_as::<A>(status, &st, false);
            }
            return status_error(&st);
        }
    }
    // SAFETY: as above.
    unsafe {
        *index = MPI_UNDEFINED;
        *flag = (!any) as c_int;
        if !any {
            // The empty status, MPI_ERROR included (MPI 4.1 section 3.7.3).
            write_status_as::<A>(status, &Status::empty(), true);
        }
    }
    if !any {
        return Ok(());
    }
    u.engine.poll_failed();
    Ok(())
}

/// MPI_Request_get_status_some's body, in the caller's ABI `A`.
///
/// # Safety
/// As MPI_Request_get_status_some's arguments.
#[inline]
pub(in crate::ffi) unsafe fn request_get_status_some_as<A: CAbi>(incount: c_int, array_of_requests: *const A::Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut A::Status) -> MpiResult {
    let mut refs = Refs::new();
    // SAFETY: as in MPI_Request_get_status_all.
    unsafe { resolve_as::<A>(incount, array_of_requests as *mut A::Request, &mut refs)? };
    let outcount = out(outcount, "outcount")?;
    let u = check::universe()?;
    if !refs.iter().any(|&r| counts(u, r)) {
        // SAFETY: checked non-NULL above; an int.
        unsafe { *outcount = MPI_UNDEFINED };
        return Ok(());
    }
    if array_of_indices.is_null() {
        return Err(err(MPI_ERR_ARG, "array_of_indices is NULL"));
    }
    let done: Vec<(usize, Status)> = refs.iter().enumerate().filter(|&(_, &r)| counts(u, r)).filter_map(|(i, &r)| peek(u, r).map(|st| (i, st))).collect();
    let errors = done.iter().any(|(_, st)| st.error.is_some());
    for (k, (i, st)) in done.iter().enumerate() {
        // SAFETY: `k` <= `i` < `incount`: an index slot (checked non-NULL above) and a status
        // (or IGNORE) the caller lets us write.
        unsafe {
            *array_of_indices.add(k) = *i as c_int;
            write_status_as::<A>(status_at_as::<A>(array_of_statuses, k), st, errors);
        }
    }
    // SAFETY: checked non-NULL above; an int.
    unsafe { *outcount = done.len() as c_int };
    if done.is_empty() {
        u.engine.poll_failed();
    }
    in_status(done.iter().map(|(_, st)| st))
}

export! {
    fn MPI_Request_get_status_all / PMPI_Request_get_status_all (count: c_int, array_of_requests: *const MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Request_get_status_all requires.
        unsafe { request_get_status_all_as::<Mpich>(count, array_of_requests, flag, array_of_statuses) }
    }

    fn MPI_Request_get_status_any / PMPI_Request_get_status_any (count: c_int, array_of_requests: *const MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Request_get_status_any requires.
        unsafe { request_get_status_any_as::<Mpich>(count, array_of_requests, index, flag, status) }
    }

    fn MPI_Request_get_status_some / PMPI_Request_get_status_some (incount: c_int, array_of_requests: *const MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) on comm check::failed_comm() => {
        // SAFETY: the caller's arguments, as MPI_Request_get_status_some requires.
        unsafe { request_get_status_some_as::<Mpich>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) }
    }
}
