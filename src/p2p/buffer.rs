//! The buffers the engine copies from and into: contiguous bytes, or `count` elements of a derived
//! datatype moved block by block (never packed into a whole-message temporary). A typed buffer
//! keeps its type alive (`Arc`) as long as the request that holds it.
//!
//! Data is addressed by its position in the *packed stream* (MPI 4.1 section 4.1.11: the typemap
//! order): an eager slot, a streamed fragment or a rendezvous copy each move a range of it.
use crate::datatype::pieces::{BlockMap, Pieces};
use crate::datatype::TypeRepr;
use std::sync::Arc;

/// A send or receive buffer as the engine holds it.
#[derive(Clone, Debug)]
pub enum Buf {
    /// Contiguous bytes; their length is kept beside the buffer (the send's size, the receive's capacity).
    Flat(*mut u8),
    /// `count` elements of `t` at `base`.
    Typed { base: *mut u8, t: Arc<TypeRepr>, count: usize },
}

impl Buf {
    pub fn flat(p: *const u8) -> Buf {
        Buf::Flat(p as *mut u8)
    }

    pub fn is_flat(&self) -> bool {
        matches!(self, Buf::Flat(_))
    }

    /// The part of this buffer holding stream bytes `[start, start + n)`, as a buffer of its own,
    /// if it is one: always for contiguous bytes, for a typed buffer when the range is whole
    /// elements (element `k` of a typed buffer lies `k` extents past its base). Partitioned
    /// communication (`p2p::partitioned`) moves each partition as its own message this way.
    pub fn window(&self, start: usize, n: usize) -> Option<Buf> {
        match self {
            Buf::Flat(p) => Some(Buf::Flat(p.wrapping_add(start))),
            Buf::Typed { base, t, .. } => {
                let size = t.layout.size;
                if size == 0 || start % size != 0 || n % size != 0 {
                    return None;
                }
                let first = (start / size) as i64;
                Some(Buf::Typed { base: base.wrapping_offset((first * t.layout.extent()) as isize), t: t.clone(), count: n / size })
            }
        }
    }

    /// This buffer as a [`Side`] of a copy.
    pub fn side(&self) -> Side<'_> {
        match self {
            Buf::Flat(p) => Side::Flat(*p as u64),
            Buf::Typed { base, t, count } => Side::Map { base: *base as u64, map: t.layout.map(), count: *count },
        }
    }

    /// Copies stream bytes `[start, start + n)` out of the buffer to `dst`.
    ///
    /// # Safety
    /// The buffer must hold those stream bytes (readable); `dst` must have room for `n` bytes and
    /// not overlap the buffer.
    #[inline]
    pub unsafe fn pack(&self, start: usize, dst: *mut u8, n: usize) {
        match self {
            // SAFETY: per this function's contract.
            Buf::Flat(p) => unsafe { copy_bytes(p.add(start), dst, n) },
            // SAFETY: per this function's contract (copy clamps to the elements there are).
            Buf::Typed { base, t, count } => unsafe {
                crate::datatype::copy(&t.layout, *base, *count, dst, n, start, true);
            },
        }
    }

    /// Copies `n` bytes at `src` into stream bytes `[start, start + n)` of the buffer.
    ///
    /// # Safety
    /// The buffer must hold those stream bytes (writable); `src` must hold `n` bytes and not
    /// overlap the buffer.
    #[inline]
    pub unsafe fn unpack(&self, start: usize, src: *const u8, n: usize) {
        match self {
            // SAFETY: per this function's contract.
            Buf::Flat(p) => unsafe { copy_bytes(src, p.add(start), n) },
            // SAFETY: per this function's contract.
            Buf::Typed { base, t, count } => unsafe {
                crate::datatype::copy(&t.layout, *base, *count, src as *mut u8, n, start, false);
            },
        }
    }
}

