//! Flat shared-memory collectives for small messages on few ranks (`flat` in the algorithm
//! tables of barrier, bcast, reduce, allreduce and alltoall): every rank publishes its data in a record
//! of its own and reads the others' records itself. No combining rank, no shared counter.
//!
//! The arena's episode (`arena`) has a critical path of four cache-line transfers after the last
//! arrival (its `arrived` counter, the contributions read by the last arriver, `gen`, the result)
//! plus the doorbell it rings; here a waiter's only transfer is the line holding the publisher's
//! flag and (up to 48 bytes) its data, as in a one-way message. Every rank that needs everyone's
//! data reduces it itself, so this is for payloads of at most `DATA` bytes on at most
//! `MAX_RANKS` ranks that do not outnumber the cores.
//!
//! Each rank has two records, one per parity of the episode number `j` (1, 2, ...; the same at
//! every rank: every rank runs the same flat collectives in the same order, as its arguments
//! decide). A rank writes its record of parity `j & 1`, then stores `j` into its flag (Release).
//! Readers load the flag (Acquire) and then read the data. Reuse: before writing its record for
//! `j`, a rank waits until every rank published `j - 1`; a rank publishes `j - 1` only after it
//! finished episode `j - 2`, the last that read this record (its reads happen before that
//! Release store, our Acquire load of it before our writes). Rooted collectives need no more:
//! the root of a broadcast returns once its data is published.
//!
//! Wake-ups: waiters check their condition while spinning and, after announcing themselves as
//! sleepers, before sleeping (`Engine::wait_for_collective`); a publisher fences after its flag
//! store and then rings only the doorbells that have sleepers or parked fibers (Dekker pairing,
//! as `wait::notify`). So a spinning waiter costs the publisher one load per peer.
use super::arena::Arena;
use super::Coll;
use crate::error::{err, ErrorClass, MpiResult};
use crate::op::Reduction;
use std::cell::UnsafeCell;
use std::sync::atomic::{fence, AtomicU64, Ordering::*};

/// Bytes of one record: a flag, the payload's length (16-byte alignment of the data), the data.
pub const RECORD: usize = 2048;
const DATA_OFF: usize = 16;
/// The largest payload a rank publishes: one message (bcast, allreduce) or all its blocks of an
/// alltoall.
pub const DATA: usize = RECORD - DATA_OFF;
/// More ranks than this use the arena: every reader would scan too many records.
pub const MAX_RANKS: usize = 8;

#[repr(C, align(128))]
struct Record {
    /// The episode whose data this record holds (0: none yet).
    flag: AtomicU64,
    /// Bytes of the payload (a reader with other counts or datatypes gets MPI_ERR_TRUNCATE, as
    /// from a message of the wrong size). Written by the owner before its flag.
    len: AtomicU64,
    data: UnsafeCell<[u8; DATA]>,
}
const _: () = assert!(std::mem::size_of::<Record>() == RECORD && std::mem::align_of::<Record>() <= 4096);

/// Bytes of the records of `n` ranks.
pub fn area_bytes(n: usize) -> usize {
    2 * n * RECORD
}

/// The records of one communicator: in its shared region (processes mode) or on the heap,
/// shared by the rank threads (threads mode).
pub struct Flat {
    base: *const Record,
    n: usize,
    /// Threads mode: the records themselves (`base` points into them).
    _owned: Option<Box<[Record]>>,
}

// SAFETY: records are written only by their owner, under the flag protocol of the module comment;
// the flags are atomics. The memory lives as long as the Flat (the region outlives the arena).
unsafe impl Sync for Flat {}
// SAFETY: as above.
unsafe impl Send for Flat {}

impl Flat {
    /// Threads mode: zeroed records for `n` ranks.
    pub fn on_heap(n: usize) -> Flat {
        let owned: Box<[Record]> = (0..2 * n).map(|_| Record { flag: AtomicU64::new(0), len: AtomicU64::new(0), data: UnsafeCell::new([0; DATA]) }).collect();
        Flat { base: owned.as_ptr(), n, _owned: Some(owned) }
    }

    /// Processes mode: the records at `area` (`area_bytes(n)` zero-filled bytes of the
    /// communicator's region, page aligned, alive as long as the returned value).
    pub fn in_region(area: *mut u8, n: usize) -> Flat {
        Flat { base: area as *const Record, n, _owned: None }
    }

    fn rec(&self, r: usize, parity: u64) -> &Record {
        assert!(r < self.n);
        // SAFETY: 2 n records from `base`, alive as long as self.
        unsafe { &*self.base.add(2 * r + (parity & 1) as usize) }
    }

    fn data(&self, r: usize, j: u64) -> *mut u8 {
        self.rec(r, j).data.get() as *mut u8
    }

