//! MPI-IO (MPI 4.1 chapter 14) at the C boundary: file handles, then one file per group of
//! functions: `file` (open, close, delete, size, amode, group, info, sync, atomicity, c2f/f2c),
//! `view` (views, byte offsets, type extents), `datarep` (MPI_Register_datarep and its Fortran
//! forms), `access` (every data
//! access routine), `pointer` (seeks and positions), `errhandler` (file error handlers). The
//! engine is `crate::io`.
//!
//! `MPI_File` is a pointer in the MPICH ABI. oxmpi's handles are no addresses: a tag in the
//! high bits, the slot's generation and the slot index + 1 in the rank's file table
//! (`Instance::files`), so a closed or foreign handle is recognised and is MPI_ERR_FILE, never a
//! dangling pointer. The Fortran handle (`MPI_File_c2f`) is the slot index + 1.
pub mod access;
pub mod datarep;
pub mod errhandler;
pub mod file;
pub mod pointer;
pub mod view;

use crate::abi::*;
use crate::error::{err, MpiError, MpiResult};
use crate::ffi::check;
use crate::instance::Instance;
use crate::io::file::File;
use std::os::raw::c_int;
use std::sync::Arc;

const TAG: u64 = 0x0F11_0000_0000_0000;
const TAG_MASK: u64 = 0xFFFF_0000_0000_0000;
/// Generations are 15 bits; bit 15 marks the handle `MPI_File_f2c` gives for a closed slot.
const GEN_MASK: u32 = 0x7fff;
const STALE: u64 = 0x8000;

/// The handle of the file in slot `index`, generation `gen`.
pub(crate) fn file_handle(index: u32, gen: u32) -> MPI_File {
    (TAG | ((gen & 0xffff) as u64) << 32 | (index as u64 + 1)) as usize as MPI_File
}

/// (slot index, generation) of a handle that has the file tag.
pub(crate) fn decode(h: MPI_File) -> Option<(u32, u32)> {
    let v = h as usize as u64;
    if v & TAG_MASK != TAG || v as u32 == 0 || (v >> 32) & STALE != 0 {
        return None;
    }
    Some(((v as u32) - 1, ((v >> 32) as u32) & GEN_MASK))
}

/// The open file behind `h`.
pub(crate) fn file(u: &Instance, h: MPI_File) -> MpiResult<Arc<File>> {
    if h.is_null() {
        return Err(err(MPI_ERR_FILE, "invalid file: MPI_FILE_NULL"));
    }
    let (i, gen) = decode(h).ok_or_else(|| err(MPI_ERR_FILE, format!("invalid file handle {h:p} (not made by MPI_File_open)")))?;
    u.files.get(i, gen).ok_or_else(|| err(MPI_ERR_FILE, format!("invalid file handle {h:p} (closed)")))
}

/// The calling rank's instance and the open file behind `h`.
pub(crate) fn file_of(h: MPI_File) -> MpiResult<(&'static Instance, Arc<File>)> {
    let u = check::universe()?;
    Ok((u, file(u, h)?))
}

/// The error path of `on file`: delivers `e`, raised by `name`, to the handler of file `fh`;
/// errors of MPI_FILE_NULL, of invalid handles and of MPI_File_open go to MPI_FILE_NULL's
/// handler (MPI 4.1 section 9.3.3), with MPI_FILE_NULL as the handle. Before MPI_Init they are
/// fatal, as everywhere.
pub(crate) fn raise_file(name: &'static str, fh: MPI_File, e: MpiError) -> c_int {
    let Ok(u) = crate::instance::get() else {
        return crate::ffi::env::errhandler::raise(name, MPI_COMM_SELF, e);
    };
    let code = crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg));
    deliver_on(u, name, fh, &e, code)
}

/// Runs the handler of `fh` (MPI_FILE_NULL's if it is no open file) for `e`.
pub(crate) fn deliver_on(u: &Instance, name: &'static str, fh: MPI_File, e: &MpiError, code: c_int) -> c_int {
    use std::sync::atomic::Ordering;
    match file(u, fh) {
        Ok(f) => crate::ffi::env::errhandler::deliver(name, f.errhandler.load(Ordering::Acquire), fh, e, code),
        Err(_) => crate::ffi::env::errhandler::deliver(name, u.file_errhandler.load(Ordering::Acquire), std::ptr::null_mut::<std::ffi::c_void>() as MPI_File, e, code),
    }
}

/// The engine's reading of an MPI access mode.
pub(crate) fn amode_of(a: c_int) -> crate::io::file::Amode {
    crate::io::file::Amode {
        rdonly: a & MPI_MODE_RDONLY != 0,
        wronly: a & MPI_MODE_WRONLY != 0,
        rdwr: a & MPI_MODE_RDWR != 0,
        create: a & MPI_MODE_CREATE != 0,
        excl: a & MPI_MODE_EXCL != 0,
        delete_on_close: a & MPI_MODE_DELETE_ON_CLOSE != 0,
        unique_open: a & MPI_MODE_UNIQUE_OPEN != 0,
        sequential: a & MPI_MODE_SEQUENTIAL != 0,
        append: a & MPI_MODE_APPEND != 0,
    }
}

/// The MPI access mode of an engine access mode (MPI_File_get_amode).
pub(crate) fn amode_value(a: &crate::io::file::Amode) -> c_int {
    [
        (a.rdonly, MPI_MODE_RDONLY),
        (a.wronly, MPI_MODE_WRONLY),
        (a.rdwr, MPI_MODE_RDWR),
        (a.create, MPI_MODE_CREATE),
        (a.excl, MPI_MODE_EXCL),
        (a.delete_on_close, MPI_MODE_DELETE_ON_CLOSE),
        (a.unique_open, MPI_MODE_UNIQUE_OPEN),
        (a.sequential, MPI_MODE_SEQUENTIAL),
        (a.append, MPI_MODE_APPEND),
    ]
    .iter()
    .filter(|x| x.0)
    .map(|x| x.1)
    .sum()
}

/// An MPI_Offset that must not be negative (offsets, sizes, displacements).
pub(crate) fn offset(v: MPI_Offset, what: &str) -> MpiResult<u64> {
    u64::try_from(v).map_err(|_| err(MPI_ERR_ARG, format!("invalid {what} {v}: must be non-negative")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_reject_others() {
        let h = file_handle(5, 7);
        assert_eq!(decode(h), Some((5, 7)));
        assert_eq!(decode(file_handle(0, 0x8000 + 3)), None, "f2c's handle of a closed slot");
        assert_eq!(decode(std::ptr::null_mut()), None);
        assert_eq!(decode(0x1234 as MPI_File), None);
        assert!(!file_handle(0, 0).is_null());
    }
}