/// Copies `n` bytes from `src` to `dst`: up to 16 inline, with at most two loads and two stores
/// (the message-rate sizes, where the call to memcpy cost more than the copy), memcpy above.
///
/// # Safety
/// `src` must hold `n` readable bytes and `dst` room for `n`, not overlapping; neither is touched
/// when `n` is 0 (either may then be NULL).
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY (every branch): the loads and stores stay inside the `n` bytes of each side; the
    // two halves of a branch overlap when `n` is not twice the width, which rewrites equal bytes.
    unsafe {
        if n > 16 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 8 {
            let (a, b) = ((src as *const u64).read_unaligned(), (src.add(n - 8) as *const u64).read_unaligned());
            (dst as *mut u64).write_unaligned(a);
            (dst.add(n - 8) as *mut u64).write_unaligned(b);
        } else if n >= 4 {
            let (a, b) = ((src as *const u32).read_unaligned(), (src.add(n - 4) as *const u32).read_unaligned());
            (dst as *mut u32).write_unaligned(a);
            (dst.add(n - 4) as *mut u32).write_unaligned(b);
        } else if n > 0 {
            let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
        }
    }
}

/// One side of a copy between two buffers, possibly in another process: addresses are `u64` so the
/// same description serves a remote buffer.
#[derive(Clone, Copy, Debug)]
pub enum Side<'a> {
    /// Contiguous bytes at this address.
    Flat(u64),
    /// `count` elements of the typemap `map` at `base`.
    Map { base: u64, map: BlockMap<'a>, count: usize },
}

impl<'a> Side<'a> {
    /// The (address, length) pieces holding stream bytes `[start, end)`.
    pub fn pieces(&self, start: usize, end: usize) -> SidePieces<'a> {
        match *self {
            Side::Flat(a) => SidePieces::Flat((start < end).then(|| (a.wrapping_add(start as u64), end - start))),
            Side::Map { base, map, count } => SidePieces::Map(base, map.pieces(count, start, end)),
        }
    }
}

/// Iterator of [`Side::pieces`].
pub enum SidePieces<'a> {
    Flat(Option<(u64, usize)>),
    Map(u64, Pieces<'a>),
}

impl Iterator for SidePieces<'_> {
    type Item = (u64, usize);
    #[inline]
    fn next(&mut self) -> Option<(u64, usize)> {
        match self {
            SidePieces::Flat(p) => p.take(),
            SidePieces::Map(base, it) => it.next().map(|(off, len)| (base.wrapping_add_signed(off), len)),
        }
    }
}

