//! The point-to-point and completion calls of the foreign ABI layers (src/abi_ompi, src/abi5):
//! sends, receives, probes, MPI_Wait/Test and their any/all/some forms, MPI_Request_free. Their
//! outputs (request and message handles, statuses) a layer would otherwise convert after the
//! MPICH-ABI function returned; here the engine's code is generic over how the caller's C ABI
//! spells them ([`CAbi`]), so it writes the caller's handles and statuses directly, once,
//! instead of an MPICH value that the layer reads back and rewrites (a temporary per output, a
//! second pass over MPI_Waitall's arrays). The exported MPICH-ABI functions are the same code
//! with [`Mpich`], where every conversion is the identity.
//!
//! The entries below are what a layer's generated wrapper calls (scripts/gen-mpi-abi.py,
//! `DIRECT`) with its own arguments, unconverted: each is the exported function's body, which
//! converts the input handles, ranks and tags as it reads them, its error path (the same
//! handler, the same message) and the error code in the caller's ABI. The wrapper is a jump:
//! converted in the wrapper, the handles kept the arguments live across the conversions' rare
//! calls, and it saved registers and copied stack arguments on every call.
use crate::abi::{MPI_Comm, MPI_Message, MPI_Request, MPI_Status, MPI_COMM_WORLD};
use crate::ffi::boundary::{raise_on_comm, run};
use crate::ffi::check;
use crate::ffi::families::CountArg;
use crate::ffi::p2p::request as rq;
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
    /// The MPICH-ABI handle of a message the caller passes (MPI_Mrecv).
    fn message_in(m: Self::Handle) -> MPI_Message;
    /// The caller's handle for an MPICH-ABI message handle (MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC
    /// included).
    fn message_out(m: MPI_Message) -> Self::Handle;
    /// Whether `p` is the ABI's MPI_STATUS_IGNORE (or MPI_STATUSES_IGNORE).
    fn status_ignored(p: *mut Self::Status) -> bool;
    /// Writes status `p` from the engine's `st`, whose source is already the rank in the
    /// operation's communicator (`source`); MPI_ERROR from `st` only if `set_error`, else it is
    /// left as the caller had it (MPI 4.1 section 3.2.5: only the multiple-completion calls that
    /// return MPI_ERR_IN_STATUS set it).
    ///
    /// # Safety
    /// `p` is a writable status (not ignored).
    unsafe fn fill_status(p: *mut Self::Status, source: i32, st: &Status, set_error: bool);
    /// An MPICH-ABI error code in the ABI's numbering.
    fn code_out(c: c_int) -> c_int;
}

/// The `CAbi` methods of a foreign layer (src/abi5, src/abi_ompi) that forward to its `conv`
/// module's functions of the same meaning (`h_in`, `rank_in`, `tag_in`, `buf_in`, `req_in`,
/// `req_out`, `msg_out`, `code_out`; requests and messages are `Handle`s, MPI_STATUS_IGNORE is
/// NULL); expanded inside
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
        fn message_in(m: Handle) -> c_int {
            h_in(m)
        }
        #[inline(always)]
        fn message_out(m: c_int) -> Handle {
            msg_out(m)
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
    fn message_in(m: MPI_Message) -> MPI_Message {
        m
    }
    #[inline(always)]
    fn message_out(m: MPI_Message) -> MPI_Message {
        m
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
// and jumps to it). Each has its MPICH-ABI namesake's contract, in the ABI `A`; the ones with a
// count are generic over its type `C` (`c_int`, or MPI_Count in the `_c` form, whose name
// `named` gives the error messages).

/// `name`, or its large-count form `name_c` when the count type `C` is MPI_Count.
#[inline(always)]
fn named<C: CountArg>(name: &'static str, name_c: &'static str) -> &'static str {
    if std::mem::size_of::<C>() == std::mem::size_of::<c_int>() { name } else { name_c }
}

/// A blocking send in `mode` (MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend).
///
/// # Safety
/// As MPI_Send's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn send_in<A: CAbi, C: CountArg>(name: &'static str, mode: SendMode, buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle) -> c_int {
    // SAFETY: the caller's arguments, as the send requires.
    finish::<A>(name, move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::send_now(buf, count.get(), A::handle_in(datatype), A::rank_in(dest), A::tag_in(tag), A::handle_in(comm), mode)
    })
}

