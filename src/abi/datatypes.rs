//! Predefined MPICH-ABI datatype handles and their sizes.
//!
//! A builtin datatype handle reads `0x4c00SSII`: SS is the size in bytes, II a unique index.
//! The five C pair types (`MPI_FLOAT_INT`...) are DIRECT handles `0x8c00000N` with fixed layouts.
use super::MPI_Datatype;
use crate::datatype::basic::Basic;

/// (handle, name) of every builtin datatype of MPICH 4.0.2's `mpi.h` (x86-64 LP64).
pub const BUILTIN: &[(MPI_Datatype, &str)] = &[
    (0x4c000101, "MPI_CHAR"),
    (0x4c000102, "MPI_UNSIGNED_CHAR"),
    (0x4c000203, "MPI_SHORT"),
    (0x4c000204, "MPI_UNSIGNED_SHORT"),
    (0x4c000405, "MPI_INT"),
    (0x4c000406, "MPI_UNSIGNED"),
    (0x4c000807, "MPI_LONG"),
    (0x4c000808, "MPI_UNSIGNED_LONG"),
    (0x4c000809, "MPI_LONG_LONG_INT"), // MPI_LONG_LONG is an alias: MPICH names it so
    (0x4c00040a, "MPI_FLOAT"),
    (0x4c00080b, "MPI_DOUBLE"),
    (0x4c00100c, "MPI_LONG_DOUBLE"),
    (0x4c00010d, "MPI_BYTE"),
    (0x4c00040e, "MPI_WCHAR"),
    (0x4c00010f, "MPI_PACKED"),
    (0x4c000010, "MPI_LB"),
    (0x4c000011, "MPI_UB"),
    (0x4c000816, "MPI_2INT"),
    (0x4c000118, "MPI_SIGNED_CHAR"),
    (0x4c000819, "MPI_UNSIGNED_LONG_LONG"),
    (0x4c00011a, "MPI_CHARACTER"),
    (0x4c00041b, "MPI_INTEGER"),
    (0x4c00041c, "MPI_REAL"),
    (0x4c00041d, "MPI_LOGICAL"),
    (0x4c00081e, "MPI_COMPLEX"),
    (0x4c00081f, "MPI_DOUBLE_PRECISION"),
    (0x4c000820, "MPI_2INTEGER"),
    (0x4c000821, "MPI_2REAL"),
    (0x4c001022, "MPI_DOUBLE_COMPLEX"),
    (0x4c001023, "MPI_2DOUBLE_PRECISION"),
    (0x4c000427, "MPI_REAL4"),
    (0x4c000828, "MPI_COMPLEX8"),
    (0x4c000829, "MPI_REAL8"),
    (0x4c00102a, "MPI_COMPLEX16"),
    (0x4c00102b, "MPI_REAL16"),
    (0x4c00202c, "MPI_COMPLEX32"),
    (0x4c00012d, "MPI_INTEGER1"),
    (0x4c00022f, "MPI_INTEGER2"),
    (0x4c000430, "MPI_INTEGER4"),
    (0x4c000831, "MPI_INTEGER8"),
    (0x4c000133, "MPI_CXX_BOOL"),
    (0x4c000834, "MPI_CXX_FLOAT_COMPLEX"),
    (0x4c001035, "MPI_CXX_DOUBLE_COMPLEX"),
    (0x4c002036, "MPI_CXX_LONG_DOUBLE_COMPLEX"),
    (0x4c000137, "MPI_INT8_T"),
    (0x4c000238, "MPI_INT16_T"),
    (0x4c000439, "MPI_INT32_T"),
    (0x4c00083a, "MPI_INT64_T"),
    (0x4c00013b, "MPI_UINT8_T"),
    (0x4c00023c, "MPI_UINT16_T"),
    (0x4c00043d, "MPI_UINT32_T"),
    (0x4c00083e, "MPI_UINT64_T"),
    (0x4c00013f, "MPI_C_BOOL"),
    (0x4c000840, "MPI_C_COMPLEX"), // MPI_C_FLOAT_COMPLEX is an alias: MPICH names it so
    (0x4c001041, "MPI_C_DOUBLE_COMPLEX"),
    (0x4c002042, "MPI_C_LONG_DOUBLE_COMPLEX"),
    (0x4c000843, "MPI_AINT"),
    (0x4c000844, "MPI_OFFSET"),
    (0x4c000845, "MPI_COUNT"),
    (0x4c000246, "MPIX_C_FLOAT16"),
    // MPI 5.0's Fortran LOGICAL kinds: oxmpi's own handles (MPICH 4.0 has none), which the Open
    // MPI and MPI-5 ABI layers map theirs to.
    (0x4c000147, "MPI_LOGICAL1"),
    (0x4c000248, "MPI_LOGICAL2"),
    (0x4c000449, "MPI_LOGICAL4"),
    (0x4c00084a, "MPI_LOGICAL8"),
];

