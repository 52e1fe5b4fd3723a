//! Open MPI Fortran bindings that generated.rs's rule cannot express, as src/fortran/hand.rs
//! writes them for MPICH: functions with results, 1-based request indices, attribute values and
//! CHARACTER arguments (through src/fortran/strings.rs and its `string_out`).
use super::super::conv::{code_out, Handle, OmpiStatus};
use super::super::tables::{F_COMM, F_DATATYPE, F_INFO, F_REQUEST, F_WIN, KEYVALS};
use super::super::wrappers as w;
use super::{handles, sentinels, set_ierr};
use crate::abi::{MPI_Aint, MPI_Fint};
use crate::fortran::hand::string_out;
use crate::fortran::strings::{input, output, FLen};
use std::os::raw::{c_char, c_int, c_void};

ompi_fortran!(init; (ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()));
});
ompi_fortran!(init_thread; (required: *const c_int, provided: *mut c_int, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Init_thread(std::ptr::null_mut(), std::ptr::null_mut(), *required, provided));
});
ompi_fortran!(wtime; () -> f64 => { w::oxompi_MPI_Wtime() });
ompi_fortran!(wtick; () -> f64 => { w::oxompi_MPI_Wtick() });
// Macros in Open MPI's C header; plain address arithmetic, the same in every ABI.
ompi_fortran!(aint_add; (base: *const MPI_Aint, disp: *const MPI_Aint) -> MPI_Aint => { crate::ffi::PMPI_Aint_add(*base, *disp) });
ompi_fortran!(aint_diff; (a1: *const MPI_Aint, a2: *const MPI_Aint) -> MPI_Aint => { crate::ffi::PMPI_Aint_diff(*a1, *a2) });
// MPI_F_SYNC_REG: its call alone keeps the compiler from moving accesses to the buffer across it.
ompi_fortran!(f_sync_reg; (_buf: *mut c_void) => {});
ompi_fortran!(pcontrol; (level: *const c_int, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Pcontrol(*level));
});

/// Runs a completion call on the C form of the Fortran requests `reqs[..n]` and writes them back.
unsafe fn with_requests(reqs: *mut MPI_Fint, n: c_int, call: impl FnOnce(*mut Handle) -> c_int) -> c_int {
    // SAFETY: `reqs` holds `n` INTEGERs (the caller's array).
    unsafe {
        let mut t = handles::array_to_c(F_REQUEST, reqs, n);
        let rc = call(handles::array_ptr(reqs, &mut t));
        handles::array_from_c(reqs, &t);
        rc
    }
}
/// Request indices are 1-based in Fortran; `MPI_UNDEFINED` stays.
unsafe fn one_based(rc: c_int, index: *mut c_int) {
    // SAFETY: the caller's INTEGER, written by the C call.
    unsafe {
        if rc == 0 && !index.is_null() && *index >= 0 {
            *index += 1;
        }
    }
}
ompi_fortran!(waitany; (count: *const c_int, reqs: *mut MPI_Fint, index: *mut c_int, st: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = with_requests(reqs, *count, |r| w::oxompi_MPI_Waitany(*count, r, index, sentinels::status(st)));
    one_based(rc, index);
    set_ierr(ierr, rc);
});
ompi_fortran!(testany; (count: *const c_int, reqs: *mut MPI_Fint, index: *mut c_int, flag: *mut c_int, st: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let rc = with_requests(reqs, *count, |r| w::oxompi_MPI_Testany(*count, r, index, flag, sentinels::status(st)));
    one_based(rc, index);
    set_ierr(ierr, rc);
});
/// Waitsome/Testsome: the first `*outcount` indices to 1-based.
unsafe fn some(incount: c_int, reqs: *mut MPI_Fint, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Fint,
               call: unsafe extern "C" fn(c_int, *mut Handle, *mut c_int, *mut c_int, *mut OmpiStatus) -> c_int) -> c_int {
    // SAFETY: the caller's arrays of `incount` entries, filled by the C call.
    unsafe {
        let rc = with_requests(reqs, incount, |r| call(incount, r, outcount, indices, sentinels::statuses(sts)));
        if rc == 0 && *outcount > 0 {
            for i in 0..*outcount as usize {
                *indices.add(i) += 1;
            }
        }
        rc
    }
}
ompi_fortran!(waitsome; (incount: *const c_int, reqs: *mut MPI_Fint, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, some(*incount, reqs, outcount, indices, sts, w::oxompi_MPI_Waitsome));
});
ompi_fortran!(testsome; (incount: *const c_int, reqs: *mut MPI_Fint, outcount: *mut c_int, indices: *mut c_int, sts: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, some(*incount, reqs, outcount, indices, sts, w::oxompi_MPI_Testsome));
});

