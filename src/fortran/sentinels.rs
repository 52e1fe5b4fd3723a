//! The COMMON blocks of `mpif.h` / `use mpi` whose member addresses stand for `MPI_BOTTOM`,
//! `MPI_IN_PLACE`, `MPI_STATUS(ES)_IGNORE`, `MPI_ERRCODES_IGNORE`, `MPI_ARGV(S)_NULL`,
//! `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` (MPICH's names and sizes, `docs/design/abi.md` 2.4), and their
//! mapping to the C sentinels; and the `mpi_f08` module's variables standing for the same
//! sentinels (MPICH's names: `MPIR_F08_*` and the `mpi_f08_link_constants` module's variables), so
//! the f08 layer (`fortran-f08/`, which calls these bindings) passes them through unchanged.
//!
//! Every Fortran program defines these blocks; the library defines them too, and its references
//! (through the GOT) bind to the program's copies in a normal process. In threads mode each rank's
//! private instance of the program has its own copies that the library's GOT does not see, so the
//! host registers each instance's addresses (`register_instance`) and the mapping also checks the
//! calling rank's. Code built `-fPIC` binds to the library's copies instead, which the GOT check
//! covers.
#![allow(non_upper_case_globals)]
use crate::abi::{MPI_Fint, MPI_Status};
use crate::runtime::job;
use std::os::raw::{c_int, c_void};
use std::ptr::addr_of;
use crate::runtime::threads::rank_table::RankTable;

/// `COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE(5)`.
#[repr(C, align(4))]
pub struct Priv1(pub [c_int; 7]);
/// `COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE(5,1), MPI_ERRCODES_IGNORE(1)`.
#[repr(C, align(4))]
pub struct Priv2(pub [c_int; 6]);

#[no_mangle]
pub static mut mpipriv1_: Priv1 = Priv1([0; 7]);
#[no_mangle]
pub static mut mpipriv2_: Priv2 = Priv2([0; 6]);
/// `COMMON /MPIPRIVC/ MPI_ARGVS_NULL(1,1), MPI_ARGV_NULL(1)` (CHARACTER*1 each).
#[no_mangle]
pub static mut mpiprivc_: [u8; 2] = [0; 2];
/// `COMMON /MPIFCMB5/ MPI_UNWEIGHTED`.
#[no_mangle]
pub static mut mpifcmb5_: c_int = 0;
/// `COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY`.
#[no_mangle]
pub static mut mpifcmb9_: c_int = 0;

/// (`mpi_f08`'s `MPI_BOTTOM`, `MPI_IN_PLACE` and `MPI_STATUS(ES)_IGNORE` are `MPIR_F08_*` in
/// `crate::ffi::data_symbols`.)
/// `mpi_f08_link_constants` module variables, under gfortran's names for them (what MPICH-built
/// `use mpi_f08` programs reference): `MPI_ERRCODES_IGNORE(1)`, `MPI_UNWEIGHTED(1)`,
/// `MPI_WEIGHTS_EMPTY(1)`, `MPI_ARGV_NULL(1)`, `MPI_ARGVS_NULL(1,1)`.
#[export_name = "__mpi_f08_link_constants_MOD_mpi_errcodes_ignore"]
pub static mut F08_ERRCODES_IGNORE: c_int = 0;
#[export_name = "__mpi_f08_link_constants_MOD_mpi_unweighted"]
pub static mut F08_UNWEIGHTED: c_int = 0;
#[export_name = "__mpi_f08_link_constants_MOD_mpi_weights_empty"]
pub static mut F08_WEIGHTS_EMPTY: c_int = 0;
#[export_name = "__mpi_f08_link_constants_MOD_mpi_argv_null"]
pub static mut F08_ARGV_NULL: u8 = 0;
#[export_name = "__mpi_f08_link_constants_MOD_mpi_argvs_null"]
pub static mut F08_ARGVS_NULL: u8 = 0;

/// Start addresses of the five blocks and of the f08 variables as one program instance sees them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    priv1: usize,
    priv2: usize,
    privc: usize,
    cmb5: usize,
    cmb9: usize,
    f08: F08,
}

