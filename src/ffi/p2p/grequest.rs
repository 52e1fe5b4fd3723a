//! Generalized requests at the C boundary: MPI_Grequest_start / MPI_Grequest_complete and MPICH's
//! MPIX_Grequest_start / MPIX_Grequest_class_create / MPIX_Grequest_class_allocate. The
//! application's C functions become a `p2p::grequest::Callbacks` object; the request itself lives
//! in `crate::p2p::grequest`.
use crate::abi::*;
use crate::error::{err, ErrorClass, MpiResult};
use crate::export;
use crate::ffi::check::{self, req_handle, ReqRef};
use crate::ffi::pointer_args::out;
use crate::p2p::grequest::{self, CbResult, Callbacks, Grequests};
use crate::p2p::Status;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex};

/// The functions of a generalized request or class, as the application gave them.
#[derive(Clone, Copy)]
struct Fns {
    query: Option<MPI_Grequest_query_function>,
    free: Option<MPI_Grequest_free_function>,
    cancel: Option<MPI_Grequest_cancel_function>,
    poll: Option<MPIX_Grequest_poll_function>,
    wait: Option<MPIX_Grequest_wait_function>,
}

/// One request's functions and its extra state.
struct CCallbacks {
    fns: Fns,
    extra: *mut c_void,
}

// SAFETY: the extra state is the application's; MPI hands it back to the application's own
// functions, from whichever thread completes the request, as MPI 4.1 section 13.2 specifies (the
// application makes its functions thread-safe where it uses threads).
unsafe impl Send for CCallbacks {}
// SAFETY: as above; oxmpi never dereferences `extra`.
unsafe impl Sync for CCallbacks {}

/// A C status holding engine status `st` (MPI_ERROR MPI_SUCCESS; no rank translation: a
/// generalized request's source is whatever its query function says).
fn c_status(st: &Status) -> MPI_Status {
    let mut c = MPI_Status { MPI_SOURCE: st.source, MPI_TAG: st.tag, MPI_ERROR: MPI_SUCCESS, ..Default::default() };
    c.set_count_bytes(st.bytes, st.cancelled);
    c
}

/// The engine status a callback left in `c`.
fn engine_status(c: &MPI_Status) -> Status {
    Status { source: c.MPI_SOURCE, tag: c.MPI_TAG, bytes: c.count_bytes(), cancelled: c.cancelled(), ..Status::empty() }
}

/// A callback's return code as an error: a code oxmpi knows (a predefined class, one of its own
/// codes, an application class or code) is kept as it is; anything else is MPI_ERR_OTHER.
fn rc_result(rc: c_int) -> CbResult {
    if rc == MPI_SUCCESS {
        return Ok(());
    }
    Err(match crate::ffi::error_codes::class_of(rc) {
        Some(_) => ErrorClass::from_mpich(rc),
        None => ErrorClass::Other,
    })
}

impl Callbacks for CCallbacks {
    fn query(&self, st: &mut Status) -> CbResult {
        let Some(f) = self.fns.query else { return Ok(()) };
        let mut c = c_status(st);
        // SAFETY: the application's query function, called as MPI 4.1 section 13.2 specifies
        // with its extra state and a status it may write.
        let rc = unsafe { f(self.extra, &mut c) };
        *st = engine_status(&c);
        rc_result(rc)
    }

    fn free(&self) -> CbResult {
        let Some(f) = self.fns.free else { return Ok(()) };
        // SAFETY: the application's free function with its extra state (MPI 4.1 section 13.2).
        rc_result(unsafe { f(self.extra) })
    }

    fn cancel(&self, complete: bool) -> CbResult {
        let Some(f) = self.fns.cancel else { return Ok(()) };
        // SAFETY: the application's cancel function with its extra state (MPI 4.1 section 13.2).
        rc_result(unsafe { f(self.extra, complete as c_int) })
    }

    fn poll(&self) -> Option<CbResult> {
        let f = self.fns.poll?;
        let mut c = c_status(&Status::empty());
        // SAFETY: the application's MPIX poll function with its extra state and a status it may
        // write (MPICH's contract for MPIX_Grequest_poll_function).
        Some(rc_result(unsafe { f(self.extra, &mut c) }))
    }

    fn wait(&self) -> Option<CbResult> {
        let f = self.fns.wait?;
        let mut states = [self.extra];
        let mut c = c_status(&Status::empty());
        // SAFETY: the application's MPIX wait function with one state, no timeout and a status
        // it may write (MPICH's contract for MPIX_Grequest_wait_function).
        Some(rc_result(unsafe { f(1, states.as_mut_ptr(), 0.0, &mut c) }))
    }
}

/// The classes of MPIX_Grequest_class_create (never freed, as in MPICH); a class handle is its
/// index plus CLASS_BASE.
static CLASSES: Mutex<Vec<Fns>> = Mutex::new(Vec::new());
const CLASS_BASE: c_int = 0x3c00_0000;

/// Starts a generalized request with `fns` and writes its handle.
fn start(fns: Fns, extra: *mut c_void, request: *mut MPI_Request) -> MpiResult {
    let request = out(request, "request")?;
    let u = check::universe()?;
    let id = Grequests::of(&u.engine).start(&u.engine, Arc::new(CCallbacks { fns, extra }), fns.poll.is_some());
    // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
    unsafe { *request = req_handle(id) };
    Ok(())
}

