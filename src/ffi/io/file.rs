//! Files (MPI 4.1 section 14.2): open, close, delete, size, preallocation, access mode, group,
//! hints, sync (section 14.6.1), atomicity (14.6.1) and the Fortran handle conversions.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::io::{decode, amode_of, amode_value, file, file_handle, file_of, offset};
use crate::ffi::pointer_args::{c_str, out};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::Ordering;

/// The path of a file name: ROMIO's file-system prefixes (`ufs:`, `nfs:`...) are dropped.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
unsafe fn path_of(name: *const c_char) -> MpiResult<String> {
    // SAFETY: per this function's contract; NULL is checked.
    let s = unsafe { c_str(name, "filename")? }.to_str().map_err(|_| err(MPI_ERR_BAD_FILE, "the file name is not valid UTF-8"))?.to_string();
    for p in ["ufs:", "nfs:", "lustre:", "gpfs:", "panfs:", "pvfs2:", "testfs:"] {
        if let Some(rest) = s.strip_prefix(p) {
            return Ok(rest.to_string());
        }
    }
    if s.is_empty() {
        return Err(err(MPI_ERR_BAD_FILE, "the file name is empty"));
    }
    Ok(s)
}

export! {
    // Errors of MPI_File_open go to MPI_FILE_NULL's handler (MPI 4.1 section 9.3.3).
    fn MPI_File_open / PMPI_File_open (comm: MPI_Comm, filename: *const c_char, amode: c_int, info: MPI_Info, fh: *mut MPI_File) on file std::ptr::null_mut() => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let fh = out(fh, "fh")?;
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let path = unsafe { path_of(filename)? };
        let hints = crate::ffi::info::hints_of(info)?;
        let byte = check::dtype(crate::abi::datatypes::MPI_BYTE)?;
        let f = crate::io::file::File::open(u, &c, &path, amode_of(amode), &hints, byte, u.file_errhandler.load(Ordering::Acquire))?;
        let (i, gen) = u.files.insert(f);
        // SAFETY: non-NULL (`out`); the caller passes the address of a file handle.
        unsafe { *fh = file_handle(i, gen) };
        Ok(())
    }

    // The handle is read before the body to find the error handler; SAFETY: the caller passes the
    // address of a file handle (NULL is checked).
    fn MPI_File_close / PMPI_File_close (fh: *mut MPI_File) on file if fh.is_null() { std::ptr::null_mut() } else { unsafe { *fh } } => {
        let fh = out(fh, "fh")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a file handle.
        let h = unsafe { *fh };
        let (u, f) = file_of(h)?;
        if f.split.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            return Err(err(MPI_ERR_OTHER, "a split collective data access is still open on the file (call its _end routine first)"));
        }
        let r = f.close(u);
        if let Some((i, _)) = decode(h) {
            u.files.remove(i);
        }
        crate::coll::remove_comm(u, f.comm_index);
        // SAFETY: as above.
        unsafe { *fh = std::ptr::null_mut() };
        r
    }

    fn MPI_File_delete / PMPI_File_delete (filename: *const c_char, info: MPI_Info) on file std::ptr::null_mut() => {
        check::universe()?;
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let path = unsafe { path_of(filename)? };
        crate::ffi::info::hints_of(info)?;
        crate::io::backend::delete(&path).map_err(|e| crate::io::backend::mpi_error("deleting", &path, &e))
    }

    fn MPI_File_set_size / PMPI_File_set_size (fh: MPI_File, size: MPI_Offset) on file fh => {
        let (u, f) = file_of(fh)?;
        f.set_size(u, offset(size, "size")?)
    }
    fn MPI_File_preallocate / PMPI_File_preallocate (fh: MPI_File, size: MPI_Offset) on file fh => {
        let (u, f) = file_of(fh)?;
        f.preallocate(u, offset(size, "size")?)
    }
    fn MPI_File_get_size / PMPI_File_get_size (fh: MPI_File, size: *mut MPI_Offset) on file fh => {
        let (_, f) = file_of(fh)?;
        let size = out(size, "size")?;
        let s = f.size()?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Offset.
        unsafe { *size = s as MPI_Offset };
        Ok(())
    }
    fn MPI_File_get_amode / PMPI_File_get_amode (fh: MPI_File, amode: *mut c_int) on file fh => {
        let (_, f) = file_of(fh)?;
        let amode = out(amode, "amode")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an int.
        unsafe { *amode = amode_value(&f.amode) };
        Ok(())
    }
    fn MPI_File_get_group / PMPI_File_get_group (fh: MPI_File, group: *mut MPI_Group) on file fh => {
        let (u, f) = file_of(fh)?;
        let group = out(group, "group")?;
        let i = u.groups.insert(crate::group::Group::new(f.comm.group.clone())).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many groups exist; free some with MPI_Group_free"))?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a group handle.
        unsafe { *group = make_handle(HANDLE_KIND_DIRECT, OBJ_GROUP, i as u32) };
        Ok(())
    }

    fn MPI_File_set_info / PMPI_File_set_info (fh: MPI_File, info: MPI_Info) on file fh => {
        let (_, f) = file_of(fh)?;
        let new = crate::ffi::info::hints_of(info)?;
        f.hints().apply(&new, f.comm.size());
        Ok(())
    }
    fn MPI_File_get_info / PMPI_File_get_info (fh: MPI_File, info_used: *mut MPI_Info) on file fh => {
        let (_, f) = file_of(fh)?;
        let o = out(info_used, "info_used")?;
        let h = crate::ffi::info::new_handle(f.hints().to_info(f.comm.size()))?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an info handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_File_sync / PMPI_File_sync (fh: MPI_File) on file fh => {
        let (u, f) = file_of(fh)?;
        f.sync(u)
    }
    fn MPI_File_set_atomicity / PMPI_File_set_atomicity (fh: MPI_File, flag: c_int) on file fh => {
        let (u, f) = file_of(fh)?;
        f.set_atomicity(u, flag != 0)
    }
    fn MPI_File_get_atomicity / PMPI_File_get_atomicity (fh: MPI_File, flag: *mut c_int) on file fh => {
        let (_, f) = file_of(fh)?;
        let flag = out(flag, "flag")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of an int.
        unsafe { *flag = f.atomic.load(Ordering::Acquire) as c_int };
        Ok(())
    }
}

