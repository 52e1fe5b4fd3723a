//! Fortran bindings that the mechanical rule of generated.rs cannot express: CHARACTER arguments,
//! callbacks, attribute values (INTEGER(KIND=MPI_ADDRESS_KIND) by value in Fortran), 1-based
//! request indices, functions with results, and the start-up calls.
use super::callbacks::{keyval_state, KeyvalKind};
use super::sentinels::{self, status, statuses};
use super::set_ierr;
use super::strings::{input, output, FLen};
use crate::abi::{
    MPI_Aint, MPI_Fint, MPI_User_function, MPI_Win_errhandler_function, MPI_APPNUM, MPI_HOST, MPI_IO, MPI_LASTUSEDCODE, MPI_SUCCESS, MPI_TAG_UB, MPI_UNDEFINED, MPI_UNIVERSE_SIZE,
    MPI_WIN_BASE, MPI_WIN_CREATE_FLAVOR, MPI_WIN_DISP_UNIT, MPI_WIN_MODEL, MPI_WIN_SIZE, MPI_WTIME_IS_GLOBAL,
};
use crate::ffi::CommErrhandlerFn;
use std::os::raw::{c_char, c_int, c_void};


/// The C values of the predefined attribute keys (include/mpi.h); Fortran passes each plus one.
const PREDEFINED_KEYS: [c_int; 12] = [
    MPI_TAG_UB,
    MPI_HOST,
    MPI_IO,
    MPI_WTIME_IS_GLOBAL,
    MPI_UNIVERSE_SIZE,
    MPI_LASTUSEDCODE,
    MPI_APPNUM,
    MPI_WIN_BASE,
    MPI_WIN_SIZE,
    MPI_WIN_DISP_UNIT,
    MPI_WIN_CREATE_FLAVOR,
    MPI_WIN_MODEL,
];

/// A Fortran keyval as the C library knows it, and whether it names a predefined attribute
/// (whose C value is a pointer to the integer).
fn c_key(k: c_int) -> (c_int, bool) {
    if PREDEFINED_KEYS.contains(&(k.wrapping_sub(1))) {
        (k - 1, true)
    } else {
        (k, PREDEFINED_KEYS.contains(&k))
    }
}

fortran_binding!(init, INIT; (ierr: *mut MPI_Fint) => {
    sentinels::publish_status_ignore();
    set_ierr(ierr, crate::ffi::PMPI_Init(std::ptr::null_mut(), std::ptr::null_mut()));
});
fortran_binding!(init_thread, INIT_THREAD; (required: *const c_int, provided: *mut c_int, ierr: *mut MPI_Fint) => {
    sentinels::publish_status_ignore();
    set_ierr(ierr, crate::ffi::PMPI_Init_thread(std::ptr::null_mut(), std::ptr::null_mut(), *required, provided));
});
fortran_binding!(wtime, WTIME; () -> f64 => { crate::ffi::PMPI_Wtime() });
fortran_binding!(wtick, WTICK; () -> f64 => { crate::ffi::PMPI_Wtick() });
fortran_binding!(aint_add, AINT_ADD; (base: *const MPI_Aint, disp: *const MPI_Aint) -> MPI_Aint => {
    crate::ffi::PMPI_Aint_add(*base, *disp)
});
fortran_binding!(aint_diff, AINT_DIFF; (a1: *const MPI_Aint, a2: *const MPI_Aint) -> MPI_Aint => {
    crate::ffi::PMPI_Aint_diff(*a1, *a2)
});
fortran_binding!(pcontrol, PCONTROL; (level: *const c_int, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Pcontrol(*level));
});

