//! Processes mode: a communicator's shared-memory region, where its shared-memory collectives
//! (`arena`, `shm_large`) meet. One memfd per communicator, created by its rank 0 at the
//! first blocking collective that asks for it, mapped by every member (as
//! `/proc/<pid of rank 0>/fd/<fd>`: same user, so allowed) and unmapped when the communicator is
//! freed (the last mapping frees the memory).
//!
//! Layout (offsets page aligned):
//! ```text
//! ArenaCounters | n + 2 episode slots of ARENA_SLOT | flat records (`flat::area_bytes`)
//!   | 2 halves of (n + 1) blocks of `block` bytes
//! ```
//! The episode slots serve `arena` (contributions, then the two results); the flat records the
//! `flat` algorithms (each rank's own records); the halves serve the large algorithms
//! (`shm_large`), each half n contribution blocks then a result block.
//!
//! Creation is collective (every rank of the communicator calls `create` at the same collective,
//! as they all make the same choice of algorithm): rank 0 broadcasts its descriptor (or -1 when
//! it could not make the region), every other rank maps it and reports whether it could, and
//! rank 0 broadcasts the verdict, after which it closes its descriptor (every member holds a
//! mapping by then). The verdict is the same on every rank, so either all use the region or
//! none does.
use super::Coll;
use crate::error::MpiResult;
use crate::runtime::segment::{ArenaCounters, ARENA_SLOT};
use crate::runtime::shared_map::SharedMap;

/// Tag phases of the creation's messages (never used by the algorithms that follow in the same
/// collective, which use phase 0 or none).
const PHASE_FD: i32 = 0x71;
const PHASE_OK: i32 = 0x72;
const PHASE_VERDICT: i32 = 0x73;

/// Bytes of both halves of the large area together, at most (per communicator; pages are only
/// allocated where touched).
const LARGE_TOTAL: usize = 32 << 20;
/// Bounds of one block of the large area.
const BLOCK_MAX: usize = 256 << 10;
const BLOCK_MIN: usize = 16 << 10;

const PAGE: usize = 4096;

fn align_page(x: usize) -> usize {
    x.div_ceil(PAGE) * PAGE
}

/// One member's mapping of the region: used through atomics (counters) or under the episode
/// protocol of `arena` (see there); unmapped when the communicator is freed.
pub struct Region {
    map: SharedMap,
    n: usize,
    block: usize,
}

/// Byte offsets for `n` ranks: episode slots, flat records, large area, total; and the block
/// size.
struct Layout {
    slots: usize,
    flat: usize,
    large: usize,
    total: usize,
    block: usize,
}

fn layout(n: usize) -> Layout {
    let slots = align_page(std::mem::size_of::<ArenaCounters>());
    let flat = align_page(slots + (n + 2) * ARENA_SLOT);
    let large = align_page(flat + super::flat::area_bytes(n));
    let block = (LARGE_TOTAL / (2 * (n + 1)) / PAGE * PAGE).clamp(BLOCK_MIN, BLOCK_MAX);
    Layout { slots, flat, large, total: large + 2 * (n + 1) * block, block }
}

