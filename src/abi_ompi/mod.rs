//! Open MPI 4.1's ABI (`libmpi.so.40`): a third thin boundary over the same engine, made like the
//! MPI-5 standard ABI's (`crate::abi5`) by the same generator (`scripts/gen-mpi-abi.py --abi
//! ompi`). Each function is exported from liboxmpi.so as `oxompi_MPI_X`; `libmpi.so.40`
//! (c-src/ompi_abi_entry.S) is `MPI_X`/`PMPI_X` jumps to them plus Open MPI's predefined objects
//! (`ompi_mpi_comm_world`...) at their exact sizes. A wrapper converts its arguments (`conv`),
//! calls the MPICH-ABI `crate::ffi::PMPI_X`, and converts results and the code back.
//! The hot point-to-point calls (Isend, Irecv, Recv, Sendrecv, Wait, Waitall) instead jump to
//! `crate::ffi::layer`'s entries with `conv::Abi`, engine code that converts as it reads and
//! writes requests and statuses in this ABI directly.
pub mod callbacks;
pub mod conv;
pub mod cxx_glue;
pub mod fortran;
pub mod hand;
pub mod mpit;
pub mod objects;
pub mod spawn;
pub mod tables;
pub mod version;
pub mod wrappers;