// Request indices are 1-based in Fortran.
fortran_binding!(waitany, WAITANY; (count: *const c_int, reqs: *mut MPI_Fint, index: *mut c_int, st: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = crate::ffi::PMPI_Waitany(*count, reqs, index, status(st));
    if rc == MPI_SUCCESS && *index >= 0 {
        *index += 1;
    }
    set_ierr(ierr, rc);
});
fortran_binding!(testany, TESTANY; (count: *const c_int, reqs: *mut MPI_Fint, index: *mut c_int, flag: *mut c_int, st: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = crate::ffi::PMPI_Testany(*count, reqs, index, flag, status(st));
    if rc == MPI_SUCCESS && *index >= 0 {
        *index += 1;
    }
    set_ierr(ierr, rc);
});
/// Shifts the first `*outcount` indices to 1-based after a successful Waitsome/Testsome.
unsafe fn shift_indices(rc: c_int, outcount: *const c_int, indices: *mut c_int) {
    // SAFETY: the C call filled `*outcount` entries of the caller's array.
    unsafe {
        if rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED {
            for i in 0..(*outcount).max(0) as usize {
                *indices.add(i) += 1;
            }
        }
    }
}
fortran_binding!(waitsome, WAITSOME; (incount: *const c_int, reqs: *mut MPI_Fint, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = crate::ffi::PMPI_Waitsome(*incount, reqs, outcount, indices, statuses(sts));
    shift_indices(rc, outcount, indices);
    set_ierr(ierr, rc);
});
fortran_binding!(testsome, TESTSOME; (incount: *const c_int, reqs: *mut MPI_Fint, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = crate::ffi::PMPI_Testsome(*incount, reqs, outcount, indices, statuses(sts));
    shift_indices(rc, outcount, indices);
    set_ierr(ierr, rc);
});
// Fortran's BUFFER_ADDR cannot hold a C pointer; the address is dropped, as in MPICH.
fortran_binding!(buffer_detach, BUFFER_DETACH; (_buffer_addr: *mut c_void, size: *mut c_int, ierr: *mut MPI_Fint) => {
    let mut p: *mut c_void = std::ptr::null_mut();
    set_ierr(ierr, crate::ffi::PMPI_Buffer_detach(&mut p as *mut *mut c_void as *mut c_void, size));
});

// Callbacks whose Fortran form has the C layout already (all arguments by reference).
fortran_binding!(op_create, OP_CREATE; (user_fn: Option<MPI_User_function>, commute: *const c_int, op: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Op_create(user_fn, *commute, op));
});
fortran_binding!(comm_create_errhandler, COMM_CREATE_ERRHANDLER; (f: Option<CommErrhandlerFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_create_errhandler(f, eh));
});
fortran_binding!(win_create_errhandler, WIN_CREATE_ERRHANDLER; (f: Option<MPI_Win_errhandler_function>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Win_create_errhandler(f, eh));
});
fortran_binding!(errhandler_create, ERRHANDLER_CREATE; (f: Option<CommErrhandlerFn>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Errhandler_create(f, eh));
});

