//! Single-producer / single-consumer ring of fixed-size slots, one per ordered pair of ranks.
//!
//! Algorithm: the classic Lamport SPSC ring buffer (Lamport 1983; TMPI's N x N channel layout,
//! seed 003 section 5). `tail` is written only by the producer (the sending rank, under its engine
//! lock) and `head` only by the consumer (the receiving rank, under its engine lock).
//! Orderings: the producer fills the slot, then publishes it with a Release store of `tail`; the
//! consumer's Acquire load of `tail` makes the slot contents visible. The consumer copies the slot
//! out, then frees it with a Release store of `head`; the producer's Acquire load of `head` orders its
//! next write to that slot after the consumer's reads. Indices are 64-bit and never wrap in practice.
//! `head`, `tail` and `producer_waiting` sit on separate cache lines so producer and consumer do not
//! false-share.
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bytes per slot, header included. Compile-time so the hot path has no run-time size loads.
pub const SLOT_BYTES: usize = 8192;
/// Bytes of payload a slot carries after its header.
pub const SLOT_PAYLOAD: usize = SLOT_BYTES - std::mem::size_of::<SlotHeader>();

/// What a slot carries. Values are stable: they cross process boundaries.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole message whose payload fits in this slot.
    Eager = 1,
    /// Ready-to-send of a large message: `addr` is the sender's buffer, `total` its length.
    Rts = 2,
    /// Clear-to-send: the receiver could not read the sender's memory; stream it to `rreq`.
    Cts = 3,
    /// A fragment of a streamed message for receive request `rreq`, at `offset`.
    Data = 4,
    /// The receiver finished reading a rendezvous message; send request `sreq` is complete.
    Fin = 5,
    /// A synchronous-mode eager message was matched; send request `sreq` is complete.
    SyncAck = 6,
}

/// Header at the start of every slot; 64 bytes so the payload starts cache-line aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SlotHeader {
    /// A `Kind` value.
    pub kind: u32,
    /// MPI tag of the message (Eager, Rts).
    pub tag: i32,
    /// Communicator context id the message belongs to (Eager, Rts).
    pub context: u32,
    /// Bit flags: `FLAG_SYNC` asks for a SyncAck (Eager) or marks a synchronous send.
    pub flags: u32,
    /// Payload bytes in this slot (Eager, Data).
    pub len: u64,
    /// Total message length in bytes (Eager, Rts, Data).
    pub total: u64,
    /// Sender's request id (Eager with FLAG_SYNC, Rts, Cts, Fin, SyncAck).
    pub sreq: u64,
    /// Receiver's request id (Cts, Data).
    pub rreq: u64,
    /// Sender's buffer address in its own address space (Rts).
    pub addr: u64,
    /// Offset of this fragment in the message (Data).
    pub offset: u64,
}
const _: () = assert!(std::mem::size_of::<SlotHeader>() == 64);

pub const FLAG_SYNC: u32 = 1;

/// Shared control words of one channel; the slots follow it in memory.
#[repr(C)]
pub struct ChannelControl {
    /// Next slot the consumer will read. Written by the consumer only.
    pub head: CachePadded<AtomicU64>,
    /// Next slot the producer will fill. Written by the producer only.
    pub tail: CachePadded<AtomicU64>,
    /// Non-zero while the producer has messages queued because the ring was full; the consumer
    /// rings the producer's doorbell after freeing slots when it sees this set.
    pub producer_waiting: CachePadded<AtomicU32>,
}

/// Bytes one channel occupies in the segment for `nslots` slots.
pub const fn channel_bytes(nslots: usize) -> usize {
    std::mem::size_of::<ChannelControl>() + nslots * SLOT_BYTES
}

/// A view of one channel inside mapped memory.
#[derive(Clone, Copy)]
pub struct Channel {
    ctl: *const ChannelControl,
    slots: *mut u8,
    nslots: u64,
    /// nslots - 1: slot counts are powers of two, so indexing is a mask, not a division.
    mask: u64,
}
// SAFETY: the channel points into a mapping that outlives every rank's use of it; concurrent access
// follows the SPSC protocol documented above (one producer, one consumer, each under its engine lock).
unsafe impl Send for Channel {}
unsafe impl Sync for Channel {}

impl Channel {
    /// # Safety
    /// `base` must point to `channel_bytes(nslots)` bytes of zero-initialised (or previously
    /// used as a channel) memory, aligned like `CachePadded`, that stays mapped while the `Channel` is used.
    /// `nslots` must be a power of two.
    pub unsafe fn from_raw(base: *mut u8, nslots: usize) -> Channel {
        debug_assert!(nslots.is_power_of_two());
        Channel { ctl: base as *const ChannelControl, slots: base.add(std::mem::size_of::<ChannelControl>()), nslots: nslots as u64, mask: nslots as u64 - 1 }
    }

    fn ctl(&self) -> &ChannelControl {
        // SAFETY: `ctl` is valid for the mapping's lifetime (from_raw contract).
        unsafe { &*self.ctl }
    }

    fn slot_ptr(&self, index: u64) -> *mut u8 {
        // SAFETY: the index is masked to nslots (a power of two), so the pointer stays in the slot array.
        unsafe { self.slots.add(((index & self.mask) as usize) * SLOT_BYTES) }
    }

    /// Producer: pushes a slot with `hdr` and `payload` (at most SLOT_PAYLOAD bytes).
    /// Returns false when the ring is full. Must be called by the channel's single producer.
    pub fn try_push(&self, hdr: &SlotHeader, payload: &[u8]) -> bool {
        let mut head_cache = 0;
        self.try_push_cached(hdr, payload, &mut head_cache)
    }

