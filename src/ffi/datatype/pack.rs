//! MPI_Pack / MPI_Unpack / MPI_Pack_size for any committed datatype. The packed form is the
//! native bytes of the typemap in order (as MPICH on a homogeneous node), so MPI_PACKED data can
//! be sent and unpacked with any type of matching signature.
use crate::ffi::check;
use crate::ffi::families::CountArg;
use crate::ffi::pointer_args::{c_str, out};
use crate::abi::*;
use crate::datatype;
use crate::error::{err, MpiResult};
use std::os::raw::{c_char, c_void};

/// The position argument: MPI_ERR_ARG if NULL or negative.
///
/// # Safety
/// `p` is NULL or readable.
unsafe fn position<C: CountArg>(p: *mut C) -> MpiResult<*mut C> {
    // SAFETY: dereferenced only when non-NULL (the caller passes a position to read).
    if p.is_null() || unsafe { *p }.get() < 0 {
        return Err(err(MPI_ERR_ARG, "position is NULL or negative"));
    }
    Ok(p)
}

/// Packed bytes of `count` elements of `dt`, which must be committed.
fn packed_len(count: i64, dt: MPI_Datatype) -> MpiResult<(std::sync::Arc<datatype::TypeRepr>, usize)> {
    if count < 0 {
        return Err(err(MPI_ERR_COUNT, format!("invalid count {count}: must be non-negative")));
    }
    let n = usize::try_from(count).map_err(|_| err(MPI_ERR_COUNT, format!("count {count} too large")))?;
    let t = check::committed_dtype(dt)?;
    let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(dt))))?;
    Ok((t, bytes))
}

