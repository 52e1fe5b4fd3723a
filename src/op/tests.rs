//! Kernel tests: every op on a few datatypes of each group, the MINLOC/MAXLOC tie rule, and the
//! op/type checks.
use crate::error::ErrorClass;
use super::kernels::{Complex, Pair};
use super::*;


const MAX: Op = Op::Max;
const MIN: Op = Op::Min;
const SUM: Op = Op::Sum;
const PROD: Op = Op::Prod;
const LAND: Op = Op::Land;
const BAND: Op = Op::Band;
const LOR: Op = Op::Lor;
const BOR: Op = Op::Bor;
const LXOR: Op = Op::Lxor;
const BXOR: Op = Op::Bxor;
const MINLOC: Op = Op::Minloc;
const MAXLOC: Op = Op::Maxloc;
const REPLACE: Op = Op::Replace;
const NO_OP: Op = Op::NoOp;

const INT: Basic = Basic::Int;
const UNSIGNED_CHAR: Basic = Basic::UnsignedChar;
const SIGNED_CHAR: Basic = Basic::SignedChar;
const LONG: Basic = Basic::Long;
const UINT64: Basic = Basic::Uint64T;
const INT16: Basic = Basic::Int16T;
const FLOAT: Basic = Basic::Float;
const DOUBLE: Basic = Basic::Double;
const LONG_DOUBLE: Basic = Basic::LongDouble;
const BYTE: Basic = Basic::Byte;
const CHAR: Basic = Basic::Char;
const INTEGER: Basic = Basic::Integer;
const REAL: Basic = Basic::Real;
const DOUBLE_PRECISION: Basic = Basic::DoublePrecision;
const LOGICAL: Basic = Basic::Logical;
const C_BOOL: Basic = Basic::CBool;
const C_DOUBLE_COMPLEX: Basic = Basic::CDoubleComplex;
const COMPLEX: Basic = Basic::Complex;
const TWO_INT: Basic = Basic::TwoInt;
const DOUBLE_INT: Basic = Basic::DoubleInt;
const FLOAT_INT: Basic = Basic::FloatInt;
const LONG_INT: Basic = Basic::LongInt;
const SHORT_INT: Basic = Basic::ShortInt;
const LONG_DOUBLE_INT: Basic = Basic::LongDoubleInt;
const TWO_DOUBLE_PRECISION: Basic = Basic::TwoDoublePrecision;

/// `inout = in op inout` through the public entry point.
fn reduce<T: Copy>(op: Op, dt: Basic, inp: &[T], inout: &[T]) -> Vec<T> {
    assert_eq!(inp.len(), inout.len());
    let r = Reduction::new(op, dt).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(r.size, std::mem::size_of::<T>());
    let mut out = inout.to_vec();
    // SAFETY: both slices hold inp.len() elements of T, whose size matches the datatype's.
    unsafe { r.apply(inp.as_ptr() as *const u8, out.as_mut_ptr() as *mut u8, inp.len()) };
    out
}

fn class(op: Op, dt: Basic) -> Option<ErrorClass> {
    Reduction::new(op, dt).err().map(|e| e.class)
}

#[test]
fn max_min() {
    assert_eq!(reduce(MAX, INT, &[1, -5, 7, i32::MIN], &[2, -6, 7, 0]), [2, -5, 7, 0]);
    assert_eq!(reduce(MIN, INT, &[1, -5, 7, i32::MIN], &[2, -6, 7, 0]), [1, -6, 7, i32::MIN]);
    assert_eq!(reduce(MAX, UNSIGNED_CHAR, &[200u8, 3], &[100, 4]), [200, 4]);
    assert_eq!(reduce(MIN, SIGNED_CHAR, &[-100i8, 3], &[100, 4]), [-100, 3]);
    assert_eq!(reduce(MAX, UINT64, &[u64::MAX, 1], &[0, 2]), [u64::MAX, 2]);
    assert_eq!(reduce(MAX, DOUBLE, &[1.5, -0.5], &[1.0, -0.25]), [1.5, -0.25]);
    assert_eq!(reduce(MIN, FLOAT, &[1.5f32, -0.5], &[1.0, -0.25]), [1.0, -0.5]);
    assert_eq!(reduce(MAX, INTEGER, &[3i32], &[4]), [4]);
    assert_eq!(reduce(MIN, REAL, &[3f32], &[4.0]), [3.0]);
    assert_eq!(reduce(MAX, DOUBLE_PRECISION, &[3f64], &[4.0]), [4.0]);
}

