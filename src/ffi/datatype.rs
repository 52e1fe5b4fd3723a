//! Datatype constructors, queries, envelope/contents, names and MPI_Get_address: argument checks
//! and handle conversion around the engine in `crate::datatype`.
// Not yet annotated for `unsafe_op_in_unsafe_fn` (issue 15): the export bodies dereference
// the caller's pointers without their own `unsafe` blocks.
#![allow(unsafe_op_in_unsafe_fn)]
use super::check::{self, dtype, register_type};
use crate::abi::*;
use crate::datatype::{self as dt, registry, Combiner, Order, TypeRepr};
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

pub(crate) fn out<T>(p: *mut T, what: &str) -> MpiResult<*mut T> {
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    Ok(p)
}

/// A count argument (`int` or MPI_Count), checked non-negative.
pub(crate) fn count(c: impl Into<i64>, what: &str) -> MpiResult<u64> {
    let c = c.into();
    u64::try_from(c).map_err(|_| err(MPI_ERR_COUNT, format!("invalid {what} {c}: must be non-negative")))
}

/// A block length (`int` or MPI_Count), checked non-negative.
pub(crate) fn blocklen(b: impl Into<i64>) -> MpiResult<u64> {
    let b = b.into();
    u64::try_from(b).map_err(|_| err(MPI_ERR_ARG, format!("invalid blocklength {b}: must be non-negative")))
}

/// Block lengths (`int` or MPI_Count) widened to 64 bits, each checked non-negative.
pub(crate) fn blocklens<T: Copy + Into<i64>>(b: &[T]) -> MpiResult<Vec<i64>> {
    b.iter().map(|&x| blocklen(x).map(|v| v as i64)).collect()
}

/// `int` displacements widened to 64 bits.
pub(crate) fn widen(d: &[c_int]) -> Vec<i64> {
    d.iter().map(|&x| x as i64).collect()
}

/// The `n` elements of C array `p` (which may be NULL only when `n` is 0).
pub(crate) unsafe fn array<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: the application passes an array of at least `n` elements, as the MPI call requires.
    Ok(std::slice::from_raw_parts(p, n))
}

/// A constructor's failure as an MPI error: an overflow is a bad argument, an oversized typemap
/// a resource limit.
pub(crate) fn build_error(e: dt::BuildError) -> crate::error::MpiError {
    match e {
        dt::BuildError::Overflow => err(MPI_ERR_ARG, e.to_string()),
        dt::BuildError::TooManyBlocks(_) => err(MPI_ERR_NO_MEM, e.to_string()),
    }
}

pub(crate) unsafe fn store(t: dt::Built, newtype: *mut MPI_Datatype) -> MpiResult {
    let newtype = out(newtype, "newtype")?;
    *newtype = register_type(t.map_err(build_error)?);
    Ok(())
}