// Attributes: Fortran values are integers stored as the C `void *` value itself.
fortran_binding!(comm_set_attr, COMM_SET_ATTR; (comm: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_set_attr(*comm, c_key(*keyval).0, *val as *mut c_void));
});
fortran_binding!(attr_put, ATTR_PUT; (comm: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Attr_put(*comm, c_key(*keyval).0, *val as MPI_Aint as *mut c_void));
});
fortran_binding!(type_set_attr, TYPE_SET_ATTR; (t: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Type_set_attr(*t, *keyval, *val as *mut c_void));
});
fortran_binding!(win_set_attr, WIN_SET_ATTR; (win: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Win_set_attr(*win, c_key(*keyval).0, *val as *mut c_void));
});
/// Reads an attribute through C and turns it into the Fortran integer value.
unsafe fn get_attr(keyval: c_int, flag: *mut c_int, call: impl FnOnce(c_int, *mut c_void) -> c_int) -> (c_int, MPI_Aint) {
    let (k, predefined) = c_key(keyval);
    let mut p: *mut c_void = std::ptr::null_mut();
    let rc = call(k, &mut p as *mut *mut c_void as *mut c_void);
    // SAFETY: on success with the flag set, a predefined attribute's value points to its int.
    unsafe {
        if rc != MPI_SUCCESS || *flag == 0 {
            return (rc, 0);
        }
        (rc, if predefined && !p.is_null() { *(p as *const c_int) as MPI_Aint } else { p as MPI_Aint })
    }
}
fortran_binding!(comm_get_attr, COMM_GET_ATTR; (comm: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (rc, v) = get_attr(*keyval, flag, |k, p| crate::ffi::PMPI_Comm_get_attr(*comm, k, p, flag));
    if rc == MPI_SUCCESS && *flag != 0 {
        *val = v;
    }
    set_ierr(ierr, rc);
});
fortran_binding!(attr_get, ATTR_GET; (comm: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Fint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (rc, v) = get_attr(*keyval, flag, |k, p| crate::ffi::PMPI_Attr_get(*comm, k, p, flag));
    if rc == MPI_SUCCESS && *flag != 0 {
        *val = v as MPI_Fint;
    }
    set_ierr(ierr, rc);
});
fortran_binding!(type_get_attr, TYPE_GET_ATTR; (t: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (rc, v) = get_attr(*keyval, flag, |k, p| crate::ffi::PMPI_Type_get_attr(*t, k, p, flag));
    if rc == MPI_SUCCESS && *flag != 0 {
        *val = v;
    }
    set_ierr(ierr, rc);
});
// Window attributes (MPI 4.1 section 12.2.6): in C, MPI_WIN_BASE is the base address itself,
// MPI_WIN_SIZE points to an MPI_Aint and the other predefined ones to an int; Fortran gets the
// values.
fortran_binding!(win_get_attr, WIN_GET_ATTR; (win: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (k, predefined) = c_key(*keyval);
    let mut p: *mut c_void = std::ptr::null_mut();
    let rc = crate::ffi::PMPI_Win_get_attr(*win, k, &mut p as *mut *mut c_void as *mut c_void, flag);
    if rc == MPI_SUCCESS && *flag != 0 {
        *val = match k {
            MPI_WIN_BASE => p as MPI_Aint,
            MPI_WIN_SIZE => *(p as *const MPI_Aint),
            _ if predefined => *(p as *const c_int) as MPI_Aint,
            _ => p as MPI_Aint,
        };
    }
    set_ierr(ierr, rc);
});
fortran_binding!(comm_create_keyval, COMM_CREATE_KEYVAL; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    let st = keyval_state(KeyvalKind::Comm, copy, del, *extra);
    let (c, d) = super::callbacks::trampolines();
    set_ierr(ierr, crate::ffi::PMPI_Comm_create_keyval(c, d, keyval, st));
});
fortran_binding!(keyval_create, KEYVAL_CREATE; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Fint, ierr: *mut MPI_Fint) => {
    let st = keyval_state(KeyvalKind::Legacy, copy, del, *extra as MPI_Aint);
    let (c, d) = super::callbacks::trampolines();
    set_ierr(ierr, crate::ffi::PMPI_Keyval_create(c, d, keyval, st));
});
fortran_binding!(type_create_keyval, TYPE_CREATE_KEYVAL; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    let st = keyval_state(KeyvalKind::Type, copy, del, *extra);
    let (c, d) = super::callbacks::trampolines();
    set_ierr(ierr, crate::ffi::PMPI_Type_create_keyval(c, d, keyval, st));
});
fortran_binding!(win_create_keyval, WIN_CREATE_KEYVAL; (copy: *const c_void, del: *const c_void, keyval: *mut c_int, extra: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    let st = keyval_state(KeyvalKind::Win, copy, del, *extra);
    let (c, d) = super::callbacks::trampolines();
    set_ierr(ierr, crate::ffi::PMPI_Win_create_keyval(c, d, keyval, st));
});

