//! MPI_Bcast algorithms.
//!
//! - `binomial`: binomial tree rooted at `root`. With ranks renumbered relative to the root
//!   (`vr = (rank - root) mod n`), rank `vr` receives from `vr` minus its lowest set bit, then
//!   sends to `vr + 2^k` for every `2^k` below that bit, largest subtree first: ceil(log2 n)
//!   rounds, each byte crosses each tree edge once.
use super::select::{forced, Collective};
use super::Coll;
use crate::error::MpiResult;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial"];

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root` (`root < cx.size()`).
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    if cx.size() == 1 || bytes == 0 {
        return Ok(());
    }
    let _ = forced(Collective::Bcast, ALGORITHMS)?;
    // SAFETY: per this function's contract.
    unsafe { binomial(cx, buf, bytes, root) }
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
