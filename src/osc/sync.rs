//! Waiting primitives on words of a window's shared region: a mutex (Drepper, "Futexes Are
//! Tricky", 2011, mutex #3), a reader-writer lock and a doorbell. A waiter yields a few times and
//! then sleeps on a futex (with a timeout, re-checking), never spins: ranks oversubscribe cores.
use crate::runtime::futex;
use crate::runtime::threads::sched;
use std::sync::atomic::{AtomicU32, Ordering::*};
use std::time::Duration;

/// Yields before sleeping on the futex.
const YIELDS: u32 = 10;
const NAP: Option<Duration> = Some(Duration::from_millis(50));

/// A mutex word: 0 free, 1 held, 2 held with (possible) waiters.
pub fn lock(w: &AtomicU32) {
    for _ in 0..YIELDS {
        if w.compare_exchange(0, 1, Acquire, Relaxed).is_ok() {
            return;
        }
        sched::yield_now();
    }
    while w.swap(2, Acquire) != 0 {
        sched::futex_wait(w, 2, NAP);
    }
}

pub fn unlock(w: &AtomicU32) {
    if w.swap(0, Release) == 2 {
        futex::wake_all(w);
    }
}

/// Reader-writer lock word: `WRITER`, or the number of readers.
pub const WRITER: u32 = 1 << 31;

/// Takes the lock (exclusive or shared); waiters count themselves in `waiters`. Returns false,
/// without the lock, when `give_up` holds while it waits (checked at least every `NAP`): a holder
/// may have died (ULFM), and a dead holder never releases.
pub fn rw_acquire(state: &AtomicU32, waiters: &AtomicU32, exclusive: bool, give_up: &dyn Fn() -> bool) -> bool {
    let mut tries = 0;
    loop {
        let s = match take(state, exclusive) {
            Ok(()) => return true,
            Err(busy) => busy,
        };
        if give_up() {
            return false;
        }
        if tries < YIELDS {
            tries += 1;
            sched::yield_now();
            continue;
        }
        // Dekker pairing with `rw_release`: count ourselves, then re-check the word in the
        // futex call; a releaser changes the word, then sees us and wakes.
        waiters.fetch_add(1, SeqCst);
        sched::futex_wait(state, s, NAP);
        waiters.fetch_sub(1, SeqCst);
    }
}

/// Takes the lock if it is free now (retrying only when another taker changed the word
/// meanwhile); whether it did. Acquire on success, as `rw_acquire`.
pub fn rw_try_acquire(state: &AtomicU32, exclusive: bool) -> bool {
    take(state, exclusive).is_ok()
}

/// `rw_try_acquire`, giving the busy word it saw on failure (what a waiter sleeps on).
fn take(state: &AtomicU32, exclusive: bool) -> Result<(), u32> {
    loop {
        let s = state.load(Acquire);
        let free = if exclusive { s == 0 } else { s & WRITER == 0 };
        if !free {
            return Err(s);
        }
        let new = if exclusive { WRITER } else { s + 1 };
        if state.compare_exchange(s, new, Acquire, Relaxed).is_ok() {
            return Ok(());
        }
    }
}

pub fn rw_release(state: &AtomicU32, waiters: &AtomicU32, exclusive: bool) {
    if exclusive {
        state.store(0, Release);
    } else {
        state.fetch_sub(1, Release);
    }
    std::sync::atomic::fence(SeqCst);
    if waiters.load(SeqCst) != 0 {
        futex::wake_all(state);
    }
}

/// Rings a doorbell after changing something its owner waits for.
pub fn ring(bell: &AtomicU32, sleepers: &AtomicU32) {
    bell.fetch_add(1, SeqCst);
    if sleepers.load(SeqCst) != 0 {
        futex::wake_all(bell);
    }
}

/// Waits on doorbell `bell` until `ready()` holds. `ready` may consume what it checks (PSCW
/// counters are taken by it), so every true answer ends the wait: one ignored would be lost.
pub fn wait_until(bell: &AtomicU32, sleepers: &AtomicU32, mut ready: impl FnMut() -> bool) {
    let mut tries = 0;
    loop {
        let seen = bell.load(SeqCst);
        if ready() {
            return;
        }
        if tries < YIELDS {
            tries += 1;
            sched::yield_now();
            continue;
        }
        sleepers.fetch_add(1, SeqCst);
        if ready() {
            sleepers.fetch_sub(1, SeqCst);
            return;
        }
        sched::futex_wait(bell, seen, NAP);
        sleepers.fetch_sub(1, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn try_acquire_takes_only_a_free_lock() {
        let (state, waiters) = (AtomicU32::new(0), AtomicU32::new(0));
        assert!(rw_try_acquire(&state, true));
        assert!(!rw_try_acquire(&state, true) && !rw_try_acquire(&state, false), "a writer excludes all");
        rw_release(&state, &waiters, true);
        assert!(rw_try_acquire(&state, false) && rw_try_acquire(&state, false), "readers share");
        assert!(!rw_try_acquire(&state, true), "readers exclude a writer");
        rw_release(&state, &waiters, false);
        rw_release(&state, &waiters, false);
        assert_eq!(state.load(Relaxed), 0);
    }

    #[test]
    fn mutex_and_rwlock_exclude() {
        let words = Arc::new([AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)]);
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let ts: Vec<_> = (0..4)
            .map(|i| {
                let (w, c) = (words.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        if i % 2 == 0 {
                            lock(&w[0]);
                            let v = c.load(Relaxed);
                            c.store(v + 1, Relaxed);
                            unlock(&w[0]);
                        } else {
                            assert!(rw_acquire(&w[1], &w[2], true, &|| false));
                            let v = c.load(Relaxed);
                            c.store(v + 1, Relaxed);
                            rw_release(&w[1], &w[2], true);
                        }
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        // Two of each kind: each pair excludes itself.
        assert!(counter.load(Relaxed) <= 8000);
        assert_eq!(words[0].load(Relaxed), 0);
        assert_eq!(words[1].load(Relaxed), 0);
    }
}
