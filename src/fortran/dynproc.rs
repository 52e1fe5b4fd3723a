//! Fortran bindings of dynamic processes whose CHARACTER arguments the mechanical rule cannot
//! express: MPI_COMM_SPAWN(_MULTIPLE) (commands and argument arrays, blank-terminated rows), and
//! the port and name functions.
use super::sentinels;
use super::set_ierr;
use super::strings::{input, output, FLen};
use crate::abi::{MPI_Fint, MPI_SUCCESS};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

/// Room for a port name (MPI_MAX_PORT_NAME) and its terminator.
const PORT_ROOM: usize = 257;

/// The arguments of one command: the CHARACTER*(len) elements at `first`, `stride` elements
/// apart, up to the first blank one. None for MPI_ARGV_NULL / MPI_ARGVS_NULL.
///
/// # Safety
/// `first` is NULL, a sentinel, or an array with a blank element at the end of the row.
unsafe fn argv_row(first: *const c_char, stride: usize, len: FLen) -> Option<Vec<CString>> {
    // SAFETY: forwarded contract.
    unsafe { argv_row_with(first, stride, len, sentinels::is_argv_null) }
}

/// `argv_row` with the ABI's test for its MPI_ARGV(S)_NULL sentinels (Open MPI's are its own
/// COMMON blocks: src/abi_ompi/fortran/dynproc.rs).
///
/// # Safety
/// As `argv_row`.
pub(crate) unsafe fn argv_row_with(first: *const c_char, stride: usize, len: FLen, is_argv_null: fn(*const u8) -> bool) -> Option<Vec<CString>> {
    if first.is_null() || is_argv_null(first as *const u8) {
        return None;
    }
    let len = len & 0xffff_ffff;
    let mut out = Vec::new();
    for k in 0.. {
        // SAFETY: the row ends with a blank element (the binding's contract), read before any beyond.
        let a = unsafe { input(first.add(k * stride * len), len, false) };
        if a.as_bytes().is_empty() {
            break;
        }
        out.push(a);
    }
    Some(out)
}

/// A C argv (NULL-terminated) over `args`, which must outlive it.
pub(crate) fn c_argv(args: &[CString]) -> Vec<*mut c_char> {
    args.iter().map(|a| a.as_ptr() as *mut c_char).chain(std::iter::once(std::ptr::null_mut())).collect()
}

fortran_binding!(comm_spawn, COMM_SPAWN; (command: *const c_char, argv: *const c_char, maxprocs: *const c_int, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, intercomm: *mut MPI_Fint, errcodes: *mut c_int, ierr: *mut MPI_Fint, clen: FLen, alen: FLen) => {
    let cmd = input(command, clen, true);
    let args = argv_row(argv, 1, alen);
    let mut v = args.as_deref().map(c_argv);
    let vp = v.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
    set_ierr(ierr, crate::ffi::PMPI_Comm_spawn(cmd.as_ptr(), vp, *maxprocs, *info, *root, *comm, intercomm, sentinels::errcodes(errcodes)));
});

fortran_binding!(comm_spawn_multiple, COMM_SPAWN_MULTIPLE; (count: *const c_int, commands: *const c_char, argvs: *const c_char, maxprocs: *const c_int, infos: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, intercomm: *mut MPI_Fint, errcodes: *mut c_int, ierr: *mut MPI_Fint, clen: FLen, alen: FLen) => {
    let n = (*count).max(0) as usize;
    let cmds: Vec<CString> = (0..n).map(|i| input(commands.add(i * (clen & 0xffff_ffff)), clen, true)).collect();
    let mut cmd_ptrs: Vec<*mut c_char> = cmds.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    // ARRAY_OF_ARGV(COUNT, *): command i's arguments are row i, COUNT elements apart.
    let null = argvs.is_null() || sentinels::is_argv_null(argvs as *const u8);
    let rows: Vec<Vec<CString>> = if null { Vec::new() } else { (0..n).map(|i| argv_row(argvs.add(i * (alen & 0xffff_ffff)), n, alen).unwrap_or_default()).collect() };
    let mut row_ptrs: Vec<Vec<*mut c_char>> = rows.iter().map(|r| c_argv(r)).collect();
    let mut table: Vec<*mut *mut c_char> = row_ptrs.iter_mut().map(|r| r.as_mut_ptr()).collect();
    let tp = if null { std::ptr::null_mut() } else { table.as_mut_ptr() };
    set_ierr(ierr, crate::ffi::PMPI_Comm_spawn_multiple(*count, cmd_ptrs.as_mut_ptr(), tp, maxprocs, infos, *root, *comm, intercomm, sentinels::errcodes(errcodes)));
});

fortran_binding!(open_port, OPEN_PORT; (info: *const MPI_Fint, port: *mut c_char, ierr: *mut MPI_Fint, len: FLen) => {
    let mut buf = [0u8; PORT_ROOM];
    let rc = crate::ffi::PMPI_Open_port(*info, buf.as_mut_ptr() as *mut c_char);
    if rc == MPI_SUCCESS {
        output(&buf, port, len);
    }
    set_ierr(ierr, rc);
});

fortran_binding!(close_port, CLOSE_PORT; (port: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Close_port(input(port, len, false).as_ptr()));
});

fortran_binding!(comm_accept, COMM_ACCEPT; (port: *const c_char, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_accept(input(port, len, false).as_ptr(), *info, *root, *comm, newcomm));
});

fortran_binding!(comm_connect, COMM_CONNECT; (port: *const c_char, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_connect(input(port, len, false).as_ptr(), *info, *root, *comm, newcomm));
});

fortran_binding!(publish_name, PUBLISH_NAME; (service: *const c_char, info: *const MPI_Fint, port: *const c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Publish_name(input(service, slen, false).as_ptr(), *info, input(port, plen, false).as_ptr()));
});

fortran_binding!(unpublish_name, UNPUBLISH_NAME; (service: *const c_char, info: *const MPI_Fint, port: *const c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Unpublish_name(input(service, slen, false).as_ptr(), *info, input(port, plen, false).as_ptr()));
});

fortran_binding!(lookup_name, LOOKUP_NAME; (service: *const c_char, info: *const MPI_Fint, port: *mut c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    let mut buf = [0u8; PORT_ROOM];
    let rc = crate::ffi::PMPI_Lookup_name(input(service, slen, false).as_ptr(), *info, buf.as_mut_ptr() as *mut c_char);
    if rc == MPI_SUCCESS {
        output(&buf, port, plen);
    }
    set_ierr(ierr, rc);
});
