//! Reduction operations: which (op, datatype) pairs the MPI standard allows for the predefined
//! ops, and the kernel that computes each (see `kernels`); user-defined ops (MPI_Op_create, see
//! `user`) call the user's function instead.
//!
//! The allowed combinations follow MPI 4.1 section 6.9.2: MAX/MIN on integers and reals; SUM/PROD
//! also on complex; LAND/LOR/LXOR on C integers and logicals; BAND/BOR/BXOR on integers and
//! MPI_BYTE; MINLOC/MAXLOC on the value/index pair types. MPI_REPLACE and MPI_NO_OP apply to any
//! predefined type (they belong to one-sided accumulate; the collectives refuse them).
pub mod kernels;
pub mod user;

use crate::abi::datatypes::{predefined_name, predefined_size};
use crate::abi::{MPI_Count, MPI_Datatype, MPI_Op, MPI_ERR_OP, MPI_ERR_TYPE, MPI_OP_NULL};
use crate::error::{err, MpiResult};
use kernels::{Complex, Kernel};
use user::{UserFn, UserOp};

/// A predefined reduction operation; the discriminant is the low byte of the handle.
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

const OPS: [Op; 14] = [Op::Max, Op::Min, Op::Sum, Op::Prod, Op::Land, Op::Band, Op::Lor, Op::Bor, Op::Lxor, Op::Bxor, Op::Minloc, Op::Maxloc, Op::Replace, Op::NoOp];
const NAMES: [&str; 14] = ["MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"];

/// Handles of the predefined ops are `0x58000001..=0x5800000e` (MPICH ABI).
pub const OP_BASE: MPI_Op = 0x5800_0000;