unsafe fn hindexed(count_: c_int, blens: *const c_int, displs: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> MpiResult {
    let n = count(count_, "count")? as usize;
    let b = blocklens(array(blens, n, "array_of_blocklengths")?)?;
    let d = array(displs, n, "array_of_displacements")?;
    let old = dtype(old)?;
    store(dt::hindexed(&b, d, &old), newtype)
}

unsafe fn create_struct(count_: c_int, blens: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> MpiResult {
    let n = count(count_, "count")? as usize;
    let b = blocklens(array(blens, n, "array_of_blocklengths")?)?;
    let d = array(displs, n, "array_of_displacements")?;
    let ts: Vec<Arc<TypeRepr>> = array(types, n, "array_of_types")?.iter().map(|&t| dtype(t)).collect::<MpiResult<_>>()?;
    store(dt::create_struct(&b, d, &ts), newtype)
}

pub(crate) unsafe fn write_pair(a: *mut i64, b: *mut i64, x: i64, y: i64) -> MpiResult {
    *out(a, "lb")? = x;
    *out(b, "extent")? = y;
    Ok(())
}

/// MPI_Type_create_darray(_c) once the global sizes are read: checks the arguments and builds the
/// type with `crate::datatype::darray`.
///
/// # Safety
/// The array pointers are NULL or hold `ndims` ints each (the MPI call's contract).
#[allow(clippy::too_many_arguments)]
unsafe fn darray(size: c_int, rank: c_int, ndims: c_int, gsizes: &[i64], distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> MpiResult {
    use dt::darray::{Darray, Distrib};
    if size <= 0 || rank < 0 || rank >= size {
        return Err(err(MPI_ERR_ARG, format!("invalid size {size} / rank {rank}: need 0 <= rank < size")));
    }
    if ndims <= 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be positive")));
    }
    let n = ndims as usize;
    let ds = array(distribs, n, "array_of_distribs")?;
    let da = array(dargs, n, "array_of_dargs")?;
    let ps = array(psizes, n, "array_of_psizes")?;
    let mut dist = Vec::with_capacity(n);
    for i in 0..n {
        let arg = if da[i] == MPI_DISTRIBUTE_DFLT_DARG { None } else { Some(da[i] as i64) };
        dist.push(match ds[i] {
            MPI_DISTRIBUTE_BLOCK => Distrib::Block(arg),
            MPI_DISTRIBUTE_CYCLIC => Distrib::Cyclic(arg),
            MPI_DISTRIBUTE_NONE => Distrib::None,
            d => return Err(err(MPI_ERR_ARG, format!("invalid distribution {d} in dimension {i}: use MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE"))),
        });
    }
    let ord = match order {
        56 => Order::C,
        57 => Order::Fortran,
        _ => return Err(err(MPI_ERR_ARG, format!("invalid order {order}: use MPI_ORDER_C or MPI_ORDER_FORTRAN"))),
    };
    let mut ints = vec![size as i64, rank as i64, ndims as i64];
    ints.extend_from_slice(gsizes);
    ints.extend(ds.iter().chain(da).chain(ps).map(|&x| x as i64));
    ints.push(order as i64);
    let p: Vec<i64> = ps.iter().map(|&x| x as i64).collect();
    let d = Darray { size: size as i64, rank: rank as i64, gsizes, distribs: &dist, psizes: &p, order: ord, ints };
    let mut t = dt::darray::darray(&d, &dtype(oldtype)?).map_err(|m| err(MPI_ERR_ARG, m))?;
    if large {
        t.env = t.env.into_large();
    }
    store(Ok(t), newtype)
}

pub(crate) fn combiner_value(c: Combiner) -> c_int {
    match c {
        Combiner::Named => 1,
        Combiner::Dup => 2,
        Combiner::Contiguous => 3,
        Combiner::Vector => 4,
        Combiner::Hvector => 6,
        Combiner::Indexed => 7,
        Combiner::Hindexed => 9,
        Combiner::IndexedBlock => 10,
        Combiner::Struct => 12,
        Combiner::Subarray => 13,
        Combiner::Darray => 14,
        Combiner::F90Real => 15,
        Combiner::F90Complex => 16,
        Combiner::F90Integer => 17,
        Combiner::Resized => 18,
        Combiner::HindexedBlock => 19,
    }
}

/// The int form of MPI_Type_get_envelope/get_contents has no large-count output, so it cannot
/// describe a type made by a large-count constructor (MPICH fails it too).
fn int_envelope(t: &TypeRepr) -> MpiResult<&dt::Envelope> {
    if !t.env.counts.is_empty() {
        return Err(err(MPI_ERR_TYPE, "the datatype was built by a large-count (_c) constructor: use MPI_Type_get_envelope_c / MPI_Type_get_contents_c"));
    }
    Ok(&t.env)
}

/// MPI_Type_get_contents(_c): copies the constructor arguments of a derived datatype; `counts` is
/// the `_c` form's (max_large_counts, array_of_large_counts), None for the int form.
///
/// # Safety
/// Each array must be NULL or hold its `max_*` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn get_contents(datatype: MPI_Datatype, max_integers: i64, max_addresses: i64, max_datatypes: i64, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype, counts: Option<(i64, *mut MPI_Count)>) -> MpiResult {
    let t = dtype(datatype)?;
    let e = if counts.is_some() { &t.env } else { int_envelope(&t)? };
    if e.combiner == Combiner::Named {
        return Err(err(MPI_ERR_TYPE, format!("{} is a predefined datatype: MPI_Type_get_contents needs a derived one (check the combiner from MPI_Type_get_envelope)", t.name())));
    }
    let max_counts = counts.map_or(0, |c| c.0);
    if max_integers < e.ints.len() as i64 || max_addresses < e.addrs.len() as i64 || max_datatypes < e.types.len() as i64 || max_counts < e.counts.len() as i64 {
        return Err(err(MPI_ERR_ARG, format!("the output arrays are too small: need {} integers, {} addresses, {} large counts, {} datatypes (see MPI_Type_get_envelope)", e.ints.len(), e.addrs.len(), e.counts.len(), e.types.len())));
    }
    // SAFETY (the copies): the caller's arrays hold max_* >= the lengths checked above.
    if !e.ints.is_empty() {
        let p = out(array_of_integers, "array_of_integers")?;
        for (i, &v) in e.ints.iter().enumerate() {
            // Integer arguments always came from `int` parameters.
            *p.add(i) = v as c_int;
        }
    }
    if let (false, Some((_, p))) = (e.counts.is_empty(), counts) {
        std::ptr::copy_nonoverlapping(e.counts.as_ptr(), out(p, "array_of_large_counts")?, e.counts.len());
    }
    if !e.addrs.is_empty() {
        std::ptr::copy_nonoverlapping(e.addrs.as_ptr(), out(array_of_addresses, "array_of_addresses")?, e.addrs.len());
    }
    if !e.types.is_empty() {
        let p = out(array_of_datatypes, "array_of_datatypes")?;
        for (i, ty) in e.types.iter().enumerate() {
            *p.add(i) = check::handle_for(ty);
        }
    }
    Ok(())
}

export! {
    fn MPI_Type_contiguous / PMPI_Type_contiguous (count_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        store(dt::contiguous(n, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_vector / PMPI_Type_vector (count_: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        store(dt::vector(n, b, stride as i64, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_create_hvector / PMPI_Type_create_hvector (count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        store(dt::hvector(n, b, stride, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_hvector / PMPI_Type_hvector (count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        store(dt::hvector(n, b, stride, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_indexed / PMPI_Type_indexed (count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")? as usize;
        let b = blocklens(array(array_of_blocklengths, n, "array_of_blocklengths")?)?;
        let d = widen(array(array_of_displacements, n, "array_of_displacements")?);
        store(dt::indexed(&b, &d, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_create_hindexed / PMPI_Type_create_hindexed (count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        hindexed(count_, array_of_blocklengths, array_of_displacements, oldtype, newtype)
    }

    fn MPI_Type_hindexed / PMPI_Type_hindexed (count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        hindexed(count_, array_of_blocklengths, array_of_displacements, oldtype, newtype)
    }

    fn MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block (count_: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        let d = widen(array(array_of_displacements, n as usize, "array_of_displacements")?);
        store(dt::indexed_block(b, &d, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_create_hindexed_block / PMPI_Type_create_hindexed_block (count_: c_int, blocklength: c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = count(count_, "count")?;
        let b = blocklen(blocklength)?;
        let d = array(array_of_displacements, n as usize, "array_of_displacements")?;
        store(dt::hindexed_block(b, d, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_create_struct / PMPI_Type_create_struct (count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        create_struct(count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype)
    }

    fn MPI_Type_struct / PMPI_Type_struct (count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, array_of_types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        create_struct(count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype)
    }

    fn MPI_Type_create_subarray / PMPI_Type_create_subarray (ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
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
        store(dt::subarray(&widen(sizes), &widen(subs), &widen(starts), ord, order, &dtype(oldtype)?), newtype)
    }

    fn MPI_Type_create_darray / PMPI_Type_create_darray (size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = if ndims > 0 { ndims as usize } else { 0 };
        let g: Vec<i64> = array(array_of_gsizes, n, "array_of_gsizes")?.iter().map(|&x| x as i64).collect();
        darray(size, rank, ndims, &g, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype, false)
    }

    fn MPI_Type_create_darray_c / PMPI_Type_create_darray_c (size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const MPI_Count, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let n = if ndims > 0 { ndims as usize } else { 0 };
        let g = array(array_of_gsizes, n, "array_of_gsizes")?.to_vec();
        darray(size, rank, ndims, &g, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype, true)
    }

    fn MPI_Type_create_resized / PMPI_Type_create_resized (oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        store(dt::resized(&dtype(oldtype)?, lb, extent), newtype)
    }

    fn MPI_Type_dup / PMPI_Type_dup (oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let old = dtype(oldtype)?;
        let newtype = out(newtype, "newtype")?;
        let h = register_type(dt::dup(&old));
        // Attribute caching: the copy callbacks of oldtype's attributes (ffi/type_attr.rs).
        if let Err(e) = super::type_attr::copy_type_attrs(oldtype, h) {
            registry::remove(handle_index(h));
            return Err(e);
        }
        *newtype = h;
        Ok(())
    }

    fn MPI_Type_commit / PMPI_Type_commit (datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let p = out(datatype, "datatype")?;
        dtype(*p)?.commit();
        Ok(())
    }

    fn MPI_Type_free / PMPI_Type_free (datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let p = out(datatype, "datatype")?;
        let t = dtype(*p)?;
        if t.leaf_id.is_some() || matches!(t.env.combiner, Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer) {
            return Err(err(MPI_ERR_TYPE, format!("cannot free the predefined datatype {}", if t.name().is_empty() { "from MPI_Type_create_f90_*".to_string() } else { t.name() })));
        }
        // Attribute caching: delete callbacks first; if one fails the type stays (ffi/type_attr.rs).
        super::type_attr::delete_type_attrs(*p)?;
        // Types built from this one and operations in flight hold their own reference.
        registry::remove(handle_index(*p));
        *p = MPI_DATATYPE_NULL;
        Ok(())
    }

    fn MPI_Type_size / PMPI_Type_size (datatype: MPI_Datatype, size: *mut c_int) on comm MPI_COMM_SELF => {
        let s = dtype(datatype)?.layout.size;
        *out(size, "size")? = c_int::try_from(s).unwrap_or(MPI_UNDEFINED);
        Ok(())
    }

    fn MPI_Type_size_x / PMPI_Type_size_x (datatype: MPI_Datatype, size: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let s = dtype(datatype)?.layout.size;
        *out(size, "size")? = s as MPI_Count;
        Ok(())
    }

    fn MPI_Type_get_extent / PMPI_Type_get_extent (datatype: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(lb, extent, t.layout.lb, t.layout.extent())
    }

    fn MPI_Type_get_extent_x / PMPI_Type_get_extent_x (datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(lb, extent, t.layout.lb, t.layout.extent())
    }

    fn MPI_Type_get_true_extent / PMPI_Type_get_true_extent (datatype: MPI_Datatype, true_lb: *mut MPI_Aint, true_extent: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(true_lb, true_extent, t.layout.true_lb, t.layout.true_extent())
    }

    fn MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x (datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        write_pair(true_lb, true_extent, t.layout.true_lb, t.layout.true_extent())
    }

    fn MPI_Type_extent / PMPI_Type_extent (datatype: MPI_Datatype, extent: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        *out(extent, "extent")? = dtype(datatype)?.layout.extent();
        Ok(())
    }

    fn MPI_Type_lb / PMPI_Type_lb (datatype: MPI_Datatype, displacement: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        *out(displacement, "displacement")? = dtype(datatype)?.layout.lb;
        Ok(())
    }

    fn MPI_Type_ub / PMPI_Type_ub (datatype: MPI_Datatype, displacement: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        *out(displacement, "displacement")? = dtype(datatype)?.layout.ub;
        Ok(())
    }

    fn MPI_Type_get_envelope / PMPI_Type_get_envelope (datatype: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        let e = int_envelope(&t)?;
        *out(num_integers, "num_integers")? = e.ints.len() as c_int;
        *out(num_addresses, "num_addresses")? = e.addrs.len() as c_int;
        *out(num_datatypes, "num_datatypes")? = e.types.len() as c_int;
        *out(combiner, "combiner")? = combiner_value(e.combiner);
        Ok(())
    }

    fn MPI_Type_get_contents / PMPI_Type_get_contents (datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        get_contents(datatype, max_integers as i64, max_addresses as i64, max_datatypes as i64, array_of_integers, array_of_addresses, array_of_datatypes, None)
    }

    fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c (datatype: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count, num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, combiner: *mut c_int) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        let e = &t.env;
        *out(num_integers, "num_integers")? = e.ints.len() as MPI_Count;
        *out(num_addresses, "num_addresses")? = e.addrs.len() as MPI_Count;
        *out(num_large_counts, "num_large_counts")? = e.counts.len() as MPI_Count;
        *out(num_datatypes, "num_datatypes")? = e.types.len() as MPI_Count;
        *out(combiner, "combiner")? = combiner_value(e.combiner);
        Ok(())
    }

    fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c (datatype: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, max_large_counts: MPI_Count, max_datatypes: MPI_Count, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_large_counts: *mut MPI_Count, array_of_datatypes: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        if max_large_counts < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid max_large_counts {max_large_counts}")));
        }
        get_contents(datatype, max_integers, max_addresses, max_datatypes, array_of_integers, array_of_addresses, array_of_datatypes, Some((max_large_counts, array_of_large_counts)))
    }

    fn MPI_Type_set_name / PMPI_Type_set_name (datatype: MPI_Datatype, type_name: *const c_char) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        if type_name.is_null() {
            return Err(err(MPI_ERR_ARG, "type_name is NULL"));
        }
        let s = std::ffi::CStr::from_ptr(type_name).to_string_lossy();
        let mut s = s.into_owned();
        if s.len() > MPI_MAX_OBJECT_NAME - 1 {
            let mut cut = MPI_MAX_OBJECT_NAME - 1;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
        }
        t.set_name(&s);
        Ok(())
    }

    fn MPI_Type_get_name / PMPI_Type_get_name (datatype: MPI_Datatype, type_name: *mut c_char, resultlen: *mut c_int) on comm MPI_COMM_SELF => {
        let name = dtype(datatype)?.name();
        let p = out(type_name, "type_name")?;
        let len = out(resultlen, "resultlen")?;
        // SAFETY: type_name has room for MPI_MAX_OBJECT_NAME chars; names are shorter (set_name cuts).
        std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, p, name.len());
        *p.add(name.len()) = 0;
        *len = name.len() as c_int;
        Ok(())
    }

    fn MPI_Get_address / PMPI_Get_address (location: *const c_void, address: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        *out(address, "address")? = location as MPI_Aint;
        Ok(())
    }

    fn MPI_Address / PMPI_Address (location: *mut c_void, address: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        *out(address, "address")? = location as MPI_Aint;
        Ok(())
    }
}
