//! Property test through the C entry points: for random nested derived datatypes, a message sent
//! and received through point-to-point (rank 0 to itself on MPI_COMM_SELF, eager and rendezvous
//! sizes) places exactly the bytes MPI_Pack + MPI_Unpack place, and leaves every gap untouched.
//! This file is its own test process: MPI_Init runs once, as a singleton.
use oxmpi::abi::*;
use oxmpi::ffi::*;
use std::os::raw::{c_int, c_void};

mod common;
use common::Rng;

const MPI_INT: MPI_Datatype = 0x4c000405;
const MPI_DOUBLE: MPI_Datatype = 0x4c00080b;
const MPI_CHAR: MPI_Datatype = 0x4c000101;
const MPI_SHORT: MPI_Datatype = 0x4c000203;


fn ok(rc: c_int, what: &str) {
    assert_eq!(rc, MPI_SUCCESS, "{what} failed with code {rc}");
}

/// (lb, extent); these constructions never make lb negative.
fn bounds(t: MPI_Datatype) -> (MPI_Aint, MPI_Aint) {
    let (mut lb, mut ext) = (0, 0);
    // SAFETY: valid out pointers to locals.
    ok(unsafe { MPI_Type_get_extent(t, &mut lb, &mut ext) }, "MPI_Type_get_extent");
    assert!(lb >= 0);
    (lb, ext)
}

/// A random datatype of nesting depth <= `depth`, whose typemap never overlaps itself (so it is
/// valid for receives) and whose lower bound is not negative.
fn random_type(r: &mut Rng, depth: u32) -> MpiResult<MPI_Datatype> {
    let bases = [MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_SHORT];
    let leaf = bases[r.below(4) as usize];
    if depth == 0 || r.below(4) == 0 {
        return Ok(leaf);
    }
    let old = random_type(r, depth - 1)?;
    let mut t: MPI_Datatype = 0;
    // SAFETY (all calls below): valid arrays and out pointers to locals.
    let rc = unsafe {
        match r.below(5) {
            0 => MPI_Type_contiguous(1 + r.below(4) as c_int, old, &mut t),
            1 => {
                let blen = 1 + r.below(3) as c_int;
                MPI_Type_vector(1 + r.below(4) as c_int, blen, blen + r.below(3) as c_int, old, &mut t)
            }
            2 => {
                let n = 1 + r.below(4) as usize;
                let mut blens = Vec::new();
                let mut displs = Vec::new();
                let mut at = r.below(2) as c_int;
                for _ in 0..n {
                    let b = 1 + r.below(3) as c_int;
                    blens.push(b);
                    displs.push(at);
                    at += b + r.below(3) as c_int;
                }
                MPI_Type_indexed(n as c_int, blens.as_ptr(), displs.as_ptr(), old, &mut t)
            }
            3 => {
                let other = random_type(r, depth - 1)?;
                let types = [old, other];
                let blens = [1 + r.below(2) as c_int, 1 + r.below(2) as c_int];
                let (lb, ext) = bounds(old);
                let first = lb + ext * blens[0] as MPI_Aint;
                let displs = [0 as MPI_Aint, first + r.below(9) as MPI_Aint];
                MPI_Type_create_struct(2, blens.as_ptr(), displs.as_ptr(), types.as_ptr(), &mut t)
            }
            _ => {
                let (lb, ext) = bounds(old);
                MPI_Type_create_resized(old, lb, ext + r.below(16) as MPI_Aint, &mut t)
            }
        }
    };
    ok(rc, "type constructor");
    Ok(t)
}

type MpiResult<T> = Result<T, ()>;

#[test]
fn random_nested_types_send_like_pack_unpack() {
    // SAFETY: the C entry points with valid pointers; a singleton MPI (no mpiexec).
    unsafe {
        ok(MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()), "MPI_Init");
        ok(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "set_errhandler");
    }
    let mut r = Rng(0x5EED_0F_0A7A);
    for case in 0..150 {
        let mut t = random_type(&mut r, 3).unwrap();
        // SAFETY: committing a valid handle.
        ok(unsafe { MPI_Type_commit(&mut t) }, "MPI_Type_commit");
        let (lb, ext) = bounds(t);
        let (lb, ext) = (lb as usize, ext as usize);
        // Some counts large enough for the rendezvous protocol (> 8 KiB).
        let count: c_int = if case % 5 == 0 { (20_000 / ext.max(1)).max(1) as c_int } else { 1 + r.below(3) as c_int };
        let span = lb + ext * count as usize + 64;
        let src: Vec<u8> = (0..span).map(|_| r.next() as u8).collect();
        let (mut via_pack, mut via_p2p) = (vec![0xAAu8; span], vec![0xAAu8; span]);
        let mut packed_size: c_int = 0;
        // SAFETY: all buffers hold `span` >= count * extent bytes; out pointers are locals.
        unsafe {
            ok(MPI_Pack_size(count, t, MPI_COMM_SELF, &mut packed_size), "MPI_Pack_size");
            let mut packed = vec![0u8; packed_size as usize];
            let mut pos: c_int = 0;
            ok(MPI_Pack(src.as_ptr() as *const c_void, count, t, packed.as_mut_ptr() as *mut c_void, packed_size, &mut pos, MPI_COMM_SELF), "MPI_Pack");
            let mut pos2: c_int = 0;
            ok(MPI_Unpack(packed.as_ptr() as *const c_void, pos, &mut pos2, via_pack.as_mut_ptr() as *mut c_void, count, t, MPI_COMM_SELF), "MPI_Unpack");
            let mut req: MPI_Request = MPI_REQUEST_NULL;
            ok(MPI_Isend(src.as_ptr() as *const c_void, count, t, 0, case, MPI_COMM_SELF, &mut req), "MPI_Isend");
            let mut st = MPI_Status::default();
            ok(MPI_Recv(via_p2p.as_mut_ptr() as *mut c_void, count, t, 0, case, MPI_COMM_SELF, &mut st), "MPI_Recv");
            ok(MPI_Wait(&mut req, 1 as *mut MPI_Status), "MPI_Wait");
            let mut n: c_int = 0;
            ok(MPI_Get_count(&st, t, &mut n), "MPI_Get_count");
            assert_eq!(n, count, "case {case}: Get_count");
        }
        assert!(via_pack == via_p2p, "case {case}: point-to-point placed different bytes than pack/unpack (extent {ext}, count {count})");
        assert!(via_pack.iter().zip(&src).any(|(a, b)| a == b), "case {case}: nothing was transferred");
        // SAFETY: freeing a committed derived type we own (predefined leaves are never freed).
        if t as u32 >> 30 != HANDLE_KIND_BUILTIN {
            ok(unsafe { MPI_Type_free(&mut t) }, "MPI_Type_free");
        }
    }
    // SAFETY: matching MPI_Init above.
    ok(unsafe { MPI_Finalize() }, "MPI_Finalize");
}
