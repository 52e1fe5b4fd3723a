//! Point-to-point communication: sends in every mode, receives, probes, persistent requests,
//! buffer attach/detach, counts from statuses.
use super::check::{self, req_handle, write_status, Data, Source, REQ_PROC_NULL};
use super::staged::Target;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::p2p::{OpArgs, SendMode, Status};
use std::os::raw::{c_int, c_void};

fn out<T>(p: *mut T, what: &str) -> MpiResult<*mut T> {
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    Ok(p)
}

/// Checks a send's arguments; returns (the data, world dest or None for MPI_PROC_NULL, context).
fn send_args(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<(Data, Option<usize>, u32)> {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    let bytes = check::comm_data(buf, count, datatype)?;
    check::send_tag(tag)?;
    let d = check::dest_rank(c, dest)?;
    Ok((bytes, d, c.context))
}

/// Checks a receive's arguments; returns (the buffer, source, context).
fn recv_args(buf: *const c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<(Data, Source, u32)> {
    let u = check::universe()?;
    let c_ref = check::comm(u, comm)?;
    let c = &*c_ref;
    let cap = check::comm_data(buf, count, datatype)?;
    check::recv_tag(tag)?;
    let s = check::source_rank(c, source)?;
    Ok((cap, s, c.context))
}

unsafe fn isend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, request: *mut MPI_Request) -> MpiResult {
    let (data, d, ctx) = send_args(buf, count, datatype, dest, tag, comm)?;
    let request = out(request, "request")?;
    let Some(d) = d else {
        *request = REQ_PROC_NULL;
        return Ok(());
    };
    let u = check::universe()?;
    *request = req_handle(match data {
        Data::Direct(buf, bytes) => u.engine.isend(buf as *const u8, bytes, d, tag, ctx, mode)?,
        Data::Staged { .. } => {
            // The packed copy is what the engine sends; the table keeps it until completion.
            let stage = pack_staged(&data);
            let id = u.engine.isend(stage.as_ptr(), stage.len(), d, tag, ctx, mode)?;
            u.staged.add_send(&u.engine, id, stage);
            id
        }
    });
    Ok(())
}

unsafe fn send(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode) -> MpiResult {
    let (data, d, ctx) = send_args(buf, count, datatype, dest, tag, comm)?;
    let Some(d) = d else { return Ok(()) };
    // A non-contiguous type is packed first; the blocking send is done with the copy on return.
    let staging = pack_staged(&data);
    let (buf, bytes) = match &data {
        Data::Direct(p, n) => (*p as *const u8, *n),
        Data::Staged { bytes, .. } => (staging.as_ptr(), *bytes),
    };
    let u = check::universe()?;
    if matches!(mode, SendMode::Standard | SendMode::Ready) && u.engine.try_send_now(buf, bytes, d, tag, ctx) {
        return Ok(());
    }
    u.engine.send_blocking(buf, bytes, d, tag, ctx, mode)
}

/// The packed bytes of a staged (non-contiguous) send buffer; empty for direct data.
unsafe fn pack_staged(data: &Data) -> Vec<u8> {
    match data {
        Data::Direct(..) => Vec::new(),
        Data::Staged { t, buf, count, bytes } => {
            let mut v = vec![0u8; *bytes];
            // SAFETY: the application's buffer holds `count` elements of the type; v has `bytes`.
            crate::datatype::copy(&t.layout, *buf, *count, v.as_mut_ptr(), *bytes, 0, true);
            v
        }
    }
}

/// A receive target: the user's bytes, or a staging buffer to unpack from once the receive is done.
unsafe fn recv_target(data: &Data, staging: &mut Vec<u8>) -> (*mut u8, usize) {
    match data {
        Data::Direct(p, n) => (*p, *n),
        Data::Staged { bytes, .. } => {
            *staging = vec![0u8; *bytes];
            (staging.as_mut_ptr(), *bytes)
        }
    }
}

/// Unpacks the `received` bytes of a staged receive into the user's buffer.
unsafe fn unpack_staged(data: &Data, staging: &mut [u8], received: u64) {
    if let Data::Staged { t, buf, count, .. } = data {
        let n = (received as usize).min(staging.len());
        // SAFETY: the application's buffer holds `count` elements; only received bytes are copied.
        crate::datatype::copy(&t.layout, *buf, *count, staging.as_mut_ptr(), n, 0, false);
    }
}

/// Turns a receive status into the call's result: truncation, a failed peer or a revoked
/// communicator (crate::ulfm) are errors of the call.
fn recv_result(st: &Status) -> MpiResult {
    if st.error == MPI_ERR_TRUNCATE {
        return Err(err(MPI_ERR_TRUNCATE, format!("message truncated: the message from world rank {} (tag {}) is longer than the receive buffer ({} bytes); post a larger receive or probe first", st.source, st.tag, st.bytes)));
    }
    crate::p2p::engine::failure_result(st)
}

unsafe fn persistent(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, request: *mut MPI_Request) -> MpiResult {
    let (data, d, ctx) = send_args(buf, count, datatype, dest, tag, comm)?;
    let request = out(request, "request")?;
    let u = check::universe()?;
    // Persistent requests with MPI_PROC_NULL are real (restartable, freeable) requests.
    let Some(dest) = d else {
        *request = req_handle(u.engine.persistent(OpArgs::ProcNull));
        return Ok(());
    };
    *request = req_handle(match data {
        Data::Direct(buf, bytes) => u.engine.persistent(OpArgs::Send { buf: buf as *const u8, bytes, dest, tag, ctx, mode }),
        Data::Staged { t, buf, count, bytes } => {
            // The engine sends from a staging buffer, packed again at every MPI_Start.
            let stage = vec![0u8; bytes];
            let id = u.engine.persistent(OpArgs::Send { buf: stage.as_ptr(), bytes, dest, tag, ctx, mode });
            u.staged.add_persistent(&u.engine, id, stage, Target { t, user: buf, count }, true);
            id
        }
    });
    Ok(())
}

export! {
    fn MPI_Send / PMPI_Send (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) on comm => {
        send(buf, count, datatype, dest, tag, comm, SendMode::Standard)
    }
    fn MPI_Ssend / PMPI_Ssend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) on comm => {
        send(buf, count, datatype, dest, tag, comm, SendMode::Sync)
    }
    fn MPI_Rsend / PMPI_Rsend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) on comm => {
        send(buf, count, datatype, dest, tag, comm, SendMode::Ready)
    }
    fn MPI_Bsend / PMPI_Bsend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) on comm => {
        send(buf, count, datatype, dest, tag, comm, SendMode::Buffered)
    }
    fn MPI_Isend / PMPI_Isend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        isend(buf, count, datatype, dest, tag, comm, SendMode::Standard, request)
    }
    fn MPI_Issend / PMPI_Issend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        isend(buf, count, datatype, dest, tag, comm, SendMode::Sync, request)
    }
    fn MPI_Irsend / PMPI_Irsend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        isend(buf, count, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Ibsend / PMPI_Ibsend (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        isend(buf, count, datatype, dest, tag, comm, SendMode::Buffered, request)
    }
    fn MPI_Send_init / PMPI_Send_init (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        persistent(buf, count, datatype, dest, tag, comm, SendMode::Standard, request)
    }
    fn MPI_Ssend_init / PMPI_Ssend_init (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        persistent(buf, count, datatype, dest, tag, comm, SendMode::Sync, request)
    }
    fn MPI_Rsend_init / PMPI_Rsend_init (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        persistent(buf, count, datatype, dest, tag, comm, SendMode::Ready, request)
    }
    fn MPI_Bsend_init / PMPI_Bsend_init (buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        persistent(buf, count, datatype, dest, tag, comm, SendMode::Buffered, request)
    }

    fn MPI_Recv / PMPI_Recv (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) on comm => {
        let (data, s, ctx) = recv_args(buf, count, datatype, source, tag, comm)?;
        let mut staging = Vec::new();
        let (buf, cap) = recv_target(&data, &mut staging);
        let st = match s {
            Source::ProcNull => Status::proc_null(),
            _ => {
                let u = check::universe()?;
                let id = u.engine.irecv(buf, cap, s.as_option(), tag, ctx);
                u.engine.wait(id)
            }
        };
        unpack_staged(&data, &mut staging, st.bytes);
        write_status(status, &st, false);
        recv_result(&st)
    }

    fn MPI_Irecv / PMPI_Irecv (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        let (data, s, ctx) = recv_args(buf, count, datatype, source, tag, comm)?;
        let request = out(request, "request")?;
        let u = check::universe()?;
        *request = match (s, data) {
            (Source::ProcNull, _) => REQ_PROC_NULL,
            (s, Data::Direct(buf, cap)) => req_handle(u.engine.irecv(buf, cap, s.as_option(), tag, ctx)),
            (s, Data::Staged { t, buf, count, bytes }) => {
                // Received into a staging buffer, unpacked when the request completes.
                let mut stage = vec![0u8; bytes];
                let id = u.engine.irecv(stage.as_mut_ptr(), bytes, s.as_option(), tag, ctx);
                u.staged.add_recv(&u.engine, id, stage, Target { t, user: buf, count });
                req_handle(id)
            }
        };
        Ok(())
    }

    fn MPI_Recv_init / PMPI_Recv_init (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) on comm => {
        let (data, s, ctx) = recv_args(buf, count, datatype, source, tag, comm)?;
        let request = out(request, "request")?;
        let u = check::universe()?;
        *request = req_handle(match (s, data) {
            (Source::ProcNull, _) => u.engine.persistent(OpArgs::ProcNull),
            (s, Data::Direct(buf, cap)) => u.engine.persistent(OpArgs::Recv { buf, cap, src: s.as_option(), tag, ctx }),
            (s, Data::Staged { t, buf, count, bytes }) => {
                // Every activation receives into the staging buffer, unpacked at its completion.
                let mut stage = vec![0u8; bytes];
                let id = u.engine.persistent(OpArgs::Recv { buf: stage.as_mut_ptr(), cap: bytes, src: s.as_option(), tag, ctx });
                u.staged.add_persistent(&u.engine, id, stage, Target { t, user: buf, count }, false);
                id
            }
        });
        Ok(())
    }

    fn MPI_Sendrecv / PMPI_Sendrecv (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                      recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int,
                                      comm: MPI_Comm, status: *mut MPI_Status) on comm => {
        let (sdata, d, ctx) = send_args(sendbuf, sendcount, sendtype, dest, sendtag, comm)?;
        let (rdata, s, _) = recv_args(recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let u = check::universe()?;
        let sstaging = pack_staged(&sdata);
        let (sendbuf, bytes) = match &sdata {
            Data::Direct(p, n) => (*p as *const u8, *n),
            Data::Staged { bytes, .. } => (sstaging.as_ptr(), *bytes),
        };
        let mut rstaging = Vec::new();
        let (recvbuf, cap) = recv_target(&rdata, &mut rstaging);
        let r = match s { Source::ProcNull => None, _ => Some(u.engine.irecv(recvbuf, cap, s.as_option(), recvtag, ctx)) };
        if let Some(d) = d {
            let sid = u.engine.isend(sendbuf, bytes, d, sendtag, ctx, SendMode::Standard)?;
            let sst = u.engine.wait(sid);
            if sst.error != MPI_SUCCESS {
                if let Some(r) = r {
                    u.engine.cancel(r);
                    u.engine.wait(r);
                }
                return crate::p2p::engine::failure_result(&sst);
            }
        }
        let st = r.map_or(Status::proc_null(), |r| u.engine.wait(r));
        unpack_staged(&rdata, &mut rstaging, st.bytes);
        write_status(status, &st, false);
        recv_result(&st)
    }

    fn MPI_Sendrecv_replace / PMPI_Sendrecv_replace (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int,
                                                      source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) on comm => {
        let (sdata, d, ctx) = send_args(buf, count, datatype, dest, sendtag, comm)?;
        let (_, s, _) = recv_args(buf, count, datatype, source, recvtag, comm)?;
        let u = check::universe()?;
        // The message is received into a temporary and copied (unpacked) over the buffer at the end;
        // a non-contiguous buffer is sent from its packed copy.
        let sstaging = pack_staged(&sdata);
        let (sendbuf, bytes) = match &sdata {
            Data::Direct(p, n) => (*p as *const u8, *n),
            Data::Staged { bytes, .. } => (sstaging.as_ptr(), *bytes),
        };
        let mut tmp = vec![0u8; bytes];
        let r = match s { Source::ProcNull => None, _ => Some(u.engine.irecv(tmp.as_mut_ptr(), bytes, s.as_option(), recvtag, ctx)) };
        if let Some(d) = d {
            let sid = u.engine.isend(sendbuf, bytes, d, sendtag, ctx, SendMode::Standard)?;
            let sst = u.engine.wait(sid);
            if sst.error != MPI_SUCCESS {
                if let Some(r) = r {
                    u.engine.cancel(r);
                    u.engine.wait(r);
                }
                return crate::p2p::engine::failure_result(&sst);
            }
        }
        let st = r.map_or(Status::proc_null(), |r| u.engine.wait(r));
        match &sdata {
            // SAFETY: the user's buffer holds `bytes` bytes here; st.bytes <= bytes (the capacity).
            Data::Direct(p, _) => std::ptr::copy_nonoverlapping(tmp.as_ptr(), *p, st.bytes as usize),
            Data::Staged { .. } => unpack_staged(&sdata, &mut tmp, st.bytes),
        }
        write_status(status, &st, false);
        recv_result(&st)
    }

    fn MPI_Probe / PMPI_Probe (source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        check::recv_tag(tag)?;
        let st = match check::source_rank(c, source)? {
            Source::ProcNull => Status::proc_null(),
            s => u.engine.probe(s.as_option(), tag, c.context),
        };
        write_status(status, &st, false);
        Ok(())
    }

    fn MPI_Iprobe / PMPI_Iprobe (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        check::recv_tag(tag)?;
        let flag = out(flag, "flag")?;
        let st = match check::source_rank(c, source)? {
            Source::ProcNull => Some(Status::proc_null()),
            s => u.engine.iprobe(s.as_option(), tag, c.context),
        };
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            write_status(status, &st, false);
        }
        Ok(())
    }

    fn MPI_Mprobe / PMPI_Mprobe (source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        check::recv_tag(tag)?;
        let message = out(message, "message")?;
        let st = match check::source_rank(c, source)? {
            Source::ProcNull => {
                *message = MPI_MESSAGE_NO_PROC;
                Status::proc_null()
            }
            s => {
                let (m, st) = u.engine.mprobe(s.as_option(), tag, c.context);
                *message = check::msg_handle(m);
                st
            }
        };
        write_status(status, &st, false);
        Ok(())
    }

    fn MPI_Improbe / PMPI_Improbe (source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) on comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        check::recv_tag(tag)?;
        let flag = out(flag, "flag")?;
        let message = out(message, "message")?;
        let st = match check::source_rank(c, source)? {
            Source::ProcNull => {
                *message = MPI_MESSAGE_NO_PROC;
                Some(Status::proc_null())
            }
            s => u.engine.improbe(s.as_option(), tag, c.context).map(|(m, st)| {
                *message = check::msg_handle(m);
                st
            }),
        };
        *flag = st.is_some() as c_int;
        if let Some(st) = st {
            write_status(status, &st, false);
        }
        Ok(())
    }

    fn MPI_Mrecv / PMPI_Mrecv (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) on MPI_COMM_WORLD => {
        let u = check::universe()?;
        let data = check::comm_data(buf, count, datatype)?;
        let message = out(message, "message")?;
        let mut staging = Vec::new();
        let st = match check::msg_ref(u, *message)? {
            check::MsgRef::NoProc => Status::proc_null(),
            check::MsgRef::Engine(m) => {
                let (buf, cap) = recv_target(&data, &mut staging);
                let id = u.engine.imrecv(m, buf, cap)?;
                u.engine.wait(id)
            }
        };
        unpack_staged(&data, &mut staging, st.bytes);
        *message = MPI_MESSAGE_NULL;
        write_status(status, &st, false);
        recv_result(&st)
    }

    fn MPI_Imrecv / PMPI_Imrecv (buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) on MPI_COMM_WORLD => {
        let u = check::universe()?;
        let data = check::comm_data(buf, count, datatype)?;
        let message = out(message, "message")?;
        let request = out(request, "request")?;
        *request = match (check::msg_ref(u, *message)?, data) {
            (check::MsgRef::NoProc, _) => REQ_PROC_NULL,
            (check::MsgRef::Engine(m), Data::Direct(buf, cap)) => req_handle(u.engine.imrecv(m, buf, cap)?),
            (check::MsgRef::Engine(m), Data::Staged { t, buf, count, bytes }) => {
                let mut stage = vec![0u8; bytes];
                let id = u.engine.imrecv(m, stage.as_mut_ptr(), bytes)?;
                u.staged.add_recv(&u.engine, id, stage, Target { t, user: buf, count });
                req_handle(id)
            }
        };
        *message = MPI_MESSAGE_NULL;
        Ok(())
    }

    fn MPI_Buffer_attach / PMPI_Buffer_attach (buffer: *mut c_void, size: c_int) on MPI_COMM_SELF => {
        let u = check::universe()?;
        if size < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid buffer size {size}")));
        }
        if buffer.is_null() && size > 0 {
            return Err(err(MPI_ERR_BUFFER, "the buffer to attach is NULL"));
        }
        u.engine.buffer_attach(buffer as *mut u8, size as usize)
    }

    fn MPI_Buffer_detach / PMPI_Buffer_detach (buffer_addr: *mut c_void, size: *mut c_int) on MPI_COMM_SELF => {
        let u = check::universe()?;
        let size = out(size, "size")?;
        let addr = out(buffer_addr as *mut *mut c_void, "buffer_addr")?;
        let (p, n) = u.engine.buffer_detach()?;
        *addr = p as *mut c_void;
        *size = n as c_int;
        Ok(())
    }

    fn MPI_Get_count / PMPI_Get_count (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) on MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let size = check::datatype_size(datatype).or_else(|_| check::dtype(datatype).map(|t| t.layout.size))?;
        let count = out(count, "count")?;
        let bytes = (*st).count_bytes();
        *count = if size == 0 {
            if bytes == 0 { 0 } else { MPI_UNDEFINED }
        } else if bytes % size as u64 != 0 || bytes / size as u64 > i32::MAX as u64 {
            MPI_UNDEFINED
        } else {
            (bytes / size as u64) as c_int
        };
        Ok(())
    }

    fn MPI_Get_elements / PMPI_Get_elements (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) on MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let count = out(count, "count")?;
        if check::datatype_size(datatype).is_ok() {
            // For predefined datatypes the number of basic elements equals the count.
            return match PMPI_Get_count(st, datatype, count) { MPI_SUCCESS => Ok(()), _ => Err(err(MPI_ERR_TYPE, "invalid datatype")) };
        }
        let t = check::dtype(datatype)?;
        *count = match t.layout.basic_elements_in((*st).count_bytes()) {
            Some(n) if n <= i32::MAX as u64 => n as c_int,
            _ => MPI_UNDEFINED,
        };
        Ok(())
    }

    fn MPI_Get_elements_x / PMPI_Get_elements_x (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) on MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let count = out(count, "count")?;
        let bytes = (*st).count_bytes();
        let Ok(size) = check::datatype_size(datatype) else {
            // Derived type: basic elements in the received bytes (MPI 4.1 section 5.1.11).
            let t = check::dtype(datatype)?;
            *count = t.layout.basic_elements_in(bytes).map_or(MPI_UNDEFINED as MPI_Count, |n| n as MPI_Count);
            return Ok(());
        };
        *count = if size == 0 { 0 } else if bytes % size as u64 != 0 { MPI_UNDEFINED as MPI_Count } else { (bytes / size as u64) as MPI_Count };
        Ok(())
    }

    fn MPI_Status_set_elements / PMPI_Status_set_elements (status: *mut MPI_Status, datatype: MPI_Datatype, count: c_int) on MPI_COMM_SELF => {
        let st = out(status, "status")?;
        let size = check::datatype_size(datatype)?;
        let n = check::count(count)?;
        let c = (*st).cancelled();
        (*st).set_count_bytes((n * size) as u64, c);
        Ok(())
    }

    fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x (status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) on MPI_COMM_SELF => {
        let st = out(status, "status")?;
        let size = check::datatype_size(datatype)?;
        if count < 0 {
            return Err(err(MPI_ERR_COUNT, format!("invalid count {count}")));
        }
        let c = (*st).cancelled();
        (*st).set_count_bytes(count as u64 * size as u64, c);
        Ok(())
    }

    fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled (status: *mut MPI_Status, flag: c_int) on MPI_COMM_SELF => {
        let st = out(status, "status")?;
        let b = (*st).count_bytes();
        (*st).set_count_bytes(b, flag != 0);
        Ok(())
    }

    fn MPI_Test_cancelled / PMPI_Test_cancelled (status: *const MPI_Status, flag: *mut c_int) on MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        *out(flag, "flag")? = (*st).cancelled() as c_int;
        Ok(())
    }
}
