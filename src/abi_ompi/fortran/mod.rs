//! Open MPI 4.1's Fortran ABI (`libmpi_mpifh.so.40`, what `mpif90.openmpi` programs using
//! `include 'mpif.h'` link): the MPICH-ABI Fortran bindings' rule (scripts/gen-fortran-bindings.py,
//! which writes `generated.rs` here too with `--abi ompi`) over the Open MPI C layer, as Open MPI's
//! own Fortran library sits on its C one. Each binding is exported from liboxmpi.so once, as
//! `oxompif_NAME`; `libmpi_mpifh.so.40` (c-src/ompi_mpifh_entry.S) holds Open MPI's eight
//! spellings of it (`mpi_send_`, `mpi_send__`, `mpi_send`, `MPI_SEND` and the `pmpi` ones), each a
//! jump. What differs from the MPICH bindings: an INTEGER handle is an index into Open MPI's f2c
//! table of its kind (`handles`), and the sentinels are Open MPI's COMMON blocks (`sentinels`).
//! Statuses need nothing: Open MPI's Fortran status is its C one as MPI_STATUS_SIZE (6) integers.
use crate::abi::MPI_Fint;
use std::os::raw::c_int;

/// Defines one Fortran entry point, exported as `oxompif_<lower>`.
/// `ompi_fortran!(send; (args) [-> ret] => { body })`.
macro_rules! ompi_fortran {
    ($lower:ident; ($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => { $($body:tt)* }) => {
        const _: () = {
            /// # Safety
            /// Called from Fortran: every pointer is a by-reference argument of the caller.
            #[export_name = concat!("oxompif_", stringify!($lower))]
            #[allow(unused_unsafe, unused_mut, clippy::missing_safety_doc)]
            pub unsafe extern "C" fn f($($a: $t),*) $(-> $r)? {
                // SAFETY: the arguments are the Fortran caller's references (the MPI binding
                // contract); the C layer checks handles and values itself.
                unsafe { $($body)* }
            }
        };
    };
}

pub(crate) mod callbacks;
mod generated;
mod dynproc;
mod hand;
pub mod handles;
pub mod sentinels;

/// Stores a return code in the optional IERROR argument.
///
/// # Safety
/// `ierr` is null or the caller's INTEGER.
unsafe fn set_ierr(ierr: *mut MPI_Fint, rc: c_int) {
    if !ierr.is_null() {
        // SAFETY: non-null IERROR is the caller's INTEGER.
        unsafe { *ierr = rc };
    }
}

/// A procedure of Open MPI's Fortran library that oxmpi's does not provide yet:
/// MPI_ERR_UNSUPPORTED_OPERATION through MPI_COMM_SELF's handler, naming it (what generated.rs's
/// stubs call; none at present).
#[allow(dead_code)]
fn unsupported(name: &'static str) -> c_int {
    let e = crate::error::err(
        crate::abi::MPI_ERR_UNSUPPORTED_OPERATION,
        format!("{name} is not supported by oxmpi's Open MPI Fortran library (libmpi_mpifh.so.40) yet; build with oxmpi's mpifort"),
    );
    super::conv::code_out(crate::ffi::env::errhandler::raise(name, crate::abi::MPI_COMM_SELF, e))
}

#[cfg(test)]
mod tests {
    /// The checked-in generated.rs and c-src/ompi_mpifh_entry.S match what the script makes now.
    #[test]
    fn generated_files_are_current() {
        let root = env!("CARGO_MANIFEST_DIR");
        let out = std::process::Command::new("python3")
            .args([&format!("{root}/scripts/gen-fortran-bindings.py"), "--abi", "ompi", "--check"])
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}