#[test]
fn sum_prod() {
    assert_eq!(reduce(SUM, INT, &[1, 2, i32::MAX], &[10, -20, 1]), [11, -18, i32::MIN]);
    assert_eq!(reduce(PROD, INT, &[3, -2], &[4, 5]), [12, -10]);
    assert_eq!(reduce(SUM, UNSIGNED_CHAR, &[250u8], &[10]), [4]);
    assert_eq!(reduce(SUM, LONG, &[1i64 << 40], &[1]), [(1i64 << 40) + 1]);
    assert_eq!(reduce(PROD, INT16, &[300i16], &[2]), [600]);
    assert_eq!(reduce(SUM, DOUBLE, &[0.5, 1e300], &[0.25, 1e300]), [0.75, 2e300]);
    assert_eq!(reduce(PROD, FLOAT, &[0.5f32], &[8.0]), [4.0]);
    let a = Complex { re: 1.0f64, im: 2.0 };
    let b = Complex { re: 3.0f64, im: -1.0 };
    assert_eq!(reduce(SUM, C_DOUBLE_COMPLEX, &[a], &[b]), [Complex { re: 4.0, im: 1.0 }]);
    // (1+2i)(3-i) = 3 - i + 6i - 2i^2 = 5 + 5i
    assert_eq!(reduce(PROD, C_DOUBLE_COMPLEX, &[a], &[b]), [Complex { re: 5.0, im: 5.0 }]);
    let c = Complex { re: 1.0f32, im: 1.0 };
    assert_eq!(reduce(PROD, COMPLEX, &[c], &[c]), [Complex { re: 0.0, im: 2.0 }]);
}

#[test]
fn logical() {
    assert_eq!(reduce(LAND, INT, &[0, 1, 5, 0], &[0, 0, -3, 7]), [0, 0, 1, 0]);
    assert_eq!(reduce(LOR, INT, &[0, 1, 5, 0], &[0, 0, -3, 7]), [0, 1, 1, 1]);
    assert_eq!(reduce(LXOR, INT, &[0, 1, 5, 0], &[0, 0, -3, 7]), [0, 1, 0, 1]);
    assert_eq!(reduce(LAND, LOGICAL, &[1i32, 1], &[1, 0]), [1, 0]);
    assert_eq!(reduce(LOR, C_BOOL, &[1u8, 0], &[0, 0]), [1, 0]);
    assert_eq!(reduce(LXOR, UNSIGNED_CHAR, &[2u8, 0], &[1, 0]), [0, 0]);
}

#[test]
fn bitwise() {
    assert_eq!(reduce(BAND, INT, &[0b1100], &[0b1010]), [0b1000]);
    assert_eq!(reduce(BOR, INT, &[0b1100], &[0b1010]), [0b1110]);
    assert_eq!(reduce(BXOR, INT, &[0b1100], &[0b1010]), [0b0110]);
    assert_eq!(reduce(BAND, BYTE, &[0xf0u8], &[0x3c]), [0x30]);
    assert_eq!(reduce(BOR, UINT64, &[1u64 << 63], &[1]), [(1u64 << 63) | 1]);
    assert_eq!(reduce(BXOR, INTEGER, &[-1i32], &[0x0f]), [!0x0f]);
}

