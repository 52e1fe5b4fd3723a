//! Rendezvous copies that involve a typed (non-contiguous) buffer on either side.
//!
//! An Rts describes the sender's buffer (`FLAG_TYPED` in `transport::ring` says how). The receiver
//! resolves that description into the sender's typemap: in threads mode it is the sender's own
//! `TypeRepr` (same address space, kept alive by the sender's request until our Fin); in processes
//! mode the receiver reads the flattened block list (16 bytes a block of one tile, plus a
//! (stride, reps) header: one element's compact description, not per element nor per repetition)
//! out of the sender with process_vm_readv. The copy then walks both buffers' pieces:
//! memcpy of the overlapping pieces in threads mode, batches of at most IOV_MAX local and remote
//! iovecs per process_vm_readv/writev in processes mode. Nothing is packed.
//!
//! The kernel pins the pages of every remote iovec separately, which costs about as much as copying
//! a few KiB: a sender's typemap of small, dense pieces (a vector of 1 KiB blocks) is therefore read
//! as whole covering ranges of at most `BOUNCE` bytes, gaps included, into a bounce buffer, and
//! copied out piece by piece from there (`read_covering`).
use super::Engine;
use crate::datatype::blocks::Blocks;
use crate::datatype::pieces::BlockMap;
use crate::datatype::{TypeRepr, MAX_BLOCKS};
use crate::p2p::buffer::{copy_local, Buf, Side};
use crate::transport::Transport;
use crate::transport::packet::{SlotHeader, FLAG_SHORT_PIECES, FLAG_TYPED};
use std::io;

/// The sender's buffer as its Rts described it (raw fields; see `FLAG_TYPED`).
#[derive(Clone, Copy, Debug)]
pub struct Remote {
    pub addr: u64,
    pub total: u64,
    pub typed: bool,
    desc: [u64; 3],
}

impl Remote {
    pub fn from_rts(h: &SlotHeader) -> Remote {
        Remote { addr: h.addr, total: h.total, typed: h.flags & FLAG_TYPED != 0, desc: [h.rreq, h.len, h.offset] }
    }

    /// Writes the description of send buffer `buf` into Rts `h`.
    pub fn describe(buf: &Buf, local_peers: bool, h: &mut SlotHeader) {
        match buf {
            Buf::Flat(p) => h.addr = *p as u64,
            Buf::Typed { base, t, count } => {
                h.flags |= FLAG_TYPED;
                h.addr = *base as u64;
                if local_peers {
                    h.rreq = std::sync::Arc::as_ptr(t) as u64;
                    h.len = *count as u64;
                } else {
                    (h.rreq, h.len) = t.layout.blocks.wire();
                    h.offset = t.layout.extent() as u64;
                    if t.layout.size / t.layout.blocks.len().max(1) < LONG_PIECE {
                        h.flags |= FLAG_SHORT_PIECES;
                    }
                }
            }
        }
    }
}

/// The sender's buffer, resolved for a copy.
enum Resolved<'a> {
    Flat(u64),
    /// Same address space: the sender's own type.
    Local { base: u64, t: &'a TypeRepr, count: usize },
    /// The block list read out of the sender's process.
    Copied { base: u64, blocks: Blocks, extent: i64, size: usize, count: usize },
}

impl Resolved<'_> {
    fn side(&self) -> Side<'_> {
        match self {
            Resolved::Flat(a) => Side::Flat(*a),
            Resolved::Local { base, t, count } => Side::Map { base: *base, map: t.layout.map(), count: *count },
            Resolved::Copied { base, blocks, extent, size, count } => Side::Map { base: *base, map: BlockMap { blocks, extent: *extent, size: *size }, count: *count },
        }
    }
}

/// Largest remote range read at once into the bounce buffer.
const BOUNCE: usize = 256 * 1024;
/// Remote pieces at least this long on average are read with one iovec each.
const LONG_PIECE: usize = 8 * 1024;
/// Read through the bounce buffer only if the data fills at least 1/SPARSE of the ranges read.
const SPARSE: usize = 4;

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

