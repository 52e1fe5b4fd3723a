//! Datatype constructors, queries, envelope/contents, names and MPI_Get_address: argument checks
//! and handle conversion around the engine in `crate::datatype`.
//!
//! The constructors and the size and extent queries are families (`ffi/families.rs`): one
//! count-generic core below per MPI_Type_xxx / MPI_Type_xxx_c pair. The engine takes 64-bit
//! counts, block lengths and displacements (with checked arithmetic), so a `_c` constructor passes
//! its own unchanged and records them as large counts in the envelope (`c_form`), which
//! MPI_Type_get_envelope_c / get_contents_c report.
pub mod large_count;
pub mod pack;
pub mod type_attr;
use crate::ffi::check::{self, dtype, register_type};
use crate::ffi::families::CountArg;
use crate::ffi::pointer_args::{c_str, input, out, output};
use crate::abi::*;
use crate::datatype::{self as dt, registry, Combiner, Order, TypeRepr};
use crate::error::{err, MpiResult};
use crate::export;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// A count argument (`int` or MPI_Count), checked non-negative: MPI_ERR_COUNT.
pub(crate) fn count(c: impl Into<i64>, what: &str) -> MpiResult<u64> {
    let c = c.into();
    u64::try_from(c).map_err(|_| err(MPI_ERR_COUNT, format!("invalid {what} {c}: must be non-negative")))
}

