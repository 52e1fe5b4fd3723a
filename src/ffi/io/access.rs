//! Data access (MPI 4.1 section 14.4): the cores of the data access families of
//! `ffi/families.rs` (each with its `_c` form) and the `_end` routines of the split collectives.
//! Nonblocking routines check their arguments and claim the file position at the call, then
//! another thread transfers (`crate::io::File::start`: the I/O worker pool, or for the
//! collective forms two-phase I/O on a helper thread); the request is an external request of
//! the p2p engine, so MPI_Wait, MPI_Test and their multiple forms mix it with any other.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::families::CountArg;
use crate::ffi::io::{file_of, offset};
use crate::ffi::pointer_args::out;
use crate::io::access::{At, Mem};
use crate::io::file::{Split, SplitKind};
use crate::p2p::Status;
use std::os::raw::c_void;

/// Checks the buffer arguments and runs the access; returns the memory bytes transferred.
///
/// # Safety
/// `buf` must hold (write) or have room for (read) `count` elements of `datatype`.
unsafe fn run(fh: MPI_File, at: At, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, write: bool, collective: bool) -> MpiResult<u64> {
    let (u, f) = file_of(fh)?;
    let (n, t) = buffer(buf, count, datatype)?;
    let m = Mem { buf: buf as *mut u8, count: n, dt: &t };
    if at == At::Shared && collective {
        // SAFETY: per this function's contract.
        return unsafe { f.ordered(u, write, m) };
    }
    // SAFETY: per this function's contract.
    unsafe { f.access(u, write, at, m, collective) }
}

/// The element count and committed datatype of a buffer argument.
fn buffer(buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype) -> MpiResult<(usize, std::sync::Arc<crate::datatype::TypeRepr>)> {
    let n = check::count(count.get())?;
    let t = check::committed_dtype(datatype)?;
    // Derived types may address absolute memory from MPI_BOTTOM (NULL).
    if buf.is_null() && n > 0 && t.layout.size > 0 && t.leaf_id.is_some() {
        return Err(err(MPI_ERR_BUFFER, format!("invalid buffer: NULL with count {n} of {}", check::datatype_name(datatype))));
    }
    Ok((n, t))
}

/// Starts a nonblocking access (`File::start`) and hands out its request.
///
/// # Safety
/// `request` must be NULL or writable; `buf` as in `run`, valid until the request completes.
unsafe fn start(fh: MPI_File, at: At, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, request: *mut MPI_Request, write: bool, collective: bool) -> MpiResult {
    let request = out(request, "request")?;
    let (u, f) = file_of(fh)?;
    let (n, t) = buffer(buf, count, datatype)?;
    // SAFETY: per this function's contract.
    let id = unsafe { f.start(u, write, at, buf as *mut u8, n, t, collective)? };
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *request = check::req_handle(id) };
    Ok(())
}

fn status_of(bytes: u64) -> Status {
    Status { bytes, ..Status::empty() }
}

/// Writes the status of a completed access.
///
/// # Safety
/// `status` must be MPI_STATUS_IGNORE, NULL or writable.
unsafe fn done(status: *mut MPI_Status, bytes: u64) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe { check::write_status(status, &status_of(bytes), false) };
    Ok(())
}

/// Opens split collective `kind` on `fh` with its result.
fn begin(fh: MPI_File, kind: SplitKind, result: MpiResult<u64>) -> MpiResult {
    let (_, f) = file_of(fh)?;
    let mut s = f.split.lock().unwrap_or_else(|p| p.into_inner());
    if s.is_some() {
        return Err(err(MPI_ERR_IO, "a split collective data access is already open on this file: only one at a time (MPI 4.1 section 14.4.5)"));
    }
    let r = result.as_ref().map(|_| ()).map_err(|e| e.clone());
    *s = Some(Split { kind, result });
    r
}

/// Closes split collective `kind` on `fh`.
///
/// # Safety
/// `status` as in `done`.
unsafe fn end(fh: MPI_File, kind: SplitKind, status: *mut MPI_Status) -> MpiResult {
    let (_, f) = file_of(fh)?;
    let mut s = f.split.lock().unwrap_or_else(|p| p.into_inner());
    match s.take() {
        Some(x) if x.kind == kind => {
            // An error was reported by the _begin routine already.
            let bytes = x.result.unwrap_or(0);
            // SAFETY: per this function's contract.
            unsafe { done(status, bytes) }
        }
        Some(x) => {
            let k = x.kind;
            *s = Some(x);
            Err(err(MPI_ERR_IO, format!("the split collective open on this file is {k:?}, not {kind:?}")))
        }
        None => Err(err(MPI_ERR_IO, format!("no split collective ({kind:?}) is open on this file: call the _begin routine first"))),
    }
}

