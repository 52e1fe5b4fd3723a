//! The point-to-point calls whose outputs a foreign ABI layer (src/abi_ompi, src/abi5) would
//! otherwise convert after the MPICH-ABI function returned: requests and statuses. Here the
//! engine's code is generic over how the caller's C ABI spells them ([`CAbi`]), so it writes
//! the caller's request handle and status directly, once, instead of an MPICH value that the
//! layer reads back and rewrites (a temporary per output, a second pass over MPI_Waitall's
//! arrays). The exported MPICH-ABI functions are the same code with [`Mpich`], where every
//! conversion is the identity.
//!
//! The entries below are what a layer's generated wrapper calls (scripts/gen-mpi-abi.py,
//! `DIRECT`) with its own arguments, unconverted: each is the exported function's body, which
//! converts the input handles, ranks and tags as it reads them, its error path (the same
//! handler, the same message) and the error code in the caller's ABI. The wrapper is a jump:
//! converted in the wrapper, the handles kept the arguments live across the conversions' rare
//! calls, and it saved registers and copied stack arguments on every call.
use crate::abi::{MPI_Comm, MPI_Request, MPI_Status};
use crate::ffi::boundary::{raise_on_comm, run};
use crate::ffi::check;
use crate::p2p::{SendMode, Status};
use std::os::raw::{c_int, c_void};

/// A C ABI's handles, ranks, tags, request handles, statuses and error codes, as the engine reads
/// and writes them.
pub trait CAbi {
    /// A handle (communicator, datatype) as the caller passes it.
    type Handle: Copy;
    type Request: Copy;
    type Status;
    /// The MPICH-ABI handle for a communicator or datatype (0, invalid, for none).
    fn handle_in(h: Self::Handle) -> c_int;
    /// A rank argument (MPI_ANY_SOURCE, MPI_PROC_NULL... in MPICH's numbering).
    fn rank_in(r: c_int) -> c_int;
    /// A tag argument (MPI_ANY_TAG in MPICH's numbering).
    fn tag_in(t: c_int) -> c_int;
    /// A buffer argument (MPI_IN_PLACE as MPICH's).
    fn buf_in(p: *const c_void) -> *const c_void;
    /// The MPICH-ABI handle of a request the caller passes.
    fn request_in(r: Self::Request) -> MPI_Request;
    /// The caller's handle for an MPICH-ABI request handle.
    fn request_out(h: MPI_Request) -> Self::Request;
    /// Whether `p` is the ABI's MPI_STATUS_IGNORE (or MPI_STATUSES_IGNORE).
    fn status_ignored(p: *mut Self::Status) -> bool;
    /// Writes status `p` from the engine's `st`, whose source is already the rank in the
    /// operation's communicator (`source`); MPI_ERROR from `st` only if `set_error`.
    ///
    /// # Safety
    /// `p` is a writable status (not ignored).
    unsafe fn fill_status(p: *mut Self::Status, source: i32, st: &Status, set_error: bool);
    /// An MPICH-ABI error code in the ABI's numbering.
    fn code_out(c: c_int) -> c_int;
}

/// The `CAbi` methods of a foreign layer (src/abi5, src/abi_ompi) that forward to its `conv`
/// module's functions of the same meaning (`h_in`, `rank_in`, `tag_in`, `buf_in`, `req_in`,
/// `req_out`, `code_out`; requests are `Handle`s, MPI_STATUS_IGNORE is NULL); expanded inside
/// each layer's `impl CAbi`, where those names resolve to its own module's.
macro_rules! forward_conversions {
    () => {
        #[inline(always)]
        fn handle_in(h: Handle) -> c_int {
            h_in(h)
        }
        #[inline(always)]
        fn rank_in(r: c_int) -> c_int {
            rank_in(r)
        }
        #[inline(always)]
        fn tag_in(t: c_int) -> c_int {
            tag_in(t)
        }
        #[inline(always)]
        fn buf_in(p: *const c_void) -> *const c_void {
            buf_in(p)
        }
        #[inline(always)]
        fn request_in(r: Handle) -> c_int {
            req_in(r)
        }
        #[inline(always)]
        fn request_out(h: c_int) -> Handle {
            req_out(h)
        }
        #[inline(always)]
        fn status_ignored(p: *mut Self::Status) -> bool {
            p.is_null()
        }
        #[inline(always)]
        fn code_out(c: c_int) -> c_int {
            code_out(c)
        }
    };
}
pub(crate) use forward_conversions;

/// The MPICH ABI, what `crate::ffi` exports: no conversion.
pub struct Mpich;