impl Op {
    /// The predefined op behind handle `h`, or MPI_ERR_OP saying why there is none.
    pub fn from_handle(h: MPI_Op) -> MpiResult<Op> {
        let i = h.wrapping_sub(OP_BASE);
        if (1..=14).contains(&i) {
            return Ok(OPS[i as usize - 1]);
        }
        if h == MPI_OP_NULL {
            return Err(err(MPI_ERR_OP, "invalid reduction operation: MPI_OP_NULL"));
        }
        Err(err(MPI_ERR_OP, format!("invalid reduction operation 0x{:08x} (not a predefined op)", h as u32)))
    }

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
    /// Types with no Rust arithmetic (x87 80-bit long double, IEEE quad, half): never computed,
    /// so that no reduction silently returns wrong values.
    NoArith,
    /// Types no arithmetic op applies to (MPI_CHAR, MPI_WCHAR, MPI_PACKED, MPI_CHARACTER...).
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

/// (handle, element, group) of every predefined datatype.
const TYPES: &[(MPI_Datatype, Elem, Group)] = {
    use Elem::*;
    use Group::*;
    &[
        (0x4c000101, Opaque, None),                // MPI_CHAR
        (0x4c000102, U8, CInteger),                // MPI_UNSIGNED_CHAR
        (0x4c000203, I16, CInteger),               // MPI_SHORT
        (0x4c000204, U16, CInteger),               // MPI_UNSIGNED_SHORT
        (0x4c000405, I32, CInteger),               // MPI_INT
        (0x4c000406, U32, CInteger),               // MPI_UNSIGNED
        (0x4c000807, I64, CInteger),               // MPI_LONG
        (0x4c000808, U64, CInteger),               // MPI_UNSIGNED_LONG
        (0x4c000809, I64, CInteger),               // MPI_LONG_LONG
        (0x4c00040a, F32, Floating),               // MPI_FLOAT
        (0x4c00080b, F64, Floating),               // MPI_DOUBLE
        (0x4c00100c, NoArith, Floating),           // MPI_LONG_DOUBLE
        (0x4c00010d, U8, Byte),                    // MPI_BYTE
        (0x4c00040e, Opaque, None),                // MPI_WCHAR
        (0x4c00010f, Opaque, None),                // MPI_PACKED
        (0x4c000816, TwoInt, Pair),                // MPI_2INT
        (0x4c000118, I8, CInteger),                // MPI_SIGNED_CHAR
        (0x4c000819, U64, CInteger),               // MPI_UNSIGNED_LONG_LONG
        (0x4c00011a, Opaque, None),                // MPI_CHARACTER
        (0x4c00041b, I32, FortranInteger),         // MPI_INTEGER
        (0x4c00041c, F32, Floating),               // MPI_REAL
        (0x4c00041d, I32, Logical),                // MPI_LOGICAL
        (0x4c00081e, C32, Complex),                // MPI_COMPLEX
        (0x4c00081f, F64, Floating),               // MPI_DOUBLE_PRECISION
        (0x4c000820, TwoInt, Pair),                // MPI_2INTEGER
        (0x4c000821, TwoReal, Pair),               // MPI_2REAL
        (0x4c001022, C64, Complex),                // MPI_DOUBLE_COMPLEX
        (0x4c001023, TwoDouble, Pair),             // MPI_2DOUBLE_PRECISION
        (0x4c000427, F32, Floating),               // MPI_REAL4
        (0x4c000828, C32, Complex),                // MPI_COMPLEX8
        (0x4c000829, F64, Floating),               // MPI_REAL8
        (0x4c00102a, C64, Complex),                // MPI_COMPLEX16
        (0x4c00102b, NoArith, Floating),           // MPI_REAL16
        (0x4c00202c, NoArith, Complex),            // MPI_COMPLEX32
        (0x4c00012d, I8, FortranInteger),          // MPI_INTEGER1
        (0x4c00022f, I16, FortranInteger),         // MPI_INTEGER2
        (0x4c000430, I32, FortranInteger),         // MPI_INTEGER4
        (0x4c000831, I64, FortranInteger),         // MPI_INTEGER8
        (0x4c000133, U8, Logical),                 // MPI_CXX_BOOL
        (0x4c000834, C32, Complex),                // MPI_CXX_FLOAT_COMPLEX
        (0x4c001035, C64, Complex),                // MPI_CXX_DOUBLE_COMPLEX
        (0x4c002036, NoArith, Complex),            // MPI_CXX_LONG_DOUBLE_COMPLEX
        (0x4c000137, I8, CInteger),                // MPI_INT8_T
        (0x4c000238, I16, CInteger),               // MPI_INT16_T
        (0x4c000439, I32, CInteger),               // MPI_INT32_T
        (0x4c00083a, I64, CInteger),               // MPI_INT64_T
        (0x4c00013b, U8, CInteger),                // MPI_UINT8_T
        (0x4c00023c, U16, CInteger),               // MPI_UINT16_T
        (0x4c00043d, U32, CInteger),               // MPI_UINT32_T
        (0x4c00083e, U64, CInteger),               // MPI_UINT64_T
        (0x4c00013f, U8, Logical),                 // MPI_C_BOOL
        (0x4c000840, C32, Complex),                // MPI_C_FLOAT_COMPLEX
        (0x4c001041, C64, Complex),                // MPI_C_DOUBLE_COMPLEX
        (0x4c002042, NoArith, Complex),            // MPI_C_LONG_DOUBLE_COMPLEX
        (0x4c000843, I64, MultiInteger),           // MPI_AINT
        (0x4c000844, I64, MultiInteger),           // MPI_OFFSET
        (0x4c000845, I64, MultiInteger),           // MPI_COUNT
        (0x4c000246, NoArith, Floating),           // MPIX_C_FLOAT16
        (0x8c000000u32 as i32, FloatInt, Pair),    // MPI_FLOAT_INT
        (0x8c000001u32 as i32, DoubleInt, Pair),   // MPI_DOUBLE_INT
        (0x8c000002u32 as i32, LongInt, Pair),     // MPI_LONG_INT
        (0x8c000003u32 as i32, ShortInt, Pair),    // MPI_SHORT_INT
        (0x8c000004u32 as i32, NoArith, Pair),     // MPI_LONG_DOUBLE_INT
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
        /// The user's datatype handle, passed to the function as given.
        datatype: MPI_Datatype,
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

/// The kernel of `op` on elements `e` (None only if the table and the kernels disagree).
fn kernel(op: Op, e: Elem) -> Option<(Kernel, bool)> {
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
    /// Checks that `op` is a predefined op that applies to `dt`. Errors: MPI_ERR_OP for an
    /// invalid op, a combination the standard does not allow, or a type oxmpi cannot compute;
    /// MPI_ERR_TYPE for a datatype that is not predefined.
    pub fn new(op: MPI_Op, dt: MPI_Datatype) -> MpiResult<Reduction> {
        let op = Op::from_handle(op)?;
        let &(_, elem, group) = TYPES.iter().find(|t| t.0 == dt).ok_or_else(|| err(MPI_ERR_TYPE, format!("invalid datatype 0x{:08x} (not a predefined datatype; derived datatypes are not implemented yet)", dt as u32)))?;
        let size = predefined_size(dt).unwrap_or(0);
        let tname = predefined_name(dt).unwrap_or("?");
        if !allowed(op, group) {
            return Err(err(MPI_ERR_OP, format!("{} is not defined on {tname} (MPI 4.1 section 6.9.2 lists the datatypes each predefined op applies to)", op.name())));
        }
        if elem == Elem::NoArith && !matches!(op, Op::Replace | Op::NoOp) {
            let what = if tname.contains("LONG_DOUBLE") { "MPI_LONG_DOUBLE" } else { tname };
            return Err(err(MPI_ERR_OP, format!("{what} reductions are not supported yet ({} on {tname})", op.name())));
        }
        let (kernel, bytewise) = kernel(op, elem).ok_or_else(|| err(crate::abi::MPI_ERR_INTERN, format!("no kernel for {} on {tname}", op.name())))?;
        Ok(Reduction { size, func: Func::Predefined { op, kernel, scale: if bytewise { size } else { 1 } } })
    }

    /// A user-defined op on datatype handle `datatype`, whose elements are `size` bytes apart in
    /// the algorithms' buffers and whose data starts `lb` bytes after an element's address.
    pub fn user(op: UserOp, datatype: MPI_Datatype, size: usize, lb: isize) -> Reduction {
        Reduction { size, func: Func::User { op, datatype, lb } }
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
            Func::User { op, datatype, lb } => {
                // The function addresses elements as the datatype places them: from `base - lb`.
                let (inp, inout) = (inp.wrapping_offset(-lb), inout.wrapping_offset(-lb));
                // SAFETY: per this function's contract.
                unsafe { call_user(op.f, inp as *mut u8, inout, count, datatype, self.size) }
            }
        }
    }
}

/// Calls user function `f` on `count` elements `size` bytes apart. A function with an `int`
/// length gets counts above `i32::MAX` in pieces.
///
/// # Safety
/// As `Reduction::apply`, with `inp` and `inout` the addresses the datatype is relative to.
pub unsafe fn call_user(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: MPI_Datatype, size: usize) {
    let mut dt = datatype;
    match f {
        UserFn::Count(f) => {
            let mut len = count as MPI_Count;
            // SAFETY: the user's function on buffers that hold `count` elements (caller contract).
            unsafe { f(inp as *mut _, inout as *mut _, &mut len, &mut dt) };
        }
        UserFn::Int(f) => {
            let mut done = 0usize;
            while done < count {
                let n = (count - done).min(i32::MAX as usize);
                let mut len = n as std::os::raw::c_int;
                let off = done * size;
                // SAFETY: elements done..done+n of both buffers (caller contract).
                unsafe { f(inp.wrapping_add(off) as *mut _, inout.wrapping_add(off) as *mut _, &mut len, &mut dt) };
                done += n;
            }
        }
    }
}

#[cfg(test)]
mod tests;
