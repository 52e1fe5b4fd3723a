//! MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE of Open MPI's Fortran library: the CHARACTER
//! commands and argument arrays as the MPICH-ABI bindings read them (src/fortran/dynproc.rs, with
//! Open MPI's MPI_ARGV(S)_NULL blocks), Open MPI's INTEGER handles, and the C layer's spawn
//! (src/abi_ompi/spawn.rs), which converts the error codes.
use super::super::conv::Handle;
use super::super::spawn::{oxompi_MPI_Comm_spawn, oxompi_MPI_Comm_spawn_multiple};
use super::super::tables::{F_COMM, F_INFO};
use super::{handles, sentinels, set_ierr};
use crate::abi::MPI_Fint;
use crate::fortran::dynproc::{argv_row_with, c_argv};
use crate::fortran::strings::{input, FLen};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

/// The new intercommunicator as Open MPI's INTEGER, when the call made one.
///
/// # Safety
/// `intercomm` is the caller's INTEGER.
unsafe fn inter_out(rc: c_int, c: Handle, intercomm: *mut MPI_Fint) {
    if rc == 0 && !intercomm.is_null() {
        // SAFETY: the caller's INTEGER (function contract).
        unsafe { *intercomm = handles::from_c(c) };
    }
}

ompi_fortran!(comm_spawn; (command: *const c_char, argv: *const c_char, maxprocs: *const c_int, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, intercomm: *mut MPI_Fint, errcodes: *mut c_int, ierr: *mut MPI_Fint, clen: FLen, alen: FLen) => {
    let cmd = input(command, clen, true);
    let args = argv_row_with(argv, 1, alen, sentinels::is_argv_null);
    let mut v = args.as_deref().map(c_argv);
    let vp = v.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
    let mut c: Handle = std::ptr::null_mut();
    let rc = oxompi_MPI_Comm_spawn(cmd.as_ptr(), vp, *maxprocs, handles::to_c(F_INFO, *info), *root, handles::to_c(F_COMM, *comm), &mut c, sentinels::errcodes(errcodes));
    inter_out(rc, c, intercomm);
    set_ierr(ierr, rc);
});

ompi_fortran!(comm_spawn_multiple; (count: *const c_int, commands: *const c_char, argvs: *const c_char, maxprocs: *const c_int, infos: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, intercomm: *mut MPI_Fint, errcodes: *mut c_int, ierr: *mut MPI_Fint, clen: FLen, alen: FLen) => {
    let n = (*count).max(0) as usize;
    let cmds: Vec<CString> = (0..n).map(|i| input(commands.add(i * (clen & 0xffff_ffff)), clen, true)).collect();
    let mut cmd_ptrs: Vec<*mut c_char> = cmds.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    // ARRAY_OF_ARGV(COUNT, *): command i's arguments are row i, COUNT elements apart.
    let null = argvs.is_null() || sentinels::is_argv_null(argvs as *const u8);
    let rows: Vec<Vec<CString>> = if null { Vec::new() } else { (0..n).map(|i| argv_row_with(argvs.add(i * (alen & 0xffff_ffff)), n, alen, sentinels::is_argv_null).unwrap_or_default()).collect() };
    let mut row_ptrs: Vec<Vec<*mut c_char>> = rows.iter().map(|r| c_argv(r)).collect();
    let mut table: Vec<*mut *mut c_char> = row_ptrs.iter_mut().map(|r| r.as_mut_ptr()).collect();
    let tp = if null { std::ptr::null_mut() } else { table.as_mut_ptr() };
    let c_infos: Vec<Handle> = if infos.is_null() { Vec::new() } else { (0..n).map(|i| handles::to_c(F_INFO, *infos.add(i))).collect() };
    let ip = if infos.is_null() { std::ptr::null() } else { c_infos.as_ptr() };
    let mut c: Handle = std::ptr::null_mut();
    let rc = oxompi_MPI_Comm_spawn_multiple(*count, cmd_ptrs.as_mut_ptr(), tp, maxprocs, ip, *root, handles::to_c(F_COMM, *comm), &mut c, sentinels::errcodes(errcodes));
    inter_out(rc, c, intercomm);
    set_ierr(ierr, rc);
});