/// After a wait or test released the request `r` with status `st`: a generalized request's query
/// and free functions run (see `Grequests::finish`).
pub(in crate::ffi) fn settle(r: ReqRef, st: &mut Status) {
    if let ReqRef::Engine(id, _, gen) = r {
        if grequest::any_live() {
            if let Ok(u) = check::universe() {
                Grequests::of(&u.engine).finish(id, gen, st);
            }
        }
    }
}

/// MPI_Request_get_status on a complete request `r`: a generalized request's query function
/// fills `st`.
pub(in crate::ffi) fn peek(r: ReqRef, st: &mut Status) {
    if let ReqRef::Engine(id, _, gen) = r {
        if grequest::any_live() {
            if let Ok(u) = check::universe() {
                Grequests::of(&u.engine).peek(id, gen, st);
            }
        }
    }
}

/// MPI_Cancel and MPI_Request_free on a generalized request: None for other requests.
pub(in crate::ffi) fn cancel(r: ReqRef) -> Option<MpiResult> {
    let ReqRef::Engine(id, _, gen) = r else { return None };
    if !grequest::any_live() {
        return None;
    }
    let u = check::universe().ok()?;
    let res = Grequests::of(&u.engine).cancel(id, gen)?;
    Some(res.map_err(|c| err(c, "the cancel function of the generalized request returned an error")))
}

pub(in crate::ffi) fn free(r: ReqRef) -> Option<MpiResult> {
    let ReqRef::Engine(id, _, gen) = r else { return None };
    if !grequest::any_live() {
        return None;
    }
    let u = check::universe().ok()?;
    let res = Grequests::of(&u.engine).free(&u.engine, id, gen)?;
    Some(res.map_err(|c| err(c, "the free function of the generalized request returned an error")))
}

/// Before blocking on `refs`: the MPIX wait functions of pending generalized requests.
pub(in crate::ffi) fn block(refs: &[ReqRef]) {
    if !grequest::any_live() {
        return;
    }
    let Ok(u) = check::universe() else { return };
    let ids: Vec<(u32, u32)> = refs.iter().filter_map(|r| if let ReqRef::Engine(id, _, gen) = *r { Some((id, gen)) } else { None }).collect();
    Grequests::of(&u.engine).block(&ids);
}

export! {
    fn MPI_Grequest_start / PMPI_Grequest_start (query_fn: Option<MPI_Grequest_query_function>, free_fn: Option<MPI_Grequest_free_function>, cancel_fn: Option<MPI_Grequest_cancel_function>, extra_state: *mut c_void, request: *mut MPI_Request) on comm MPI_COMM_SELF => {
        start(Fns { query: query_fn, free: free_fn, cancel: cancel_fn, poll: None, wait: None }, extra_state, request)
    }

    fn MPI_Grequest_complete / PMPI_Grequest_complete (request: MPI_Request) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        if handle_kind(request) != HANDLE_KIND_DIRECT || handle_object(request) != OBJ_REQUEST {
            return Err(err(MPI_ERR_REQUEST, format!("invalid request 0x{:08x}: not a generalized request", request as u32)));
        }
        Grequests::of(&u.engine).complete(&u.engine, handle_index(request))
    }

    fn MPIX_Grequest_start / PMPIX_Grequest_start (query_fn: Option<MPI_Grequest_query_function>, free_fn: Option<MPI_Grequest_free_function>, cancel_fn: Option<MPI_Grequest_cancel_function>, poll_fn: Option<MPIX_Grequest_poll_function>, wait_fn: Option<MPIX_Grequest_wait_function>, extra_state: *mut c_void, request: *mut MPI_Request) on comm MPI_COMM_SELF => {
        start(Fns { query: query_fn, free: free_fn, cancel: cancel_fn, poll: poll_fn, wait: wait_fn }, extra_state, request)
    }

    fn MPIX_Grequest_class_create / PMPIX_Grequest_class_create (query_fn: Option<MPI_Grequest_query_function>, free_fn: Option<MPI_Grequest_free_function>, cancel_fn: Option<MPI_Grequest_cancel_function>, poll_fn: Option<MPIX_Grequest_poll_function>, wait_fn: Option<MPIX_Grequest_wait_function>, greq_class: *mut MPIX_Grequest_class) on comm MPI_COMM_SELF => {
        let greq_class = out(greq_class, "greq_class")?;
        check::universe()?;
        let mut classes = CLASSES.lock().unwrap_or_else(|p| p.into_inner());
        classes.push(Fns { query: query_fn, free: free_fn, cancel: cancel_fn, poll: poll_fn, wait: wait_fn });
        // SAFETY: non-NULL (`out`); the caller passes the address of a class handle.
        unsafe { *greq_class = CLASS_BASE + (classes.len() - 1) as c_int };
        Ok(())
    }

    fn MPIX_Grequest_class_allocate / PMPIX_Grequest_class_allocate (greq_class: MPIX_Grequest_class, extra_state: *mut c_void, request: *mut MPI_Request) on comm MPI_COMM_SELF => {
        let fns = usize::try_from(greq_class.wrapping_sub(CLASS_BASE)).ok().and_then(|i| CLASSES.lock().unwrap_or_else(|p| p.into_inner()).get(i).copied());
        let fns = fns.ok_or_else(|| err(MPI_ERR_ARG, format!("invalid generalized request class {greq_class} (not made by MPIX_Grequest_class_create)")))?;
        start(fns, extra_state, request)
    }
}
