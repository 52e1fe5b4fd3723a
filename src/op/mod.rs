//! Reduction operations: which (op, datatype) pairs the MPI standard allows for the predefined
//! ops, and the kernel that computes each (see `kernels`); user-defined ops (MPI_Op_create, see
//! `user`) call the user's function instead.
//!
//! The allowed combinations follow MPI 4.1 section 6.9.2: MAX/MIN on integers and reals; SUM/PROD
//! also on complex; LAND/LOR/LXOR on C integers and logicals; BAND/BOR/BXOR on integers and
//! MPI_BYTE; MINLOC/MAXLOC on the value/index pair types. MPI_REPLACE and MPI_NO_OP apply to any
//! predefined type (they belong to one-sided accumulate; the collectives refuse them).
//!
//! Beyond the standard's lists, like MPICH (`MPIR_OP_TYPE_GROUP_C_INTEGER_EXTRA` and
//! `..._FORTRAN_INTEGER_EXTRA` of its op utilities) and Open MPI, MPI_CHAR and MPI_CHARACTER
//! reduce as C integers (a signed `char` on x86-64, as MPICH computes them): OSU's collective
//! benchmarks reduce MPI_CHAR with MPI_SUM. MPI_WCHAR stays outside every op, as in MPICH.
pub mod kernels;
pub mod user;

use crate::datatype::basic::Basic;
use crate::error::{err, MpiResult, ErrorClass};
use kernels::{Complex, Kernel};
use user::{Caller, UserOp};

/// A predefined reduction operation (MPI 4.1 section 6.9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Max = 1,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Minloc,
    Maxloc,
    Replace,
    NoOp,
}

/// Every predefined op.
pub const ALL_OPS: [Op; 14] = [Op::Max, Op::Min, Op::Sum, Op::Prod, Op::Land, Op::Band, Op::Lor, Op::Bor, Op::Lxor, Op::Bxor, Op::Minloc, Op::Maxloc, Op::Replace, Op::NoOp];
const NAMES: [&str; 14] = ["MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"];

impl Op {
    pub fn name(self) -> &'static str {
        NAMES[self as usize - 1]
    }

    /// Whether the op is commutative, as MPI_Op_commutative reports it: all predefined ops except
    /// MPI_REPLACE and MPI_NO_OP, whose result depends on which operand comes last (MPICH agrees).
    pub fn commutative(self) -> bool {
        !matches!(self, Op::Replace | Op::NoOp)
    }
}

/// Element representation of a predefined datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    C32,
    C64,
    /// Pair types: value/index layouts.
    FloatInt,
    DoubleInt,
    LongInt,
    ShortInt,
    TwoInt,
    TwoReal,
    TwoDouble,
    /// Types without Rust arithmetic, computed by the C kernels (`kernels::c`): x87 80-bit
    /// `long double` (16 bytes), its complex, `{long double, int}`, IEEE quad `__float128` (the
    /// Fortran REAL(16) of gfortran on x86-64), its complex, and half `_Float16`.
    LongDouble,
    LongDoubleComplex,
    LongDoubleInt,
    F128,
    C128,
    F16,
    /// Types no arithmetic op applies to (MPI_WCHAR, MPI_PACKED).
    Opaque,
}

/// The standard's groups of basic datatypes (MPI 4.1 section 6.9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    CInteger,
    FortranInteger,
    /// Multi-language types (MPI_AINT, MPI_OFFSET, MPI_COUNT): both C and Fortran integers.
    MultiInteger,
    Floating,
    Logical,
    Complex,
    Byte,
    Pair,
    None,
}

