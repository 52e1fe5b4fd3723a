//! Processes mode: collectives through the large area of the communicator's shared region
//! (`region`), synchronised by episodes of its arena without contributions (`Arena::barrier`),
//! which fail on a failed member or a revoked communicator instead of waiting for ever.
//!
//! - `allreduce`: per step of at most one block per rank, every rank copies its part of the
//!   vector into its block of the area; barrier; rank r reduces slice r of the step, reading
//!   every rank's block in place, into the result block; barrier; every rank copies the result
//!   out. A reduce-scatter and an allgather through memory: each element is copied in once,
//!   read once by the rank reducing it and copied out once per rank, with no message and no
//!   system call (the message-based algorithms pay a rendezvous and a process_vm_readv per
//!   transfer, and log2 n or 2 (n - 1) of them). The combination is in rank order,
//!   `a0 op (a1 op (... op an-1))`, so every op qualifies and every rank gets the same bits.
//! - `alltoall`: every rank copies its n blocks into its block of the area (the row); barrier;
//!   every rank copies block `me` of every row (its column). One barrier per call.
//!
//! Which half of the area a step uses is the parity of the arena's generation at its start
//! (the same on every rank). Reuse is safe: a step writes the contribution blocks of its half
//! only after passing the barrier that ended the last step reading them (an alltoall's columns
//! are read before the next episode completes at anyone; an allreduce step's blocks before its
//! own second barrier), and the result block only after its first barrier, which every rank
//! reaches after copying out the previous result of that half.
use super::arena::Arena;
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// The region of `arena` when an allreduce of elements of `elem` bytes can run through it.
pub fn usable(arena: &Arena, elem: usize) -> bool {
    arena.region().is_some_and(|r| elem > 0 && elem <= r.block())
}

/// Allreduce of `count` elements through `arena`'s region (`usable(arena, red.size)`); with
/// MPI_IN_PLACE `sendbuf == recvbuf`.
///
/// # Safety
/// As `allreduce::allreduce_internal`; `count` and the op are the same on every rank.
pub unsafe fn allreduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let region = arena.region().expect("usable() checked the region");
    let (n, me, es) = (cx.size(), cx.rank(), red.size);
    let per_step = region.block() / es;
    let mut done = 0;
    while done < count {
        let m = per_step.min(count - done);
        let bytes = m * es;
        let half = region.half(arena.generation() as usize & 1);
        let block = |r: usize| half.wrapping_add(r * region.block());
        let result = block(n);
        // SAFETY: our block has room for `bytes` (m <= block / es); nobody reads it until the
        // barrier below (module comment); the caller's buffers hold `count` elements.
        unsafe { std::ptr::copy_nonoverlapping(sendbuf.add(done * es), block(me), bytes) };
        arena.barrier(cx)?;
        let (lo, hi) = (me * m / n, (me + 1) * m / n);
        if hi > lo {
            let out = result.wrapping_add(lo * es);
            // SAFETY: every block holds the step's `m` elements (written before the barrier);
            // slice [lo, hi) of the result block is ours alone until the next barrier.
            unsafe {
                std::ptr::copy_nonoverlapping(block(n - 1).add(lo * es), out, (hi - lo) * es);
                for r in (0..n - 1).rev() {
                    red.apply(block(r).add(lo * es), out, hi - lo);
                }
            }
        }
        arena.barrier(cx)?;
        // SAFETY: the result block holds the step's `m` reduced elements, untouched until every
        // rank passed the next barrier of this half; recvbuf holds `count` elements.
        unsafe { std::ptr::copy_nonoverlapping(result, recvbuf.add(done * es), bytes) };
        done += m;
    }
    Ok(())
}

/// Whether an alltoall of `block`-byte blocks fits `arena`'s region (one row per block).
pub fn alltoall_fits(arena: &Arena, n: usize, block: usize) -> bool {
    arena.region().is_some_and(|r| n * block <= r.block())
}

/// Alltoall of `block`-byte blocks through `arena`'s region (`alltoall_fits`).
///
/// # Safety
/// As `alltoall::alltoall` on an intracommunicator with equal send and receive blocks.
pub unsafe fn alltoall(cx: &Coll, arena: &Arena, send: *const u8, recv: *mut u8, block: usize) -> MpiResult {
    let region = arena.region().expect("alltoall_fits() checked the region");
    let (n, me) = (cx.size(), cx.rank());
    let half = region.half(arena.generation() as usize & 1);
    let row = |r: usize| half.wrapping_add(r * region.block());
    // SAFETY: the row fits our block (`alltoall_fits`); nobody reads it before the barrier.
    unsafe { std::ptr::copy_nonoverlapping(send, row(me), n * block) };
    arena.barrier(cx)?;
    for r in 0..n {
        // SAFETY: row r holds n blocks, unchanged until every rank passed the next episode;
        // `recv` holds n blocks, disjoint from the region.
        unsafe { std::ptr::copy_nonoverlapping(row(r).add(me * block), recv.add(r * block), block) };
    }
    Ok(())
}

/// Bytes one broadcast step moves through `arena`'s region (its n contribution blocks: the
/// result block may still be read by an allreduce step that ended at the last barrier).
pub fn bcast_step(arena: &Arena, n: usize) -> Option<usize> {
    arena.region().map(|r| n * r.block())
}

/// Broadcast of `bytes` bytes from `root` through `arena`'s region (`bcast_step` is Some): per
/// step the root copies a piece into the area, a barrier, the others copy it out.
///
/// # Safety
/// As `bcast::bcast`.
pub unsafe fn bcast(cx: &Coll, arena: &Arena, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let region = arena.region().expect("bcast_step() checked the region");
    let step = cx.size() * region.block();
    let mut done = 0;
    while done < bytes {
        let m = step.min(bytes - done);
        let area = region.half(arena.generation() as usize & 1);
        if cx.rank() == root {
            // SAFETY: the n contribution blocks are contiguous and hold `step` bytes, nobody
            // reads them before the barrier; `buf` holds `bytes` bytes.
            unsafe { std::ptr::copy_nonoverlapping(buf.add(done), area, m) };
        }
        arena.barrier(cx)?;
        if cx.rank() != root {
            // SAFETY: the area holds the piece until every rank passed the next episode.
            unsafe { std::ptr::copy_nonoverlapping(area, buf.add(done), m) };
        }
        done += m;
    }
    Ok(())
}
