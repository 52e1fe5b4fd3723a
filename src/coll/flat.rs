//! `flat`: small collectives where every rank publishes into a record of its own in the
//! communicator's shared memory (`arena`: the shared region in processes mode, the registry's
//! arena in threads mode) and reads the records it needs itself. No rank waits for a "last
//! arriver" to compute for everybody, and a rank whose part is only to publish (the root of a
//! broadcast, the non-roots of a reduce) returns as soon as it has: on 2 ranks a broadcast costs
//! the root one copy and one doorbell, the receiver one wake-up and one copy, where the binomial
//! tree costs a message (ring slot, doorbell, engine matching) and the arena's episode a full
//! synchronisation.
//!
//! Barrier, bcast, reduce, allreduce and alltoall of at most `MAX` bytes per rank. Reductions
//! fold the records in rank order, `a0 op (a1 op (... op an-1))`, so non-commutative ops get
//! the order MPI wants and every rank of an allreduce computes bit-identical results.
//!
//! Records: each rank has two, used by episode parity, and a control line with `done`, the
//! number of flat episodes (collectives) it completed, which is also the number of the episode
//! it runs next (every rank runs the same flat collectives in the same order). A record holds
//! `seq` (episode + 1 once published), `len` (bytes) and the data. Episode k writes the record
//! of parity k & 1, which episode k - 2 used: a rank publishes at k only once every rank has
//! `done >= k - 1`, that is, has finished reading episode k - 2. A rank that read every record of
//! episode k knows everybody has `done >= k` (each published only after finishing k - 1), which
//! it keeps in `known` to skip that check.
//!
//! Memory orderings: the publisher writes the data and `len`, then stores `seq` with Release; a
//! reader that loads `seq == k + 1` with Acquire sees them. A reader stores its `done` with
//! Release after its last read of the episode's records; the publisher's Acquire load of it
//! before rewriting a record orders those reads before the rewrite. A publisher blocked on
//! `done` counts itself in `waiters` before looking (SeqCst), and a rank that completes an
//! episode stores `done` then loads `waiters` (SeqCst): either the waiter sees the new `done`
//! or the finisher sees the waiter and rings its doorbell (Dekker). Publications always ring
//! their readers' doorbells (`Engine::wait_for_collective` sleeps on them).
//!
//! Monitoring counts each publication as one collective message to each rank that reads it.
//!
//! `auto` runs these on 2 to `AUTO_MAX_RANKS` ranks that do not outnumber the CPUs; forcing
//! (`OXMPI_<COLL>_ALGORITHM=flat`) runs them on any number.
//!
//! Calls above `MAX`: on a communicator where `flat` runs, a collective of more than `MAX` bytes
//! still takes a flat episode, whose record is a header only (`len` = the rank's byte count, no
//! data), and then runs the caller's other algorithms (`rest`). So ranks that pass counts on
//! both sides of `MAX` (erroneous: the signatures differ) find each other's lengths in the
//! records and fail with ErrorClass::Truncate instead of waiting in two different algorithms
//! for ever. Where a rank that saw the mismatch cannot tell its peers, it takes part in their
//! algorithm with scratch buffers of their size (`drain`) before failing:
//! - bcast: the root's record decides. A non-root waits for it (it waits for the root's data
//!   anyway) and follows the root's length, draining a larger broadcast than its own.
//! - allreduce, alltoall: every rank reads every record. A rank above `MAX` publishes its header
//!   and runs `rest` at once (no extra wait); a rank at most `MAX` that finds headers drains with
//!   their length; the rank above `MAX` checks the records after `rest` (all are published then:
//!   every rank published before taking part) and fails too.
//! - reduce: a non-root at most `MAX` returns after publishing, so it cannot drain: a rank above
//!   `MAX` waits for every record before running `rest` (one synchronisation more, for reduces
//!   above `MAX` bytes only) and fails without running it on a mismatch.
//! The drain matches the peers' algorithm when the ranks differ in count only (reductions must
//! pass the same datatype and op everywhere). Cost of the header on correct calls, 2 ranks on the
//! 2-core development machine (load 5-9; median over 500 calls of each call's slowest rank,
//! median of 5 interleaved runs, us, before -> after, processes / threads): bcast 4 KiB 2.18 ->
//! 2.21 / 2.11 -> 2.20, allreduce 8 KiB 6.01 -> 6.23 / 7.94 -> 8.10, alltoall 4 KiB blocks
//! 2.98 -> 3.23 / 1.39 -> 1.70, 1 MiB level (MPICH / Open MPI: 3.81 / 4.81, 6.12 / 12.92,
//! 3.65 / 4.25).
use super::arena::Arena;
use super::Coll;
use crate::error::{err, ErrorClass, MpiResult};
use crate::op::Reduction;
use std::sync::atomic::{fence, AtomicU64, Ordering::*};

