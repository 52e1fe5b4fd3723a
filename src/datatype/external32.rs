//! The "external32" data representation (MPI 4.1 section 5.1.14/19.5.2) for MPI_Pack_external:
//! big-endian, IEEE formats, fixed sizes. On x86-64 Linux most types only need their bytes
//! reversed; the exceptions follow the standard's size table as MPICH 4.0.2 does: `long` and
//! `unsigned long` are 4 bytes (truncated on pack, sign/zero-extended on unpack) and `long double`
//! (x87 80-bit extended) becomes a 16-byte IEEE binary128. Complex and MPI_2xxx types swap each
//! half. MPI_WCHAR is 2 bytes, as the standard's table says (Linux's wchar_t is 4: truncated on
//! pack, zero-extended on unpack, as `unsigned long`; MPICH 4.0.2 rejects it).

/// How one basic element converts (its native size, its external32 size, and how).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv {
    pub native: u16,
    pub external: u16,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Reverse the bytes of each `unit`-byte piece.
    Swap(u16),
    /// 8-byte signed native, 4-byte external.
    Long,
    /// 8-byte unsigned native, 4-byte external.
    ULong,
    /// 4-byte native wchar_t, 2-byte external.
    WChar,
    /// Each 16 native bytes are an x87 extended value (10 bytes + padding) -> IEEE binary128.
    LongDouble,
}

impl Conv {
    /// The conversion of a predefined type's basic component of `size` bytes (pair types pass
    /// their name once per component).
    pub fn for_leaf(name: &str, size: usize) -> Conv {
        let sz = size as u16;
        let (external, kind) = match name {
            "MPI_LONG" | "MPI_LONG_INT" if size == 8 => (4, Kind::Long),
            "MPI_UNSIGNED_LONG" => (4, Kind::ULong),
            "MPI_WCHAR" if size == 4 => (2, Kind::WChar),
            _ if name.contains("LONG_DOUBLE") && size >= 16 => (sz, Kind::LongDouble),
            _ if name.contains("COMPLEX") || name.starts_with("MPI_2") => (sz, Kind::Swap((sz / 2).max(1))),
            _ => (sz, Kind::Swap(sz.max(1))),
        };
        Conv { native: sz, external, kind }
    }
}

/// External32 bytes of one element of a layout's conversion list.
pub fn size_of(conv: &[(Conv, u64)]) -> u64 {
    conv.iter().map(|&(c, n)| c.external as u64 * n).sum()
}

/// Converts one element: `native` bytes to `ext` bytes (`to_ext`) or back.
fn convert_one(c: Conv, native: &mut [u8], ext: &mut [u8], to_ext: bool) {
    match c.kind {
        Kind::Swap(unit) => {
            let unit = unit as usize;
            for (n, e) in native.chunks_mut(unit).zip(ext.chunks_mut(unit)) {
                if to_ext {
                    e.iter_mut().zip(n.iter().rev()).for_each(|(d, s)| *d = *s);
                } else {
                    n.iter_mut().zip(e.iter().rev()).for_each(|(d, s)| *d = *s);
                }
            }
        }
        Kind::Long | Kind::ULong => {
            if to_ext {
                let v = i64::from_ne_bytes(native[..8].try_into().unwrap());
                ext[..4].copy_from_slice(&(v as i32).to_be_bytes());
            } else {
                let b: [u8; 4] = ext[..4].try_into().unwrap();
                let v = if c.kind == Kind::Long { i32::from_be_bytes(b) as i64 } else { u32::from_be_bytes(b) as i64 };
                native[..8].copy_from_slice(&v.to_ne_bytes());
            }
        }
        Kind::WChar => {
            if to_ext {
                let v = u32::from_ne_bytes(native[..4].try_into().unwrap());
                ext[..2].copy_from_slice(&(v as u16).to_be_bytes());
            } else {
                let v = u16::from_be_bytes(ext[..2].try_into().unwrap()) as u32;
                native[..4].copy_from_slice(&v.to_ne_bytes());
            }
        }
        Kind::LongDouble => {
            for (n, e) in native.chunks_mut(16).zip(ext.chunks_mut(16)) {
                if to_ext {
                    e.copy_from_slice(&x87_to_quad(n[..10].try_into().unwrap()).to_be_bytes());
                } else {
                    let q = u128::from_be_bytes(e[..16].try_into().unwrap());
                    n[..10].copy_from_slice(&quad_to_x87(q));
                    n[10..].fill(0);
                }
            }
        }
    }
}

/// x87 extended (little-endian: 64-bit mantissa with explicit integer bit, then sign and 15-bit
/// exponent) to the bits of an IEEE binary128 (same exponent bias 16383, 112-bit fraction).
fn x87_to_quad(b: [u8; 10]) -> u128 {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap());
    let se = u16::from_le_bytes([b[8], b[9]]) as u128;
    // Drop the explicit integer bit; the 63 fraction bits become the top of the 112-bit fraction.
    (se << 112) | (((mant << 1) as u128) << 48)
}

