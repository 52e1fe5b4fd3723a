//! User-defined reduction ops (MPI 4.1 section 6.9.5): MPI_Op_create and MPI_Op_create_c (a
//! family, ffi/families.rs), MPI_Op_free, and the handle lookup every reduction uses. User ops are `DIRECT | OP | index`
//! into the rank's `OpTable` (0x98000000 + index), never equal to the built-in
//! `BUILTIN | OP | n` handles of the predefined ops (0x58000001..) or to MPI_OP_NULL.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::op::user::{UserFn, UserOp};
use crate::op::{Op, Reduction};
use crate::instance::Instance;
use std::os::raw::{c_int, c_void};

/// What an op handle names.
#[derive(Clone, Copy, Debug)]
pub enum OpRef {
    Predefined(Op),
    User(UserOp),
}

impl OpRef {
    pub fn commutative(self) -> bool {
        match self {
            OpRef::Predefined(op) => op.commutative(),
            OpRef::User(op) => op.commutative,
        }
    }
}

pub(crate) fn is_user_handle(h: MPI_Op) -> bool {
    handle_kind(h) == HANDLE_KIND_DIRECT && handle_object(h) == OBJ_OP
}

/// The op behind handle `h`: MPI_ERR_OP for MPI_OP_NULL, a freed op or a non-op handle.
pub fn resolve(u: &Instance, h: MPI_Op) -> MpiResult<OpRef> {
    if is_user_handle(h) {
        return u
            .ops
            .get(handle_index(h) as usize)
            .map(OpRef::User)
            .ok_or_else(|| err(MPI_ERR_OP, format!("invalid reduction operation 0x{:08x} (freed, or never created by this rank)", h as u32)));
    }
    predefined(h).map(OpRef::Predefined)
}

/// The predefined op behind handle `h`, or MPI_ERR_OP saying why there is none.
pub fn predefined(h: MPI_Op) -> MpiResult<Op> {
    if let Some(op) = crate::abi::ops::op(h) {
        return Ok(op);
    }
    if h == MPI_OP_NULL {
        return Err(err(MPI_ERR_OP, "invalid reduction operation: MPI_OP_NULL"));
    }
    Err(err(MPI_ERR_OP, format!("invalid reduction operation 0x{:08x} (not a predefined op)", h as u32)))
}

/// Predefined op `op` on predefined datatype `dt`: MPI_ERR_OP for a bad op or pair, MPI_ERR_TYPE
/// for a datatype that is not predefined.
pub fn reduction(op: MPI_Op, dt: MPI_Datatype) -> MpiResult<Reduction> {
    reduction_of(predefined(op)?, dt)
}

/// `reduction` for an op already resolved (the collectives resolve it once, to tell user ops).
#[inline]
pub fn reduction_of(op: Op, dt: MPI_Datatype) -> MpiResult<Reduction> {
    let dt = crate::abi::datatypes::basic(dt).ok_or_else(|| err(MPI_ERR_TYPE, format!("invalid datatype 0x{:08x} (not a predefined datatype)", dt as u32)))?;
    Reduction::new(op, dt)
}

