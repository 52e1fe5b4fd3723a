//! Threads mode: one value per rank slot (addresses found in that rank's program instance), read
//! on every call that converts a handle or a sentinel, so read without a lock. A lock's reader
//! count is a cache line every rank writes: with ranks on different cores each read moved it
//! between them (+120 ns per round trip of a 2-rank ping-pong under Open MPI's ABI).
//!
//! Writers (the host, as it loads an instance) take a mutex and publish with Release; readers
//! load with Acquire and see either the old or the new table or value, both complete. Neither
//! is freed once published: a reader holds no lock that would say when it is done. A value is
//! replaced only when its slot's instance is loaded again (a spawn), and a table only when it
//! grows (doubling), so what stays behind is bounded by the instances loaded.
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

pub struct RankTable<T: 'static> {
    table: AtomicPtr<Slots<T>>,
    write: Mutex<()>,
}

struct Slots<T: 'static> {
    vals: Box<[AtomicPtr<T>]>,
}

impl<T: Send + Sync + 'static> RankTable<T> {
    pub const fn new() -> Self {
        RankTable { table: AtomicPtr::new(std::ptr::null_mut()), write: Mutex::new(()) }
    }

    /// Sets slot `slot`'s value.
    pub fn set(&self, slot: usize, v: T) {
        let _w = self.write.lock().unwrap_or_else(|p| p.into_inner());
        let cur = self.table.load(Ordering::Acquire);
        // SAFETY: a published table is never freed (module comment).
        let cur_len = if cur.is_null() { 0 } else { unsafe { (&(*cur).vals).len() } };
        let t = if slot < cur_len {
            cur
        } else {
            let n = (slot + 1).max(2 * cur_len).max(8);
            let vals: Box<[AtomicPtr<T>]> = (0..n)
                .map(|i| {
                    // SAFETY: as above; old values move over as they are (still never freed).
                    let old = if i < cur_len { unsafe { (&(*cur).vals)[i].load(Ordering::Acquire) } } else { std::ptr::null_mut() };
                    AtomicPtr::new(old)
                })
                .collect();
            let t = Box::into_raw(Box::new(Slots { vals }));
            self.table.store(t, Ordering::Release);
            t
        };
        // SAFETY: `t` is published and never freed; `slot` is in range (grown above).
        unsafe { (&(*t).vals)[slot].store(Box::into_raw(Box::new(v)), Ordering::Release) };
    }

    /// Slot `slot`'s value, if set.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<&'static T> {
        let t = self.table.load(Ordering::Acquire);
        if t.is_null() {
            return None;
        }
        // SAFETY: published tables and values are never freed and were complete when published
        // (Release above, Acquire here).
        unsafe {
            let p = (&(*t).vals).get(slot)?.load(Ordering::Acquire);
            p.as_ref()
        }
    }

    /// The calling rank's value (none outside a rank).
    #[inline]
    pub fn current(&self) -> Option<&'static T> {
        usize::try_from(crate::runtime::job::context()).ok().and_then(|r| self.get(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn set_grow_and_replace() {
        static T: RankTable<(usize, usize)> = RankTable::new();
        assert!(T.get(0).is_none());
        T.set(1, (1, 2));
        assert!(T.get(0).is_none());
        assert_eq!(T.get(1), Some(&(1, 2)));
        T.set(40, (3, 4));
        assert_eq!(T.get(1), Some(&(1, 2)));
        assert_eq!(T.get(40), Some(&(3, 4)));
        T.set(1, (5, 6));
        assert_eq!(T.get(1), Some(&(5, 6)));
        assert!(T.get(1000).is_none());
    }
}