/// Fortran value of a C file handle: its slot + 1; 0 for MPI_FILE_NULL and handles of no open
/// file.
pub(crate) fn c2f(fh: MPI_File) -> MPI_Fint {
    let Ok(u) = check::universe() else { return 0 };
    match file(u, fh) {
        Ok(_) => decode(fh).map_or(0, |(i, _)| i as MPI_Fint + 1),
        Err(_) => 0,
    }
}

/// C file handle of a Fortran value: the open file in that slot, MPI_FILE_NULL for 0, and a
/// handle that every file call refuses (MPI_ERR_FILE) for a slot with no open file.
pub(crate) fn f2c(v: MPI_Fint) -> MPI_File {
    if v <= 0 {
        return std::ptr::null_mut();
    }
    let i = v as u32 - 1;
    match check::universe().ok().and_then(|u| u.files.generation(i)) {
        Some(gen) => file_handle(i, gen),
        None => file_handle(i, 0x8000),
    }
}

#[no_mangle]
pub extern "C" fn MPI_File_c2f(file: MPI_File) -> MPI_Fint {
    crate::ffi::boundary::run_value(0, || c2f(file))
}
#[no_mangle]
pub extern "C" fn PMPI_File_c2f(file: MPI_File) -> MPI_Fint {
    crate::ffi::boundary::run_value(0, || c2f(file))
}
#[no_mangle]
pub extern "C" fn MPI_File_f2c(file: MPI_Fint) -> MPI_File {
    crate::ffi::boundary::run_value(std::ptr::null_mut(), || f2c(file))
}
#[no_mangle]
pub extern "C" fn PMPI_File_f2c(file: MPI_Fint) -> MPI_File {
    crate::ffi::boundary::run_value(std::ptr::null_mut(), || f2c(file))
}
