//! Conversions between C and Fortran handles and statuses, address arithmetic, `MPI_Pcontrol`.
//!
//! In the MPICH ABI the Fortran integer *is* the C handle, so the `_c2f`/`_f2c` functions of
//! integer handles are identities. MPICH's `mpi.h` makes them macros, but we also export them as
//! functions (MPI_ and PMPI_ names) for callers built against other headers (mpi4py imports them).
//! `MPI_File` is a pointer: its conversions are with the files, in `ffi::io::file`.
use crate::ffi::boundary::run_value;
use super::error::err;
use crate::abi::*;
use std::os::raw::c_int;

macro_rules! identity_conversions {
    ($($ty:ident: $c2f:ident $pc2f:ident $f2c:ident $pf2c:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $c2f(h: $ty) -> MPI_Fint { h }
        #[no_mangle]
        pub extern "C" fn $pc2f(h: $ty) -> MPI_Fint { h }
        #[no_mangle]
        pub extern "C" fn $f2c(h: MPI_Fint) -> $ty { h }
        #[no_mangle]
        pub extern "C" fn $pf2c(h: MPI_Fint) -> $ty { h }
    )*};
}

identity_conversions! {
    MPI_Comm: MPI_Comm_c2f PMPI_Comm_c2f MPI_Comm_f2c PMPI_Comm_f2c;
    MPI_Datatype: MPI_Type_c2f PMPI_Type_c2f MPI_Type_f2c PMPI_Type_f2c;
    MPI_Group: MPI_Group_c2f PMPI_Group_c2f MPI_Group_f2c PMPI_Group_f2c;
    MPI_Info: MPI_Info_c2f PMPI_Info_c2f MPI_Info_f2c PMPI_Info_f2c;
    MPI_Request: MPI_Request_c2f PMPI_Request_c2f MPI_Request_f2c PMPI_Request_f2c;
    MPI_Op: MPI_Op_c2f PMPI_Op_c2f MPI_Op_f2c PMPI_Op_f2c;
    MPI_Errhandler: MPI_Errhandler_c2f PMPI_Errhandler_c2f MPI_Errhandler_f2c PMPI_Errhandler_f2c;
    MPI_Win: MPI_Win_c2f PMPI_Win_c2f MPI_Win_f2c PMPI_Win_f2c;
    MPI_Message: MPI_Message_c2f PMPI_Message_c2f MPI_Message_f2c PMPI_Message_f2c;
    MPI_Session: MPI_Session_c2f PMPI_Session_c2f MPI_Session_f2c PMPI_Session_f2c;
}

/// `base + disp` on absolute addresses (wrapping, as address arithmetic in C on this platform).
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    run_value(0, || base.wrapping_add(disp))
}
#[no_mangle]
pub extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    run_value(0, || base.wrapping_add(disp))
}
/// `addr1 - addr2` on absolute addresses.
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    run_value(0, || addr1.wrapping_sub(addr2))
}
#[no_mangle]
pub extern "C" fn PMPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    run_value(0, || addr1.wrapping_sub(addr2))
}

fn is_ignore(p: *const MPI_Status) -> bool {
    p.is_null() || p as usize == STATUS_IGNORE_ADDR
}

fn is_f08_ignore(p: *const MPI_F08_status) -> bool {
    // SAFETY: reads the address the library's own sentinel pointer holds; nothing is dereferenced.
    p.is_null() || p == unsafe { std::ptr::read_volatile(std::ptr::addr_of!(crate::ffi::data_symbols::MPI_F08_STATUS_IGNORE)) } as *const _
}

/// Copies one status (every status layout here is the five ints of `MPI_Status`) into `to`,
/// which must not be NULL or a status-ignore sentinel.
///
/// # Safety
/// `from` must be a readable status; `to` NULL, a sentinel, or a writable status.
unsafe fn copy_status(from: *const MPI_Status, to: *mut MPI_Status, what: &str) -> crate::error::MpiResult {
    if is_ignore(to) || is_f08_ignore(to) || to as *const MPI_Fint == crate::ffi::data_symbols::fortran_status_ignore() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL or a status-ignore sentinel; pass a status to write")));
    }
    // The same status both ways has nothing to copy (and copy_nonoverlapping forbids it).
    if !std::ptr::eq(from, to) {
        // SAFETY: per this function's contract; distinct statuses.
        unsafe { std::ptr::copy_nonoverlapping(from, to, 1) };
    }
    Ok(())
}

