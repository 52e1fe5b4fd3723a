//! Threads mode: every rank of the job is a thread of one process (TMPI).
pub mod atexit;
pub mod host;
pub mod rank_table;
pub mod loader;
pub mod fiber;
pub mod sched;
pub mod shebang;
pub mod spawn;