/// (type, element, group) of every predefined data type, in `Basic`'s declaration order (a
/// type's entry is at its discriminant).
const TYPES: &[(Basic, Elem, Group)] = {
    use Elem::*;
    use Group::*;
    &[
        (Basic::Char, I8, CInteger),
        (Basic::UnsignedChar, U8, CInteger),
        (Basic::Short, I16, CInteger),
        (Basic::UnsignedShort, U16, CInteger),
        (Basic::Int, I32, CInteger),
        (Basic::Unsigned, U32, CInteger),
        (Basic::Long, I64, CInteger),
        (Basic::UnsignedLong, U64, CInteger),
        (Basic::LongLong, I64, CInteger),
        (Basic::Float, F32, Floating),
        (Basic::Double, F64, Floating),
        (Basic::LongDouble, LongDouble, Floating),
        (Basic::Byte, U8, Byte),
        (Basic::Wchar, Opaque, None),
        (Basic::Packed, Opaque, None),
        (Basic::TwoInt, TwoInt, Pair),
        (Basic::SignedChar, I8, CInteger),
        (Basic::UnsignedLongLong, U64, CInteger),
        (Basic::Character, I8, CInteger),
        (Basic::Integer, I32, FortranInteger),
        (Basic::Real, F32, Floating),
        (Basic::Logical, I32, Logical),
        (Basic::Complex, C32, Complex),
        (Basic::DoublePrecision, F64, Floating),
        (Basic::TwoInteger, TwoInt, Pair),
        (Basic::TwoReal, TwoReal, Pair),
        (Basic::DoubleComplex, C64, Complex),
        (Basic::TwoDoublePrecision, TwoDouble, Pair),
        (Basic::Real4, F32, Floating),
        (Basic::Complex8, C32, Complex),
        (Basic::Real8, F64, Floating),
        (Basic::Complex16, C64, Complex),
        (Basic::Real16, F128, Floating),
        (Basic::Complex32, C128, Complex),
        (Basic::Integer1, I8, FortranInteger),
        (Basic::Integer2, I16, FortranInteger),
        (Basic::Integer4, I32, FortranInteger),
        (Basic::Integer8, I64, FortranInteger),
        (Basic::CxxBool, U8, Logical),
        (Basic::CxxFloatComplex, C32, Complex),
        (Basic::CxxDoubleComplex, C64, Complex),
        (Basic::CxxLongDoubleComplex, LongDoubleComplex, Complex),
        (Basic::Int8T, I8, CInteger),
        (Basic::Int16T, I16, CInteger),
        (Basic::Int32T, I32, CInteger),
        (Basic::Int64T, I64, CInteger),
        (Basic::Uint8T, U8, CInteger),
        (Basic::Uint16T, U16, CInteger),
        (Basic::Uint32T, U32, CInteger),
        (Basic::Uint64T, U64, CInteger),
        (Basic::CBool, U8, Logical),
        (Basic::CFloatComplex, C32, Complex),
        (Basic::CDoubleComplex, C64, Complex),
        (Basic::CLongDoubleComplex, LongDoubleComplex, Complex),
        (Basic::Aint, I64, MultiInteger),
        (Basic::Offset, I64, MultiInteger),
        (Basic::Count, I64, MultiInteger),
        (Basic::CFloat16, F16, Floating),
        (Basic::FloatInt, FloatInt, Pair),
        (Basic::DoubleInt, DoubleInt, Pair),
        (Basic::LongInt, LongInt, Pair),
        (Basic::ShortInt, ShortInt, Pair),
        (Basic::LongDoubleInt, LongDoubleInt, Pair),
        (Basic::Logical1, I8, Logical),
        (Basic::Logical2, I16, Logical),
        (Basic::Logical4, I32, Logical),
        (Basic::Logical8, I64, Logical),
    ]
};

/// Whether the standard allows `op` on datatypes of group `g`.
fn allowed(op: Op, g: Group) -> bool {
    use Group::*;
    match op {
        Op::Max | Op::Min => matches!(g, CInteger | FortranInteger | MultiInteger | Floating),
        Op::Sum | Op::Prod => matches!(g, CInteger | FortranInteger | MultiInteger | Floating | Complex),
        Op::Land | Op::Lor | Op::Lxor => matches!(g, CInteger | MultiInteger | Logical),
        Op::Band | Op::Bor | Op::Bxor => matches!(g, CInteger | FortranInteger | MultiInteger | Byte),
        Op::Minloc | Op::Maxloc => g == Pair,
        Op::Replace | Op::NoOp => true,
    }
}

/// Whether MPI_Compare_and_swap applies to `dt`: MPI 4.1 section 12.3.5 allows C integer, Fortran
/// integer, logical, multi-language and byte types (so MPI_C_BOOL and MPI_LOGICAL, not pairs or
/// reals).
pub fn compare_and_swap_allowed(dt: Basic) -> bool {
    let (t, elem, group) = TYPES[dt as usize];
    debug_assert_eq!(t, dt);
    elem != Elem::Opaque && matches!(group, Group::CInteger | Group::FortranInteger | Group::MultiInteger | Group::Logical | Group::Byte)
}

