//! The flattened typemap of one element, compactly: a *tile* (a list of merged byte blocks
//! `(offset, len)`) repeated `reps` times, `stride` bytes apart. A vector of 2^26 strided blocks
//! is one tile of one block repeated 2^26 times, so it costs O(tile) memory, never O(reps): the
//! same idea as MPICH's compact dataloops (a vector loop over a child), kept to two levels.
//! Everything that is not a repetition has `reps = 1`.
//!
//! Blocks are numbered in typemap order, tile by tile: block `i` is tile block `i % tile_len` of
//! repetition `i / tile_len`. Walks (pack, pieces) use [`Cursor`], a nested tile x reps loop with
//! no division per block.
use super::{BuildError, MAX_BLOCKS};

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct Blocks {
    /// `store[0]` = (stride, reps), then the tile's blocks: one allocation, so the whole
    /// description can be read out of another process in one go ([`Blocks::wire`]).
    store: Vec<(i64, usize)>,
    /// Packed offset of each tile block within the tile.
    prefix: Vec<usize>,
    /// Bytes of one tile.
    tile_size: usize,
}

impl Default for Blocks {
    fn default() -> Blocks {
        Blocks { store: vec![(0, 1)], prefix: Vec::new(), tile_size: 0 }
    }
}

impl PartialEq<Vec<(i64, usize)>> for Blocks {
    fn eq(&self, other: &Vec<(i64, usize)>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl Blocks {
    pub fn tile(&self) -> &[(i64, usize)] {
        &self.store[1..]
    }
    pub fn reps(&self) -> usize {
        self.store[0].1
    }
    pub fn stride(&self) -> i64 {
        self.store[0].0
    }
    pub fn tile_size(&self) -> usize {
        self.tile_size
    }
    /// Total number of blocks (tile length x reps).
    pub fn len(&self) -> usize {
        self.tile().len().saturating_mul(self.reps())
    }
    pub fn is_empty(&self) -> bool {
        self.tile().is_empty()
    }
    /// Block `i`.
    pub fn get(&self, i: usize) -> (i64, usize) {
        let t = self.tile();
        let (q, r) = (i / t.len(), i % t.len());
        (t[r].0 + q as i64 * self.stride(), t[r].1)
    }
    /// The first block, if any.
    pub fn first(&self) -> Option<(i64, usize)> {
        self.tile().first().copied()
    }
    /// Packed-stream offset of block `i` within the element.
    pub fn prefix(&self, i: usize) -> usize {
        let n = self.tile().len();
        (i / n) * self.tile_size + self.prefix[i % n]
    }
    /// The block that packed offset `p` (< the element's size) falls in.
    pub fn locate(&self, p: usize) -> usize {
        let q = p / self.tile_size;
        let r = self.prefix.partition_point(|&x| x <= p % self.tile_size) - 1;
        q * self.tile().len() + r
    }
    /// All blocks in typemap order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        let (t, s) = (self.tile(), self.stride());
        (0..self.reps()).flat_map(move |k| t.iter().map(move |&(o, l)| (o + k as i64 * s, l)))
    }
    /// Lowest and one-past-highest byte offsets covered ((0, 0) if empty).
    pub fn span(&self) -> (i64, i64) {
        let lo = self.tile().iter().map(|b| b.0).min().unwrap_or(0);
        let hi = self.tile().iter().map(|b| b.0 + b.1 as i64).max().unwrap_or(0);
        let last = (self.reps() as i64 - 1) * self.stride();
        (lo + last.min(0), hi + last.max(0))
    }

    // ---- building ----

    /// Appends a block, merged with the last one if they touch; a compact repetition is expanded
    /// first (refused if that would exceed [`MAX_BLOCKS`]).
    pub fn push(&mut self, off: i64, len: usize) -> Result<(), BuildError> {
        if len == 0 {
            return Ok(());
        }
        self.expand()?;
        self.tile_size += len;
        let n = self.store.len();
        if let Some(last) = self.store.last_mut().filter(|_| n > 1) {
            if last.0 + last.1 as i64 == off {
                last.1 += len;
                return Ok(());
            }
        }
        if self.store.len() > MAX_BLOCKS as usize {
            return Err(BuildError::TooManyBlocks(self.store.len() as u64));
        }
        self.prefix.push(self.tile_size - len);
        self.store.push((off, len));
        Ok(())
    }

    /// Turns a repetition into a plain tile.
    fn expand(&mut self) -> Result<(), BuildError> {
        if self.reps() == 1 {
            return Ok(());
        }
        if self.len() as u64 > MAX_BLOCKS {
            return Err(BuildError::TooManyBlocks(self.len() as u64));
        }
        let mut e = Blocks::default();
        e.store.reserve(self.len());
        for (o, l) in self.iter() {
            e.push(o, l)?;
        }
        *self = e;
        Ok(())
    }

    /// Appends `reps` copies of `c`, the k-th shifted by `shift + k * step` (the caller has checked
    /// that these offsets fit 64 bits). An empty typemap becomes a compact repetition of `c`'s
    /// (expanded) tile; a dense one (copies that abut) stays one block.
    pub fn repeat(&mut self, c: &Blocks, shift: i64, reps: u64, step: i64) -> Result<(), BuildError> {
        if reps == 0 || c.is_empty() {
            return Ok(());
        }
        if c.len() == 1 && step == c.tile_size as i64 {
            let bytes = (c.tile_size as u64).checked_mul(reps).filter(|&b| b <= i64::MAX as u64).ok_or(BuildError::Overflow)?;
            return self.push(shift + c.tile()[0].0, bytes as usize);
        }
        if self.is_empty() && (reps > 1 || c.reps() > 1) {
            let mut t = c.clone();
            t.expand()?;
            for b in &mut t.store[1..] {
                b.0 += shift;
            }
            let tile = t.tile();
            let touches = tile[tile.len() - 1].0 + tile[tile.len() - 1].1 as i64 == tile[0].0 + step;
            let fits = (tile.len() as u64).saturating_mul(reps) <= MAX_BLOCKS;
            if reps == 1 || !(touches && fits) {
                // Copies that touch would merge in a flat list; past MAX_BLOCKS they stay apart,
                // which changes no byte, only how many pieces a walk yields.
                t.store[0] = (step, reps as usize);
                *self = t;
                return Ok(());
            }
        }
        let n = (c.len() as u64).saturating_mul(reps).saturating_add(self.len() as u64);
        if n > MAX_BLOCKS {
            return Err(BuildError::TooManyBlocks(n));
        }
        for k in 0..reps as i64 {
            let base = shift + k * step;
            for (o, l) in c.iter() {
                self.push(base + o, l)?;
            }
        }
        Ok(())
    }

    // ---- shipping to another process ----

    /// Address and length (in `(i64, usize)` entries) of this description's single allocation.
    pub fn wire(&self) -> (u64, u64) {
        (self.store.as_ptr() as u64, self.store.len() as u64)
    }

    /// The description read back from [`Blocks::wire`]'s bytes, or None if it is not one.
    pub fn from_wire(store: Vec<(i64, usize)>) -> Option<Blocks> {
        if store.len() < 2 || store[0].1 == 0 {
            return None;
        }
        let mut prefix = Vec::with_capacity(store.len() - 1);
        let mut size = 0usize;
        for &(_, l) in &store[1..] {
            if l == 0 {
                return None;
            }
            prefix.push(size);
            size = size.checked_add(l)?;
        }
        size.checked_mul(store[0].1)?;
        Some(Blocks { store, prefix, tile_size: size })
    }
}

/// A position in the typed buffer of a stream of elements `extent` bytes apart: the walk pack,
/// unpack and pieces share. Advances tile block by tile block, then repetition, then element.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    tile: &'a [(i64, usize)],
    reps: usize,
    stride: i64,
    extent: i64,
    /// Offset of the current element and of the current repetition of the tile.
    elem_base: i64,
    base: i64,
    rep: usize,
    bi: usize,
    /// Bytes of the current block already passed.
    inb: usize,
}

