//! The shared-memory transport: the job segment's N x N FastForward rings (`ring`), the ranks'
//! doorbells, and one-sided copies of a peer's memory: plain `memcpy` when every rank is a thread
//! of this process (threads mode), process_vm_readv/writev (`cma`) between processes.
use super::ring::{channel_bytes, Channel, SlotHeader};
use super::{cma, Locality, Transport};
use crate::runtime::segment::{ChannelGeometry, Doorbell, Segment};
use crate::runtime::wait::{notify, ring};
use std::io;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;

/// The channels of a job of `nranks`: fewer slots per channel for big jobs, so that the n x n
/// channels of the segment stay bounded (a segment has at least 64 x 64 channels, room for
/// spawned ranks: address space, whose pages are touched only when used). OXMPI_RING_SLOTS (a
/// power of two, 2 to 256) overrides the count; read by the segment's creator (mpiexec, or the
/// threads-mode host), the ranks take the geometry from the segment.
pub fn geometry(nranks: usize) -> ChannelGeometry {
    // A window of nonblocking sends (osu_bw's 64) stalls on a full ring: with 8 slots the
    // receiver frees room and rings the sender every 4 messages. Measured here (2 ranks, window
    // 64, best of 40 blocks of 50 windows, 2 runs, both modes): 4 KiB 1.50-1.60 M msg/s with 8
    // or 16 slots, 2.15-2.20 M with 32 or 64 (MPICH 2.15 M); 1 B 6.1-6.9 M with 8 to 32 slots,
    // 6.6-7.5 M with 64. 32 slots: a 64-slot segment's channels take 1.1 GB of address space.
    let nslots = std::env::var("OXMPI_RING_SLOTS").ok().and_then(|v| v.parse::<usize>().ok()).filter(|s| s.is_power_of_two() && (2..=256).contains(s)).unwrap_or_else(|| default_slots(nranks));
    ChannelGeometry { nslots, bytes: channel_bytes(nslots) }
}

/// Slots per channel for a job of `nranks` when OXMPI_RING_SLOTS does not say.
fn default_slots(nranks: usize) -> usize {
    match nranks {
        0..=8 => 32,
        9..=64 => 8,
        65..=256 => 4,
        _ => 2,
    }
}

/// Drops every packet waiting in the channels into `slot`, whose rank is gone (the launcher,
/// before it gives the slot to a new rank: `runtime::spawn_desk::recycle`), and wakes producers
/// that waited for room.
pub fn discard_inbound(seg: &Segment, slot: usize) {
    let nslots = seg.channel_geometry().nslots;
    for src in 0..seg.occupied() {
        // SAFETY: as in `Shm::channel`: a channel area of the live segment, of its geometry.
        let ch = unsafe { Channel::from_raw(seg.channel_area(src, slot), nslots) };
        let mut popped = false;
        while ch.peek().is_some() {
            ch.pop();
            popped = true;
        }
        if popped {
            fence(Ordering::SeqCst);
            if ch.producer_waiting() {
                ring(seg.doorbell(src));
            }
        }
    }
    seg.doorbell(slot).inbox.store(0, Ordering::SeqCst);
}

pub struct Shm {
    seg: Arc<Segment>,
    /// This rank.
    me: usize,
    n: usize,
    /// Senders announce pushes in the receiver's `Doorbell::inbox` (jobs of 9 to 64 ranks), so the
    /// receiver drains only the channels whose bit is set.
    inbox: bool,
    /// Every peer lives in this address space (threads mode): copies are plain memcpy.
    same_process: AtomicBool,
    /// Slots per channel, as the segment's creator laid them out.
    nslots: usize,
}

impl Shm {
    pub fn new(seg: Arc<Segment>, me: usize) -> Shm {
        let n = seg.nranks();
        let g = seg.channel_geometry();
        assert!(g.nslots.is_power_of_two() && g.bytes >= channel_bytes(g.nslots), "the job segment's channels are not this transport's ({g:?})");
        // Every rank of the segment, spawned ones too, must agree: decided by the job's first
        // world, and only where every slot has a bit.
        let inbox = (9..=64).contains(&seg.initial()) && n <= 64;
        Shm { seg, me, n, inbox, same_process: AtomicBool::new(false), nslots: g.nslots }
    }

    /// Declares whether every peer is a thread of this process (threads mode). When they are
    /// other processes, lets them read and write this one (CMA) under Yama's ptrace_scope=1; set
    /// before this rank sends anything, so before any peer reaches for its memory.
    pub fn set_same_process(&self, on: bool) {
        if !on {
            cma::allow_peers();
        }
        self.same_process.store(on, Ordering::Relaxed);
    }

    fn same_process(&self) -> bool {
        self.same_process.load(Ordering::Relaxed)
    }

    fn pid(&self, peer: usize) -> i32 {
        self.seg.rank(peer).pid.load(Ordering::Acquire)
    }

    /// The channel carrying packets from `src` to `dst`.
    fn channel(&self, src: usize, dst: usize) -> Channel {
        // SAFETY: the area holds `channel_bytes(nslots)` bytes (checked in `new`), zero-filled at
        // creation, aligned like `CachePadded`, mapped for the segment's life (which `self` holds).
        unsafe { Channel::from_raw(self.seg.channel_area(src, dst), self.nslots) }
    }

    /// Handles every slot waiting in the channel from `src`; returns whether there was any.
    #[inline]
    fn drain(&self, src: usize, f: &mut impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        self.drain_until(src, &mut |s, h, p| {
            f(s, h, p);
            false
        })
    }

