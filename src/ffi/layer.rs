//! The point-to-point calls whose outputs a foreign ABI layer (src/abi_ompi, src/abi5) would
//! otherwise convert after the MPICH-ABI function returned: requests and statuses. Here the
//! engine's code is generic over how the caller's C ABI spells them ([`CAbi`]), so it writes
//! the caller's request handle and status directly, once, instead of an MPICH value that the
//! layer reads back and rewrites (a temporary per output, a second pass over MPI_Waitall's
//! arrays). The exported MPICH-ABI functions are the same code with [`Mpich`], where every
//! conversion is the identity.
//!
//! The entries below are what a layer's generated wrapper calls (scripts/gen-mpi-abi.py,
//! `DIRECT`) after converting its input handles and constants: each is the exported function's
//! body, its error path (the same handler, the same message) and the error code in the
//! caller's ABI, so the wrapper itself is the input conversions and a jump.
use crate::abi::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use crate::ffi::boundary::{raise_on_comm, run};
use crate::ffi::check;
use crate::p2p::{SendMode, Status};
use std::os::raw::{c_int, c_void};

/// A C ABI's request handle and status, and its error codes, as the engine writes them.
pub trait CAbi {
    type Request: Copy;
    type Status;
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

/// The MPICH ABI, what `crate::ffi` exports: no conversion.
pub struct Mpich;

impl CAbi for Mpich {
    type Request = MPI_Request;
    type Status = MPI_Status;
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
#[inline]
fn finish<A: CAbi>(name: &'static str, comm: impl FnOnce() -> MPI_Comm, body: impl FnOnce() -> crate::error::MpiResult) -> c_int {
    A::code_out(run(body, move |e| raise_on_comm(name, comm, e)))
}

// The entries (`extern "C"`: they never unwind, so a wrapper that calls one needs no landing pad
// and may jump to it). Each has its MPICH-ABI namesake's contract, in the ABI `A`.

/// MPI_Isend.
///
/// # Safety
/// As MPI_Isend's.
pub unsafe extern "C" fn isend<A: CAbi>(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Isend requires.
    finish::<A>("MPI_Isend", move || comm, move || unsafe { crate::ffi::p2p::isend::<A>(buf, count as i64, datatype, dest, tag, comm, SendMode::Standard, request) })
}

/// MPI_Irecv.
///
/// # Safety
/// As MPI_Irecv's.
pub unsafe extern "C" fn irecv<A: CAbi>(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Irecv requires.
    finish::<A>("MPI_Irecv", move || comm, move || unsafe { crate::ffi::p2p::irecv_as::<A>(buf, count, datatype, source, tag, comm, request) })
}

/// MPI_Recv.
///
/// # Safety
/// As MPI_Recv's.
pub unsafe extern "C" fn recv<A: CAbi>(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Recv requires.
    finish::<A>("MPI_Recv", move || comm, move || unsafe { crate::ffi::p2p::recv_as::<A>(buf, count, datatype, source, tag, comm, status) })
}

/// MPI_Sendrecv.
///
/// # Safety
/// As MPI_Sendrecv's.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sendrecv<A: CAbi>(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                           recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                                           comm: MPI_Comm, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Sendrecv requires.
    finish::<A>("MPI_Sendrecv", move || comm, move || unsafe {
        crate::ffi::p2p::send_recv_as::<A>(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status)
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