/// (handle, name, size) of the C pair types used with MINLOC/MAXLOC (compiler padding included).
pub const PAIRS: &[(MPI_Datatype, &str, usize)] = &[
    (0x8c000000u32 as i32, "MPI_FLOAT_INT", 8),
    (0x8c000001u32 as i32, "MPI_DOUBLE_INT", 16),
    (0x8c000002u32 as i32, "MPI_LONG_INT", 16),
    (0x8c000003u32 as i32, "MPI_SHORT_INT", 8),
    (0x8c000004u32 as i32, "MPI_LONG_DOUBLE_INT", 32),
];

pub const MPI_BYTE: MPI_Datatype = 0x4c00010d;
pub const MPI_INT: MPI_Datatype = 0x4c000405;
pub const MPI_CHAR: MPI_Datatype = 0x4c000101;
pub const MPI_DOUBLE: MPI_Datatype = 0x4c00080b;
pub const MPI_PACKED: MPI_Datatype = 0x4c00010f;

/// Builtin handles indexed by their low byte (the unique index), 0 where there is none: makes the
/// validity check of the hot path one load and one compare instead of a search.
const BY_INDEX: [MPI_Datatype; 256] = {
    let mut t = [0; 256];
    let mut i = 0;
    while i < BUILTIN.len() {
        t[(BUILTIN[i].0 & 0xff) as usize] = BUILTIN[i].0;
        i += 1;
    }
    t
};

/// Size in bytes of a predefined datatype, or None if `h` is not a predefined datatype handle.
#[inline]
pub fn predefined_size(h: MPI_Datatype) -> Option<usize> {
    if BY_INDEX[(h & 0xff) as usize] == h && h != 0 {
        return Some(((h as u32 >> 8) & 0xff) as usize);
    }
    PAIRS.iter().find(|p| p.0 == h).map(|p| p.2)
}

pub fn predefined_name(h: MPI_Datatype) -> Option<&'static str> {
    BUILTIN.iter().find(|b| b.0 == h).map(|b| b.1).or_else(|| PAIRS.iter().find(|p| p.0 == h).map(|p| p.1))
}

