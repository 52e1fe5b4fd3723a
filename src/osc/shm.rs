//! The shared region of one window: a memfd that every rank of the window maps. It holds one
//! control block per rank (where its memory is, its locks, its PSCW doorbell, the regions attached
//! to a dynamic window), the PSCW counters and, for `Win_allocate(_shared)`, the window memory.
//!
//! Layout (control blocks 128-byte aligned, data page aligned):
//! ```text
//! RankArea[n] | post[n * n] | done[n * n] | data (rank 0's bytes, rank 1's, ...)
//! ```
//! Rank 0 of the window creates the memfd; the others open it as `/proc/<pid>/fd/<fd>` of rank 0
//! (same user, so allowed; in threads mode it is our own process) and map it; all then close their
//! descriptor, the mappings stay until `MPI_Win_free`.
use crate::runtime::shared_map::SharedMap;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Regions of a dynamic window whose bounds the control block holds itself; a rank may attach any
/// number, the others then read its whole list from its own memory (`RankArea::overflow`).
pub const MAX_REGIONS: usize = 64;

/// What the other ranks need to know about one rank of the window, and its synchronisation words.
#[repr(C, align(128))]
pub struct RankArea {
    /// The rank's window memory as an address in its own process (user memory, or its mapping of
    /// the data area); 0 for a dynamic window.
    pub base: AtomicU64,
    pub size: AtomicU64,
    pub disp_unit: AtomicU64,
    /// Offset of the rank's memory in this region (allocated windows), or `NO_DATA`.
    pub data_off: AtomicU64,
    /// Passive-target lock: `WRITER` bit, or the number of shared holders (`sync::RwLock`).
    pub lock: AtomicU32,
    pub lock_waiters: AtomicU32,
    /// Accumulate mutex: every accumulate to this rank holds it (`sync::Mutex`). Also guards
    /// `regions`.
    pub acc: AtomicU32,
    /// Rung when a PSCW counter of this rank changes (`sync::Bell`).
    pub bell: AtomicU32,
    pub bell_sleepers: AtomicU32,
    /// Dynamic windows: the attached regions (address, length) of this rank, `nregions` of them;
    /// the first `MAX_REGIONS` here, and all of them at address `overflow` of the rank's own
    /// address space (`Window::published`), which changes only under `acc`.
    pub nregions: AtomicU32,
    pub regions: [[AtomicU64; 2]; MAX_REGIONS],
    pub overflow: AtomicU64,
}

pub const NO_DATA: u64 = u64::MAX;

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// Byte offsets of the parts of a region for `n` ranks.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub n: usize,
    pub post_off: usize,
    pub done_off: usize,
    pub data_off: usize,
}

impl Layout {
    pub fn new(n: usize) -> Layout {
        let post_off = n * std::mem::size_of::<RankArea>();
        let done_off = post_off + n * n * 4;
        let data_off = align_up(done_off + n * n * 4, 4096);
        Layout { n, post_off, done_off, data_off }
    }
}

/// One rank's mapping of a window's shared region: shared memory accessed through atomics
/// (control) or as raw window memory whose races are the application's business under the MPI
/// rules.
pub struct Region {
    map: SharedMap,
    layout: Layout,
}

impl Region {
    /// Creates a region of `len` bytes; returns it and the descriptor the others open.
    pub fn create(layout: Layout, len: usize) -> io::Result<(Region, i32)> {
        let (map, fd) = SharedMap::create(c"oxmpi-win", len)?;
        Ok((Region { map, layout }, fd))
    }

    /// Opens and maps the region that process `pid` created as descriptor `fd`.
    pub fn open(pid: i32, fd: i32, layout: Layout, len: usize) -> io::Result<Region> {
        Ok(Region { map: SharedMap::open(pid, fd, len)?, layout })
    }

    pub fn rank(&self, r: usize) -> &RankArea {
        assert!(r < self.layout.n);
        // SAFETY: in bounds of the RankArea array at offset 0 of the live mapping (zero-filled at
        // creation, which is a valid RankArea).
        unsafe { &*(self.map.base() as *const RankArea).add(r) }
    }

    /// Posts (PSCW) from `target` to `origin` not yet consumed by `origin`'s MPI_Win_start.
    pub fn post(&self, origin: usize, target: usize) -> &AtomicU32 {
        self.counter(self.layout.post_off, origin, target)
    }

    /// MPI_Win_complete calls of `origin` towards `target` not yet consumed by `target`'s wait.
    pub fn done(&self, target: usize, origin: usize) -> &AtomicU32 {
        self.counter(self.layout.done_off, target, origin)
    }

    fn counter(&self, off: usize, a: usize, b: usize) -> &AtomicU32 {
        let n = self.layout.n;
        assert!(a < n && b < n);
        // SAFETY: in bounds of the n * n counter array at `off`, 4-byte aligned.
        unsafe { &*(self.map.base().add(off + (a * n + b) * 4) as *const AtomicU32) }
    }

    /// Address in this process of byte `off` of the region.
    pub fn at(&self, off: u64) -> *mut u8 {
        self.map.base().wrapping_add(off as usize)
    }
}

