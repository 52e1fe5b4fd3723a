//! The transport seam: what the point-to-point protocols need from the peers of a rank, in the
//! spirit of MPICH's netmods and Open MPI's BTLs, and its shared-memory implementation.
//!
//! The protocols (`p2p::engine`: eager, rendezvous with single copy or streaming, split copies,
//! synchronous acknowledgements, revocations) talk to peers only through `Transport`: packets (a
//! 64-byte `packet::SlotHeader` and up to `Transport::MAX_PAYLOAD` bytes) delivered in order per pair,
//! one-sided reads and writes of a peer's memory for rendezvous, wake-ups, and failure notices.
//! `shm::Shm` implements it over the job segment (FastForward rings, doorbells, process_vm_readv
//! or plain copies in threads mode). A network transport is another implementation, and the
//! engine is generic over it (static dispatch: the latency path stays inlined).
pub mod cma;
pub mod nodes;
pub mod packet;
pub mod ring;
pub mod shm;
pub mod ucx;
pub mod ucx_sys;
pub mod ucx_wireup;

use crate::runtime::segment::Doorbell;
use ring::SlotHeader;
use std::io;

/// Where a peer lives, as the protocols care about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locality {
    /// In this address space (threads mode): its buffers can be read and written directly.
    SameProcess,
    /// On this node, another process: reachable through the transport's one-sided copies.
    SameNode,
    /// On another node (`nodes::Nodes`): reachable by packets only, no one-sided copy; a
    /// packet to it may carry a whole message of any size. An Rts to it must describe a
    /// contiguous buffer (`addr`, `total` bytes), which the transport sends from without a copy;
    /// at the receiver, the Rts's `addr` is a token, and `read(peer, token, dst, len)` (once,
    /// whole) moves the payload straight into `dst`.
    OtherNode,
}

/// What the point-to-point engine of one rank needs from the transport. One value per rank; the
/// engine calls it under its own lock, so the calls that touch one pair's channel come from one
/// thread at a time (the single producer / single consumer of each direction).
pub trait Transport: Send + Sync {
    /// The largest payload of one packet: messages up to this size go eagerly, in one packet.
    const MAX_PAYLOAD: usize;

    /// Number of ranks the transport reaches (the job's world size).
    fn nranks(&self) -> usize;

    /// Delivers one packet to `dest` now: header `hdr` and `len` payload bytes (at most
    /// `MAX_PAYLOAD`, except to a peer of `Locality::OtherNode`, which takes a whole message of
    /// any size) that `fill` writes at the pointer it gets (called only if `len > 0`
    /// and there is room). False when there is no room now: the caller keeps the packet, asks for
    /// room with `want_room` and tries again. Packets to one peer arrive in the order sent.
    fn try_send(&self, dest: usize, hdr: &SlotHeader, len: usize, fill: impl FnOnce(*mut u8)) -> bool;

    /// `try_send` of a payload that is the `len` contiguous bytes at `src` (readable during the
    /// call only; `fill` copies them): a network transport may send them from there, without
    /// the copy into a buffer of its own. By default, `try_send` with `fill`.
    fn try_send_contiguous(&self, dest: usize, hdr: &SlotHeader, _src: *const u8, len: usize, fill: impl FnOnce(*mut u8)) -> bool {
        self.try_send(dest, hdr, len, fill)
    }

    /// Whether a packet to `dest` would be taken now.
    fn has_room(&self, dest: usize) -> bool;

    /// Asks (true) or stops asking (false) `dest` to wake this rank when it makes room. After
    /// asking, the caller checks `has_room` once more (the wake-up may have come before the ask).
    fn want_room(&self, dest: usize, on: bool);

    /// Tells `dest` that packets wait for it (after one or more `try_send`s).
    fn announce(&self, dest: usize);