/// Reads a communicator attribute through C as its Fortran integer value: a predefined key's C
/// value points at its int (Open MPI's Fortran keys are its C ones), a user key's is the word.
unsafe fn comm_attr(comm: c_int, keyval: c_int, flag: *mut c_int, get: unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_int) -> c_int) -> (c_int, MPI_Aint) {
    let predefined = KEYVALS.iter().any(|&(k, _)| k == keyval && k >= 0);
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `flag` is the caller's INTEGER; on success with the flag set a predefined
    // attribute points at its int.
    unsafe {
        let rc = get(handles::to_c(F_COMM, comm), keyval, &mut p as *mut *mut c_void as *mut c_void, flag);
        if rc != 0 || *flag == 0 {
            return (rc, 0);
        }
        (rc, if predefined && !p.is_null() { *(p as *const c_int) as MPI_Aint } else { p as MPI_Aint })
    }
}
ompi_fortran!(comm_get_attr; (comm: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (rc, v) = comm_attr(*comm, *keyval, flag, w::oxompi_MPI_Comm_get_attr);
    if rc == 0 && *flag != 0 {
        *val = v;
    }
    set_ierr(ierr, rc);
});
ompi_fortran!(attr_get; (comm: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Fint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let (rc, v) = comm_attr(*comm, *keyval, flag, w::oxompi_MPI_Attr_get);
    if rc == 0 && *flag != 0 {
        *val = v as MPI_Fint;
    }
    set_ierr(ierr, rc);
});

// CHARACTER arguments.
ompi_fortran!(get_processor_name; (name: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(256, name, len, resultlen, |b| w::oxompi_MPI_Get_processor_name(b, &mut n)));
});
ompi_fortran!(error_string; (code: *const c_int, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(256, s, len, resultlen, |b| w::oxompi_MPI_Error_string(*code, b, &mut n)));
});
ompi_fortran!(get_library_version; (s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(256, s, len, resultlen, |b| super::super::version::oxompi_MPI_Get_library_version(b, &mut n)));
});
ompi_fortran!(comm_get_name; (comm: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| w::oxompi_MPI_Comm_get_name(handles::to_c(F_COMM, *comm), b, &mut n)));
});
ompi_fortran!(type_get_name; (t: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| w::oxompi_MPI_Type_get_name(handles::to_c(F_DATATYPE, *t), b, &mut n)));
});
ompi_fortran!(comm_set_name; (comm: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Comm_set_name(handles::to_c(F_COMM, *comm), input(s, len, false).as_ptr()));
});
ompi_fortran!(type_set_name; (t: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Type_set_name(handles::to_c(F_DATATYPE, *t), input(s, len, false).as_ptr()));
});

// The engine writes the new communicator when the operation completes, after the call returns:
// straight into the caller's INTEGER, as the MPICH-ABI handle, which is the Fortran value of a
// communicator the library made (`handles`).
ompi_fortran!(comm_idup; (comm: *const MPI_Fint, newcomm: *mut MPI_Fint, request: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let mut rq = 0;
    let rc = crate::ffi::PMPI_Comm_idup(handles::mpich(F_COMM, *comm), newcomm, &mut rq);
    if rc == 0 {
        *request = handles::fortran(rq);
    }
    set_ierr(ierr, code_out(rc));
});
ompi_fortran!(comm_idup_with_info; (comm: *const MPI_Fint, info: *const MPI_Fint, newcomm: *mut MPI_Fint, request: *mut MPI_Fint, ierr: *mut MPI_Fint) => {
    let mut rq = 0;
    let rc = crate::ffi::PMPI_Comm_idup_with_info(handles::mpich(F_COMM, *comm), handles::mpich(F_INFO, *info), newcomm, &mut rq);
    if rc == 0 {
        *request = handles::fortran(rq);
    }
    set_ierr(ierr, code_out(rc));
});

