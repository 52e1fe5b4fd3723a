use super::*;

fn leaf(size: usize) -> Arc<TypeRepr> {
    Arc::new(TypeRepr::leaf(size as i32, LeafKind::Data, &[(0, size)], size as i64, size, "leaf"))
}
fn marker(kind: LeafKind) -> Arc<TypeRepr> {
    Arc::new(TypeRepr::leaf(0, kind, &[], 0, 1, "marker"))
}

#[test]
fn contiguous_and_vector_layouts() {
    let int = leaf(4);
    let c = contiguous(3, &int).unwrap();
    assert_eq!((c.layout.size, c.layout.lb, c.layout.extent()), (12, 0, 12));
    assert_eq!(c.layout.blocks, vec![(0, 12)]);
    assert_eq!(c.layout.contiguous_span(5), Some((0, 60)));

    let v = vector(3, 2, 4, &int).unwrap(); // blocks of 2 ints every 4 ints
    assert_eq!(v.layout.size, 24);
    assert_eq!((v.layout.lb, v.layout.ub), (0, 40));
    assert_eq!(v.layout.blocks, vec![(0, 8), (16, 8), (32, 8)]);
    assert_eq!(v.layout.contiguous_span(1), None);

    let neg = vector(2, 1, -2, &int).unwrap();
    assert_eq!((neg.layout.lb, neg.layout.ub, neg.layout.true_lb, neg.layout.true_ub), (-8, 4, -8, 4));
    assert_eq!(neg.layout.blocks, vec![(0, 4), (-8, 4)]);
}

#[test]
fn indexed_struct_and_padding() {
    let int = leaf(4);
    let dbl = leaf(8);
    let ch = leaf(1);
    let ix = indexed(&[2, 1], &[3, 0], &int).unwrap();
    assert_eq!(ix.layout.blocks, vec![(12, 8), (0, 4)]);
    assert_eq!((ix.layout.lb, ix.layout.ub, ix.layout.size), (0, 20, 12));

    // struct { double d; char c; }: extent padded to 16 (MPICH), true extent 9.
    let s = create_struct(&[1, 1], &[0, 8], &[dbl.clone(), ch.clone()]).unwrap();
    assert_eq!((s.layout.size, s.layout.extent(), s.layout.true_extent()), (9, 16, 9));
    assert_eq!(s.layout.blocks, vec![(0, 9)]);
    assert_eq!(s.layout.basics, vec![(8, 1), (1, 1)]);

    // Sticky markers: lb from MPI_LB, ub from MPI_UB, no padding.
    let lbm = marker(LeafKind::LbMarker);
    let ubm = marker(LeafKind::UbMarker);
    let m = create_struct(&[1, 1, 1], &[-4, 0, 20], &[lbm, int.clone(), ubm]).unwrap();
    assert_eq!((m.layout.lb, m.layout.ub, m.layout.true_lb, m.layout.true_ub), (-4, 20, 0, 4));
    // The markers stay sticky inside a contiguous type.
    let mc = contiguous(2, &Arc::new(m)).unwrap();
    assert_eq!((mc.layout.lb, mc.layout.ub), (-4, 44));
    assert!(mc.layout.lb_sticky && mc.layout.ub_sticky);
}

#[test]
fn resized_subarray_and_elements() {
    let int = leaf(4);
    let r = resized(&int, -4, 16).unwrap();
    assert_eq!((r.layout.lb, r.layout.extent(), r.layout.true_lb, r.layout.true_extent()), (-4, 16, 0, 4));
    let rc = contiguous(3, &Arc::new(r)).unwrap();
    assert_eq!(rc.layout.blocks, vec![(0, 4), (16, 4), (32, 4)]);
    assert_eq!((rc.layout.lb, rc.layout.ub), (-4, 44));

    // 4x5 C array of ints, 2x3 block at (1,2).
    let s = subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, 56, &int).unwrap();
    assert_eq!((s.layout.lb, s.layout.extent(), s.layout.size), (0, 80, 24));
    assert_eq!(s.layout.blocks, vec![(28, 12), (48, 12)]);
    // Fortran order: first index fastest; sizes (4,5), block (2,3) at (1,2).
    let f = subarray(&[4, 5], &[2, 3], &[1, 2], Order::Fortran, 57, &int).unwrap();
    assert_eq!(f.layout.blocks, vec![(36, 8), (52, 8), (68, 8)]);

    let dbl = leaf(8);
    let st = create_struct(&[1, 2], &[0, 8], &[dbl, int]).unwrap();
    assert_eq!(st.layout.basic_elements_in(16 + 8 + 4), Some(5));
    assert_eq!(st.layout.basic_elements_in(16 + 6), Some(3));
}

