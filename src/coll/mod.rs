//! Collective operations built on the point-to-point engine, one file per algorithm family.
//!
//! All traffic goes on the communicator's collective context (`Comm::coll_context`), which user
//! point-to-point messages never use. A collective's messages carry the tag of its `Coll`:
//!
//! ```text
//!   bit 30     1 = sequenced (a user-visible collective), 0 = fixed internal tag
//!   bits 16-29 sequence number mod 2^14 (or the fixed id: TAG_*)
//!   bits 8-15  phase, for algorithms built from several sub-collectives (`Coll::phase`)
//!   bits 0-7   round, free for the algorithm (`Coll::tag_at`)
//! ```
//!
//! The sequence number counts the collectives a rank started on the communicator; every rank
//! starts them in the same order, so it is the same on all ranks, and collectives in flight at once
//! (a blocking one beside nonblocking ones running as schedules, `schedule`) never match each
//! other's messages. Within one tag, messages between two ranks match in order (non-overtaking),
//! so an algorithm may reuse one tag for all its rounds when each pair exchanges in a fixed order.
//!
//! Algorithms move contiguous bytes; the FFI layer stages derived datatypes. Which algorithm
//! runs is chosen per call in `select`, from the size, the rank count and the rank mode, or
//! forced with `OXMPI_<COLLECTIVE>_ALGORITHM`.
pub mod allgather;
pub mod allreduce;
pub mod allreduce_clairvoyant;
pub mod allreduce_slices;
pub mod arena;
pub mod alltoall;
pub mod alltoall_peer_copy;
pub mod barrier;
pub mod neighbor;
pub mod bcast;
pub mod bcast_arrival;
pub mod bcast_shared;
pub mod clairvoyant_calib;
pub mod clairvoyant_exec;
pub mod clairvoyant_pap;
pub mod clairvoyant_watch;
pub mod direct;
pub mod flat;
pub mod gather;
pub mod hierarchical;
pub mod inter;
pub mod pipeline;
pub mod prereduced_ring;
pub mod rabenseifner;
pub mod reduce;
pub mod reduce_arrival;
pub mod region;
pub mod scatter;
pub mod sorted_linear;
pub mod reduce_scatter;
pub mod scan;
pub mod ring;
pub mod scatter_allgather;
pub mod schedule;
pub mod nbc;
pub mod nbc_inter;
pub mod select;
pub mod shm_large;
pub mod stage;

use crate::comm::Comm;
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::{ReqId, SendMode};
use crate::comm::Universe;

/// What the collectives keep per communicator (in `Comm::coll`).
#[derive(Default)]
pub struct CommState {
    /// This rank's hold on the communicator's shared arena, once used.
    pub arena: std::sync::OnceLock<arena::ArenaRef>,
    /// Persistent collectives initialized on the communicator so far (`Coll::persistent`).
    pub persistent_seq: std::sync::atomic::AtomicU32,
}

/// Frees this rank's communicator `index` (`Universe::remove_comm`) and tells the collectives:
/// in threads mode the shared arena's registry entry counts the members gone
/// (`arena::leave`). Every release of a communicator handle goes through here.
pub fn remove_comm(u: &Universe, index: u32) -> Option<std::sync::Arc<Comm>> {
    let c = u.remove_comm(index)?;
    arena::leave(&c);
    Some(c)
}

/// The collectives' state of communicator `c`, made at the first call.
#[inline]
pub fn state(c: &Comm) -> &CommState {
    c.coll.get_or_init(|| Box::<CommState>::default()).downcast_ref().expect("Comm::coll holds a coll::CommState")
}

