//! MPICH-ABI handle types, `MPI_Status` layout and constant values.
//!
//! `include/mpi.h` is the single source of truth for C; these Rust values mirror it and
//! `tests/abi_consts.rs` compiles a probe against the header to prove they are identical.
//! Only the FFI layer and the handle tables use these; the engine below speaks its own types.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]

pub mod datatypes;
pub mod errors;
pub mod mpit;
pub mod ops;

use std::os::raw::{c_int, c_void};

pub type MPI_Comm = c_int;
pub type MPI_Group = c_int;
pub type MPI_Datatype = c_int;
pub type MPI_Op = c_int;
pub type MPI_Errhandler = c_int;
pub type MPI_Request = c_int;
pub type MPI_Message = c_int;
pub type MPI_Win = c_int;
pub type MPI_Info = c_int;
pub type MPI_Session = c_int;
pub type MPI_Aint = i64;
pub type MPI_Offset = i64;
pub type MPI_Count = i64;
pub type MPI_Fint = c_int;
pub type MPIX_Grequest_class = c_int;
/// `MPI_File` is a pointer in the MPICH ABI (`struct ADIOI_FileD *`); `MPI_FILE_NULL` is null.
pub type MPI_File = *mut c_void;
/// MPI_T handles are pointers to incomplete structs; their `*_NULL` values are null.
pub type MPI_T_enum = *mut c_void;
pub type MPI_T_cvar_handle = *mut c_void;
pub type MPI_T_pvar_handle = *mut c_void;
pub type MPI_T_pvar_session = *mut c_void;
pub type MPI_T_event_registration = *mut c_void;
pub type MPI_T_event_instance = *mut c_void;
/// C enums passed by value are `int`.
pub type MPI_T_cb_safety = c_int;
pub type MPI_T_source_order = c_int;
/// The Fortran 2008 status has the same five `MPI_Fint` fields in the same order.
pub type MPI_F08_status = MPI_Status;

// ---- callback types: `include/mpi.h` declares function *types*; parameters are pointers to them,
// which `build.rs` maps to `Option<T>` (a null C pointer is `None`). ----
pub type MPI_User_function = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
pub type MPI_User_function_c = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);
pub type MPI_Copy_function =
    unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
pub type MPI_Delete_function = unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int;
pub type MPI_Comm_copy_attr_function = MPI_Copy_function;
pub type MPI_Comm_delete_attr_function = MPI_Delete_function;
pub type MPI_Type_copy_attr_function =
    unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
pub type MPI_Type_delete_attr_function = unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int;
pub type MPI_Win_copy_attr_function =
    unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