#[test]
fn minloc_maxloc_and_ties() {
    let p = |v: f64, i: i32| Pair { v, i };
    assert_eq!(reduce(MINLOC, DOUBLE_INT, &[p(1.0, 3), p(2.0, 0), p(5.0, 9)], &[p(2.0, 1), p(1.0, 4), p(5.0, 2)]), [p(1.0, 3), p(1.0, 4), p(5.0, 2)]);
    assert_eq!(reduce(MAXLOC, DOUBLE_INT, &[p(1.0, 3), p(2.0, 0), p(5.0, 9)], &[p(2.0, 1), p(1.0, 4), p(5.0, 2)]), [p(2.0, 1), p(2.0, 0), p(5.0, 2)]);
    // ties: the lower index wins whichever operand it comes from
    assert_eq!(reduce(MINLOC, DOUBLE_INT, &[p(7.0, 1)], &[p(7.0, 6)]), [p(7.0, 1)]);
    assert_eq!(reduce(MINLOC, DOUBLE_INT, &[p(7.0, 6)], &[p(7.0, 1)]), [p(7.0, 1)]);
    assert_eq!(reduce(MAXLOC, DOUBLE_INT, &[p(7.0, 6)], &[p(7.0, 1)]), [p(7.0, 1)]);
    let q = |v: i32, i: i32| Pair { v, i };
    assert_eq!(reduce(MAXLOC, TWO_INT, &[q(4, 2), q(4, 8)], &[q(4, 5), q(3, 0)]), [q(4, 2), q(4, 8)]);
    assert_eq!(reduce(MINLOC, TWO_INT, &[q(4, 2), q(4, 8)], &[q(4, 5), q(3, 0)]), [q(4, 2), q(3, 0)]);
    assert_eq!(reduce(MINLOC, FLOAT_INT, &[Pair { v: 1.0f32, i: 1 }], &[Pair { v: 0.5f32, i: 2 }]), [Pair { v: 0.5f32, i: 2 }]);
    assert_eq!(reduce(MAXLOC, LONG_INT, &[Pair { v: 9i64, i: 1 }], &[Pair { v: 9i64, i: 0 }]), [Pair { v: 9i64, i: 0 }]);
    assert_eq!(reduce(MAXLOC, SHORT_INT, &[Pair { v: -1i16, i: 1 }], &[Pair { v: -2i16, i: 0 }]), [Pair { v: -1i16, i: 1 }]);
    assert_eq!(reduce(MINLOC, TWO_DOUBLE_PRECISION, &[Pair { v: 2.0f64, i: 3.0f64 }], &[Pair { v: 2.0, i: 1.0 }]), [Pair { v: 2.0, i: 1.0 }]);
}

#[test]
fn pair_layouts_match_c() {
    assert_eq!(std::mem::size_of::<Pair<f64, i32>>(), 16);
    assert_eq!(std::mem::size_of::<Pair<i64, i32>>(), 16);
    assert_eq!(std::mem::size_of::<Pair<i16, i32>>(), 8);
    assert_eq!(std::mem::size_of::<Pair<f32, i32>>(), 8);
}

#[test]
fn replace_and_no_op() {
    assert_eq!(reduce(REPLACE, DOUBLE, &[1.0, 2.0], &[3.0, 4.0]), [1.0, 2.0]);
    assert_eq!(reduce(REPLACE, DOUBLE_INT, &[Pair { v: 1.0, i: 1 }], &[Pair { v: 2.0, i: 2 }]), [Pair { v: 1.0, i: 1 }]);
    assert_eq!(reduce(NO_OP, INT, &[1, 2], &[3, 4]), [3, 4]);
    assert!(!Op::Replace.commutative() && !Op::NoOp.commutative() && Op::Sum.commutative() && Op::Maxloc.commutative());
}

#[test]
fn unaligned_buffers() {
    let mut a = [0u8; 17];
    let mut b = [0u8; 17];
    a[1..9].copy_from_slice(&2.5f64.to_ne_bytes());
    a[9..17].copy_from_slice(&1.0f64.to_ne_bytes());
    b[1..9].copy_from_slice(&0.5f64.to_ne_bytes());
    b[9..17].copy_from_slice(&4.0f64.to_ne_bytes());
    let r = Reduction::new(SUM, DOUBLE).unwrap();
    // SAFETY: 2 doubles at offset 1 of 17-byte arrays.
    unsafe { r.apply(a.as_ptr().add(1), b.as_mut_ptr().add(1), 2) };
    assert_eq!(f64::from_ne_bytes(b[1..9].try_into().unwrap()), 3.0);
    assert_eq!(f64::from_ne_bytes(b[9..17].try_into().unwrap()), 5.0);
}

#[test]
fn invalid_combinations() {
    assert_eq!(class(BAND, DOUBLE), Some(ErrorClass::Op));
    assert_eq!(class(LAND, DOUBLE), Some(ErrorClass::Op));
    assert_eq!(class(LAND, INTEGER), Some(ErrorClass::Op));
    assert_eq!(class(MAX, C_DOUBLE_COMPLEX), Some(ErrorClass::Op));
    assert_eq!(class(MAX, BYTE), Some(ErrorClass::Op));
    assert_eq!(class(SUM, Basic::Wchar), Some(ErrorClass::Op));
    assert_eq!(class(MAX, C_BOOL), Some(ErrorClass::Op));
    assert_eq!(class(MAX, Basic::CLongDoubleComplex), Some(ErrorClass::Op));
    assert_eq!(class(LAND, LONG_DOUBLE), Some(ErrorClass::Op));
    assert_eq!(class(SUM, LONG_DOUBLE_INT), Some(ErrorClass::Op));
    assert_eq!(class(SUM, LOGICAL), Some(ErrorClass::Op));
    assert_eq!(class(MINLOC, DOUBLE), Some(ErrorClass::Op));
    assert_eq!(class(SUM, DOUBLE_INT), Some(ErrorClass::Op));
    let e = Reduction::new(BAND, DOUBLE).unwrap_err();
    assert!(e.msg.contains("MPI_BAND") && e.msg.contains("MPI_DOUBLE"), "{}", e.msg);
    assert_eq!(class(REPLACE, LONG_DOUBLE), None);
}