/// MPI_Send(_c).
///
/// # Safety
/// As MPI_Send's.
pub unsafe extern "C" fn send<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle) -> c_int {
    // SAFETY: this function's contract.
    unsafe { send_in::<A, C>(named::<C>("MPI_Send", "MPI_Send_c"), SendMode::Standard, buf, count, datatype, dest, tag, comm) }
}

/// MPI_Ssend(_c).
///
/// # Safety
/// As MPI_Ssend's.
pub unsafe extern "C" fn ssend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle) -> c_int {
    // SAFETY: this function's contract.
    unsafe { send_in::<A, C>(named::<C>("MPI_Ssend", "MPI_Ssend_c"), SendMode::Sync, buf, count, datatype, dest, tag, comm) }
}

/// MPI_Bsend(_c).
///
/// # Safety
/// As MPI_Bsend's.
pub unsafe extern "C" fn bsend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle) -> c_int {
    // SAFETY: this function's contract.
    unsafe { send_in::<A, C>(named::<C>("MPI_Bsend", "MPI_Bsend_c"), SendMode::Buffered, buf, count, datatype, dest, tag, comm) }
}

/// MPI_Rsend(_c).
///
/// # Safety
/// As MPI_Rsend's.
pub unsafe extern "C" fn rsend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle) -> c_int {
    // SAFETY: this function's contract.
    unsafe { send_in::<A, C>(named::<C>("MPI_Rsend", "MPI_Rsend_c"), SendMode::Ready, buf, count, datatype, dest, tag, comm) }
}

/// A nonblocking send in `mode` (MPI_Isend, MPI_Issend, MPI_Ibsend, MPI_Irsend).
///
/// # Safety
/// As MPI_Isend's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn isend_in<A: CAbi, C: CountArg>(name: &'static str, mode: SendMode, buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as the send requires.
    finish::<A>(name, move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::isend::<A>(buf, count.get(), A::handle_in(datatype), A::rank_in(dest), A::tag_in(tag), A::handle_in(comm), mode, request)
    })
}

/// MPI_Isend(_c).
///
/// # Safety
/// As MPI_Isend's.
pub unsafe extern "C" fn isend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: this function's contract.
    unsafe { isend_in::<A, C>(named::<C>("MPI_Isend", "MPI_Isend_c"), SendMode::Standard, buf, count, datatype, dest, tag, comm, request) }
}

/// MPI_Issend(_c).
///
/// # Safety
/// As MPI_Issend's.
pub unsafe extern "C" fn issend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: this function's contract.
    unsafe { isend_in::<A, C>(named::<C>("MPI_Issend", "MPI_Issend_c"), SendMode::Sync, buf, count, datatype, dest, tag, comm, request) }
}

/// MPI_Ibsend(_c).
///
/// # Safety
/// As MPI_Ibsend's.
pub unsafe extern "C" fn ibsend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: this function's contract.
    unsafe { isend_in::<A, C>(named::<C>("MPI_Ibsend", "MPI_Ibsend_c"), SendMode::Buffered, buf, count, datatype, dest, tag, comm, request) }
}

/// MPI_Irsend(_c).
///
/// # Safety
/// As MPI_Irsend's.
pub unsafe extern "C" fn irsend<A: CAbi, C: CountArg>(buf: *const c_void, count: C, datatype: A::Handle, dest: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: this function's contract.
    unsafe { isend_in::<A, C>(named::<C>("MPI_Irsend", "MPI_Irsend_c"), SendMode::Ready, buf, count, datatype, dest, tag, comm, request) }
}

/// MPI_Irecv(_c).
///
/// # Safety
/// As MPI_Irecv's.
pub unsafe extern "C" fn irecv<A: CAbi, C: CountArg>(buf: *mut c_void, count: C, datatype: A::Handle, source: c_int, tag: c_int, comm: A::Handle, request: *mut A::Request) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Irecv requires.
    finish::<A>(named::<C>("MPI_Irecv", "MPI_Irecv_c"), move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::irecv_as::<A>(buf, count, A::handle_in(datatype), A::rank_in(source), A::tag_in(tag), A::handle_in(comm), request)
    })
}

