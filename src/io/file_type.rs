//! A datatype as a converting data representation lays it out in the file (MPI 4.1 section
//! 14.5.1): every basic element takes its size in the representation (external32: `long` 4
//! bytes, `wchar_t` 2), the displacements that constructors count in elements (contiguous,
//! vector, indexed, indexed_block, subarray, darray: the portable datatypes) scale with the elements,
//! and byte displacements (hvector, hindexed, hindexed_block, struct, resized) are taken as
//! they are, as the standard says. Views in such a representation tile the file with the
//! rebuilt filetype; MPI_File_get_type_extent reports its extent.
use crate::datatype::{self, BuildError, Combiner, LeafKind, Order, TypeRepr};
use crate::error::{err, ErrorClass, MpiResult};
use std::sync::Arc;

fn built(r: Result<TypeRepr, BuildError>) -> MpiResult<Arc<TypeRepr>> {
    let t = r.map_err(|e| err(ErrorClass::Arg, format!("the datatype in the file's representation cannot be built: {e:?}")))?;
    t.commit();
    Ok(Arc::new(t))
}

/// `t` with each basic element `size(leaf)` bytes long in the file; `t` itself where no basic
/// element changes size.
pub fn rebuild(t: &Arc<TypeRepr>, size: &dyn Fn(&TypeRepr) -> u64) -> MpiResult<Arc<TypeRepr>> {
    let e = &t.env;
    if matches!(e.combiner, Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer) {
        let s = size(t);
        if t.leaf_kind != LeafKind::Data || s == t.layout.size as u64 {
            return Ok(t.clone());
        }
        // One block of the element's file size, as long as it (pairs such as MPI_LONG_INT
        // included: their parts are packed in the file).
        let leaf = TypeRepr::leaf(t.leaf_id.unwrap_or(0), LeafKind::Data, &[(0, s as usize)], s as i64, 1, "file element");
        return Ok(Arc::new(leaf));
    }
    let kids = e.types.iter().map(|c| rebuild(c, size)).collect::<MpiResult<Vec<_>>>()?;
    if kids.iter().zip(&e.types).all(|(a, b)| Arc::ptr_eq(a, b)) {
        return Ok(t.clone());
    }
    let old = &kids[0];
    // The arguments in the order of the constructor's int form: the large-count form keeps
    // them all (but subarray's and darray's) in `counts`.
    let v: Vec<i64> = if e.counts.is_empty() { e.ints.iter().chain(&e.addrs).copied().collect() } else { e.counts.clone() };
    let n = |k: usize| v.get(k).copied().unwrap_or(0).max(0) as usize;
    let arg = || err(ErrorClass::Intern, "a datatype's recorded constructor arguments are inconsistent");
    let cut = |a: usize, b: usize| v.get(a..b).ok_or_else(arg);
    match e.combiner {
        Combiner::Dup => Ok(old.clone()),
        Combiner::Contiguous => built(datatype::contiguous(n(0) as u64, old)),
        Combiner::Vector => built(datatype::vector(n(0) as u64, n(1) as u64, v.get(2).copied().ok_or_else(arg)?, old)),
        Combiner::Hvector => built(datatype::hvector(n(0) as u64, n(1) as u64, v.get(2).copied().ok_or_else(arg)?, old)),
        Combiner::Indexed => built(datatype::indexed(cut(1, 1 + n(0))?, cut(1 + n(0), 1 + 2 * n(0))?, old)),
        Combiner::Hindexed => built(datatype::hindexed(cut(1, 1 + n(0))?, cut(1 + n(0), 1 + 2 * n(0))?, old)),
        Combiner::IndexedBlock => built(datatype::indexed_block(n(1) as u64, cut(2, 2 + n(0))?, old)),
        Combiner::HindexedBlock => built(datatype::hindexed_block(n(1) as u64, cut(2, 2 + n(0))?, old)),
        Combiner::Struct => built(datatype::create_struct(cut(1, 1 + n(0))?, cut(1 + n(0), 1 + 2 * n(0))?, &kids)),
        Combiner::Resized => built(datatype::resized(old, v.first().copied().ok_or_else(arg)?, v.get(1).copied().ok_or_else(arg)?)),
        Combiner::Subarray => {
            let d = e.ints.first().copied().unwrap_or(0).max(0) as usize;
            let (dims, order) = if e.counts.is_empty() { (e.ints.get(1..1 + 3 * d), e.ints.get(1 + 3 * d)) } else { (e.counts.get(..3 * d), e.ints.get(1)) };
            let dims = dims.ok_or_else(arg)?;
            let order_value = *order.ok_or_else(arg)?;
            // The values of MPI_ORDER_C and MPI_ORDER_FORTRAN the engine records (MPICH's).
            let order = match order_value {
                56 => Order::C,
                57 => Order::Fortran,
                _ => return Err(arg()),
            };
            built(datatype::subarray(&dims[..d], &dims[d..2 * d], &dims[2 * d..], order, order_value as i32, old))
        }
        // The same distribution of the global array of file elements: the envelope's integers
        // are (size, rank, ndims, gsizes, distribs, dargs, psizes, order) in the values of the
        // MPICH ABI, which every boundary records.
        Combiner::Darray => {
            use datatype::darray::{darray, Darray, Distrib};
            let d = n(2);
            let (size, rank) = (v.first().copied().ok_or_else(arg)?, v.get(1).copied().ok_or_else(arg)?);
            let gsizes = cut(3, 3 + d)?;
            let (distribs, dargs, psizes) = (cut(3 + d, 3 + 2 * d)?, cut(3 + 2 * d, 3 + 3 * d)?, cut(3 + 3 * d, 3 + 4 * d)?);
            let order = match *v.get(3 + 4 * d).ok_or_else(arg)? {
                56 => Order::C,
                57 => Order::Fortran,
                _ => return Err(arg()),
            };
            let dist = distribs
                .iter()
                .zip(dargs)
                .map(|(&k, &a)| {
                    let a = (a != -49767).then_some(a);
                    match k {
                        121 => Ok(Distrib::Block(a)),
                        122 => Ok(Distrib::Cyclic(a)),
                        123 => Ok(Distrib::None),
                        _ => Err(arg()),
                    }
                })
                .collect::<MpiResult<Vec<_>>>()?;
            let spec = Darray { size, rank, gsizes, distribs: &dist, psizes, order, ints: e.ints.clone() };
            let t = darray(&spec, old).map_err(|m| err(ErrorClass::Arg, format!("the darray in the file's representation cannot be built: {m}")))?;
            t.commit();
            Ok(Arc::new(t))
        }
        Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer => unreachable!("handled above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::external32;

    fn leaf(name: &str, size: usize) -> Arc<TypeRepr> {
        Arc::new(TypeRepr::leaf(1, LeafKind::Data, &[(0, size)], size as i64, size, name))
    }
    fn ext32(t: &TypeRepr) -> u64 {
        external32::size_of(t.layout.conv.runs()) * t.layout.conv.reps()
    }
    fn blocks(t: &TypeRepr) -> Vec<(i64, usize)> {
        t.layout.blocks.iter().collect()
    }

    #[test]
    fn portable_types_scale_and_byte_displacements_stay() {
        let long = leaf("MPI_LONG", 8);
        let int = leaf("MPI_INT", 4);
        // vector(3, 1, 2) of long: elements every 2 longs; in the file every 2 * 4 bytes.
        let v = Arc::new(datatype::vector(3, 1, 2, &long).unwrap());
        let f = rebuild(&v, &ext32).unwrap();
        assert_eq!(blocks(&f), vec![(0, 4), (8, 4), (16, 4)]);
        assert_eq!(f.layout.extent(), 20);
        // hvector of long with a 16-byte stride: the stride stays 16 bytes.
        let h = Arc::new(datatype::hvector(2, 1, 16, &long).unwrap());
        assert_eq!(blocks(&rebuild(&h, &ext32).unwrap()), vec![(0, 4), (16, 4)]);
        // Nothing changes size: the very same type.
        let vi = Arc::new(datatype::vector(3, 1, 2, &int).unwrap());
        assert!(Arc::ptr_eq(&rebuild(&vi, &ext32).unwrap(), &vi));
        // A C-order 2 x 4 subarray of 4 x 8 longs starting at (1, 2): rows of 8 file longs.
        let s = Arc::new(datatype::subarray(&[4, 8], &[2, 4], &[1, 2], Order::C, 56, &long).unwrap());
        let f = rebuild(&s, &ext32).unwrap();
        assert_eq!(blocks(&f), vec![(40, 16), (72, 16)]);
        assert_eq!(f.layout.extent(), 128);
        // A struct: its byte displacements stay, its long shrinks.
        let st = Arc::new(datatype::create_struct(&[1, 1], &[0, 8], &[int.clone(), long.clone()]).unwrap());
        assert_eq!(blocks(&rebuild(&st, &ext32).unwrap()), vec![(0, 4), (8, 4)]);
    }
}