/// Copies stream bytes `[start, end)` from `src` to `dst`, both in this address space, walking
/// the two piece lists side by side (each copy is the overlap of the current pieces).
///
/// # Safety
/// Both sides must hold those stream bytes (`src` readable, `dst` writable), not overlapping.
pub unsafe fn copy_local(src: &Side, dst: &Side, start: usize, end: usize) {
    let mut s = src.pieces(start, end);
    let mut d = dst.pieces(start, end);
    let (mut sp, mut dp) = (s.next(), d.next());
    while let (Some((sa, sl)), Some((da, dl))) = (sp, dp) {
        let k = sl.min(dl);
        // SAFETY: both pieces lie inside their buffers (this function's contract).
        unsafe { std::ptr::copy_nonoverlapping(sa as *const u8, da as *mut u8, k) };
        sp = if k == sl { s.next() } else { Some((sa + k as u64, sl - k)) };
        dp = if k == dl { d.next() } else { Some((da + k as u64, dl - k)) };
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_bytes, copy_local, Side};
    use crate::datatype::copy;
    use crate::datatype::tests::{covered_offsets, random_type, Rng};

    /// `pieces` of any stream range lists exactly the covered bytes of that range, in order, with
    /// touching runs merged; and a block-by-block copy between two random typed buffers (what a
    /// rendezvous does between two typed buffers) gives the same bytes as pack then unpack.
    #[test]
    fn property_pieces_and_typed_to_typed_copy() {
        let mut r = Rng(0x5851_f42d_4c95_7f2d);
        let mut tested = 0;
        for _ in 0..400 {
            let (a, b) = (random_type(&mut r, 3), random_type(&mut r, 3));
            let (la, lb) = (&a.layout, &b.layout);
            let (ca, cb) = (1 + r.below(4) as usize, 1 + r.below(4) as usize);
            if la.size == 0 || lb.size == 0 || la.size * ca > 1 << 15 || lb.size * cb > 1 << 15 {
                continue;
            }
            let (Some(cov_a), Some(cov_b)) = (covered_offsets(la, ca), covered_offsets(lb, cb)) else { continue };
            // Pieces of a random range of a's stream.
            let total = la.size * ca;
            let start = r.below(total as u64 + 1) as usize;
            let end = start + r.below((total - start) as u64 + 1) as usize;
            let mut listed = Vec::new();
            let mut last_end = None;
            for (off, len) in la.map().pieces(ca, start, end) {
                assert!(len > 0);
                assert_ne!(last_end, Some(off), "touching pieces were not merged");
                last_end = Some(off + len as i64);
                listed.extend((0..len as i64).map(|k| off + k));
            }
            assert_eq!(listed, cov_a[start..end]);
            // Typed a -> typed b, the common prefix of both streams.
            let n = total.min(lb.size * cb);
            let (alo, ahi) = (*cov_a.iter().min().unwrap(), *cov_a.iter().max().unwrap() + 1);
            let (blo, bhi) = (*cov_b.iter().min().unwrap(), *cov_b.iter().max().unwrap() + 1);
            let src: Vec<u8> = (0..(ahi - alo) as usize).map(|i| (i * 13 + 5) as u8).collect();
            let mut dst = vec![0xeeu8; (bhi - blo) as usize];
            let mut expect = dst.clone();
            let (sbase, dbase) = (src.as_ptr().wrapping_offset(-alo as isize), dst.as_mut_ptr().wrapping_offset(-blo as isize));
            let mut packed = vec![0u8; n];
            let ebase = expect.as_mut_ptr().wrapping_offset(-blo as isize);
            // SAFETY: every covered byte of both typemaps lies inside src / dst / expect (offsets from
            // the bases above); the buffers are disjoint.
            unsafe {
                copy(la, sbase as *mut u8, ca, packed.as_mut_ptr(), n, 0, true);
                copy(lb, ebase, cb, packed.as_mut_ptr(), n, 0, false);
                let s = Side::Map { base: sbase as u64, map: la.map(), count: ca };
                let d = Side::Map { base: dbase as u64, map: lb.map(), count: cb };
                copy_local(&s, &d, 0, n);
            }
            assert_eq!(dst, expect);
            tested += 1;
        }
        assert!(tested > 100, "only {tested} random type pairs were usable");
    }

    /// Every length across the inline widths and into memcpy's: exactly the `n` bytes are copied,
    /// at every alignment, and nothing around them is written.
    #[test]
    fn copy_bytes_copies_exactly_n() {
        for n in 0..=40usize {
            for off in 0..8usize {
                let src: Vec<u8> = (0..64).map(|i| (i * 7 + n + 1) as u8).collect();
                let mut dst = vec![0xa5u8; 64];
                // SAFETY: off + n <= 48 < 64 bytes on both sides; distinct vectors.
                unsafe { copy_bytes(src.as_ptr().add(off), dst.as_mut_ptr().add(off + 3), n) };
                for (i, &b) in dst.iter().enumerate() {
                    let want = if (off + 3..off + 3 + n).contains(&i) { src[i - 3] } else { 0xa5 };
                    assert_eq!(b, want, "n {n} off {off} byte {i}");
                }
            }
        }
        // SAFETY: n = 0 touches neither pointer.
        unsafe { copy_bytes(std::ptr::null(), std::ptr::null_mut(), 0) };
    }
}