/// MPI_Recv(_c).
///
/// # Safety
/// As MPI_Recv's.
pub unsafe extern "C" fn recv<A: CAbi, C: CountArg>(buf: *mut c_void, count: C, datatype: A::Handle, source: c_int, tag: c_int, comm: A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Recv requires.
    finish::<A>(named::<C>("MPI_Recv", "MPI_Recv_c"), move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::recv_as::<A>(buf, count, A::handle_in(datatype), A::rank_in(source), A::tag_in(tag), A::handle_in(comm), status)
    })
}

/// MPI_Sendrecv(_c).
///
/// # Safety
/// As MPI_Sendrecv's.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sendrecv<A: CAbi, C: CountArg>(sendbuf: *const c_void, sendcount: C, sendtype: A::Handle, dest: c_int, sendtag: c_int,
                                                        recvbuf: *mut c_void, recvcount: C, recvtype: A::Handle, source: c_int, recvtag: c_int,
                                                        comm: A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Sendrecv requires.
    finish::<A>(named::<C>("MPI_Sendrecv", "MPI_Sendrecv_c"), move || A::handle_in(comm), move || unsafe {
        let (c, sendbuf, recvbuf) = (A::handle_in(comm), A::buf_in(sendbuf), A::buf_in(recvbuf) as *mut c_void);
        crate::ffi::p2p::send_recv_as::<A>(sendbuf, sendcount, A::handle_in(sendtype), A::rank_in(dest), A::tag_in(sendtag),
                                           recvbuf, recvcount, A::handle_in(recvtype), A::rank_in(source), A::tag_in(recvtag), c, status)
    })
}

/// MPI_Probe.
///
/// # Safety
/// As MPI_Probe's.
pub unsafe extern "C" fn probe<A: CAbi>(source: c_int, tag: c_int, comm: A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Probe requires.
    finish::<A>("MPI_Probe", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::probe_as::<A>(A::rank_in(source), A::tag_in(tag), A::handle_in(comm), status)
    })
}

/// MPI_Iprobe.
///
/// # Safety
/// As MPI_Iprobe's.
pub unsafe extern "C" fn iprobe<A: CAbi>(source: c_int, tag: c_int, comm: A::Handle, flag: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Iprobe requires.
    finish::<A>("MPI_Iprobe", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::iprobe_as::<A>(A::rank_in(source), A::tag_in(tag), A::handle_in(comm), flag, status)
    })
}

/// MPI_Mprobe.
///
/// # Safety
/// As MPI_Mprobe's.
pub unsafe extern "C" fn mprobe<A: CAbi>(source: c_int, tag: c_int, comm: A::Handle, message: *mut A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Mprobe requires.
    finish::<A>("MPI_Mprobe", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::mprobe_as::<A>(A::rank_in(source), A::tag_in(tag), A::handle_in(comm), message, status)
    })
}

/// MPI_Improbe.
///
/// # Safety
/// As MPI_Improbe's.
pub unsafe extern "C" fn improbe<A: CAbi>(source: c_int, tag: c_int, comm: A::Handle, flag: *mut c_int, message: *mut A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Improbe requires.
    finish::<A>("MPI_Improbe", move || A::handle_in(comm), move || unsafe {
        crate::ffi::p2p::improbe_as::<A>(A::rank_in(source), A::tag_in(tag), A::handle_in(comm), flag, message, status)
    })
}

/// MPI_Mrecv(_c).
///
/// # Safety
/// As MPI_Mrecv's.
pub unsafe extern "C" fn mrecv<A: CAbi, C: CountArg>(buf: *mut c_void, count: C, datatype: A::Handle, message: *mut A::Handle, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Mrecv requires.
    finish::<A>(named::<C>("MPI_Mrecv", "MPI_Mrecv_c"), || MPI_COMM_WORLD, move || unsafe {
        crate::ffi::p2p::mrecv_as::<A>(buf, count, A::handle_in(datatype), message, status)
    })
}

/// MPI_Wait.
///
/// # Safety
/// As MPI_Wait's.
pub unsafe extern "C" fn wait<A: CAbi>(request: *mut A::Request, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Wait requires.
    finish::<A>("MPI_Wait", check::failed_comm, move || unsafe { rq::wait_as::<A>(request, status) })
}

/// MPI_Test.
///
/// # Safety
/// As MPI_Test's.
pub unsafe extern "C" fn test<A: CAbi>(request: *mut A::Request, flag: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Test requires.
    finish::<A>("MPI_Test", check::failed_comm, move || unsafe { rq::test_as::<A>(request, flag, status) })
}

