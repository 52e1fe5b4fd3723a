//! Point-to-point communication: sends in every mode, receives, probes, persistent requests,
//! buffer attach/detach, counts from statuses.
pub mod bsend_buffers;
pub mod partitioned;
pub mod grequest;
pub mod request;
use crate::ffi::check::{self, req_handle, write_status, write_status_as, Source, REQ_PROC_NULL, REQ_SENT};
use crate::ffi::layer::{CAbi, Mpich};
use crate::abi::*;
use crate::error::{err, MpiResult, ErrorClass};
use crate::export;
use crate::ffi::families::{CountArg, Launch};
use crate::ffi::pointer_args::out;
use crate::p2p::{Buf, OpArgs, SendMode, Status};
use std::os::raw::{c_int, c_void};

/// A checked send or receive buffer: as the engine takes it (contiguous or typed, never packed
/// here), and its packed size in bytes.
type Data = (Buf, usize);

/// Checks a send's arguments; returns (the data, world dest or None for MPI_PROC_NULL, context).
fn send_args(u: &'static crate::instance::Instance, buf: *const c_void, count: i64, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<(Data, Option<usize>, u32)> {
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    let data = check::comm_data(buf, count, datatype)?;
    check::send_tag(tag)?;
    let d = check::dest_rank(c, dest)?;
    Ok((data, d, c.context))
}

/// Checks a receive's arguments; returns (the buffer, source, context).
fn recv_args(u: &'static crate::instance::Instance, buf: *const c_void, count: i64, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<(Data, Source, u32)> {
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    let data = check::comm_data(buf, count, datatype)?;
    check::recv_tag(tag)?;
    let s = check::source_rank(c, source)?;
    Ok((data, s, c.context))
}

/// A nonblocking send; the request handle is written in the caller's ABI `A` (crate::ffi::layer).
pub(in crate::ffi) unsafe fn isend<A: CAbi>(buf: *const c_void, count: i64, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, request: *mut A::Request) -> MpiResult {
    let u = check::universe()?;
    let ((buf, bytes), d, ctx) = send_args(u, buf, count, datatype, dest, tag, comm)?;
    let request = out(request, "request")?;
    let Some(d) = d else {
        // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
        unsafe { *request = A::request_out(REQ_PROC_NULL) };
        return Ok(());
    };
    // A standard or ready send that fits a slot with nothing queued ahead goes into the channel
    // now and is complete: no engine request to make, complete and release (`REQ_SENT`).
    // SAFETY: `buf` holds `count` elements of `datatype` until the request completes (the MPI
    // contract, this function's); `try_send_now` copies them before it returns.
    if matches!(mode, SendMode::Standard | SendMode::Ready) && unsafe { u.engine.try_send_now(&buf, bytes, d, tag, ctx) } {
        // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
        unsafe { *request = A::request_out(REQ_SENT) };
        return Ok(());
    }
    // SAFETY: as above.
    let id = unsafe { u.engine.isend(buf, bytes, d, tag, ctx, mode)? };
    // SAFETY: as above.
    unsafe { *request = A::request_out(req_handle(id)) };
    Ok(())
}

/// A blocking send (MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend by `mode`, and their `_c` forms);
/// nothing to write back, so the same in every ABI (the entries of crate::ffi::layer convert
/// the arguments).
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (the MPI contract).
#[inline]
pub(in crate::ffi) unsafe fn send_now(buf: *const c_void, count: i64, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode) -> MpiResult {
    let u = check::universe()?;
    let ((buf, bytes), d, ctx) = send_args(u, buf, count, datatype, dest, tag, comm)?;
    let Some(d) = d else { return Ok(()) };
    // SAFETY (both calls): `buf` holds `count` elements of `datatype` (this function's contract).
    if matches!(mode, SendMode::Standard | SendMode::Ready) && unsafe { u.engine.try_send_now(&buf, bytes, d, tag, ctx) } {
        return Ok(());
    }
    unsafe { u.engine.send_blocking(buf, bytes, d, tag, ctx, mode) }
}