// Window attributes (MPI 4.1 section 12.2.6): in C, MPI_WIN_BASE is the base address itself,
// MPI_WIN_SIZE points to an MPI_Aint and the other predefined ones to an int; Fortran gets the
// values. KEYVALS[7..12] are Open MPI's MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL.
ompi_fortran!(win_get_attr; (win: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let mut p: *mut c_void = std::ptr::null_mut();
    let rc = w::oxompi_MPI_Win_get_attr(handles::to_c(F_WIN, *win), *keyval, &mut p as *mut *mut c_void as *mut c_void, flag);
    if rc == 0 && *flag != 0 {
        let k = *keyval;
        *val = if k == KEYVALS[7].0 {
            p as MPI_Aint
        } else if k == KEYVALS[8].0 {
            *(p as *const MPI_Aint)
        } else if KEYVALS[9..12].iter().any(|&(o, _)| o == k) {
            *(p as *const c_int) as MPI_Aint
        } else {
            p as MPI_Aint
        };
    }
    set_ierr(ierr, rc);
});
ompi_fortran!(win_get_name; (win: *const MPI_Fint, s: *mut c_char, resultlen: *mut c_int, ierr: *mut MPI_Fint, len: FLen) => {
    let mut n = 0;
    set_ierr(ierr, string_out(128, s, len, resultlen, |b| w::oxompi_MPI_Win_get_name(handles::to_c(F_WIN, *win), b, &mut n)));
});
ompi_fortran!(win_set_name; (win: *const MPI_Fint, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Win_set_name(handles::to_c(F_WIN, *win), input(s, len, false).as_ptr()));
});
// The data representation of MPI_Pack_external & co. ('external32').
ompi_fortran!(pack_external; (datarep: *const c_char, inbuf: *mut c_void, incount: *const c_int, datatype: *const MPI_Fint, outbuf: *mut c_void, outsize: *const MPI_Aint, position: *mut MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    let rep = input(datarep, len, false);
    set_ierr(ierr, w::oxompi_MPI_Pack_external(rep.as_ptr(), sentinels::buf(inbuf), *incount, handles::to_c(F_DATATYPE, *datatype), sentinels::buf(outbuf), *outsize, position));
});
ompi_fortran!(unpack_external; (datarep: *const c_char, inbuf: *mut c_void, insize: *const MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: *const c_int, datatype: *const MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    let rep = input(datarep, len, false);
    set_ierr(ierr, w::oxompi_MPI_Unpack_external(rep.as_ptr(), sentinels::buf(inbuf), *insize, position, sentinels::buf(outbuf), *outcount, handles::to_c(F_DATATYPE, *datatype)));
});
ompi_fortran!(pack_external_size; (datarep: *const c_char, incount: *const c_int, datatype: *const MPI_Fint, size: *mut MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Pack_external_size(input(datarep, len, false).as_ptr(), *incount, handles::to_c(F_DATATYPE, *datatype), size));
});
ompi_fortran!(file_open; (comm: *const MPI_Fint, filename: *const c_char, amode: *const c_int, info: *const MPI_Fint, fh: *mut MPI_Fint, ierr: *mut MPI_Fint, flen: FLen) => {
    let mut c = std::ptr::null_mut();
    let rc = w::oxompi_MPI_File_open(handles::to_c(F_COMM, *comm), input(filename, flen, true).as_ptr(), *amode, handles::to_c(F_INFO, *info), &mut c);
    if rc == 0 {
        *fh = super::super::hand::oxompi_MPI_File_c2f(c);
    }
    set_ierr(ierr, rc);
});
ompi_fortran!(file_delete; (filename: *const c_char, info: *const MPI_Fint, ierr: *mut MPI_Fint, flen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_File_delete(input(filename, flen, true).as_ptr(), handles::to_c(F_INFO, *info)));
});
// The conversion subroutines see Open MPI's INTEGER datatype handles and report Open MPI's codes.
const OMPI_FORTRAN: crate::ffi::io::datarep::FortranAbi = crate::ffi::io::datarep::FortranAbi { dtype: handles::fortran, code_in: super::super::conv::code_in };
ompi_fortran!(register_datarep; (datarep: *const c_char, read: *const c_void, write: *const c_void, extent: *const c_void, extra: *const MPI_Aint, ierr: *mut MPI_Fint, len: FLen) => {
    let name = input(datarep, len, false).to_string_lossy().into_owned();
    set_ierr(ierr, code_out(crate::ffi::io::datarep::register_fortran(&name, read, write, extent, *extra, false, OMPI_FORTRAN)));
});
// MPI_CONVERSION_FN_NULL (Open MPI's libmpi.so.40 defines it; its libmpi_mpifh.so.40 refers to it).
ompi_fortran!(conversion_fn_null; (_userbuf: *mut c_void, _datatype: *const MPI_Fint, _count: *const c_int, _filebuf: *mut c_void, _position: *const crate::abi::MPI_Offset, _extra: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, crate::ffi::io::datarep::CONVERSION_FN_NULL_CODE);
});
ompi_fortran!(file_set_view; (fh: *const MPI_Fint, disp: *const crate::abi::MPI_Offset, etype: *const MPI_Fint, filetype: *const MPI_Fint, datarep: *const c_char, info: *const MPI_Fint, ierr: *mut MPI_Fint, dlen: FLen) => {
    let rep = input(datarep, dlen, true);
    set_ierr(ierr, w::oxompi_MPI_File_set_view(super::super::hand::oxompi_MPI_File_f2c(*fh), *disp, handles::to_c(F_DATATYPE, *etype), handles::to_c(F_DATATYPE, *filetype), rep.as_ptr(), handles::to_c(F_INFO, *info)));
});
ompi_fortran!(file_get_view; (fh: *const MPI_Fint, disp: *mut crate::abi::MPI_Offset, etype: *mut MPI_Fint, filetype: *mut MPI_Fint, datarep: *mut c_char, ierr: *mut MPI_Fint, dlen: FLen) => {
    let mut buf = vec![0u8; crate::abi::MPI_MAX_DATAREP_STRING + 1];
    let (mut e, mut t) = (handles::to_c(F_DATATYPE, 0), handles::to_c(F_DATATYPE, 0));
    let rc = w::oxompi_MPI_File_get_view(super::super::hand::oxompi_MPI_File_f2c(*fh), disp, &mut e, &mut t, buf.as_mut_ptr() as *mut c_char);
    if rc == 0 {
        *etype = handles::from_c(e);
        *filetype = handles::from_c(t);
        crate::fortran::strings::output(&buf, datarep, dlen);
    }
    set_ierr(ierr, rc);
});