// CHARACTER arguments. Output: a C buffer of the C maximum, then copied blank-padded; resultlen
// is the length of the text (at most the Fortran length).
/// Runs `call` with a C buffer of `cap` bytes and copies the result into the CHARACTER argument.
pub(crate) unsafe fn string_out(cap: usize, out: *mut c_char, len: FLen, resultlen: *mut c_int, call: impl FnOnce(*mut c_char) -> c_int) -> c_int {
    let mut buf = vec![0u8; cap + 1];
    let rc = call(buf.as_mut_ptr() as *mut c_char);
    if rc == MPI_SUCCESS {
        // SAFETY: the caller's CHARACTER*(len) argument and INTEGER resultlen.
        unsafe {
            let n = output(&buf, out, len);
            if !resultlen.is_null() {
                *resultlen = n as c_int;
            }
        }
    }
    rc
}
fortran_binding!(get_processor_name, GET_PROCESSOR_NAME; (name: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, name, len, resultlen, |b| crate::ffi::PMPI_Get_processor_name(b, &mut n)));
});
fortran_binding!(error_string, ERROR_STRING; (code: *const c_int, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(512, s, len, resultlen, |b| crate::ffi::PMPI_Error_string(*code, b, &mut n)));
});
fortran_binding!(get_library_version, GET_LIBRARY_VERSION; (s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(8192, s, len, resultlen, |b| crate::ffi::PMPI_Get_library_version(b, &mut n)));
});
fortran_binding!(comm_get_name, COMM_GET_NAME; (comm: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| crate::ffi::PMPI_Comm_get_name(*comm, b, &mut n)));
});
fortran_binding!(type_get_name, TYPE_GET_NAME; (t: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| crate::ffi::PMPI_Type_get_name(*t, b, &mut n)));
});
fortran_binding!(win_get_name, WIN_GET_NAME; (win: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| crate::ffi::PMPI_Win_get_name(*win, b, &mut n)));
});
fortran_binding!(comm_set_name, COMM_SET_NAME; (comm: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_set_name(*comm, input(s, len, false).as_ptr()));
});
fortran_binding!(type_set_name, TYPE_SET_NAME; (t: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Type_set_name(*t, input(s, len, false).as_ptr()));
});
fortran_binding!(win_set_name, WIN_SET_NAME; (win: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Win_set_name(*win, input(s, len, false).as_ptr()));
});
// The data representation of MPI_Pack_external & co. ('external32').
fortran_binding!(pack_external, PACK_EXTERNAL; (datarep: *const c_char, inbuf: *mut c_void, incount: *const c_int, datatype: *const MPI_Fint, outbuf: *mut c_void, outsize: *const MPI_Aint, position: *mut MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    let rep = input(datarep, len, false);
    set_ierr(ierr, crate::ffi::PMPI_Pack_external(rep.as_ptr(), sentinels::buf(inbuf), *incount, *datatype, sentinels::buf(outbuf), *outsize, position));
});
fortran_binding!(unpack_external, UNPACK_EXTERNAL; (datarep: *const c_char, inbuf: *mut c_void, insize: *const MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: *const c_int, datatype: *const MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    let rep = input(datarep, len, false);
    set_ierr(ierr, crate::ffi::PMPI_Unpack_external(rep.as_ptr(), sentinels::buf(inbuf), *insize, position, sentinels::buf(outbuf), *outcount, *datatype));
});
fortran_binding!(pack_external_size, PACK_EXTERNAL_SIZE; (datarep: *const c_char, incount: *const c_int, datatype: *const MPI_Fint, size: *mut MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Pack_external_size(input(datarep, len, false).as_ptr(), *incount, *datatype, size));
});
fortran_binding!(add_error_string, ADD_ERROR_STRING; (code: *const c_int, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Add_error_string(*code, input(s, len, false).as_ptr()));
});

