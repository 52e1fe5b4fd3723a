//! The calling thread's last window lookup, so that the RMA operations and flushes on one
//! window (the OSU put/get latency pattern) find it without the table's read lock and without
//! touching the window's reference count: both are atomic read-modify-writes, about a fifth of
//! an 8-byte MPI_Put + MPI_Win_flush each.
//!
//! The entry holds a strong reference and the table generation it was looked up under
//! (`WinTable::generation`, bumped by every insert and remove); it is reused only while the
//! generation is unchanged, that is while the table still maps the handle to that window. A call
//! *takes* the entry out of the thread-local slot for its duration (plain memory moves, no
//! atomics) and puts it back after, so nothing borrowed from the slot outlives a nested lookup,
//! another fiber on this kernel thread, or a migration of the fiber to another thread.
//!
//! A window freed by another thread stays mapped until this thread's next RMA call or exit (the
//! entry's reference); `forget` drops the entry of the thread that frees it.
use crate::abi::*;
use crate::error::MpiResult;
use crate::instance::Instance;
use crate::osc::window::{WinTable, Window};
use std::cell::Cell;
use std::sync::Arc;

struct Entry {
    table: *const WinTable,
    handle: MPI_Win,
    generation: u64,
    win: Arc<Window>,
}

thread_local! {
    static LAST: Cell<Option<Entry>> = const { Cell::new(None) };
}

/// Runs `f` on the window of handle `h` of the calling rank (as `super::win_of`).
pub(crate) fn with_win<R>(h: MPI_Win, f: impl FnOnce(&'static Instance, &Arc<Window>) -> MpiResult<R>) -> MpiResult<R> {
    let u = crate::ffi::check::universe()?;
    let table: *const WinTable = &u.wins;
    let generation = u.wins.generation();
    // `try_with`: during thread teardown the slot may be gone; then look up without it.
    let hit = LAST.try_with(|s| s.take()).ok().flatten().filter(|e| e.table == table && e.handle == h && e.generation == generation);
    let e = match hit {
        Some(e) => e,
        None => Entry { table, handle: h, generation, win: super::window(u, h)? },
    };
    let r = f(u, &e.win);
    // Whatever a nested call left in the slot is replaced (and dropped).
    let _ = LAST.try_with(|s| s.set(Some(e)));
    r
}

/// Drops this thread's entry (MPI_Win_free: the window's last reference should go with it).
pub(crate) fn forget() {
    let _ = LAST.try_with(|s| s.take());
}