    /// Hands every packet that arrived to `f(src, header, payload)`, in order per source (the
    /// payload pointer is valid during the call only); returns whether there was any.
    fn poll(&self, f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool;

    /// `poll` for the packets from `src` only.
    fn poll_from(&self, src: usize, f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool;

    /// `poll_from`, stopping after the packet for which `f` returns true: the packets behind it
    /// wait for a later poll (a receive being posted takes the channel up to its own match, so
    /// the messages behind it need not be copied out as unexpected). By default every packet.
    fn poll_from_until(&self, src: usize, mut f: impl FnMut(usize, &SlotHeader, *const u8) -> bool) -> bool {
        self.poll_from(src, |s, h, p| {
            f(s, h, p);
        })
    }

    /// Whether a packet waits, or something else a waiter may be waiting for happened (a
    /// network send completed): the wait loop's cheap check. Shared memory makes no progress
    /// here; a network transport must (nothing else drives it while its rank waits).
    fn pending(&self) -> bool;

    /// Where `peer` lives.
    fn locality(&self, peer: usize) -> Locality;

    /// Whether every peer is a thread of this process (threads mode).
    fn all_same_process(&self) -> bool;

    /// Copies `len` bytes at `addr` in `peer`'s memory into `dst` (a rendezvous read).
    fn read(&self, peer: usize, addr: u64, dst: *mut u8, len: usize) -> io::Result<()>;

    /// Starts moving the payload of the Rts from `peer` (of `Locality::OtherNode`) whose
    /// address was replaced by token `addr` into the `len` bytes at `dst` (less than the
    /// payload's length cuts it short), and returns at once; when it is there (or failed), a
    /// later poll hands `done` (a `Kind::Pulled` header) to the caller as if `peer` had sent it,
    /// `FLAG_FAILED` set on a failure. `dst` stays valid until then. `Err`: nothing started, no
    /// `done` will come.
    fn pull(&self, peer: usize, _addr: u64, _dst: *mut u8, _len: usize, _done: &SlotHeader) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, format!("rank {peer} is on this node: nothing to pull")))
    }

    /// Drops the payload of an Rts from `peer` (of `Locality::OtherNode`) that will never be
    /// `read` (its communicator was freed): whatever holds it on either side is let go.
    fn drop_payload(&self, _peer: usize, _addr: u64) {}

    /// Copies `len` bytes from `src` to `addr` in `peer`'s memory (a split copy's write).
    fn write(&self, peer: usize, addr: u64, src: *const u8, len: usize) -> io::Result<()>;

    /// Moves stream bytes `[start, end)` between scattered local pieces and scattered pieces of
    /// `peer`'s memory (`read`: theirs to ours); `local(a, b)` and `remote(a, b)` list the
    /// (address, length) pieces of stream bytes `[a, b)` on each side.
    fn transfer_pieces<L, R>(&self, read: bool, peer: usize, start: usize, end: usize, local: impl Fn(usize, usize) -> L, remote: impl Fn(usize, usize) -> R) -> io::Result<()>
    where
        L: Iterator<Item = (u64, usize)>,
        R: Iterator<Item = (u64, usize)>;

    /// The doorbell this rank sleeps on when it waits (`runtime::wait`); every wake-up of the
    /// transport (`announce`, `wake`, room made) rings it.
    fn doorbell(&self) -> &Doorbell;

    /// Wakes rank `peer`: something it waits for changed that no packet tells it.
    fn wake(&self, peer: usize);

    /// A number that changes whenever a peer is newly known failed (cheap to read in progress).
    fn failure_epoch(&self) -> u32;

    /// Whether this rank's packets are still on their way in the transport (a network send
    /// not completed yet): a rank that leaves MPI first keeps making progress until they are not.
    fn sends_pending(&self) -> bool;

    /// Whether `peer` is known failed.
    fn peer_failed(&self, peer: usize) -> bool;

    /// The rank leaves MPI (its own sends are complete): tells the peers that need to know
    /// (`Nodes`: those on other nodes, whose packets may still be on the wire). Shared memory
    /// needs no goodbye.
    fn depart(&self) {}

    /// Whether every peer told of `depart` has departed too (or failed), so that this rank may
    /// stop making progress: nothing it sent or will be sent is still in flight.
    fn all_departed(&self) -> bool {
        true
    }
}
