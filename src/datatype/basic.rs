//! The predefined datatypes of MPI 4.1 (section 3.2.2, annex A.1) that hold data, as the engine
//! names them: their standard names and their sizes on this platform (x86-64 LP64). Each ABI maps
//! its handles to them (`abi::datatypes` for MPICH's).

/// A predefined datatype that holds data (not the MPI_LB / MPI_UB markers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Basic {
    Char,
    UnsignedChar,
    Short,
    UnsignedShort,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    Float,
    Double,
    LongDouble,
    Byte,
    Wchar,
    Packed,
    TwoInt,
    SignedChar,
    UnsignedLongLong,
    Character,
    Integer,
    Real,
    Logical,
    Complex,
    DoublePrecision,
    TwoInteger,
    TwoReal,
    DoubleComplex,
    TwoDoublePrecision,
    Real4,
    Complex8,
    Real8,
    Complex16,
    Real16,
    Complex32,
    Integer1,
    Integer2,
    Integer4,
    Integer8,
    CxxBool,
    CxxFloatComplex,
    CxxDoubleComplex,
    CxxLongDoubleComplex,
    Int8T,
    Int16T,
    Int32T,
    Int64T,
    Uint8T,
    Uint16T,
    Uint32T,
    Uint64T,
    CBool,
    CFloatComplex,
    CDoubleComplex,
    CLongDoubleComplex,
    Aint,
    Offset,
    Count,
    CFloat16,
    FloatInt,
    DoubleInt,
    LongInt,
    ShortInt,
    LongDoubleInt,
    Logical1,
    Logical2,
    Logical4,
    Logical8,
}

/// (type, name (MPICH's: MPI_LONG_LONG_INT, MPI_C_COMPLEX for the aliases), size in bytes) of every `Basic`, in declaration order (so a type's entry
/// is at its discriminant: lookups are an index, on every reduction's path).
const TABLE: &[(Basic, &str, usize)] = &[
    (Basic::Char, "MPI_CHAR", 1),
    (Basic::UnsignedChar, "MPI_UNSIGNED_CHAR", 1),
    (Basic::Short, "MPI_SHORT", 2),
    (Basic::UnsignedShort, "MPI_UNSIGNED_SHORT", 2),
    (Basic::Int, "MPI_INT", 4),
    (Basic::Unsigned, "MPI_UNSIGNED", 4),
    (Basic::Long, "MPI_LONG", 8),
    (Basic::UnsignedLong, "MPI_UNSIGNED_LONG", 8),
    (Basic::LongLong, "MPI_LONG_LONG_INT", 8),
    (Basic::Float, "MPI_FLOAT", 4),
    (Basic::Double, "MPI_DOUBLE", 8),
    (Basic::LongDouble, "MPI_LONG_DOUBLE", 16),
    (Basic::Byte, "MPI_BYTE", 1),
    (Basic::Wchar, "MPI_WCHAR", 4),
    (Basic::Packed, "MPI_PACKED", 1),
    (Basic::TwoInt, "MPI_2INT", 8),
    (Basic::SignedChar, "MPI_SIGNED_CHAR", 1),
    (Basic::UnsignedLongLong, "MPI_UNSIGNED_LONG_LONG", 8),
    (Basic::Character, "MPI_CHARACTER", 1),
    (Basic::Integer, "MPI_INTEGER", 4),
    (Basic::Real, "MPI_REAL", 4),
    (Basic::Logical, "MPI_LOGICAL", 4),
    (Basic::Complex, "MPI_COMPLEX", 8),
    (Basic::DoublePrecision, "MPI_DOUBLE_PRECISION", 8),
    (Basic::TwoInteger, "MPI_2INTEGER", 8),
    (Basic::TwoReal, "MPI_2REAL", 8),
    (Basic::DoubleComplex, "MPI_DOUBLE_COMPLEX", 16),
    (Basic::TwoDoublePrecision, "MPI_2DOUBLE_PRECISION", 16),
    (Basic::Real4, "MPI_REAL4", 4),
    (Basic::Complex8, "MPI_COMPLEX8", 8),
    (Basic::Real8, "MPI_REAL8", 8),
    (Basic::Complex16, "MPI_COMPLEX16", 16),
    (Basic::Real16, "MPI_REAL16", 16),
    (Basic::Complex32, "MPI_COMPLEX32", 32),
    (Basic::Integer1, "MPI_INTEGER1", 1),
    (Basic::Integer2, "MPI_INTEGER2", 2),
    (Basic::Integer4, "MPI_INTEGER4", 4),
    (Basic::Integer8, "MPI_INTEGER8", 8),
    (Basic::CxxBool, "MPI_CXX_BOOL", 1),
    (Basic::CxxFloatComplex, "MPI_CXX_FLOAT_COMPLEX", 8),
    (Basic::CxxDoubleComplex, "MPI_CXX_DOUBLE_COMPLEX", 16),
    (Basic::CxxLongDoubleComplex, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32),
    (Basic::Int8T, "MPI_INT8_T", 1),
    (Basic::Int16T, "MPI_INT16_T", 2),
    (Basic::Int32T, "MPI_INT32_T", 4),
    (Basic::Int64T, "MPI_INT64_T", 8),
    (Basic::Uint8T, "MPI_UINT8_T", 1),
    (Basic::Uint16T, "MPI_UINT16_T", 2),
    (Basic::Uint32T, "MPI_UINT32_T", 4),
    (Basic::Uint64T, "MPI_UINT64_T", 8),
    (Basic::CBool, "MPI_C_BOOL", 1),
    (Basic::CFloatComplex, "MPI_C_COMPLEX", 8),
    (Basic::CDoubleComplex, "MPI_C_DOUBLE_COMPLEX", 16),
    (Basic::CLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX", 32),
    (Basic::Aint, "MPI_AINT", 8),
    (Basic::Offset, "MPI_OFFSET", 8),
    (Basic::Count, "MPI_COUNT", 8),
    (Basic::CFloat16, "MPIX_C_FLOAT16", 2),
    (Basic::FloatInt, "MPI_FLOAT_INT", 8),
    (Basic::DoubleInt, "MPI_DOUBLE_INT", 16),
    (Basic::LongInt, "MPI_LONG_INT", 16),
    (Basic::ShortInt, "MPI_SHORT_INT", 8),
    (Basic::LongDoubleInt, "MPI_LONG_DOUBLE_INT", 32),
    (Basic::Logical1, "MPI_LOGICAL1", 1),
    (Basic::Logical2, "MPI_LOGICAL2", 2),
    (Basic::Logical4, "MPI_LOGICAL4", 4),
    (Basic::Logical8, "MPI_LOGICAL8", 8),
];

impl Basic {
    /// Every predefined data type.
    pub fn all() -> impl Iterator<Item = Basic> {
        TABLE.iter().map(|t| t.0)
    }

    fn entry(self) -> &'static (Basic, &'static str, usize) {
        &TABLE[self as usize]
    }

    /// The standard's name, e.g. "MPI_INT".
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// Size in bytes of one element.
    pub fn size(self) -> usize {
        self.entry().2
    }
}

#[cfg(test)]
#[test]
fn table_lists_every_type_once() {
    for (i, t) in TABLE.iter().enumerate() {
        assert_eq!(t.0 as usize, i, "TABLE is not in declaration order at {:?}", t.0);
        assert!(t.2 > 0);
    }
    assert_eq!(Basic::Int.size(), 4);
    assert_eq!(Basic::DoubleInt.name(), "MPI_DOUBLE_INT");
}