/// Turns a receive status into the call's result: truncation, a failed peer or a revoked
/// communicator (crate::ulfm) are errors of the call.
fn recv_result(st: &Status) -> MpiResult {
    if st.error == Some(ErrorClass::Truncate) {
        return Err(err(MPI_ERR_TRUNCATE, format!("message truncated: the message from world rank {} (tag {}) is longer than the receive buffer ({} bytes); post a larger receive or probe first", st.source, st.tag, st.bytes)));
    }
    crate::p2p::engine::failure_result(st)
}

unsafe fn persistent(buf: *const c_void, count: i64, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, request: *mut MPI_Request) -> MpiResult {
    let u = check::universe()?;
    let ((buf, bytes), d, ctx) = send_args(u, buf, count, datatype, dest, tag, comm)?;
    let request = out(request, "request")?;
    // Persistent requests with MPI_PROC_NULL are real (restartable, freeable) requests.
    // SAFETY: `buf` holds `count` elements of `datatype` while the request lives (the MPI
    // contract, this function's).
    let id = unsafe {
        match d {
            None => u.engine.persistent(OpArgs::ProcNull),
            Some(dest) => u.engine.persistent(OpArgs::Send { buf, bytes, dest, tag, ctx, mode }),
        }
    };
    // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
    unsafe { *request = req_handle(id) };
    Ok(())
}

/// A send and a receive at once (MPI_Sendrecv, MPI_Sendrecv_replace): posts the receive, runs the
/// send to completion, then waits for the receive.
///
/// # Safety
/// The send buffer holds its bytes and the receive buffer has room for its capacity.
unsafe fn sendrecv(send: Option<(Buf, usize, usize, i32)>, recv: Option<(Buf, usize, Option<usize>, i32)>, ctx: u32) -> MpiResult<Status> {
    let u = check::universe()?;
    // SAFETY: the receive buffer has room for `cap` bytes until the wait below (this function's contract).
    let r = recv.map(|(buf, cap, src, tag)| unsafe { u.engine.irecv(buf, cap, src, tag, ctx) });
    if let Some((buf, bytes, d, tag)) = send {
        // SAFETY: the send buffer holds `bytes` bytes until the wait (this function's contract).
        let sst = u.engine.wait(unsafe { u.engine.isend(buf, bytes, d, tag, ctx, SendMode::Standard)? });
        if sst.error.is_some() {
            if let Some(r) = r {
                u.engine.cancel(r);
                u.engine.wait(r);
            }
            crate::p2p::engine::failure_result(&sst)?;
        }
    }
    Ok(r.map_or(Status::proc_null(), |r| u.engine.wait(r)))
}

// The cores of the point-to-point families (src/ffi/families.rs).

/// MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend (`mode`) and their nonblocking, persistent and
/// large-count forms.
///
/// # Safety
/// `buf` must hold `count` elements of `datatype` (the MPI contract); a request pointer must be
/// writable (checked for NULL).
pub(in crate::ffi) unsafe fn send(buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, how: Launch) -> MpiResult {
    // SAFETY (the three calls): `buf` and the request as this function's contract says.
    match how {
        Launch::Blocking => unsafe { send_now(buf, count.get(), datatype, dest, tag, comm, mode) },
        Launch::Nonblocking(request) => unsafe { isend::<Mpich>(buf, count.get(), datatype, dest, tag, comm, mode, request) },
        Launch::Persistent(request) => unsafe { persistent(buf, count.get(), datatype, dest, tag, comm, mode, request) },
    }
}

/// MPI_Recv and MPI_Recv_c.
///
/// # Safety
/// `buf` must have room for `count` elements of `datatype`; `status` is MPI_STATUS_IGNORE or writable.
pub(in crate::ffi) unsafe fn recv(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { recv_as::<Mpich>(buf, count, datatype, source, tag, comm, status) }
}