/// Bytes of one record: a 16-byte header, then the data.
const RECORD: usize = 2048;
const HEADER: usize = 16;
/// The most bytes a rank publishes in one flat collective.
pub const MAX: usize = RECORD - HEADER;
/// Bytes of a rank's control line.
const CTL: usize = 64;
/// Bytes of one rank's part: its control line and two records.
const PER_RANK: usize = CTL + 2 * RECORD;
/// Looks at a condition before waiting in the engine, when the rank may spin.
const PRESPIN: usize = 64;
/// `auto` runs `flat` on at most this many ranks. Measured on the 2-core development machine
/// (2 ranks, processes mode, load average 7-9 from other jobs): the median over 1000 calls of
/// each rank's call time, each call after a barrier, max over the ranks, best of 4 interleaved
/// runs, us, against the former automatic choice (binomial tree, arena episode, shared-region
/// alltoall) and Open MPI 4.1: bcast 8 B 0.28 (0.37, Open MPI 0.23), 512 B 0.31 (0.47, 0.93);
/// reduce 8 B 0.37 (0.42, 0.22), 512 B 0.60 (0.54, 0.89); allreduce 8 B 0.60 (0.92, 0.53),
/// 512 B 0.78 (1.08, 1.06); alltoall 8 B 0.59 (0.91, 0.51), 512 B 0.72 (1.03, 1.02). Threads
/// mode (load 10, best of 3): bcast 8 B 0.29 (0.37), allreduce 8 B 0.67 (1.00), alltoall 8 B
/// 0.67 (1.18), reduce 8 B 0.47 (0.44: level within the noise). Means
/// per call (the OSU method) were dominated under that load by runs with milliseconds per call
/// (a rank descheduled while its peer waits) for every algorithm alike. More ranks than 2 were
/// not measured (they outnumber this machine's CPUs).
const AUTO_MAX_RANKS: usize = 8;

/// Bytes of the flat records of `n` ranks: the `waiters` line, then each rank's part.
pub fn area_bytes(n: usize) -> usize {
    CTL + n * PER_RANK
}

/// Threads mode: the flat records of one arena, in memory of our own (zero-filled, aligned to
/// a cache line).
pub struct Memory {
    base: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: plain memory, used only through the protocol of this module (atomics, and data
// ordered by them); freed once, on drop.
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    pub fn new(n: usize) -> Memory {
        let layout = std::alloc::Layout::from_size_align(area_bytes(n), CTL).expect("a valid layout");
        // SAFETY: a layout of non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Memory { base, layout }
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base, self.layout) };
    }
}

/// A rank's control line.
#[repr(C)]
struct Ctl {
    /// Flat episodes completed (written by its rank only).
    done: AtomicU64,
    /// A lower bound of every rank's `done` (read and written by its rank only).
    known: AtomicU64,
}

/// The flat records of an arena, as one collective sees them.
struct Flat<'a> {
    cx: &'a Coll<'a>,
    arena: &'a Arena,
    base: *mut u8,
    n: usize,
    me: usize,
    /// This collective's episode.
    e: u64,
}