// Info keys and values lose leading and trailing blanks (MPI 4.1 section 10.1).
ompi_fortran!(info_set; (info: *const MPI_Fint, key: *const c_char, value: *const c_char, ierr: *mut MPI_Fint, klen: FLen, vlen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Info_set(handles::to_c(F_INFO, *info), input(key, klen, true).as_ptr(), input(value, vlen, true).as_ptr()));
});
ompi_fortran!(info_delete; (info: *const MPI_Fint, key: *const c_char, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Info_delete(handles::to_c(F_INFO, *info), input(key, klen, true).as_ptr()));
});
ompi_fortran!(info_get; (info: *const MPI_Fint, key: *const c_char, valuelen: *const c_int, value: *mut c_char, flag: *mut c_int, ierr: *mut MPI_Fint, klen: FLen, vlen: FLen) => {
    let cap = (*valuelen).max(0) as usize;
    let k = input(key, klen, true);
    let mut buf = vec![0u8; cap + 1];
    let rc = w::oxompi_MPI_Info_get(handles::to_c(F_INFO, *info), k.as_ptr(), cap as c_int, buf.as_mut_ptr() as *mut c_char, flag);
    if rc == 0 && *flag != 0 {
        output(&buf, value, vlen);
    }
    set_ierr(ierr, rc);
});
ompi_fortran!(info_get_valuelen; (info: *const MPI_Fint, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Info_get_valuelen(handles::to_c(F_INFO, *info), input(key, klen, true).as_ptr(), valuelen, flag));
});
ompi_fortran!(info_get_nthkey; (info: *const MPI_Fint, n: *const c_int, key: *mut c_char, ierr: *mut MPI_Fint, klen: FLen) => {
    set_ierr(ierr, string_out(256, key, klen, std::ptr::null_mut(), |b| w::oxompi_MPI_Info_get_nthkey(handles::to_c(F_INFO, *info), *n, b)));
});
ompi_fortran!(add_error_string; (code: *const c_int, s: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Add_error_string(*code, input(s, len, false).as_ptr()));
});
// Fortran's BUFFER_ADDR cannot hold a C pointer; the address is dropped, as in Open MPI's.
ompi_fortran!(buffer_detach; (_buffer_addr: *mut c_void, size: *mut c_int, ierr: *mut MPI_Fint) => {
    let mut p: *mut c_void = std::ptr::null_mut();
    set_ierr(ierr, w::oxompi_MPI_Buffer_detach(&mut p as *mut *mut c_void as *mut c_void, size));
});