    /// `try_push` with a producer-private copy of `head`: the shared `head` line (written by the
    /// consumer) is read only when the cached value says the ring may be full, so the common case
    /// touches no line the consumer owns. A stale cache is always safe: `head` only grows.
    pub fn try_push_cached(&self, hdr: &SlotHeader, payload: &[u8], head_cache: &mut u64) -> bool {
        debug_assert!(payload.len() <= SLOT_PAYLOAD);
        let c = self.ctl();
        let tail = c.tail.load(Ordering::Relaxed);
        if tail - *head_cache >= self.nslots {
            *head_cache = c.head.load(Ordering::Acquire);
            if tail - *head_cache >= self.nslots {
                return false;
            }
        }
        let p = self.slot_ptr(tail);
        // SAFETY: slot `tail` is free (checked above) and only this producer writes free slots;
        // the consumer does not read it until the Release store of `tail` below publishes it.
        unsafe {
            std::ptr::write(p as *mut SlotHeader, *hdr);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), p.add(std::mem::size_of::<SlotHeader>()), payload.len());
        }
        c.tail.store(tail + 1, Ordering::Release);
        true
    }

    /// Producer: whether a push would succeed now.
    pub fn has_space(&self) -> bool {
        let c = self.ctl();
        c.tail.load(Ordering::Relaxed) - c.head.load(Ordering::Acquire) < self.nslots
    }

    /// Consumer: the oldest unread slot, if any. The returned references are valid until `pop`.
    pub fn peek(&self) -> Option<(SlotHeader, *const u8)> {
        let c = self.ctl();
        let head = c.head.load(Ordering::Relaxed);
        if head >= c.tail.load(Ordering::Acquire) {
            return None;
        }
        let p = self.slot_ptr(head);
        // SAFETY: slot `head` was published by the producer's Release store of `tail` (Acquire above).
        let hdr = unsafe { std::ptr::read(p as *const SlotHeader) };
        // SAFETY: the payload lies inside the same slot.
        Some((hdr, unsafe { p.add(std::mem::size_of::<SlotHeader>()) } as *const u8))
    }

    /// Consumer: whether a slot is waiting (cheap check for the wait loop).
    pub fn is_nonempty(&self) -> bool {
        let c = self.ctl();
        c.head.load(Ordering::Relaxed) < c.tail.load(Ordering::Acquire)
    }

    /// Consumer: frees the slot returned by the last `peek`.
    pub fn pop(&self) {
        let c = self.ctl();
        let head = c.head.load(Ordering::Relaxed);
        c.head.store(head + 1, Ordering::Release);
    }

    pub fn set_producer_waiting(&self, waiting: bool) {
        self.ctl().producer_waiting.store(waiting as u32, Ordering::SeqCst);
    }

    pub fn producer_waiting(&self) -> bool {
        self.ctl().producer_waiting.load(Ordering::SeqCst) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zeroed memory aligned like `CachePadded`, freed on drop.
    struct Mem(*mut u8, std::alloc::Layout);
    impl Mem {
        fn as_mut_ptr(&mut self) -> *mut u8 {
            self.0
        }
    }
    impl Drop for Mem {
        fn drop(&mut self) {
            // SAFETY: allocated in `alloc` with this layout.
            unsafe { std::alloc::dealloc(self.0, self.1) }
        }
    }
    fn alloc(nslots: usize) -> Mem {
        let l = std::alloc::Layout::from_size_align(channel_bytes(nslots), 128).unwrap();
        // SAFETY: non-zero size.
        Mem(unsafe { std::alloc::alloc_zeroed(l) }, l)
    }

    #[test]
    fn fifo_and_full() {
        let mut mem = alloc(4);
        // SAFETY: mem is zeroed, 128-aligned, and outlives ch.
        let ch = unsafe { Channel::from_raw(mem.as_mut_ptr(), 4) };
        for i in 0..4u64 {
            let h = SlotHeader { kind: Kind::Eager as u32, len: 1, sreq: i, ..Default::default() };
            assert!(ch.try_push(&h, &[i as u8]));
        }
        assert!(!ch.try_push(&SlotHeader::default(), &[]));
        for i in 0..4u64 {
            let (h, p) = ch.peek().unwrap();
            assert_eq!(h.sreq, i);
            // SAFETY: payload of a pushed slot of length 1.
            assert_eq!(unsafe { *p }, i as u8);
            ch.pop();
        }
        assert!(ch.peek().is_none());
    }

    #[test]
    fn spsc_stress_two_threads() {
        let mut mem = alloc(8);
        let base = mem.as_mut_ptr() as usize;
        const N: u64 = 200_000;
        let prod = std::thread::spawn(move || {
            // SAFETY: the buffer outlives both threads (joined below); one producer.
            let ch = unsafe { Channel::from_raw(base as *mut u8, 8) };
            let mut i = 0;
            while i < N {
                let n = (i % 97) as usize;
                let payload: Vec<u8> = (0..n).map(|k| (i as usize + k) as u8).collect();
                let h = SlotHeader { sreq: i, len: n as u64, ..Default::default() };
                if ch.try_push(&h, &payload) { i += 1 } else { std::hint::spin_loop() }
            }
        });
        // SAFETY: as above; one consumer.
        let ch = unsafe { Channel::from_raw(base as *mut u8, 8) };
        let mut expect = 0;
        while expect < N {
            if let Some((h, p)) = ch.peek() {
                assert_eq!(h.sreq, expect);
                for k in 0..h.len as usize {
                    // SAFETY: k < len <= SLOT_PAYLOAD.
                    assert_eq!(unsafe { *p.add(k) }, (expect as usize + k) as u8);
                }
                ch.pop();
                expect += 1;
            }
        }
        prod.join().unwrap();
        drop(mem);
    }
}
