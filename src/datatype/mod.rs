//! The derived-datatype engine: type layouts, their constructors, and pack/unpack between a typed
//! buffer and a contiguous byte stream. Knows nothing of C: the FFI layer turns handles into
//! `Arc<TypeRepr>` (predefined types are leaves built with [`TypeRepr::leaf`]) and back.
//!
//! A layout is a *flattened typemap*: the contiguous byte blocks `(offset, len)` one element covers,
//! in typemap order (the order pack writes them), adjacent blocks merged. That makes pack/unpack a
//! walk over a flat list with no recursion and no allocation, and lets a stream position be found
//! by binary search (streaming/partial pack). The list is kept compactly as a tile repeated at a
//! stride ([`blocks::Blocks`]), so a vector of any count costs one block. Bounds follow MPI 4.1 section 5.1 plus the MPI-1
//! sticky `MPI_LB`/`MPI_UB` markers and MPICH's struct alignment padding.
pub mod basic;
pub mod blocks;
pub mod darray;
pub mod external32;
pub mod pieces;
pub mod registry;
pub mod runs;
#[cfg(test)]
pub(crate) mod tests;

use blocks::{Blocks, Cursor};
use runs::Runs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How a type was constructed (MPI_Type_get_envelope's combiner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    F90Real,
    F90Complex,
    F90Integer,
    Resized,
}

/// The arguments a type was constructed with, as MPI_Type_get_contents(_c) returns them. The
/// `int` constructors fill `ints` (whose values then fit an `int`) and `addrs`; the large-count
/// (`_c`) ones move their MPI_Count arguments to `counts` ([`Envelope::into_large`]).
#[derive(Clone, Debug)]
pub struct Envelope {
    pub combiner: Combiner,
    pub ints: Vec<i64>,
    pub addrs: Vec<i64>,
    pub counts: Vec<i64>,
    pub types: Vec<Arc<TypeRepr>>,
}

impl Envelope {
    /// The envelope of the same constructor's large-count form (MPI 4.1 section 5.1.13, the
    /// `c[]` column): every MPI_Count argument in order goes to the large counts; subarray keeps
    /// ndims and order as integers, darray everything but the global sizes.
    pub fn into_large(mut self) -> Envelope {
        match self.combiner {
            Combiner::Subarray => {
                let n = self.ints[0] as usize;
                self.counts = self.ints.drain(1..1 + 3 * n).collect();
            }
            Combiner::Darray => {
                let n = self.ints[2] as usize;
                self.counts = self.ints.drain(3..3 + n).collect();
            }
            _ => {
                self.counts = std::mem::take(&mut self.ints);
                self.counts.append(&mut self.addrs);
            }
        }
        self
    }
}

/// Why a constructor cannot build a type: its displacements, bounds or size overflow 64 bits, or
/// its flattened typemap would be too large to hold (the FFI layer reports ErrorClass::Arg / _NO_MEM).
#[derive(Debug, PartialEq, Eq)]
pub enum BuildError {
    Overflow,
    TooManyBlocks(u64),
}

/// Tiles of flattened typemaps (and run lists) longer than this are refused instead of exhausting
/// memory (16 bytes a block); a repetition of a tile costs nothing more.
pub const MAX_BLOCKS: u64 = 1 << 25;

pub type Built = Result<TypeRepr, BuildError>;

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            BuildError::Overflow => write!(f, "the type's displacements, bounds or size overflow 64 bits"),
            BuildError::TooManyBlocks(n) => write!(f, "the type's repeated unit (tile) would have {n} non-contiguous pieces, more than the {MAX_BLOCKS} oxmpi holds"),
        }
    }
}

impl From<BuildError> for String {
    fn from(e: BuildError) -> String {
        e.to_string()
    }
}

/// What a leaf (predefined type) is; markers carry no data but set sticky bounds in a struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafKind {
    Data,
    LbMarker,
    UbMarker,
}