/// The inverse of `x87_to_quad` (fraction bits beyond 63 are truncated).
fn quad_to_x87(q: u128) -> [u8; 10] {
    let se = (q >> 112) as u16;
    let frac = ((q >> 49) as u64) & 0x7fff_ffff_ffff_ffff;
    // The integer bit is 1 for every non-zero exponent (normal numbers, infinities, NaNs).
    let int_bit = if se & 0x7fff != 0 { 1u64 << 63 } else { 0 };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&(frac | int_bit).to_le_bytes());
    out[8..].copy_from_slice(&se.to_le_bytes());
    out
}

/// Converts `count` elements between a natively packed stream (`native`, `count * size` bytes)
/// and external32 (`ext`, `count * size_of(conv)` bytes); `to_ext` says the direction.
pub fn convert(conv: &[(Conv, u64)], count: usize, native: &mut [u8], ext: &mut [u8], to_ext: bool) {
    let (mut np, mut ep) = (0usize, 0usize);
    for _ in 0..count {
        for &(c, n) in conv {
            for _ in 0..n {
                let (nl, el) = (c.native as usize, c.external as usize);
                convert_one(c, &mut native[np..np + nl], &mut ext[ep..ep + el], to_ext);
                np += nl;
                ep += el;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(name: &str, size: usize, native: &[u8], want_ext: &[u8]) {
        let c = Conv::for_leaf(name, size);
        let conv = [(c, 1)];
        assert_eq!(size_of(&conv), want_ext.len() as u64, "{name}");
        let mut n = native.to_vec();
        let mut e = vec![0u8; want_ext.len()];
        convert(&conv, 1, &mut n, &mut e, true);
        assert_eq!(e, want_ext, "{name} to external32");
        let mut back = vec![0u8; native.len()];
        convert(&conv, 1, &mut back, &mut e, false);
        assert_eq!(back, native, "{name} from external32");
    }

    /// Byte patterns as MPICH 4.0.2 packs them (bytes 01 02 03 ... of the native value).
    #[test]
    fn basic_types_match_mpich() {
        roundtrip("MPI_INT", 4, &[1, 2, 3, 4], &[4, 3, 2, 1]);
        roundtrip("MPI_SHORT", 2, &[1, 2], &[2, 1]);
        roundtrip("MPI_DOUBLE", 8, &[1, 2, 3, 4, 5, 6, 7, 8], &[8, 7, 6, 5, 4, 3, 2, 1]);
        roundtrip("MPI_C_FLOAT_COMPLEX", 8, &[1, 2, 3, 4, 5, 6, 7, 8], &[4, 3, 2, 1, 8, 7, 6, 5]);
        roundtrip("MPI_BYTE", 1, &[7], &[7]);
        // long: 4 bytes external; the value must fit for the round trip.
        roundtrip("MPI_LONG", 8, &(-5i64).to_ne_bytes(), &(-5i32).to_be_bytes());
        roundtrip("MPI_UNSIGNED_LONG", 8, &(0xfedc_ba98u64).to_ne_bytes(), &[0xfe, 0xdc, 0xba, 0x98]);
        // wchar_t: 2 bytes external (the standard's table).
        roundtrip("MPI_WCHAR", 4, &(0x20acu32).to_ne_bytes(), &[0x20, 0xac]);
    }

    #[test]
    fn long_double_to_binary128() {
        let mut native = [0u8; 16];
        for (i, b) in native.iter_mut().take(10).enumerate() {
            *b = i as u8 + 1;
        }
        let c = [(Conv::for_leaf("MPI_LONG_DOUBLE", 16), 1)];
        let mut e = [0u8; 16];
        convert(&c, 1, &mut native.clone(), &mut e, true);
        // MPICH 4.0.2 packs bytes 01..0a (+ padding) as this.
        assert_eq!(e, [0x0a, 0x09, 0x10, 0x0e, 0x0c, 0x0a, 0x08, 0x06, 0x04, 0x02, 0, 0, 0, 0, 0, 0]);
        // 1.5 round-trips: x87 mantissa 0xC000.., exponent 0x3fff.
        let mut n = [0u8; 16];
        n[..8].copy_from_slice(&0xC000_0000_0000_0000u64.to_le_bytes());
        n[8..10].copy_from_slice(&0x3fffu16.to_le_bytes());
        let mut e = [0u8; 16];
        convert(&c, 1, &mut n.clone(), &mut e, true);
        assert_eq!(&e[..3], &[0x3f, 0xff, 0x80]);
        let mut back = [0xffu8; 16];
        convert(&c, 1, &mut back, &mut e, false);
        assert_eq!(back, n);
    }

    #[test]
    fn mixed_runs_and_counts() {
        let conv = [(Conv::for_leaf("MPI_INT", 4), 2), (Conv::for_leaf("MPI_LONG", 8), 1)];
        assert_eq!(size_of(&conv), 12);
        let mut native = Vec::new();
        for _ in 0..2 {
            native.extend_from_slice(&1i32.to_ne_bytes());
            native.extend_from_slice(&2i32.to_ne_bytes());
            native.extend_from_slice(&(-3i64).to_ne_bytes());
        }
        let mut e = vec![0u8; 24];
        convert(&conv, 2, &mut native.clone(), &mut e, true);
        assert_eq!(&e[..12], &[0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xfd]);
        assert_eq!(&e[..12], &e[12..]);
        let mut back = vec![0u8; 32];
        convert(&conv, 2, &mut back, &mut e, false);
        assert_eq!(back, native);
    }
}
