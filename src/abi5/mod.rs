//! The MPI-5 standard ABI (`mpi_abi.h`, `libmpi_abi.so.1`): a second thin boundary over the same
//! engine. Each function is exported from liboxmpi.so as `oxabi_MPI_X` (a name no ABI uses, so the
//! MPICH-ABI library keeps its symbols unchanged); `libmpi_abi.so.1` (c-src/mpi_abi_entry.S) is
//! nothing but `MPI_X`/`PMPI_X` jumps to them. A wrapper converts its arguments (`conv`), calls
//! the MPICH-ABI `crate::ffi::PMPI_X`, and converts results and the code back.
//! The hot point-to-point calls (Isend, Irecv, Recv, Sendrecv, Wait, Waitall) instead jump to
//! `crate::ffi::layer`'s entries with `conv::Abi`, engine code that converts as it reads and
//! writes requests and statuses in this ABI directly.
pub mod abi_info;
pub mod callbacks;
pub mod conv;
pub mod errhandlers;
pub mod grequests;
pub mod keyvals;
pub mod mpit;
pub mod mpit_callbacks;
pub mod spawn;
pub mod tables;
pub mod wrappers;
