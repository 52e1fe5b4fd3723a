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

/// How much a variable tells and to whom (MPI 4.1 section 15.3.1): tools filter by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    UserBasic,
    UserDetail,
    UserAll,
    TunerBasic,
    TunerDetail,
    TunerAll,
    MpidevBasic,
    MpidevDetail,
    MpidevAll,
}

/// The kind of MPI object a variable is bound to (MPI 4.1 section 15.3.2): a handle of a
/// variable bound to an object is allocated for one such object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    NoObject,
    Comm,
    Datatype,
    Errhandler,
    File,
    Group,
    Op,
    Request,
    Win,
    Message,
    Info,
}

/// Where a control variable may be changed, and which processes must agree (MPI 4.1 section
/// 15.3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Constant,
    Readonly,
    Local,
    Group,
    GroupEq,
    All,
    AllEq,
}

/// A performance variable's class (MPI 4.1 section 15.3.7): what its value means, and so how
/// start, stop, reset and write act on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvarClass {
    State,
    Level,
    Size,
    Percentage,
    HighWatermark,
    LowWatermark,
    Counter,
    Aggregate,
    Timer,
    Generic,
}


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

/// MPI_T_init_thread: counts one more initialisation. The interface is thread safe whatever
/// level is asked for, so the boundary always provides MPI_THREAD_MULTIPLE.
pub fn init() {
    with_count(|n| *n += 1);
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
