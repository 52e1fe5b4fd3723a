//! The state every rank of an open file shares (MPI 4.1 sections 14.4.4 and 14.6.1): the shared
//! file pointer and the lock of atomic mode, in one page of shared memory that all ranks of the
//! file map. Rank 0 of the file creates it as a memfd; the others open it as
//! `/proc/<pid>/fd/<fd>` of rank 0 (in threads mode that is our own process) and map it. The
//! mapping lives until the file is closed; both modes use the same code.
use crate::runtime::shared_map::SharedMap;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The shared page's contents (zero-filled at creation: pointer 0, unlocked).
#[repr(C)]
struct Area {
    /// The shared file pointer, in etypes of the current view.
    pointer: AtomicU64,
    /// 1 while a rank transfers data in atomic mode.
    lock: AtomicU32,
}

const LEN: usize = 4096;

pub struct SharedArea {
    map: SharedMap,
}

impl SharedArea {
    /// Creates the page; returns it and the descriptor the other ranks open (to be closed by
    /// the caller once they have).
    pub fn create() -> io::Result<(SharedArea, i32)> {
        let (map, fd) = SharedMap::create(c"oxmpi-file", LEN)?;
        Ok((SharedArea { map }, fd))
    }

    /// Maps the page process `pid` created as descriptor `fd`.
    pub fn open(pid: i32, fd: i32) -> io::Result<SharedArea> {
        Ok(SharedArea { map: SharedMap::open(pid, fd, LEN)? })
    }

    fn area(&self) -> &Area {
        // SAFETY: the live mapping starts with an `Area` (zero-filled is valid), page aligned.
        unsafe { &*(self.map.base() as *const Area) }
    }

    /// The shared file pointer (etypes).
    pub fn pointer(&self) -> u64 {
        self.area().pointer.load(Ordering::SeqCst)
    }
    pub fn set_pointer(&self, v: u64) {
        self.area().pointer.store(v, Ordering::SeqCst)
    }
    /// Moves the shared pointer `n` etypes on; returns where it was.
    pub fn fetch_add(&self, n: u64) -> u64 {
        self.area().pointer.fetch_add(n, Ordering::SeqCst)
    }

    /// Runs `f` holding the file's atomic-mode lock. The holder never waits for another rank
    /// while holding it (it only calls the backend), so a spin with yields cannot deadlock, not
    /// even between fibers of one thread.
    pub fn locked<T>(&self, f: impl FnOnce() -> T) -> T {
        let l = &self.area().lock;
        while l.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::thread::yield_now();
        }
        let r = f();
        l.store(0, Ordering::Release);
        r
    }
}
