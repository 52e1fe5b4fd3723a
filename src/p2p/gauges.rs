//! Cheap per-rank gauges of the point-to-point engine, read by MPI_T performance variables:
//! the unexpected-message queue length with its high and low watermarks, eager versus
//! rendezvous sends, and the time spent blocked in waits. Relaxed atomics only, written under the
//! engine lock; each event costs one store (the watermarks one compare more, and the wait timer runs only while
//! a tool has a timer handle started).
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Started `p2p_wait_blocked_ns` handles in the process: while 0, waits are not timed.
static TIMING: AtomicU32 = AtomicU32::new(0);

#[derive(Debug)]
pub struct Gauges {
    /// Messages in the unexpected queue now (written under the engine lock).
    unexpected: AtomicU64,
    /// Highest and lowest queue length since the last `restart_watermarks`.
    high: AtomicU64,
    low: AtomicU64,
    /// Sends that carried their data in the rings, and sends that went by rendezvous.
    eager: AtomicU64,
    rendezvous: AtomicU64,
    /// Nanoseconds spent in blocking waits while timing was on.
    blocked_ns: AtomicU64,
}

impl Default for Gauges {
    fn default() -> Gauges {
        Gauges { unexpected: AtomicU64::new(0), high: AtomicU64::new(0), low: AtomicU64::new(0), eager: AtomicU64::new(0), rendezvous: AtomicU64::new(0), blocked_ns: AtomicU64::new(0) }
    }
}

impl Gauges {
    /// The unexpected queue now holds `n` messages.
    pub fn set_unexpected(&self, n: usize) {
        let n = n as u64;
        self.unexpected.store(n, Relaxed);
        if n > self.high.load(Relaxed) {
            self.high.fetch_max(n, Relaxed);
        }
        if n < self.low.load(Relaxed) {
            self.low.fetch_min(n, Relaxed);
        }
    }

    pub fn unexpected(&self) -> u64 {
        self.unexpected.load(Relaxed)
    }

    /// The (high, low) watermarks since the last restart, and restarts both at the current level.
    pub fn restart_watermarks(&self) -> (u64, u64) {
        let now = self.unexpected();
        (self.high.swap(now, Relaxed).max(now), self.low.swap(now, Relaxed).min(now))
    }

    /// The (high, low) watermarks since the last restart.
    pub fn watermarks(&self) -> (u64, u64) {
        let now = self.unexpected();
        (self.high.load(Relaxed).max(now), self.low.load(Relaxed).min(now))
    }

    /// Counts one send. Called under the engine lock (the only writer), so a plain load and store
    /// do: no locked read-modify-write on the send path.
    pub fn sent(&self, eager: bool) {
        let c = if eager { &self.eager } else { &self.rendezvous };
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// Fraction of this rank's sends that went eager, in [0, 1] (0 before any send).
    pub fn eager_fraction(&self) -> f64 {
        let (e, r) = (self.eager.load(Relaxed), self.rendezvous.load(Relaxed));
        if e + r == 0 {
            0.0
        } else {
            e as f64 / (e + r) as f64
        }
    }

    /// A blocking wait begins: the start time when timing is on.
    pub fn wait_begins() -> Option<Instant> {
        (TIMING.load(Relaxed) > 0).then(Instant::now)
    }

    pub fn wait_ends(&self, began: Option<Instant>) {
        if let Some(t) = began {
            self.blocked_ns.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        }
    }

    pub fn blocked_ns(&self) -> u64 {
        self.blocked_ns.load(Relaxed)
    }

    /// A timer handle starts (`true`) or stops.
    pub fn timing(on: bool) {
        if on {
            TIMING.fetch_add(1, Relaxed);
        } else {
            TIMING.fetch_sub(1, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_follow_the_level_since_restart() {
        let g = Gauges::default();
        for n in [1, 3, 2] {
            g.set_unexpected(n);
        }
        assert_eq!(g.restart_watermarks(), (3, 0));
        g.set_unexpected(1);
        g.set_unexpected(4);
        assert_eq!(g.watermarks(), (4, 1));
        g.sent(true);
        g.sent(true);
        g.sent(false);
        assert!((g.eager_fraction() - 2.0 / 3.0).abs() < 1e-12);
    }
}
