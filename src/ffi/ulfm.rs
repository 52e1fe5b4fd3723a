//! The ULFM calls (MPIX_Comm_failure_ack, _failure_get_acked, _revoke, _shrink, _agree) with
//! MPICH's prototypes; the work is in `crate::ulfm`.
use crate::ffi::check;
use crate::ffi::pointer_args::out;
use crate::abi::*;
use crate::export;
use std::os::raw::c_int;

export! {
    fn MPIX_Comm_failure_ack / PMPIX_Comm_failure_ack (comm: MPI_Comm) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        crate::ulfm::failure_ack(u, &c);
        Ok(())
    }

    fn MPIX_Comm_failure_get_acked / PMPIX_Comm_failure_get_acked (comm: MPI_Comm, failedgrp: *mut MPI_Group) on comm comm => {
        let failedgrp = out(failedgrp, "failedgrp")?;
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let g = crate::ffi::comm::group::new_handle(u, crate::group::Group::new(crate::ulfm::get_acked(&c)))?;
        // SAFETY: non-null (`out`), and the caller passes a writable handle.
        unsafe { *failedgrp = g };
        Ok(())
    }

    fn MPIX_Comm_revoke / PMPIX_Comm_revoke (comm: MPI_Comm) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        crate::ulfm::revoke(u, &c);
        Ok(())
    }

    fn MPIX_Comm_shrink / PMPIX_Comm_shrink (comm: MPI_Comm, newcomm: *mut MPI_Comm) on comm comm => {
        let newcomm = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let shrunk = check::comm_handle(crate::ulfm::shrink(u, &c)?);
        // SAFETY: non-null (`out`), and the caller passes a writable handle.
        unsafe { *newcomm = shrunk };
        Ok(())
    }

    fn MPIX_Comm_agree / PMPIX_Comm_agree (comm: MPI_Comm, flag: *mut c_int) on comm comm => {
        let flag = out(flag, "flag")?;
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        // SAFETY: non-null (`out`); the caller passes a readable and writable int.
        let (agreed, e) = crate::ulfm::agree(u, &c, unsafe { *flag })?;
        // SAFETY: as above.
        unsafe { *flag = agreed };
        e.map_or(Ok(()), Err)
    }
}