impl<'a> Cursor<'a> {
    /// The cursor at packed-stream offset `pos` (the element holds data: tile_size > 0).
    pub fn at(b: &'a Blocks, extent: i64, pos: usize) -> Cursor<'a> {
        let unit = pos / b.tile_size;
        let within = pos % b.tile_size;
        let (elem, rep) = (unit / b.reps(), unit % b.reps());
        let bi = b.prefix.partition_point(|&p| p <= within) - 1;
        let elem_base = elem as i64 * extent;
        Cursor { tile: b.tile(), reps: b.reps(), stride: b.stride(), extent, elem_base, base: elem_base + rep as i64 * b.stride(), rep, bi, inb: within - b.prefix[bi] }
    }

    /// Offset of the next byte.
    #[inline]
    pub fn here(&self) -> i64 {
        self.base + self.tile[self.bi].0 + self.inb as i64
    }

    /// At the start of a tile: as many whole tiles of the current element as `max` bytes hold
    /// (at least one), skipped over; returns the offset of the first, the stride and how many,
    /// for a tight nested loop over the tile (the hot path of pack and unpack).
    #[inline]
    pub fn whole_tiles(&mut self, max: usize, tile_size: usize) -> Option<(i64, i64, usize)> {
        if self.bi != 0 || self.inb != 0 || max < tile_size {
            return None;
        }
        let m = (self.reps - self.rep).min(max / tile_size);
        let first = self.base;
        self.rep += m;
        if self.rep == self.reps {
            self.rep = 0;
            self.elem_base += self.extent;
            self.base = self.elem_base;
        } else {
            self.base += m as i64 * self.stride;
        }
        Some((first, self.stride, m))
    }

    /// The next run within one block, at most `max` bytes: (offset, length).
    #[inline]
    pub fn take(&mut self, max: usize) -> (i64, usize) {
        let (o, l) = self.tile[self.bi];
        let off = self.base + o + self.inb as i64;
        let n = (l - self.inb).min(max);
        self.inb += n;
        if self.inb == l {
            self.inb = 0;
            self.bi += 1;
            if self.bi == self.tile.len() {
                self.bi = 0;
                self.rep += 1;
                if self.rep == self.reps {
                    self.rep = 0;
                    self.elem_base += self.extent;
                    self.base = self.elem_base;
                } else {
                    self.base += self.stride;
                }
            }
        }
        (off, n)
    }
}
