//! MPI_Bcast as a pipelined chain (Thakur, Rabenseifner & Gropp 2005 discuss it beside the
//! scatter-allgather algorithm; Open MPI's `pipeline` bcast is the same).
//!
//! Ranks form a chain in relative order (root, root + 1, ...). The message is cut into segments
//! of `SEGMENT` bytes; each rank receives segment k from its predecessor and forwards it to its
//! successor while the next segment is already on its way in. Once the pipe is full every link
//! carries a segment at once, so the time approaches one message transfer plus `n - 1` segment
//! latencies. Each rank talks to two partners only.
use super::Coll;
use crate::error::MpiResult;

/// Segment size: large enough to go single-copy (> 8 KiB) and amortise a message's overhead.
pub const SEGMENT: usize = 128 << 10;

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root`.
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let n = cx.size();
    let vr = (cx.rank() + n - root) % n;
    let prev = (cx.rank() + n - 1) % n;
    let next = (cx.rank() + 1) % n;
    let segs = bytes.div_ceil(SEGMENT);
    // Sends stay in flight while the next segment comes in; a send of a large segment is a
    // rendezvous the successor completes by copying, so the predecessor's next segment is
    // received meanwhile.
    let mut sends = Vec::with_capacity(segs);
    let mut result = Ok(());
    for k in 0..segs {
        let (off, len) = (k * SEGMENT, SEGMENT.min(bytes - k * SEGMENT));
        if vr != 0 {
            // SAFETY: `off + len <= bytes`, writable at non-roots.
            if let Err(e) = unsafe { cx.recv(buf.add(off), len, prev) } {
                result = Err(e);
                break;
            }
        }
        if vr + 1 < n {
            // SAFETY: segment k is in place (received above, or the root's data); the send is
            // waited for below.
            match unsafe { cx.isend(buf.add(off), len, next) } {
                Ok(s) => sends.push(s),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
    }
    let sent = cx.wait_sends(&sends);
    result.and(sent)
}