impl<X: Transport> Engine<X> {
    fn resolve(&self, peer: usize, r: &Remote) -> io::Result<Resolved<'static>> {
        if !r.typed {
            return Ok(Resolved::Flat(r.addr));
        }
        let [a, b, c] = r.desc;
        if self.same_process(peer) {
            // SAFETY: same address space; the sender's request holds an Arc of this type until our Fin.
            let t = unsafe { &*(a as usize as *const TypeRepr) };
            return Ok(Resolved::Local { base: r.addr, t, count: b as usize });
        }
        if !(2..=MAX_BLOCKS + 1).contains(&b) {
            return Err(bad("implausible block count in a typed Rts"));
        }
        let mut blocks = vec![(0i64, 0usize); b as usize];
        // Both processes run this same library, so the tuple's layout is the same on both sides.
        self.t.read(peer, a, blocks.as_mut_ptr() as *mut u8, blocks.len() * std::mem::size_of::<(i64, usize)>())?;
        let blocks = Blocks::from_wire(blocks).ok_or_else(|| bad("malformed block list in a typed Rts"))?;
        let size = blocks.tile_size() * blocks.reps();
        if size == 0 || !r.total.is_multiple_of(size as u64) {
            return Err(bad("the sender's type does not divide the message"));
        }
        Ok(Resolved::Copied { base: r.addr, blocks, extent: c as i64, size, count: (r.total / size as u64) as usize })
    }

    /// Copies stream bytes `[start, end)` of the sender's buffer `r` (of world rank `peer`) into
    /// the same stream bytes of receive buffer `dst`.
    pub(super) fn read_message(&self, peer: usize, r: &Remote, dst: &Buf, start: usize, end: usize) -> io::Result<()> {
        if let (false, Buf::Flat(p)) = (r.typed, dst) {
            return self.t.read(peer, r.addr + start as u64, p.wrapping_add(start), end - start);
        }
        let src = self.resolve(peer, r)?;
        let (s, d) = (src.side(), dst.side());
        if let Resolved::Copied { blocks, extent, size, .. } = &src {
            let (lo, hi) = blocks.span();
            let reach = hi - lo;
            if size / blocks.len() < LONG_PIECE && (*extent).max(reach).unsigned_abs() as usize <= size * SPARSE {
                let mut bounce = self.bounce.lock().unwrap_or_else(|p| p.into_inner());
                return read_covering(&self.t, peer, &s, &d, start, end, &mut bounce);
            }
        }
        if self.same_process(peer) {
            // SAFETY: same address space; the sender keeps its buffer valid and unmodified until our
            // Fin, and the receive buffer holds `end` stream bytes (the receive contract).
            unsafe { copy_local(&s, &d, start, end) };
            return Ok(());
        }
        self.t.transfer_pieces(true, peer, start, end, |a, b| d.pieces(a, b), |a, b| s.pieces(a, b))
    }

    /// Copies stream bytes `[start, end)` of our send buffer `src` into the receiver's contiguous
    /// buffer whose stream offset 0 is at `addr` (a split copy).
    pub(super) fn write_message(&self, peer: usize, src: &Buf, addr: u64, start: usize, end: usize) -> io::Result<()> {
        if let Buf::Flat(p) = src {
            return self.t.write(peer, addr + start as u64, p.wrapping_add(start), end - start);
        }
        let (s, d) = (src.side(), Side::Flat(addr));
        if self.same_process(peer) {
            // SAFETY: same address space; the receiver announced this range of its posted buffer
            // and waits for our SplitDone before touching it.
            unsafe { copy_local(&s, &d, start, end) };
            return Ok(());
        }
        self.t.transfer_pieces(false, peer, start, end, |a, b| s.pieces(a, b), |a, b| d.pieces(a, b))
    }
}

/// Copies stream bytes `[start, end)` of remote buffer `src` (of world rank `peer`, through
/// transport `t`) into local `dst`
/// through a bounce buffer: each round reads the remote range covering as many of the next pieces
/// as fit `BOUNCE` bytes with one iovec, then copies those pieces out of it. `bounce` is the
/// engine's buffer, allocated at the first use and kept.
fn read_covering(t: &impl Transport, peer: usize, src: &Side, dst: &Side, start: usize, end: usize, bounce: &mut Vec<u8>) -> io::Result<()> {
    let Side::Map { base, map, count } = *src else { unreachable!("only typed senders are read through the bounce buffer") };
    bounce.reserve(BOUNCE);
    let mut pos = start;
    while pos < end {
        // The next pieces whose covering range fits the bounce buffer (at least part of one).
        let (mut lo, mut hi, mut upto) = (u64::MAX, 0u64, pos);
        for (a, l) in src.pieces(pos, end) {
            let (nlo, nhi) = (lo.min(a), hi.max(a + l as u64));
            if nhi - nlo > BOUNCE as u64 {
                if upto == pos {
                    // One piece longer than the buffer: take its first BOUNCE bytes.
                    (lo, hi, upto) = (a, a + BOUNCE as u64, pos + BOUNCE);
                }
                break;
            }
            (lo, hi, upto) = (nlo, nhi, upto + l);
        }
        if upto == pos {
            return Err(bad("the sender's typed buffer holds fewer bytes than the message"));
        }
        let len = (hi - lo) as usize;
        t.read(peer, lo, bounce.as_mut_ptr(), len)?;
        // The sender's typemap based so that its address `lo` falls on the bounce buffer.
        let here = Side::Map { base: base.wrapping_sub(lo).wrapping_add(bounce.as_ptr() as u64), map, count };
        // SAFETY: the pieces of [pos, upto) lie in [lo, hi) remotely, so in the `len` bytes just read
        // into the bounce buffer here; `dst` holds `end` stream bytes (the receive contract).
        unsafe { copy_local(&here, dst, pos, upto) };
        pos = upto;
    }
    Ok(())
}