/// The memory layout of one element of a type.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Bytes of data in one element.
    pub size: usize,
    pub lb: i64,
    pub ub: i64,
    /// Whether lb/ub come from (sticky) markers: MPI_LB/MPI_UB or MPI_Type_create_resized.
    pub lb_sticky: bool,
    pub ub_sticky: bool,
    /// Bounds of the bytes actually covered (0/0 for a type without data).
    pub true_lb: i64,
    pub true_ub: i64,
    /// Alignment used to pad struct extents (MPICH: largest basic-type alignment inside).
    pub align: usize,
    /// The flattened typemap: (offset from the buffer address, length), merged where adjacent,
    /// as a tile repeated at a stride.
    pub blocks: Blocks,
    /// Basic elements in typemap order, run-length encoded: (size of the basic type, how many).
    pub basics: Runs<usize>,
    /// The same basic elements with their external32 conversion (MPI_Pack_external), run-length
    /// encoded; kept apart from `basics` because a complex is one element but two swapped halves.
    pub conv: Runs<external32::Conv>,
}

impl Layout {
    pub fn extent(&self) -> i64 {
        self.ub - self.lb
    }
    pub fn true_extent(&self) -> i64 {
        self.true_ub - self.true_lb
    }
    /// Number of basic elements in one element.
    pub fn basic_count(&self) -> u64 {
        self.basics.runs().iter().map(|b| b.1).sum::<u64>() * self.basics.reps()
    }
    /// If `count` elements occupy one contiguous byte range, its (offset, length): the fast path
    /// that lets pack/unpack and communication use a plain copy.
    pub fn contiguous_span(&self, count: usize) -> Option<(i64, usize)> {
        if self.size == 0 || count == 0 {
            return Some((0, 0));
        }
        if self.blocks.len() == 1 && (count == 1 || self.extent() == self.size as i64) {
            return Some((self.blocks.get(0).0, self.size * count));
        }
        None
    }
    /// Number of whole basic elements in the first `bytes` packed bytes of a stream of this type
    /// (a trailing partial basic element is not counted, as in MPICH), or None for a type without
    /// data and a non-zero byte count (MPI_Get_elements returns MPI_UNDEFINED then).
    pub fn basic_elements_in(&self, bytes: u64) -> Option<u64> {
        if self.size == 0 {
            return if bytes == 0 { Some(0) } else { None };
        }
        let whole = bytes / self.size as u64;
        let mut rest = bytes % self.size as u64;
        let mut n = whole * self.basic_count();
        // Whole repetitions of the runs, then the runs of the last, partial one.
        let reps = self.basics.reps();
        let rep_bytes = self.size as u64 / reps;
        n += rest / rep_bytes * (self.basic_count() / reps);
        rest %= rep_bytes;
        for &(s, k) in self.basics.runs() {
            let take = (rest / s as u64).min(k);
            n += take;
            rest -= take * s as u64;
            if take < k {
                break;
            }
        }
        Some(n)
    }
}

/// A datatype: its layout, how it was built, its committed flag and name. Shared (`Arc`) between
/// the handle table, the types built from it and operations in flight, so freeing a handle never
/// invalidates a type still in use.
#[derive(Debug)]
pub struct TypeRepr {
    pub layout: Layout,
    pub env: Envelope,
    /// For a predefined type, the value the FFI layer identifies it by (its handle).
    pub leaf_id: Option<i32>,
    pub leaf_kind: LeafKind,
    committed: AtomicBool,
    name: Mutex<String>,
}

impl TypeRepr {
    fn new(layout: Layout, env: Envelope) -> TypeRepr {
        TypeRepr { layout, env, leaf_id: None, leaf_kind: LeafKind::Data, committed: AtomicBool::new(false), name: Mutex::new(String::new()) }
    }

    /// A predefined type: `parts` are its basic components (offset, size) (two for the C pair
    /// types), `extent` its extent including padding. Leaves are committed.
    pub fn leaf(id: i32, kind: LeafKind, parts: &[(i64, usize)], extent: i64, align: usize, name: &str) -> TypeRepr {
        let mut b = Builder::default();
        for &(o, s) in parts {
            b.blocks.push(o, s).expect("predefined types are small");
            // MPI_2INT, MPI_2REAL... are pairs: two basic elements each (as MPICH counts them).
            let halves = name.starts_with("MPI_2") && s % 2 == 0;
            let (bs, bn) = if halves { (s / 2, 2) } else { (s, 1) };
            b.basics.push(bs, bn).expect("predefined types are small");
            b.conv.push(external32::Conv::for_leaf(name, s), 1).expect("predefined types are small");
            b.size += s;
            b.true_lb = Some(b.true_lb.map_or(o, |t: i64| t.min(o)));
            b.true_ub = Some(b.true_ub.map_or(o + s as i64, |t: i64| t.max(o + s as i64)));
        }
        b.nat_lb = Some(0);
        b.nat_ub = Some(extent);
        b.align = align.max(1);
        let env = Envelope { combiner: Combiner::Named, ints: vec![], addrs: vec![], counts: vec![], types: vec![] };
        let mut t = TypeRepr::new(b.finish(false).expect("predefined types are small"), env);
        t.leaf_id = Some(id);
        t.leaf_kind = kind;
        t.committed = AtomicBool::new(true);
        *t.name.get_mut().unwrap() = name.to_string();
        t
    }