pub type MPI_Win_delete_attr_function = unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int;
pub type MPI_Handler_function = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);
pub type MPI_Comm_errhandler_function = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);
pub type MPI_File_errhandler_function = unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...);
pub type MPI_Win_errhandler_function = unsafe extern "C" fn(*mut MPI_Win, *mut c_int, ...);
pub type MPI_Session_errhandler_function = unsafe extern "C" fn(*mut MPI_Session, *mut c_int, ...);
pub type MPI_Grequest_query_function = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
pub type MPI_Grequest_free_function = unsafe extern "C" fn(*mut c_void) -> c_int;
pub type MPI_Grequest_cancel_function = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
pub type MPIX_Grequest_poll_function = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
pub type MPIX_Grequest_wait_function = unsafe extern "C" fn(c_int, *mut *mut c_void, f64, *mut MPI_Status) -> c_int;
pub type MPI_Datarep_conversion_function =
    unsafe extern "C" fn(*mut c_void, MPI_Datatype, c_int, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
pub type MPI_Datarep_conversion_function_c =
    unsafe extern "C" fn(*mut c_void, MPI_Datatype, MPI_Count, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
pub type MPI_Datarep_extent_function = unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;
pub type MPI_T_event_cb_function =
    unsafe extern "C" fn(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, *mut c_void);
pub type MPI_T_event_free_cb_function = unsafe extern "C" fn(MPI_T_event_registration, MPI_T_cb_safety, *mut c_void);
pub type MPI_T_event_dropped_cb_function =
    unsafe extern "C" fn(MPI_Count, MPI_T_event_registration, c_int, MPI_T_cb_safety, *mut c_void);

/// MPICH's 20-byte status: the element count in bytes is split over `count_lo` (low 32 bits) and
/// `count_hi_and_cancelled >> 1`; bit 0 of `count_hi_and_cancelled` is the cancelled flag.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}
const _: () = assert!(std::mem::size_of::<MPI_Status>() == 20);
const _: () = assert!(std::mem::offset_of!(MPI_Status, MPI_SOURCE) == 8);
const _: () = assert!(std::mem::offset_of!(MPI_Status, MPI_ERROR) == 16);

impl MPI_Status {
    pub fn set_count_bytes(&mut self, bytes: u64, cancelled: bool) {
        self.count_lo = bytes as u32 as c_int;
        self.count_hi_and_cancelled = (((bytes >> 32) as c_int) << 1) | cancelled as c_int;
    }
    pub fn count_bytes(&self) -> u64 {
        (self.count_lo as u32 as u64) | (((self.count_hi_and_cancelled as u32 >> 1) as u64) << 32)
    }
    pub fn cancelled(&self) -> bool {
        self.count_hi_and_cancelled & 1 != 0
    }
}

// ---- handle encoding (MPICH src/include/mpir_objects.h): kind(2) | object(4) | index(26) ----
pub const HANDLE_KIND_INVALID: u32 = 0;
pub const HANDLE_KIND_BUILTIN: u32 = 1;
pub const HANDLE_KIND_DIRECT: u32 = 2;
pub const HANDLE_KIND_INDIRECT: u32 = 3;
pub const OBJ_COMM: u32 = 0x1;
pub const OBJ_GROUP: u32 = 0x2;
pub const OBJ_DATATYPE: u32 = 0x3;
pub const OBJ_ERRHANDLER: u32 = 0x5;
pub const OBJ_OP: u32 = 0x6;
pub const OBJ_INFO: u32 = 0x7;
pub const OBJ_WIN: u32 = 0x8;
pub const OBJ_KEYVAL: u32 = 0x9;
pub const OBJ_REQUEST: u32 = 0xb;
pub const OBJ_SESSION: u32 = 0xe;

pub const fn handle_kind(h: c_int) -> u32 {
    (h as u32) >> 30
}
pub const fn handle_object(h: c_int) -> u32 {
    ((h as u32) >> 26) & 0xf
}
pub const fn make_handle(kind: u32, object: u32, index: u32) -> c_int {
    ((kind << 30) | (object << 26) | (index & 0x03ff_ffff)) as c_int
}
pub const fn handle_index(h: c_int) -> u32 {
    (h as u32) & 0x03ff_ffff
}

// ---- predefined handles ----
pub const MPI_COMM_NULL: MPI_Comm = 0x04000000;
pub const MPI_COMM_WORLD: MPI_Comm = 0x44000000;
pub const MPI_COMM_SELF: MPI_Comm = 0x44000001;
pub const MPI_GROUP_NULL: MPI_Group = 0x08000000;
pub const MPI_GROUP_EMPTY: MPI_Group = 0x48000000;
pub const MPI_DATATYPE_NULL: MPI_Datatype = 0x0c000000;
pub const MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x14000000;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x54000000;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x54000001;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x54000003;
pub const MPI_OP_NULL: MPI_Op = 0x18000000;
pub const MPI_INFO_NULL: MPI_Info = 0x1c000000;
pub const MPI_INFO_ENV: MPI_Info = 0x5c000001;
pub const MPI_WIN_NULL: MPI_Win = 0x20000000;
pub const MPI_KEYVAL_INVALID: c_int = 0x24000000;
pub const MPI_REQUEST_NULL: MPI_Request = 0x2c000000;
pub const MPI_MESSAGE_NULL: MPI_Message = 0x2c000000;
pub const MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c000000;
pub const MPI_SESSION_NULL: MPI_Session = 0x38000000;

// ---- integer constants ----
pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ANY_SOURCE: c_int = -2;
pub const MPI_ROOT: c_int = -3;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_UNDEFINED: c_int = -32766;
/// MPI_Comm_split_type types.
pub const MPI_COMM_TYPE_SHARED: c_int = 1;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 4;
pub const MPI_DISTRIBUTE_BLOCK: c_int = 121;
pub const MPI_DISTRIBUTE_CYCLIC: c_int = 122;
pub const MPI_DISTRIBUTE_NONE: c_int = 123;
pub const MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;
pub const MPI_TYPECLASS_REAL: c_int = 1;
pub const MPI_TYPECLASS_INTEGER: c_int = 2;
pub const MPI_TYPECLASS_COMPLEX: c_int = 3;
pub const MPI_TAG_UB_VALUE: c_int = 0x7fff_ffff;
pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;
pub const MPI_THREAD_SERIALIZED: c_int = 2;
pub const MPI_THREAD_MULTIPLE: c_int = 3;

/// The engine's thread level of MPICH value `v`, if it is one.
pub fn thread_level(v: c_int) -> Option<crate::runtime::thread_level::ThreadLevel> {
    use crate::runtime::thread_level::ThreadLevel::*;
    Some(match v {
        MPI_THREAD_SINGLE => Single,
        MPI_THREAD_FUNNELED => Funneled,
        MPI_THREAD_SERIALIZED => Serialized,
        MPI_THREAD_MULTIPLE => Multiple,
        _ => return None,
    })
}

/// MPICH's value of thread level `l`.
pub fn thread_level_value(l: crate::runtime::thread_level::ThreadLevel) -> c_int {
    use crate::runtime::thread_level::ThreadLevel::*;
    match l {
        Single => MPI_THREAD_SINGLE,
        Funneled => MPI_THREAD_FUNNELED,
        Serialized => MPI_THREAD_SERIALIZED,
        Multiple => MPI_THREAD_MULTIPLE,
    }
}
pub const MPI_MAX_PROCESSOR_NAME: usize = 128;
pub const MPI_MAX_LIBRARY_VERSION_STRING: usize = 8192;
pub const MPI_MAX_ERROR_STRING: usize = 512;
pub const MPI_MAX_OBJECT_NAME: usize = 128;
pub const MPI_MAX_STRINGTAG_LEN: usize = 256;
pub const MPI_MAX_PSET_NAME_LEN: usize = 256;
pub const MPI_MAX_INFO_KEY: usize = 255;
pub const MPI_MAX_INFO_VAL: usize = 1024;
pub const MPI_BSEND_OVERHEAD: c_int = 96;
pub const MPI_WIN_FLAVOR_CREATE: c_int = 1;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 4;
pub const MPI_WIN_SEPARATE: c_int = 1;
pub const MPI_WIN_UNIFIED: c_int = 2;
pub const MPI_MODE_NOCHECK: c_int = 1024;
pub const MPI_MODE_NOSTORE: c_int = 2048;
pub const MPI_MODE_NOPUT: c_int = 4096;
pub const MPI_MODE_NOPRECEDE: c_int = 8192;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;
/// File access modes and seek positions (MPI 4.1 sections 14.2.1 and 14.4.3).
pub const MPI_MODE_CREATE: c_int = 1;
pub const MPI_MODE_RDONLY: c_int = 2;
pub const MPI_MODE_WRONLY: c_int = 4;
pub const MPI_MODE_RDWR: c_int = 8;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 16;
pub const MPI_MODE_UNIQUE_OPEN: c_int = 32;
pub const MPI_MODE_EXCL: c_int = 64;
pub const MPI_MODE_APPEND: c_int = 128;
pub const MPI_MODE_SEQUENTIAL: c_int = 256;
pub const MPI_SEEK_SET: c_int = 600;
pub const MPI_SEEK_CUR: c_int = 602;
pub const MPI_SEEK_END: c_int = 604;
pub const MPI_DISPLACEMENT_CURRENT: MPI_Offset = -54278278;
pub const MPI_MAX_DATAREP_STRING: usize = 128;
pub const MPI_LOCK_EXCLUSIVE: c_int = 234;
pub const MPI_LOCK_SHARED: c_int = 235;
/// The predefined attribute keys.
pub const MPI_TAG_UB: c_int = 0x64400001;
pub const MPI_HOST: c_int = 0x64400003;
pub const MPI_IO: c_int = 0x64400005;
pub const MPI_WTIME_IS_GLOBAL: c_int = 0x64400007;
pub const MPI_UNIVERSE_SIZE: c_int = 0x64400009;
pub const MPI_LASTUSEDCODE: c_int = 0x6440000b;
pub const MPI_APPNUM: c_int = 0x6440000d;
pub const MPI_WIN_BASE: c_int = 0x66000001;
pub const MPI_WIN_SIZE: c_int = 0x66000003;
pub const MPI_WIN_DISP_UNIT: c_int = 0x66000005;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 0x66000007;
pub const MPI_WIN_MODEL: c_int = 0x66000009;

pub const MPI_VERSION: c_int = 4;
pub const MPI_SUBVERSION: c_int = 1;
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_SIMILAR: c_int = 2;
pub const MPI_UNEQUAL: c_int = 3;

/// `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE` are `(MPI_Status*)1`, not NULL.
pub const STATUS_IGNORE_ADDR: usize = 1;
/// `MPI_IN_PLACE` is `(void*)-1`; `MPI_BOTTOM` is NULL.
pub const IN_PLACE_ADDR: usize = usize::MAX;

// ---- error classes ----
pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_ROOT: c_int = 7;
pub const MPI_ERR_GROUP: c_int = 8;
pub const MPI_ERR_OP: c_int = 9;
pub const MPI_ERR_TOPOLOGY: c_int = 10;
pub const MPI_ERR_DIMS: c_int = 11;
pub const MPI_ERR_FILE: c_int = 27;
pub const MPI_ERR_ARG: c_int = 12;
pub const MPI_ERR_UNKNOWN: c_int = 13;
pub const MPI_ERR_TRUNCATE: c_int = 14;
pub const MPI_ERR_OTHER: c_int = 15;
pub const MPI_ERR_INTERN: c_int = 16;
pub const MPI_ERR_IN_STATUS: c_int = 17;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_REQUEST: c_int = 19;
pub const MPI_ERR_INFO: c_int = 28;
pub const MPI_ERR_BAD_FILE: c_int = 22;
pub const MPI_ERR_IO: c_int = 32;
pub const MPI_ERR_INFO_KEY: c_int = 29;
pub const MPI_ERR_INFO_VALUE: c_int = 30;
pub const MPI_ERR_INFO_NOKEY: c_int = 31;
pub const MPI_ERR_NO_MEM: c_int = 34;
pub const MPI_ERR_SPAWN: c_int = 42;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
pub const MPI_ERR_WIN: c_int = 45;
pub const MPI_ERR_KEYVAL: c_int = 48;
pub const MPI_ERR_BASE: c_int = 46;
pub const MPI_ERR_LOCKTYPE: c_int = 47;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SIZE: c_int = 51;
pub const MPI_ERR_DISP: c_int = 52;
pub const MPI_ERR_ASSERT: c_int = 53;
pub const MPI_ERR_RMA_RANGE: c_int = 55;
pub const MPI_ERR_RMA_ATTACH: c_int = 56;
pub const MPI_ERR_RMA_FLAVOR: c_int = 58;
pub const MPI_ERR_SESSION: c_int = 75;
pub const MPI_ERR_PROC_ABORTED: c_int = 76;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
/// ULFM classes, MPICH's values (`MPICH_ERR_FIRST_MPIX` + 1..3).
pub const MPIX_ERR_PROC_FAILED: c_int = 101;
pub const MPIX_ERR_PROC_FAILED_PENDING: c_int = 102;
pub const MPIX_ERR_REVOKED: c_int = 103;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;
pub const MPI_ERR_ERRHANDLER: c_int = 80;
/// MPI 5.0: the standard ABI's Fortran properties are already set (MPICH >= 4.3's value).
pub const MPI_ERR_ABI: c_int = 81;
pub const MPI_T_ERR_INVALID: c_int = 74;
/// MPICH 4.0: highest predefined class (`MPICH_ERR_LAST_CLASS`).
pub const MPICH_ERR_LAST_CLASS: c_int = 78;
pub const MPI_ERR_LASTCODE: c_int = 0x3fff_ffff;

/// Every predefined error class with its name and a one-line meaning (for `MPI_Error_string`).
pub const ERROR_CLASSES: &[(c_int, &str, &str)] = &[
    (0, "MPI_SUCCESS", "no error"),
    (1, "MPI_ERR_BUFFER", "invalid buffer pointer"),
    (2, "MPI_ERR_COUNT", "invalid count argument"),
    (3, "MPI_ERR_TYPE", "invalid datatype"),
    (4, "MPI_ERR_TAG", "invalid tag"),
    (5, "MPI_ERR_COMM", "invalid communicator"),
    (6, "MPI_ERR_RANK", "invalid rank"),
    (7, "MPI_ERR_ROOT", "invalid root"),
    (8, "MPI_ERR_GROUP", "invalid group"),
    (9, "MPI_ERR_OP", "invalid reduction operation"),
    (10, "MPI_ERR_TOPOLOGY", "invalid topology"),
    (11, "MPI_ERR_DIMS", "invalid dimension argument"),
    (12, "MPI_ERR_ARG", "invalid argument"),
    (13, "MPI_ERR_UNKNOWN", "unknown error"),
    (14, "MPI_ERR_TRUNCATE", "message truncated"),
    (15, "MPI_ERR_OTHER", "other error"),
    (16, "MPI_ERR_INTERN", "internal error"),
    (17, "MPI_ERR_IN_STATUS", "error code is in status"),
    (18, "MPI_ERR_PENDING", "pending request"),
    (19, "MPI_ERR_REQUEST", "invalid request"),
    (20, "MPI_ERR_ACCESS", "permission denied"),
    (21, "MPI_ERR_AMODE", "invalid access mode"),
    (22, "MPI_ERR_BAD_FILE", "invalid file name"),
    (23, "MPI_ERR_CONVERSION", "data conversion error"),
    (24, "MPI_ERR_DUP_DATAREP", "data representation already defined"),
    (25, "MPI_ERR_FILE_EXISTS", "file exists"),
    (26, "MPI_ERR_FILE_IN_USE", "file in use"),
    (27, "MPI_ERR_FILE", "invalid file handle"),
    (28, "MPI_ERR_INFO", "invalid info object"),
    (29, "MPI_ERR_INFO_KEY", "invalid info key"),
    (30, "MPI_ERR_INFO_VALUE", "invalid info value"),
    (31, "MPI_ERR_INFO_NOKEY", "info key not defined"),
    (32, "MPI_ERR_IO", "I/O error"),
    (33, "MPI_ERR_NAME", "invalid service name"),
    (34, "MPI_ERR_NO_MEM", "out of memory"),
    (35, "MPI_ERR_NOT_SAME", "collective argument not identical on all processes"),
    (36, "MPI_ERR_NO_SPACE", "not enough space"),
    (37, "MPI_ERR_NO_SUCH_FILE", "no such file"),
    (38, "MPI_ERR_PORT", "invalid port"),
    (39, "MPI_ERR_QUOTA", "quota exceeded"),
    (40, "MPI_ERR_READ_ONLY", "read-only file or file system"),
    (41, "MPI_ERR_SERVICE", "invalid service"),
    (42, "MPI_ERR_SPAWN", "error spawning processes"),
    (43, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"),
    (44, "MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported"),
    (45, "MPI_ERR_WIN", "invalid window"),
    (46, "MPI_ERR_BASE", "invalid base address"),
    (47, "MPI_ERR_LOCKTYPE", "invalid lock type"),
    (48, "MPI_ERR_KEYVAL", "invalid keyval"),
    (49, "MPI_ERR_RMA_CONFLICT", "conflicting RMA accesses"),
    (50, "MPI_ERR_RMA_SYNC", "wrong RMA synchronization"),
    (51, "MPI_ERR_SIZE", "invalid size"),
    (52, "MPI_ERR_DISP", "invalid displacement"),
    (53, "MPI_ERR_ASSERT", "invalid assert"),
    (55, "MPI_ERR_RMA_RANGE", "RMA target out of window range"),
    (56, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
    (57, "MPI_ERR_RMA_SHARED", "memory cannot be shared"),
    (58, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"),
    (59, "MPI_T_ERR_MEMORY", "MPI_T: out of memory"),
    (60, "MPI_T_ERR_NOT_INITIALIZED", "MPI_T: not initialized"),
    (61, "MPI_T_ERR_CANNOT_INIT", "MPI_T: cannot initialize"),
    (62, "MPI_T_ERR_INVALID_INDEX", "MPI_T: invalid index"),
    (63, "MPI_T_ERR_INVALID_ITEM", "MPI_T: invalid item"),
    (64, "MPI_T_ERR_INVALID_HANDLE", "MPI_T: invalid handle"),
    (65, "MPI_T_ERR_OUT_OF_HANDLES", "MPI_T: out of handles"),
    (66, "MPI_T_ERR_OUT_OF_SESSIONS", "MPI_T: out of sessions"),
    (67, "MPI_T_ERR_INVALID_SESSION", "MPI_T: invalid session"),
    (68, "MPI_T_ERR_CVAR_SET_NOT_NOW", "MPI_T: control variable cannot be set now"),
    (69, "MPI_T_ERR_CVAR_SET_NEVER", "MPI_T: control variable can never be set"),
    (70, "MPI_T_ERR_PVAR_NO_STARTSTOP", "MPI_T: variable cannot be started or stopped"),
    (71, "MPI_T_ERR_PVAR_NO_WRITE", "MPI_T: variable cannot be written"),
    (72, "MPI_T_ERR_PVAR_NO_ATOMIC", "MPI_T: variable cannot be read and reset atomically"),
    (73, "MPI_T_ERR_INVALID_NAME", "MPI_T: invalid name"),
    (74, "MPI_T_ERR_INVALID", "MPI_T: invalid use"),
    (75, "MPI_ERR_SESSION", "invalid session"),
    (76, "MPI_ERR_PROC_ABORTED", "process aborted"),
    (77, "MPI_ERR_VALUE_TOO_LARGE", "value too large for output argument"),
    (78, "MPI_T_ERR_NOT_SUPPORTED", "MPI_T: not supported"),
    (80, "MPI_ERR_ERRHANDLER", "invalid error handler"),
    (81, "MPI_ERR_ABI", "the ABI's Fortran properties are already set and cannot be changed"),
    (101, "MPIX_ERR_PROC_FAILED", "a process involved in the operation has failed"),
    (102, "MPIX_ERR_PROC_FAILED_PENDING", "a wildcard receive could not complete because a process of the communicator failed"),
    (103, "MPIX_ERR_REVOKED", "the communicator has been revoked"),
];

pub fn error_class_name(class: c_int) -> Option<&'static str> {
    ERROR_CLASSES.iter().find(|e| e.0 == class).map(|e| e.1)
}