    /// `drain`, stopping after the slot for which `f` returns true.
    #[inline]
    fn drain_until(&self, src: usize, f: &mut impl FnMut(usize, &SlotHeader, *const u8) -> bool) -> bool {
        let ch = self.channel(src, self.me);
        let start = ch.head();
        let mut popped = false;
        let mut stopped = false;
        while let Some((hdr, payload)) = ch.peek() {
            let stop = f(src, &hdr, payload);
            ch.pop();
            popped = true;
            if stop {
                ch.prefetch_head();
                stopped = true;
                break;
            }
        }
        // A drain that stopped with slots left (a receive post taking one message) rings a
        // producer waiting for room only when it crossed a half ring: else a window of small
        // sends would cost the consumer a fence and a ring of the producer's doorbell (a
        // cross-core miss) per message. The slots left are unread, so this rank drains that
        // channel again at its next progress and rings then; a producer asleep meanwhile
        // wakes at its futex timeout and looks for room itself.
        let half = ch.half_ring();
        if popped && (!stopped || (start ^ ch.head()) & !(half - 1) != 0) {
            // Dekker pairing with the producer's `want_room(true)` + fence + `has_room` check.
            fence(Ordering::SeqCst);
            if ch.producer_waiting() {
                ring(self.seg.doorbell(src));
            }
        }
        popped
    }

    fn out(&self, dest: usize) -> Channel {
        self.channel(self.me, dest)
    }
}

impl Transport for Shm {
    const MAX_PAYLOAD: usize = super::ring::SLOT_PAYLOAD;

    fn nranks(&self) -> usize {
        self.n
    }

    #[inline(always)]
    fn try_send(&self, dest: usize, hdr: &SlotHeader, len: usize, fill: impl FnOnce(*mut u8)) -> bool {
        self.out(dest).try_push_with(hdr, len, fill)
    }

    fn has_room(&self, dest: usize) -> bool {
        self.out(dest).has_space()
    }

    fn want_room(&self, dest: usize, on: bool) {
        self.out(dest).set_producer_waiting(on);
    }

    #[inline]
    fn announce(&self, dest: usize) {
        let bell = self.seg.doorbell(dest);
        if self.inbox {
            bell.inbox.fetch_or(1 << self.me, Ordering::SeqCst);
        }
        notify(bell);
    }

    #[inline]
    fn poll(&self, mut f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        let mut any = false;
        if self.inbox {
            // Clear the announcements first: a push after this sets its bit again (`announce`).
            let mut mask = self.seg.doorbell(self.me).inbox.swap(0, Ordering::SeqCst);
            while mask != 0 {
                let src = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                any |= self.drain(src, &mut f);
            }
        } else {
            for src in 0..self.seg.occupied() {
                any |= self.drain(src, &mut f);
            }
        }
        any
    }

    fn poll_from(&self, src: usize, mut f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        self.drain(src, &mut f)
    }

    fn poll_from_until(&self, src: usize, mut f: impl FnMut(usize, &SlotHeader, *const u8) -> bool) -> bool {
        self.drain_until(src, &mut f)
    }

    #[inline]
    fn pending(&self) -> bool {
        if self.inbox {
            return self.seg.doorbell(self.me).inbox.load(Ordering::Relaxed) != 0;
        }
        (0..self.seg.occupied()).any(|src| self.channel(src, self.me).is_nonempty())
    }

    fn locality(&self, _peer: usize) -> Locality {
        if self.same_process() {
            Locality::SameProcess
        } else {
            Locality::SameNode
        }
    }

    fn all_same_process(&self) -> bool {
        self.same_process()
    }

    fn read(&self, peer: usize, addr: u64, dst: *mut u8, len: usize) -> io::Result<()> {
        if self.same_process() {
            // SAFETY: same address space; the sender keeps `addr..addr+len` valid and unmodified
            // until the receiver's Fin (MPI forbids touching a pending send buffer); `dst` has room
            // for `len` (the caller's contract).
            unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst, len) };
            return Ok(());
        }
        cma::read_from(self.pid(peer), addr, dst, len)
    }

    fn write(&self, peer: usize, addr: u64, src: *const u8, len: usize) -> io::Result<()> {
        if self.same_process() {
            // SAFETY: same address space; the receiver announced `addr..addr+len` inside its posted
            // receive buffer and waits for our SplitDone before touching it.
            unsafe { std::ptr::copy_nonoverlapping(src, addr as *mut u8, len) };
            return Ok(());
        }
        cma::write_to(self.pid(peer), addr, src, len)
    }

    fn transfer_pieces<L, R>(&self, read: bool, peer: usize, start: usize, end: usize, local: impl Fn(usize, usize) -> L, remote: impl Fn(usize, usize) -> R) -> io::Result<()>
    where
        L: Iterator<Item = (u64, usize)>,
        R: Iterator<Item = (u64, usize)>,
    {
        cma::transfer_pieces(read, self.pid(peer), start, end, local, remote)
    }

    #[inline]
    fn doorbell(&self) -> &Doorbell {
        self.seg.doorbell(self.me)
    }

    fn wake(&self, peer: usize) {
        ring(self.seg.doorbell(peer));
    }

    #[inline]
    fn failure_epoch(&self) -> u32 {
        // A relaxed load of a header word only the launcher writes, and only when a rank dies.
        self.seg.header().failures.load(Ordering::Relaxed)
    }

    /// A packet is in the peer's ring once `try_send` returned: nothing is on its way.
    fn sends_pending(&self) -> bool {
        false
    }

    fn peer_failed(&self, peer: usize) -> bool {
        self.seg.is_failed(peer)
    }
}
