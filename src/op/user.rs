//! User-defined reduction operations (MPI_Op_create, MPI 4.1 section 6.9.5): the user's function
//! and whether it commutes, kept in a per-rank table that gives the op handles their index.
//!
//! The table is per rank (held by the `Universe`), as groups are: in threads mode the ranks share
//! the process but not their handles.
use std::sync::Mutex;

/// The application's combining function as the C boundary registered it: its address and which
/// of the boundary's signatures it has, both opaque to the engine (the boundary's `Caller` makes
/// the call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserFn {
    pub addr: usize,
    pub signature: u8,
}

/// How the C boundary calls `f` on `count` elements `size` bytes apart:
/// `caller(f, in, inout, count, datatype, size)`, with `datatype` the handle the application gave.
///
/// # Safety
/// `in` and `inout` hold `count` elements of the datatype; `f` is a function the boundary made.
pub type Caller = unsafe fn(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: i32, size: usize);

/// A user-defined op.
#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    pub f: UserFn,
    pub commutative: bool,
}

/// Indices stop at 2^26 - 1: the handle has 26 index bits.
const MAX_INDEX: usize = (1 << 26) - 1;

/// The live user ops of one rank, by index; freed indices are reused.
#[derive(Default)]
pub struct OpTable {
    slots: Mutex<(Vec<Option<UserOp>>, Vec<usize>)>,
}

impl OpTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Option<UserOp>>, Vec<usize>)> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `op`; returns its index, or None if all 2^26 indices are in use.
    pub fn insert(&self, op: UserOp) -> Option<usize> {
        let mut t = self.lock();
        if let Some(i) = t.1.pop() {
            t.0[i] = Some(op);
            return Some(i);
        }
        if t.0.len() > MAX_INDEX {
            return None;
        }
        t.0.push(Some(op));
        Some(t.0.len() - 1)
    }

    /// The live op at index `i`.
    pub fn get(&self, i: usize) -> Option<UserOp> {
        self.lock().0.get(i).copied().flatten()
    }

    /// Replaces the function of the live op at index `i` (MPICH's C++ bindings re-register an
    /// op's function as a C++ one after creating it); false if `i` is not live.
    pub fn set_fn(&self, i: usize, f: UserFn) -> bool {
        match self.lock().0.get_mut(i) {
            Some(Some(op)) => {
                op.f = f;
                true
            }
            _ => false,
        }
    }

    /// Frees index `i`; false if it was not live. Reductions in flight keep their own copy of
    /// the function, so freeing an op a pending nonblocking collective uses is harmless, as MPI
    /// requires (MPI 4.1 section 6.9.5: MPI_Op_free marks the op for deallocation).
    pub fn remove(&self, i: usize) -> bool {
        let mut t = self.lock();
        match t.0.get_mut(i).and_then(Option::take) {
            Some(_) => {
                t.1.push(i);
                true
            }
            None => false,
        }
    }
}