crate::export! {
    /// Copies a C status into a Fortran `INTEGER STATUS(MPI_STATUS_SIZE)` (same layout here).
    fn MPI_Status_c2f / PMPI_Status_c2f (c_status: *const MPI_Status, f_status: *mut MPI_Fint) on comm MPI_COMM_SELF => {
        if is_ignore(c_status) {
            return Err(err(MPI_ERR_ARG, "c_status is MPI_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        if f_status.is_null() {
            return Err(err(MPI_ERR_ARG, "f_status is NULL"));
        }
        // SAFETY: both non-null statuses (caller contract); a Fortran status is MPI_F_STATUS_SIZE
        // integers, laid out as MPI_Status in the MPICH ABI.
        unsafe { std::ptr::copy_nonoverlapping(c_status, f_status as *mut MPI_Status, 1) };
        Ok(())
    }

    /// Copies a Fortran status into a C status.
    fn MPI_Status_f2c / PMPI_Status_f2c (f_status: *const MPI_Fint, c_status: *mut MPI_Status) on comm MPI_COMM_SELF => {
        if f_status.is_null() || f_status == crate::ffi::data_symbols::fortran_status_ignore() {
            return Err(err(MPI_ERR_ARG, "f_status is MPI_F_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        if is_ignore(c_status) {
            return Err(err(MPI_ERR_ARG, "c_status is MPI_STATUS_IGNORE or NULL"));
        }
        // SAFETY: as in MPI_Status_c2f, the other way round.
        unsafe { std::ptr::copy_nonoverlapping(f_status as *const MPI_Status, c_status, 1) };
        Ok(())
    }

    /// MPI 4.1 section 19.3.5: a Fortran status into a Fortran 2008 one (`MPI_F08_status` has the
    /// same five integers in the same order).
    fn MPI_Status_f2f08 / PMPI_Status_f2f08 (f_status: *const MPI_Fint, f08_status: *mut MPI_F08_status) on comm MPI_COMM_SELF => {
        if f_status.is_null() || f_status == crate::ffi::data_symbols::fortran_status_ignore() {
            return Err(err(MPI_ERR_ARG, "f_status is MPI_F_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        // SAFETY: checked non-null; both are five MPI_Fint (caller contract).
        unsafe { copy_status(f_status as *const MPI_Status, f08_status, "f08_status") }
    }

    /// A Fortran 2008 status into a Fortran one.
    fn MPI_Status_f082f / PMPI_Status_f082f (f08_status: *const MPI_F08_status, f_status: *mut MPI_Fint) on comm MPI_COMM_SELF => {
        if is_f08_ignore(f08_status) {
            return Err(err(MPI_ERR_ARG, "f08_status is MPI_F08_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        // SAFETY: checked non-null; both are five MPI_Fint (caller contract).
        unsafe { copy_status(f08_status, f_status as *mut MPI_Status, "f_status") }
    }

    /// A C status into a Fortran 2008 one.
    fn MPI_Status_c2f08 / PMPI_Status_c2f08 (c_status: *const MPI_Status, f08_status: *mut MPI_F08_status) on comm MPI_COMM_SELF => {
        if is_ignore(c_status) {
            return Err(err(MPI_ERR_ARG, "c_status is MPI_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        // SAFETY: checked non-null; both are MPI_Status-sized (caller contract).
        unsafe { copy_status(c_status, f08_status, "f08_status") }
    }

    /// A Fortran 2008 status into a C one.
    fn MPI_Status_f082c / PMPI_Status_f082c (f08_status: *const MPI_F08_status, c_status: *mut MPI_Status) on comm MPI_COMM_SELF => {
        if is_f08_ignore(f08_status) {
            return Err(err(MPI_ERR_ARG, "f08_status is MPI_F08_STATUS_IGNORE or NULL; there is no status to convert"));
        }
        // SAFETY: checked non-null; both are MPI_Status-sized (caller contract).
        unsafe { copy_status(f08_status, c_status, "c_status") }
    }

    /// Profiling control: oxmpi has no built-in profiler, so every level is accepted and ignored
    /// (MPI-4.0 section 15.2.4). Declared variadic in C; extra arguments are ignored.
    fn MPI_Pcontrol / PMPI_Pcontrol (level: c_int) on comm MPI_COMM_SELF => {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn conversions() {
        assert_eq!(MPI_Comm_c2f(MPI_COMM_WORLD), MPI_COMM_WORLD);
        assert_eq!(MPI_Type_f2c(0x4c000405), 0x4c000405);
        // SAFETY: plain address arithmetic on integers; nothing is dereferenced.
        unsafe {
            assert_eq!(MPI_Aint_add(100, -8), 92);
            assert_eq!(MPI_Aint_diff(100, 8), 92);
            let mut s = MPI_Status::default();
            s.MPI_SOURCE = 3;
            s.MPI_TAG = 7;
            let mut f = [0 as MPI_Fint; 5];
            assert_eq!(MPI_Status_c2f(&s, f.as_mut_ptr()), MPI_SUCCESS);
            assert_eq!(f[2], 3);
            let mut back = MPI_Status::default();
            assert_eq!(MPI_Status_f2c(f.as_ptr(), &mut back), MPI_SUCCESS);
            assert_eq!(back, s);
        }
    }
}
