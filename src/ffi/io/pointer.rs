//! File pointers (MPI 4.1 sections 14.4.3 and 14.4.4): seeks and positions of the individual
//! and the shared file pointer.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::io::file_of;
use crate::ffi::pointer_args::out;
use crate::io::access::Whence;
use std::os::raw::c_int;

fn whence_of(w: c_int) -> MpiResult<Whence> {
    match w {
        MPI_SEEK_SET => Ok(Whence::Set),
        MPI_SEEK_CUR => Ok(Whence::Cur),
        MPI_SEEK_END => Ok(Whence::End),
        _ => Err(err(MPI_ERR_ARG, format!("invalid whence {w}: must be MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"))),
    }
}

export! {
    fn MPI_File_seek / PMPI_File_seek (fh: MPI_File, offset: MPI_Offset, whence: c_int) on file fh => {
        let (_, f) = file_of(fh)?;
        f.seek(offset, whence_of(whence)?)
    }
    fn MPI_File_seek_shared / PMPI_File_seek_shared (fh: MPI_File, offset: MPI_Offset, whence: c_int) on file fh => {
        let (u, f) = file_of(fh)?;
        f.seek_shared(u, offset, whence_of(whence)?)
    }
    fn MPI_File_get_position / PMPI_File_get_position (fh: MPI_File, offset: *mut MPI_Offset) on file fh => {
        let (_, f) = file_of(fh)?;
        let offset = out(offset, "offset")?;
        if f.amode.sequential {
            return Err(err(MPI_ERR_UNSUPPORTED_OPERATION, "a file opened MPI_MODE_SEQUENTIAL has no individual file pointer"));
        }
        let p = *f.pointer();
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Offset.
        unsafe { *offset = p as MPI_Offset };
        Ok(())
    }
    fn MPI_File_get_position_shared / PMPI_File_get_position_shared (fh: MPI_File, offset: *mut MPI_Offset) on file fh => {
        let (_, f) = file_of(fh)?;
        let offset = out(offset, "offset")?;
        let p = f.shared.pointer();
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Offset.
        unsafe { *offset = p as MPI_Offset };
        Ok(())
    }
}