/// MPI_Pack(_c) at stream position `start`; returns the new position.
///
/// # Safety
/// The application's buffers must be as the MPI call describes them.
unsafe fn pack(inbuf: *const c_void, incount: i64, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: i64, start: i64, comm: MPI_Comm) -> MpiResult<i64> {
    check::comm(check::universe()?, comm)?;
    let (t, n) = packed_len(incount, datatype)?;
    let start = start as usize;
    if outsize < 0 || (start + n) as u64 > outsize as u64 {
        return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Pack: {n} bytes at position {start} do not fit the output buffer of {outsize} bytes")));
    }
    if n > 0 && outbuf.is_null() {
        return Err(err(MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    // A NULL inbuf is MPI_BOTTOM: fine for derived types with absolute addresses.
    if n > 0 && inbuf.is_null() && t.leaf_id.is_some() {
        return Err(err(MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    // SAFETY: the application's inbuf holds incount elements of datatype; outbuf has outsize
    // >= start + n bytes (checked above).
    unsafe { datatype::copy(&t.layout, inbuf as *mut u8, incount as usize, (outbuf as *mut u8).add(start), n, 0, true) };
    Ok((start + n) as i64)
}

/// MPI_Unpack(_c) from stream position `start`; returns the new position.
///
/// # Safety
/// The application's buffers must be as the MPI call describes them.
unsafe fn unpack(inbuf: *const c_void, insize: i64, start: i64, outbuf: *mut c_void, outcount: i64, datatype: MPI_Datatype, comm: MPI_Comm) -> MpiResult<i64> {
    check::comm(check::universe()?, comm)?;
    let (t, n) = packed_len(outcount, datatype)?;
    let start = start as usize;
    if insize < 0 || (start + n) as u64 > insize as u64 {
        return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Unpack: {n} bytes at position {start} exceed the input buffer of {insize} bytes")));
    }
    if n > 0 && inbuf.is_null() {
        return Err(err(MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    if n > 0 && outbuf.is_null() && t.leaf_id.is_some() {
        return Err(err(MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    // SAFETY: inbuf has insize >= start + n bytes (checked above); the application's outbuf
    // holds outcount elements of datatype.
    unsafe { datatype::copy(&t.layout, outbuf as *mut u8, outcount as usize, (inbuf as *mut u8).add(start), n, 0, false) };
    Ok((start + n) as i64)
}

// The cores of the pack families (src/ffi/families.rs).

/// MPI_Pack and MPI_Pack_c.
///
/// # Safety
/// The buffers hold what the counts and sizes say; `position` is NULL or readable and writable.
pub(in crate::ffi) unsafe fn pack_family<C: CountArg>(inbuf: *const c_void, incount: C, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: C, position_: *mut C, comm: MPI_Comm) -> MpiResult {
    // SAFETY: `position_` is NULL or readable and writable (this function's contract).
    let pos = unsafe { position(position_)? };
    // SAFETY: non-NULL (`position`); the buffers are as `pack` needs (this function's contract).
    unsafe { *pos = C::put(pack(inbuf, incount.get(), datatype, outbuf, outsize.get(), (*pos).get(), comm)?, "position")? };
    Ok(())
}

/// MPI_Unpack and MPI_Unpack_c.
///
/// # Safety
/// As `pack_family`.
pub(in crate::ffi) unsafe fn unpack_family<C: CountArg>(inbuf: *const c_void, insize: C, position_: *mut C, outbuf: *mut c_void, outcount: C, datatype: MPI_Datatype, comm: MPI_Comm) -> MpiResult {
    // SAFETY: `position_` is NULL or readable and writable (this function's contract).
    let pos = unsafe { position(position_)? };
    // SAFETY: non-NULL (`position`); the buffers are as `unpack` needs (this function's contract).
    unsafe { *pos = C::put(unpack(inbuf, insize.get(), (*pos).get(), outbuf, outcount.get(), datatype, comm)?, "position")? };
    Ok(())
}

/// MPI_Pack_external and MPI_Pack_external_c (sizes and position are MPI_Aint / MPI_Count, both i64).
///
/// # Safety
/// As `pack_external`.
pub(in crate::ffi) unsafe fn pack_external_family(datarep_: *const c_char, inbuf: *const c_void, incount: impl CountArg, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: i64, position_: *mut i64) -> MpiResult {
    // SAFETY: as `pack_external` needs (this function's contract).
    unsafe { pack_external(datarep_, inbuf, incount.get(), datatype, outbuf, outsize, position_) }
}

/// MPI_Unpack_external and MPI_Unpack_external_c.
///
/// # Safety
/// As `unpack_external`.
pub(in crate::ffi) unsafe fn unpack_external_family(datarep_: *const c_char, inbuf: *const c_void, insize: i64, position_: *mut i64, outbuf: *mut c_void, outcount: impl CountArg, datatype: MPI_Datatype) -> MpiResult {
    // SAFETY: as `unpack_external` needs (this function's contract).
    unsafe { unpack_external(datarep_, inbuf, insize, position_, outbuf, outcount.get(), datatype) }
}

/// MPI_Pack_external_size and MPI_Pack_external_size_c.
///
/// # Safety
/// `datarep_` is a C string; `size` is NULL or writable.
pub(in crate::ffi) unsafe fn pack_external_size(datarep_: *const c_char, incount: impl CountArg, datatype: MPI_Datatype, size: *mut i64) -> MpiResult {
    // SAFETY: a C string (this function's contract).
    unsafe { datarep(datarep_)? };
    let (_, _, _, ext) = external_len(incount.get(), datatype)?;
    let size = out(size, "size")?;
    // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Aint / MPI_Count.
    unsafe { *size = ext as i64 };
    Ok(())
}

/// MPI_Pack_size and MPI_Pack_size_c. A size that does not fit the int form's output is
/// MPI_ERR_VALUE_TOO_LARGE (`CountArg::put`, as for MPI_Pack's position; MPI_ERR_COUNT before),
/// never truncated. MPICH 4 differs: it returns MPI_SUCCESS with `*size` = MPI_UNDEFINED, which a
/// program that does not check for it would pass on as a negative size.
///
/// # Safety
/// `size` is NULL or writable.
pub(in crate::ffi) unsafe fn pack_size<C: CountArg>(incount: C, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut C) -> MpiResult {
    check::comm(check::universe()?, comm)?;
    let (_, n) = packed_len(incount.get(), datatype)?;
    let size = out(size, "size")?;
    let n = C::put(n as i64, "pack size")?;
    // SAFETY: non-NULL (`out`); the caller passes the address of an int / MPI_Count.
    unsafe { *size = n };
    Ok(())
}

/// Checks the data representation name: only "external32" is supported (MPI 4.1 section 5.2.3;
/// "native"-style names are not portable, so they get MPI_ERR_UNSUPPORTED_DATAREP).
///
/// # Safety
/// `p`, when not NULL, is a NUL-terminated string.
unsafe fn datarep(p: *const c_char) -> MpiResult {
    // SAFETY: NULL or NUL-terminated (this function's contract); NULL is checked.
    let s = unsafe { c_str(p, "datarep")? }.to_string_lossy();
    if s != "external32" {
        return Err(err(MPI_ERR_UNSUPPORTED_DATAREP, format!("unsupported data representation \"{s}\": only \"external32\" is")));
    }
    Ok(())
}

/// Count and committed type of an external32 call, with the native and external32 byte counts.
fn external_len(count: i64, dt: MPI_Datatype) -> MpiResult<(std::sync::Arc<datatype::TypeRepr>, usize, usize, usize)> {
    if count < 0 {
        return Err(err(MPI_ERR_COUNT, format!("invalid count {count}: must be non-negative")));
    }
    let n = usize::try_from(count).map_err(|_| err(MPI_ERR_COUNT, format!("count {count} too large")))?;
    let t = check::committed_dtype(dt)?;
    let native = n.checked_mul(t.layout.size);
    let conv = &t.layout.conv;
    let ext = (datatype::external32::size_of(conv.runs()) as usize).checked_mul(conv.reps() as usize).and_then(|e| e.checked_mul(n));
    match (native, ext) {
        (Some(a), Some(b)) => Ok((t, n, a, b)),
        _ => Err(err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(dt)))),
    }
}

/// MPI_Pack_external(_c): packs natively into a scratch buffer, then converts to external32.
///
/// # Safety
/// The application's buffers must be as the MPI call describes them.
unsafe fn pack_external(rep: *const c_char, inbuf: *const c_void, incount: i64, dt: MPI_Datatype, outbuf: *mut c_void, outsize: i64, position: *mut i64) -> MpiResult {
    // SAFETY: NULL or a C string (this function's contract).
    unsafe { datarep(rep)? };
    let (t, n, native, ext) = external_len(incount, dt)?;
    // SAFETY: NULL or an MPI_Aint to read and write (this function's contract).
    let position = unsafe { self::position(position)? };
    // SAFETY: non-NULL (`position`).
    let start = unsafe { *position } as usize;
    if outsize < 0 || start + ext > outsize as usize {
        return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Pack_external: {ext} bytes at position {start} do not fit the output buffer of {outsize} bytes")));
    }
    if ext > 0 && outbuf.is_null() {
        return Err(err(MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    if native > 0 && inbuf.is_null() && t.leaf_id.is_some() {
        return Err(err(MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    let mut tmp = vec![0u8; native];
    // SAFETY: the application's inbuf holds incount elements of datatype; tmp has `native` bytes.
    unsafe { datatype::copy(&t.layout, inbuf as *mut u8, n, tmp.as_mut_ptr(), native, 0, true) };
    if ext > 0 {
        // SAFETY: outbuf has outsize >= start + ext bytes (checked above).
        let out = unsafe { std::slice::from_raw_parts_mut((outbuf as *mut u8).add(start), ext) };
        datatype::external32::convert(t.layout.conv.runs(), n * t.layout.conv.reps() as usize, &mut tmp, out, true);
    }
    // SAFETY: non-NULL (`position`), writable (this function's contract).
    unsafe { *position = (start + ext) as i64 };
    Ok(())
}

/// MPI_Unpack_external(_c): converts from external32 into a scratch buffer, then unpacks natively.
///
/// # Safety
/// The application's buffers must be as the MPI call describes them.
unsafe fn unpack_external(rep: *const c_char, inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, outcount: i64, dt: MPI_Datatype) -> MpiResult {
    // SAFETY: NULL or a C string (this function's contract).
    unsafe { datarep(rep)? };
    let (t, n, native, ext) = external_len(outcount, dt)?;
    // SAFETY: NULL or an MPI_Aint to read and write (this function's contract).
    let position = unsafe { self::position(position)? };
    // SAFETY: non-NULL (`position`).
    let start = unsafe { *position } as usize;
    if insize < 0 || start + ext > insize as usize {
        return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Unpack_external: {ext} bytes at position {start} exceed the input buffer of {insize} bytes")));
    }
    if ext > 0 && inbuf.is_null() {
        return Err(err(MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    if native > 0 && outbuf.is_null() && t.leaf_id.is_some() {
        return Err(err(MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    let mut tmp = vec![0u8; native];
    let mut src = vec![0u8; ext];
    if ext > 0 {
        // SAFETY: inbuf has insize >= start + ext bytes (checked above); src has ext bytes.
        unsafe { std::ptr::copy_nonoverlapping((inbuf as *const u8).add(start), src.as_mut_ptr(), ext) };
    }
    datatype::external32::convert(t.layout.conv.runs(), n * t.layout.conv.reps() as usize, &mut tmp, &mut src, false);
    // SAFETY: the application's outbuf holds outcount elements of datatype; tmp has `native` bytes.
    unsafe { datatype::copy(&t.layout, outbuf as *mut u8, n, tmp.as_mut_ptr(), native, 0, false) };
    // SAFETY: non-NULL (`position`), writable (this function's contract).
    unsafe { *position = (start + ext) as i64 };
    Ok(())
}
