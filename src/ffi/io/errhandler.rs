//! Error handlers of files (MPI 4.1 section 9.3.3). Every open file has its own, initially the
//! handler MPI_FILE_NULL has when the file is opened (MPI_ERRORS_RETURN unless the application
//! changed it, as the standard says); MPI_FILE_NULL's handler also receives the errors of
//! MPI_File_open, MPI_File_delete and of invalid file handles.
use crate::ffi::env::errhandler::{create_user_handler, is_valid_errhandler};
use crate::ffi::io::{deliver_on, file};
use crate::ffi::check;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::instance::Instance;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

/// Where the handler of `fh` is kept: the file's own slot, or MPI_FILE_NULL's.
fn slot<R>(u: &Instance, fh: MPI_File, f: impl FnOnce(&AtomicI32) -> R) -> MpiResult<R> {
    if fh.is_null() {
        return Ok(f(&u.file_errhandler));
    }
    Ok(f(&file(u, fh)?.errhandler))
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
        if !is_valid_errhandler(errhandler) {
            return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
        }
        slot(u, file, |s| s.store(errhandler, Ordering::Release))
    }

    fn MPI_File_get_errhandler / PMPI_File_get_errhandler (file: MPI_File, errhandler: *mut MPI_Errhandler) on file file => {
        let u = check::universe()?;
        let h = slot(u, file, |s| s.load(Ordering::Acquire))?;
        if errhandler.is_null() {
            return Err(err(MPI_ERR_ARG, "errhandler is NULL"));
        }
        // SAFETY: non-null (checked above), and the caller passes a writable handle.
        unsafe { *errhandler = h };
        Ok(())
    }

    fn MPI_File_call_errhandler / PMPI_File_call_errhandler (fh: MPI_File, errorcode: c_int) on file fh => {
        let u = check::universe()?;
        if !fh.is_null() {
            file(u, fh)?;
        }
        let class = crate::ffi::error_codes::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        let e = err(class, format!("error code {errorcode} raised by the application"));
        // The call succeeds when the handler returns (MPI 4.1 section 9.5).
        deliver_on(u, "MPI_File_call_errhandler", fh, &e, errorcode);
        Ok(())
    }
}
