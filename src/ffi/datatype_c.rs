//! Large-count (`_c`) datatype constructors and queries, MPI_Get_count_c / MPI_Get_elements_c,
//! MPI_Type_match_size and MPI_Type_create_f90_integer/real/complex: thin wrappers over the
//! engine calls `ffi::datatype` uses.
//!
//! The engine takes 64-bit counts, block lengths and displacements (with checked arithmetic), so
//! the `_c` constructors pass theirs unchanged and record them as large counts in the envelope
//! (MPI_Type_get_envelope_c / get_contents_c).
// Not yet annotated for `unsafe_op_in_unsafe_fn` (issue 15): the export bodies dereference
// the caller's pointers without their own `unsafe` blocks.
#![allow(unsafe_op_in_unsafe_fn)]
use super::check::{self, dtype};
use super::datatype::{array, blocklen, blocklens, count, out, store, write_pair};
use crate::abi::*;
use crate::datatype::{self as dt, Combiner, Order, TypeRepr};
use crate::error::{err, MpiResult};
use crate::export;
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

/// A `_c` constructor's result, with its envelope in the large-count form.
fn large(t: dt::Built) -> dt::Built {
    t.map(|mut t| {
        t.env = t.env.into_large();
        t
    })
}

/// The f90 parameterised types handed out so far, by (combiner, p, r): the standard makes them
/// predefined, so the same arguments give the same handle and they are never freed.
/// The number of entries of a `_c` constructor's arrays, checked non-negative.
fn length(c: MPI_Count) -> MpiResult<usize> {
    usize::try_from(count(c, "count")?).map_err(|_| err(MPI_ERR_COUNT, format!("count {c} is too large for an array")))
}

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
    fn MPI_Type_contiguous_c / PMPI_Type_contiguous_c (count_: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        store(large(dt::contiguous(n, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_vector_c / PMPI_Type_vector_c (count_: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        store(large(dt::vector(n, b, stride, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c (count_: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        store(large(dt::hvector(n, b, stride, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_indexed_c / PMPI_Type_indexed_c (count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = length(count_)?;
        let b = blocklens(array(array_of_blocklengths, n, "array_of_blocklengths")?)?;
        let d = array(array_of_displacements, n, "array_of_displacements")?;
        store(large(dt::indexed(&b, d, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_hindexed_c / PMPI_Type_create_hindexed_c (count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = length(count_)?;
        let b = blocklens(array(array_of_blocklengths, n, "array_of_blocklengths")?)?;
        let d = array(array_of_displacements, n, "array_of_displacements")?;
        store(large(dt::hindexed(&b, d, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_indexed_block_c / PMPI_Type_create_indexed_block_c (count_: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = length(count_)?;
        let b = blocklen(blocklength)?;
        let d = array(array_of_displacements, n, "array_of_displacements")?;
        store(large(dt::indexed_block(b, d, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_hindexed_block_c / PMPI_Type_create_hindexed_block_c (count_: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = length(count_)?;
        let b = blocklen(blocklength)?;
        let d = array(array_of_displacements, n, "array_of_displacements")?;
        store(large(dt::hindexed_block(b, d, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_struct_c / PMPI_Type_create_struct_c (count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = length(count_)?;
        let b = blocklens(array(array_of_blocklengths, n, "array_of_blocklengths")?)?;
        let d = array(array_of_displacements, n, "array_of_displacements")?;
        let ts: Vec<Arc<TypeRepr>> = array(array_of_types, n, "array_of_types")?.iter().map(|&t| dtype(t)).collect::<MpiResult<_>>()?;
        store(large(dt::create_struct(&b, d, &ts)), newtype)
    }

    fn MPI_Type_create_subarray_c / PMPI_Type_create_subarray_c (ndims: c_int, array_of_sizes: *const MPI_Count, array_of_subsizes: *const MPI_Count, array_of_starts: *const MPI_Count, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        if ndims <= 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be positive")));
        }
        let n = ndims as usize;
        let sizes = array(array_of_sizes, n, "array_of_sizes")?;
        let subs = array(array_of_subsizes, n, "array_of_subsizes")?;
        let starts = array(array_of_starts, n, "array_of_starts")?;
        for i in 0..n {
            if sizes[i] <= 0 || subs[i] <= 0 || subs[i] > sizes[i] || starts[i] < 0 || starts[i] > sizes[i] - subs[i] {
                return Err(err(MPI_ERR_ARG, format!("invalid subarray dimension {i}: size {}, subsize {}, start {} (need 0 < subsize <= size and 0 <= start <= size - subsize)", sizes[i], subs[i], starts[i])));
            }
        }
        let ord = match order {
            56 => Order::C,
            57 => Order::Fortran,
            _ => return Err(err(MPI_ERR_ARG, format!("invalid order {order}: use MPI_ORDER_C or MPI_ORDER_FORTRAN"))),
        };
        store(large(dt::subarray(sizes, subs, starts, ord, order, &dtype(oldtype)?)), newtype)
    }

    fn MPI_Type_create_resized_c / PMPI_Type_create_resized_c (oldtype: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        store(large(dt::resized(&dtype(oldtype)?, lb, extent)), newtype)
    }

    fn MPI_Type_size_c / PMPI_Type_size_c (datatype: MPI_Datatype, size: *mut MPI_Count) on comm MPI_COMM_SELF => {
        *out(size, "size")? = dtype(datatype)?.layout.size as MPI_Count;
        Ok(())
    }

    fn MPI_Type_get_extent_c / PMPI_Type_get_extent_c (datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(lb, extent, t.layout.lb, t.layout.extent())
    }

    fn MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c (datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(true_lb, true_extent, t.layout.true_lb, t.layout.true_extent())
    }

    fn MPI_Get_count_c / PMPI_Get_count_c (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let size = dtype(datatype)?.layout.size as u64;
        let count = out(count, "count")?;
        // SAFETY: `out` rejected NULL; `status` and `count` are the caller's status and MPI_Count.
        let bytes = (*st).count_bytes();
        *count = if size == 0 {
            if bytes == 0 { 0 } else { MPI_UNDEFINED as MPI_Count }
        } else if bytes % size != 0 {
            MPI_UNDEFINED as MPI_Count
        } else {
            (bytes / size) as MPI_Count
        };
        Ok(())
    }

    fn MPI_Get_elements_c / PMPI_Get_elements_c (status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let st = out(status as *mut MPI_Status, "status")?;
        let t = dtype(datatype)?;
        let count = out(count, "count")?;
        // SAFETY (status and count below): `out` rejected NULL; they are the caller's objects.
        if t.leaf_id.is_some() {
            // As MPI_Get_elements: for a predefined type (pair types included) the element count.
            let size = t.layout.size as u64;
            let bytes = (*st).count_bytes();
            *count = if size == 0 || bytes % size != 0 { if bytes == 0 { 0 } else { MPI_UNDEFINED as MPI_Count } } else { (bytes / size) as MPI_Count };
            return Ok(());
        }
        // Basic elements in the received bytes (MPI 4.1 section 5.1.11).
        *count = t.layout.basic_elements_in((*st).count_bytes()).map_or(MPI_UNDEFINED as MPI_Count, |n| n as MPI_Count);
        Ok(())
    }

    fn MPI_Type_match_size / PMPI_Type_match_size (typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // As MPICH: the Fortran sized types MPI_INTEGERn / MPI_REALn / MPI_COMPLEXn.
        let s = usize::try_from(size).map_err(|_| err(MPI_ERR_ARG, format!("invalid size {size}")))?;
        let t = match typeclass {
            MPI_TYPECLASS_INTEGER => by_size(&INTEGERS, s)?,
            MPI_TYPECLASS_REAL => by_size(&REALS, s)?,
            MPI_TYPECLASS_COMPLEX => by_size(&COMPLEXES, s)?,
            _ => return Err(err(MPI_ERR_ARG, format!("invalid typeclass {typeclass}: use MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX"))),
        };
        *out(datatype, "datatype")? = t;
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
        *out_ = f90_type(Combiner::F90Integer, 0, r, by_size(&INTEGERS, size)?, vec![r])?;
        Ok(())
    }

    fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real (p: c_int, r: c_int, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let size = f90_real_size(p, r)?;
        let out_ = out(newtype, "newtype")?;
        *out_ = f90_type(Combiner::F90Real, p, r, by_size(&REALS, size)?, vec![p, r])?;
        Ok(())
    }

    fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex (p: c_int, r: c_int, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let size = f90_real_size(p, r)?;
        let out_ = out(newtype, "newtype")?;
        *out_ = f90_type(Combiner::F90Complex, p, r, by_size(&COMPLEXES, 2 * size)?, vec![p, r])?;
        Ok(())
    }
}
