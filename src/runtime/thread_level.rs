//! The thread support levels of MPI 4.1 section 11.2.3, as the engine knows them (the ABIs give
//! them their own integer values: `abi::thread_level`).

/// A level of thread support, in increasing order: each allows what the ones before it do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreadLevel {
    /// Only one thread will run.
    Single,
    /// Only the thread that initialised MPI makes MPI calls.
    Funneled,
    /// Any thread makes MPI calls, one at a time.
    Serialized,
    /// Any thread makes MPI calls at any time.
    Multiple,
}

impl ThreadLevel {
    /// The standard's name of the level (what `MPI_INFO_ENV`'s `thread_level` shows).
    pub fn name(self) -> &'static str {
        match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        }
    }
}