/// MPI_Waitall.
///
/// # Safety
/// As MPI_Waitall's.
pub unsafe extern "C" fn waitall<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Waitall requires.
    finish::<A>("MPI_Waitall", check::failed_comm, move || unsafe { rq::waitall_as::<A>(count, array_of_requests, array_of_statuses) })
}

/// MPI_Testall.
///
/// # Safety
/// As MPI_Testall's.
pub unsafe extern "C" fn testall<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, flag: *mut c_int, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Testall requires.
    finish::<A>("MPI_Testall", check::failed_comm, move || unsafe { rq::testall_as::<A>(count, array_of_requests, flag, array_of_statuses) })
}

/// MPI_Waitany.
///
/// # Safety
/// As MPI_Waitany's.
pub unsafe extern "C" fn waitany<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, index: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Waitany requires.
    finish::<A>("MPI_Waitany", check::failed_comm, move || unsafe { rq::waitany_as::<A>(count, array_of_requests, index, status) })
}

/// MPI_Testany.
///
/// # Safety
/// As MPI_Testany's.
pub unsafe extern "C" fn testany<A: CAbi>(count: c_int, array_of_requests: *mut A::Request, index: *mut c_int, flag: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Testany requires.
    finish::<A>("MPI_Testany", check::failed_comm, move || unsafe { rq::testany_as::<A>(count, array_of_requests, index, flag, status) })
}

/// MPI_Waitsome.
///
/// # Safety
/// As MPI_Waitsome's.
pub unsafe extern "C" fn waitsome<A: CAbi>(incount: c_int, array_of_requests: *mut A::Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Waitsome requires.
    finish::<A>("MPI_Waitsome", check::failed_comm, move || unsafe { rq::some_as::<A>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true) })
}

/// MPI_Testsome.
///
/// # Safety
/// As MPI_Testsome's.
pub unsafe extern "C" fn testsome<A: CAbi>(incount: c_int, array_of_requests: *mut A::Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Testsome requires.
    finish::<A>("MPI_Testsome", check::failed_comm, move || unsafe { rq::some_as::<A>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, false) })
}

/// MPI_Request_free.
///
/// # Safety
/// As MPI_Request_free's.
pub unsafe extern "C" fn request_free<A: CAbi>(request: *mut A::Request) -> c_int {
    // SAFETY: the caller's argument, as MPI_Request_free requires.
    finish::<A>("MPI_Request_free", || MPI_COMM_WORLD, move || unsafe { rq::request_free_as::<A>(request) })
}

/// MPI_Request_get_status.
///
/// # Safety
/// As MPI_Request_get_status's.
pub unsafe extern "C" fn request_get_status<A: CAbi>(request: A::Request, flag: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Request_get_status requires.
    finish::<A>("MPI_Request_get_status", check::failed_comm, move || unsafe { rq::request_get_status_as::<A>(request, flag, status) })
}

/// MPI_Request_get_status_all.
///
/// # Safety
/// As MPI_Request_get_status_all's.
pub unsafe extern "C" fn request_get_status_all<A: CAbi>(count: c_int, array_of_requests: *const A::Request, flag: *mut c_int, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Request_get_status_all requires.
    finish::<A>("MPI_Request_get_status_all", check::failed_comm, move || unsafe { rq::request_get_status_all_as::<A>(count, array_of_requests, flag, array_of_statuses) })
}

/// MPI_Request_get_status_any.
///
/// # Safety
/// As MPI_Request_get_status_any's.
pub unsafe extern "C" fn request_get_status_any<A: CAbi>(count: c_int, array_of_requests: *const A::Request, index: *mut c_int, flag: *mut c_int, status: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Request_get_status_any requires.
    finish::<A>("MPI_Request_get_status_any", check::failed_comm, move || unsafe { rq::request_get_status_any_as::<A>(count, array_of_requests, index, flag, status) })
}

/// MPI_Request_get_status_some.
///
/// # Safety
/// As MPI_Request_get_status_some's.
pub unsafe extern "C" fn request_get_status_some<A: CAbi>(incount: c_int, array_of_requests: *const A::Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut A::Status) -> c_int {
    // SAFETY: the caller's arguments, as MPI_Request_get_status_some requires.
    finish::<A>("MPI_Request_get_status_some", check::failed_comm, move || unsafe { rq::request_get_status_some_as::<A>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) })
}