#[test]
fn partial_pack_matches_whole() {
    let int = leaf(4);
    let v = Arc::new(vector(4, 3, 5, &int).unwrap());
    let src: Vec<u8> = (0..255u8).collect();
    let count = 2;
    let total = v.layout.size * count;
    let mut whole = vec![0u8; total];
    // SAFETY: the vector spans (2-1)*extent + ub = 156 + 76 < 255 bytes of src.
    unsafe { copy(&v.layout, src.as_ptr() as *mut u8, count, whole.as_mut_ptr(), total, 0, true) };
    for chunk in [1, 5, 7, 13] {
        let mut parts = vec![0u8; total];
        let mut pos = 0;
        while pos < total {
            let n = chunk.min(total - pos);
            // SAFETY: as above; the destination slice has n bytes at pos.
            let got = unsafe { copy(&v.layout, src.as_ptr() as *mut u8, count, parts[pos..].as_mut_ptr(), n, pos, true) };
            assert_eq!(got, n);
            pos += n;
        }
        assert_eq!(parts, whole);
    }
}

/// xorshift64*: reproducible random nested types.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub(crate) fn random_type(r: &mut Rng, depth: u32) -> Arc<TypeRepr> {
    let leaves = [1usize, 2, 4, 8];
    if depth == 0 || r.below(4) == 0 {
        return leaf(leaves[r.below(4) as usize]);
    }
    let old = random_type(r, depth - 1);
    let ext = old.layout.extent().max(1);
    let t = match r.below(8) {
        0 => contiguous(r.below(4) as u64, &old).unwrap(),
        1 => vector(r.below(4) as u64, r.below(3) as u64, r.below(5) as i64 - 1, &old).unwrap(),
        2 => hvector(r.below(4) as u64, 1 + r.below(2) as u64, (r.below(4) as i64 + 1) * ext + r.below(3) as i64, &old).unwrap(),
        3 => {
            let n = 1 + r.below(3) as usize;
            let bl: Vec<i64> = (0..n).map(|_| r.below(3) as i64).collect();
            let d: Vec<i64> = (0..n).map(|_| r.below(8) as i64).collect();
            indexed(&bl, &d, &old).unwrap()
        }
        4 => {
            let n = 1 + r.below(3) as usize;
            let bl: Vec<i64> = (0..n).map(|_| 1 + r.below(2) as i64).collect();
            let d: Vec<i64> = (0..n).map(|_| r.below(64) as i64).collect();
            hindexed(&bl, &d, &old).unwrap()
        }
        5 => {
            let other = random_type(r, depth - 1);
            create_struct(&[1 + r.below(2) as i64, 1], &[0, r.below(48) as i64], &[old, other]).unwrap()
        }
        6 => resized(&old, -(r.below(3) as i64), ext + r.below(9) as i64).unwrap(),
        _ => subarray(&[3, 4], &[1 + r.below(3) as i64, 1 + r.below(4) as i64], &[0, 0], if r.below(2) == 0 { Order::C } else { Order::Fortran }, 0, &old).unwrap(),
    };
    Arc::new(t)
}

/// Pack then unpack into a fresh buffer reproduces exactly the bytes the typemap covers and leaves
/// every other byte untouched (overlapping typemaps excluded: they are erroneous for receives).
#[test]
fn property_pack_unpack_roundtrip() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut tested = 0;
    for _ in 0..400 {
        let t = random_type(&mut r, 3);
        let l = &t.layout;
        let count = 1 + r.below(3) as usize;
        if l.size == 0 || l.size * count > 1 << 16 {
            continue;
        }
        let ext = l.extent();
        // Byte offsets covered by the typemap of `count` elements, relative to the buffer origin.
        let mut covered = Vec::new();
        for e in 0..count as i64 {
            for (o, len) in l.blocks.iter() {
                for k in 0..len as i64 {
                    covered.push(e * ext + o + k);
                }
            }
        }
        let mut sorted = covered.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != covered.len() {
            continue; // overlapping entries
        }
        let lo = *sorted.first().unwrap();
        let hi = *sorted.last().unwrap() + 1;
        let span = (hi - lo) as usize;
        let src: Vec<u8> = (0..span).map(|i| (i * 7 + 3) as u8).collect();
        let mut packed = vec![0u8; l.size * count];
        let origin = -lo as isize;
        // SAFETY: every covered byte lies in [lo, hi), i.e. inside src/dst relative to origin.
        let n = unsafe { copy(l, src.as_ptr().offset(origin) as *mut u8, count, packed.as_mut_ptr(), packed.len(), 0, true) };
        assert_eq!(n, packed.len());
        // The stream is the covered bytes in typemap order.
        let expect: Vec<u8> = covered.iter().map(|&c| src[(c - lo) as usize]).collect();
        assert_eq!(packed, expect);
        let mut dst = vec![0xeeu8; span];
        // SAFETY: as above.
        unsafe { copy(l, dst.as_mut_ptr().offset(origin), count, packed.as_mut_ptr(), packed.len(), 0, false) };
        for (i, &b) in dst.iter().enumerate() {
            let off = lo + i as i64;
            if sorted.binary_search(&off).is_ok() {
                assert_eq!(b, src[i]);
            } else {
                assert_eq!(b, 0xee, "gap byte at {off} was written");
            }
        }
        tested += 1;
    }
    assert!(tested > 100, "only {tested} random types were usable");
}

