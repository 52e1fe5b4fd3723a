//! State the C boundary keeps per rank, beside the instance (which cannot hold boundary types:
//! it sits below the boundary): one value per rank of the job, made at the first use. In
//! processes mode a process uses only its own rank's value; in threads mode each rank of the
//! process has its own, as MPI requires of per-process state.
use crate::comm::Universe;
use std::sync::OnceLock;

pub struct RankLocal<T> {
    values: OnceLock<Box<[T]>>,
}

impl<T: Default> RankLocal<T> {
    pub const fn new() -> RankLocal<T> {
        RankLocal { values: OnceLock::new() }
    }

    /// The value of `u`'s rank.
    pub fn get(&'static self, u: &Universe) -> &'static T {
        &self.values.get_or_init(|| (0..u.size).map(|_| T::default()).collect())[u.rank]
    }
}
