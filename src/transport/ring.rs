//! Single-producer / single-consumer ring of fixed-size slots, one per ordered pair of ranks.
//!
//! Algorithm: FastForward (Giacomoni, Moseley & Vachharajani, PPoPP 2008), on TMPI's N x N channel
//! layout (seed 003 section 5). Each slot carries its own full/empty marker, the `kind` word of its
//! header (0 = empty), so producer and consumer never read each other's index: `tail` is private to
//! the producer (the sending rank, under its engine lock) and `head` to the consumer (the receiving
//! rank, under its engine lock). A message costs the transfer of the slot's own cache lines only.
//! Orderings: the producer fills header and payload, then publishes the slot with a Release store of
//! `kind`; the consumer's Acquire load of a non-zero `kind` makes them visible. The consumer copies
//! the slot out, then frees it with a Release store of `kind = 0`; the producer's Acquire load of a
//! zero `kind` orders its next writes to the slot after the consumer's reads.
pub use super::packet::*;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bytes per slot, header included. Compile-time so the hot path has no run-time size loads.
/// 8 KiB of payload plus the header, rounded to 128 bytes (channels and their `CachePadded`
/// control words stay 128-byte aligned): an 8 KiB message, a row of every OSU table, goes
/// eagerly. With 8 KiB slots it went by rendezvous, 2.85 us against 1.47 us for 6 KiB and
/// MPICH's 1.65 us (NetPIPE, processes mode).
pub const SLOT_BYTES: usize = 8192 + 128;
/// Bytes of payload a slot carries after its header.
pub const SLOT_PAYLOAD: usize = SLOT_BYTES - std::mem::size_of::<SlotHeader>();

/// Whether a packet's payload rides in its header's last bytes (see `INLINE_MAX`).
fn inline(kind: u32, len: usize) -> bool {
    kind == Kind::Eager as u32 && len <= INLINE_MAX
}

