//! MPI-IO (MPI 4.1 chapter 14): files opened collectively by the ranks of a communicator.
//! `backend` is the storage below the chapter's logic; `file` the open file and its collective
//! open and close; `file_type` a datatype as a converting representation lays it out in the
//! file; `view` maps a view's data to file byte runs; `datarep` the data
//! representations; `access` the data access routines, which all end in `transfer`; `shared`
//! the page of shared memory that holds the shared file pointer; `hints` the file's hints.
//! `two_phase` is collective buffering for the `_all` forms, `sieve` data sieving for
//! independent non-contiguous access (under `range_lock`'s byte-range locks), `cb_hints` their
//! parameters. `worker` runs the transfers of nonblocking accesses.
pub mod access;
pub mod backend;
pub mod cb_hints;
pub mod datarep;
pub mod file;
pub mod file_type;
pub mod hints;
pub mod range_lock;
pub mod shared;
pub mod sieve;
pub mod transfer;
pub mod two_phase;
pub mod view;
pub mod worker;
