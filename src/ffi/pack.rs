//! MPI_Pack / MPI_Unpack / MPI_Pack_size for the predefined datatypes (contiguous bytes; the
//! "internal" representation is the native one, as in MPICH on a homogeneous node).
use super::check;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_int, c_void};

unsafe fn position(p: *mut c_int) -> MpiResult<*mut c_int> {
    if p.is_null() || *p < 0 {
        return Err(err(MPI_ERR_ARG, "position is NULL or negative"));
    }
    Ok(p)
}

export! {
    fn MPI_Pack_size / PMPI_Pack_size (incount: c_int, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut c_int) on comm => {
        check::comm(check::universe()?, comm)?;
        let n = check::count(incount)? * check::datatype_size(datatype)?;
        if size.is_null() {
            return Err(err(MPI_ERR_ARG, "size is NULL"));
        }
        *size = c_int::try_from(n).map_err(|_| err(MPI_ERR_COUNT, format!("pack size {n} does not fit an int; use MPI_Pack_size_c")))?;
        Ok(())
    }

    fn MPI_Pack / PMPI_Pack (inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position_: *mut c_int, comm: MPI_Comm) on comm => {
        check::comm(check::universe()?, comm)?;
        let n = check::buffer_bytes(inbuf, incount, datatype)?;
        let pos = position(position_)?;
        let start = *pos as usize;
        if outsize < 0 || start + n > outsize as usize {
            return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Pack: {n} bytes at position {start} do not fit the output buffer of {outsize} bytes")));
        }
        if n > 0 && outbuf.is_null() {
            return Err(err(MPI_ERR_BUFFER, "outbuf is NULL"));
        }
        std::ptr::copy_nonoverlapping(inbuf as *const u8, (outbuf as *mut u8).add(start), n);
        *pos = (start + n) as c_int;
        Ok(())
    }

    fn MPI_Unpack / PMPI_Unpack (inbuf: *const c_void, insize: c_int, position_: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, comm: MPI_Comm) on comm => {
        check::comm(check::universe()?, comm)?;
        let n = check::buffer_bytes(outbuf, outcount, datatype)?;
        let pos = position(position_)?;
        let start = *pos as usize;
        if insize < 0 || start + n > insize as usize {
            return Err(err(MPI_ERR_TRUNCATE, format!("MPI_Unpack: {n} bytes at position {start} exceed the input buffer of {insize} bytes")));
        }
        if n > 0 && inbuf.is_null() {
            return Err(err(MPI_ERR_BUFFER, "inbuf is NULL"));
        }
        std::ptr::copy_nonoverlapping((inbuf as *const u8).add(start), outbuf as *mut u8, n);
        *pos = (start + n) as c_int;
        Ok(())
    }
}