    pub fn is_committed(&self) -> bool {
        self.committed.load(Ordering::Acquire)
    }
    pub fn commit(&self) {
        self.committed.store(true, Ordering::Release)
    }
    pub fn name(&self) -> String {
        self.name.lock().unwrap().clone()
    }
    pub fn set_name(&self, n: &str) {
        *self.name.lock().unwrap() = n.to_string()
    }
}

/// Accumulates the instances of child types that make up a new type, computing bounds (MPI-1
/// sticky-marker rules) and the merged flattened typemap.
#[derive(Default)]
struct Builder {
    size: usize,
    nat_lb: Option<i64>,
    nat_ub: Option<i64>,
    st_lb: Option<i64>,
    st_ub: Option<i64>,
    true_lb: Option<i64>,
    true_ub: Option<i64>,
    align: usize,
    blocks: Blocks,
    basics: Runs<usize>,
    conv: Runs<external32::Conv>,
    error: Option<BuildError>,
}

fn min_opt(a: Option<i64>, b: i64) -> Option<i64> {
    Some(a.map_or(b, |a| a.min(b)))
}
fn max_opt(a: Option<i64>, b: i64) -> Option<i64> {
    Some(a.map_or(b, |a| a.max(b)))
}

impl Builder {
    /// Adds `reps` consecutive copies of `child` (each `child.extent()` apart) starting at `shift`.
    /// Arithmetic is checked: a result beyond 64 bits records [`BuildError::Overflow`].
    fn add(&mut self, child: &TypeRepr, shift: i64, reps: u64) {
        self.add_strided(&child.layout, child.leaf_kind, shift, reps, child.layout.extent());
    }

    /// Adds `reps` copies of a `kind` element of layout `c`, the k-th at `shift + k * step`.
    fn add_strided(&mut self, c: &Layout, kind: LeafKind, shift: i64, reps: u64, step: i64) {
        if self.error.is_none() {
            if let Err(e) = self.try_add(c, kind, shift, reps, step) {
                self.error = Some(e);
            }
        }
    }

    fn try_add(&mut self, c: &Layout, kind: LeafKind, shift: i64, reps: u64, step: i64) -> Result<(), BuildError> {
        use BuildError::Overflow;
        if reps == 0 {
            return Ok(());
        }
        match kind {
            LeafKind::LbMarker => {
                self.st_lb = min_opt(self.st_lb, shift);
                return Ok(());
            }
            LeafKind::UbMarker => {
                self.st_ub = max_opt(self.st_ub, shift);
                return Ok(());
            }
            LeafKind::Data => {}
        }
        let reps_i = i64::try_from(reps).map_err(|_| Overflow)?;
        let last = (reps_i - 1).checked_mul(step).and_then(|x| x.checked_add(shift)).ok_or(Overflow)?;
        let (lo, hi) = (shift.min(last), shift.max(last));
        let at = |base: i64, off: i64| base.checked_add(off).ok_or(Overflow);
        if c.lb_sticky {
            self.st_lb = min_opt(self.st_lb, at(lo, c.lb)?);
        } else {
            self.nat_lb = min_opt(self.nat_lb, at(lo, c.lb)?);
        }
        if c.ub_sticky {
            self.st_ub = max_opt(self.st_ub, at(hi, c.ub)?);
        } else {
            self.nat_ub = max_opt(self.nat_ub, at(hi, c.ub)?);
        }
        self.align = self.align.max(c.align);
        if c.size == 0 {
            return Ok(());
        }
        self.true_lb = min_opt(self.true_lb, at(lo, c.true_lb)?);
        self.true_ub = max_opt(self.true_ub, at(hi, c.true_ub)?);
        let bytes = (c.size as u64).checked_mul(reps).ok_or(Overflow)?;
        self.size = u64::try_from(self.size).ok().and_then(|s| s.checked_add(bytes)).filter(|&s| s <= i64::MAX as u64).ok_or(Overflow)? as usize;
        self.blocks.repeat(&c.blocks, shift, reps, step)?;
        self.basics.repeat(&c.basics, reps)?;
        self.conv.repeat(&c.conv, reps)?;
        Ok(())
    }

