//! The arrival board: where the ranks of a node share, while they compute, when they expect to
//! enter their next Clairvoyant reduction (from MPIX_Pap_progress / MPIX_Pap_expect) and when
//! they did enter it, and where the first rank to enter a call publishes the arrival pattern
//! that every rank of the call builds its schedule from (every rank must use bit-identical
//! inputs, `docs/design/clairvoyant.md` section 7).
//!
//! It is a region of the job segment (processes mode: the memfd every rank maps; threads mode:
//! the job's anonymous mapping, plain memory of the process), laid out per world rank:
//! * a `Slot`, written only by its rank: (call key, estimated arrival) under a sequence lock,
//!   and (call key, arrival time), the arrival flag, once the rank enters the call;
//! * `GROUPS` groups of `CELLS` plan cells. A communicator plans in group `context % GROUPS`
//!   of its lowest world rank (its leader) if it owns that group: the first communicator to
//!   try takes it for good (one CAS from 0), so every rank of every communicator reaches the
//!   same verdict; a communicator that finds it taken plans without the board.
//!
//! A plan cell holds one call's pattern. Its `word` is `key48 << 16 | remaining`: the first
//! rank to enter call k claims cell `k % CELLS` with one CAS (only when `remaining` is 0, that
//! is, every rank of the cell's previous call has read it), writes the pattern, and publishes
//! `ready = key48`; every other rank waits for `ready`, reads, and decrements `remaining`. A
//! rank ahead by `CELLS` calls waits for the stragglers to read (a rank may run ahead of
//! others: non-root ranks of a reduce leave early).
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU32, Ordering::*};

/// Jobs of more ranks have no board (its size grows with the square of the rank count).
pub const MAX_RANKS: usize = 64;
/// Plan groups per world rank, and cells per group.
pub const GROUPS: usize = 4;
pub const CELLS: usize = 4;
const LINE: usize = 128;

/// Slot of one world rank.
#[repr(C)]
struct Slot {
    ver: AtomicU64,
    key: AtomicU64,
    estimate: AtomicI64,
    arrived_key: AtomicU64,
    arrived_at: AtomicI64,
}

/// Header of a plan cell, followed by the pattern (one i64 per rank of the communicator).
#[repr(C)]
struct Cell {
    word: AtomicU64,
    ready: AtomicU64,
    /// Whether the pattern rests on at least one report or measured arrival (1) or on nothing (0).
    informed: AtomicU64,
}

fn align(x: usize) -> usize {
    x.div_ceil(LINE) * LINE
}
fn cell_stride(n: usize) -> usize {
    align(std::mem::size_of::<Cell>() + 8 * n)
}
fn group_bytes(n: usize) -> usize {
    LINE + CELLS * cell_stride(n)
}
fn rank_bytes(n: usize) -> usize {
    LINE + GROUPS * group_bytes(n)
}

/// Bytes the board of an `n`-rank job takes in the segment (0: no board).
pub fn bytes(n: usize) -> usize {
    if n > MAX_RANKS { 0 } else { n * rank_bytes(n) }
}

/// The key of call `seq` of the communicator with context `ctx` and members `group`: never 0.
pub fn key(ctx: u32, group: &[usize], seq: u64) -> u64 {
    let mut h = 0x243f_6a88_85a3_08d3u64 ^ ctx as u64;
    let mut mix = |x: u64| {
        h = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    };
    mix(seq);
    for &g in group {
        mix(g as u64);
    }
    if h >> 16 == 0 { h | 1 << 16 } else { h }
}

/// A board in a mapping of `bytes(n)` bytes.
#[derive(Clone, Copy)]
pub struct Board {
    base: *mut u8,
    n: usize,
}
// SAFETY: every shared field is an atomic; the mapping outlives every rank (never unmapped while
// ranks run).
unsafe impl Send for Board {}
unsafe impl Sync for Board {}

/// What `Board::plan` found.
pub enum Planned {
    /// This rank entered first: it must publish with `publish` (then `informed` says whether).
    Planner(CellRef),
    /// Another rank published: (informed, pattern).
    Read(bool, Vec<i64>),
}

/// A claimed cell, to publish into.
pub struct CellRef {
    cell: *mut u8,
    key48: u64,
}

