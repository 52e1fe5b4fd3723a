//! Open MPI's Fortran sentinels: the COMMON blocks of its mpif-sentinels.h
//! (`mpi_fortran_bottom_`, `mpi_fortran_in_place_`...), which libmpi.so.40 defines
//! (c-src/ompi_abi_entry.S) and whose addresses stand for MPI_BOTTOM, MPI_IN_PLACE and the other
//! sentinels, mapped here to Open MPI's C values (the C layer takes those).
//!
//! A program's references bind to its own copies of the blocks; libmpi.so.40's constructor
//! registers the addresses its relocations resolve to (`oxompif_register`), which are the
//! program's in a normal process. In threads mode each rank's instance of the program has copies
//! of its own, which the host registers per rank (`register_instance`), as for the MPICH blocks
//! (src/fortran/sentinels.rs).
use super::super::conv::OmpiStatus;
use crate::runtime::job;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use crate::runtime::threads::rank_table::RankTable;

/// The sentinels, in the order of the generator's OMPI_F_SENTINELS (scripts/gen-mpi-abi.py).
const BOTTOM: usize = 0;
const IN_PLACE: usize = 1;
const STATUS_IGNORE: usize = 2;
const STATUSES_IGNORE: usize = 3;
const ERRCODES_IGNORE: usize = 4;
const ARGV_NULL: usize = 5;
const ARGVS_NULL: usize = 6;
const UNWEIGHTED: usize = 7;
const WEIGHTS_EMPTY: usize = 8;
const N: usize = 9;
/// Their symbols, for the per-rank lookup.
const SYMBOLS: [&str; N] = [
    "mpi_fortran_bottom_",
    "mpi_fortran_in_place_",
    "mpi_fortran_status_ignore_",
    "mpi_fortran_statuses_ignore_",
    "mpi_fortran_errcodes_ignore_",
    "mpi_fortran_argv_null_",
    "mpi_fortran_argvs_null_",
    "mpi_fortran_unweighted_",
    "mpi_fortran_weights_empty_",
];

/// The addresses libmpi.so.40 registered (0: none yet). Written once at load, before any MPI
/// call, and read with Relaxed: only the values matter, not their order with other memory.
static GLOBAL: [AtomicUsize; N] = [const { AtomicUsize::new(0) }; N];
/// Threads mode: each rank's addresses (index = rank; empty: no Open MPI Fortran program).
static RANKS: RankTable<[usize; N]> = RankTable::new();

/// Called by libmpi.so.40's constructor with the addresses of its `n` sentinel blocks.
///
/// # Safety
/// `table` holds `n` addresses.
#[no_mangle]
pub unsafe extern "C" fn oxompif_register(table: *const usize, n: u32) {
    if n as usize != N || table.is_null() {
        eprintln!("oxmpi: libmpi.so.40 registers {n} Fortran sentinels, liboxmpi.so expects {N}; install both from the same build (scripts/install.sh)");
        return;
    }
    for (i, g) in GLOBAL.iter().enumerate() {
        // SAFETY: `table` holds N addresses (caller contract).
        g.store(unsafe { *table.add(i) }, Ordering::Relaxed);
    }
}

/// Threads mode: records the blocks of rank `rank`'s program instance, found with `lookup`.
pub fn register_instance(rank: usize, lookup: &dyn Fn(&str) -> Option<*mut c_void>) {
    let a = SYMBOLS.map(|s| lookup(s).map_or(0, |p| p as usize));
    if a.iter().all(|&x| x == 0) {
        return;
    }
    RANKS.set(rank, a);
}

/// Whether address `a` is sentinel `i` (the registered one, or the calling rank's).
fn is(a: usize, i: usize) -> bool {
    if a == 0 {
        return false;
    }
    if GLOBAL[i].load(Ordering::Relaxed) == a {
        return true;
    }
    if job::threads_job().is_none() {
        return false;
    }
    RANKS.current().is_some_and(|b| b[i] == a)
}

/// A choice buffer: MPI_BOTTOM -> NULL, MPI_IN_PLACE -> `(void *)1` (Open MPI's C values).
#[inline]
pub fn buf(p: *mut c_void) -> *mut c_void {
    let a = p as usize;
    if is(a, BOTTOM) {
        std::ptr::null_mut()
    } else if is(a, IN_PLACE) {
        1 as *mut c_void
    } else {
        p
    }
}

/// A status: MPI_STATUS_IGNORE -> NULL (Open MPI's C one).
#[inline]
pub fn status(p: *mut c_int) -> *mut OmpiStatus {
    if is(p as usize, STATUS_IGNORE) { std::ptr::null_mut() } else { p as *mut OmpiStatus }
}

/// An array of statuses: MPI_STATUSES_IGNORE -> NULL.
#[inline]
pub fn statuses(p: *mut c_int) -> *mut OmpiStatus {
    if is(p as usize, STATUSES_IGNORE) { std::ptr::null_mut() } else { p as *mut OmpiStatus }
}

/// MPI_ERRCODES_IGNORE -> NULL.
pub fn errcodes(p: *mut c_int) -> *mut c_int {
    if is(p as usize, ERRCODES_IGNORE) { std::ptr::null_mut() } else { p }
}

/// MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY -> Open MPI's C `(int *)2` / `(int *)3`.
pub fn weights(p: *mut c_int) -> *mut c_int {
    let a = p as usize;
    if is(a, UNWEIGHTED) {
        2 as *mut c_int
    } else if is(a, WEIGHTS_EMPTY) {
        3 as *mut c_int
    } else {
        p
    }
}

/// MPI_ARGV_NULL / MPI_ARGVS_NULL (a CHARACTER argument's address).
pub fn is_argv_null(p: *const u8) -> bool {
    is(p as usize, ARGV_NULL) || is(p as usize, ARGVS_NULL)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn registered_blocks_map_to_c_values() {
        static BLOCKS: [c_int; 16] = [0; 16];
        let base = BLOCKS.as_ptr() as usize;
        let table: [usize; N] = std::array::from_fn(|i| base + 4 * i);
        // SAFETY: a table of N addresses.
        unsafe { oxompif_register(table.as_ptr(), N as u32) };
        assert!(buf(table[BOTTOM] as *mut c_void).is_null());
        assert_eq!(buf(table[IN_PLACE] as *mut c_void) as usize, 1);
        assert!(status(table[STATUS_IGNORE] as *mut c_int).is_null());
        assert!(statuses(table[STATUSES_IGNORE] as *mut c_int).is_null());
        assert!(errcodes(table[ERRCODES_IGNORE] as *mut c_int).is_null());
        assert_eq!(weights(table[UNWEIGHTED] as *mut c_int) as usize, 2);
        assert_eq!(weights(table[WEIGHTS_EMPTY] as *mut c_int) as usize, 3);
        assert!(is_argv_null(table[ARGV_NULL] as *const u8));
        let mut x = 0;
        assert_eq!(buf(&mut x as *mut c_int as *mut c_void), &mut x as *mut c_int as *mut c_void);
        assert!(!status(&mut x).is_null());
    }
}
