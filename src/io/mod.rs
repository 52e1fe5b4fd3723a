//! MPI-IO (MPI 4.1 chapter 14): files opened collectively by the ranks of a communicator.
//! `backend` is the storage below the chapter's logic.
pub mod backend;
pub mod cb_hints;
pub mod range_lock;
pub mod sieve;
pub mod two_phase;
