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
//! is, every rank of the cell's previous call has finished it), writes the pattern, and
//! publishes `ready = key48`; every other rank waits for `ready` and reads. Each rank decrements
//! `remaining` when it leaves the call (`release`), since re-plans (below) may still be
//! published into the cell until then; the last one rings the members, for a rank ahead by
//! `CELLS` calls waits for the stragglers (non-root ranks of a reduce leave early).
//!
//! Re-plans (issue 21, live arrivals; `clairvoyant::replan`): while a call runs, a rank whose
//! expected arrival has passed may be declared late. Under the cell's spin lock, ranks mark
//! themselves `entered` when they read the plan, and a re-planner takes the members not entered
//! as the late set and publishes a record (late set, time origin, pattern) as the next `version`:
//! a rank either entered before (and will see the version change while it runs) or reads every
//! record when it enters (and knows it was late in each), never something in between.
//!
//! Arrival order (`coll::reduce_arrival`): under the same lock each member that gets the plan
//! takes the next position of the cell's arrival order, so every member sees one order.
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU32, Ordering::*};

/// Jobs of more ranks have no board (its size grows with the square of the rank count).
pub const MAX_RANKS: usize = 64;
/// Re-plans a call may have (records after the first pattern).
pub const MAX_REPLANS: usize = 3;
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
    /// Spin lock (0 free, 1 held) over `entered` and the re-plan records; held for a few stores.
    lock: AtomicU64,
    /// Bit i: member i has the plan (planned it or read it).
    entered: AtomicU64,
    /// Re-plan records published (0..=MAX_REPLANS); written under `lock`, read lock-free after
    /// the records (Release / Acquire).
    version: AtomicU64,
    /// CLOCK_MONOTONIC ns of pattern offset 0.
    t0: AtomicI64,
    /// Members that have entered, as positions in the arrival order (written under `lock`).
    order: AtomicU64,
}

/// A re-plan record: its late set, time origin and pattern (offsets in quanta from `t0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replan {
    pub late: u64,
    pub t0: i64,
    pub pattern: Vec<i64>,
}

fn align(x: usize) -> usize {
    x.div_ceil(LINE) * LINE
}
/// The cell header, the first pattern, `MAX_REPLANS` records of (late, t0, pattern), then the
/// arrival order (position p: 1 + the member that entered p-th, 0 while nobody has).
fn cell_stride(n: usize) -> usize {
    align(std::mem::size_of::<Cell>() + 8 * n + MAX_REPLANS * record_bytes(n) + 8 * n)
}
fn record_bytes(n: usize) -> usize {
    16 + 8 * n
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
    /// Another rank published: (informed, t0, pattern, re-plans so far, in each of which this
    /// rank was late).
    Read(CellRef, bool, i64, Vec<i64>, Vec<Replan>),
}

/// A claimed or read cell: to publish into, re-plan, watch, and release when the call ends.
#[derive(Clone, Copy)]
pub struct CellRef {
    cell: *mut u8,
    key48: u64,
    members: usize,
}
// SAFETY: the cell lives in the board's mapping, which outlives every rank; it is used only
// through atomics.
unsafe impl Send for CellRef {}
unsafe impl Sync for CellRef {}

impl CellRef {
    fn header(&self) -> &Cell {
        // SAFETY: `cell` is an in-bounds, aligned cell of a live board (`try_plan`).
        unsafe { &*(self.cell as *const Cell) }
    }

    fn datum(&self, i: usize) -> &AtomicI64 {
        // SAFETY: the first pattern follows the header; `cell_stride` leaves room for it.
        unsafe { &*(self.cell.add(std::mem::size_of::<Cell>() + 8 * i) as *const AtomicI64) }
    }

    /// Word `i` of record `v` (1-based): 0 late, 1 t0, then the pattern.
    fn record_word(&self, v: usize, i: usize) -> &AtomicI64 {
        assert!((1..=MAX_REPLANS).contains(&v) && i < 2 + self.members);
        let off = std::mem::size_of::<Cell>() + 8 * self.members + (v - 1) * record_bytes(self.members) + 8 * i;
        // SAFETY: in bounds of the cell (`cell_stride` with the board's n >= members), aligned.
        unsafe { &*(self.cell.add(off) as *const AtomicI64) }
    }

    fn order_word(&self, p: usize) -> &AtomicU64 {
        assert!(p < self.members);
        let off = std::mem::size_of::<Cell>() + 8 * self.members + MAX_REPLANS * record_bytes(self.members) + 8 * p;
        // SAFETY: in bounds of the cell (`cell_stride` with the board's n >= members), aligned.
        unsafe { &*(self.cell.add(off) as *const AtomicU64) }
    }