/// A checked (op, datatype) pair, ready to combine buffers.
#[derive(Clone, Copy, Debug)]
pub struct Reduction {
    /// Size in bytes of one element as the algorithms see it: the predefined type's size, or for
    /// a user op on a derived datatype the datatype's extent (its buffers keep the native layout).
    pub size: usize,
    func: Func,
}

#[derive(Clone, Copy, Debug)]
enum Func {
    Predefined {
        op: Op,
        kernel: Kernel,
        /// Elements passed to the kernel per datatype element (the size for byte-wise kernels).
        scale: usize,
    },
    User {
        op: UserOp,
        /// The C boundary's way of calling `op.f`.
        caller: Caller,
        /// The application's datatype handle, opaque here: passed to the function as given.
        datatype: i32,
        /// The datatype's true lower bound: element data starts `lb` bytes after the address the
        /// function expects (the algorithms' buffers start at the first byte of data).
        lb: isize,
    },
}

/// Instantiates `$k::<T>` for the integer element `$e`.
macro_rules! int_kernel {
    ($e:expr, $k:ident) => {
        match $e {
            Elem::I8 => kernels::$k::<i8> as Kernel,
            Elem::I16 => kernels::$k::<i16>,
            Elem::I32 => kernels::$k::<i32>,
            Elem::I64 => kernels::$k::<i64>,
            Elem::U8 => kernels::$k::<u8>,
            Elem::U16 => kernels::$k::<u16>,
            Elem::U32 => kernels::$k::<u32>,
            Elem::U64 => kernels::$k::<u64>,
            _ => return None,
        }
    };
}

/// Instantiates `$k::<T>` for integer, real and (if `$complex`) complex elements.
macro_rules! arith_kernel {
    ($e:expr, $k:ident, complex) => {
        match $e {
            Elem::F32 => kernels::$k::<f32> as Kernel,
            Elem::F64 => kernels::$k::<f64>,
            Elem::C32 => kernels::$k::<Complex<f32>>,
            Elem::C64 => kernels::$k::<Complex<f64>>,
            e => int_kernel!(e, $k),
        }
    };
    ($e:expr, $k:ident) => {
        match $e {
            Elem::F32 => kernels::$k::<f32> as Kernel,
            Elem::F64 => kernels::$k::<f64>,
            e => int_kernel!(e, $k),
        }
    };
}

/// Instantiates `$k::<V, I>` for the pair element `$e`.
macro_rules! pair_kernel {
    ($e:expr, $k:ident) => {
        match $e {
            Elem::FloatInt => kernels::$k::<f32, i32> as Kernel,
            Elem::DoubleInt => kernels::$k::<f64, i32>,
            Elem::LongInt => kernels::$k::<i64, i32>,
            Elem::ShortInt => kernels::$k::<i16, i32>,
            Elem::TwoInt => kernels::$k::<i32, i32>,
            Elem::TwoReal => kernels::$k::<f32, f32>,
            Elem::TwoDouble => kernels::$k::<f64, f64>,
            _ => return None,
        }
    };
}

/// The C kernel of `op` on the elements without Rust arithmetic (`kernels::c`).
fn c_kernel(op: Op, e: Elem) -> Option<Kernel> {
    use kernels::c::*;
    use Elem::*;
    Some(match (op, e) {
        (Op::Sum, LongDouble) => ld_sum as Kernel,
        (Op::Prod, LongDouble) => ld_prod,
        (Op::Max, LongDouble) => ld_max,
        (Op::Min, LongDouble) => ld_min,
        (Op::Sum, LongDoubleComplex) => ldc_sum,
        (Op::Prod, LongDoubleComplex) => ldc_prod,
        (Op::Minloc, LongDoubleInt) => ld_int_minloc,
        (Op::Maxloc, LongDoubleInt) => ld_int_maxloc,
        (Op::Sum, F128) => f128_sum,
        (Op::Prod, F128) => f128_prod,
        (Op::Max, F128) => f128_max,
        (Op::Min, F128) => f128_min,
        (Op::Sum, C128) => f128c_sum,
        (Op::Prod, C128) => f128c_prod,
        (Op::Sum, F16) => f16_sum,
        (Op::Prod, F16) => f16_prod,
        (Op::Max, F16) => f16_max,
        (Op::Min, F16) => f16_min,
        _ => return None,
    })
}

