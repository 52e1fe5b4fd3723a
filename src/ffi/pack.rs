//! MPI_Pack / MPI_Unpack / MPI_Pack_size for any committed datatype. The packed form is the
//! native bytes of the typemap in order (as MPICH on a homogeneous node), so MPI_PACKED data can
//! be sent and unpacked with any type of matching signature.
use super::check;
use crate::abi::*;
use crate::datatype;
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_int, c_void};

unsafe fn position(p: *mut c_int) -> MpiResult<*mut c_int> {
    if p.is_null() || *p < 0 {
        return Err(err(MPI_ERR_ARG, "position is NULL or negative"));
    }
    Ok(p)
}

/// Packed bytes of `count` elements of `dt`, which must be committed.
fn packed_len(count: c_int, dt: MPI_Datatype) -> MpiResult<(std::sync::Arc<datatype::TypeRepr>, usize)> {
    let n = check::count(count)?;
    let t = check::committed_dtype(dt)?;
    let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", check::datatype_name(dt))))?;
    Ok((t, bytes))
}

export! {
    fn MPI_Pack_size / PMPI_Pack_size (incount: c_int, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut c_int) on comm => {
        check::comm(check::universe()?, comm)?;
        let (_, n) = packed_len(incount, datatype)?;
        if size.is_null() {
            return Err(err(MPI_ERR_ARG, "size is NULL"));
        }
        *size = c_int::try_from(n).map_err(|_| err(MPI_ERR_COUNT, format!("pack size {n} does not fit an int; use MPI_Pack_size_c")))?;
        Ok(())
    }

    fn MPI_Pack / PMPI_Pack (inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position_: *mut c_int, comm: MPI_Comm) on comm => {
        check::comm(check::universe()?, comm)?;
        let (t, n) = packed_len(incount, datatype)?;
        let pos = position(position_)?;
        let start = *pos as usize;
        if outsize < 0 || start + n > outsize as usize {
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
        datatype::copy(&t.layout, inbuf as *mut u8, incount as usize, (outbuf as *mut u8).add(start), n, 0, true);
        *pos = (start + n) as c_int;
        Ok(())
    }

    fn MPI_Unpack / PMPI_Unpack (inbuf: *const c_void, insize: c_int, position_: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, comm: MPI_Comm) on comm => {
        check::comm(check::universe()?, comm)?;
        let (t, n) = packed_len(outcount, datatype)?;
        let pos = position(position_)?;
        let start = *pos as usize;
        if insize < 0 || start + n > insize as usize {
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
        datatype::copy(&t.layout, outbuf as *mut u8, outcount as usize, (inbuf as *mut u8).add(start), n, 0, false);
        *pos = (start + n) as c_int;
        Ok(())
    }
}
