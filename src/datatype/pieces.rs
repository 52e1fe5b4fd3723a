//! A typed buffer's bytes as contiguous pieces: the (offset from the buffer address, length) runs
//! that hold the packed-stream range `[start, end)` of `count` elements, in stream order, with
//! adjacent runs merged. This is what lets data move between two typed buffers, or between a typed
//! buffer and a scatter/gather list (iovecs), block by block without packing. The walk is the
//! [`Cursor`] `copy` uses (element, repetition of the tile, block): no recursion, no allocation.
use super::blocks::{Blocks, Cursor};
use super::Layout;

/// The flattened typemap of one element and what is needed to repeat it: a borrowed view, so a
/// typemap read from another process (rendezvous in processes mode) walks the same way as a local one.
#[derive(Clone, Copy, Debug)]
pub struct BlockMap<'a> {
    pub blocks: &'a Blocks,
    pub extent: i64,
    /// Bytes of data in one element (the sum of the block lengths).
    pub size: usize,
}

impl Layout {
    /// This layout's typemap as a [`BlockMap`].
    pub fn map(&self) -> BlockMap<'_> {
        BlockMap { blocks: &self.blocks, extent: self.extent(), size: self.size }
    }
}

impl<'a> BlockMap<'a> {
    /// The pieces of stream bytes `[start, end)` (clamped to the `count * size` bytes there are).
    pub fn pieces(&self, count: usize, start: usize, end: usize) -> Pieces<'a> {
        let end = end.min(self.size.saturating_mul(count));
        if start >= end {
            return Pieces { cur: None, pos: 0, end: 0 };
        }
        Pieces { cur: Some(Cursor::at(self.blocks, self.extent, start)), pos: start, end }
    }
}

/// Iterator of [`BlockMap::pieces`]: (offset from the buffer address, length).
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    cur: Option<Cursor<'a>>,
    pos: usize,
    end: usize,
}

impl Iterator for Pieces<'_> {
    type Item = (i64, usize);

    fn next(&mut self) -> Option<(i64, usize)> {
        if self.pos >= self.end {
            return None;
        }
        let cur = self.cur.as_mut()?;
        let (off, mut len) = cur.take(self.end - self.pos);
        self.pos += len;
        // Runs that touch (a dense element after the previous one, a vector's last block and the
        // next element's first) are one piece.
        while self.pos < self.end && cur.here() == off + len as i64 {
            let n = cur.take(self.end - self.pos).1;
            self.pos += n;
            len += n;
        }
        Some((off, len))
    }
}