    /// The finished layout; `pad` applies MPICH's struct rule: without sticky markers the extent
    /// is rounded up to a multiple of the largest alignment inside.
    fn finish(self, pad: bool) -> Result<Layout, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let lb = self.st_lb.or(self.nat_lb).unwrap_or(0);
        // No data and no MPI_UB marker (a struct of MPI_LB markers only): the upper bound is 0, as
        // the lower bound is without MPI_LB markers (MPICH: MPI_LB at -10 alone has extent 10).
        let mut ub = self.st_ub.or(self.nat_ub).unwrap_or(0);
        if pad && self.st_lb.is_none() && self.st_ub.is_none() && self.align > 1 {
            let ext = ub - lb;
            let a = self.align as i64;
            if ext > 0 && ext % a != 0 {
                ub = ub.checked_add(a - ext % a).ok_or(BuildError::Overflow)?;
            }
        }
        ub.checked_sub(lb).ok_or(BuildError::Overflow)?;
        Ok(Layout {
            size: self.size,
            lb,
            ub,
            lb_sticky: self.st_lb.is_some(),
            ub_sticky: self.st_ub.is_some(),
            true_lb: self.true_lb.unwrap_or(0),
            true_ub: self.true_ub.unwrap_or(0),
            align: self.align.max(1),
            blocks: self.blocks,
            basics: self.basics,
            conv: self.conv,
        })
    }
}

fn env(combiner: Combiner, ints: Vec<i64>, addrs: Vec<i64>, types: Vec<Arc<TypeRepr>>) -> Envelope {
    Envelope { combiner, ints, addrs, counts: vec![], types }
}

/// Generic constructor core: blocks (displacement in bytes, blocklength) of one child type.
fn blocks_of(child: &Arc<TypeRepr>, blocks: impl Iterator<Item = Result<(i64, u64), BuildError>>, e: Envelope) -> Built {
    let mut b = Builder::default();
    for blk in blocks {
        let (d, n) = blk?;
        b.add(child, d, n);
        if b.error.is_some() {
            break;
        }
    }
    Ok(TypeRepr::new(b.finish(false)?, e))
}

/// `a * b * c` in 64 bits, or [`BuildError::Overflow`].
fn mul3(a: i64, b: i64, c: i64) -> Result<i64, BuildError> {
    a.checked_mul(b).and_then(|x| x.checked_mul(c)).ok_or(BuildError::Overflow)
}

// ---- constructors (arguments already validated by the caller: counts and block lengths
// non-negative). Counts are 64-bit so the large-count (`_c`) forms share them. ----

pub fn contiguous(count: u64, old: &Arc<TypeRepr>) -> Built {
    blocks_of(old, std::iter::once(Ok((0, count))), env(Combiner::Contiguous, vec![count as i64], vec![], vec![old.clone()]))
}

pub fn vector(count: u64, blocklen: u64, stride: i64, old: &Arc<TypeRepr>) -> Built {
    let ext = old.layout.extent();
    let e = env(Combiner::Vector, vec![count as i64, blocklen as i64, stride], vec![], vec![old.clone()]);
    strided(count, blocklen, stride.checked_mul(ext).ok_or(BuildError::Overflow)?, old, e)
}

pub fn hvector(count: u64, blocklen: u64, stride: i64, old: &Arc<TypeRepr>) -> Built {
    let e = env(Combiner::Hvector, vec![count as i64, blocklen as i64], vec![stride], vec![old.clone()]);
    strided(count, blocklen, stride, old, e)
}