/// `UserFn::signature` of an `MPI_User_function` (MPI_Op_create): the length is an `int`.
const SIG_INT: u8 = 0;
/// `UserFn::signature` of an `MPI_User_function_c` (MPI_Op_create_c): the length is an `MPI_Count`.
const SIG_COUNT: u8 = 1;
/// `UserFn::signature` of the standard ABI's `MPI_User_function` (int length, pointer datatype).
pub const SIG_ABI_INT: u8 = 2;
/// `UserFn::signature` of the standard ABI's `MPI_User_function_c`.
pub const SIG_ABI_COUNT: u8 = 3;
/// `UserFn::signature` of a Fortran user function of a foreign ABI's Fortran library (all by
/// reference; the datatype an INTEGER of that ABI), called through ABI_CALLER too.
pub const SIG_ABI_FORTRAN: u8 = 4;
/// `UserFn::signature` of a function of MPICH's C++ bindings (`MPI::Op::Init`): called through
/// the bindings' call-through function (`MPII_Op_set_cxx`, ffi/cxx_bindings.rs), `CXX_OP_CALL`.
pub const SIG_MPICH_CXX: u8 = 5;
/// `UserFn::signature` of a function of Open MPI's C++ bindings (`MPI::Op::Init` through
/// libmpi_cxx.so.40's `ompi_op_set_cxx_callback`), called through ABI_CALLER: the Open MPI
/// layer calls the bindings' intercept with it.
pub const SIG_ABI_CXX: u8 = 6;
/// MPICH's C++ call-through: `(in, inout, len, datatype, the user's C++ function)`.
pub type CxxOpCall = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, MPI_Datatype, usize);
/// The call-through of SIG_MPICH_CXX ops (one per library, as in MPICH: `MPIR_Process`), set by
/// MPII_Op_set_cxx before it marks any op.
pub static CXX_OP_CALL: std::sync::OnceLock<CxxOpCall> = std::sync::OnceLock::new();
/// How to call the functions of SIG_ABI_INT, SIG_ABI_COUNT, SIG_ABI_FORTRAN and SIG_ABI_CXX: the MPI-5 ABI layer (above this
/// boundary) registers its caller when it creates such an op.
pub static ABI_CALLER: std::sync::OnceLock<crate::op::user::Caller> = std::sync::OnceLock::new();

/// Calls the application's function `f` on `count` elements `size` bytes apart (the engine's
/// `op::user::Caller`). A function with an `int` length gets counts above `i32::MAX` in pieces.
///
/// # Safety
/// `inp` and `inout` hold `count` elements of `datatype`; `f` was made by `create`.
pub unsafe fn call_user(f: UserFn, inp: *mut u8, inout: *mut u8, count: usize, datatype: i32, size: usize) {
    let mut dt = datatype;
    if f.signature == SIG_ABI_INT || f.signature == SIG_ABI_COUNT || f.signature == SIG_ABI_FORTRAN || f.signature == SIG_ABI_CXX {
        // Set before any op of these signatures exists (see ABI_CALLER).
        if let Some(call) = ABI_CALLER.get() {
            // SAFETY: the ABI layer's caller for the functions it registered (caller contract).
            unsafe { call(f, inp, inout, count, datatype, size) };
        }
        return;
    }
    if f.signature == SIG_MPICH_CXX {
        if let Some(call) = CXX_OP_CALL.get() {
            in_int_chunks(count, size, |off, len| {
                // SAFETY: MPICH's C++ call-through with the user's C++ function it was given for
                // this op, on the chunk at byte `off` of both buffers (caller contract).
                unsafe { call(inp.wrapping_add(off).cast(), inout.wrapping_add(off).cast(), len, dt, f.addr) };
            });
        }
        return;
    }
    if f.signature == SIG_COUNT {
        // SAFETY: `create` stored this address from an `MPI_User_function_c`.
        let func: MPI_User_function_c = unsafe { std::mem::transmute::<usize, MPI_User_function_c>(f.addr) };
        let mut len = count as MPI_Count;
        // SAFETY: the user's function on buffers that hold `count` elements (caller contract).
        unsafe { func(inp as *mut _, inout as *mut _, &mut len, &mut dt) };
        return;
    }
    // SAFETY: `create` stored this address from an `MPI_User_function`.
    let func: MPI_User_function = unsafe { std::mem::transmute::<usize, MPI_User_function>(f.addr) };
    in_int_chunks(count, size, |off, mut len| {
        // SAFETY: the chunk at byte `off` of both buffers, `len` elements (caller contract).
        unsafe { func(inp.wrapping_add(off) as *mut _, inout.wrapping_add(off) as *mut _, &mut len, &mut dt) };
    });
}

