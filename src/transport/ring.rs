//! Single-producer / single-consumer ring of fixed-size slots, one per ordered pair of ranks.
//!
//! Algorithm: FastForward (Giacomoni, Moseley & Vachharajani, PPoPP 2008), on TMPI's N x N channel
//! layout (seed 003 section 5), with the producer's side of a cached-index queue. The consumer
//! finds a full slot by its marker, the first word of its header: the packet's `kind` (low 8 bits)
//! stamped with the slot's lap (`stamp`: the pass of the ring that wrote it, counted from 1), so a
//! slot left from the previous lap reads as empty and the consumer never writes the slot. The
//! producer finds room by the consumer's `head`, which it reads only when its own copy
//! (`head_seen`) says the ring is full: once per lap of the ring, not once per message. `tail` and
//! `head_seen` are private to the producer (the sending rank, under its engine lock), `head` is
//! written by the consumer only (the receiving rank, under its engine lock). A message costs the
//! transfer of the slot's own cache lines; the producer no longer reads a line the consumer wrote
//! for every message (that load's miss was most of a 1-byte send, perf on 2 ranks).
//! Orderings: the producer fills header and payload, then publishes the slot with a Release store of
//! its marker; the consumer's Acquire load of the expected stamp makes them visible. The consumer
//! copies the slot out, then frees it with a Release store of `head`; the producer's Acquire load
//! of `head` orders its next writes to the slot after the consumer's reads.
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

/// The producer's words: on a line of their own, which the consumer never touches.
#[repr(C)]
pub struct ProducerWords {
    /// Next slot the producer will fill.
    pub tail: AtomicU64,
    /// The consumer's `head` as the producer last read it: slots below `head_seen + nslots` are free.
    pub head_seen: AtomicU64,
}