/// Control words of one channel; the slots follow it in memory.
#[repr(C)]
pub struct ChannelControl {
    /// Next slot the consumer will read. Read and written by the consumer only.
    pub head: CachePadded<AtomicU64>,
    /// Next slot the producer will fill. Read and written by the producer only.
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
        // SAFETY: the slots follow the control block inside the `channel_bytes(nslots)` bytes at `base`.
        let slots = unsafe { base.add(std::mem::size_of::<ChannelControl>()) };
        Channel { ctl: base as *const ChannelControl, slots, mask: nslots as u64 - 1 }
    }

    fn ctl(&self) -> &ChannelControl {
        // SAFETY: `ctl` is valid for the mapping's lifetime (from_raw contract).
        unsafe { &*self.ctl }
    }

    fn slot_ptr(&self, index: u64) -> *mut u8 {
        // SAFETY: the index is masked to nslots (a power of two), so the pointer stays in the slot array.
        unsafe { self.slots.add(((index & self.mask) as usize) * SLOT_BYTES) }
    }

    /// The marker word of slot `index`.
    fn marker(&self, index: u64) -> &AtomicU32 {
        // SAFETY: `kind` is the first, 4-byte aligned field of the slot header, inside the slot array.
        unsafe { &*(self.slot_ptr(index) as *const AtomicU32) }
    }

    /// Producer: pushes a slot with `hdr` and `payload` (at most SLOT_PAYLOAD bytes; `hdr.kind`
    /// must not be 0). Returns false when the ring is full. Only the channel's producer may call it.
    #[inline]
    pub fn try_push(&self, hdr: &SlotHeader, payload: &[u8]) -> bool {
        // SAFETY: `fill` writes exactly payload.len() bytes from the payload slice.
        self.try_push_with(hdr, payload.len(), |dst| unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), dst, payload.len()) })
    }

    /// Producer: like `try_push`, with the `len` payload bytes written by `fill` straight into the
    /// slot (a typed send packs its elements there, with no intermediate copy). `fill` gets a
    /// pointer to room for exactly `len` bytes and runs only if the slot is free. Always inlined:
    /// `try_push` is the latency-critical path.
    #[inline(always)]
    pub fn try_push_with(&self, hdr: &SlotHeader, len: usize, fill: impl FnOnce(*mut u8)) -> bool {
        debug_assert!(len <= SLOT_PAYLOAD && hdr.kind != 0);
        let c = self.ctl();
        let tail = c.tail.load(Ordering::Relaxed);
        if self.marker(tail).load(Ordering::Acquire) != 0 {
            return false;
        }
        let p = self.slot_ptr(tail);
        // SAFETY: the slot is empty (marker 0, Acquire above) and only this producer fills empty
        // slots; the consumer does not read it until the Release store of the marker publishes it.
        // The header is written without its first word, which is the marker.
        unsafe {
            let h = p as *mut SlotHeader;
            std::ptr::write(std::ptr::addr_of_mut!((*h).tag), hdr.tag);
            std::ptr::write(std::ptr::addr_of_mut!((*h).context), hdr.context);
            std::ptr::write(std::ptr::addr_of_mut!((*h).flags), hdr.flags);
            std::ptr::write(std::ptr::addr_of_mut!((*h).len), hdr.len);
            std::ptr::write(std::ptr::addr_of_mut!((*h).total), hdr.total);
            std::ptr::write(std::ptr::addr_of_mut!((*h).sreq), hdr.sreq);
            if inline(hdr.kind, len) {
                // Small eager payloads ride in the header's last 24 bytes (unused by Eager), so the
                // whole message is one cache line.
                if len > 0 {
                    fill(p.add(INLINE_OFFSET));
                }
            } else {
                std::ptr::write(std::ptr::addr_of_mut!((*h).rreq), hdr.rreq);
                std::ptr::write(std::ptr::addr_of_mut!((*h).addr), hdr.addr);
                std::ptr::write(std::ptr::addr_of_mut!((*h).offset), hdr.offset);
                if len > 0 {
                    fill(p.add(std::mem::size_of::<SlotHeader>()));
                }
            }
        }
        self.marker(tail).store(hdr.kind, Ordering::Release);
        c.tail.store(tail + 1, Ordering::Relaxed);
        true
    }

    /// Producer: whether a push would succeed now.
    pub fn has_space(&self) -> bool {
        self.marker(self.ctl().tail.load(Ordering::Relaxed)).load(Ordering::Acquire) == 0
    }

    /// Consumer: the oldest unread slot, if any. The payload pointer is valid until `pop`.
    pub fn peek(&self) -> Option<(SlotHeader, *const u8)> {
        let head = self.ctl().head.load(Ordering::Relaxed);
        let kind = self.marker(head).load(Ordering::Acquire);
        if kind == 0 {
            return None;
        }
        let p = self.slot_ptr(head);
        // SAFETY: the slot was published by the producer's Release store of its marker (Acquire above).
        let mut hdr = unsafe { std::ptr::read(p as *const SlotHeader) };
        hdr.kind = kind;
        let off = if inline(kind, hdr.len as usize) {
            hdr.rreq = 0;
            hdr.addr = 0;
            hdr.offset = 0;
            INLINE_OFFSET
        } else {
            std::mem::size_of::<SlotHeader>()
        };
        // SAFETY: the payload lies inside the same slot.
        Some((hdr, unsafe { p.add(off) } as *const u8))
    }

    /// Consumer: whether a slot is waiting (cheap check for the wait loop; reads the consumer's
    /// own index and one slot marker).
    pub fn is_nonempty(&self) -> bool {
        self.marker(self.ctl().head.load(Ordering::Relaxed)).load(Ordering::Acquire) != 0
    }

    /// Consumer: frees the slot returned by the last `peek`.
    pub fn pop(&self) {
        let c = self.ctl();
        let head = c.head.load(Ordering::Relaxed);
        self.marker(head).store(0, Ordering::Release);
        c.head.store(head + 1, Ordering::Relaxed);
    }

    /// Consumer: the index of the next slot to read (counts every slot ever read).
    #[inline]
    pub fn head(&self) -> u64 {
        self.ctl().head.load(Ordering::Relaxed)
    }

    /// Half the ring's slots (at least 1; a power of two): how many reads a consumer may make
    /// between two looks at `producer_waiting` while slots remain unread (`Shm::drain_until`).
    #[inline]
    pub fn half_ring(&self) -> u64 {
        self.mask.div_ceil(2).max(1)
    }

    /// Consumer: starts fetching the next unread slot's header line into this core's cache, when
    /// the consumer stops draining with slots left: the producer wrote them, so reading them is a
    /// cross-core miss that the caller's next steps (the next receive's post) now overlap.
    #[inline]
    pub fn prefetch_head(&self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of x86_64's baseline; a prefetch reads nothing architecturally (and
        // the slot is inside the mapped ring anyway).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(self.slot_ptr(self.ctl().head.load(Ordering::Relaxed)) as *const i8)
        };
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
        assert!(!ch.try_push(&SlotHeader { kind: Kind::Cts as u32, ..Default::default() }, &[]));
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
                let h = SlotHeader { kind: Kind::Eager as u32, sreq: i, len: n as u64, ..Default::default() };
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
