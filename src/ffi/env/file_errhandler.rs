//! Error handlers of files (MPI 4.1 section 9.3.3) without MPI-IO: oxmpi opens no files, so the
//! only file handle is MPI_FILE_NULL, whose handler is the default for file operations (initially
//! MPI_ERRORS_RETURN, per the standard). Setting, getting and calling it work; any other file
//! handle is MPI_ERR_FILE.
use crate::ffi::check;
use crate::ffi::env::errhandler::{create_user_handler, deliver, is_valid_errhandler};
use crate::abi::*;
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

/// Only MPI_FILE_NULL is a file here.
fn file_null(fh: MPI_File) -> MpiResult {
    if !fh.is_null() {
        return Err(err(MPI_ERR_FILE, format!("invalid file handle {fh:p}: oxmpi has no MPI-IO, so MPI_FILE_NULL is the only file")));
    }
    Ok(())
}

/// The error path of `on file`: delivers `e`, raised by `name`, to the handler of file `fh`.
/// No file is ever open, so every file's errors (an invalid handle's too, as in MPICH) go to
/// MPI_FILE_NULL's handler with MPI_FILE_NULL as the handle (MPI 4.1 section 9.3.3). Before
/// MPI_Init they are fatal, as everywhere.
pub(crate) fn raise_file(name: &'static str, _fh: MPI_File, e: MpiError) -> c_int {
    let Ok(u) = crate::instance::get() else {
        return crate::ffi::env::errhandler::raise(name, MPI_COMM_SELF, e);
    };
    let code = crate::ffi::error_codes::make_code(e.class.mpich(), &format!("{name}: {}", e.msg));
    deliver(name, u.file_errhandler.load(Ordering::Acquire), std::ptr::null_mut::<std::ffi::c_void>() as MPI_File, &e, code)
}

export! {
    fn MPI_File_create_errhandler / PMPI_File_create_errhandler (file_errhandler_fn: Option<MPI_File_errhandler_function>, errhandler: *mut MPI_Errhandler) on file std::ptr::null_mut() => {
        let f = file_errhandler_fn.ok_or_else(|| err(MPI_ERR_ARG, "file_errhandler_fn is NULL"))?;
        if errhandler.is_null() {
            return Err(err(MPI_ERR_ARG, "errhandler is NULL"));
        }
        // SAFETY: MPI_File_errhandler_function and the communicator handler type have the same C
        // signature (a handle pointer, an int pointer, varargs); handlers are called with two
        // arguments, the file handle's address as the first.
        let f = unsafe { std::mem::transmute::<MPI_File_errhandler_function, MPI_Comm_errhandler_function>(f) };
        // SAFETY: non-null (checked above), and the caller passes a writable handle.
        unsafe { *errhandler = create_user_handler(f) };
        Ok(())
    }

    fn MPI_File_set_errhandler / PMPI_File_set_errhandler (file: MPI_File, errhandler: MPI_Errhandler) on file file => {
        let u = check::universe()?;
        file_null(file)?;
        if !is_valid_errhandler(errhandler) {
            return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
        }
        u.file_errhandler.store(errhandler, Ordering::Release);
        Ok(())
    }

    fn MPI_File_get_errhandler / PMPI_File_get_errhandler (file: MPI_File, errhandler: *mut MPI_Errhandler) on file file => {
        let u = check::universe()?;
        file_null(file)?;
        if errhandler.is_null() {
            return Err(err(MPI_ERR_ARG, "errhandler is NULL"));
        }
        // SAFETY: non-null (checked above), and the caller passes a writable handle.
        unsafe { *errhandler = u.file_errhandler.load(Ordering::Acquire) };
        Ok(())
    }

    fn MPI_File_call_errhandler / PMPI_File_call_errhandler (fh: MPI_File, errorcode: c_int) on file fh => {
        let u = check::universe()?;
        file_null(fh)?;
        let class = crate::ffi::error_codes::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        let e = err(class, format!("error code {errorcode} raised by the application"));
        // The call succeeds when the handler returns (MPI 4.1 section 9.5); the handle the
        // user's handler sees is MPI_FILE_NULL.
        deliver("MPI_File_call_errhandler", u.file_errhandler.load(Ordering::Acquire), fh, &e, errorcode);
        Ok(())
    }
}