/// Large counts stay symbolic: a contiguous type of 3 * 2^31 bytes is one block, strides and
/// displacements beyond 2^32 are exact, and 64-bit overflow is an error rather than a wrap.
#[test]
fn large_counts_and_overflow() {
    let byte = leaf(1);
    let int = leaf(4);
    let c = contiguous(3 << 31, &byte).unwrap();
    assert_eq!((c.layout.size, c.layout.extent(), c.layout.blocks.len()), (3 << 31, 3 << 31, 1));
    let cc = contiguous(1 << 20, &Arc::new(c)).unwrap();
    assert_eq!(cc.layout.size as u64, 3 << 51);

    let v = vector(3, 2, 1 << 32, &int).unwrap();
    assert_eq!(v.layout.blocks, vec![(0, 8), (1 << 34, 8), (2 << 34, 8)]);
    assert_eq!(v.layout.extent(), (2 << 34) + 8);

    let h = hindexed(&[1 << 31, 1], &[0, 1 << 34], &int).unwrap();
    assert_eq!((h.layout.size as u64, h.layout.true_extent()), ((4 << 31) + 4, (1 << 34) + 4));

    assert_eq!(vector(2, 1, i64::MAX / 2, &int).unwrap_err(), BuildError::Overflow);
    assert_eq!(contiguous(u64::MAX / 2, &int).unwrap_err(), BuildError::Overflow);
    assert_eq!(resized(&int, i64::MAX, 1).unwrap_err(), BuildError::Overflow);
    // 2^40 gapped elements: one tile of one block, repeated.
    let gap = resized(&int, 0, 8).unwrap();
    let g = contiguous(1 << 40, &Arc::new(gap)).unwrap();
    assert_eq!((g.layout.blocks.len(), g.layout.blocks.tile().len()), (1 << 40, 1));
    assert_eq!(g.layout.blocks.get((1 << 40) - 1), (((1i64 << 40) - 1) * 8, 4));
}

#[test]
fn large_count_envelopes() {
    let int = leaf(4);
    let h = hindexed(&[5, 6], &[0, 1 << 34], &int).unwrap();
    let e = h.env.into_large();
    assert_eq!((e.ints.len(), e.addrs.len(), e.counts), (0, 0, vec![2, 5, 6, 0, 1 << 34]));
    let s = subarray(&[10, 20], &[2, 3], &[1, 4], Order::C, 56, &int).unwrap();
    let e = s.env.into_large();
    assert_eq!((e.ints, e.counts), (vec![2, 56], vec![10, 20, 2, 3, 1, 4]));
}

#[test]
fn abutting_blocks_are_one_step() {
    let int = leaf(4);
    // 2^40 abutting blocks: one block, no per-block loop.
    let v = hvector(1 << 40, 1, 4, &int).unwrap();
    assert_eq!((v.layout.size as u64, v.layout.blocks.len()), (1 << 42, 1));
    let w = vector(1 << 40, 2, 2, &int).unwrap();
    assert_eq!(w.layout.blocks, vec![(0, 1 << 43)]);
    // Gaps: a compact repetition, built without walking all 2^40 blocks.
    let g = vector(1 << 40, 1, 2, &int).unwrap();
    assert_eq!((g.layout.blocks.len(), g.layout.blocks.tile().len(), g.layout.size), (1 << 40, 1, 1 << 42));
    // A repetition of a repetition whose tile would exceed MAX_BLOCKS is refused.
    let big = Arc::new(vector(1 << 26, 1, 2, &int).unwrap());
    assert!(matches!(hvector(2, 1, 1 << 30, &big).unwrap_err(), BuildError::TooManyBlocks(_)));
}

/// The vector of 2^26 strided blocks of the issue: 2^26 blocks, O(1) memory, exact positions.
#[test]
fn huge_strided_vector_is_compact() {
    let ch = leaf(1);
    let v = vector(1 << 26, 1, 2, &ch).unwrap();
    let b = &v.layout.blocks;
    assert_eq!((b.len(), b.tile().len(), v.layout.size, v.layout.extent()), (1 << 26, 1, 1 << 26, (1 << 27) - 1));
    assert!(std::mem::size_of_val(b.tile()) + b.wire().1 as usize * 16 < 1024);
    assert_eq!((b.get(12345), b.prefix(12345), b.locate(12345)), ((24690, 1), 12345, 12345));
    assert_eq!(v.layout.basic_elements_in(1 << 26), Some(1 << 26));
    // A stream range deep inside walks from there, block by block.
    let p: Vec<_> = v.layout.map().pieces(1, (1 << 25) + 3, (1 << 25) + 6).collect();
    assert_eq!(p, vec![((1 << 26) + 6, 1), ((1 << 26) + 8, 1), ((1 << 26) + 10, 1)]);
}