impl CAbi for Mpich {
    type Handle = c_int;
    type Request = MPI_Request;
    type Status = MPI_Status;
    #[inline(always)]
    fn handle_in(h: c_int) -> c_int {
        h
    }
    #[inline(always)]
    fn rank_in(r: c_int) -> c_int {
        r
    }
    #[inline(always)]
    fn tag_in(t: c_int) -> c_int {
        t
    }
    #[inline(always)]
    fn buf_in(p: *const c_void) -> *const c_void {
        p
    }
    #[inline(always)]
    fn request_in(r: MPI_Request) -> MPI_Request {
        r
    }
    #[inline(always)]
    fn request_out(h: MPI_Request) -> MPI_Request {
        h
    }
    #[inline(always)]
    fn status_ignored(p: *mut MPI_Status) -> bool {
        check::status_ignored(p)
    }
    #[inline(always)]
    unsafe fn fill_status(p: *mut MPI_Status, source: i32, st: &Status, set_error: bool) {
        // SAFETY: this function's contract.
        unsafe { check::fill_status(p, source, st, set_error) }
    }
    #[inline(always)]
    fn code_out(c: c_int) -> c_int {
        c
    }
}

/// The error path of these calls' `export!` definitions (`on comm C`).
#[inline(always)]
fn finish<A: CAbi>(name: &'static str, comm: impl FnOnce() -> MPI_Comm, body: impl FnOnce() -> crate::error::MpiResult) -> c_int {
    A::code_out(run(body, move |e| raise_on_comm(name, comm, e)))
}

// The entries (`extern "C"`: they never unwind, so a wrapper that calls one needs no landing pad
// and jumps to it). Each has its MPICH-ABI namesake's contract, in the ABI `A`.

/// MPI_Isend.
///
/// # Safety
/// As MPI_Isend's.
pub unsafe extern "C" fn isend<A: CAbi>(buf: *const c_void, count: c_int, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Isend requires.
    finish::<A>("MPI_Isend", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::isend::<A>(buf, count as i64, A::handle_in(datatype), A::rank_in(dest), A::tag_in(tag), A::handle_in(comm), SendMode::Standard, request)
    })
}

/// MPI_Irecv.
///
/// # Safety
/// As MPI_Irecv's.
pub unsafe extern "C" fn irecv<A: CAbi>(buf: *mut c_void, count: c_int, datatype: A::Handle, source: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Irecv requires.
    finish::<A>("MPI_Irecv", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::irecv_as::<A>(buf, count, A::handle_in(datatype), A::rank_in(source), A::tag_in(tag), A::handle_in(comm), request)
    })
}

/// MPI_Recv.
///
/// # Safety
/// As MPI_Recv's.
pub unsafe extern "C" fn recv<A: CAbi>(buf: *mut c_void, count: c_int, datatype: A::Handle, source: c_int, tag: c_int, comm: A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Recv requires.
    finish::<A>("MPI_Recv", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::recv_as::<A>(buf, count, A::handle_in(datatype), A::rank_in(source), A::tag_in(tag), A::handle_in(comm), status)
    })
}

/// MPI_Sendrecv.
///
/// # Safety
/// As MPI_Sendrecv's.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sendrecv<A: CAbi>(sendbuf: *const c_void, sendcount: c_int, sendtype: A::Handle, dest: c_int, sendtag: c_int,
                                           recvbuf: *mut c_void, recvcount: c_int, recvtype: A::Handle, source: c_int, recvtag: c_int,
                                           comm: A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Sendrecv requires.
    finish::<A>("MPI_Sendrecv", move || A::handle_in(comm), move || unsafe {
        let (c, sendbuf, recvbuf) = (A::handle_in(comm), A::buf_in(sendbuf), A::buf_in(recvbuf) as *mut c_void);
        crate::ffi::p2p::send_recv_as::<A>(sendbuf, sendcount, A::handle_in(sendtype), A::rank_in(dest), A::tag_in(sendtag),
                                           recvbuf, recvcount, A::handle_in(recvtype), A::rank_in(source), A::tag_in(recvtag), c, status)
    })
}

/// MPI_Wait.
///
/// # Safety
/// As MPI_Wait's.
pub unsafe extern "C" fn wait<A: CAbi>(request: *mut A::Request, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Wait requires.
    finish::<A>("MPI_Wait", check::failed_comm, move || unsafe { crate::ffi::p2p::request::wait_as::<A>(request, status) })
}

/// MPI_Waitall.
///
/// # Safety
/// As MPI_Waitall's.
pub unsafe extern "C" fn waitall<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Waitall requires.
    finish::<A>("MPI_Waitall", check::failed_comm, move || unsafe { crate::ffi::p2p::request::waitall_as::<A>(count, array_of_requests, array_of_statuses) })
}