/// Fixed internal tags (bits 16-29; bit 30 clear), for collectives the library runs on its own
/// behalf: the context agreement of communicator constructors and the like. The dissemination
/// barrier of communicator constructors uses id 0.
pub const TAG_BCAST: i32 = 0x1 << 16;
pub const TAG_REDUCE: i32 = 0x2 << 16;
pub const TAG_ALLREDUCE: i32 = 0x3 << 16;
/// Intercommunicator setup (merge, leader exchanges).
pub const TAG_INTER: i32 = 0x4 << 16;
/// MPI_Comm_idup's context agreement (runs in the background, beside user collectives).
pub const TAG_IDUP: i32 = 0x5 << 16;
/// MPI_Comm_create_from_group (ids 0x1000..=0x1fff) and MPI_Intercomm_create_from_groups
/// (0x2000..=0x2fff), told apart by `hash`, a hash of their string tag.
pub fn tag_from_group(hash: u32, inter: bool) -> i32 {
    ((if inter { 0x2000 } else { 0x1000 } | (hash & 0xfff)) as i32) << 16
}
/// MPI_Comm_create_group with user tag `tag` (ids 0x800..=0xfff): concurrent calls on one parent,
/// which the standard lets the application tell apart by tag alone (MPI 4.1 section 7.4.2), do
/// not meet each other's messages (unless their tags are equal modulo 2048).
pub fn tag_create_group(tag: i32) -> i32 {
    ((0x800 | (tag as u32 & 0x7ff)) as i32) << 16
}
/// MPIX_Comm_shrink and MPIX_Comm_agree, attempt `a`: ids 0x100..=0x1ff, which a revocation
/// spares (`crate::p2p::engine::is_ulfm_tag`).
pub fn tag_ulfm(attempt: u32) -> i32 {
    ((0x100 | (attempt & 0xff)) as i32) << 16
}

/// Persistent collectives (ids 0x3000..=0x3fff): the n-th initialized on a communicator has id
/// 0x3000 + n mod 4096 for its whole life (`Coll::persistent`).
fn tag_persistent(n: u32) -> i32 {
    ((0x3000 | (n & 0xfff)) as i32) << 16
}

/// Tags of user-visible collectives: bit 30, the sequence number in bits 16-28 and bit 29 for
/// the nonblocking ones' own sequence.
const SEQUENCED: i32 = 1 << 30;
const NONBLOCKING: i32 = 1 << 29;

/// One collective operation in progress on a communicator: where its messages go and their tag.
#[derive(Clone, Copy)]
pub struct Coll<'a> {
    pub u: &'a Universe,
    pub c: &'a Comm,
    pub tag: i32,
    /// A blocking collective the application called on `c` that may meet in the communicator's
    /// shared arena (threads mode; see `arena`). False for internal collectives and schedules.
    pub shared: bool,
}

