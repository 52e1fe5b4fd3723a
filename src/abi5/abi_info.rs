//! The standard ABI's own functions: MPI_Abi_get_version/_info/_fortran_info (MPI 5.0, chapter
//! "Application Binary Interface") and the `MPI_<Obj>_toint`/`_fromint` conversions.
use super::conv::*;
use crate::ffi::boundary::run_value;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// # Safety
/// Both pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Abi_get_version(major: *mut c_int, minor: *mut c_int) -> c_int {
    if major.is_null() || minor.is_null() {
        return unsupported_arg("MPI_Abi_get_version", "abi_major or abi_minor is NULL");
    }
    // SAFETY: non-NULL, caller contract.
    unsafe {
        *major = 1;
        *minor = 0;
    }
    0
}

fn unsupported_arg(name: &'static str, what: &str) -> c_int {
    code_out(crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, crate::error::err(crate::abi::MPI_ERR_ARG, what)))
}

/// A new info object holding `pairs`, stored as an ABI handle in `info`.
unsafe fn info_with(name: &'static str, info: *mut Handle, pairs: &[(&str, String)]) -> c_int {
    if info.is_null() {
        return unsupported_arg(name, "info is NULL");
    }
    let mut h = 0;
    // SAFETY: local out-parameter; NUL-terminated strings built below.
    unsafe {
        let rc = crate::ffi::PMPI_Info_create(&mut h);
        if rc != 0 {
            return code_out(rc);
        }
        for (k, v) in pairs {
            let (k, v) = (format!("{k}\0"), format!("{v}\0"));
            let rc = crate::ffi::PMPI_Info_set(h, k.as_ptr() as *const c_char, v.as_ptr() as *const c_char);
            if rc != 0 {
                return code_out(rc);
            }
        }
        *info = h_out(h);
    }
    0
}

/// # Safety
/// `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Abi_get_info(info: *mut Handle) -> c_int {
    let sizes = [("mpi_aint_size", 8usize), ("mpi_count_size", 8), ("mpi_offset_size", 8)];
    let pairs: Vec<(&str, String)> = sizes.iter().map(|(k, v)| (*k, v.to_string())).collect();
    // SAFETY: forwarded caller contract.
    run_value(ERR_INTERN, || unsafe { info_with("MPI_Abi_get_info", info, &pairs) })
}

/// What oxmpi's Fortran support (gfortran) uses; the Fortran binding itself is the MPICH ABI's.
/// # Safety
/// `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Abi_get_fortran_info(info: *mut Handle) -> c_int {
    let mut pairs: Vec<(&str, String)> = vec![
        ("mpi_logical_size", "4".into()),
        ("mpi_integer_size", "4".into()),
        ("mpi_real_size", "4".into()),
        ("mpi_double_precision_size", "8".into()),
    ];
    for t in ["mpi_integer1_supported", "mpi_integer2_supported", "mpi_integer4_supported", "mpi_integer8_supported", "mpi_real4_supported", "mpi_real8_supported", "mpi_complex8_supported", "mpi_complex16_supported"] {
        pairs.push((t, "true".into()));
    }
    // SAFETY: forwarded caller contract.
    run_value(ERR_INTERN, || unsafe { info_with("MPI_Abi_get_fortran_info", info, &pairs) })
}

#[no_mangle]
pub extern "C" fn oxabi_MPI_Abi_set_fortran_info(_info: Handle) -> c_int {
    unsupported("MPI_Abi_set_fortran_info")
}
#[no_mangle]
pub extern "C" fn oxabi_MPI_Abi_get_fortran_booleans(_size: c_int, _t: *mut c_void, _f: *mut c_void, _is_set: *mut c_int) -> c_int {
    unsupported("MPI_Abi_get_fortran_booleans")
}
#[no_mangle]
pub extern "C" fn oxabi_MPI_Abi_set_fortran_booleans(_size: c_int, _t: *mut c_void, _f: *mut c_void) -> c_int {
    unsupported("MPI_Abi_set_fortran_booleans")
}

/// `toint` of a handle: a predefined handle's own ABI value (below 4096, as the standard
/// requires), a user handle's MPICH-ABI number (negative as an int: never below 4096 unsigned).
fn toint(h: Handle) -> c_int {
    let v = h as usize;
    if v < 4096 { v as c_int } else { h_out(h_in(h)) as usize as u32 as c_int }
}
fn fromint(i: c_int) -> Handle {
    if (0..4096).contains(&i) { i as usize as Handle } else { i as u32 as usize as Handle }
}
macro_rules! int_conversions {
    ($($to:ident $from:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $to(h: Handle) -> c_int {
            run_value(0, || toint(h))
        }
        #[no_mangle]
        pub extern "C" fn $from(i: c_int) -> Handle {
            run_value(std::ptr::null_mut(), || fromint(i))
        }
    )*};
}
int_conversions! {
    oxabi_MPI_Comm_toint oxabi_MPI_Comm_fromint;
    oxabi_MPI_Errhandler_toint oxabi_MPI_Errhandler_fromint;
    oxabi_MPI_Group_toint oxabi_MPI_Group_fromint;
    oxabi_MPI_Info_toint oxabi_MPI_Info_fromint;
    oxabi_MPI_Message_toint oxabi_MPI_Message_fromint;
    oxabi_MPI_Op_toint oxabi_MPI_Op_fromint;
    oxabi_MPI_Request_toint oxabi_MPI_Request_fromint;
    oxabi_MPI_Session_toint oxabi_MPI_Session_fromint;
    oxabi_MPI_Type_toint oxabi_MPI_Type_fromint;
    oxabi_MPI_Win_toint oxabi_MPI_Win_fromint;
}

/// Files are pointers in both ABIs: `toint` numbers them in a table (index + 4096).
static FILES: Mutex<Vec<usize>> = Mutex::new(Vec::new());
#[no_mangle]
pub extern "C" fn oxabi_MPI_File_toint(f: *mut c_void) -> c_int {
    run_value(0, || {
        let v = f as usize;
        if v < 4096 {
            return v as c_int;
        }
        let mut t = FILES.lock().unwrap_or_else(|p| p.into_inner());
        let i = t.iter().position(|&x| x == v).unwrap_or_else(|| {
            t.push(v);
            t.len() - 1
        });
        (i + 4096) as c_int
    })
}
#[no_mangle]
pub extern "C" fn oxabi_MPI_File_fromint(i: c_int) -> *mut c_void {
    run_value(std::ptr::null_mut(), || {
        if (0..4096).contains(&i) {
            return i as usize as *mut c_void;
        }
        let t = FILES.lock().unwrap_or_else(|p| p.into_inner());
        t.get((i as usize).wrapping_sub(4096)).map_or(0x118 as *mut c_void, |&v| v as *mut c_void)
    })
}