/// The kernel of `op` on elements `e` (None only if the table and the kernels disagree).
fn kernel(op: Op, e: Elem) -> Option<(Kernel, bool)> {
    if let Some(k) = c_kernel(op, e) {
        return Some((k, false));
    }
    Some(match op {
        Op::Max => (arith_kernel!(e, max), false),
        Op::Min => (arith_kernel!(e, min), false),
        Op::Sum => (arith_kernel!(e, sum, complex), false),
        Op::Prod => (arith_kernel!(e, prod, complex), false),
        Op::Land => (int_kernel!(e, land), false),
        Op::Lor => (int_kernel!(e, lor), false),
        Op::Lxor => (int_kernel!(e, lxor), false),
        Op::Band => (int_kernel!(e, band), false),
        Op::Bor => (int_kernel!(e, bor), false),
        Op::Bxor => (int_kernel!(e, bxor), false),
        Op::Minloc => (pair_kernel!(e, minloc), false),
        Op::Maxloc => (pair_kernel!(e, maxloc), false),
        Op::Replace => (kernels::replace_bytes as Kernel, true),
        Op::NoOp => (kernels::no_op as Kernel, false),
    })
}

impl Reduction {
    /// Checks that predefined op `op` applies to `dt`. Errors (class Op): a combination the
    /// standard (or MPICH's extensions, see the module doc) does not allow.
    pub fn new(op: Op, dt: Basic) -> MpiResult<Reduction> {
        let (t, elem, group) = TYPES[dt as usize];
        debug_assert_eq!(t, dt);
        let size = dt.size();
        let tname = dt.name();
        if !allowed(op, group) {
            return Err(err(ErrorClass::Op, format!("{} is not defined on {tname} (MPI 4.1 section 6.9.2 lists the datatypes each predefined op applies to)", op.name())));
        }
        let (kernel, bytewise) = kernel(op, elem).ok_or_else(|| err(ErrorClass::Intern, format!("no kernel for {} on {tname}", op.name())))?;
        Ok(Reduction { size, func: Func::Predefined { op, kernel, scale: if bytewise { size } else { 1 } } })
    }

    /// A user-defined op, called through the C boundary's `caller`, on datatype handle `datatype`, whose elements are `size` bytes apart in
    /// the algorithms' buffers and whose data starts `lb` bytes after an element's address.
    pub fn user(op: UserOp, caller: Caller, datatype: i32, size: usize, lb: isize) -> Reduction {
        Reduction { size, func: Func::User { op, caller, datatype, lb } }
    }

    /// The predefined op, or None for a user-defined one.
    pub fn op(&self) -> Option<Op> {
        match self.func {
            Func::Predefined { op, .. } => Some(op),
            Func::User { .. } => None,
        }
    }

    /// Whether operands may be combined in any order; the algorithms keep rank order otherwise.
    pub fn commutative(&self) -> bool {
        match self.func {
            Func::Predefined { op, .. } => op.commutative(),
            Func::User { op, .. } => op.commutative,
        }
    }

    /// `inout[i] = in[i] op inout[i]` for `count` elements.
    ///
    /// # Safety
    /// `inp` must hold `count` elements (readable) and `inout` `count` elements (writable); they
    /// must not overlap unless they are the same buffer. A user function must not unwind.
    pub unsafe fn apply(&self, inp: *const u8, inout: *mut u8, count: usize) {
        match self.func {
            // SAFETY: the kernel matches the datatype checked in `new`; buffers per caller contract.
            Func::Predefined { kernel, scale, .. } => unsafe { kernel(inp, inout, count * scale) },
            Func::User { op, caller, datatype, lb } => {
                // The function addresses elements as the datatype places them: from `base - lb`.
                let (inp, inout) = (inp.wrapping_offset(-lb), inout.wrapping_offset(-lb));
                // SAFETY: per this function's contract.
                unsafe { caller(op.f, inp as *mut u8, inout, count, datatype, self.size) }
            }
        }
    }
}

#[cfg(test)]
mod tests;
