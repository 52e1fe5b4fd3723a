//! Buffered-send buffers (MPI 4.1 section 3.6.1): the process's (MPI_Buffer_attach / detach /
//! flush / iflush), a communicator's (MPI_Comm_attach_buffer & co.) and a session's
//! (MPI_Session_attach_buffer & co.), and MPI_BUFFER_AUTOMATIC. The engine keeps the buffers
//! (`p2p::bsend`) and picks, for a buffered send, the communicator's, else its session's, else
//! the process's.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check::{self, req_handle};
use crate::ffi::families::CountArg;
use crate::ffi::pointer_args::out;
use crate::p2p::BsendScope;
use std::os::raw::c_void;

/// MPI_BUFFER_AUTOMATIC: `((void *)2)` in include/mpi.h, as in MPICH 4.2 and the MPI-5 ABI.
pub const BUFFER_AUTOMATIC: usize = 2;

/// Attaches `buffer` of `size` bytes (or MPI_BUFFER_AUTOMATIC) to `scope`.
///
/// # Safety
/// `buffer` must be `size` writable bytes that stay valid until detached (unless automatic).
unsafe fn attach(scope: BsendScope, buffer: *mut c_void, size: impl CountArg) -> MpiResult {
    let u = check::universe()?;
    let size = size.get();
    let buf = if buffer as usize == BUFFER_AUTOMATIC {
        None
    } else {
        let Ok(bytes) = usize::try_from(size) else {
            return Err(err(MPI_ERR_ARG, format!("invalid buffer size {size}")));
        };
        if buffer.is_null() && bytes > 0 {
            return Err(err(MPI_ERR_BUFFER, "the buffer to attach is NULL"));
        }
        Some((buffer as *mut u8, bytes))
    };
    // SAFETY: `size` writable bytes that stay valid until detached (this function's contract).
    unsafe { u.engine.buffer_attach(scope, buf, MPI_BSEND_OVERHEAD as usize) }
}

/// Detaches `scope`'s buffer once its messages are delivered; writes its address and size
/// (MPI_BUFFER_AUTOMATIC and 0 for an automatic one).
///
/// # Safety
/// `buffer_addr` must point to a writable `void *`, `size` be writable (both checked for NULL).
unsafe fn detach<C: CountArg>(scope: BsendScope, buffer_addr: *mut c_void, size: *mut C) -> MpiResult {
    let u = check::universe()?;
    let size = out(size, "size")?;
    let addr = out(buffer_addr as *mut *mut c_void, "buffer_addr")?;
    let (p, n) = u.engine.buffer_detach(scope)?.unwrap_or((BUFFER_AUTOMATIC as *mut u8, 0));
    let n = C::put(n as i64, "the detached buffer's size")?;
    // SAFETY: both non-NULL (`out`) and writable (this function's contract).
    unsafe {
        *addr = p as *mut c_void;
        *size = n;
    }
    Ok(())
}

/// The scope of communicator `comm`'s own buffer.
fn comm_scope(comm: MPI_Comm) -> MpiResult<BsendScope> {
    let u = check::universe()?;
    Ok(BsendScope::Comm(check::comm(u, comm)?.context))
}

/// The scope of session `session`'s buffer (MPI_ERR_SESSION if it is no live session).
fn session_scope(session: MPI_Session) -> MpiResult<BsendScope> {
    Ok(BsendScope::Session(crate::ffi::env::session::live_index(session)?))
}

/// MPI_Buffer_attach and MPI_Buffer_attach_c.
///
/// # Safety
/// As `attach`.
pub(in crate::ffi) unsafe fn buffer_attach(buffer: *mut c_void, size: impl CountArg) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { attach(BsendScope::Process, buffer, size) }
}

/// MPI_Buffer_detach and MPI_Buffer_detach_c.
///
/// # Safety
/// As `detach`.
pub(in crate::ffi) unsafe fn buffer_detach<C: CountArg>(buffer_addr: *mut c_void, size: *mut C) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { detach(BsendScope::Process, buffer_addr, size) }
}

/// MPI_Comm_attach_buffer and MPI_Comm_attach_buffer_c.
///
/// # Safety
/// As `attach`.
pub(in crate::ffi) unsafe fn comm_attach_buffer(comm: MPI_Comm, buffer: *mut c_void, size: impl CountArg) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { attach(comm_scope(comm)?, buffer, size) }
}

/// MPI_Comm_detach_buffer and MPI_Comm_detach_buffer_c.
///
/// # Safety
/// As `detach`.
pub(in crate::ffi) unsafe fn comm_detach_buffer<C: CountArg>(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut C) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { detach(comm_scope(comm)?, buffer_addr, size) }
}

/// MPI_Session_attach_buffer and MPI_Session_attach_buffer_c.
///
/// # Safety
/// As `attach`.
pub(in crate::ffi) unsafe fn session_attach_buffer(session: MPI_Session, buffer: *mut c_void, size: impl CountArg) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { attach(session_scope(session)?, buffer, size) }
}

/// MPI_Session_detach_buffer and MPI_Session_detach_buffer_c.
///
/// # Safety
/// As `detach`.
pub(in crate::ffi) unsafe fn session_detach_buffer<C: CountArg>(session: MPI_Session, buffer_addr: *mut c_void, size: *mut C) -> MpiResult {
    // SAFETY: this function's contract.
    unsafe { detach(session_scope(session)?, buffer_addr, size) }
}

fn flush(scope: BsendScope) -> MpiResult {
    check::universe()?.engine.buffer_flush(scope);
    Ok(())
}

fn iflush(scope: BsendScope, request: *mut MPI_Request) -> MpiResult {
    let request = out(request, "request")?;
    let id = check::universe()?.engine.buffer_iflush(scope);
    // SAFETY: non-NULL (`out`); the caller passes an MPI_Request for the handle.
    unsafe { *request = req_handle(id) };
    Ok(())
}

export! {
    fn MPI_Buffer_flush / PMPI_Buffer_flush () on comm MPI_COMM_SELF => {
        flush(BsendScope::Process)
    }

    fn MPI_Buffer_iflush / PMPI_Buffer_iflush (request: *mut MPI_Request) on comm MPI_COMM_SELF => {
        iflush(BsendScope::Process, request)
    }

    fn MPI_Comm_flush_buffer / PMPI_Comm_flush_buffer (comm: MPI_Comm) on comm comm => {
        flush(comm_scope(comm)?)
    }

    fn MPI_Comm_iflush_buffer / PMPI_Comm_iflush_buffer (comm: MPI_Comm, request: *mut MPI_Request) on comm comm => {
        iflush(comm_scope(comm)?, request)
    }

    fn MPI_Session_flush_buffer / PMPI_Session_flush_buffer (session: MPI_Session) on session session => {
        flush(session_scope(session)?)
    }

    fn MPI_Session_iflush_buffer / PMPI_Session_iflush_buffer (session: MPI_Session, request: *mut MPI_Request) on session session => {
        iflush(session_scope(session)?, request)
    }
}