/// The f08 sentinels' addresses (0: not in this instance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct F08 {
    bottom: usize,
    in_place: usize,
    status: usize,
    statuses: usize,
    errcodes: usize,
    unweighted: usize,
    weights_empty: usize,
    argv: usize,
    argvs: usize,
}

impl F08 {
    fn lookup(get: impl Fn(&str) -> usize) -> F08 {
        F08 {
            bottom: get("MPIR_F08_MPI_BOTTOM"),
            in_place: get("MPIR_F08_MPI_IN_PLACE"),
            status: get("MPIR_F08_MPI_STATUS_IGNORE_OBJ"),
            statuses: get("MPIR_F08_MPI_STATUSES_IGNORE_OBJ"),
            errcodes: get("__mpi_f08_link_constants_MOD_mpi_errcodes_ignore"),
            unweighted: get("__mpi_f08_link_constants_MOD_mpi_unweighted"),
            weights_empty: get("__mpi_f08_link_constants_MOD_mpi_weights_empty"),
            argv: get("__mpi_f08_link_constants_MOD_mpi_argv_null"),
            argvs: get("__mpi_f08_link_constants_MOD_mpi_argvs_null"),
        }
    }
}

/// `a` is the (non-null) address `s` of a sentinel.
fn is(a: usize, s: usize) -> bool {
    s != 0 && a == s
}

/// Threads mode: the blocks of each rank's program instance (index = rank).
static RANKS: RankTable<Blocks> = RankTable::new();

/// Threads mode: records the blocks of rank `rank`'s program instance, found with `lookup`
/// (dlsym on the instance). A program without Fortran has none; nothing is recorded then.
pub fn register_instance(rank: usize, lookup: impl Fn(&str) -> Option<*mut c_void>) {
    let get = |n: &str| lookup(n).map_or(0, |p| p as usize);
    let b = Blocks {
        priv1: get("mpipriv1_"),
        priv2: get("mpipriv2_"),
        privc: get("mpiprivc_"),
        cmb5: get("mpifcmb5_"),
        cmb9: get("mpifcmb9_"),
        f08: F08::lookup(get),
    };
    RANKS.set(rank, b);
}

/// The library's view (through the GOT: the program's blocks in a normal process).
fn global() -> Blocks {
    Blocks {
        priv1: addr_of!(mpipriv1_) as usize,
        priv2: addr_of!(mpipriv2_) as usize,
        privc: addr_of!(mpiprivc_) as usize,
        cmb5: addr_of!(mpifcmb5_) as usize,
        cmb9: addr_of!(mpifcmb9_) as usize,
        f08: F08 {
            bottom: addr_of!(crate::ffi::data_symbols::MPIR_F08_MPI_BOTTOM) as usize,
            in_place: addr_of!(crate::ffi::data_symbols::MPIR_F08_MPI_IN_PLACE) as usize,
            status: addr_of!(crate::ffi::data_symbols::MPIR_F08_MPI_STATUS_IGNORE_OBJ) as usize,
            statuses: addr_of!(crate::ffi::data_symbols::MPIR_F08_MPI_STATUSES_IGNORE_OBJ) as usize,
            errcodes: addr_of!(F08_ERRCODES_IGNORE) as usize,
            unweighted: addr_of!(F08_UNWEIGHTED) as usize,
            weights_empty: addr_of!(F08_WEIGHTS_EMPTY) as usize,
            argv: addr_of!(F08_ARGV_NULL) as usize,
            argvs: addr_of!(F08_ARGVS_NULL) as usize,
        },
    }
}

/// Calls `f` with the calling rank's view, then with the global one; true if either says yes.
fn any(f: impl Fn(&Blocks) -> bool) -> bool {
    if f(&global()) {
        return true;
    }
    if job::threads_job().is_none() {
        return false;
    }
    RANKS.current().is_some_and(|b| (b.priv1 != 0 || b.f08.bottom != 0) && f(b))
}

