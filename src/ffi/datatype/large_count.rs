//! MPI_Type_match_size and MPI_Type_create_f90_integer/real/complex. (The large-count `_c`
//! constructors and queries are generated from their families, `ffi/families.rs`, over the cores
//! of `ffi::datatype`.)
use crate::ffi::check::{self, dtype};
use crate::ffi::pointer_args::out;
use crate::abi::*;
use crate::datatype::{self as dt, Combiner, TypeRepr};
use crate::error::{err, MpiResult};
use crate::export;
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::Mutex;

/// The f90 parameterised types handed out so far, by (combiner, p, r): the standard makes them
/// predefined, so the same arguments give the same handle and they are never freed.
fn f90_type(combiner: Combiner, p: c_int, r: c_int, base: MPI_Datatype, ints: Vec<i32>) -> MpiResult<MPI_Datatype> {
    type Cache = HashMap<(u8, c_int, c_int), MPI_Datatype>;
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let key = (combiner as u8, p, r);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&h) = cache.get_or_insert_with(HashMap::new).get(&key) {
        return Ok(h);
    }
    let mut t: TypeRepr = dt::dup(&dtype(base)?);
    t.env = dt::Envelope { combiner, ints: ints.into_iter().map(i64::from).collect(), addrs: vec![], counts: vec![], types: vec![] };
    t.commit();
    let h = check::register_type(t);
    cache.get_or_insert_with(HashMap::new).insert(key, h);
    Ok(h)
}

/// The storage size MPICH picks for a Fortran REAL of precision `p` and exponent range `r`
/// (MPI_UNDEFINED means "any"): 4 (p <= 6, r <= 37) or 8 (p <= 15, r <= 307).
fn f90_real_size(p: c_int, r: c_int) -> MpiResult<usize> {
    let p = if p == MPI_UNDEFINED { 0 } else { p };
    let r = if r == MPI_UNDEFINED { 0 } else { r };
    match (p, r) {
        _ if p < 0 || r < 0 => Err(err(MPI_ERR_ARG, format!("invalid precision {p} / range {r}: must be non-negative or MPI_UNDEFINED"))),
        _ if p <= 6 && r <= 37 => Ok(4),
        _ if p <= 15 && r <= 307 => Ok(8),
        _ => Err(err(MPI_ERR_ARG, format!("no Fortran REAL kind has precision {p} and range {r} (at most 15 digits and 10^307)"))),
    }
}

const INTEGERS: [(usize, MPI_Datatype); 4] = [(1, 0x4c00012d), (2, 0x4c00022f), (4, 0x4c000430), (8, 0x4c000831)];
const REALS: [(usize, MPI_Datatype); 3] = [(4, 0x4c000427), (8, 0x4c000829), (16, 0x4c00102b)];
const COMPLEXES: [(usize, MPI_Datatype); 3] = [(8, 0x4c000828), (16, 0x4c00102a), (32, 0x4c00202c)];

fn by_size(table: &[(usize, MPI_Datatype)], size: usize) -> MpiResult<MPI_Datatype> {
    table.iter().find(|t| t.0 == size).map(|t| t.1).ok_or_else(|| err(MPI_ERR_ARG, format!("no predefined type of this class has size {size}")))
}

export! {
    fn MPI_Type_match_size / PMPI_Type_match_size (typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // As MPICH: the Fortran sized types MPI_INTEGERn / MPI_REALn / MPI_COMPLEXn.
        let s = usize::try_from(size).map_err(|_| err(MPI_ERR_ARG, format!("invalid size {size}")))?;
        let t = match typeclass {
            MPI_TYPECLASS_INTEGER => by_size(&INTEGERS, s)?,
            MPI_TYPECLASS_REAL => by_size(&REALS, s)?,
            MPI_TYPECLASS_COMPLEX => by_size(&COMPLEXES, s)?,
            _ => return Err(err(MPI_ERR_ARG, format!("invalid typeclass {typeclass}: use MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX"))),
        };
        let datatype = out(datatype, "datatype")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        unsafe { *datatype = t };
        Ok(())
    }

    fn MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer (r: c_int, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // Decimal range r needs 10^r: 1 byte up to r = 2, 2 up to 4, 4 up to 9, 8 up to 18 (MPICH).
        let size = match r {
            _ if r == MPI_UNDEFINED || (0..=2).contains(&r) => 1,
            3..=4 => 2,
            5..=9 => 4,
            10..=18 => 8,
            _ => return Err(err(MPI_ERR_ARG, format!("no Fortran INTEGER kind has decimal range {r} (at most 18)"))),
        };
        let out_ = out(newtype, "newtype")?;
        let h = f90_type(Combiner::F90Integer, 0, r, by_size(&INTEGERS, size)?, vec![r])?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        unsafe { *out_ = h };
        Ok(())
    }

    fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real (p: c_int, r: c_int, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let size = f90_real_size(p, r)?;
        let out_ = out(newtype, "newtype")?;
        let h = f90_type(Combiner::F90Real, p, r, by_size(&REALS, size)?, vec![p, r])?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        unsafe { *out_ = h };
        Ok(())
    }

    fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex (p: c_int, r: c_int, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let size = f90_real_size(p, r)?;
        let out_ = out(newtype, "newtype")?;
        let h = f90_type(Combiner::F90Complex, p, r, by_size(&COMPLEXES, 2 * size)?, vec![p, r])?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        unsafe { *out_ = h };
        Ok(())
    }
}