#[test]
fn char_types_reduce_as_signed_and_unsigned_integers() {
    // MPI_CHAR is a signed char on x86-64, as MPICH computes it.
    assert_eq!(reduce(SUM, CHAR, &[100i8, -3], &[100, 5]), [-56, 2]);
    assert_eq!(reduce(MAX, CHAR, &[-1i8, 3], &[1, -4]), [1, 3]);
    assert_eq!(reduce(MIN, Basic::Character, &[-1i8], &[1]), [-1]);
    assert_eq!(reduce(PROD, CHAR, &[3i8], &[-5]), [-15]);
    assert_eq!(reduce(LAND, CHAR, &[2i8, 0], &[1, 1]), [1, 0]);
    assert_eq!(reduce(BXOR, CHAR, &[0x0fi8], &[0x3c]), [0x33]);
    assert_eq!(reduce(MAX, UNSIGNED_CHAR, &[200u8], &[100]), [200]);
    assert_eq!(reduce(SUM, SIGNED_CHAR, &[-100i8], &[-100]), [56]);
}

/// An x87 80-bit `long double` in its 16-byte slot, from a normal f64 (or zero).
fn ld(x: f64) -> [u8; 16] {
    let b = x.to_bits();
    let mut out = [0u8; 16];
    if x != 0.0 {
        let sign = (b >> 63) as u16;
        let exp = ((b >> 52) & 0x7ff) as i32 - 1023 + 16383;
        let mant = (1u64 << 63) | ((b & ((1u64 << 52) - 1)) << 11);
        out[..8].copy_from_slice(&mant.to_le_bytes());
        out[8..10].copy_from_slice(&((sign << 15) | exp as u16).to_le_bytes());
    }
    out
}

/// An IEEE binary128 `__float128`, from a normal f64 (or zero).
fn f128(x: f64) -> [u8; 16] {
    let b = x.to_bits();
    if x == 0.0 {
        return [0; 16];
    }
    let sign = (b >> 63) as u128;
    let exp = (((b >> 52) & 0x7ff) as i64 - 1023 + 16383) as u128;
    let frac = ((b & ((1u64 << 52) - 1)) as u128) << 60;
    ((sign << 127) | (exp << 112) | frac).to_le_bytes()
}

