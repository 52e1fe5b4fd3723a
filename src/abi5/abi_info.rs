//! The standard ABI's own functions: MPI_Abi_get_version/_info/_fortran_info (MPI 5.0, chapter
//! "Application Binary Interface") and the `MPI_<Obj>_toint`/`_fromint` conversions; and the
//! calls whose ABI meaning differs from MPICH's: MPI_Get_library_version (names this ABI),
//! MPI_Type_size (MPI_UNDEFINED for an optional datatype oxmpi lacks).
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

/// What MPI_Get_library_version reports under the standard ABI.
pub const LIBRARY_VERSION: &str = concat!("oxmpi ", env!("CARGO_PKG_VERSION"), " (MPI 4.1, MPI-5 standard ABI libmpi_abi.so.1, shared-memory engine in Rust)");
/// The standard ABI's MPI_MAX_LIBRARY_VERSION_STRING.
const MAX_LIBRARY_VERSION_STRING: usize = 8192;

/// # Safety
/// `version` NULL or writable for MPI_MAX_LIBRARY_VERSION_STRING bytes, `resultlen` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
    run_value(ERR_INTERN, || {
        if version.is_null() || resultlen.is_null() {
            return unsupported_arg("MPI_Get_library_version", "version or resultlen is NULL");
        }
        // SAFETY: both non-NULL; `version` holds MAX_LIBRARY_VERSION_STRING bytes (contract).
        unsafe { *resultlen = crate::ffi::env::init::write_cstr(version, MAX_LIBRARY_VERSION_STRING, LIBRARY_VERSION) as c_int };
        0
    })
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
    // The standard's optional types: supported when the engine has the type (MPICH-ABI handle).
    for (key, abi) in [("mpi_logical1_supported", 0x2c0), ("mpi_logical2_supported", 0x2c8), ("mpi_logical4_supported", 0x2d0), ("mpi_logical8_supported", 0x2d8), ("mpi_logical16_supported", 0x2e0),
                       ("mpi_integer1_supported", 0x2c1), ("mpi_integer2_supported", 0x2c9), ("mpi_integer4_supported", 0x2d1), ("mpi_integer8_supported", 0x2d9), ("mpi_integer16_supported", 0x2e1),
                       ("mpi_real2_supported", 0x2ca), ("mpi_real4_supported", 0x2d2), ("mpi_real8_supported", 0x2da), ("mpi_real16_supported", 0x2e2),
                       ("mpi_complex4_supported", 0x2d3), ("mpi_complex8_supported", 0x2db), ("mpi_complex16_supported", 0x2e3), ("mpi_complex32_supported", 0x2eb), ("mpi_double_complex_supported", 0x21d)] {
        let has = super::tables::TO_MPICH[abi] != 0;
        pairs.push((key, has.to_string()));
    }
    // SAFETY: forwarded caller contract.
    run_value(ERR_INTERN, || unsafe { info_with("MPI_Abi_get_fortran_info", info, &pairs) })
}

/// MPI 5.0: only the first setting of the Fortran properties counts, later ones fail with
/// MPI_ERR_ABI. oxmpi's are set from the start (gfortran's, what MPI_Abi_get_fortran_info
/// reports), so every call with a valid info fails that way.
#[no_mangle]
pub extern "C" fn oxabi_MPI_Abi_set_fortran_info(info: Handle) -> c_int {
    const NAME: &str = "MPI_Abi_set_fortran_info";
    run_value(ERR_INTERN, || {
        let mut n = 0;
        // SAFETY: local out-parameter; an invalid handle is reported by the callee.
        let rc = unsafe { crate::ffi::PMPI_Info_get_nkeys(h_in(info), &mut n) };
        if rc != 0 {
            return code_out(rc);
        }
        abi_error(NAME, "oxmpi's Fortran properties are already set (gfortran's: see MPI_Abi_get_fortran_info) and cannot be changed")
    })
}

/// gfortran's LOGICAL literals, in every kind: .TRUE. is 1, .FALSE. is 0.
const FORTRAN_TRUE: u8 = 1;

