//! Waiting for something to happen: a rank with a core of its own spins (for `LINGER_US`), then
//! blocks on its futex doorbell, which peers ring when they give it work; on an oversubscribed
//! node it yields a few times, then blocks.
//!
//! Measured on a 2-core machine (`docs/design/engine.md` 4.3): with 8 ranks a fixed spin budget costs ~250 us
//! per hop and pure spinning ~42 ms, so there is no spinning when the job oversubscribes the CPUs it
//! may run on. Measured here with oxmpi (8 ranks, 2 cores, 2026-11):
//! blocking at once gave 8.5 us per ping-pong hop (4 pairs), 19 us with 6 idle ranks and 46 us per
//! barrier; yielding 10 times before blocking gave 3.8 us, 0.4 us and 14 us (the idle ranks soon block
//! and leave the cores to the busy pair; a partner that answers within a few yields is never slept on).
use super::futex;
use super::segment::Doorbell;
use super::threads::sched;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long to spin and how often to yield before blocking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitPolicy {
    /// Iterations of `spin_loop` (each a PAUSE and a look at the channels) between two looks at
    /// the clock while lingering; u32::MAX (OXMPI_WAIT=spin) spins for ever; 0 spins not at all.
    pub spins: u32,
    /// `sched_yield` calls before blocking (oversubscribed nodes, OXMPI_WAIT=yield).
    pub yields: u32,
    /// Whether to block at all (false for OXMPI_WAIT=spin and yield).
    pub block: bool,
    /// How long a rank with a core of its own spins before it blocks (`spins` > 0).
    pub linger: Duration,
}

/// Default of OXMPI_LINGER_US. Measured here (8-byte ping-pong, 2 ranks, 2 cores loaded by two
/// busy loops and other jobs, 10 runs each, median of each run in us): spinning for ever 0.19 in
/// 7 runs, worst 85; spinning 4 ms then blocking 0.20 in 6, worst 15.5; 1 ms: worst 6081 (the
/// partner off its core longer than the linger); the former adaptive spin (halved after each
/// empty spell) then 20 yields then a futex: median 60, worst 4668. Yields while spinning gave
/// 2-5 ms: on CFS a `sched_yield` hands the core to a busy loop for its whole slice. And a rank
/// that blocked is woken late: having spun, it has used its CFS share, so its wake-up does not
/// preempt the busy loop. Hence: no yields, and block only after a time slice's worth of spinning.
const LINGER_US: u64 = 4000;

/// How long a waiter that yields for ever goes without looking at its condition (see `wait`).
const RECHECK: Duration = Duration::from_millis(1);

impl WaitPolicy {
    /// Chooses the policy from OXMPI_WAIT (auto | spin | yield | block) and the ratio of ranks on
    /// this node to the CPUs this process may use.
    pub fn choose(ranks_on_node: usize) -> WaitPolicy {
        let mode = std::env::var("OXMPI_WAIT").unwrap_or_default();
        let none = Duration::ZERO;
        match mode.as_str() {
            "spin" => WaitPolicy { spins: u32::MAX, yields: 0, block: false, linger: none },
            "yield" => WaitPolicy { spins: 0, yields: u32::MAX, block: false, linger: none },
            "block" => WaitPolicy { spins: 0, yields: 0, block: true, linger: none },
            _ if ranks_on_node > available_cpus() => {
                // Oversubscribed: a spinning rank would burn the time slice of the rank it waits
                // for (engine.md 4.3: 30x slower than blocking at once). A few yields first let
                // a partner that is about to answer do so. OXMPI_YIELDS tunes their number.
                let yields = std::env::var("OXMPI_YIELDS").ok().and_then(|v| v.parse().ok());
                WaitPolicy { spins: 0, yields: yields.unwrap_or(10), block: true, linger: none }
            }
            _ => {
                let us = std::env::var("OXMPI_LINGER_US").ok().and_then(|v| v.parse().ok()).unwrap_or(LINGER_US);
                // 256 looks at the channels (a few us) between looks at the clock.
                WaitPolicy { spins: if us > 0 { 256 } else { 0 }, yields: 0, block: true, linger: Duration::from_micros(us) }
            }
        }
    }

