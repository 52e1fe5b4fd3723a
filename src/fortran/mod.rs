//! The Fortran bindings of `mpif.h` and `use mpi` (MPICH ABI, `libmpifort.so.12`;
//! `docs/design/abi.md` section 2), inside the main library: `libmpifort.so.12` and
//! `libmpichfort.so.12` are installed as links to it, so an MPICH-built Fortran program finds every
//! name it needs in one object.
//!
//! Each Fortran entry point is exported under MPICH's eight spellings (`mpi_send_`, `mpi_send__`,
//! `mpi_send`, `MPI_SEND` and the same with `pmpi`), all calling the C `PMPI_*` function.
//! `generated.rs` holds the mechanical bindings (scripts/gen-fortran-bindings.py), `hand.rs` those
//! with strings, callbacks, attributes, 1-based indices or return values, `callbacks.rs` the
//! predefined Fortran callbacks, `sentinels.rs` the COMMON blocks behind `MPI_BOTTOM` and friends.
use crate::abi::MPI_Fint;
use std::os::raw::c_int;

/// Defines one Fortran entry point under the eight names MPICH exports it as.
/// `fortran_binding!(send, SEND; (args) [-> ret] => { body })`.
macro_rules! fortran_binding {
    // An MPIX_ extension: the same eight names with `mpix`/`MPIX` for `mpi`/`MPI`.
    (mpix $lower:ident, $upper:ident; $($rest:tt)*) => {
        fortran_binding!(@all ["mpix_", "MPIX_", "pmpix_", "PMPIX_"] $lower, $upper; $($rest)*);
    };
    ($lower:ident, $upper:ident; $($rest:tt)*) => {
        fortran_binding!(@all ["mpi_", "MPI_", "pmpi_", "PMPI_"] $lower, $upper; $($rest)*);
    };
    (@all [$lo:literal, $up:literal, $plo:literal, $pup:literal] $lower:ident, $upper:ident; ($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => { $($body:tt)* }) => {
        const _: () = {
            /// # Safety
            /// Called from Fortran: every pointer is a by-reference argument of the caller.
            #[inline(never)]
            #[allow(unused_unsafe, clippy::missing_safety_doc)]
            unsafe extern "C" fn imp($($a: $t),*) $(-> $r)? {
                // SAFETY: the arguments are the Fortran caller's references (the MPI binding
                // contract); the C function checks handles and values itself.
                unsafe { $($body)* }
            }
            fortran_binding!(@name imp, concat!($lo, stringify!($lower), "_"); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($lo, stringify!($lower), "__"); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($lo, stringify!($lower)); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($up, stringify!($upper)); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($plo, stringify!($lower), "_"); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($plo, stringify!($lower), "__"); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($plo, stringify!($lower)); $($a: $t),*; $($r)?);
            fortran_binding!(@name imp, concat!($pup, stringify!($upper)); $($a: $t),*; $($r)?);
        };
    };
    (@name $imp:ident, $sym:expr; $($a:ident : $t:ty),*; $($r:ty)?) => {
        const _: () = {
            /// # Safety
            /// As the binding it forwards to.
            #[export_name = $sym]
            #[allow(clippy::missing_safety_doc)]
            pub unsafe extern "C" fn f($($a: $t),*) $(-> $r)? {
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { $imp($($a),*) }
            }
        };
    };
}

pub mod callbacks;
mod datarep;
pub(crate) mod dynproc;
mod generated;
pub(crate) mod hand;
pub mod sentinels;
pub(crate) mod strings;

/// Stores a C return code in the optional IERROR argument.
///
/// # Safety
/// `ierr` is null or the caller's INTEGER.
unsafe fn set_ierr(ierr: *mut MPI_Fint, rc: c_int) {
    if !ierr.is_null() {
        // SAFETY: non-null IERROR is the caller's INTEGER.
        unsafe { *ierr = rc };
    }
}

#[cfg(test)]
mod tests {
    /// The checked-in generated bindings and mpif.h match what the scripts produce now.
    #[test]
    fn generated_files_are_current() {
        let root = env!("CARGO_MANIFEST_DIR");
        for script in ["scripts/gen-fortran-bindings.py", "scripts/gen-mpif.py"] {
            let out = std::process::Command::new("python3").arg(format!("{root}/{script}")).arg("--check").output().expect("python3 runs");
            assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
