//! Partitioned communication (MPI 4.1 chapter 4): MPI_Psend_init, MPI_Precv_init, MPI_Pready,
//! MPI_Pready_range, MPI_Pready_list, MPI_Parrived. The requests are engine requests (MPI_Start,
//! MPI_Wait, MPI_Request_free... treat them as any persistent request); `crate::p2p::partitioned`
//! moves their data.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check::{self, req_handle, req_ref, ReqRef, Source};
use crate::ffi::pointer_args::{input, out};
use crate::p2p::{partitioned, Buf, ReqId};
use std::os::raw::{c_int, c_void};

/// Checks the arguments both initialization calls share; returns the buffer, the bytes of one
/// partition and the communicator's context.
fn part_data(buf: *const c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype) -> MpiResult<(Buf, usize, usize)> {
    if partitions <= 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid number of partitions {partitions}: must be positive")));
    }
    let parts = partitions as usize;
    let per = check::count(count)?;
    let total = per.checked_mul(parts).ok_or_else(|| err(MPI_ERR_COUNT, format!("{partitions} partitions of count {count} overflow")))?;
    let (buf, bytes) = check::comm_data(buf, total as i64, datatype)?;
    Ok((buf, parts, bytes / parts))
}

/// The partitioned request behind handle `request` (any other kind is the caller's error).
fn part_request(request: MPI_Request, call: &str) -> MpiResult<ReqId> {
    let u = check::universe()?;
    match req_ref(u, request)? {
        ReqRef::Engine(id, ..) if partitioned::is_partitioned(&u.engine, id) => Ok(id),
        ReqRef::Null => Err(err(MPI_ERR_REQUEST, format!("{call} on MPI_REQUEST_NULL"))),
        _ => Err(err(MPI_ERR_REQUEST, format!("{call} needs a partitioned request (from MPI_Psend_init or MPI_Precv_init)"))),
    }
}

export! {
    fn MPI_Psend_init / PMPI_Psend_init (buf: *const c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) on comm comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (buf, parts, part_bytes) = part_data(buf, partitions, count, datatype)?;
        check::send_tag(tag)?;
        let d = check::dest_rank(c, dest)?;
        let request = out(request, "request")?;
        // SAFETY: `buf` holds `partitions * count` elements of `datatype` while the request
        // lives (the MPI contract).
        let id = unsafe { partitioned::psend_init(&u.engine, buf, parts, part_bytes, d, tag, c.context)? };
        // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
        unsafe { *request = req_handle(id) };
        Ok(())
    }

    fn MPI_Precv_init / PMPI_Precv_init (buf: *mut c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) on comm comm => {
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let c = &*c_ref;
        let (buf, parts, part_bytes) = part_data(buf, partitions, count, datatype)?;
        // MPI 4.1 section 4.2.2: no wildcards in partitioned receives.
        if tag == MPI_ANY_TAG {
            return Err(err(MPI_ERR_TAG, "MPI_ANY_TAG is not allowed in MPI_Precv_init"));
        }
        check::send_tag(tag)?;
        let s = match check::source_rank(c, source)? {
            Source::Any => return Err(err(MPI_ERR_RANK, "MPI_ANY_SOURCE is not allowed in MPI_Precv_init")),
            Source::ProcNull => None,
            Source::World(w) => Some(w),
        };
        let request = out(request, "request")?;
        // SAFETY: `buf` has room for `partitions * count` elements of `datatype` while the
        // request lives (the MPI contract).
        let id = unsafe { partitioned::precv_init(&u.engine, buf, parts, part_bytes, s, tag, c.context) };
        // SAFETY: non-NULL (`out`); the caller passes the address of a request handle.
        unsafe { *request = req_handle(id) };
        Ok(())
    }

    fn MPI_Pready / PMPI_Pready (partition: c_int, request: MPI_Request) on comm MPI_COMM_WORLD => {
        let id = part_request(request, "MPI_Pready")?;
        partitioned::pready(&check::universe()?.engine, id, &[partition as i64])
    }

    fn MPI_Pready_range / PMPI_Pready_range (partition_low: c_int, partition_high: c_int, request: MPI_Request) on comm MPI_COMM_WORLD => {
        let id = part_request(request, "MPI_Pready_range")?;
        if partition_low > partition_high {
            return Err(err(MPI_ERR_ARG, format!("invalid partition range {partition_low} to {partition_high}: the low end is above the high end")));
        }
        let list: Vec<i64> = (partition_low as i64..=partition_high as i64).collect();
        partitioned::pready(&check::universe()?.engine, id, &list)
    }

    fn MPI_Pready_list / PMPI_Pready_list (length: c_int, array_of_partitions: *mut c_int, request: MPI_Request) on comm MPI_COMM_WORLD => {
        let id = part_request(request, "MPI_Pready_list")?;
        let n = check::count(length)?;
        // SAFETY: the standard makes `array_of_partitions` hold `length` ints (NULL is rejected).
        let list: Vec<i64> = unsafe { input(array_of_partitions as *const c_int, n, "array_of_partitions")? }.iter().map(|&p| p as i64).collect();
        partitioned::pready(&check::universe()?.engine, id, &list)
    }

    fn MPI_Parrived / PMPI_Parrived (request: MPI_Request, partition: c_int, flag: *mut c_int) on comm MPI_COMM_WORLD => {
        let id = part_request(request, "MPI_Parrived")?;
        let flag = out(flag, "flag")?;
        let got = partitioned::parrived(&check::universe()?.engine, id, partition as i64)?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an int.
        unsafe { *flag = got as c_int };
        Ok(())
    }
}