/// The number of entries of a constructor's arrays, checked non-negative.
fn length(c: impl CountArg) -> MpiResult<usize> {
    let n = count(c.get(), "count")?;
    usize::try_from(n).map_err(|_| err(MPI_ERR_COUNT, format!("count {n} is too large for an array")))
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

/// `int` or MPI_Count values widened to 64 bits.
pub(crate) fn widen<T: Copy + Into<i64>>(d: &[T]) -> Vec<i64> {
    d.iter().map(|&x| x.into()).collect()
}

/// A constructor's failure as an MPI error: an overflow is a bad argument, an oversized typemap
/// a resource limit.
pub(crate) fn build_error(e: dt::BuildError) -> crate::error::MpiError {
    match e {
        dt::BuildError::Overflow => err(MPI_ERR_ARG, e.to_string()),
        dt::BuildError::TooManyBlocks(_) => err(MPI_ERR_NO_MEM, e.to_string()),
    }
}

/// Registers a new type and writes its handle to `newtype`; a `_c` constructor's (`c_form`)
/// envelope records its arguments as large counts.
///
/// # Safety
/// `newtype` is NULL or writable.
pub(crate) unsafe fn store(t: dt::Built, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let newtype = out(newtype, "newtype")?;
    let mut t = t.map_err(build_error)?;
    if c_form {
        t.env = t.env.into_large();
    }
    let h = register_type(t);
    // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
    unsafe { *newtype = h };
    Ok(())
}

/// Writes a (lower bound, extent) pair to the caller's MPI_Aint or MPI_Count outputs.
///
/// # Safety
/// `a` and `b` are NULL or writable.
pub(crate) unsafe fn write_pair(a: *mut i64, b: *mut i64, x: i64, y: i64) -> MpiResult {
    let (a, b) = (out(a, "lb")?, out(b, "extent")?);
    // SAFETY: non-NULL (`out`); the caller passes the addresses of two MPI_Aint / MPI_Count.
    unsafe {
        *a = x;
        *b = y;
    }
    Ok(())
}

fn order_of(order: c_int) -> MpiResult<Order> {
    match order {
        56 => Ok(Order::C),
        57 => Ok(Order::Fortran),
        _ => Err(err(MPI_ERR_ARG, format!("invalid order {order}: use MPI_ORDER_C or MPI_ORDER_FORTRAN"))),
    }
}

// The cores of the constructor and query families (src/ffi/families.rs). Each takes the C
// arguments of MPI_Type_xxx and MPI_Type_xxx_c; `c_form` says which one the caller used.

/// MPI_Type_contiguous(_c).
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn contiguous(count_: impl CountArg, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = count(count_.get(), "count")?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::contiguous(n, &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_vector(_c).
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn vector<C: CountArg>(count_: C, blocklength: C, stride: C, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = count(count_.get(), "count")?;
    let b = blocklen(blocklength.get())?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::vector(n, b, stride.get(), &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_hvector(_c) and MPI_Type_hvector (stride MPI_Aint or MPI_Count).
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn hvector(count_: impl CountArg, blocklength: impl CountArg, stride: i64, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = count(count_.get(), "count")?;
    let b = blocklen(blocklength.get())?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::hvector(n, b, stride, &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_indexed(_c).
///
/// # Safety
/// Each array is NULL or holds `count_` elements.
pub(in crate::ffi) unsafe fn indexed<C: CountArg>(count_: C, array_of_blocklengths: *const C, array_of_displacements: *const C, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = length(count_)?;
    // SAFETY: both arrays hold `n` elements (this function's contract).
    let (b, d) = unsafe { (input(array_of_blocklengths, n, "array_of_blocklengths")?, input(array_of_displacements, n, "array_of_displacements")?) };
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::indexed(&blocklens(b)?, &widen(d), &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_hindexed(_c) and MPI_Type_hindexed.
///
/// # Safety
/// Each array is NULL or holds `count_` elements.
pub(in crate::ffi) unsafe fn hindexed<C: CountArg>(count_: C, array_of_blocklengths: *const C, array_of_displacements: *const i64, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = length(count_)?;
    // SAFETY: both arrays hold `n` elements (this function's contract).
    let (b, d) = unsafe { (input(array_of_blocklengths, n, "array_of_blocklengths")?, input(array_of_displacements, n, "array_of_displacements")?) };
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::hindexed(&blocklens(b)?, d, &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_indexed_block(_c).
///
/// # Safety
/// `array_of_displacements` is NULL or holds `count_` elements.
pub(in crate::ffi) unsafe fn indexed_block<C: CountArg>(count_: C, blocklength: C, array_of_displacements: *const C, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = length(count_)?;
    let b = blocklen(blocklength.get())?;
    // SAFETY: the array holds `n` elements (this function's contract).
    let d = unsafe { input(array_of_displacements, n, "array_of_displacements")? };
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::indexed_block(b, &widen(d), &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_hindexed_block(_c).
///
/// # Safety
/// `array_of_displacements` is NULL or holds `count_` elements.
pub(in crate::ffi) unsafe fn hindexed_block(count_: impl CountArg, blocklength: impl CountArg, array_of_displacements: *const i64, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = length(count_)?;
    let b = blocklen(blocklength.get())?;
    // SAFETY: the array holds `n` elements (this function's contract).
    let d = unsafe { input(array_of_displacements, n, "array_of_displacements")? };
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::hindexed_block(b, d, &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_struct(_c) and MPI_Type_struct.
///
/// # Safety
/// Each array is NULL or holds `count_` elements.
pub(in crate::ffi) unsafe fn create_struct<C: CountArg>(count_: C, array_of_blocklengths: *const C, array_of_displacements: *const i64, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    let n = length(count_)?;
    // SAFETY: the three arrays hold `n` elements (this function's contract).
    let (b, d, types) = unsafe {
        (input(array_of_blocklengths, n, "array_of_blocklengths")?, input(array_of_displacements, n, "array_of_displacements")?, input(array_of_types, n, "array_of_types")?)
    };
    let b = blocklens(b)?;
    let ts: Vec<Arc<TypeRepr>> = types.iter().map(|&t| dtype(t)).collect::<MpiResult<_>>()?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::create_struct(&b, d, &ts), newtype, c_form) }
}

/// MPI_Type_create_subarray(_c).
///
/// # Safety
/// Each array is NULL or holds `ndims` elements.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn subarray<C: CountArg>(ndims: c_int, array_of_sizes: *const C, array_of_subsizes: *const C, array_of_starts: *const C, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    if ndims <= 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be positive")));
    }
    let n = ndims as usize;
    // SAFETY: the three arrays hold `ndims` elements (this function's contract).
    let (sizes, subs, starts) = unsafe {
        (input(array_of_sizes, n, "array_of_sizes")?, input(array_of_subsizes, n, "array_of_subsizes")?, input(array_of_starts, n, "array_of_starts")?)
    };
    let (sizes, subs, starts) = (widen(sizes), widen(subs), widen(starts));
    for i in 0..n {
        if sizes[i] <= 0 || subs[i] <= 0 || subs[i] > sizes[i] || starts[i] < 0 || starts[i] > sizes[i] - subs[i] {
            return Err(err(MPI_ERR_ARG, format!("invalid subarray dimension {i}: size {}, subsize {}, start {} (need 0 < subsize <= size and 0 <= start <= size - subsize)", sizes[i], subs[i], starts[i])));
        }
    }
    let ord = order_of(order)?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::subarray(&sizes, &subs, &starts, ord, order, &dtype(oldtype)?), newtype, c_form) }
}

/// MPI_Type_create_darray(_c): checks the arguments and builds the type with
/// `crate::datatype::darray`.
///
/// # Safety
/// The array pointers are NULL or hold `ndims` elements each.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn darray<C: CountArg>(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const C, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    use dt::darray::{Darray, Distrib};
    let n = if ndims > 0 { ndims as usize } else { 0 };
    // SAFETY: the array holds `ndims` elements (this function's contract).
    let gsizes = widen(unsafe { input(array_of_gsizes, n, "array_of_gsizes")? });
    if size <= 0 || rank < 0 || rank >= size {
        return Err(err(MPI_ERR_ARG, format!("invalid size {size} / rank {rank}: need 0 <= rank < size")));
    }
    if ndims <= 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid ndims {ndims}: must be positive")));
    }
    // SAFETY: the three arrays hold `ndims` elements (this function's contract).
    let (ds, da, ps) = unsafe {
        (input(array_of_distribs, n, "array_of_distribs")?, input(array_of_dargs, n, "array_of_dargs")?, input(array_of_psizes, n, "array_of_psizes")?)
    };
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
    let ord = order_of(order)?;
    let mut ints = vec![size as i64, rank as i64, ndims as i64];
    ints.extend_from_slice(&gsizes);
    ints.extend(ds.iter().chain(da).chain(ps).map(|&x| x as i64));
    ints.push(order as i64);
    let p: Vec<i64> = widen(ps);
    let d = Darray { size: size as i64, rank: rank as i64, gsizes: &gsizes, distribs: &dist, psizes: &p, order: ord, ints };
    let t = dt::darray::darray(&d, &dtype(oldtype)?).map_err(|m| err(MPI_ERR_ARG, m))?;
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(Ok(t), newtype, c_form) }
}

/// MPI_Type_create_resized(_c): `lb` and `extent` are MPI_Aint or MPI_Count.
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn resized(oldtype: MPI_Datatype, lb: i64, extent: i64, newtype: *mut MPI_Datatype, c_form: bool) -> MpiResult {
    // SAFETY: `newtype` is NULL or writable (this function's contract).
    unsafe { store(dt::resized(&dtype(oldtype)?, lb, extent), newtype, c_form) }
}

/// MPI_Type_size(_c): the int form says MPI_UNDEFINED for a size above INT_MAX (MPI 4.1
/// section 5.1.5).
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn size<C: CountArg>(datatype: MPI_Datatype, size: *mut C) -> MpiResult {
    let s = dtype(datatype)?.layout.size;
    let size = out(size, "size")?;
    // SAFETY: non-NULL (`out`); the caller passes the address of an int / MPI_Count.
    unsafe { *size = C::put_or_undefined(s as i64) };
    Ok(())
}

/// MPI_Type_get_extent(_c) and MPI_Type_get_extent_x (MPI_Aint or MPI_Count outputs).
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn get_extent(datatype: MPI_Datatype, lb: *mut i64, extent: *mut i64) -> MpiResult {
    let t = dtype(datatype)?;
    // SAFETY: the outputs are NULL or writable (this function's contract).
    unsafe { write_pair(lb, extent, t.layout.lb, t.layout.extent()) }
}

/// MPI_Type_get_true_extent(_c) and MPI_Type_get_true_extent_x.
///
/// # Safety
/// The output pointers are NULL or writable.
pub(in crate::ffi) unsafe fn get_true_extent(datatype: MPI_Datatype, true_lb: *mut i64, true_extent: *mut i64) -> MpiResult {
    let t = dtype(datatype)?;
    // SAFETY: the outputs are NULL or writable (this function's contract).
    unsafe { write_pair(true_lb, true_extent, t.layout.true_lb, t.layout.true_extent()) }
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
    // Integer arguments always came from `int` parameters.
    let ints: Vec<c_int> = e.ints.iter().map(|&v| v as c_int).collect();
    let types: Vec<MPI_Datatype> = e.types.iter().map(check::handle_for).collect();
    // SAFETY: the caller's arrays hold max_* >= the lengths checked above (this function's
    // contract); `output` rejects NULL for a non-empty copy.
    unsafe {
        output(array_of_integers, &ints, "array_of_integers")?;
        if let Some((_, p)) = counts {
            output(p, &e.counts, "array_of_large_counts")?;
        }
        output(array_of_addresses, &e.addrs, "array_of_addresses")?;
        output(array_of_datatypes, &types, "array_of_datatypes")?;
    }
    Ok(())
}

/// Writes `v` to the caller's output `p` (NULL: MPI_ERR_ARG naming `what`).
///
/// # Safety
/// `p` is NULL or writable.
unsafe fn put<T>(p: *mut T, v: T, what: &str) -> MpiResult {
    let p = out(p, what)?;
    // SAFETY: non-NULL (`out`) and writable (this function's contract).
    unsafe { *p = v };
    Ok(())
}

/// The predefined pair type (value, index) of MPI_MINLOC / MPI_MAXLOC for value type `value`
/// and index type `index` (MPI 4.1 section 6.9.4), if there is one (handle values of include/mpi.h;
/// the index type is always MPI_INT, 0x4c000405).
fn value_index_pair(value: MPI_Datatype, index: MPI_Datatype) -> Option<MPI_Datatype> {
    const PAIRS: [(MPI_Datatype, MPI_Datatype); 6] = [
        (0x4c00040a, 0x8c000000u32 as i32), // MPI_FLOAT -> MPI_FLOAT_INT
        (0x4c00080b, 0x8c000001u32 as i32), // MPI_DOUBLE_INT
        (0x4c000807, 0x8c000002u32 as i32), // MPI_LONG -> MPI_LONG_INT
        (0x4c000203, 0x8c000003u32 as i32), // MPI_SHORT -> MPI_SHORT_INT
        (0x4c00100c, 0x8c000004u32 as i32), // MPI_LONG_DOUBLE -> MPI_LONG_DOUBLE_INT
        (0x4c000405, 0x4c000816), // MPI_INT -> MPI_2INT
    ];
    if index != 0x4c000405 {
        return None;
    }
    PAIRS.iter().find(|&&(v, _)| v == value).map(|&(_, p)| p)
}

export! {
    /// MPI 4.1: the predefined pair type for `value_type` and `index_type`, MPI_DATATYPE_NULL if
    /// there is none.
    fn MPI_Type_get_value_index / PMPI_Type_get_value_index (value_type: MPI_Datatype, index_type: MPI_Datatype, pair_type: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let o = out(pair_type, "pair_type")?;
        dtype(value_type)?;
        dtype(index_type)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Datatype.
        unsafe { *o = value_index_pair(value_type, index_type).unwrap_or(MPI_DATATYPE_NULL) };
        Ok(())
    }

    /// MPI-1's MPI_Type_hvector (removed in MPI 3.0): MPI_Type_create_hvector's core.
    fn MPI_Type_hvector / PMPI_Type_hvector (count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // SAFETY: `newtype` is NULL or writable (caller contract).
        unsafe { hvector(count_, blocklength, stride, oldtype, newtype, false) }
    }

    /// MPI-1's MPI_Type_hindexed (removed in MPI 3.0): MPI_Type_create_hindexed's core.
    fn MPI_Type_hindexed / PMPI_Type_hindexed (count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // SAFETY: the arrays hold `count_` elements, `newtype` is NULL or writable (caller contract).
        unsafe { hindexed(count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, false) }
    }

    /// MPI-1's MPI_Type_struct (removed in MPI 3.0): MPI_Type_create_struct's core.
    fn MPI_Type_struct / PMPI_Type_struct (count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, array_of_types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // SAFETY: the arrays hold `count_` elements, `newtype` is NULL or writable (caller contract).
        unsafe { create_struct(count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype, false) }
    }

    fn MPI_Type_dup / PMPI_Type_dup (oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let old = dtype(oldtype)?;
        let newtype = out(newtype, "newtype")?;
        let h = register_type(dt::dup(&old));
        // Attribute caching: the copy callbacks of oldtype's attributes (ffi/datatype/type_attr.rs).
        // SAFETY: runs the application's copy callbacks, registered for this type's attributes.
        if let Err(e) = unsafe { crate::ffi::datatype::type_attr::copy_type_attrs(oldtype, h) } {
            registry::remove(handle_index(h));
            return Err(e);
        }
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        unsafe { *newtype = h };
        Ok(())
    }

    fn MPI_Type_commit / PMPI_Type_commit (datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let p = out(datatype, "datatype")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        let h = unsafe { *p };
        dtype(h)?.commit();
        Ok(())
    }

    fn MPI_Type_free / PMPI_Type_free (datatype: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        let p = out(datatype, "datatype")?;
        // SAFETY: non-NULL (`out`); the caller passes the address of a datatype handle.
        let h = unsafe { *p };
        let t = dtype(h)?;
        if t.leaf_id.is_some() || matches!(t.env.combiner, Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer) {
            return Err(err(MPI_ERR_TYPE, format!("cannot free the predefined datatype {}", if t.name().is_empty() { "from MPI_Type_create_f90_*".to_string() } else { t.name() })));
        }
        // Attribute caching: delete callbacks first; if one fails the type stays (ffi/datatype/type_attr.rs).
        // SAFETY: runs the application's delete callbacks, registered for this type's attributes.
        unsafe { crate::ffi::datatype::type_attr::delete_type_attrs(h)? };
        // Types built from this one and operations in flight hold their own reference.
        registry::remove(handle_index(h));
        // SAFETY: as above.
        unsafe { *p = MPI_DATATYPE_NULL };
        Ok(())
    }

    fn MPI_Type_size_x / PMPI_Type_size_x (datatype: MPI_Datatype, size: *mut MPI_Count) on comm MPI_COMM_SELF => {
        let s = dtype(datatype)?.layout.size;
        // SAFETY: the caller passes the address of an MPI_Count (NULL is checked).
        unsafe { put(size, s as MPI_Count, "size") }
    }

    fn MPI_Type_get_extent_x / PMPI_Type_get_extent_x (datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes the addresses of two MPI_Count (NULL is checked).
        unsafe { get_extent(datatype, lb, extent) }
    }

    fn MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x (datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes the addresses of two MPI_Count (NULL is checked).
        unsafe { get_true_extent(datatype, true_lb, true_extent) }
    }

    fn MPI_Type_extent / PMPI_Type_extent (datatype: MPI_Datatype, extent: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        let v = dtype(datatype)?.layout.extent();
        // SAFETY: the caller passes the address of an MPI_Aint (NULL is checked).
        unsafe { put(extent, v, "extent") }
    }

    fn MPI_Type_lb / PMPI_Type_lb (datatype: MPI_Datatype, displacement: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        let v = dtype(datatype)?.layout.lb;
        // SAFETY: the caller passes the address of an MPI_Aint (NULL is checked).
        unsafe { put(displacement, v, "displacement") }
    }

    fn MPI_Type_ub / PMPI_Type_ub (datatype: MPI_Datatype, displacement: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        let v = dtype(datatype)?.layout.ub;
        // SAFETY: the caller passes the address of an MPI_Aint (NULL is checked).
        unsafe { put(displacement, v, "displacement") }
    }

    // MPI_Type_get_envelope(_c) and MPI_Type_get_contents(_c) stay written by hand: the `_c` forms
    // have parameters the int forms lack (num_large_counts, max_large_counts,
    // array_of_large_counts), so they are not variants of one parameter list (ffi/families.rs).
    fn MPI_Type_get_envelope / PMPI_Type_get_envelope (datatype: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        let e = int_envelope(&t)?;
        // SAFETY: the caller passes the addresses of four ints (NULL is checked).
        unsafe {
            put(num_integers, e.ints.len() as c_int, "num_integers")?;
            put(num_addresses, e.addrs.len() as c_int, "num_addresses")?;
            put(num_datatypes, e.types.len() as c_int, "num_datatypes")?;
            put(combiner, combiner_value(e.combiner), "combiner")
        }
    }

    fn MPI_Type_get_contents / PMPI_Type_get_contents (datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        // SAFETY: each array holds its max_* elements (caller contract).
        unsafe { get_contents(datatype, max_integers as i64, max_addresses as i64, max_datatypes as i64, array_of_integers, array_of_addresses, array_of_datatypes, None) }
    }

    fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c (datatype: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count, num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, combiner: *mut c_int) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        let e = &t.env;
        // SAFETY: the caller passes the addresses of four MPI_Count and an int (NULL is checked).
        unsafe {
            put(num_integers, e.ints.len() as MPI_Count, "num_integers")?;
            put(num_addresses, e.addrs.len() as MPI_Count, "num_addresses")?;
            put(num_large_counts, e.counts.len() as MPI_Count, "num_large_counts")?;
            put(num_datatypes, e.types.len() as MPI_Count, "num_datatypes")?;
            put(combiner, combiner_value(e.combiner), "combiner")
        }
    }

    fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c (datatype: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, max_large_counts: MPI_Count, max_datatypes: MPI_Count, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_large_counts: *mut MPI_Count, array_of_datatypes: *mut MPI_Datatype) on comm MPI_COMM_SELF => {
        if max_large_counts < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid max_large_counts {max_large_counts}")));
        }
        // SAFETY: each array holds its max_* elements (caller contract).
        unsafe { get_contents(datatype, max_integers, max_addresses, max_datatypes, array_of_integers, array_of_addresses, array_of_datatypes, Some((max_large_counts, array_of_large_counts))) }
    }

    fn MPI_Type_set_name / PMPI_Type_set_name (datatype: MPI_Datatype, type_name: *const c_char) on comm MPI_COMM_SELF => {
        let t = dtype(datatype)?;
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let mut s = unsafe { c_str(type_name, "type_name")? }.to_string_lossy().into_owned();
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
        // MPI 4.1 section 7.8: the null handle is predefined and has its name.
        let name = if datatype == MPI_DATATYPE_NULL { "MPI_DATATYPE_NULL".to_string() } else { dtype(datatype)?.name() };
        let p = out(type_name, "type_name")?;
        let len = out(resultlen, "resultlen")?;
        // SAFETY: type_name has room for MPI_MAX_OBJECT_NAME chars (caller contract); names are
        // shorter (set_name cuts); both pointers are non-NULL (`out`).
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr() as *const c_char, p, name.len());
            *p.add(name.len()) = 0;
            *len = name.len() as c_int;
        }
        Ok(())
    }

    fn MPI_Get_address / PMPI_Get_address (location: *const c_void, address: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes the address of an MPI_Aint (NULL is checked).
        unsafe { put(address, location as MPI_Aint, "address") }
    }

    fn MPI_Address / PMPI_Address (location: *mut c_void, address: *mut MPI_Aint) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes the address of an MPI_Aint (NULL is checked).
        unsafe { put(address, location as MPI_Aint, "address") }
    }
}