// Info keys and values lose leading and trailing blanks (MPI 4.1 section 10.1).
fortran_binding!(info_set, INFO_SET; (info: *const MPI_Fint, key: *const c_char, value: *const c_char, ierr: *mut MPI_Fint, klen: FLen, vlen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Info_set(*info, input(key, klen, true).as_ptr(), input(value, vlen, true).as_ptr()));
});
fortran_binding!(info_delete, INFO_DELETE; (info: *const MPI_Fint, key: *const c_char, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Info_delete(*info, input(key, klen, true).as_ptr()));
});
fortran_binding!(info_get, INFO_GET; (info: *const MPI_Fint, key: *const c_char, valuelen: *const c_int, value: *mut c_char, flag: *mut c_int, ierr: *mut MPI_Fint, klen: FLen, vlen: FLen) => {
    let cap = (*valuelen).max(0) as usize;
    let k = input(key, klen, true);
    let mut buf = vec![0u8; cap + 1];
    let rc = crate::ffi::PMPI_Info_get(*info, k.as_ptr(), cap as c_int, buf.as_mut_ptr() as *mut c_char, flag);
    if rc == MPI_SUCCESS && *flag != 0 {
        output(&buf, value, vlen);
    }
    set_ierr(ierr, rc);
});
fortran_binding!(info_get_string, INFO_GET_STRING; (info: *const MPI_Fint, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int, ierr: *mut MPI_Fint, klen: FLen, vlen: FLen) => {
    let k = input(key, klen, true);
    let mut buf = vec![0u8; (vlen & 0xffff_ffff) + 1];
    let mut n = buf.len() as c_int;
    let rc = crate::ffi::PMPI_Info_get_string(*info, k.as_ptr(), &mut n, buf.as_mut_ptr() as *mut c_char, flag);
    if rc == MPI_SUCCESS && *flag != 0 {
        output(&buf, value, vlen);
        *buflen = n - 1; // Fortran lengths do not count the NUL.
    }
    set_ierr(ierr, rc);
});
fortran_binding!(info_get_valuelen, INFO_GET_VALUELEN; (info: *const MPI_Fint, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Info_get_valuelen(*info, input(key, klen, true).as_ptr(), valuelen, flag));
});
fortran_binding!(info_get_nthkey, INFO_GET_NTHKEY; (info: *const MPI_Fint, n: *const c_int, key: *mut c_char, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, string_out(256, key, klen, std::ptr::null_mut(), |b| crate::ffi::PMPI_Info_get_nthkey(*info, *n, b)));
});
fortran_binding!(info_create_env, INFO_CREATE_ENV; (info: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Info_create_env(0, std::ptr::null_mut(), info));
});

// Sessions (MPI 4.1 section 11.3) and the communicators made from groups: string arguments.
fortran_binding!(session_create_errhandler, SESSION_CREATE_ERRHANDLER; (f: Option<crate::abi::MPI_Session_errhandler_function>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_Session_create_errhandler(f, eh));
});
fortran_binding!(group_from_session_pset, GROUP_FROM_SESSION_PSET; (session: *const MPI_Fint, s: *const c_char, group: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Group_from_session_pset(*session, input(s, len, false).as_ptr(), group));
});
fortran_binding!(session_get_pset_info, SESSION_GET_PSET_INFO; (session: *const MPI_Fint, s: *const c_char, info: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Session_get_pset_info(*session, input(s, len, false).as_ptr(), info));
});
// pset_len 0 asks for the length (with the C terminator, as in C); else the name is copied
// blank-padded into the CHARACTER argument.
fortran_binding!(session_get_nth_pset, SESSION_GET_NTH_PSET; (session: *const MPI_Fint, info: *const MPI_Fint, n: *const c_int, pset_len: *mut c_int, s: *mut c_char, ierr: *mut MPI_Fint, len: FLen) => {
    if pset_len.is_null() || *pset_len == 0 {
        set_ierr(ierr, crate::ffi::PMPI_Session_get_nth_pset(*session, *info, *n, pset_len, std::ptr::null_mut()));
    } else {
        let mut cap = crate::abi::MPI_MAX_PSET_NAME_LEN as c_int;
        set_ierr(ierr, string_out(cap as usize, s, len, std::ptr::null_mut(), |b| crate::ffi::PMPI_Session_get_nth_pset(*session, *info, *n, &mut cap, b)));
        *pset_len = cap;
    }
});
fortran_binding!(comm_create_from_group, COMM_CREATE_FROM_GROUP; (group: *const MPI_Fint, s: *const c_char, info: *const MPI_Fint, eh: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Comm_create_from_group(*group, input(s, len, false).as_ptr(), *info, *eh, newcomm));
});
fortran_binding!(intercomm_create_from_groups, INTERCOMM_CREATE_FROM_GROUPS; (local: *const MPI_Fint, local_leader: *const c_int, remote: *const MPI_Fint, remote_leader: *const c_int, s: *const c_char, info: *const MPI_Fint, eh: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_Intercomm_create_from_groups(*local, *local_leader, *remote, *remote_leader, input(s, len, false).as_ptr(), *info, *eh, newcomm));
});
// MPI_GREQUEST_START: the Fortran subroutines take their arguments by reference and return the
// error in IERROR; C trampolines call them with a boxed state as the C extra_state.
fortran_binding!(grequest_start, GREQUEST_START; (query_fn: *const c_void, free_fn: *const c_void, cancel_fn: *const c_void, extra_state: *const MPI_Aint, request: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    if query_fn.is_null() || free_fn.is_null() || cancel_fn.is_null() || extra_state.is_null() {
        set_ierr(ierr, crate::ffi::PMPI_Grequest_start(None, None, None, std::ptr::null_mut(), std::ptr::null_mut()));
        return;
    }
    let state = super::callbacks::greq_state(query_fn, free_fn, cancel_fn, *extra_state);
    let rc = crate::ffi::PMPI_Grequest_start(Some(super::callbacks::greq_query), Some(super::callbacks::greq_free), Some(super::callbacks::greq_cancel), state, request as _);
    if rc != MPI_SUCCESS {
        // Never started: the free trampoline will not run.
        drop(Box::from_raw(state as *mut super::callbacks::GreqState));
    }
    set_ierr(ierr, rc);
});