/// Calls `f(byte offset, element count)` over `count` elements `size` bytes apart in chunks an
/// int count can describe: how an `MPI_User_function` (int `len`) gets a large-count reduction.
pub fn in_int_chunks(count: usize, size: usize, mut f: impl FnMut(usize, c_int)) {
    let mut done = 0usize;
    while done < count {
        let n = (count - done).min(i32::MAX as usize);
        f(done * size, n as c_int);
        done += n;
    }
}

/// The user function of MPI_Op_create (`MPI_User_function`, an `int` length) or MPI_Op_create_c
/// (`MPI_User_function_c`, an `MPI_Count` length): what `call_user` needs to call it back. The
/// two callback types are the one difference between the forms, so the core is generic over it
/// as the count families are over `CountArg`.
pub trait UserCallback: Copy {
    fn user_fn(self) -> UserFn;
}

impl UserCallback for MPI_User_function {
    fn user_fn(self) -> UserFn {
        UserFn { addr: self as usize, signature: SIG_INT }
    }
}

impl UserCallback for MPI_User_function_c {
    fn user_fn(self) -> UserFn {
        UserFn { addr: self as usize, signature: SIG_COUNT }
    }
}

/// MPI_Op_create and MPI_Op_create_c (the `MPI_Op_create` family, ffi/families.rs).
///
/// # Safety
/// `op` must be writable (checked for NULL).
pub(crate) unsafe fn create<F: UserCallback>(user_fn: Option<F>, commute: c_int, op: *mut MPI_Op) -> MpiResult {
    let u = crate::ffi::check::universe()?;
    let f = user_fn.ok_or_else(|| err(MPI_ERR_ARG, "user_fn is NULL"))?.user_fn();
    if op.is_null() {
        return Err(err(MPI_ERR_ARG, "op is NULL"));
    }
    let i = u.ops.insert(UserOp { f, commutative: commute != 0 }).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many user-defined ops exist (2^26); free some with MPI_Op_free"))?;
    // SAFETY: `op` is non-NULL and writable (caller contract).
    unsafe { *op = make_handle(HANDLE_KIND_DIRECT, OBJ_OP, i as u32) };
    Ok(())
}

export! {
    /// Frees a user-defined op and sets the handle to MPI_OP_NULL; predefined ops cannot be freed.
    fn MPI_Op_free / PMPI_Op_free (op: *mut MPI_Op) on comm MPI_COMM_SELF => {
        let u = crate::ffi::check::universe()?;
        if op.is_null() {
            return Err(err(MPI_ERR_ARG, "op is NULL"));
        }
        // SAFETY: non-null (checked above), and the caller passes a readable, writable handle.
        let h = unsafe { *op };
        if !is_user_handle(h) {
            let what = match predefined(h) {
                Ok(p) => format!("{} is a predefined op, which cannot be freed", p.name()),
                Err(e) => e.msg,
            };
            return Err(err(MPI_ERR_OP, what));
        }
        if !u.ops.remove(handle_index(h) as usize) {
            return Err(err(MPI_ERR_OP, format!("invalid reduction operation 0x{:08x} (already freed, or never created by this rank)", h as u32)));
        }
        // SAFETY: as above.
        unsafe { *op = MPI_OP_NULL };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn invalid_op_and_type_handles() {
        let class = |op, dt| reduction(op, dt).err().map(|e| e.class.mpich());
        assert_eq!(class(0x58000000, crate::abi::datatypes::MPI_INT), Some(MPI_ERR_OP));
        assert_eq!(class(0x5800000f, crate::abi::datatypes::MPI_INT), Some(MPI_ERR_OP));
        assert_eq!(class(MPI_OP_NULL, crate::abi::datatypes::MPI_INT), Some(MPI_ERR_OP));
        assert_eq!(class(crate::abi::ops::op_handle(Op::Sum), MPI_DATATYPE_NULL), Some(MPI_ERR_TYPE));
        assert_eq!(class(crate::abi::ops::op_handle(Op::Sum), crate::abi::datatypes::MPI_INT), None);
    }
}
