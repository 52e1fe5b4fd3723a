//! File I/O counters of each rank: how many reads and writes of a file it made through MPI-IO
//! and how many bytes they moved (what the rank asked for, counted once per MPI call whatever
//! the collective buffering did with it; the aggregation traffic of collective buffering shows
//! as collective transfers, `Kind::Coll`). Open MPI's monitoring has no I/O counters; the
//! performance variables follow its naming: `io_monitoring_{read,write}_{count,size}`.
//!
//! Recorded under the same switch as the other counters (`recording`), at the same cost when
//! off: one relaxed load.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Which way the data went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    Read = 0,
    Write = 1,
}

/// One rank's counters: `[dir] = (operations, bytes)`.
#[derive(Default)]
pub struct IoCounters {
    ops: [AtomicU64; 2],
    bytes: [AtomicU64; 2],
}

impl IoCounters {
    /// `(operations, bytes)` in direction `d`.
    pub fn get(&self, d: Dir) -> (u64, u64) {
        (self.ops[d as usize].load(Ordering::Relaxed), self.bytes[d as usize].load(Ordering::Relaxed))
    }
    fn add(&self, d: Dir, bytes: u64) {
        self.ops[d as usize].fetch_add(1, Ordering::Relaxed);
        self.bytes[d as usize].fetch_add(bytes, Ordering::Relaxed);
    }
    /// Zeroes the counters (a flush).
    pub fn clear(&self) {
        for a in self.ops.iter().chain(self.bytes.iter()) {
            a.store(0, Ordering::Relaxed);
        }
    }
}

/// One slot per world rank of this process.
static RANKS: OnceLock<Box<[IoCounters]>> = OnceLock::new();

/// The I/O counters of world rank `me` in a job of `n` ranks.
pub fn counters(me: usize, n: usize) -> &'static IoCounters {
    let all = RANKS.get_or_init(|| (0..n.max(me + 1)).map(|_| IoCounters::default()).collect());
    &all[me.min(all.len() - 1)]
}

/// Records one read by world rank `me` (of `n`) that brought `bytes` bytes.
#[inline]
pub fn record_read(me: usize, n: usize, bytes: u64) {
    record(me, n, Dir::Read, bytes);
}

/// Records one write by world rank `me` (of `n`) of `bytes` bytes.
#[inline]
pub fn record_write(me: usize, n: usize, bytes: u64) {
    record(me, n, Dir::Write, bytes);
}

#[inline]
fn record(me: usize, n: usize, d: Dir, bytes: u64) {
    if super::on() && me < n && super::recording(me, n) {
        counters(me, n).add(d, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_while_recording() {
        // World rank 3 of 6: no other test of the library records for it.
        let (me, n) = (3, 6);
        let before = (counters(me, n).get(Dir::Read), counters(me, n).get(Dir::Write));
        super::super::hold_rank(me, n, true);
        record_read(me, n, 100);
        record_read(me, n, 0);
        record_write(me, n, 7);
        record_write(7, n, 7);
        super::super::hold_rank(me, n, false);
        let c = counters(me, n);
        assert_eq!(c.get(Dir::Read), (before.0 .0 + 2, before.0 .1 + 100));
        assert_eq!(c.get(Dir::Write), (before.1 .0 + 1, before.1 .1 + 7));
    }
}