/// `recv` with the status in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As `recv`.
#[inline]
pub(in crate::ffi) unsafe fn recv_as<A: CAbi>(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let ((buf, cap), s, ctx) = recv_args(u, buf, count.get(), datatype, source, tag, comm)?;
    let st = match s {
        Source::ProcNull => Status::proc_null(),
        _ => {
            // SAFETY: `buf` has room for `count` elements until the wait (this function's contract).
            let id = unsafe { u.engine.irecv(buf, cap, s.as_option(), tag, ctx) };
            u.engine.wait(id)
        }
    };
    // SAFETY: `status` is MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe { write_status_as::<A>(status, &st, false) };
    recv_result(&st)
}

/// MPI_Irecv and MPI_Irecv_c.
///
/// # Safety
/// As `recv`; `request` must be writable (checked for NULL).
pub(in crate::ffi) unsafe fn irecv(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { irecv_as::<Mpich>(buf, count, datatype, source, tag, comm, request) }
}

/// `irecv` with the request handle in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As `irecv`.
#[inline]
pub(in crate::ffi) unsafe fn irecv_as<A: CAbi>(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut A::Request) -> MpiResult {
    let u = check::universe()?;
    let ((buf, cap), s, ctx) = recv_args(u, buf, count.get(), datatype, source, tag, comm)?;
    let request = out(request, "request")?;
    let h = match s {
        Source::ProcNull => REQ_PROC_NULL,
        // SAFETY: `buf` has room for `count` elements until the request completes (this
        // function's contract).
        s => req_handle(unsafe { u.engine.irecv(buf, cap, s.as_option(), tag, ctx) }),
    };
    // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
    unsafe { *request = A::request_out(h) };
    Ok(())
}

/// MPI_Recv_init and MPI_Recv_init_c.
///
/// # Safety
/// As `irecv`.
pub(in crate::ffi) unsafe fn recv_init(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    let u = check::universe()?;
    let ((buf, cap), s, ctx) = recv_args(u, buf, count.get(), datatype, source, tag, comm)?;
    let request = out(request, "request")?;
    // SAFETY: `buf` has room for `count` elements while the request lives (this function's contract).
    let id = unsafe {
        match s {
            Source::ProcNull => u.engine.persistent(OpArgs::ProcNull),
            s => u.engine.persistent(OpArgs::Recv { buf, cap, src: s.as_option(), tag, ctx }),
        }
    };
    // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
    unsafe { *request = req_handle(id) };
    Ok(())
}

/// MPI_Sendrecv and MPI_Sendrecv_c.
///
/// # Safety
/// The buffers must hold their counts of elements (the MPI contract); `status` as in `recv`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn send_recv(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                               recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                               comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { send_recv_as::<Mpich>(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) }
}

/// `send_recv` with the status in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As `send_recv`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(in crate::ffi) unsafe fn send_recv_as<A: CAbi>(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                   recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                                   comm: MPI_Comm, status: *mut A::Status) -> MpiResult {
    let ((sbuf, bytes), d, ctx) = send_args(check::universe()?, sendbuf, sendcount.get(), sendtype, dest, sendtag, comm)?;
    let ((rbuf, cap), s, _) = recv_args(check::universe()?, recvbuf, recvcount.get(), recvtype, source, recvtag, comm)?;
    let recv = match s { Source::ProcNull => None, s => Some((rbuf, cap, s.as_option(), recvtag)) };
    // SAFETY: the buffers hold their counts of elements (this function's contract).
    let st = unsafe { sendrecv(d.map(|d| (sbuf, bytes, d, sendtag)), recv, ctx)? };
    // SAFETY: `status` is MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe { write_status_as::<A>(status, &st, false) };
    recv_result(&st)
}

