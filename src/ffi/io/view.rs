//! File views (MPI 4.1 section 14.3): MPI_File_set_view, MPI_File_get_view,
//! MPI_File_get_byte_offset, MPI_File_get_type_extent(_c). Registering data representations is
//! `datarep`.
use crate::abi::*;
use crate::error::MpiResult;
use crate::export;
use crate::ffi::check;
use crate::ffi::io::{file_of, offset};
use crate::ffi::pointer_args::{c_str, out};
use crate::io::datarep::Datarep;
use std::os::raw::c_char;

export! {
    fn MPI_File_set_view / PMPI_File_set_view (fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) on file fh => {
        let (u, f) = file_of(fh)?;
        let disp = if disp == MPI_DISPLACEMENT_CURRENT { None } else { Some(offset(disp, "displacement")?) };
        let (e, t) = (check::dtype(etype)?, check::dtype(filetype)?);
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let name = unsafe { c_str(datarep, "datarep")? }.to_string_lossy().into_owned();
        let rep = Datarep::lookup(u.rank, &name)?;
        let hints = crate::ffi::info::hints_of(info)?;
        f.hints().apply(&hints, f.comm.size());
        f.set_view(u, disp, e, t, rep)
    }

    fn MPI_File_get_view / PMPI_File_get_view (fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) on file fh => {
        let (_, f) = file_of(fh)?;
        let (disp, etype, filetype, datarep) = (out(disp, "disp")?, out(etype, "etype")?, out(filetype, "filetype")?, out(datarep, "datarep")?);
        let v = f.view();
        // SAFETY: all non-NULL (`out`); the caller passes the addresses of an MPI_Offset and two
        // datatype handles, and room for MPI_MAX_DATAREP_STRING characters.
        unsafe {
            *disp = v.disp as MPI_Offset;
            *etype = check::handle_for(&v.etype);
            *filetype = check::handle_for(&v.filetype);
            crate::ffi::env::init::write_cstr(datarep, MPI_MAX_DATAREP_STRING, v.datarep.name());
        }
        Ok(())
    }

    fn MPI_File_get_byte_offset / PMPI_File_get_byte_offset (fh: MPI_File, offset_: MPI_Offset, disp: *mut MPI_Offset) on file fh => {
        let (_, f) = file_of(fh)?;
        let disp = out(disp, "disp")?;
        let o = offset(offset_, "offset")?;
        let b = f.view().byte_offset(o);
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Offset.
        unsafe { *disp = b as MPI_Offset };
        Ok(())
    }

    fn MPI_File_get_type_extent / PMPI_File_get_type_extent (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) on file fh => {
        // SAFETY: the caller passes the address of an MPI_Aint (or NULL).
        unsafe { type_extent(fh, datatype, extent) }
    }
    fn MPI_File_get_type_extent_c / PMPI_File_get_type_extent_c (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) on file fh => {
        // SAFETY: the caller passes the address of an MPI_Count (or NULL).
        unsafe { type_extent(fh, datatype, extent) }
    }
}

/// MPI_File_get_type_extent(_c): the extent of `datatype` in the file's data representation.
///
/// # Safety
/// `extent` must be NULL or writable.
unsafe fn type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut i64) -> MpiResult {
    let (_, f) = file_of(fh)?;
    let extent = out(extent, "extent")?;
    let t = check::dtype(datatype)?;
    let e = f.view().datarep.type_extent(&t)?;
    // SAFETY: non-NULL (`out`); writable (this function's contract).
    unsafe { *extent = e };
    Ok(())
}
