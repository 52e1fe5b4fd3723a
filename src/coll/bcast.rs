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

/// Messages of at least this many bytes use scatter + allgather.
const SCATTER_ALLGATHER_MIN: usize = 64 << 10;
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
fn auto(bytes: usize, n: usize) -> usize {
    if bytes >= SCATTER_ALLGATHER_MIN && bytes >= n * 1024 {
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
                    cx.wait_sends(&sends);
                    return Err(e);
                }
            }
        }
        mask >>= 1;
    }
    cx.wait_sends(&sends);
    Ok(())
}