#[test]
fn long_double_kernels() {
    let v = |xs: &[f64]| xs.iter().map(|&x| ld(x)).collect::<Vec<_>>();
    assert_eq!(reduce(SUM, LONG_DOUBLE, &v(&[1.5, -2.0]), &v(&[2.25, 0.5])), v(&[3.75, -1.5]));
    assert_eq!(reduce(PROD, LONG_DOUBLE, &v(&[1.5, -2.0]), &v(&[2.0, 0.5])), v(&[3.0, -1.0]));
    assert_eq!(reduce(MAX, LONG_DOUBLE, &v(&[1.5, -2.0]), &v(&[2.0, 0.5])), v(&[2.0, 0.5]));
    assert_eq!(reduce(MIN, LONG_DOUBLE, &v(&[1.5, -2.0]), &v(&[2.0, 0.5])), v(&[1.5, -2.0]));
    // 1 + 2^-60 is exact in 64-bit mantissas and not in doubles: the C kernel really is 80-bit.
    let mut tiny = ld(1.0);
    tiny[..8].copy_from_slice(&((1u64 << 63) | (1 << 3)).to_le_bytes());
    let mut small = [0u8; 16];
    small[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
    small[8..10].copy_from_slice(&(16383u16 - 60).to_le_bytes());
    assert_eq!(reduce(SUM, LONG_DOUBLE, &[small], &[ld(1.0)]), [tiny]);
    // long double _Complex: (1+2i)(3-i) = 5+5i
    let c = |re: f64, im: f64| [ld(re), ld(im)];
    for dt in [Basic::CLongDoubleComplex, Basic::CxxLongDoubleComplex] {
        assert_eq!(reduce(SUM, dt, &[c(1.0, 2.0)], &[c(3.0, -1.0)]), [c(4.0, 1.0)]);
        assert_eq!(reduce(PROD, dt, &[c(1.0, 2.0)], &[c(3.0, -1.0)]), [c(5.0, 5.0)]);
    }
}

/// MPI_LONG_DOUBLE_INT: a 16-byte long double, an int, 12 bytes of padding.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
struct LdInt {
    v: [u8; 16],
    i: i32,
    pad: [u8; 12],
}

#[test]
fn long_double_int_minloc_maxloc() {
    let p = |v: f64, i: i32| LdInt { v: ld(v), i, pad: [0; 12] };
    assert_eq!(std::mem::size_of::<LdInt>(), 32);
    assert_eq!(reduce(MINLOC, LONG_DOUBLE_INT, &[p(1.0, 3), p(2.0, 0), p(7.0, 6)], &[p(2.0, 1), p(1.0, 4), p(7.0, 1)]), [p(1.0, 3), p(1.0, 4), p(7.0, 1)]);
    assert_eq!(reduce(MAXLOC, LONG_DOUBLE_INT, &[p(1.0, 3), p(2.0, 0), p(7.0, 1)], &[p(2.0, 1), p(1.0, 4), p(7.0, 6)]), [p(2.0, 1), p(2.0, 0), p(7.0, 1)]);
}

#[test]
fn quad_and_half_kernels() {
    let q = |xs: &[f64]| xs.iter().map(|&x| f128(x)).collect::<Vec<_>>();
    assert_eq!(reduce(SUM, Basic::Real16, &q(&[1.5, -2.0]), &q(&[2.25, 0.5])), q(&[3.75, -1.5]));
    assert_eq!(reduce(PROD, Basic::Real16, &q(&[1.5]), &q(&[-2.0])), q(&[-3.0]));
    assert_eq!(reduce(MAX, Basic::Real16, &q(&[1.5, -2.0]), &q(&[2.0, 0.5])), q(&[2.0, 0.5]));
    assert_eq!(reduce(MIN, Basic::Real16, &q(&[1.5, -2.0]), &q(&[2.0, 0.5])), q(&[1.5, -2.0]));
    let c = |re: f64, im: f64| [f128(re), f128(im)];
    assert_eq!(reduce(PROD, Basic::Complex32, &[c(1.0, 2.0)], &[c(3.0, -1.0)]), [c(5.0, 5.0)]);
    assert_eq!(reduce(SUM, Basic::Complex32, &[c(1.0, 2.0)], &[c(3.0, -1.0)]), [c(4.0, 1.0)]);
    // _Float16: 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 0.5 = 0x3800, -2.0 = 0xc000
    let h = Basic::CFloat16;
    assert_eq!(reduce(SUM, h, &[0x3c00u16, 0x3800], &[0x4000, 0x3800]), [0x4200, 0x3c00]);
    assert_eq!(reduce(PROD, h, &[0x4200u16], &[0x3800]), [0x3e00]);
    assert_eq!(reduce(MAX, h, &[0xc000u16, 0x3c00], &[0x3800, 0x3800]), [0x3800, 0x3c00]);
    assert_eq!(reduce(MIN, h, &[0xc000u16, 0x3c00], &[0x3800, 0x3800]), [0xc000, 0x3800]);
}

#[test]
fn compare_and_swap_types() {
    for dt in [INT, C_BOOL, Basic::CxxBool, LOGICAL, BYTE, CHAR, INTEGER, Basic::Aint, UINT64] {
        assert!(compare_and_swap_allowed(dt), "{dt:?}");
    }
    for dt in [DOUBLE, LONG_DOUBLE, DOUBLE_INT, C_DOUBLE_COMPLEX, Basic::Wchar, Basic::Packed] {
        assert!(!compare_and_swap_allowed(dt), "{dt:?}");
    }
}

#[test]
fn every_allowed_combination_has_a_kernel() {
    for op in ALL_OPS {
        for &(dt, _, _) in TYPES {
            if let Err(e) = Reduction::new(op, dt) {
                assert_eq!(e.class, ErrorClass::Op, "op {op:?} dt {dt:?}: {}", e.msg);
            }
        }
    }
}

#[test]
fn types_are_in_basic_order() {
    for (i, t) in TYPES.iter().enumerate() {
        assert_eq!(t.0 as usize, i, "TYPES is not in Basic's order at {:?}", t.0);
    }
    assert_eq!(TYPES.len(), Basic::all().count());
}
