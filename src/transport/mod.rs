//! Shared-memory channels between ranks.
pub mod ring;
pub mod cma;
