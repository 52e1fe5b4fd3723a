//! oxmpi: a drop-in MPI library (MPICH ABI, `libmpi.so.12`) over a Rust shared-memory engine.
//!
//! One engine below thin ABI layers; each top-level module imports only modules of lower layers
//! (`docs/ARCHITECTURE.md` draws them, `tests/layers.rs` enforces them). Bottom to top: `error`;
//! `runtime`; `transport`, `datatype`, `clairvoyant`, `info`, `group`, `topo`, `monitoring`;
//! `p2p`, `op`; `comm`; `coll`; `construct`; `ulfm`, `osc`, `io`; `instance`; `mpit`; and the MPICH ABI
//! on top: `abi`, `ffi` (the C boundary), `fortran`, `threads_host`. Only `abi` and `ffi` (and
//! the Fortran boundary) know MPICH's values.
#![deny(unsafe_op_in_unsafe_fn)]
pub mod abi;
// The two foreign-ABI layers are crate-private: nothing outside the crate calls them (their
// exports are the #[no_mangle] oxabi_/oxompi_ symbols), so the statics their inlined conversions
// read (handle spans, error tables) are not reachable from the rlib and get hidden visibility:
// direct PC-relative loads, not loads through the GOT (what `pub` gave them).
pub(crate) mod abi5;
pub(crate) mod abi_ompi;
pub mod clairvoyant;
pub mod coll;
pub mod comm;
pub mod construct;
pub mod datatype;
pub mod error;
pub mod ffi;
pub mod fortran;
pub mod group;
pub mod instance;
pub mod info;
pub mod io;
pub mod monitoring;
pub mod mpit;
pub mod op;
pub mod osc;
pub mod p2p;
pub mod runtime;
pub mod session;
pub mod threads_host;
pub mod topo;
pub mod transport;
pub mod ulfm;