/// Vectors of vectors (and of structs) with large counts are compact, and every view of them
/// (blocks, get/prefix/locate, pack, pieces, element counts) matches a naive expansion.
#[test]
fn property_compact_vectors_match_naive_expansion() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..60 {
        // Inner: a vector of leaves, or a struct of two leaves (several basic runs).
        let (inner, inner_bytes): (Arc<TypeRepr>, Vec<i64>) = if r.below(2) == 0 {
            let (n, bl, st) = (1 + r.below(3), 1 + r.below(2), 2 + r.below(3) as i64);
            let t = vector(n, bl, st, &leaf(2)).unwrap();
            let mut off = vec![];
            for i in 0..n as i64 {
                for j in 0..bl as i64 {
                    off.extend((0..2).map(|k| i * st * 2 + j * 2 + k));
                }
            }
            (Arc::new(t), off)
        } else {
            let t = create_struct(&[1, 1], &[0, 8], &[leaf(4), leaf(2)]).unwrap();
            (Arc::new(t), (0..4).chain(8..10).collect())
        };
        let ext = inner.layout.extent();
        let (count, bl) = (1 + r.below(5000), 1 + r.below(3));
        let stride = (bl as i64) * ext + 1 + r.below(7) as i64;
        let t = hvector(count, bl, stride, &inner).unwrap();
        let l = &t.layout;
        assert!(l.blocks.tile().len() as u64 <= bl * inner.layout.blocks.len() as u64);
        let mut naive = vec![];
        for i in 0..count as i64 {
            for j in 0..bl as i64 {
                naive.extend(inner_bytes.iter().map(|&o| i * stride + j * ext + o));
            }
        }
        // Blocks, expanded to bytes, are the naive typemap; get/prefix/locate agree with iter.
        let mut bytes = vec![];
        let mut p = 0;
        for (i, (o, len)) in l.blocks.iter().enumerate() {
            if r.below(64) == 0 || i + 1 == l.blocks.len() {
                assert_eq!((l.blocks.get(i), l.blocks.prefix(i)), ((o, len), p));
                assert_eq!((l.blocks.locate(p), l.blocks.locate(p + len - 1)), (i, i));
            }
            bytes.extend(o..o + len as i64);
            p += len;
        }
        assert_eq!(bytes, naive);
        assert_eq!(l.size, naive.len());
        // Pack of 2 elements is the naive gather.
        let span = (l.true_ub + l.extent()) as usize;
        let src: Vec<u8> = (0..span).map(|i| (i * 13 + 5) as u8).collect();
        let mut packed = vec![0u8; 2 * l.size];
        // SAFETY: both elements lie in [0, true_ub + extent).
        unsafe { copy(l, src.as_ptr() as *mut u8, 2, packed.as_mut_ptr(), packed.len(), 0, true) };
        let want: Vec<u8> = naive.iter().chain(naive.iter().map(|o| o + l.extent()).collect::<Vec<_>>().iter()).map(|&o| src[o as usize]).collect();
        assert_eq!(packed, want);
        // Pieces of a random range cover exactly its naive bytes.
        let a = r.below(2 * l.size as u64) as usize;
        let b = a + r.below(2 * l.size as u64 - a as u64 + 1) as usize;
        let got: Vec<i64> = l.map().pieces(2, a, b).flat_map(|(o, n)| o..o + n as i64).collect();
        let all: Vec<i64> = naive.iter().copied().chain(naive.iter().map(|o| o + l.extent())).collect();
        assert_eq!(got, all[a..b]);
        // Element counts: the inner basics repeated.
        let per = inner.layout.basic_count() * bl * count;
        assert_eq!(l.basic_elements_in(l.size as u64), Some(per));
        assert_eq!(l.basic_elements_in(2 * l.size as u64 - 1), Some(2 * per - 1));
    }
}

/// The byte offsets the typemap of `count` elements covers, in stream order, or None if entries overlap.
pub(crate) fn covered_offsets(l: &Layout, count: usize) -> Option<Vec<i64>> {
    let mut covered = Vec::new();
    for e in 0..count as i64 {
        for (o, len) in l.blocks.iter() {
            covered.extend((0..len as i64).map(|k| e * l.extent() + o + k));
        }
    }
    let mut sorted = covered.clone();
    sorted.sort();
    sorted.dedup();
    (sorted.len() == covered.len()).then_some(covered)
}
