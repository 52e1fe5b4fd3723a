//! MPICH's handles of the predefined reduction operations (`crate::op::Op`).
use super::MPI_Op;
use crate::op::Op;

/// Every predefined op and its MPICH handle (`0x58000001..=0x5800000e`).
pub const OPS: [(MPI_Op, Op); 14] = [
    (0x58000001, Op::Max),
    (0x58000002, Op::Min),
    (0x58000003, Op::Sum),
    (0x58000004, Op::Prod),
    (0x58000005, Op::Land),
    (0x58000006, Op::Band),
    (0x58000007, Op::Lor),
    (0x58000008, Op::Bor),
    (0x58000009, Op::Lxor),
    (0x5800000a, Op::Bxor),
    (0x5800000b, Op::Minloc),
    (0x5800000c, Op::Maxloc),
    (0x5800000d, Op::Replace),
    (0x5800000e, Op::NoOp),
];

/// The predefined op behind MPICH handle `h`, if it is one (`OPS` is in handle order).
pub fn op(h: MPI_Op) -> Option<Op> {
    let i = h.wrapping_sub(OPS[0].0);
    (0..OPS.len() as i32).contains(&i).then(|| OPS[i as usize].1)
}

/// The MPICH handle of `op`.
pub fn op_handle(op: Op) -> MPI_Op {
    OPS.iter().find(|e| e.1 == op).map(|e| e.0).expect("every Op has an MPICH handle")
}

#[cfg(test)]
#[test]
fn every_op_has_the_handle_of_mpi_h() {
    let header = include_str!("../../include/mpi.h");
    for op in crate::op::ALL_OPS {
        assert_eq!(self::op(op_handle(op)), Some(op));
        let define = format!("#define {} ", op.name());
        let line = header.lines().find(|l| l.starts_with(&define)).unwrap_or_else(|| panic!("{} not in mpi.h", op.name()));
        assert!(line.contains(&format!("0x{:08x}", op_handle(op))), "{line}");
    }
    assert_eq!(op(super::MPI_OP_NULL), None);
}