/// MPI_Sendrecv_replace and MPI_Sendrecv_replace_c.
///
/// # Safety
/// As `send_recv`, with one buffer.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn sendrecv_replace(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                      source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> MpiResult {
    let count = count.get();
    let ((sbuf, bytes), d, ctx) = send_args(check::universe()?, buf, count, datatype, dest, sendtag, comm)?;
    let (_, s, _) = recv_args(check::universe()?, buf, count, datatype, source, recvtag, comm)?;
    // The message is received into a temporary (the buffer is still being sent from) and
    // copied over the buffer at the end: unpacked block by block for a typed buffer.
    let mut tmp = vec![0u8; bytes];
    let recv = match s { Source::ProcNull => None, s => Some((Buf::Flat(tmp.as_mut_ptr()), bytes, s.as_option(), recvtag)) };
    // SAFETY: the user's buffer holds `count` elements; `tmp` has room for `bytes`.
    let st = unsafe { sendrecv(d.map(|d| (sbuf.clone(), bytes, d, sendtag)), recv, ctx)? };
    // SAFETY: the user's buffer holds `bytes` packed bytes; st.bytes <= bytes (the capacity).
    unsafe { sbuf.unpack(0, tmp.as_ptr(), st.bytes as usize) };
    // SAFETY: `status` is MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe { write_status(status, &st, false) };
    recv_result(&st)
}

/// Starts a send and a receive as one request (MPI_Isendrecv, MPI_Isendrecv_replace): `keep`
/// is memory the send reads from, held until it is done. Writes the request handle.
///
/// # Safety
/// The send buffer holds its bytes and the receive buffer has room for its capacity until the
/// request completes; `request` is writable.
unsafe fn isendrecv_start(send: Option<(Buf, usize, usize, i32)>, recv: Option<(Buf, usize, Option<usize>, i32)>, ctx: u32, keep: Option<Vec<u8>>, request: *mut MPI_Request) -> MpiResult {
    let u = check::universe()?;
    if send.is_none() && recv.is_none() {
        // SAFETY: the caller's request handle (this function's contract).
        unsafe { *request = REQ_PROC_NULL };
        return Ok(());
    }
    // SAFETY: the receive buffer has room for `cap` bytes until completion (this function's contract).
    let r = recv.map(|(buf, cap, src, tag)| unsafe { u.engine.irecv(buf, cap, src, tag, ctx) });
    let s = match send {
        None => None,
        // SAFETY: the send buffer holds `bytes` bytes until completion (this function's contract).
        Some((buf, bytes, d, tag)) => match unsafe { u.engine.isend(buf, bytes, d, tag, ctx, SendMode::Standard) } {
            Ok(id) => Some(id),
            Err(e) => {
                if let Some(r) = r {
                    u.engine.cancel(r);
                    u.engine.wait(r);
                }
                return Err(e);
            }
        },
    };
    let id = crate::p2p::pair::Pairs::of(&u.engine).start(&u.engine, s, r, keep);
    // SAFETY: the caller's request handle (this function's contract).
    unsafe { *request = req_handle(id) };
    Ok(())
}

/// MPI_Isendrecv and MPI_Isendrecv_c: one request that completes when both the send and the
/// receive did, with the receive's status (MPI 4.1 section 3.10).
///
/// # Safety
/// The buffers must hold their counts of elements until the request completes (the MPI
/// contract); `request` must be writable (checked for NULL).
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn isendrecv(sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                               recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                               comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    let ((sbuf, bytes), d, ctx) = send_args(check::universe()?, sendbuf, sendcount.get(), sendtype, dest, sendtag, comm)?;
    let ((rbuf, cap), s, _) = recv_args(check::universe()?, recvbuf, recvcount.get(), recvtype, source, recvtag, comm)?;
    let request = out(request, "request")?;
    let recv = match s { Source::ProcNull => None, s => Some((rbuf, cap, s.as_option(), recvtag)) };
    // SAFETY: the buffers live until completion and `request` is non-NULL (this function's contract).
    unsafe { isendrecv_start(d.map(|d| (sbuf, bytes, d, sendtag)), recv, ctx, None, request) }
}

