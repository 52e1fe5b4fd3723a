//! Threads mode, MPI_Allreduce `slices`: single copy between the ranks' own buffers. Every
//! rank publishes its send and receive buffers through one arena episode; rank r then reduces
//! slice r of the vector, reading slice r of every rank's send buffer in place, chunk by chunk
//! into a small scratch buffer that stays in cache, and stores each reduced chunk into every
//! rank's receive buffer; a second episode (a barrier) keeps every buffer alive until all
//! ranks are done. A reduce-scatter and an allgather without messages or intermediate copies:
//! each element is read once from its owner and written once per rank, and the ranks work on
//! their slices in parallel. (Recursive doubling moves the whole vector per round and combines
//! it on every rank.)
//!
//! The combination is in rank order, `a0 op (a1 op (... op an-1))`, so every op qualifies
//! (non-commutative user ops included) and every rank gets the same bits. MPI_IN_PLACE works:
//! only rank r reads or writes slice r of any buffer, and it reads a chunk everywhere before it
//! writes it anywhere.
use super::arena::Arena;
use super::Coll;
use crate::error::MpiResult;
use crate::op::Reduction;

/// Bytes of one chunk: the scratch buffer plus the inputs it combines stay in L1/L2.
const CHUNK: usize = 16 << 10;

/// Allreduce of `count` elements through `arena`'s threads-mode address sharing. Returns
/// Ok(false) without doing anything when the arena is a processes-mode region (the caller
/// then picks another algorithm, as every rank does).
///
/// # Safety
/// As `allreduce::allreduce_internal`; `count` and the op are the same on every rank.
pub unsafe fn allreduce(cx: &Coll, arena: &Arena, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult<bool> {
    let Some(bufs) = arena.share_addresses(cx, [sendbuf as usize, recvbuf as usize])? else { return Ok(false) };
    let (n, me, es) = (cx.size(), cx.rank(), red.size);
    let (lo, hi) = (me * count / n, (me + 1) * count / n);
    let per_chunk = (CHUNK / es).max(1);
    let mut tmp = vec![0u8; per_chunk * es];
    let mut at = lo;
    while at < hi {
        let m = per_chunk.min(hi - at);
        let off = at * es;
        let t = tmp.as_mut_ptr();
        // SAFETY: every rank's send buffer holds `count` elements and stays valid until the
        // barrier below; elements [at, at + m) of every buffer are read and written by this
        // rank alone (slice `me`); `tmp` holds `m` elements and is disjoint from all buffers.
        unsafe {
            std::ptr::copy_nonoverlapping((bufs[n - 1][0] as *const u8).add(off), t, m * es);
            for r in (0..n - 1).rev() {
                red.apply((bufs[r][0] as *const u8).add(off), t, m);
            }
            for b in &bufs {
                std::ptr::copy_nonoverlapping(t, (b[1] as *mut u8).add(off), m * es);
            }
        }
        at += m;
    }
    arena.barrier(cx)?;
    Ok(true)
}
