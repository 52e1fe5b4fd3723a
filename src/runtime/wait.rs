//! Waiting for something to happen: spin while ranks have cores to themselves, then yield, then block
//! on the rank's futex doorbell, which peers ring when they give it work.
//!
//! Measured on a 2-core machine (`docs/design/engine.md` 4.3): with 8 ranks a fixed spin budget costs ~250 us
//! per hop and pure spinning ~42 ms, so the spin budget is zero when the job oversubscribes the CPUs it
//! may run on, and a few microseconds otherwise. Measured here with oxmpi (8 ranks, 2 cores, 2026-11):
//! blocking at once gave 8.5 us per ping-pong hop (4 pairs), 19 us with 6 idle ranks and 46 us per
//! barrier; yielding 10 times before blocking gave 3.8 us, 0.4 us and 14 us (the idle ranks soon block
//! and leave the cores to the busy pair; a partner that answers within a few yields is never slept on).
use super::futex;
use super::segment::Doorbell;
use super::threads::sched;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How long to spin and how often to yield before blocking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitPolicy {
    /// Iterations of `spin_loop` (each a PAUSE) before yielding.
    pub spins: u32,
    /// `sched_yield` calls before blocking on the futex.
    pub yields: u32,
    /// Whether to block at all (false only for OXMPI_WAIT=spin).
    pub block: bool,
}

impl WaitPolicy {
    /// Chooses the policy from OXMPI_WAIT (auto | spin | yield | block) and the ratio of ranks on
    /// this node to the CPUs this process may use.
    pub fn choose(ranks_on_node: usize) -> WaitPolicy {
        let mode = std::env::var("OXMPI_WAIT").unwrap_or_default();
        match mode.as_str() {
            "spin" => WaitPolicy { spins: u32::MAX, yields: 0, block: false },
            "yield" => WaitPolicy { spins: 0, yields: u32::MAX, block: false },
            "block" => WaitPolicy { spins: 0, yields: 0, block: true },
            _ => {
                // OXMPI_YIELDS overrides the number of yields before blocking (a tuning knob).
                let yields = std::env::var("OXMPI_YIELDS").ok().and_then(|v| v.parse().ok());
                if ranks_on_node > available_cpus() {
                    WaitPolicy { spins: 0, yields: yields.unwrap_or(10), block: true }
                } else {
                    // 2000 pauses: about 50 us on the development machine (25 ns per PAUSE). With
                    // 20000 (0.5 ms) a rank sharing its core with its partner, which happens when
                    // other programs load the machine, made calls take 1 ms; ping-pong latency
                    // and 4 MiB bandwidth measured the same with either budget.
                    WaitPolicy { spins: 2_000, yields: yields.unwrap_or(20), block: true }
                }
            }
        }
    }

    /// Waits until the doorbell's sequence differs from `seen` or `arrived()` says there is new
    /// input, or returns early (spurious wake-ups and a 100 ms timeout are harmless: the caller
    /// re-checks its condition). Senders of messages ring the doorbell only when someone sleeps
    /// (`notify`), so while spinning the waiter watches its channels through `arrived`.
    ///
    /// `budget` is the caller's adaptive spin budget (at most `self.spins`): halved each time a
    /// spin phase ends empty-handed, doubled when the event comes while spinning. So when other
    /// work shares the cores (a loaded machine, not only our own oversubscription) spinning fades
    /// out instead of burning the time slices the peer needs (`docs/design/engine.md` 4.3 item 3).
    pub fn wait(&self, bell: &Doorbell, seen: u32, budget: &AtomicU32, arrived: impl Fn() -> bool) {
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
        let spins = budget.load(Ordering::Relaxed).min(self.spins);
        let mut i = 0u32;
        while i < spins {
            if changed() {
                if spins < self.spins {
                    budget.store(spins.saturating_mul(2).max(64).min(self.spins), Ordering::Relaxed);
                }
                return;
            }
            std::hint::spin_loop();
            i += 1;
        }
        if spins > 0 {
            budget.store(spins / 2, Ordering::Relaxed);
        }
        let mut y = 0u32;
        while y < self.yields {
            if changed() {
                // The peer answered soon after all: spinning may pay again.
                if self.spins > 0 {
                    budget.store(spins.saturating_mul(2).max(64).min(self.spins), Ordering::Relaxed);
                }
                return;
            }
            std::thread::yield_now();
            y += 1;
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
    use std::sync::Arc;

    #[test]
    fn blocked_waiter_is_woken() {
        let bell = Arc::new(Doorbell { seq: AtomicU32::new(0), sleepers: AtomicU32::new(0), parked: AtomicU32::new(0), inbox: std::sync::atomic::AtomicU64::new(0), carrier: AtomicU32::new(0) });
        let b2 = bell.clone();
        let t = std::thread::spawn(move || {
            let p = WaitPolicy { spins: 0, yields: 0, block: true };
            let budget = AtomicU32::new(0);
            while b2.seq.load(Ordering::Acquire) == 0 {
                p.wait(&b2, 0, &budget, || false);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        ring(&bell);
        t.join().unwrap();
    }
}