/// MPI_Isendrecv_replace and MPI_Isendrecv_replace_c: the send data is packed into an internal
/// buffer first, so the message received may land in the buffer at once.
///
/// # Safety
/// As `isendrecv`, with one buffer.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn isendrecv_replace(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                       source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    let count = count.get();
    let ((ubuf, bytes), d, ctx) = send_args(check::universe()?, buf, count, datatype, dest, sendtag, comm)?;
    let (_, s, _) = recv_args(check::universe()?, buf, count, datatype, source, recvtag, comm)?;
    let request = out(request, "request")?;
    let mut keep = None;
    let send = match d {
        None => None,
        Some(d) => {
            let mut tmp = vec![0u8; bytes];
            // SAFETY: the user's buffer holds `bytes` packed bytes; `tmp` has room for them.
            unsafe { ubuf.pack(0, tmp.as_mut_ptr(), bytes) };
            // The vector's heap block does not move when the vector does (into the pair).
            let flat = Buf::flat(tmp.as_ptr());
            keep = Some(tmp);
            Some((flat, bytes, d, sendtag))
        }
    };
    let recv = match s { Source::ProcNull => None, s => Some((ubuf, bytes, s.as_option(), recvtag)) };
    // SAFETY: the user's buffer lives until completion, the packed copy as long as the send (kept
    // by the pair), and `request` is non-NULL (this function's contract).
    unsafe { isendrecv_start(send, recv, ctx, keep, request) }
}

/// MPI_Mrecv and MPI_Mrecv_c.
///
/// # Safety
/// As `recv`; `message` must be writable (checked for NULL).
pub(in crate::ffi) unsafe fn mrecv(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { mrecv_as::<Mpich>(buf, count, datatype, message, status) }
}

/// `mrecv` with the message handle and the status in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// As `mrecv`.
#[inline]
pub(in crate::ffi) unsafe fn mrecv_as<A: CAbi>(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, message: *mut A::Handle, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let (buf, cap) = check::comm_data(buf, count.get(), datatype)?;
    let message = out(message, "message")?;
    // SAFETY: non-NULL (`out`); the caller passes the address of a message handle.
    let m = A::message_in(unsafe { *message });
    let st = match check::msg_ref(u, m)? {
        check::MsgRef::NoProc => Status::proc_null(),
        check::MsgRef::Engine(m) => {
            // SAFETY: `buf` has room for `count` elements until the wait (this function's contract).
            let id = unsafe { u.engine.imrecv(m, buf, cap)? };
            u.engine.wait(id)
        }
    };
    // SAFETY: as above; `status` is MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe {
        *message = A::message_out(MPI_MESSAGE_NULL);
        write_status_as::<A>(status, &st, false);
    }
    recv_result(&st)
}

/// MPI_Imrecv and MPI_Imrecv_c.
///
/// # Safety
/// As `mrecv`; `request` must be writable (checked for NULL).
pub(in crate::ffi) unsafe fn imrecv(buf: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> MpiResult {
    let u = check::universe()?;
    let (buf, cap) = check::comm_data(buf, count.get(), datatype)?;
    let message = out(message, "message")?;
    let request = out(request, "request")?;
    // SAFETY: non-NULL (`out`); the caller passes the address of a message handle.
    let m = unsafe { *message };
    let h = match check::msg_ref(u, m)? {
        check::MsgRef::NoProc => REQ_PROC_NULL,
        // SAFETY: `buf` has room for `count` elements until the request completes (this
        // function's contract).
        check::MsgRef::Engine(m) => req_handle(unsafe { u.engine.imrecv(m, buf, cap)? }),
    };
    // SAFETY: both non-NULL (`out`), the caller's request and message handles.
    unsafe {
        *request = h;
        *message = MPI_MESSAGE_NULL;
    }
    Ok(())
}

/// The number of `size`-byte elements in `bytes` received bytes, or MPI_UNDEFINED if they are
/// not a whole number of them (MPI 4.1 section 3.2.5).
fn whole_elements(bytes: u64, size: u64) -> i64 {
    if size == 0 {
        if bytes == 0 { 0 } else { MPI_UNDEFINED as i64 }
    } else if bytes % size != 0 {
        MPI_UNDEFINED as i64
    } else {
        (bytes / size) as i64
    }
}

/// The received bytes of the caller's status.
///
/// # Safety
/// `status` is NULL or a readable MPI_Status.
unsafe fn status_bytes(status: *const MPI_Status) -> MpiResult<u64> {
    let st = out(status as *mut MPI_Status, "status")?;
    // SAFETY: non-NULL (`out`) and readable (this function's contract).
    Ok(unsafe { (*st).count_bytes() })
}

/// MPI_Get_count(_c): whole elements of `datatype` received; MPI_UNDEFINED if the bytes are not
/// a whole number of them or the count does not fit the int form (MPI 4.1 section 3.2.5).
///
/// # Safety
/// `status` is NULL or readable; `count` is NULL or writable.
pub(in crate::ffi) unsafe fn get_count<C: CountArg>(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut C) -> MpiResult {
    // SAFETY: `status` is NULL or readable (this function's contract).
    let bytes = unsafe { status_bytes(status)? };
    let size = check::datatype_size(datatype).or_else(|_| check::dtype(datatype).map(|t| t.layout.size))?;
    let count = out(count, "count")?;
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *count = C::put_or_undefined(whole_elements(bytes, size as u64)) };
    Ok(())
}