/// `count` blocks of `blocklen` copies of `old`, `stride` bytes apart. Blocks that abut (stride =
/// blocklen * extent) are the same typemap as one block of count * blocklen copies, built in one
/// step: a 2^32-element vector or darray dimension must not cost 2^32 iterations.
fn strided(count: u64, blocklen: u64, stride: i64, old: &Arc<TypeRepr>, e: Envelope) -> Built {
    let abut = i64::try_from(blocklen).ok().and_then(|b| b.checked_mul(old.layout.extent())) == Some(stride);
    if count > 1 && abut {
        let n = count.checked_mul(blocklen).ok_or(BuildError::Overflow)?;
        return blocks_of(old, std::iter::once(Ok((0, n))), e);
    }
    if count <= 1 || old.leaf_kind != LeafKind::Data {
        // (A vector of MPI_LB/MPI_UB markers: a few sticky bounds, no data.)
        return blocks_of(old, (0..count as i64).map(|i| Ok((mul3(i, stride, 1)?, blocklen))), e);
    }
    // One block of the vector, repeated count times: a compact typemap (see `blocks`).
    let one = blocks_of(old, std::iter::once(Ok((0, blocklen))), e.clone())?;
    let mut b = Builder::default();
    b.add_strided(&one.layout, LeafKind::Data, 0, count, stride);
    Ok(TypeRepr::new(b.finish(false)?, e))
}

pub fn indexed(blocklens: &[i64], displs: &[i64], old: &Arc<TypeRepr>) -> Built {
    let ext = old.layout.extent();
    let mut ints = vec![blocklens.len() as i64];
    ints.extend_from_slice(blocklens);
    ints.extend_from_slice(displs);
    let e = env(Combiner::Indexed, ints, vec![], vec![old.clone()]);
    blocks_of(old, displs.iter().zip(blocklens).map(|(&d, &n)| Ok((mul3(d, ext, 1)?, n as u64))), e)
}

pub fn hindexed(blocklens: &[i64], displs: &[i64], old: &Arc<TypeRepr>) -> Built {
    let mut ints = vec![blocklens.len() as i64];
    ints.extend_from_slice(blocklens);
    let e = env(Combiner::Hindexed, ints, displs.to_vec(), vec![old.clone()]);
    blocks_of(old, displs.iter().zip(blocklens).map(|(&d, &n)| Ok((d, n as u64))), e)
}

pub fn indexed_block(blocklen: u64, displs: &[i64], old: &Arc<TypeRepr>) -> Built {
    let ext = old.layout.extent();
    let mut ints = vec![displs.len() as i64, blocklen as i64];
    ints.extend_from_slice(displs);
    let e = env(Combiner::IndexedBlock, ints, vec![], vec![old.clone()]);
    blocks_of(old, displs.iter().map(|&d| Ok((mul3(d, ext, 1)?, blocklen))), e)
}

pub fn hindexed_block(blocklen: u64, displs: &[i64], old: &Arc<TypeRepr>) -> Built {
    let e = env(Combiner::HindexedBlock, vec![displs.len() as i64, blocklen as i64], displs.to_vec(), vec![old.clone()]);
    blocks_of(old, displs.iter().map(|&d| Ok((d, blocklen))), e)
}

pub fn create_struct(blocklens: &[i64], displs: &[i64], types: &[Arc<TypeRepr>]) -> Built {
    let mut b = Builder::default();
    for ((&n, &d), t) in blocklens.iter().zip(displs).zip(types) {
        b.add(t, d, n as u64);
    }
    let mut ints = vec![blocklens.len() as i64];
    ints.extend_from_slice(blocklens);
    Ok(TypeRepr::new(b.finish(true)?, env(Combiner::Struct, ints, displs.to_vec(), types.to_vec())))
}

pub fn resized(old: &Arc<TypeRepr>, lb: i64, extent: i64) -> Built {
    let mut l = old.layout.clone();
    l.lb = lb;
    l.ub = lb.checked_add(extent).ok_or(BuildError::Overflow)?;
    l.lb_sticky = true;
    l.ub_sticky = true;
    Ok(TypeRepr::new(l, env(Combiner::Resized, vec![], vec![lb, extent], vec![old.clone()])))
}

