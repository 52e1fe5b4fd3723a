//! The C boundary: one file per MPI chapter. Argument checks, handle conversion, panic boundary and
//! error codes live here; no engine logic. Every submodule is glob re-exported so that `build.rs` can
//! check each exported function's Rust signature against `include/mpi.h` as `crate::ffi::MPI_X`.
pub mod attr;
pub mod boundary;
pub mod check;
pub mod coll;
pub mod coll_args;
pub mod coll_gather;
pub mod coll_launch;
pub mod comm;
pub mod data_symbols;
pub mod datatype;
pub mod datatype_c;
pub mod errhandler;
pub mod group;
pub mod handles;
pub mod info;
pub mod init;
pub mod p2p;
pub mod pack;
pub mod request;
pub mod staged;
pub mod threads_host;
pub mod topo;
pub mod type_attr;
pub mod unsupported;

pub use crate::error;
pub use attr::*;
pub use coll::*;
pub use coll_gather::*;
pub use comm::*;
pub use data_symbols::*;
pub use datatype::*;
pub use datatype_c::*;
pub use errhandler::*;
pub use group::*;
pub use handles::*;
pub use info::*;
pub use init::*;
pub use p2p::*;
pub use pack::*;
pub use request::*;
pub use threads_host::*;
pub use topo::*;
pub use type_attr::*;