/// The arena in which the communicator's flat collectives run, if they do: when `forced`, or
/// when `auto` and the rank count suits (see the module comment), and the communicator has an
/// arena (not for intercommunicators, several nodes, nonblocking use). It does not depend on the
/// message size, which ranks may pass differently (see the module comment on calls above
/// `MAX`).
pub fn arena<'a>(cx: &Coll<'a>, forced: bool, auto: bool) -> MpiResult<Option<&'a Arena>> {
    let n = cx.size();
    if n < 2 || !(forced || auto && n <= AUTO_MAX_RANKS && !super::select::oversubscribed(n)) {
        return Ok(None);
    }
    super::arena::of(cx)
}

impl<'a> Flat<'a> {
    fn new(cx: &'a Coll<'a>, arena: &'a Arena) -> MpiResult<Flat<'a>> {
        // A revoked communicator or a failed member fails the collective (`crate::ulfm`).
        cx.u.engine.collective_refusal(cx.c.context, arena.members())?;
        let (base, n, me) = (arena.flat_base(), cx.size(), cx.rank());
        // SAFETY: rank `me`'s control line lies in the area (`area_bytes`).
        let e = unsafe { &*(base.add(CTL + me * PER_RANK) as *const Ctl) }.done.load(Relaxed);
        Ok(Flat { cx, arena, base, n, me, e })
    }

    fn ctl(&self, r: usize) -> &Ctl {
        // SAFETY: rank `r`'s control line lies in the area, which lives as long as the arena;
        // its fields are atomics.
        unsafe { &*(self.base.add(CTL + r * PER_RANK) as *const Ctl) }
    }

    fn waiters(&self) -> &AtomicU64 {
        // SAFETY: the first line of the area, an atomic.
        unsafe { &*(self.base as *const AtomicU64) }
    }

    /// Rank `r`'s record of this episode: its `seq`, its `len` and its data.
    fn record(&self, r: usize) -> (&AtomicU64, &AtomicU64, *mut u8) {
        // SAFETY: the record lies in rank `r`'s part of the area; its header is two atomics.
        unsafe {
            let rec = self.base.add(CTL + r * PER_RANK + CTL + (self.e & 1) as usize * RECORD);
            (&*(rec as *const AtomicU64), &*(rec.add(8) as *const AtomicU64), rec.add(HEADER))
        }
    }

    fn wait(&self, cond: impl Fn() -> bool) -> MpiResult {
        // A peer with a core of its own usually publishes within a microsecond or two: looking
        // at the records alone meanwhile saves the engine's lock and progress pass of each
        // look (`cond` only reads, so looking again is harmless).
        let looks = if self.cx.u.engine.may_spin() { PRESPIN } else { 1 };
        for _ in 0..looks {
            if cond() {
                return Ok(());
            }
            std::hint::spin_loop();
        }
        self.cx.u.engine.wait_for_collective(self.cx.c.context, self.arena.members(), cond)
    }

    /// Publishes the concatenation of `parts` (at most `MAX` bytes in all) as this rank's record
    /// of the episode, for the ranks `readers` (communicator ranks).
    ///
    /// # Safety
    /// Each part's pointer holds its length of readable bytes.
    unsafe fn publish(&self, parts: &[(*const u8, usize)], readers: impl Iterator<Item = usize> + Clone) -> MpiResult {
        let len: usize = parts.iter().map(|p| p.1).sum();
        debug_assert!(len <= MAX);
        // SAFETY: per this function's contract.
        unsafe { self.publish_len(parts, len, readers) }
    }

    /// Publishes a header only: this rank's call has `len` (more than `MAX`) bytes and runs
    /// another algorithm. Not counted by monitoring (that algorithm's messages are).
    fn announce(&self, len: usize, readers: impl Iterator<Item = usize> + Clone) -> MpiResult {
        debug_assert!(len > MAX);
        // SAFETY: no bytes are read.
        unsafe { self.publish_len(&[], len, readers) }
    }

    /// # Safety
    /// As `publish`; `len` is the parts' total, or more than `MAX` for a header without parts.
    unsafe fn publish_len(&self, parts: &[(*const u8, usize)], len: usize, readers: impl Iterator<Item = usize> + Clone) -> MpiResult {
        if self.e >= 2 {
            self.reusable()?;
        }
        let (seq, l, data) = self.record(self.me);
        let mut at = 0;
        for &(p, k) in parts {
            if k > 0 {
                // SAFETY: `p` holds `k` bytes (caller); the record has room for `MAX`; nobody
                // reads it before `seq` says so.
                unsafe { std::ptr::copy_nonoverlapping(p, data.add(at), k) };
            }
            at += k;
        }
        l.store(len as u64, Relaxed);
        seq.store(self.e + 1, Release);
        let (u, ctx) = (&self.cx.u.engine, self.cx.c.coll_context());
        if len <= MAX {
            for q in readers.clone() {
                crate::monitoring::record_send(u.rank(), u.size(), self.cx.c.world_rank(q), len, ctx);
            }
        }
        for q in readers {
            u.ring_rank(self.cx.c.world_rank(q));
        }
        Ok(())
    }

    /// Waits until every rank finished episode e - 2, whose readers may still read our record
    /// of this parity.
    fn reusable(&self) -> MpiResult {
        let need = self.e - 1;
        let known = &self.ctl(self.me).known;
        if known.load(Relaxed) >= need {
            return Ok(());
        }
        let least = || (0..self.n).map(|r| self.ctl(r).done.load(SeqCst)).min().unwrap_or(need);
        let m = least();
        if m >= need {
            known.store(m, Relaxed);
            return Ok(());
        }
        self.waiters().fetch_add(1, SeqCst);
        let r = self.wait(|| least() >= need);
        self.waiters().fetch_sub(1, SeqCst);
        r?;
        known.store(need, Relaxed);
        Ok(())
    }

    /// Waits for the records of `from` (communicator ranks) for this episode.
    fn await_records(&self, from: impl Iterator<Item = usize> + Clone) -> MpiResult {
        let e = self.e;
        self.wait(|| from.clone().all(|q| self.record(q).0.load(Acquire) == e + 1))
    }

    /// The length in rank `q`'s published record (after `await_records`).
    fn len(&self, q: usize) -> usize {
        self.record(q).1.load(Relaxed) as usize
    }

    /// Rank `q`'s published record (after `await_records`): its data, if it holds `bytes` bytes.
    fn data(&self, q: usize, bytes: usize) -> MpiResult<*const u8> {
        let len = self.len(q);
        if len != bytes {
            return Err(mismatch(q, len, bytes));
        }
        Ok(self.record(q).2)
    }

    /// After `await_records(0..n)`: the largest length above `MAX` among the records and the
    /// first rank that published it, if any (ranks running another algorithm with that many
    /// bytes).
    fn announced(&self) -> Option<(usize, usize)> {
        let len = (0..self.n).map(|q| self.len(q)).filter(|&l| l > MAX).max()?;
        (0..self.n).find(|&q| self.len(q) == len).map(|q| (q, len))
    }

    /// After `await_records(0..n)`: the first rank whose record's length is not `bytes`.
    fn check(&self, bytes: usize) -> MpiResult {
        match (0..self.n).find(|&q| self.len(q) != bytes) {
            Some(q) => Err(mismatch(q, self.len(q), bytes)),
            None => Ok(()),
        }
    }

    /// Ends this rank's part of the episode (after its last read of the records); `all_read`:
    /// it read every rank's record, so every rank finished the episode before.
    fn finish(&self, all_read: bool) {
        let c = self.ctl(self.me);
        if all_read {
            c.known.store(self.e, Relaxed);
        }
        c.done.store(self.e + 1, SeqCst);
        fence(SeqCst);
        if self.waiters().load(SeqCst) != 0 {
            for q in (0..self.n).filter(|&q| q != self.me) {
                self.cx.u.engine.ring_rank(self.cx.c.world_rank(q));
            }
        }
    }

    fn others(&self) -> impl Iterator<Item = usize> + Clone {
        let me = self.me;
        (0..self.n).filter(move |&q| q != me)
    }
}

fn mismatch(q: usize, len: usize, bytes: usize) -> crate::error::MpiError {
    err(ErrorClass::Truncate, format!("collective message from rank {q} has {len} bytes, this rank expected {bytes}: the ranks passed different counts or datatypes"))
}

/// Runs `rest` (the collective's other algorithms) with zero-filled scratch buffers of
/// `len` bytes in place of this rank's, to take part in the peers' algorithm, then fails: this
/// rank's call has `bytes` bytes (see the module comment).
fn drain(len: usize, bytes: usize, q: usize, rest: impl FnOnce(*mut u8, *mut u8) -> MpiResult) -> MpiResult {
    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
    rest(a.as_mut_ptr(), b.as_mut_ptr())?;
    Err(mismatch(q, len, bytes))
}

/// MPI_Barrier: every rank publishes an empty record and waits for everybody's.
pub fn barrier(cx: &Coll, arena: &Arena) -> MpiResult {
    let f = Flat::new(cx, arena)?;
    // SAFETY: no bytes are read.
    unsafe { f.publish(&[], f.others())? };
    f.await_records(0..f.n)?;
    f.finish(true);
    Ok(())
}

/// MPI_Bcast of `bytes` bytes at `buf` from communicator rank `root`: the root publishes and
/// returns, every other rank copies the root's record. Above `MAX` bytes (the root's count
/// decides) the root publishes a header and every rank runs `rest(buf, bytes)`.
///
/// # Safety
/// `buf` holds `bytes` bytes, readable at the root, writable elsewhere; `rest` broadcasts as
/// `bcast::bcast` does.
pub unsafe fn bcast(cx: &Coll, arena: &Arena, buf: *mut u8, bytes: usize, root: usize, rest: impl FnOnce(*mut u8, usize) -> MpiResult) -> MpiResult {
    let f = Flat::new(cx, arena)?;
    if f.me == root {
        if bytes > MAX {
            f.announce(bytes, f.others())?;
            f.finish(false);
            return rest(buf, bytes);
        }
        // SAFETY: per this function's contract.
        unsafe { f.publish(&[(buf, bytes)], f.others())? };
        f.finish(false);
        return Ok(());
    }
    f.await_records(std::iter::once(root))?;
    let len = f.len(root);
    if len > MAX {
        f.finish(false);
        if len == bytes {
            return rest(buf, bytes);
        }
        return drain(len, bytes, root, |b, _| rest(b, len));
    }
    let got = f.data(root, bytes).map(|d| {
        // SAFETY: the root's record holds `bytes` bytes until we finish; `buf` holds `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(d, buf, bytes) }
    });
    f.finish(false);
    got
}

/// Folds the records of every rank (each `count` elements of `red`, checked by `Flat::data`)
/// into `out` in rank order.
///
/// # Safety
/// `out` holds `count * red.size` writable bytes; every record is published.
unsafe fn fold(f: &Flat, out: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let bytes = count * red.size;
    // Checked first, then read without collecting the records (no allocation per call).
    f.check(bytes)?;
    // SAFETY: each record holds `bytes` bytes (checked), stable until we finish; `out` holds
    // `bytes` (caller) and is none of the records.
    unsafe {
        std::ptr::copy_nonoverlapping(f.record(f.n - 1).2, out, bytes);
        for q in (0..f.n - 1).rev() {
            red.apply(f.record(q).2, out, count);
        }
    }
    Ok(())
}

/// A rank above `MAX` in a collective where every rank reads every record: publishes its
/// header, runs `rest`, then checks that every rank's length was `bytes` (they are all published:
/// every rank publishes before taking part in `rest`'s algorithm).
fn beyond(f: &Flat, bytes: usize, rest: impl FnOnce() -> MpiResult) -> MpiResult {
    f.announce(bytes, f.others())?;
    let r = rest();
    if r.is_err() {
        f.finish(false);
        return r;
    }
    f.await_records(0..f.n)?;
    let r = f.check(bytes);
    f.finish(true);
    r
}

/// MPI_Allreduce of `count` elements; with MPI_IN_PLACE `sendbuf == recvbuf`. Above `MAX` bytes
/// `rest(sendbuf, recvbuf, count)` runs it.
///
/// # Safety
/// As `allreduce::allreduce_internal`; `rest` reduces as it does.
pub unsafe fn allreduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, rest: impl FnOnce(*const u8, *mut u8, usize) -> MpiResult) -> MpiResult {
    let f = Flat::new(cx, arena)?;
    let bytes = count * red.size;
    if bytes > MAX {
        return beyond(&f, bytes, || rest(sendbuf, recvbuf, count));
    }
    // SAFETY: `sendbuf` holds `count` elements (caller).
    unsafe { f.publish(&[(sendbuf, bytes)], f.others())? };
    f.await_records(0..f.n)?;
    if let Some((q, len)) = f.announced() {
        f.finish(true);
        return drain(len, bytes, q, |s, r| rest(s, r, len / red.size.max(1)));
    }
    // SAFETY: every record is published; our input is copied into ours, so `recvbuf` may be it.
    let r = unsafe { fold(&f, recvbuf, count, red) };
    f.finish(true);
    r
}