/// A choice buffer: `MPI_BOTTOM` -> NULL, `MPI_IN_PLACE` -> the C `MPI_IN_PLACE`.
pub fn buf(p: *mut c_void) -> *mut c_void {
    let a = p as usize;
    if any(|b| a == b.priv1 || is(a, b.f08.bottom)) {
        std::ptr::null_mut()
    } else if any(|b| a == b.priv1 + 4 || is(a, b.f08.in_place)) {
        usize::MAX as *mut c_void
    } else {
        p
    }
}

/// A status argument: `MPI_STATUS_IGNORE` -> the C one.
pub fn status(p: *mut MPI_Fint) -> *mut MPI_Status {
    let a = p as usize;
    if any(|b| a == b.priv1 + 8 || is(a, b.f08.status)) {
        1 as *mut MPI_Status
    } else {
        p as *mut MPI_Status
    }
}

/// An array of statuses: `MPI_STATUSES_IGNORE` -> the C one.
pub fn statuses(p: *mut MPI_Fint) -> *mut MPI_Status {
    let a = p as usize;
    if any(|b| a == b.priv2 || is(a, b.f08.statuses)) {
        1 as *mut MPI_Status
    } else {
        p as *mut MPI_Status
    }
}

/// Graph weights: `MPI_UNWEIGHTED` / `MPI_WEIGHTS_EMPTY` -> the C ones.
pub fn weights(p: *mut c_int) -> *mut c_int {
    let a = p as usize;
    if any(|b| a == b.cmb5 || is(a, b.f08.unweighted)) {
        crate::ffi::data_symbols::MPI_UNWEIGHTED.get()
    } else if any(|b| a == b.cmb9 || is(a, b.f08.weights_empty)) {
        crate::ffi::data_symbols::MPI_WEIGHTS_EMPTY.get()
    } else {
        p
    }
}

/// `MPI_ERRCODES_IGNORE` -> NULL.
pub fn errcodes(p: *mut c_int) -> *mut c_int {
    let a = p as usize;
    if any(|b| a == b.priv2 + 20 || is(a, b.f08.errcodes)) {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// `MPI_ARGV_NULL` / `MPI_ARGVS_NULL` (a CHARACTER argument's address) -> true.
pub fn is_argv_null(p: *const u8) -> bool {
    let a = p as usize;
    any(|b| a == b.privc || a == b.privc + 1 || is(a, b.f08.argv) || is(a, b.f08.argvs))
}

/// Points the C variables `MPI_F_STATUS(ES)_IGNORE` at the library's view of the blocks.
pub fn publish_status_ignore() {
    let g = global();
    // SAFETY: plain pointer stores into the exported variables, done at MPI_Init of a Fortran
    // program before it can compare against them.
    unsafe {
        crate::ffi::data_symbols::MPI_F_STATUS_IGNORE = (g.priv1 + 8) as *mut MPI_Fint;
        crate::ffi::data_symbols::MPI_F_STATUSES_IGNORE = g.priv2 as *mut MPI_Fint;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sentinels_map_to_c() {
        let g = global();
        assert!(buf(g.priv1 as *mut c_void).is_null());
        assert_eq!(buf((g.priv1 + 4) as *mut c_void) as usize, usize::MAX);
        assert_eq!(status((g.priv1 + 8) as *mut MPI_Fint) as usize, 1);
        assert_eq!(statuses(g.priv2 as *mut MPI_Fint) as usize, 1);
        assert!(errcodes((g.priv2 + 20) as *mut c_int).is_null());
        assert!(buf(g.f08.bottom as *mut c_void).is_null());
        assert_eq!(buf(g.f08.in_place as *mut c_void) as usize, usize::MAX);
        assert_eq!(status(g.f08.status as *mut MPI_Fint) as usize, 1);
        assert_eq!(statuses(g.f08.statuses as *mut MPI_Fint) as usize, 1);
        assert!(errcodes(g.f08.errcodes as *mut c_int).is_null());
        assert!(is_argv_null(g.f08.argv as *const u8));
        let mut x = 0;
        assert_eq!(buf(&mut x as *mut c_int as *mut c_void), &mut x as *mut c_int as *mut c_void);
        assert_eq!(std::mem::size_of::<Priv1>(), 28);
        assert_eq!(std::mem::size_of::<Priv2>(), 24);
    }
}
