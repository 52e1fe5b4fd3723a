//! The one place where a rank's file byte runs meet the storage: every data access of the
//! chapter comes here as (runs, packed bytes). Today each rank transfers its own runs; this is
//! where collective buffering (two-phase I/O for the `_all` forms) and data sieving (independent
//! non-contiguous access) plug in, with the file's hints (`Hints::cb`).
use super::file::File;
use crate::comm::Universe;
use crate::error::MpiResult;

/// Who transfers: the rank alone, or all ranks of the file in a collective call.
pub struct Transfer<'a> {
    pub u: &'a Universe,
    pub file: &'a File,
    pub collective: bool,
}

impl Transfer<'_> {
    /// Writes `data` (the runs' bytes, packed in run order) to the file byte runs `runs`.
    pub fn write(&self, runs: &[(u64, u64)], data: &[u8]) -> MpiResult {
        self.file.exclusive(|| {
            let mut at = 0usize;
            for &(off, len) in runs {
                let len = len as usize;
                self.file.backend.write_at(&data[at..at + len], off).map_err(|e| self.file.io_error("writing", &e))?;
                at += len;
            }
            Ok(())
        })
    }

    /// Reads the file byte runs `runs` into `data`, packed in run order; returns the bytes read
    /// (fewer than asked only at the end of the file: the runs are in increasing file order).
    pub fn read(&self, runs: &[(u64, u64)], data: &mut [u8]) -> MpiResult<usize> {
        self.file.exclusive(|| {
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
        })
    }
}
