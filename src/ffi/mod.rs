//! The C boundary: one file per MPI chapter. Argument checks, handle conversion, panic boundary and
//! error codes live here; no engine logic. Every submodule is glob re-exported so that `build.rs` can
//! check each exported function's Rust signature against `include/mpi.h` as `crate::ffi::MPI_X`.
pub mod boundary;
pub mod data_symbols;
pub mod errhandler;
pub mod handles;
pub mod error;
pub mod unsupported;

pub use data_symbols::*;
pub use errhandler::*;
pub use handles::*;
