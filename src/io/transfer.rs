//! The one place where a rank's file byte runs meet the storage: every data access of the
//! chapter comes here as (runs, packed bytes), sorted by file offset. Collective calls go through
//! two-phase I/O (`two_phase`: aggregators turn the ranks' interleaved pieces into large
//! contiguous accesses, or each rank its own runs when they do not interleave); independent
//! accesses through data sieving (`sieve`: few large reads cover many small runs; writes
//! read-modify-write covering blocks under the file's byte-range lock, `range_lock`). Atomic
//! mode serialises every access under the file's lock, so there a collective call transfers
//! rank by rank: two-phase inside the lock would wait for ranks waiting for the lock. Every
//! transfer is counted once in the monitoring (`monitoring::io`).
use super::cb_hints::CbMode;
use super::file::File;
use super::hints::Hints;
use super::{sieve, two_phase};
use crate::comm::{Comm, Universe};
use crate::error::MpiResult;
use std::sync::atomic::Ordering;

/// Who transfers: the rank alone, or all ranks of the file in a collective call.
pub struct Transfer<'a> {
    pub u: &'a Universe,
    pub file: &'a File,
    pub collective: bool,
    /// The communicator of two-phase I/O: the file's, or its second one for the nonblocking
    /// collectives (`File::nbc`).
    pub comm: &'a Comm,
}

impl Transfer<'_> {
    fn two_phase(&self) -> bool {
        self.collective && !self.file.atomic.load(Ordering::Acquire)
    }

    /// The file's lock, and file domains aligned to the `striping_unit` hint.
    fn options(&self, h: &Hints) -> two_phase::Options<'_> {
        two_phase::Options { lock: self.file.lock.as_ref(), striping_unit: h.striping_unit.unwrap_or(0) as u64 }
    }

    fn hints(&self) -> Hints {
        self.file.hints.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes `data` (the runs' bytes, packed in run order) to the file byte runs `runs`.
    pub fn write(&self, runs: &[(u64, u64)], data: &[u8]) -> MpiResult {
        let h = self.hints();
        let backend = &*self.file.backend;
        let r = if self.two_phase() {
            two_phase::write_all_with(self.u, self.comm, backend, runs, data, &h.cb, self.options(&h))
        } else {
            self.file.exclusive(|| {
                match &self.file.lock {
                    // `romio_ds_write` disabled: run by run, still under the lock.
                    Some(l) => sieve::write_locked(backend, l, runs, data, h.ind_wr_buffer_size, h.ds_write != CbMode::Disable),
                    None => sieve::write(backend, runs, data, h.ind_wr_buffer_size),
                }
                .map_err(|e| self.file.io_error("writing", &e))
            })
        };
        if r.is_ok() {
            crate::monitoring::io::record_write(self.u.rank, self.u.size, data.len() as u64);
        }
        r
    }

    /// Reads the file byte runs `runs` into `data`, packed in run order; returns the bytes read
    /// (fewer than asked only at the end of the file: the runs are in increasing file order).
    pub fn read(&self, runs: &[(u64, u64)], data: &mut [u8]) -> MpiResult<usize> {
        let h = self.hints();
        let backend = &*self.file.backend;
        let r = if self.two_phase() {
            two_phase::read_all_with(self.u, self.comm, backend, runs, data, &h.cb, self.options(&h))
        } else if h.ds_read == CbMode::Disable {
            self.file.exclusive(|| self.read_runs(runs, data))
        } else {
            self.file.exclusive(|| sieve::read(backend, runs, data, h.ind_rd_buffer_size).map_err(|e| self.file.io_error("reading", &e)))
        };
        if let Ok(got) = r {
            crate::monitoring::io::record_read(self.u.rank, self.u.size, got as u64);
        }
        r
    }

    /// One read per run, stopping at the end of the file (`romio_ds_read` disabled).
    fn read_runs(&self, runs: &[(u64, u64)], data: &mut [u8]) -> MpiResult<usize> {
        let mut at = 0usize;
        for &(off, len) in runs {
            let len = len as usize;
            let got = self.file.backend.read_at(&mut data[at..at + len], off).map_err(|e| self.file.io_error("reading", &e))?;
            at += got;
            if got < len {
                break;
            }
        }
        Ok(at)
    }
}