/// `n` whole elements of the predefined `datatype` in basic elements: twice `n` for a pair type.
fn pairs_twice(datatype: MPI_Datatype, n: i64) -> i64 {
    if n != MPI_UNDEFINED as i64 && check::is_pair(datatype) { n.saturating_mul(2) } else { n }
}

/// MPI_Get_elements(_c): basic elements received (MPI 4.1 section 5.1.11): for a predefined
/// datatype the whole elements, as MPI_Get_count, except that a pair type's element holds two
/// (as MPICH); MPI_UNDEFINED if that number does not fit the int form.
///
/// # Safety
/// As `get_count`.
pub(in crate::ffi) unsafe fn get_elements<C: CountArg>(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut C) -> MpiResult {
    // SAFETY: `status` is NULL or readable (this function's contract).
    let bytes = unsafe { status_bytes(status)? };
    let count = out(count, "count")?;
    let n = match check::datatype_size(datatype) {
        Ok(size) => pairs_twice(datatype, whole_elements(bytes, size as u64)),
        Err(_) => check::dtype(datatype)?.layout.basic_elements_in(bytes).map_or(MPI_UNDEFINED as i64, |n| i64::try_from(n).unwrap_or(i64::MAX)),
    };
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *count = C::put_or_undefined(n) };
    Ok(())
}

/// MPI_Probe's body, the status in the caller's ABI `A` (crate::ffi::layer).
///
/// # Safety
/// `status` is `A`'s MPI_STATUS_IGNORE or writable.
#[inline]
pub(in crate::ffi) unsafe fn probe_as<A: CAbi>(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    check::recv_tag(tag)?;
    let st = match check::source_rank(c, source)? {
        Source::ProcNull => Status::proc_null(),
        s => u.engine.probe(s.as_option(), tag, c.context),
    };
    // SAFETY: `status` is MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe { write_status_as::<A>(status, &st, false) };
    Ok(())
}

/// MPI_Iprobe's body, the status in the caller's ABI `A`.
///
/// # Safety
/// `flag` is NULL or writable; `status` as in `probe_as`.
#[inline]
pub(in crate::ffi) unsafe fn iprobe_as<A: CAbi>(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    check::recv_tag(tag)?;
    let flag = out(flag, "flag")?;
    let st = match check::source_rank(c, source)? {
        Source::ProcNull => Some(Status::proc_null()),
        s => u.engine.iprobe(s.as_option(), tag, c.context),
    };
    // SAFETY: `flag` non-NULL (`out`), `status` MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe {
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            write_status_as::<A>(status, &st, false);
        }
    }
    Ok(())
}

/// MPI_Mprobe's body, the message handle and the status in the caller's ABI `A`.
///
/// # Safety
/// `message` is NULL or writable; `status` as in `probe_as`.
#[inline]
pub(in crate::ffi) unsafe fn mprobe_as<A: CAbi>(source: c_int, tag: c_int, comm: MPI_Comm, message: *mut A::Handle, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    check::recv_tag(tag)?;
    let message = out(message, "message")?;
    let (m, st) = match check::source_rank(c, source)? {
        Source::ProcNull => (MPI_MESSAGE_NO_PROC, Status::proc_null()),
        s => {
            let (m, st) = u.engine.mprobe(s.as_option(), tag, c.context);
            (check::msg_handle(m), st)
        }
    };
    // SAFETY: `message` non-NULL (`out`), `status` MPI_STATUS_IGNORE or writable (this function's contract).
    unsafe {
        *message = A::message_out(m);
        write_status_as::<A>(status, &st, false);
    }
    Ok(())
}

