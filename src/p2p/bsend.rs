//! The buffer attached with MPI_Buffer_attach, carved first-fit into blocks for buffered sends.
//!
//! Each block costs its payload plus `overhead` bytes (MPI_BSEND_OVERHEAD), as the standard's
//! sizing rule (MPI 4.1 section 3.6.1) tells users to reserve.

pub struct BsendPool {
    base: *mut u8,
    size: usize,
    overhead: usize,
    /// Blocks in use: (offset, length including overhead), sorted by offset.
    used: Vec<(usize, usize)>,
}

impl BsendPool {
    pub fn new(base: *mut u8, size: usize, overhead: usize) -> BsendPool {
        BsendPool { base, size, overhead, used: Vec::new() }
    }
    pub fn base(&self) -> *mut u8 {
        self.base
    }
    /// Bytes each block reserves before its payload.
    pub fn overhead(&self) -> usize {
        self.overhead
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn in_use(&self) -> bool {
        !self.used.is_empty()
    }

    /// Reserves room for `bytes` of payload; returns the block's offset and the payload pointer.
    pub fn alloc(&mut self, bytes: usize) -> Option<(usize, *mut u8)> {
        let need = bytes.checked_add(self.overhead)?;
        let mut start = 0usize;
        let mut pos = 0usize;
        for (i, &(off, len)) in self.used.iter().enumerate() {
            if off - start >= need {
                pos = i;
                break;
            }
            start = off + len;
            pos = i + 1;
        }
        if pos == self.used.len() && self.size.saturating_sub(start) < need {
            return None;
        }
        self.used.insert(pos, (start, need));
        // The payload follows the (unused) overhead area, as in MPICH's accounting.
        Some((start, self.base.wrapping_add(start + self.overhead)))
    }

    pub fn free(&mut self, offset: usize) {
        if let Some(i) = self.used.iter().position(|&(o, _)| o == offset) {
            self.used.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn first_fit_and_reuse() {
        let mut buf = vec![0u8; 1000];
        let mut p = BsendPool::new(buf.as_mut_ptr(), 1000, 96);
        let (a, _) = p.alloc(100).unwrap();
        let (b, _) = p.alloc(100).unwrap();
        assert_eq!((a, b), (0, 196));
        let (c, _) = p.alloc(500).unwrap();
        assert_eq!(c, 392);
        assert!(p.alloc(100).is_none());
        p.free(b);
        assert_eq!(p.alloc(50).unwrap().0, 196);
        p.free(a);
        p.free(c);
        p.free(196);
        assert!(!p.in_use());
        assert_eq!(p.alloc(1000 - 96).unwrap().0, 0);
    }
}
