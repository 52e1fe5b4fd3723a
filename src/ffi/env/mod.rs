//! The MPI environment (MPI 4.1 chapter 11): initialisation, sessions, error handlers of
//! communicators and files.
pub mod errhandler;
pub mod hw;
pub mod init;
pub mod session;
