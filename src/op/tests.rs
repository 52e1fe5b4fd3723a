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
    assert_eq!(class(SUM, CHAR), Some(ErrorClass::Op));
    assert_eq!(class(SUM, LOGICAL), Some(ErrorClass::Op));
    assert_eq!(class(MINLOC, DOUBLE), Some(ErrorClass::Op));
    assert_eq!(class(SUM, DOUBLE_INT), Some(ErrorClass::Op));
    let e = Reduction::new(BAND, DOUBLE).unwrap_err();
    assert!(e.msg.contains("MPI_BAND") && e.msg.contains("MPI_DOUBLE"), "{}", e.msg);
    for dt in [LONG_DOUBLE, LONG_DOUBLE_INT] {
        let op = if dt == LONG_DOUBLE { SUM } else { MAXLOC };
        let e = Reduction::new(op, dt).unwrap_err();
        assert_eq!(e.class, ErrorClass::Op);
        assert!(e.msg.contains("MPI_LONG_DOUBLE reductions are not supported yet"), "{}", e.msg);
    }
    assert_eq!(class(REPLACE, LONG_DOUBLE), None);
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