// The cores of the families (src/ffi/families.rs). SAFETY (all): the caller passes a buffer of
// `count` elements of `datatype` and writable status/request pointers (or NULL / IGNORE).

/// MPI_File_read_at, write_at, read_at_all, write_at_all (and `_c`).
pub(in crate::ffi) unsafe fn at(fh: MPI_File, offset_: MPI_Offset, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, status: *mut MPI_Status, write: bool, collective: bool) -> MpiResult {
    let o = offset(offset_, "offset")?;
    // SAFETY: per the family contract above.
    unsafe { done(status, run(fh, At::Offset(o), buf, count, datatype, write, collective)?) }
}

/// MPI_File_iread_at, iwrite_at, iread_at_all, iwrite_at_all (and `_c`).
pub(in crate::ffi) unsafe fn iat(fh: MPI_File, offset_: MPI_Offset, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, request: *mut MPI_Request, write: bool, collective: bool) -> MpiResult {
    let o = offset(offset_, "offset")?;
    // SAFETY: per the family contract above.
    unsafe { start(fh, At::Offset(o), buf, count, datatype, request, write, collective) }
}

/// MPI_File_read_at_all_begin, write_at_all_begin (and `_c`).
pub(in crate::ffi) unsafe fn at_begin(fh: MPI_File, offset_: MPI_Offset, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, kind: SplitKind) -> MpiResult {
    let o = offset(offset_, "offset")?;
    // SAFETY: per the family contract above.
    let r = unsafe { run(fh, At::Offset(o), buf, count, datatype, kind == SplitKind::WriteAtAll, true) };
    begin(fh, kind, r)
}

/// MPI_File_read, write, read_all, write_all, read_shared, write_shared, read_ordered,
/// write_ordered (and `_c`): `at` Shared with `collective` is the ordered form.
pub(in crate::ffi) unsafe fn ptr(fh: MPI_File, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, status: *mut MPI_Status, at: At, write: bool, collective: bool) -> MpiResult {
    // SAFETY: per the family contract above.
    unsafe { done(status, run(fh, at, buf, count, datatype, write, collective)?) }
}

/// MPI_File_iread, iwrite, iread_all, iwrite_all, iread_shared, iwrite_shared (and `_c`).
pub(in crate::ffi) unsafe fn iptr(fh: MPI_File, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, request: *mut MPI_Request, at: At, write: bool, collective: bool) -> MpiResult {
    // SAFETY: per the family contract above.
    unsafe { start(fh, at, buf, count, datatype, request, write, collective) }
}

/// MPI_File_read_all_begin, write_all_begin, read_ordered_begin, write_ordered_begin (`_c`).
pub(in crate::ffi) unsafe fn ptr_begin(fh: MPI_File, buf: *const c_void, count: impl CountArg, datatype: MPI_Datatype, kind: SplitKind) -> MpiResult {
    let (at, write) = match kind {
        SplitKind::ReadAll => (At::Individual, false),
        SplitKind::WriteAll => (At::Individual, true),
        SplitKind::ReadOrdered => (At::Shared, false),
        _ => (At::Shared, true),
    };
    // SAFETY: per the family contract above.
    let r = unsafe { run(fh, at, buf, count, datatype, write, true) };
    begin(fh, kind, r)
}

export! {
    fn MPI_File_read_at_all_end / PMPI_File_read_at_all_end (fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: `status` is IGNORE, NULL or writable (caller contract).
        unsafe { end(fh, SplitKind::ReadAtAll, status) }
    }
    fn MPI_File_write_at_all_end / PMPI_File_write_at_all_end (fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: as above.
        unsafe { end(fh, SplitKind::WriteAtAll, status) }
    }
    fn MPI_File_read_all_end / PMPI_File_read_all_end (fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: as above.
        unsafe { end(fh, SplitKind::ReadAll, status) }
    }
    fn MPI_File_write_all_end / PMPI_File_write_all_end (fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: as above.
        unsafe { end(fh, SplitKind::WriteAll, status) }
    }
    fn MPI_File_read_ordered_end / PMPI_File_read_ordered_end (fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: as above.
        unsafe { end(fh, SplitKind::ReadOrdered, status) }
    }
    fn MPI_File_write_ordered_end / PMPI_File_write_ordered_end (fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) on file fh => {
        // SAFETY: as above.
        unsafe { end(fh, SplitKind::WriteOrdered, status) }
    }
}
