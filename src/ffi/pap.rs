//! The progress reports of Clairvoyant MPI_Reduce (oxmpi extensions): MPIX_Pap_progress and
//! MPIX_Pap_expect tell the library how far this rank's compute phase is, so the reduction that
//! follows can be scheduled before the last rank arrives. The work is in
//! `coll::clairvoyant_pap::report`.
use crate::abi::*;
use crate::clairvoyant::estimate::{check_fraction, check_seconds};
use crate::coll::clairvoyant_pap::{report, Report};
use crate::error::err;
use crate::export;
use crate::ffi::check;

export! {
    fn MPIX_Pap_progress / PMPIX_Pap_progress (comm: MPI_Comm, fraction_done: f64) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        check::intra(&c, "MPIX_Pap_progress")?;
        if let Some(m) = check_fraction(fraction_done) {
            return Err(err(MPI_ERR_ARG, format!("MPIX_Pap_progress: {m}")));
        }
        report(u, &c, Report::Progress(fraction_done));
        Ok(())
    }

    fn MPIX_Pap_expect / PMPIX_Pap_expect (comm: MPI_Comm, seconds_until_arrival: f64) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        check::intra(&c, "MPIX_Pap_expect")?;
        if let Some(m) = check_seconds(seconds_until_arrival) {
            return Err(err(MPI_ERR_ARG, format!("MPIX_Pap_expect: {m}")));
        }
        report(u, &c, Report::Expect(seconds_until_arrival));
        Ok(())
    }
}
