//! Attributes: the predefined attributes of MPI_COMM_WORLD / MPI_COMM_SELF (MPI 4.1 section 9.1.2).
//! User keyvals come with the attribute-caching work and report MPI_ERR_UNSUPPORTED_OPERATION.
use super::check;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

const KEY_TAG_UB: c_int = 0x64400001;
const KEY_HOST: c_int = 0x64400003;
const KEY_IO: c_int = 0x64400005;
const KEY_WTIME_IS_GLOBAL: c_int = 0x64400007;
const KEY_UNIVERSE_SIZE: c_int = 0x64400009;
const KEY_LASTUSEDCODE: c_int = 0x6440000b;
const KEY_APPNUM: c_int = 0x6440000d;

/// Values of the predefined attributes; the application receives pointers to these.
struct Predefined {
    tag_ub: c_int,
    host: c_int,
    io: c_int,
    wtime_is_global: c_int,
    universe_size: c_int,
    lastusedcode: c_int,
    appnum: c_int,
}

static VALUES: OnceLock<Predefined> = OnceLock::new();

unsafe fn get_attr(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> MpiResult {
    let u = check::universe()?;
    check::comm(u, comm)?;
    if flag.is_null() || attribute_val.is_null() {
        return Err(err(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    }
    let v = VALUES.get_or_init(|| Predefined {
        tag_ub: MPI_TAG_UB_VALUE,
        host: MPI_PROC_NULL,
        // Every rank can do I/O.
        io: MPI_ANY_SOURCE,
        // MPI_Wtime counts from each process's first MPI call, so clocks are not synchronised.
        wtime_is_global: 0,
        universe_size: u.size as c_int,
        lastusedcode: MPICH_ERR_LAST_CLASS,
        appnum: 0,
    });
    let p: *const c_int = match keyval {
        KEY_TAG_UB => &v.tag_ub,
        KEY_HOST => &v.host,
        KEY_IO => &v.io,
        KEY_WTIME_IS_GLOBAL => &v.wtime_is_global,
        KEY_UNIVERSE_SIZE => &v.universe_size,
        KEY_LASTUSEDCODE => &v.lastusedcode,
        KEY_APPNUM => &v.appnum,
        MPI_KEYVAL_INVALID => return Err(err(MPI_ERR_KEYVAL, "invalid keyval MPI_KEYVAL_INVALID")),
        _ => return Err(err(MPI_ERR_UNSUPPORTED_OPERATION, format!("keyval 0x{:08x}: user-defined attributes are not implemented in oxmpi yet (only the predefined ones: MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM)", keyval as u32))),
    };
    *(attribute_val as *mut *const c_int) = p;
    *flag = 1;
    Ok(())
}

export! {
    fn MPI_Comm_get_attr / PMPI_Comm_get_attr (comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on comm => {
        get_attr(comm, comm_keyval, attribute_val, flag)
    }
    fn MPI_Attr_get / PMPI_Attr_get (comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) on comm => {
        get_attr(comm, keyval, attribute_val, flag)
    }
}