    /// Takes the next position in the arrival order for member `me`. Under `lock`.
    fn take_position(&self, me: usize) {
        let h = self.header();
        let p = h.order.load(Relaxed) as usize;
        h.order.store(p as u64 + 1, Relaxed);
        // Release: a member that sees the position sees everything `me` did before entering.
        self.order_word(p).store(me as u64 + 1, Release);
    }

    /// The member that entered the call `p`-th (0-based), if one has yet.
    pub fn arrival(&self, p: usize) -> Option<usize> {
        (self.order_word(p).load(Acquire) as usize).checked_sub(1)
    }

    /// Member `me`'s position in the arrival order, if it has entered.
    pub fn position(&self, me: usize) -> Option<usize> {
        (0..self.members).find(|&p| self.arrival(p) == Some(me))
    }

    fn lock(&self) {
        let h = self.header();
        while h.lock.compare_exchange_weak(0, 1, Acquire, Relaxed).is_err() {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.header().lock.store(0, Release);
    }

    /// Re-plans published so far.
    pub fn version(&self) -> usize {
        self.header().version.load(Acquire) as usize
    }

    /// Record `v` (1..=version()).
    pub fn record(&self, v: usize) -> Replan {
        let w = |i| self.record_word(v, i).load(Relaxed);
        Replan { late: w(0) as u64, t0: w(1), pattern: (0..self.members).map(|i| w(2 + i)).collect() }
    }

    /// Members that have the plan (bit i: member i).
    pub fn entered(&self) -> u64 {
        self.header().entered.load(Acquire)
    }

    /// Publishes re-plan `expected + 1` if the cell is still at version `expected` and some
    /// members have not entered: `make(late)` gives (t0, pattern) for the late set (bit i:
    /// member i). Returns whether it published.
    pub fn replan(&self, expected: usize, make: impl FnOnce(u64) -> (i64, Vec<i64>)) -> bool {
        if expected >= MAX_REPLANS {
            return false;
        }
        self.lock();
        let h = self.header();
        let all = if self.members == 64 { u64::MAX } else { (1u64 << self.members) - 1 };
        let late = all & !h.entered.load(Relaxed);
        // The call may be over and its cell serving another (a watchdog acting late): the key
        // says. A claim initialises the cell under this lock, so it cannot interleave.
        let ok = h.word.load(Acquire) >> 16 == self.key48 && h.version.load(Relaxed) as usize == expected && late != 0;
        if ok {
            let (t0, pattern) = make(late);
            let v = expected + 1;
            self.record_word(v, 0).store(late as i64, Relaxed);
            self.record_word(v, 1).store(t0, Relaxed);
            for (i, &x) in pattern.iter().enumerate().take(self.members) {
                self.record_word(v, 2 + i).store(x, Relaxed);
            }
            h.version.store(v as u64, Release);
        }
        self.unlock();
        ok
    }

    /// This rank leaves the call: once every member has, the cell may serve a later call.
    /// True for the last one, which must ring the members (a rank may wait to claim the cell).
    pub fn release(&self) -> bool {
        self.header().word.fetch_sub(1, AcqRel) & 0xffff == 1
    }
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

    /// Tries once to claim or read call `key`'s cell (call `seq`, `members` ranks, this rank
    /// being member `me`); None: the cell still serves an earlier call, try again later. Not
    /// before `owns`.
    pub fn try_plan(&self, leader: usize, ctx: u32, seq: u64, key: u64, members: usize, me: usize) -> Option<Planned> {
        assert!(members >= 2 && members <= self.n && members <= 64 && me < members);
        let c = self.cell(leader, ctx, seq);
        let cr = CellRef { cell: c, key48: key >> 16, members };
        let cell = cr.header();
        let key48 = cr.key48;
        let w = cell.word.load(Acquire);
        if w >> 16 == key48 && w & 0xffff != 0 {
            if cell.ready.load(Acquire) != key48 {
                return None;
            }
            let informed = cell.informed.load(Relaxed) != 0;
            let t0 = cell.t0.load(Relaxed);
            let data = (0..members).map(|i| cr.datum(i).load(Relaxed)).collect();
            cr.lock();
            cell.entered.fetch_or(1 << me, Relaxed);
            cr.take_position(me);
            let v = cell.version.load(Relaxed) as usize;
            let records = (1..=v).map(|v| cr.record(v)).collect();
            cr.unlock();
            return Some(Planned::Read(cr, informed, t0, data, records));
        }
        if w & 0xffff != 0 {
            return None;
        }
        cell.word.compare_exchange(w, key48 << 16 | members as u64, AcqRel, Acquire).ok()?;
        // The previous call's members have all left; a watchdog may still try a re-plan on it,
        // under the lock, and sees the new key.
        cr.lock();
        cell.entered.store(1 << me, Relaxed);
        cell.version.store(0, Relaxed);
        // Readers wait for `ready`, published after this: they see the cleared order.
        cell.order.store(0, Relaxed);
        for p in 0..members {
            cr.order_word(p).store(0, Relaxed);
        }
        cr.take_position(me);
        cr.unlock();
        Some(Planned::Planner(cr))
    }

    /// Publishes the claimed call's pattern (offsets in quanta from `t0`).
    pub fn publish(&self, cr: CellRef, informed: bool, t0: i64, pattern: &[i64]) {
        for (i, &x) in pattern.iter().enumerate() {
            cr.datum(i).store(x, Relaxed);
        }
        let cell = cr.header();
        cell.informed.store(informed as u64, Relaxed);
        cell.t0.store(t0, Relaxed);
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
    fn one_planner_per_call_and_cells_wait_for_every_member_to_leave() {
        let (_m, b) = board(4);
        let g = [0usize, 1, 2];
        assert!(b.owns(0, 8));
        assert!(!b.owns(0, 8 + GROUPS as u32), "another context of the same group");
        assert!(b.owns(0, 8));
        let k = |s| key(8, &g, s);
        let Some(Planned::Planner(c0)) = b.try_plan(0, 8, 0, k(0), 3, 1) else { panic!("first is the planner") };
        assert!(b.try_plan(0, 8, 0, k(0), 3, 0).is_none(), "not ready yet");
        b.publish(c0, true, 77, &[0, 5, 9]);
        let mut refs = vec![c0];
        for me in [0, 2] {
            match b.try_plan(0, 8, 0, k(0), 3, me) {
                Some(Planned::Read(c, true, 77, p, r)) => {
                    assert_eq!(p, vec![0, 5, 9]);
                    assert!(r.is_empty());
                    refs.push(c);
                }
                _ => panic!("readers read"),
            }
        }
        // Read by all, not yet left by all: call CELLS must wait for cell 0.
        assert!(b.try_plan(0, 8, CELLS as u64, k(CELLS as u64), 3, 0).is_none());
        assert!(!refs[0].release() && !refs[1].release());
        assert!(b.try_plan(0, 8, CELLS as u64, k(CELLS as u64), 3, 0).is_none());
        assert!(refs[2].release(), "the last to leave is told");
        assert!(matches!(b.try_plan(0, 8, CELLS as u64, k(CELLS as u64), 3, 0), Some(Planned::Planner(_))));
    }

    #[test]
    fn replans_take_the_members_not_entered_and_late_readers_see_every_record() {
        let (_m, b) = board(4);
        let g = [0usize, 1, 2, 3];
        assert!(b.owns(0, 9));
        let k0 = key(9, &g, 0);
        let Some(Planned::Planner(c)) = b.try_plan(0, 9, 0, k0, 4, 2) else { panic!() };
        b.publish(c, true, 100, &[0, 0, 0, 4]);
        assert!(matches!(b.try_plan(0, 9, 0, k0, 4, 0), Some(Planned::Read(..))));
        assert_eq!(c.entered(), 0b0101);
        assert_eq!((c.arrival(0), c.arrival(1), c.arrival(2)), (Some(2), Some(0), None), "arrival order");
        assert_eq!((c.position(0), c.position(2), c.position(3)), (Some(1), Some(0), None));
        assert!(!c.replan(1, |_| panic!("not at version 1")));
        assert!(c.replan(0, |late| {
            assert_eq!(late, 0b1010);
            (200, vec![0, 3, 0, 6])
        }));
        assert_eq!(c.version(), 1);
        assert_eq!(c.record(1), Replan { late: 0b1010, t0: 200, pattern: vec![0, 3, 0, 6] });
        // Member 1 enters: it sees record 1; then only member 3 is late.
        let Some(Planned::Read(_, _, _, _, r)) = b.try_plan(0, 9, 0, k0, 4, 1) else { panic!() };
        assert_eq!(r.len(), 1);
        assert!(c.replan(1, |late| {
            assert_eq!(late, 0b1000);
            (300, vec![0, 0, 0, 2])
        }));
        let Some(Planned::Read(_, _, _, _, r)) = b.try_plan(0, 9, 0, k0, 4, 3) else { panic!() };
        assert_eq!(r.len(), 2);
        assert!(!c.replan(2, |_| (0, vec![])), "everyone entered: nobody is late");
    }
}