/// MPI_Improbe's body, the message handle and the status in the caller's ABI `A`.
///
/// # Safety
/// `flag` and `message` are NULL or writable; `status` as in `probe_as`.
#[inline]
pub(in crate::ffi) unsafe fn improbe_as<A: CAbi>(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut A::Handle, status: *mut A::Status) -> MpiResult {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    check::recv_tag(tag)?;
    let flag = out(flag, "flag")?;
    let message = out(message, "message")?;
    let found = match check::source_rank(c, source)? {
        Source::ProcNull => Some((MPI_MESSAGE_NO_PROC, Status::proc_null())),
        s => u.engine.improbe(s.as_option(), tag, c.context).map(|(m, st)| (check::msg_handle(m), st)),
    };
    // SAFETY: `flag` and `message` non-NULL (`out`), `status` MPI_STATUS_IGNORE or writable
    // (this function's contract).
    unsafe {
        *flag = found.is_some() as c_int;
        if let Some((m, st)) = found {
            *message = A::message_out(m);
            write_status_as::<A>(status, &st, false);
        }
    }
    Ok(())
}

export! {
    fn MPI_Probe / PMPI_Probe (source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) on comm comm => {
        // SAFETY: the caller's arguments, as MPI_Probe requires.
        unsafe { probe_as::<Mpich>(source, tag, comm, status) }
    }

    fn MPI_Iprobe / PMPI_Iprobe (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) on comm comm => {
        // SAFETY: the caller's arguments, as MPI_Iprobe requires.
        unsafe { iprobe_as::<Mpich>(source, tag, comm, flag, status) }
    }

    fn MPI_Mprobe / PMPI_Mprobe (source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) on comm comm => {
        // SAFETY: the caller's arguments, as MPI_Mprobe requires.
        unsafe { mprobe_as::<Mpich>(source, tag, comm, message, status) }
    }

    fn MPI_Improbe / PMPI_Improbe (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) on comm comm => {
        // SAFETY: the caller's arguments, as MPI_Improbe requires.
        unsafe { improbe_as::<Mpich>(source, tag, comm, flag, message, status) }
    }

    fn MPI_Get_elements_x / PMPI_Get_elements_x (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) on comm MPI_COMM_SELF => {
        // SAFETY: the caller's status (NULL is checked).
        let bytes = unsafe { status_bytes(status)? };
        let count = out(count, "count")?;
        let n = match check::datatype_size(datatype) {
            Ok(size) => pairs_twice(datatype, if size == 0 { 0 } else if bytes % size as u64 != 0 { MPI_UNDEFINED as MPI_Count } else { (bytes / size as u64) as MPI_Count }),
            // Derived type: basic elements in the received bytes (MPI 4.1 section 5.1.11).
            Err(_) => check::dtype(datatype)?.layout.basic_elements_in(bytes).map_or(MPI_UNDEFINED as MPI_Count, |n| n as MPI_Count),
        };
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Count.
        unsafe { *count = n };
        Ok(())
    }

    fn MPI_Status_set_elements / PMPI_Status_set_elements (status: *mut MPI_Status, datatype: MPI_Datatype, count: c_int) on comm MPI_COMM_SELF => {
        let st = out(status, "status")?;
        let size = check::datatype_size(datatype)?;
        let n = check::count(count)?;
        // SAFETY: non-NULL (`out`); the caller's status.
        let st = unsafe { &mut *st };
        let c = st.cancelled();
        st.set_count_bytes((n * size) as u64, c);
        Ok(())
    }

    fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x (status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) on comm MPI_COMM_SELF => {
        status_set_elements_big(status, datatype, count)
    }

    fn MPI_Status_set_elements_c / PMPI_Status_set_elements_c (status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) on comm MPI_COMM_SELF => {
        status_set_elements_big(status, datatype, count)
    }

    fn MPI_Status_get_source / PMPI_Status_get_source (status: *mut MPI_Status, source: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the caller's status and an int (NULL is checked).
        unsafe { status_get(status, source, |s| s.MPI_SOURCE) }
    }

    fn MPI_Status_get_tag / PMPI_Status_get_tag (status: *mut MPI_Status, tag: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: as in MPI_Status_get_source.
        unsafe { status_get(status, tag, |s| s.MPI_TAG) }
    }

    fn MPI_Status_get_error / PMPI_Status_get_error (status: *mut MPI_Status, error: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: as in MPI_Status_get_source.
        unsafe { status_get(status, error, |s| s.MPI_ERROR) }
    }

    fn MPI_Status_set_source / PMPI_Status_set_source (status: *mut MPI_Status, source: c_int) on comm MPI_COMM_SELF => {
        let st = status_arg(status)?;
        // SAFETY: non-NULL (`out`); the caller's status.
        unsafe { (*st).MPI_SOURCE = source };
        Ok(())
    }

    fn MPI_Status_set_tag / PMPI_Status_set_tag (status: *mut MPI_Status, tag: c_int) on comm MPI_COMM_SELF => {
        let st = status_arg(status)?;
        // SAFETY: non-NULL (`out`); the caller's status.
        unsafe { (*st).MPI_TAG = tag };
        Ok(())
    }

    fn MPI_Status_set_error / PMPI_Status_set_error (status: *mut MPI_Status, error: c_int) on comm MPI_COMM_SELF => {
        let st = status_arg(status)?;
        // SAFETY: non-NULL (`out`); the caller's status.
        unsafe { (*st).MPI_ERROR = error };
        Ok(())
    }

    fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled (status: *mut MPI_Status, flag: c_int) on comm MPI_COMM_SELF => {
        let st = out(status, "status")?;
        // SAFETY: non-NULL (`out`); the caller's status.
        let st = unsafe { &mut *st };
        let b = st.count_bytes();
        st.set_count_bytes(b, flag != 0);
        Ok(())
    }

    fn MPI_Test_cancelled / PMPI_Test_cancelled (status: *const MPI_Status, flag: *mut c_int) on comm MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let flag = out(flag, "flag")?;
        // SAFETY: both non-NULL (`out`): the caller's status and an int.
        unsafe { *flag = (*st).cancelled() as c_int };
        Ok(())
    }
}