    /// Rank `r`'s published payload of episode `j`, if it has the `bytes` this rank expects.
    fn payload(&self, r: usize, j: u64, bytes: usize) -> MpiResult<*const u8> {
        let len = self.rec(r, j).len.load(Relaxed) as usize;
        if len != bytes {
            let size = if len > bytes { format!("{len} bytes (more than {bytes} bytes)") } else { format!("{len} bytes") };
            return Err(err(ErrorClass::Truncate, format!("collective message from rank {r} has {size}, this rank expected {bytes}: the ranks passed different counts or datatypes")));
        }
        Ok(self.data(r, j))
    }

    /// Starts an episode at rank `me`: its number, once every rank published the previous one
    /// (so our record of this parity is free).
    fn begin(&self, cx: &Coll, members: &[usize], me: usize) -> MpiResult<u64> {
        cx.u.engine.collective_refusal(cx.c.context, members)?;
        // Only we write our flags.
        let j = self.rec(me, 0).flag.load(Relaxed).max(self.rec(me, 1).flag.load(Relaxed)) + 1;
        let prev = j - 1;
        cx.u.engine.wait_for_collective(cx.c.context, members, || (0..self.n).all(|q| self.rec(q, prev).flag.load(Acquire) >= prev))?;
        Ok(j)
    }

    /// Publishes our record of episode `j` with a payload of `len` bytes (already written) and
    /// wakes the members that sleep.
    fn publish(&self, cx: &Coll, members: &[usize], me: usize, j: u64, len: usize) {
        self.rec(me, j).len.store(len as u64, Relaxed);
        self.rec(me, j).flag.store(j, Release);
        // Pairs with the waiter's sleepers increment + fence + condition check.
        fence(SeqCst);
        for (q, &w) in members.iter().enumerate() {
            if q != me {
                let bell = cx.u.seg.doorbell(w);
                if bell.sleepers.load(Relaxed) != 0 || bell.parked.load(Relaxed) != 0 {
                    crate::runtime::wait::ring(bell);
                }
            }
        }
    }

    /// Waits until every rank in `ranks` published episode `j`.
    fn wait(&self, cx: &Coll, members: &[usize], j: u64, ranks: std::ops::Range<usize>) -> MpiResult {
        cx.u.engine.wait_for_collective(cx.c.context, members, || ranks.clone().all(|q| self.rec(q, j).flag.load(Acquire) >= j))
    }
}

/// Whether the flat algorithms may serve `cx` with a payload of `bytes` per rank: `arena` has
/// records, the ranks are few and, unless the algorithm was `forced` (by the user: correct
/// oversubscribed too, where every arrival may wake every sleeper), each has a core.
pub fn fits(arena: &Arena, cx: &Coll, bytes: usize, forced: bool) -> bool {
    let n = cx.size();
    arena.flat().is_some() && n > 1 && n <= MAX_RANKS && bytes <= DATA && (forced || !super::select::oversubscribed(n))
}

/// Barrier: publish, wait for everyone.
pub fn barrier(cx: &Coll, arena: &Arena) -> MpiResult {
    let f = arena.flat().expect("fits() checked the records");
    let (me, members) = (cx.rank(), arena.members());
    let j = f.begin(cx, members, me)?;
    f.publish(cx, members, me, j, 0);
    f.wait(cx, members, j, 0..cx.size())
}

/// Broadcast of `bytes` (at most `DATA`) from `root`: the root publishes and returns, the others
/// publish (for the reuse rule) and copy the root's record once it is there.
///
/// # Safety
/// As `bcast::bcast`.
pub unsafe fn bcast(cx: &Coll, arena: &Arena, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let f = arena.flat().expect("fits() checked the records");
    let (me, members) = (cx.rank(), arena.members());
    let j = f.begin(cx, members, me)?;
    if me == root {
        // SAFETY: our record is free (`begin`) and holds DATA >= bytes; `buf` holds `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(buf, f.data(me, j), bytes) };
        f.publish(cx, members, me, j, bytes);
        record(cx, |_| bytes);
        return Ok(());
    }
    f.publish(cx, members, me, j, 0);
    f.wait(cx, members, j, root..root + 1)?;
    let from = f.payload(root, j, bytes)?;
    // SAFETY: the root's record holds episode j's `bytes` until we publish j + 1.
    unsafe { std::ptr::copy_nonoverlapping(from, buf, bytes) };
    Ok(())
}