impl<'a> Coll<'a> {
    /// The next user-visible blocking collective on `c` (takes its sequence number).
    pub fn next(u: &'a Universe, c: &'a Comm) -> Coll<'a> {
        let seq = c.coll_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Coll::sequenced(u, c, seq)
    }

    /// The next nonblocking (or started persistent) collective on `c`. Nonblocking collectives
    /// count apart from blocking ones, as in MPICH, so a program whose ranks order one blocking
    /// and one nonblocking collective differently (mpi4py's MPI_Comm_iagree fallback does) still
    /// matches them up.
    pub fn next_nonblocking(u: &'a Universe, c: &'a Comm) -> Coll<'a> {
        let seq = c.nbc_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cx = Coll::sequenced(u, c, seq);
        Coll { tag: cx.tag | NONBLOCKING, ..cx }
    }

    /// The next persistent collective initialized on `c`. Its tag is fixed at initialization,
    /// which happens in the same order on every rank (MPI 4.1 section 6.13), while the ranks
    /// may start their persistent collectives in different orders: a tag drawn at each start
    /// would pair one collective's messages with another's. Repeated starts of one request reuse
    /// the tag: each rank runs a start to completion before the next, and messages between two
    /// ranks match in order, so a start never takes the next start's messages.
    pub fn persistent(u: &'a Universe, c: &'a Comm) -> Coll<'a> {
        let n = state(c).persistent_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Coll { u, c, tag: tag_persistent(n), shared: false }
    }

    /// The blocking collective with sequence number `seq` on `c`.
    pub fn sequenced(u: &'a Universe, c: &'a Comm, seq: u32) -> Coll<'a> {
        Coll { u, c, tag: SEQUENCED | (((seq & 0x1fff) as i32) << 16), shared: false }
    }

    /// An internal collective on fixed tag `tag` (one of `TAG_*`).
    pub fn fixed(u: &'a Universe, c: &'a Comm, tag: i32) -> Coll<'a> {
        Coll { u, c, tag, shared: false }
    }

    /// The same collective on another communicator over the same contexts (an
    /// intercommunicator's local group, a sub-group of the ranks).
    pub fn on<'b>(&self, c: &'b Comm) -> Coll<'b>
    where
        'a: 'b,
    {
        Coll { u: self.u, c, tag: self.tag, shared: false }
    }

    /// Phase `p` (1..=255) of a collective built from several others: its messages never match
    /// the other phases'.
    pub fn phase(&self, p: i32) -> Coll<'a> {
        debug_assert!((1..256).contains(&p));
        Coll { tag: (self.tag & !0xff00) | (p << 8), shared: false, ..*self }
    }

    /// The tag of round `r` (0..=255) of this collective.
    pub fn tag_at(&self, r: usize) -> i32 {
        self.tag | (r & 0xff) as i32
    }

    pub fn size(&self) -> usize {
        self.c.size()
    }

    pub fn rank(&self) -> usize {
        self.c.rank
    }

    /// Sends `bytes` at `buf` to communicator rank `to`; returns the engine request, which the
    /// caller must wait for.
    ///
    /// # Safety
    /// `buf` must hold `bytes` readable bytes until the request completes.
    pub unsafe fn isend(&self, buf: *const u8, bytes: usize, to: usize) -> MpiResult<ReqId> {
        // SAFETY: per this function's contract.
        unsafe { self.isend_world(buf, bytes, self.c.world_rank(to), self.tag) }
    }

    /// Posts a receive of at most `bytes` into `buf` from communicator rank `from`; finish it
    /// with `wait_recv`.
    ///
    /// # Safety
    /// `buf` must hold `bytes` writable bytes until the request completes.
    pub unsafe fn irecv(&self, buf: *mut u8, bytes: usize, from: usize) -> ReqId {
        // SAFETY: per this function's contract.
        unsafe { self.irecv_world(buf, bytes, self.c.world_rank(from), self.tag) }
    }

    /// `isend` to world rank `to` with tag `tag` (intercommunicator peers, per-round tags).
    ///
    /// # Safety
    /// As `isend`.
    pub unsafe fn isend_world(&self, buf: *const u8, bytes: usize, to: usize, tag: i32) -> MpiResult<ReqId> {
        // SAFETY: per this function's contract.
        unsafe { self.u.engine.isend(crate::p2p::Buf::flat(buf), bytes, to, tag, self.c.coll_context(), SendMode::Standard) }
    }

    /// `irecv` from world rank `from` with tag `tag`.
    ///
    /// # Safety
    /// As `irecv`.
    pub unsafe fn irecv_world(&self, buf: *mut u8, bytes: usize, from: usize, tag: i32) -> ReqId {
        // SAFETY: per this function's contract.
        unsafe { self.u.engine.irecv(crate::p2p::Buf::Flat(buf), bytes, Some(from), tag, self.c.coll_context()) }
    }

    /// Waits for receive `r` (from communicator rank `from`), which must bring exactly `bytes`.
    pub fn wait_recv(&self, r: ReqId, bytes: usize, from: usize) -> MpiResult {
        check_received(&self.u.engine.wait(r), bytes, from)
    }

    /// Waits for every send in `sends`.
    /// Waits for every send of `sends`; the first failure (a dead receiver, a revoked
    /// communicator: `crate::ulfm`) is the collective's, once all are done with their buffers.
    pub fn wait_sends(&self, sends: &[ReqId]) -> MpiResult {
        let mut first = Ok(());
        for &s in sends {
            let r = sent_result(&self.u.engine.wait(s));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Sends `bytes` at `buf` to communicator rank `to` and waits.
    ///
    /// # Safety
    /// `buf` must hold `bytes` readable bytes.
    pub unsafe fn send(&self, buf: *const u8, bytes: usize, to: usize) -> MpiResult {
        // SAFETY: per this function's contract; the send is waited for.
        let s = unsafe { self.isend(buf, bytes, to)? };
        sent_result(&self.u.engine.wait(s))
    }

    /// Receives exactly `bytes` into `buf` from communicator rank `from` and waits.
    ///
    /// # Safety
    /// `buf` must hold `bytes` writable bytes.
    pub unsafe fn recv(&self, buf: *mut u8, bytes: usize, from: usize) -> MpiResult {
        // SAFETY: per this function's contract; the receive is waited for.
        let r = unsafe { self.irecv(buf, bytes, from) };
        self.wait_recv(r, bytes, from)
    }

    /// Sends `sbytes` at `sbuf` to `to` while receiving exactly `rbytes` into `rbuf` from `from`.
    ///
    /// # Safety
    /// `sbuf` must hold `sbytes` readable bytes, `rbuf` `rbytes` writable ones, not overlapping.
    pub unsafe fn sendrecv(&self, sbuf: *const u8, sbytes: usize, to: usize, rbuf: *mut u8, rbytes: usize, from: usize) -> MpiResult {
        // SAFETY: per this function's contract; both requests are waited for.
        let r = unsafe { self.irecv(rbuf, rbytes, from) };
        // SAFETY: as above.
        let s = unsafe { self.isend(sbuf, sbytes, to) };
        let got = self.wait_recv(r, rbytes, from);
        let sent = sent_result(&self.u.engine.wait(s?));
        got.and(sent)
    }

    /// `sendrecv` where either side may be empty (no message then): block algorithms whose
    /// blocks can be empty when there are fewer items than ranks. Both ends of a transfer compute
    /// the same length, so they agree on whether it happens.
    ///
    /// # Safety
    /// As `sendrecv`.
    pub unsafe fn exchange(&self, sbuf: *const u8, sbytes: usize, to: usize, rbuf: *mut u8, rbytes: usize, from: usize) -> MpiResult {
        // SAFETY: per this function's contract.
        unsafe {
            match (sbytes, rbytes) {
                (0, 0) => Ok(()),
                (0, _) => self.recv(rbuf, rbytes, from),
                (_, 0) => self.send(sbuf, sbytes, to),
                _ => self.sendrecv(sbuf, sbytes, to, rbuf, rbytes, from),
            }
        }
    }
}

/// Block `i` of `total` items cut into `parts` near-equal consecutive blocks: its (start, length).
/// The first `total % parts` blocks are one item longer; every rank computes the same cut, so
/// the large-message algorithms agree on block boundaries without exchanging them.
pub(crate) fn block(total: usize, parts: usize, i: usize) -> (usize, usize) {
    let (q, r) = (total / parts, total % parts);
    (i * q + i.min(r), q + usize::from(i < r))
}

/// Blocks `a..b` of the same cut as one range: (start, length).
pub(crate) fn blocks(total: usize, parts: usize, a: usize, b: usize) -> (usize, usize) {
    let start = block(total, parts, a).0;
    let end = if b >= parts { total } else { block(total, parts, b).0 };
    (start, end - start)
}

/// The error of a finished collective send, if it failed (a dead receiver or a revoked
/// communicator, `crate::ulfm`): a collective must report it, not go on as if delivered.
pub(crate) fn sent_result(st: &crate::p2p::Status) -> MpiResult {
    crate::p2p::engine::failure_result(st).map_err(|e| err(e.class, format!("collective message to world rank {}: {}", st.source, e.msg)))
}

/// Turns a receive status into an error if the message did not have the expected size.
pub(crate) fn check_received(st: &crate::p2p::Status, bytes: usize, from: usize) -> MpiResult {
    if matches!(st.error, Some(ErrorClass::ProcFailed | ErrorClass::Revoked)) {
        // A member died or the communicator was revoked (crate::ulfm): the collective fails here.
        return crate::p2p::engine::failure_result(st).map_err(|e| err(e.class, format!("collective message from rank {from}: {}", e.msg)));
    }
    if st.error.is_some() || st.bytes != bytes as u64 {
        // A truncated status holds the bytes received, not the message's size.
        let size = if st.error.is_some() { format!("more than {bytes} bytes") } else { format!("{} bytes", st.bytes) };
        return Err(err(ErrorClass::Truncate, format!("collective message from rank {from} has {size}, this rank expected {bytes}: the ranks passed different counts or datatypes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{block, blocks};

    #[test]
    fn blocks_cut_evenly_and_cover() {
        for total in [0, 1, 5, 7, 1000, 300001] {
            for parts in 1..=17 {
                let mut next = 0;
                for i in 0..parts {
                    let (s, l) = block(total, parts, i);
                    assert_eq!(s, next, "blocks are consecutive");
                    assert!(l == total / parts || l == total / parts + 1);
                    next = s + l;
                }
                assert_eq!(next, total);
                for a in 0..parts {
                    for b in a..=parts {
                        let (s, l) = blocks(total, parts, a, b);
                        let end = if b == parts { total } else { block(total, parts, b).0 };
                        assert_eq!((s, s + l), (block(total, parts, a).0, end));
                    }
                }
            }
        }
    }
}
