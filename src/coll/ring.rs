//! MPI_Allreduce as a ring (Patarasuk & Yuan 2009; the "ring" allreduce of Open MPI and NCCL):
//! a reduce-scatter ring followed by an allgather ring. Commutative operations only.
//!
//! The vector is cut into `n` blocks. In step s of the reduce-scatter each rank sends block
//! `rank - s` to its right neighbour and combines block `rank - s - 1` from its left neighbour
//! into its own copy; after `n - 1` steps it holds block `rank + 1` fully reduced. The allgather
//! then passes the finished blocks around the ring in `n - 1` more steps. Every rank sends and
//! receives `2 (n-1)/n` of the vector, the minimum for any allreduce, for any `n` (no
//! power-of-two fold-in), and each step waits on a single neighbour.
use super::{blocks, Coll};
use crate::error::{err, ErrorClass, MpiResult};
use crate::op::Reduction;

/// # Safety
/// `sendbuf` holds `count` readable elements of `red`'s type, `recvbuf` `count` writable ones;
/// the same buffer or disjoint. `red.op` must be commutative.
pub unsafe fn allreduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let members: Vec<usize> = (0..cx.size()).collect();
    // SAFETY: per this function's contract.
    unsafe { among(cx, &members, sendbuf, recvbuf, count, red) }
}

/// The ring over `members` (communicator ranks in ring order, this rank among them): the
/// allreduce of their contributions, on their ranks only.
///
/// # Safety
/// As `allreduce`.
pub unsafe fn among(cx: &Coll, members: &[usize], sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let n = members.len();
    let rank = members.iter().position(|&r| r == cx.rank()).ok_or_else(|| err(ErrorClass::Intern, "ring allreduce: this rank is not a ring member"))?;
    let size = red.size;
    if !std::ptr::eq(sendbuf, recvbuf) {
        // SAFETY: both hold `count` elements and are disjoint (contract).
        unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, count * size) };
    }
    let range = |b: usize| {
        let (s, l) = blocks(count, n, b, b + 1);
        (s * size, l * size)
    };
    let (right, left) = (members[(rank + 1) % n], members[(rank + n - 1) % n]);
    // Block 0 is the longest.
    let mut tmp = vec![0u8; range(0).1];
    for s in 0..n - 1 {
        let (so, sl) = range((rank + n - s) % n);
        let rb = (rank + 2 * n - s - 1) % n;
        let (ro, rl) = range(rb);
        // SAFETY: the sent block lies within `recvbuf`; `tmp` holds the longest block and is
        // disjoint from it.
        unsafe {
            cx.exchange(recvbuf.add(so), sl, right, tmp.as_mut_ptr(), rl, left)?;
            red.apply(tmp.as_ptr(), recvbuf.add(ro), rl / size);
        }
    }
    for s in 0..n - 1 {
        let (so, sl) = range((rank + 1 + n - s) % n);
        let (ro, rl) = range((rank + n - s) % n);
        // SAFETY: two different blocks of `recvbuf`.
        unsafe { cx.exchange(recvbuf.add(so), sl, right, recvbuf.add(ro), rl, left)? };
    }
    Ok(())
}
