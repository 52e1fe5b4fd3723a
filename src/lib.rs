//! oxmpi: a drop-in MPI library (MPICH ABI, `libmpi.so.12`) over a Rust shared-memory engine.
//!
//! Layers, top to bottom: `ffi` (the C boundary: panic boundary, argument checks, handle
//! conversion), `coll` (collective algorithms over point-to-point) with `op` (reduction kernels),
//! `p2p` (matching, requests, send modes), `transport` (lock-free channels),
//! `runtime` (launch environment, segment, waiting). Only `ffi` and `abi` know about C.
pub mod abi;
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
pub mod monitoring;
pub mod mpit;
pub mod op;
pub mod osc;
pub mod p2p;
pub mod runtime;
pub mod threads_host;
pub mod topo;
pub mod transport;
pub mod ulfm;
