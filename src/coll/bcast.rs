//! MPI_Bcast algorithms.
//!
//! - `scatter_allgather` (`scatter_allgather.rs`): van de Geijn's binomial scatter + ring
//!   allgather, for large messages.
//! - `pipeline` (`pipeline.rs`): a chain of ranks forwarding segments.
//! - `binomial`: binomial tree rooted at `root`. With ranks renumbered relative to the root
//!   (`vr = (rank - root) mod n`), rank `vr` receives from `vr` minus its lowest set bit, then
//!   sends to `vr + 2^k` for every `2^k` below that bit, largest subtree first: ceil(log2 n)
//!   rounds, each byte crosses each tree edge once.
use super::select::{forced, Collective};

/// Messages of at least this many bytes on at least `LARGE_RANKS` ranks leave the binomial tree.
const LARGE_MIN: usize = 2 << 20;
const LARGE_RANKS: usize = 8;
use super::Coll;
use crate::error::MpiResult;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial", "scatter_allgather", "pipeline"];

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root` (`root < cx.size()`).
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    if cx.size() == 1 || bytes == 0 {
        return Ok(());
    }
    let n = cx.size();
    let algo = match forced(Collective::Bcast, ALGORITHMS)? {
        Some(i) => i,
        None => auto(bytes, n),
    };
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            1 => super::scatter_allgather::bcast(cx, buf, bytes, root),
            2 => super::pipeline::bcast(cx, buf, bytes, root),
            _ => binomial(cx, buf, bytes, root),
        }
    }
}

/// The automatic choice: an index into `ALGORITHMS`.
///
/// Measured with benches/coll_sweep.c (root 0, best of 3 repetitions, microseconds per call) on
/// the 2-core development machine, shared (load average 15-20), so the numbers are noisy:
///
/// ```text
///  n   bytes   binomial  scatter_allgather  pipeline |  MPICH    Open MPI
///              proc/thr  proc/thr           proc/thr |
///  4    4 KiB   2.5/2.3    10.9/16.1    2.7/2.7      |   19.6     15.0
///  4  256 KiB    74/40      147/60       81/35       |  25429     94
///  8  256 KiB   193/65      708/212     301/72       | 122667    156
///  8    4 MiB 11698/1654   9744/4277   7912/7098     | 210663  11968
/// 16    1 MiB  1498/576    7597/2478   3843/1051     |    -     18598
/// 16    4 MiB 19657/10211 23896/6301  14536/8936     |    -     31869
/// ```
///
/// On shared memory a large message crosses each tree edge as one memcpy by the receiver, so
/// the binomial tree's log2 n copies cost less than the 2 (n-1) synchronised steps of the
/// bandwidth-optimal algorithms until messages are several MiB and ranks many. Oversubscribed,
/// every synchronisation may wait for a descheduled peer: the chain (two partners per rank) wins
/// in processes mode, scatter + allgather with 16 threads.
fn auto(bytes: usize, n: usize) -> usize {
    if bytes < LARGE_MIN || n < LARGE_RANKS {
        0
    } else if !super::select::threads_mode() {
        2
    } else if n >= 16 {
        1
    } else {
        0
    }
}

/// # Safety
/// As `bcast`.
pub unsafe fn binomial(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let n = cx.size();
    let vr = (cx.rank() + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            // SAFETY: `buf` holds `bytes` writable bytes at non-roots.
            unsafe { cx.recv(buf, bytes, (vr - mask + root) % n)? };
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            // SAFETY: `buf` holds `bytes` bytes; the sends are waited for below.
            match unsafe { cx.isend(buf, bytes, (vr + mask + root) % n) } {
                Ok(s) => sends.push(s),
                Err(e) => {
                    // This error is the one to report; the others' are of the same collective.
                    let _ = cx.wait_sends(&sends);
                    return Err(e);
                }
            }
        }
        mask >>= 1;
    }
    cx.wait_sends(&sends)
}