pub fn dup(old: &Arc<TypeRepr>) -> TypeRepr {
    let t = TypeRepr::new(old.layout.clone(), env(Combiner::Dup, vec![], vec![], vec![old.clone()]));
    if old.is_committed() {
        t.commit();
    }
    t
}

/// Array order of MPI_Type_create_subarray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    C,
    Fortran,
}

/// MPI_Type_create_subarray: an `ndims`-dimensional sub-block of a full array; lb 0 and the extent
/// of the full array, as the standard prescribes. Built as nested hvectors placed at the start
/// offset and resized. `order_value` is the caller's encoding of `order`, kept for the envelope.
pub fn subarray(sizes: &[i64], subsizes: &[i64], starts: &[i64], order: Order, order_value: i32, old: &Arc<TypeRepr>) -> Built {
    let n = sizes.len();
    let ext = old.layout.extent();
    // Dimensions from fastest- to slowest-varying.
    let dims: Vec<usize> = match order {
        Order::C => (0..n).rev().collect(),
        Order::Fortran => (0..n).collect(),
    };
    let mut t = old.clone();
    let mut stride = ext;
    let mut disp = 0i64;
    for &d in &dims {
        t = Arc::new(hvector(subsizes[d] as u64, 1, stride, &t)?);
        disp = disp.checked_add(mul3(starts[d], stride, 1)?).ok_or(BuildError::Overflow)?;
        stride = mul3(stride, sizes[d], 1)?;
    }
    let placed = Arc::new(hindexed(&[1], &[disp], &t)?);
    let mut r = resized(&placed, 0, stride)?;
    let mut ints = vec![n as i64];
    ints.extend_from_slice(sizes);
    ints.extend_from_slice(subsizes);
    ints.extend_from_slice(starts);
    ints.push(order_value as i64);
    r.env = env(Combiner::Subarray, ints, vec![], vec![old.clone()]);
    Ok(r)
}

// ---- pack / unpack ----

/// Copies between `count` elements of a typed buffer at `typed` and the packed stream bytes
/// `[start, start + stream.len())` (clamped to the `count * size` bytes there are); `pack` says the
/// direction. Returns the number of stream bytes copied. No allocation; contiguous types are one copy.
///
/// # Safety
/// Every byte the typemap of `count` elements covers, relative to `typed`, must be valid for reads
/// (pack) or writes (unpack), and must not overlap `stream`.
pub unsafe fn copy(l: &Layout, typed: *mut u8, count: usize, stream: *mut u8, stream_len: usize, start: usize, pack: bool) -> usize {
    let total = l.size * count;
    if start >= total {
        return 0;
    }
    let end = total.min(start + stream_len);
    let mv = |mem: *mut u8, s: *mut u8, n: usize| {
        // SAFETY: the caller guarantees both ranges are valid and disjoint.
        unsafe {
            if pack {
                std::ptr::copy_nonoverlapping(mem, s, n)
            } else {
                std::ptr::copy_nonoverlapping(s, mem, n)
            }
        }
    };
    if let Some((off, _)) = l.contiguous_span(count) {
        // SAFETY: the span lies inside the typemap of `count` elements at `typed` (caller contract).
        mv(unsafe { typed.offset(off as isize + start as isize) }, stream, end - start);
        return end - start;
    }
    let mut pos = start;
    let mut cur = Cursor::at(&l.blocks, l.extent(), start);
    let (tile, ts) = (l.blocks.tile(), l.blocks.tile_size());
    while pos < end {
        if let Some((first, stride, m)) = cur.whole_tiles(end - pos, ts) {
            for k in 0..m as i64 {
                let base = first + k * stride;
                for &(o, n) in tile {
                    // SAFETY: block `o` of tile `k` is inside the typemap at `typed` (caller
                    // contract); `pos - start < end - start <= stream_len`.
                    let (t, s) = unsafe { (typed.offset((base + o) as isize), stream.add(pos - start)) };
                    mv(t, s, n);
                    pos += n;
                }
            }
            continue;
        }
        let (off, n) = cur.take(end - pos);
        // SAFETY: as for whole tiles: a block of the typemap, and a stream offset below `stream_len`.
        let (t, s) = unsafe { (typed.offset(off as isize), stream.add(pos - start)) };
        mv(t, s, n);
        pos += n;
    }
    end - start
}