/// `logical_size` is a LOGICAL kind gfortran has (1, 2, 4, 8, 16 bytes), else MPI_ERR_ARG.
fn logical_size_ok(name: &'static str, size: c_int) -> Result<usize, c_int> {
    match size {
        1 | 2 | 4 | 8 | 16 => Ok(size as usize),
        _ => Err(unsupported_arg(name, &format!("logical_size {size} is not the size of a Fortran LOGICAL kind (1, 2, 4, 8 or 16 bytes)"))),
    }
}

/// # Safety
/// `logical_true`/`logical_false` NULL or writable for `logical_size` bytes, `is_set` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Abi_get_fortran_booleans(size: c_int, t: *mut c_void, f: *mut c_void, is_set: *mut c_int) -> c_int {
    const NAME: &str = "MPI_Abi_get_fortran_booleans";
    run_value(ERR_INTERN, || {
        let n = match logical_size_ok(NAME, size) {
            Ok(n) => n,
            Err(rc) => return rc,
        };
        if t.is_null() || f.is_null() || is_set.is_null() {
            return unsupported_arg(NAME, "logical_true, logical_false or is_set is NULL");
        }
        // SAFETY: non-NULL, writable for n bytes (caller contract); the value is an integer of n
        // bytes in the machine's order, as gfortran stores LOGICAL(n).
        unsafe {
            std::ptr::write_bytes(t as *mut u8, 0, n);
            std::ptr::write_bytes(f as *mut u8, 0, n);
            let low = if cfg!(target_endian = "little") { 0 } else { n - 1 };
            *(t as *mut u8).add(low) = FORTRAN_TRUE;
            *is_set = 1;
        }
        0
    })
}

/// MPI 5.0: booleans that are already known cannot be set (is_set is true from the start here),
/// so a valid call fails with MPI_ERR_ABI.
/// # Safety
/// Pointers are only checked for NULL, never read.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Abi_set_fortran_booleans(size: c_int, t: *mut c_void, f: *mut c_void) -> c_int {
    const NAME: &str = "MPI_Abi_set_fortran_booleans";
    run_value(ERR_INTERN, || {
        if let Err(rc) = logical_size_ok(NAME, size) {
            return rc;
        }
        if t.is_null() || f.is_null() {
            return unsupported_arg(NAME, "logical_true or logical_false is NULL");
        }
        abi_error(NAME, "oxmpi's Fortran LOGICAL values are already set (gfortran's .TRUE. 1 and .FALSE. 0: MPI_Abi_get_fortran_booleans reports is_set true) and cannot be changed")
    })
}

/// MPI_ERR_ABI through MPI_COMM_SELF's handler.
fn abi_error(name: &'static str, what: &str) -> c_int {
    code_out(crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, crate::error::err(crate::abi::MPI_ERR_ABI, what)))
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

/// MPI 5.0 ("The Fortran Application Binary Interface"): an optional predefined datatype the
/// implementation lacks has size MPI_UNDEFINED, how programs detect it; the others as MPICH's.
fn absent_datatype(datatype: Handle) -> bool {
    let v = datatype as usize;
    v < 0x300 && super::tables::ABSENT_DATATYPES.contains(&(v as u16))
}

/// The standard ABI's MPI_UNDEFINED.
const ABI_UNDEFINED: c_int = -32766;

/// # Safety
/// `size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Type_size(datatype: Handle, size: *mut c_int) -> c_int {
    run_value(ERR_INTERN, || {
        if absent_datatype(datatype) && !size.is_null() {
            // SAFETY: non-NULL, writable (caller contract).
            unsafe { *size = ABI_UNDEFINED };
            return 0;
        }
        // SAFETY: forwarded caller contract.
        code_out(unsafe { crate::ffi::PMPI_Type_size(h_in(datatype), size) })
    })
}

/// # Safety
/// `size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_Type_size_c(datatype: Handle, size: *mut i64) -> c_int {
    run_value(ERR_INTERN, || {
        if absent_datatype(datatype) && !size.is_null() {
            // SAFETY: non-NULL, writable (caller contract).
            unsafe { *size = ABI_UNDEFINED as i64 };
            return 0;
        }
        // SAFETY: forwarded caller contract.
        code_out(unsafe { crate::ffi::PMPI_Type_size_c(h_in(datatype), size) })
    })
}