/// MPI_Reduce to communicator rank `root`: every rank publishes; the others return at once, the
/// root folds the records. Above `MAX` bytes a rank waits for every record, then runs
/// `rest(sendbuf, recvbuf, count)` if every rank passed as many bytes.
///
/// # Safety
/// As `reduce::binomial`; `rest` reduces as it does.
pub unsafe fn reduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, rest: impl FnOnce(*const u8, *mut u8, usize) -> MpiResult) -> MpiResult {
    let f = Flat::new(cx, arena)?;
    let bytes = count * red.size;
    if bytes > MAX {
        f.announce(bytes, f.others())?;
        f.await_records(0..f.n)?;
        let r = f.check(bytes);
        f.finish(true);
        r?;
        return rest(sendbuf, recvbuf, count);
    }
    if f.me != root {
        // SAFETY: `sendbuf` holds `count` elements (caller).
        unsafe { f.publish(&[(sendbuf, bytes)], std::iter::once(root))? };
        f.finish(false);
        return Ok(());
    }
    // SAFETY: as above (at the root `sendbuf` is `recvbuf` with MPI_IN_PLACE: copied first).
    unsafe { f.publish(&[(sendbuf, bytes)], std::iter::empty())? };
    f.await_records(0..f.n)?;
    // SAFETY: every record is published; `recvbuf` holds `count` elements at the root.
    let r = unsafe { fold(&f, recvbuf, count, red) };
    f.finish(true);
    r
}