impl Board {
    /// # Safety
    /// `base` is `bytes(n)` bytes (n > 0, at most MAX_RANKS) of zero-initialised memory, aligned to
    /// 128 bytes, shared by every rank of the job and mapped as long as the `Board` is used.
    pub unsafe fn new(base: *mut u8, n: usize) -> Board {
        Board { base, n }
    }

    fn slot(&self, r: usize) -> &Slot {
        assert!(r < self.n);
        // SAFETY: rank r's region starts with its slot, in bounds (`bytes`), aligned, zeroed or
        // written only through atomics.
        unsafe { &*(self.base.add(r * rank_bytes(self.n)) as *const Slot) }
    }

    fn group(&self, leader: usize, ctx: u32) -> *mut u8 {
        assert!(leader < self.n);
        self.base.wrapping_add(leader * rank_bytes(self.n) + LINE + (ctx as usize % GROUPS) * group_bytes(self.n))
    }

    /// Rank `me` reports its estimated arrival `at` at call `key`.
    pub fn report(&self, me: usize, key: u64, at: i64) {
        let s = self.slot(me);
        let v = s.ver.load(Relaxed);
        s.ver.store(v + 1, Relaxed);
        std::sync::atomic::fence(Release);
        s.key.store(key, Relaxed);
        s.estimate.store(at, Relaxed);
        s.ver.store(v + 2, Release);
    }

    /// Rank `r`'s reported arrival at call `key`, if it reported one.
    pub fn estimate(&self, r: usize, key: u64) -> Option<i64> {
        let s = self.slot(r);
        loop {
            let v = s.ver.load(Acquire);
            if v & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let (k, e) = (s.key.load(Relaxed), s.estimate.load(Relaxed));
            std::sync::atomic::fence(Acquire);
            if s.ver.load(Relaxed) == v {
                return (k == key).then_some(e);
            }
        }
    }

    /// Rank `me` enters call `key` at `at` (the arrival flag).
    pub fn arrive(&self, me: usize, key: u64, at: i64) {
        let s = self.slot(me);
        s.arrived_at.store(at, Relaxed);
        s.arrived_key.store(key, Release);
    }

    /// When rank `r` entered call `key`, if it has.
    pub fn arrived(&self, r: usize, key: u64) -> Option<i64> {
        let s = self.slot(r);
        (s.arrived_key.load(Acquire) == key).then(|| s.arrived_at.load(Relaxed))
    }

    /// Whether the communicator of context `ctx` led by world rank `leader` may plan here (it
    /// owns its group; takes it if free). The same answer for every rank, every time.
    pub fn owns(&self, leader: usize, ctx: u32) -> bool {
        // SAFETY: the group's first line is its owner word (an AtomicU32 in zeroed memory).
        let owner = unsafe { &*(self.group(leader, ctx) as *const AtomicU32) };
        let me = ctx.wrapping_add(1).max(1);
        match owner.compare_exchange(0, me, AcqRel, Acquire) {
            Ok(_) => true,
            Err(o) => o == me,
        }
    }

    fn cell(&self, leader: usize, ctx: u32, seq: u64) -> *mut u8 {
        self.group(leader, ctx).wrapping_add(LINE + (seq as usize % CELLS) * cell_stride(self.n))
    }

    /// Tries once to claim or read call `key`'s cell (call `seq`, `members` ranks); None: the
    /// cell still serves an earlier call, try again later. Not before `owns`.
    pub fn try_plan(&self, leader: usize, ctx: u32, seq: u64, key: u64, members: usize) -> Option<Planned> {
        assert!(members >= 2 && members <= self.n);
        let c = self.cell(leader, ctx, seq);
        // SAFETY: the cell is in bounds (`bytes`), aligned, and its header holds atomics.
        let cell = unsafe { &*(c as *const Cell) };
        let key48 = key >> 16;
        let w = cell.word.load(Acquire);
        if w >> 16 == key48 && w & 0xffff != 0 {
            if cell.ready.load(Acquire) != key48 {
                return None;
            }
            let informed = cell.informed.load(Relaxed) != 0;
            let data = (0..members).map(|i| self.datum(c, i).load(Relaxed)).collect();
            cell.word.fetch_sub(1, AcqRel);
            return Some(Planned::Read(informed, data));
        }
        if w & 0xffff != 0 {
            return None;
        }
        cell.word.compare_exchange(w, key48 << 16 | (members as u64 - 1), AcqRel, Acquire).ok()?;
        Some(Planned::Planner(CellRef { cell: c, key48 }))
    }

