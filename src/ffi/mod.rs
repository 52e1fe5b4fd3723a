//! The C boundary: one file per MPI chapter. Argument checks, handle conversion, panic boundary and
//! error codes live here; no engine logic. Every submodule is glob re-exported so that `build.rs` can
//! check each exported function's Rust signature against `include/mpi.h` as `crate::ffi::MPI_X`.
pub mod boundary;
pub mod errhandler;
pub use crate::error;
pub mod unsupported;

pub use errhandler::*;
pub mod check;
pub mod init;
pub use init::*;
pub mod comm;
pub use comm::*;
pub mod datatype;
pub use datatype::*;
pub mod p2p;
pub use p2p::*;
pub mod request;
pub use request::*;