/// MPI_Alltoall of `block`-byte blocks on an intracommunicator: every rank publishes its send
/// row and copies its column out of the others' rows. Rows above `MAX` bytes:
/// `rest(send, recv, block)` runs it.
///
/// # Safety
/// As `alltoall::alltoall`, with equal send and receive blocks; `rest` exchanges as it does.
pub unsafe fn alltoall(cx: &Coll, arena: &Arena, send: *const u8, recv: *mut u8, block: usize, rest: impl FnOnce(*const u8, *mut u8, usize) -> MpiResult) -> MpiResult {
    let f = Flat::new(cx, arena)?;
    let row = f.n.saturating_mul(block);
    if row > MAX {
        return beyond(&f, row, || rest(send, recv, block));
    }
    // SAFETY: `send` holds n blocks (caller).
    unsafe { f.publish(&[(send, row)], f.others())? };
    f.await_records(0..f.n)?;
    if let Some((q, len)) = f.announced() {
        f.finish(true);
        return drain(len, row, q, |s, r| rest(s, r, len / f.n));
    }
    let r = f.check(row).map(|()| {
        for q in 0..f.n {
            // SAFETY: row q holds n blocks (checked), stable until we finish; `recv` holds n
            // blocks, disjoint from the records.
            unsafe { std::ptr::copy_nonoverlapping(f.record(q).2.add(f.me * block), recv.add(q * block), block) };
        }
    });
    f.finish(true);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn layout() {
        assert_eq!(PER_RANK % CTL, 0);
        assert!(std::mem::size_of::<Ctl>() <= CTL);
        assert_eq!(area_bytes(2), CTL + 2 * PER_RANK);
        assert_eq!(MAX, 2032);
    }
}
