//! A typed buffer's bytes as contiguous pieces: the (offset from the buffer address, length) runs
//! that hold the packed-stream range `[start, end)` of `count` elements, in stream order, with
//! adjacent runs merged. This is what lets data move between two typed buffers, or between a typed
//! buffer and a scatter/gather list (iovecs), block by block without packing. The walk keeps the
//! same cursor `copy` uses (element, block, offset within the element): no recursion, no allocation.
use super::Layout;

/// The flattened typemap of one element and what is needed to repeat it: a borrowed view, so a
/// typemap read from another process (rendezvous in processes mode) walks the same way as a local one.
#[derive(Clone, Copy, Debug)]
pub struct BlockMap<'a> {
    pub blocks: &'a [(i64, usize)],
    /// Packed-stream offset at which each block starts (prefix sums of the lengths).
    pub prefix: &'a [usize],
    pub extent: i64,
    /// Bytes of data in one element (the sum of the block lengths).
    pub size: usize,
}

impl Layout {
    /// This layout's typemap as a [`BlockMap`].
    pub fn map(&self) -> BlockMap<'_> {
        BlockMap { blocks: &self.blocks, prefix: &self.prefix, extent: self.extent(), size: self.size }
    }
}

impl<'a> BlockMap<'a> {
    /// The pieces of stream bytes `[start, end)` (clamped to the `count * size` bytes there are).
    pub fn pieces(&self, count: usize, start: usize, end: usize) -> Pieces<'a> {
        let end = end.min(self.size.saturating_mul(count));
        if start >= end {
            return Pieces { map: *self, pos: 0, end: 0, elem: 0, within: 0, bi: 0 };
        }
        let within = start % self.size;
        let bi = self.prefix.partition_point(|&p| p <= within) - 1;
        Pieces { map: *self, pos: start, end, elem: start / self.size, within, bi }
    }
}

/// Iterator of [`BlockMap::pieces`]: (offset from the buffer address, length).
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    map: BlockMap<'a>,
    pos: usize,
    end: usize,
    elem: usize,
    /// Stream offset inside the current element, and the block it falls in.
    within: usize,
    bi: usize,
}

impl Pieces<'_> {
    /// Offset from the buffer address of the next byte.
    fn here(&self) -> i64 {
        let (boff, _) = self.map.blocks[self.bi];
        self.elem as i64 * self.map.extent + boff + (self.within - self.map.prefix[self.bi]) as i64
    }

    /// The next run within one block.
    fn step(&mut self) -> (i64, usize) {
        let off = self.here();
        let blen = self.map.blocks[self.bi].1;
        let inb = self.within - self.map.prefix[self.bi];
        let n = (blen - inb).min(self.end - self.pos);
        self.pos += n;
        self.within += n;
        if inb + n == blen {
            self.bi += 1;
            if self.bi == self.map.blocks.len() {
                self.bi = 0;
                self.elem += 1;
                self.within = 0;
            }
        }
        (off, n)
    }
}

impl Iterator for Pieces<'_> {
    type Item = (i64, usize);

    fn next(&mut self) -> Option<(i64, usize)> {
        if self.pos >= self.end {
            return None;
        }
        let (off, mut len) = self.step();
        // Runs that touch (a dense element after the previous one, a vector's last block and the
        // next element's first) are one piece.
        while self.pos < self.end && self.here() == off + len as i64 {
            len += self.step().1;
        }
        Some((off, len))
    }
}
