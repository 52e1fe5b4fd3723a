//! User-defined reduction ops (MPI 4.1 section 6.9.5): MPI_Op_create, MPI_Op_create_c,
//! MPI_Op_free, and the handle lookup every reduction uses. User ops are `DIRECT | OP | index`
//! into the rank's `OpTable` (0x98000000 + index), never equal to the built-in
//! `BUILTIN | OP | n` handles of the predefined ops (0x58000001..) or to MPI_OP_NULL.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::op::user::{UserFn, UserOp};
use crate::op::Op;
use crate::instance::Instance;
use std::os::raw::c_int;

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

fn is_user_handle(h: MPI_Op) -> bool {
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
    Op::from_handle(h).map(OpRef::Predefined)
}

/// MPI_Op_create and MPI_Op_create_c.
///
/// # Safety
/// `op` must be writable (checked for NULL).
unsafe fn create(f: Option<UserFn>, commute: c_int, op: *mut MPI_Op) -> MpiResult {
    let u = super::check::universe()?;
    let f = f.ok_or_else(|| err(MPI_ERR_ARG, "user_fn is NULL"))?;
    if op.is_null() {
        return Err(err(MPI_ERR_ARG, "op is NULL"));
    }
    let i = u.ops.insert(UserOp { f, commutative: commute != 0 }).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many user-defined ops exist (2^26); free some with MPI_Op_free"))?;
    // SAFETY: `op` is non-NULL and writable (caller contract).
    unsafe { *op = make_handle(HANDLE_KIND_DIRECT, OBJ_OP, i as u32) };
    Ok(())
}

export! {
    fn MPI_Op_create / PMPI_Op_create (user_fn: Option<MPI_User_function>, commute: c_int, op: *mut MPI_Op) on MPI_COMM_SELF => {
        create(user_fn.map(UserFn::Int), commute, op)
    }
    fn MPI_Op_create_c / PMPI_Op_create_c (user_fn: Option<MPI_User_function_c>, commute: c_int, op: *mut MPI_Op) on MPI_COMM_SELF => {
        create(user_fn.map(UserFn::Count), commute, op)
    }

    /// Frees a user-defined op and sets the handle to MPI_OP_NULL; predefined ops cannot be freed.
    fn MPI_Op_free / PMPI_Op_free (op: *mut MPI_Op) on MPI_COMM_SELF => {
        let u = super::check::universe()?;
        if op.is_null() {
            return Err(err(MPI_ERR_ARG, "op is NULL"));
        }
        let h = *op;
        if !is_user_handle(h) {
            let what = match Op::from_handle(h) {
                Ok(p) => format!("{} is a predefined op, which cannot be freed", p.name()),
                Err(e) => e.msg,
            };
            return Err(err(MPI_ERR_OP, what));
        }
        if !u.ops.remove(handle_index(h) as usize) {
            return Err(err(MPI_ERR_OP, format!("invalid reduction operation 0x{:08x} (already freed, or never created by this rank)", h as u32)));
        }
        *op = MPI_OP_NULL;
        Ok(())
    }
}