    fn datum(&self, c: *mut u8, i: usize) -> &AtomicI64 {
        assert!(i < self.n);
        // SAFETY: the pattern follows the header; `cell_stride` leaves room for n entries.
        unsafe { &*(c.add(std::mem::size_of::<Cell>() + 8 * i) as *const AtomicI64) }
    }

    /// Publishes the claimed call's pattern.
    pub fn publish(&self, cr: CellRef, informed: bool, pattern: &[i64]) {
        for (i, &x) in pattern.iter().enumerate() {
            self.datum(cr.cell, i).store(x, Relaxed);
        }
        // SAFETY: as in `try_plan`.
        let cell = unsafe { &*(cr.cell as *const Cell) };
        cell.informed.store(informed as u64, Relaxed);
        cell.ready.store(cr.key48, Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: usize) -> (Vec<u128>, Board) {
        let mut mem = vec![0u128; bytes(n).div_ceil(16) + 8];
        let p = mem.as_mut_ptr() as *mut u8;
        let p = p.wrapping_add(p.align_offset(LINE));
        // SAFETY: zeroed, long enough after aligning, kept alive by the caller.
        (mem, unsafe { Board::new(p, n) })
    }

    #[test]
    fn reports_and_arrivals_are_per_call() {
        let (_m, b) = board(4);
        let (k0, k1) = (key(7, &[0, 1, 2, 3], 0), key(7, &[0, 1, 2, 3], 1));
        assert_ne!(k0, k1);
        assert_eq!(b.estimate(2, k0), None);
        b.report(2, k0, 500);
        assert_eq!(b.estimate(2, k0), Some(500));
        assert_eq!(b.estimate(2, k1), None, "a report is for one call");
        b.arrive(3, k0, 42);
        assert_eq!(b.arrived(3, k0), Some(42));
        assert_eq!(b.arrived(3, k1), None);
    }

    #[test]
    fn one_planner_per_call_and_cells_wait_for_readers() {
        let (_m, b) = board(4);
        let g = [0usize, 1, 2];
        assert!(b.owns(0, 8));
        assert!(!b.owns(0, 8 + GROUPS as u32), "another context of the same group");
        assert!(b.owns(0, 8));
        let k = |s| key(8, &g, s);
        let Some(Planned::Planner(c)) = b.try_plan(0, 8, 0, k(0), 3) else { panic!("first is the planner") };
        assert!(b.try_plan(0, 8, 0, k(0), 3).is_none(), "not ready yet");
        b.publish(c, true, &[0, 5, 9]);
        for _ in 0..2 {
            match b.try_plan(0, 8, 0, k(0), 3) {
                Some(Planned::Read(true, p)) => assert_eq!(p, vec![0, 5, 9]),
                _ => panic!("readers read"),
            }
        }
        // Call CELLS reuses cell 0, now that its three ranks have read it.
        assert!(matches!(b.try_plan(0, 8, CELLS as u64, k(CELLS as u64), 3), Some(Planned::Planner(_))));
        // Call 1 claimed, not all read: call CELLS + 1 must wait.
        let Some(Planned::Planner(c)) = b.try_plan(0, 8, 1, k(1), 3) else { panic!() };
        b.publish(c, false, &[1, 2, 3]);
        assert!(matches!(b.try_plan(0, 8, 1, k(1), 3), Some(Planned::Read(false, _))));
        assert!(b.try_plan(0, 8, 1 + CELLS as u64, k(1 + CELLS as u64), 3).is_none());
        assert!(matches!(b.try_plan(0, 8, 1, k(1), 3), Some(Planned::Read(false, _))));
        assert!(matches!(b.try_plan(0, 8, 1 + CELLS as u64, k(1 + CELLS as u64), 3), Some(Planned::Planner(_))));
    }
}