/// MPI_Status_set_elements_x and MPI_Status_set_elements_c.
fn status_set_elements_big(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> MpiResult {
    let st = out(status, "status")?;
    let size = check::datatype_size(datatype)?;
    if count < 0 {
        return Err(err(MPI_ERR_COUNT, format!("invalid count {count}")));
    }
    // SAFETY: non-NULL (`out`); the caller's status.
    let st = unsafe { &mut *st };
    let c = st.cancelled();
    st.set_count_bytes(count as u64 * size as u64, c);
    Ok(())
}

/// MPI_Status_get_source, _tag, _error: writes `field` of `status` to `value`.
///
/// # Safety
/// `status` is NULL or a status; `value` is NULL or a writable int.
unsafe fn status_get(status: *mut MPI_Status, value: *mut c_int, field: impl FnOnce(&MPI_Status) -> c_int) -> MpiResult {
    let st = status_arg(status)?;
    let value = out(value, "value")?;
    // SAFETY: both non-NULL (`out`): a status and an int (this function's contract).
    unsafe { *value = field(&*st) };
    Ok(())
}

/// A status argument of the MPI 4.1 accessors: NULL and MPI_STATUS_IGNORE are MPI_ERR_ARG.
fn status_arg(status: *mut MPI_Status) -> MpiResult<*mut MPI_Status> {
    if check::status_ignored(status) {
        return Err(err(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE"));
    }
    Ok(status)
}