impl Region {
    /// Makes the region of `cx`'s communicator, collectively. Ok(None): it could not be made
    /// (at some rank); the caller then uses the message-based algorithms, as every rank does.
    pub fn create(cx: &Coll) -> MpiResult<Option<Region>> {
        let n = cx.size();
        let Layout { total: len, block, .. } = layout(n);
        let me = cx.rank();
        let mut fd: i64 = -1;
        let mut mine = None;
        if me == 0 {
            if let Ok((r, f)) = Self::make(len, n, block) {
                mine = Some(r);
                fd = f as i64;
            }
        }
        let fd_cx = cx.phase(PHASE_FD);
        // SAFETY: `fd` is 8 bytes, readable at rank 0 and writable elsewhere.
        let sent = unsafe { super::bcast::binomial(&fd_cx, &mut fd as *mut i64 as *mut u8, 8, 0) };
        let close = |fd: i64| {
            if me == 0 && fd >= 0 {
                // SAFETY: our descriptor, not used after; the mappings keep the memfd alive.
                unsafe { libc::close(fd as i32) };
            }
        };
        if let Err(e) = sent {
            close(fd);
            return Err(e);
        }
        if me != 0 && fd >= 0 {
            let pid = cx.u.seg.rank(cx.c.world_rank(0)).pid.load(std::sync::atomic::Ordering::Acquire);
            mine = Self::open(pid, fd as i32, len, n, block).ok();
        }
        // Rank 0 learns who could map it, then tells everyone whether all could.
        let mut ok = u8::from(mine.is_some());
        let verdict = (|| -> MpiResult {
            let ok_cx = cx.phase(PHASE_OK);
            if me == 0 {
                for r in 1..n {
                    let mut theirs = 0u8;
                    // SAFETY: one writable byte.
                    unsafe { ok_cx.recv(&mut theirs, 1, r)? };
                    ok &= theirs;
                }
            } else {
                // SAFETY: one readable byte.
                unsafe { ok_cx.send(&ok, 1, 0)? };
            }
            // SAFETY: one byte, readable at rank 0, writable elsewhere.
            unsafe { super::bcast::binomial(&cx.phase(PHASE_VERDICT), &mut ok, 1, 0) }
        })();
        close(fd);
        verdict?;
        Ok(if ok == 1 { mine } else { None })
    }

    /// Rank 0: a new memfd of `len` bytes, mapped; returns the mapping and the descriptor.
    fn make(len: usize, n: usize, block: usize) -> std::io::Result<(Region, i32)> {
        let (map, fd) = SharedMap::create(c"oxmpi-coll", len)?;
        Ok((Region::of(map, n, block), fd))
    }

    /// Another member: maps the region rank 0 (process `pid`) holds as descriptor `fd`.
    fn open(pid: i32, fd: i32, len: usize, n: usize, block: usize) -> std::io::Result<Region> {
        Ok(Region::of(SharedMap::open(pid, fd, len)?, n, block))
    }

    fn of(map: SharedMap, n: usize, block: usize) -> Region {
        Region { map, n, block }
    }

    /// The episode counters.
    pub fn counters(&self) -> &ArenaCounters {
        // SAFETY: at offset 0 of the live mapping, zero-filled at creation (a valid value: atomics).
        unsafe { &*(self.map.base() as *const ArenaCounters) }
    }

    /// The first of the n + 2 episode slots.
    pub fn slots(&self) -> *mut u8 {
        // SAFETY: the offset lies inside the mapping (`layout`).
        unsafe { self.map.base().add(layout(self.n).slots) }
    }

    /// The flat records (`flat::area_bytes(n)` bytes, zero-filled at creation).
    pub fn flat(&self) -> *mut u8 {
        // SAFETY: the offset lies inside the mapping (`layout`).
        unsafe { self.map.base().add(layout(self.n).flat) }
    }

    /// Half `h` (0 or 1) of the large area: n + 1 blocks of `block()` bytes.
    pub fn half(&self, h: usize) -> *mut u8 {
        // SAFETY: the offset lies inside the mapping (`layout`).
        unsafe { self.map.base().add(layout(self.n).large + (h & 1) * (self.n + 1) * self.block) }
    }

    pub fn block(&self) -> usize {
        self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn layout_fits() {
        for n in [2, 3, 8, 64, 256, 1000] {
            let Layout { slots, flat, large, total, block } = layout(n);
            assert!(slots >= std::mem::size_of::<ArenaCounters>());
            assert!(flat >= slots + (n + 2) * ARENA_SLOT && flat % PAGE == 0);
            assert!(large >= flat + super::super::flat::area_bytes(n));
            assert_eq!(total, large + 2 * (n + 1) * block);
            assert!((BLOCK_MIN..=BLOCK_MAX).contains(&block) && block % PAGE == 0);
        }
    }
}
