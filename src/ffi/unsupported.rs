//! Functions of the MPI API that oxmpi does not implement yet. `build.rs` generates one stub per
//! prototype in `include/mpi.h` that has no implementation in `src/ffi/`; each stub calls `report`,
//! which raises MPI_ERR_UNSUPPORTED_OPERATION through the error handler of the communicator the
//! call concerns (or MPI_COMM_SELF), with a message naming the function. Never fake success.
use crate::abi::MPI_ERR_UNSUPPORTED_OPERATION;
use std::os::raw::c_int;

pub fn report(name: &'static str, comm: c_int) -> c_int {
    super::boundary::run(name, comm, || {
        Err(crate::error::err(
            MPI_ERR_UNSUPPORTED_OPERATION,
            format!("{name} is not implemented in oxmpi yet (see README, Limitations)"),
        ))
    })
}

// One `MPI_X`/`PMPI_X` stub pair per unimplemented prototype of include/mpi.h, plus compile-time
// signature checks of the implemented ones (see build.rs).
include!(concat!(env!("OUT_DIR"), "/unsupported_stubs.rs"));