/// Control words of one channel; the slots follow it in memory.
#[repr(C)]
pub struct ChannelControl {
    /// Next slot the consumer will read. Written by the consumer only (Release: the slots below
    /// it are free); the producer reads it when its `head_seen` says the ring is full.
    pub head: CachePadded<AtomicU64>,
    /// Read and written by the producer only.
    pub tail: CachePadded<ProducerWords>,
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
    /// log2(nslots): a slot index shifted right by it is the lap.
    shift: u32,
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
        Channel { ctl: base as *const ChannelControl, slots, mask: nslots as u64 - 1, shift: nslots.trailing_zeros() }
    }

    /// The marker of a slot holding a packet of `kind` written at `index`: the kind in the low
    /// 8 bits, the lap (from 1, so never the zero of fresh memory; 24 bits, and only the previous
    /// lap's stamp can be found in the slot, which always differs) above.
    #[inline(always)]
    fn stamp(&self, index: u64, kind: u32) -> u32 {
        debug_assert!(kind != 0 && kind < 256);
        ((((index >> self.shift) + 1) as u32) << 8) | kind
    }

    /// Whether `marker`, read at slot `index`, is this lap's (the slot is full).
    #[inline(always)]
    fn current(&self, index: u64, marker: u32) -> bool {
        (marker ^ self.stamp(index, 1)) >> 8 == 0
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
        let tail = c.tail.tail.load(Ordering::Relaxed);
        if !self.room_at(tail) {
            return false;
        }
        let p = self.slot_ptr(tail);
        // SAFETY: the slot is free (below the consumer's head plus a ring, Acquire in `room_at`)
        // and only this producer fills free slots; the consumer does not read it until the
        // Release store of the marker publishes it.
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
        self.marker(tail).store(self.stamp(tail, hdr.kind), Ordering::Release);
        c.tail.tail.store(tail + 1, Ordering::Relaxed);
        // Asks now for ownership of the next slot's header line, which the consumer holds from
        // its last lap: else the stores of the next push wait for it, and the engine lock's
        // release (a locked instruction, which drains the stores) with them: most of a 1-byte
        // send's time (perf). Only for a slot known free: a slot still to be read would be
        // taken from under the consumer. And only after a message that fit the header: after
        // every push, 1-byte windows went from 7.7-7.9 to 10.1-10.3 M msg/s and 4 KiB ones from
        // 2.3 to 2.4-2.5 M, but 64-byte ones fell from 7.1 to 5.6 M (the header line alone was
        // taken ahead of a two-line packet); after inline ones only: 1 byte 9.9-10.0 M, 64 B and
        // 4 KiB unchanged (best of 3 interleaved rounds, both modes, loaded machine).
        if inline(hdr.kind, len) && tail + 1 - c.tail.head_seen.load(Ordering::Relaxed) <= self.mask {
            // `_mm_prefetch::<_MM_HINT_ET0>` compiles to nothing without the `prfchw` target
            // feature, hence the instruction itself.
            #[cfg(target_arch = "x86_64")]
            // SAFETY: PREFETCHW reads and writes nothing architecturally and cannot fault (x86
            // CPUs without it decode it as a no-op); the slot is inside the mapped ring anyway.
            unsafe {
                std::arch::asm!("prefetchw [{0}]", in(reg) self.slot_ptr(tail + 1), options(nostack, readonly, preserves_flags))
            };
        }
        true
    }

    /// Producer: whether slot `tail` is free, reading the consumer's `head` only when the copy
    /// of it says the ring is full.
    #[inline(always)]
    fn room_at(&self, tail: u64) -> bool {
        let p = &self.ctl().tail;
        if tail - p.head_seen.load(Ordering::Relaxed) <= self.mask {
            return true;
        }
        // Acquire: pairs with the consumer's Release of `head` after it read the slots below.
        let head = self.ctl().head.load(Ordering::Acquire);
        p.head_seen.store(head, Ordering::Relaxed);
        tail - head <= self.mask
    }

    /// Producer: whether a push would succeed now.
    pub fn has_space(&self) -> bool {
        self.room_at(self.ctl().tail.tail.load(Ordering::Relaxed))
    }

    /// Consumer: the oldest unread slot, if any. The payload pointer is valid until `pop`.
    pub fn peek(&self) -> Option<(SlotHeader, *const u8)> {
        let head = self.ctl().head.load(Ordering::Relaxed);
        let marker = self.marker(head).load(Ordering::Acquire);
        if !self.current(head, marker) {
            return None;
        }
        let kind = marker & 0xff;
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
        let head = self.ctl().head.load(Ordering::Relaxed);
        self.current(head, self.marker(head).load(Ordering::Acquire))
    }

    /// Consumer: frees the slot returned by the last `peek`. The slot itself is not written (its
    /// stale stamp reads as empty on the next lap): only `head`, a line the producer reads once
    /// per lap.
    pub fn pop(&self) {
        let c = self.ctl();
        let head = c.head.load(Ordering::Relaxed);
        // Release: the reads of the slot happen before the producer may refill it.
        c.head.store(head + 1, Ordering::Release);
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
    /// cross-core miss that the caller's next steps (the next receive's post) now overlap. The
    /// slot after it too: one post (about 100 ns for 1 byte) hid only part of that miss. A slot
    /// not written yet costs nothing more than its next read would (the consumer held its line
    /// since the last lap anyway).
    #[inline]
    pub fn prefetch_head(&self) {
        let head = self.ctl().head.load(Ordering::Relaxed);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of x86_64's baseline; a prefetch reads nothing architecturally (and
        // the slots are inside the mapped ring anyway).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slot_ptr(head) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(self.slot_ptr(head + 1) as *const i8);
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

    /// Over many laps of a 2-slot ring, a slot left from the previous lap (its stale stamp)
    /// always reads as empty, and a full ring refuses a push until the consumer pops.
    #[test]
    fn stale_laps_read_as_empty() {
        let mut mem = alloc(2);
        // SAFETY: mem is zeroed, 128-aligned, and outlives ch.
        let ch = unsafe { Channel::from_raw(mem.as_mut_ptr(), 2) };
        let mut next = 0u64;
        let mut expect = 0u64;
        for round in 0..3000u64 {
            assert!(ch.peek().is_none() && !ch.is_nonempty(), "round {round}: an empty ring looks full");
            let k = 1 + round % 2;
            for _ in 0..k {
                assert!(ch.try_push(&SlotHeader { kind: Kind::Fin as u32, sreq: next, ..Default::default() }, &[]));
                next += 1;
            }
            assert_eq!(ch.has_space(), k == 1);
            for _ in 0..k {
                let (h, _) = ch.peek().unwrap();
                assert_eq!((h.kind, h.sreq), (Kind::Fin as u32, expect));
                ch.pop();
                expect += 1;
            }
        }
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