    /// Waits until the doorbell's sequence differs from `seen` or `arrived()` says there is new
    /// input, or returns early (spurious wake-ups and a 100 ms timeout are harmless: the caller
    /// re-checks its condition). Senders of messages ring the doorbell only when someone sleeps
    /// (`notify`), so while spinning the waiter watches its channels through `arrived`.
    pub fn wait(&self, bell: &Doorbell, seen: u32, arrived: impl Fn() -> bool) {
        let changed = || bell.seq.load(Ordering::Acquire) != seen || arrived();
        if sched::in_fiber() {
            // A rank fiber: its carrier runs other ranks until this one has news. Counted as
            // parked, so senders ring the bell (Dekker pairing as for sleepers below): the
            // carrier then checks one word, not every channel.
            bell.parked.fetch_add(1, Ordering::SeqCst);
            std::sync::atomic::fence(Ordering::SeqCst);
            if !changed() {
                sched::park(&|| bell.seq.load(Ordering::Acquire) != seen, Some(bell));
            }
            bell.parked.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        if self.spins > 0 {
            let start = std::time::Instant::now();
            loop {
                for _ in 0..self.spins {
                    if changed() {
                        return;
                    }
                    std::hint::spin_loop();
                }
                if self.spins == u32::MAX || start.elapsed() >= self.linger {
                    break;
                }
            }
        }
        if self.yields == u32::MAX && !self.block {
            // Yielding for ever (a rank of a job over nodes, or OXMPI_WAIT=yield): back to the
            // caller's progress pass and condition every `RECHECK`, as a sleeper's futex times
            // out. A condition that changes without a packet or a ring (none is known) then
            // costs a millisecond, not the wait until some packet (UCX's keepalive, 20 s).
            let start = std::time::Instant::now();
            loop {
                for _ in 0..64 {
                    if changed() {
                        return;
                    }
                    std::thread::yield_now();
                }
                if start.elapsed() >= RECHECK {
                    return;
                }
            }
        }
        for _ in 0..self.yields {
            if changed() {
                return;
            }
            std::thread::yield_now();
        }
        if !self.block {
            return;
        }
        // Dekker pairing with `ring` and `notify`: announce the sleeper, then re-check both the
        // sequence and the channels; a sender either sees the sleeper or we see its message.
        bell.sleepers.fetch_add(1, Ordering::SeqCst);
        std::sync::atomic::fence(Ordering::SeqCst);
        if !changed() {
            futex::wait(&bell.seq, seen, Some(Duration::from_millis(100)));
        }
        bell.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Tells a rank that a message was pushed into one of its channels. The rank sees the message by
/// itself unless it sleeps, so the doorbell is rung only for sleepers: the common path is a fence
/// and a load of a line the receiver does not write while it spins.
/// Pairs with the waiter's `sleepers` increment + fence + channel check in `WaitPolicy::wait`.
pub fn notify(bell: &Doorbell) {
    std::sync::atomic::fence(Ordering::SeqCst);
    if bell.sleepers.load(Ordering::Relaxed) != 0 || bell.parked.load(Ordering::Relaxed) != 0 {
        ring(bell);
    }
}

/// Rings a rank's doorbell: something changed for it that it cannot see in its channels (a freed
/// slot, a completion by another thread). Wakes sleepers only when there are some.
pub fn ring(bell: &Doorbell) {
    bell.seq.fetch_add(1, Ordering::SeqCst);
    if bell.sleepers.load(Ordering::SeqCst) != 0 {
        futex::wake_all(&bell.seq);
        let carrier = bell.carrier.load(Ordering::SeqCst);
        if carrier != 0 {
            sched::wake_carrier(carrier as usize - 1);
        }
    }
}

/// CPUs this process may run on (sched_getaffinity), at least 1.
pub fn available_cpus() -> usize {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set) as usize;
            if n > 0 {
                return n;
            }
        }
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;

    #[test]
    fn blocked_waiter_is_woken() {
        let bell = Arc::new(Doorbell { seq: AtomicU32::new(0), sleepers: AtomicU32::new(0), parked: AtomicU32::new(0), inbox: std::sync::atomic::AtomicU64::new(0), carrier: AtomicU32::new(0) });
        let b2 = bell.clone();
        let t = std::thread::spawn(move || {
            let p = WaitPolicy { spins: 0, yields: 0, block: true, linger: Duration::ZERO };
            while b2.seq.load(Ordering::Acquire) == 0 {
                p.wait(&b2, 0, || false);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        ring(&bell);
        t.join().unwrap();
    }

    /// A waiter that yields for ever still goes back to its caller's condition now and then,
    /// with nothing rung and nothing arrived (a job over nodes: its waiters never sleep).
    #[test]
    fn yielding_waiter_returns_to_recheck() {
        let (tx, rx) = std::sync::mpsc::channel();
        // Detached if it never returns (the failure): the assertion below ends the test.
        std::thread::spawn(move || {
            let bell = Doorbell { seq: AtomicU32::new(0), sleepers: AtomicU32::new(0), parked: AtomicU32::new(0), inbox: std::sync::atomic::AtomicU64::new(0), carrier: AtomicU32::new(0) };
            let p = WaitPolicy { spins: 16, yields: u32::MAX, block: false, linger: Duration::ZERO };
            let looks = std::sync::atomic::AtomicUsize::new(0);
            p.wait(&bell, 0, || {
                looks.fetch_add(1, Ordering::Relaxed);
                false
            });
            let _ = tx.send(looks.load(Ordering::Relaxed));
        });
        let looks = rx.recv_timeout(Duration::from_secs(30)).expect("the waiter never went back to its condition");
        assert!(looks > 16, "it yielded, looking between yields, before it returned ({looks} looks)");
    }
}