// Files: a Fortran file handle is the INTEGER of MPI_File_c2f. A Fortran file error handler
// receives the C handle's address, whose first 4 bytes (little-endian) are that INTEGER.
fortran_binding!(file_create_errhandler, FILE_CREATE_ERRHANDLER; (f: Option<crate::abi::MPI_File_errhandler_function>, eh: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::PMPI_File_create_errhandler(f, eh));
});
fortran_binding!(file_open, FILE_OPEN; (comm: *const MPI_Fint, filename: *const c_char, amode: *const c_int, info: *const MPI_Fint, fh: *mut MPI_Fint, ierr: *mut MPI_Fint, flen: FLen) => {
    let mut c = std::ptr::null_mut();
    let rc = crate::ffi::PMPI_File_open(*comm, input(filename, flen, true).as_ptr(), *amode, *info, &mut c);
    *fh = crate::ffi::io::file::c2f(c);
    set_ierr(ierr, rc);
});
fortran_binding!(file_delete, FILE_DELETE; (filename: *const c_char, info: *const MPI_Fint, ierr: *mut MPI_Fint, flen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_File_delete(input(filename, flen, true).as_ptr(), *info));
});
fortran_binding!(file_set_view, FILE_SET_VIEW; (fh: *const MPI_Fint, disp: *const crate::abi::MPI_Offset, etype: *const MPI_Fint, filetype: *const MPI_Fint, datarep: *const c_char, info: *const MPI_Fint, ierr: *mut MPI_Fint, dlen: FLen) => {
    set_ierr(ierr, crate::ffi::PMPI_File_set_view(crate::ffi::io::file::f2c(*fh), *disp, *etype, *filetype, input(datarep, dlen, true).as_ptr(), *info));
});
fortran_binding!(file_get_view, FILE_GET_VIEW; (fh: *const MPI_Fint, disp: *mut crate::abi::MPI_Offset, etype: *mut MPI_Fint, filetype: *mut MPI_Fint, datarep: *mut c_char, ierr: *mut MPI_Fint, dlen: FLen) => {
    let mut buf = vec![0u8; crate::abi::MPI_MAX_DATAREP_STRING + 1];
    let rc = crate::ffi::PMPI_File_get_view(crate::ffi::io::file::f2c(*fh), disp, etype, filetype, buf.as_mut_ptr() as *mut c_char);
    if rc == MPI_SUCCESS {
        output(&buf, datarep, dlen);
    }
    set_ierr(ierr, rc);
});
