//! The MPI tool information interface (MPI 4.1 chapter 15): control variables (`cvars`),
//! performance variables (`pvars`) with sessions and handles (`session`), categories, enums.
//! Events: none are defined (MPI_T_event_get_num gives 0, which the standard allows).
//!
//! This layer is independent of MPI_Init: it works before it, after MPI_Finalize, and from any
//! thread; one lock guards its state. Errors are the tools interface's classes of
//! `crate::error::ErrorClass` (the `T*` variants), which the boundary returns as its ABI's codes:
//! MPI_T calls never invoke error handlers (MPI 4.1 section 15.3.10).
pub mod categories;
pub mod cvars;
pub mod enums;
pub mod pvars;
pub mod session;
pub mod strings;

use crate::error::ErrorClass;
use std::sync::Mutex;

/// The result of an MPI_T call: an error is one of the tools interface's classes.
pub type TResult<T = ()> = Result<T, ErrorClass>;

// MPICH ABI constants (include/mpi.h).
pub const VERBOSITY_USER_BASIC: i32 = 221;
pub const VERBOSITY_USER_DETAIL: i32 = 222;
pub const VERBOSITY_TUNER_BASIC: i32 = 224;
pub const VERBOSITY_TUNER_DETAIL: i32 = 225;
pub const BIND_NO_OBJECT: i32 = 9700;
pub const BIND_MPI_COMM: i32 = 9701;
pub const SCOPE_CONSTANT: i32 = 60438;
pub const SCOPE_READONLY: i32 = 60439;
pub const SCOPE_LOCAL: i32 = 60440;
pub const SCOPE_ALL_EQ: i32 = 60444;
pub const CLASS_STATE: i32 = 240;
pub const CLASS_LEVEL: i32 = 241;
pub const CLASS_SIZE: i32 = 242;
pub const CLASS_PERCENTAGE: i32 = 243;
pub const CLASS_HIGHWATERMARK: i32 = 244;
pub const CLASS_LOWWATERMARK: i32 = 245;
pub const CLASS_COUNTER: i32 = 246;
pub const CLASS_AGGREGATE: i32 = 247;
pub const CLASS_TIMER: i32 = 248;
pub const CLASS_GENERIC: i32 = 249;
pub const MPI_THREAD_MULTIPLE: i32 = 3;

/// How many MPI_T_init_thread calls are not yet matched by MPI_T_finalize, per rank: in threads
/// mode the ranks of a process are separate MPI processes, keyed by their thread context
/// (`runtime::universe::context`, -1 in processes mode).
static INITS: Mutex<Vec<(i32, usize)>> = Mutex::new(Vec::new());

fn with_count<T>(f: impl FnOnce(&mut usize) -> T) -> T {
    let me = crate::runtime::job::context();
    let mut g = INITS.lock().unwrap_or_else(|p| p.into_inner());
    let i = match g.iter().position(|e| e.0 == me) {
        Some(i) => i,
        None => {
            g.push((me, 0));
            g.len() - 1
        }
    };
    f(&mut g[i].1)
}

/// MPI_T_init_thread: counts one more initialisation; the interface is thread safe, so the
/// provided level is always MPI_THREAD_MULTIPLE.
pub fn init() -> i32 {
    with_count(|n| *n += 1);
    MPI_THREAD_MULTIPLE
}

/// MPI_T_finalize: one fewer; the last one frees the rank's sessions.
pub fn finalize() -> TResult {
    let last = with_count(|n| {
        if *n == 0 {
            return Err(ErrorClass::TNotInitialized);
        }
        *n -= 1;
        Ok(*n == 0)
    })?;
    if last {
        session::free_all(crate::runtime::job::context());
    }
    Ok(())
}

/// Every MPI_T call but init needs the interface initialised.
pub fn ready() -> TResult {
    if with_count(|n| *n) == 0 {
        Err(ErrorClass::TNotInitialized)
    } else {
        Ok(())
    }
}

/// A checked index into a table of `len` entries.
pub fn index(i: i32, len: usize) -> TResult<usize> {
    usize::try_from(i).ok().filter(|&i| i < len).ok_or(ErrorClass::TInvalidIndex)
}