/// The engine's name of every predefined data type's MPICH handle.
pub const BASIC: &[(MPI_Datatype, Basic)] = &[
    (0x4c000101, Basic::Char),
    (0x4c000102, Basic::UnsignedChar),
    (0x4c000203, Basic::Short),
    (0x4c000204, Basic::UnsignedShort),
    (0x4c000405, Basic::Int),
    (0x4c000406, Basic::Unsigned),
    (0x4c000807, Basic::Long),
    (0x4c000808, Basic::UnsignedLong),
    (0x4c000809, Basic::LongLong),
    (0x4c00040a, Basic::Float),
    (0x4c00080b, Basic::Double),
    (0x4c00100c, Basic::LongDouble),
    (0x4c00010d, Basic::Byte),
    (0x4c00040e, Basic::Wchar),
    (0x4c00010f, Basic::Packed),
    (0x4c000816, Basic::TwoInt),
    (0x4c000118, Basic::SignedChar),
    (0x4c000819, Basic::UnsignedLongLong),
    (0x4c00011a, Basic::Character),
    (0x4c00041b, Basic::Integer),
    (0x4c00041c, Basic::Real),
    (0x4c00041d, Basic::Logical),
    (0x4c00081e, Basic::Complex),
    (0x4c00081f, Basic::DoublePrecision),
    (0x4c000820, Basic::TwoInteger),
    (0x4c000821, Basic::TwoReal),
    (0x4c001022, Basic::DoubleComplex),
    (0x4c001023, Basic::TwoDoublePrecision),
    (0x4c000427, Basic::Real4),
    (0x4c000828, Basic::Complex8),
    (0x4c000829, Basic::Real8),
    (0x4c00102a, Basic::Complex16),
    (0x4c00102b, Basic::Real16),
    (0x4c00202c, Basic::Complex32),
    (0x4c00012d, Basic::Integer1),
    (0x4c00022f, Basic::Integer2),
    (0x4c000430, Basic::Integer4),
    (0x4c000831, Basic::Integer8),
    (0x4c000133, Basic::CxxBool),
    (0x4c000834, Basic::CxxFloatComplex),
    (0x4c001035, Basic::CxxDoubleComplex),
    (0x4c002036, Basic::CxxLongDoubleComplex),
    (0x4c000137, Basic::Int8T),
    (0x4c000238, Basic::Int16T),
    (0x4c000439, Basic::Int32T),
    (0x4c00083a, Basic::Int64T),
    (0x4c00013b, Basic::Uint8T),
    (0x4c00023c, Basic::Uint16T),
    (0x4c00043d, Basic::Uint32T),
    (0x4c00083e, Basic::Uint64T),
    (0x4c00013f, Basic::CBool),
    (0x4c000840, Basic::CFloatComplex),
    (0x4c001041, Basic::CDoubleComplex),
    (0x4c002042, Basic::CLongDoubleComplex),
    (0x4c000843, Basic::Aint),
    (0x4c000844, Basic::Offset),
    (0x4c000845, Basic::Count),
    (0x4c000246, Basic::CFloat16),
    (0x8c000000u32 as i32, Basic::FloatInt),
    (0x8c000001u32 as i32, Basic::DoubleInt),
    (0x8c000002u32 as i32, Basic::LongInt),
    (0x8c000003u32 as i32, Basic::ShortInt),
    (0x8c000004u32 as i32, Basic::LongDoubleInt),
    (0x4c000147, Basic::Logical1),
    (0x4c000248, Basic::Logical2),
    (0x4c000449, Basic::Logical4),
    (0x4c00084a, Basic::Logical8),
];

/// `BASIC`'s builtin handles (`0x4c00SSII`) by their index byte `II`.
static BASIC_BY_INDEX: [Option<Basic>; 256] = {
    let mut t = [None; 256];
    let mut i = 0;
    while i < BASIC.len() {
        let (h, b) = BASIC[i];
        if (h as u32) >> 24 == 0x4c {
            t[(h as u32 & 0xff) as usize] = Some(b);
        }
        i += 1;
    }
    t
};

/// The predefined data type behind MPICH handle `h`, if it is one (an index for builtin
/// handles: this is on every reduction's path).
pub fn basic(h: MPI_Datatype) -> Option<Basic> {
    if (h as u32) >> 24 == 0x4c {
        return BASIC_BY_INDEX[(h as u32 & 0xff) as usize].filter(|&b| basic_handle(b) == h);
    }
    BASIC.iter().find(|e| e.0 == h).map(|e| e.1)
}

/// The MPICH handle of `b` (`BASIC` is in `Basic`'s declaration order).
pub fn basic_handle(b: Basic) -> MPI_Datatype {
    BASIC[b as usize].0
}

#[cfg(test)]
mod basic_tests {
    use super::*;
    #[test]
    fn every_basic_type_has_its_mpich_handle_name_and_size() {
        for (i, &(_, b)) in BASIC.iter().enumerate() {
            assert_eq!(b as usize, i, "BASIC is not in Basic's order at {b:?}");
        }
        assert_eq!(basic(0x4c0004ff), None);
        for b in Basic::all() {
            let h = basic_handle(b);
            assert_eq!(basic(h), Some(b));
            assert_eq!(predefined_name(h), Some(b.name()), "{b:?}");
            assert_eq!(predefined_size(h), Some(b.size()), "{b:?}");
        }
    }
}