/// Allreduce of `count` elements (`count * red.size` at most `DATA` bytes); with MPI_IN_PLACE
/// `sendbuf == recvbuf`. Every rank folds all records right to left, `a0 op (a1 op (... op
/// an-1))` as the arena does, so every op qualifies and every rank gets the same bits.
///
/// # Safety
/// As `allreduce::allreduce_internal`.
pub unsafe fn allreduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let f = arena.flat().expect("fits() checked the records");
    let (n, me, members) = (cx.size(), cx.rank(), arena.members());
    let bytes = count * red.size;
    let j = f.begin(cx, members, me)?;
    // SAFETY: our record is free (`begin`) and holds DATA >= bytes; `sendbuf` holds `bytes`.
    unsafe { std::ptr::copy_nonoverlapping(sendbuf, f.data(me, j), bytes) };
    f.publish(cx, members, me, j, bytes);
    record(cx, |_| bytes);
    f.wait(cx, members, j, 0..n)?;
    for r in 0..n {
        f.payload(r, j, bytes)?;
    }
    // SAFETY: every record holds episode j's `bytes` (16-byte aligned) until its owner's next
    // episode, which waits for ours; our own contribution is in our record, so `recvbuf` may be
    // `sendbuf`; it holds `count` elements.
    unsafe {
        std::ptr::copy_nonoverlapping(f.data(n - 1, j), recvbuf, bytes);
        for r in (0..n - 1).rev() {
            red.apply(f.data(r, j), recvbuf, count);
        }
    }
    Ok(())
}

/// Reduce of `count` elements (`count * red.size` at most `DATA` bytes) to `root`; with
/// MPI_IN_PLACE at the root `sendbuf == recvbuf`. Every rank publishes its contribution and the
/// others return at once; the root folds the records right to left as `allreduce` does (rank
/// order: every op qualifies). A contribution of another size fails the root with
/// MPI_ERR_TRUNCATE, as a message of the wrong size would.
///
/// # Safety
/// As `reduce::binomial`.
pub unsafe fn reduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let f = arena.flat().expect("fits() checked the records");
    let (n, me, members) = (cx.size(), cx.rank(), arena.members());
    let bytes = count * red.size;
    let j = f.begin(cx, members, me)?;
    // SAFETY: our record is free (`begin`) and holds DATA >= bytes; `sendbuf` holds `bytes`.
    unsafe { std::ptr::copy_nonoverlapping(sendbuf, f.data(me, j), bytes) };
    f.publish(cx, members, me, j, bytes);
    if me != root {
        record_to(cx, root, bytes);
        return Ok(());
    }
    f.wait(cx, members, j, 0..n)?;
    for r in 0..n {
        f.payload(r, j, bytes)?;
    }
    // SAFETY: as in `allreduce`: every record holds episode j's `bytes` until its owner's next
    // episode but one, which waits for our next publication; `recvbuf` holds `count` elements.
    unsafe {
        std::ptr::copy_nonoverlapping(f.data(n - 1, j), recvbuf, bytes);
        for r in (0..n - 1).rev() {
            red.apply(f.data(r, j), recvbuf, count);
        }
    }
    Ok(())
}

/// Alltoall of `block`-byte blocks (`n * block` at most `DATA`): every rank publishes its row
/// and copies its column.
///
/// # Safety
/// As `alltoall::alltoall` on an intracommunicator with equal send and receive blocks.
pub unsafe fn alltoall(cx: &Coll, arena: &Arena, send: *const u8, recv: *mut u8, block: usize) -> MpiResult {
    let f = arena.flat().expect("fits() checked the records");
    let (n, me, members) = (cx.size(), cx.rank(), arena.members());
    let j = f.begin(cx, members, me)?;
    // SAFETY: our record is free and holds DATA >= n * block; `send` holds n blocks.
    unsafe { std::ptr::copy_nonoverlapping(send, f.data(me, j), n * block) };
    f.publish(cx, members, me, j, n * block);
    record(cx, |_| block);
    f.wait(cx, members, j, 0..n)?;
    for r in 0..n {
        f.payload(r, j, n * block)?;
    }
    for r in 0..n {
        // SAFETY: record r holds its row until its owner's next episode; `recv` holds n blocks,
        // disjoint from the records.
        unsafe { std::ptr::copy_nonoverlapping(f.data(r, j).add(me * block), recv.add(r * block), block) };
    }
    Ok(())
}

/// The monitoring's view of a publication that only rank `to` reads (`reduce`).
fn record_to(cx: &Coll, to: usize, bytes: usize) {
    if crate::monitoring::on() {
        crate::monitoring::record_send(cx.u.rank, cx.u.size, cx.c.world_rank(to), bytes, cx.c.coll_context());
    }
}

/// The monitoring's view of a publication, as if it were messages on the communicator's
/// collective context: `bytes(r)` to each other rank `r` that reads it (MPI_T's collective
/// matrices count a collective's internal transfers, whatever carries them).
fn record(cx: &Coll, bytes: impl Fn(usize) -> usize) {
    if !crate::monitoring::on() {
        return;
    }
    let (u, c, me) = (cx.u, cx.c, cx.rank());
    for r in (0..cx.size()).filter(|&r| r != me) {
        crate::monitoring::record_send(u.rank, u.size, c.world_rank(r), bytes(r), c.coll_context());
    }
}
