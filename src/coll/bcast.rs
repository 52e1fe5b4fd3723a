//! MPI_Bcast: binomial tree rooted at `root`.
//!
//! With ranks renumbered relative to the root (`vr = (rank - root) mod n`), rank `vr` receives from
//! `vr` minus its lowest set bit, then sends to `vr + 2^k` for every `2^k` below that bit, largest
//! subtree first: ceil(log2 n) rounds, each byte crosses each tree edge once.
use super::{isend, recv, TAG_BCAST};
use crate::comm::Comm;
use crate::error::MpiResult;
use crate::runtime::universe::Universe;

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root` (`root < c.size()`).
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(u: &Universe, c: &Comm, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let n = c.size();
    if n == 1 || bytes == 0 {
        return Ok(());
    }
    let vr = (c.rank + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            recv(u, c, buf, bytes, (vr - mask + root) % n, TAG_BCAST)?;
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            sends.push(isend(u, c, buf, bytes, (vr + mask + root) % n, TAG_BCAST)?);
        }
        mask >>= 1;
    }
    for s in sends {
        u.engine.wait(s);
    }
    Ok(())
}