// Attributes: a Fortran value is an integer stored as the C `void *` value itself; Open MPI's
// Fortran keyvals are its C ones (the C layer maps the predefined ones).
ompi_fortran!(comm_set_attr; (comm: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Comm_set_attr(handles::to_c(F_COMM, *comm), *keyval, *val as *mut c_void));
});
ompi_fortran!(attr_put; (comm: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Fint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Attr_put(handles::to_c(F_COMM, *comm), *keyval, *val as MPI_Aint as *mut c_void));
});
ompi_fortran!(type_set_attr; (t: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Type_set_attr(handles::to_c(F_DATATYPE, *t), *keyval, *val as *mut c_void));
});
ompi_fortran!(win_set_attr; (win: *const MPI_Fint, keyval: *const c_int, val: *const MPI_Aint, ierr: *mut MPI_Fint) => {
    set_ierr(ierr, w::oxompi_MPI_Win_set_attr(handles::to_c(F_WIN, *win), *keyval, *val as *mut c_void));
});
// Datatypes have no predefined attributes: the value is the word itself.
ompi_fortran!(type_get_attr; (t: *const MPI_Fint, keyval: *const c_int, val: *mut MPI_Aint, flag: *mut c_int, ierr: *mut MPI_Fint) => {
    let mut p: *mut c_void = std::ptr::null_mut();
    let rc = w::oxompi_MPI_Type_get_attr(handles::to_c(F_DATATYPE, *t), *keyval, &mut p as *mut *mut c_void as *mut c_void, flag);
    if rc == 0 && *flag != 0 {
        *val = p as MPI_Aint;
    }
    set_ierr(ierr, rc);
});

// Ports and names (MPI 4.1 section 11.4): MPI_MAX_PORT_NAME is 1024 in Open MPI's mpif.h.
const PORT_ROOM: usize = 1025;
ompi_fortran!(open_port; (info: *const MPI_Fint, port: *mut c_char, ierr: *mut MPI_Fint, len: FLen) => {
    let mut buf = [0u8; PORT_ROOM];
    let rc = w::oxompi_MPI_Open_port(handles::to_c(F_INFO, *info), buf.as_mut_ptr() as *mut c_char);
    if rc == 0 {
        output(&buf, port, len);
    }
    set_ierr(ierr, rc);
});
ompi_fortran!(close_port; (port: *const c_char, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Close_port(input(port, len, false).as_ptr()));
});
/// MPI_Comm_accept / MPI_Comm_connect from Fortran.
unsafe fn accept_connect(port: *const c_char, info: MPI_Fint, root: c_int, comm: MPI_Fint, newcomm: *mut MPI_Fint, len: FLen,
                         call: unsafe extern "C" fn(*const c_char, Handle, c_int, Handle, *mut Handle) -> c_int) -> c_int {
    let mut c: Handle = std::ptr::null_mut();
    // SAFETY: the caller's CHARACTER argument and INTEGER; `c` a local handle.
    unsafe {
        let rc = call(input(port, len, false).as_ptr(), handles::to_c(F_INFO, info), root, handles::to_c(F_COMM, comm), &mut c);
        if rc == 0 {
            *newcomm = handles::from_c(c);
        }
        rc
    }
}
ompi_fortran!(comm_accept; (port: *const c_char, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, accept_connect(port, *info, *root, *comm, newcomm, len, w::oxompi_MPI_Comm_accept));
});
ompi_fortran!(comm_connect; (port: *const c_char, info: *const MPI_Fint, root: *const c_int, comm: *const MPI_Fint, newcomm: *mut MPI_Fint, ierr: *mut MPI_Fint, len: FLen) => {
    set_ierr(ierr, accept_connect(port, *info, *root, *comm, newcomm, len, w::oxompi_MPI_Comm_connect));
});
ompi_fortran!(publish_name; (service: *const c_char, info: *const MPI_Fint, port: *const c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Publish_name(input(service, slen, false).as_ptr(), handles::to_c(F_INFO, *info), input(port, plen, false).as_ptr()));
});
ompi_fortran!(unpublish_name; (service: *const c_char, info: *const MPI_Fint, port: *const c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    set_ierr(ierr, w::oxompi_MPI_Unpublish_name(input(service, slen, false).as_ptr(), handles::to_c(F_INFO, *info), input(port, plen, false).as_ptr()));
});
ompi_fortran!(lookup_name; (service: *const c_char, info: *const MPI_Fint, port: *mut c_char, ierr: *mut MPI_Fint, slen: FLen, plen: FLen) => {
    let mut buf = [0u8; PORT_ROOM];
    let rc = w::oxompi_MPI_Lookup_name(input(service, slen, false).as_ptr(), handles::to_c(F_INFO, *info), buf.as_mut_ptr() as *mut c_char);
    if rc == 0 {
        output(&buf, port, plen);
    }
    set_ierr(ierr, rc);
});
