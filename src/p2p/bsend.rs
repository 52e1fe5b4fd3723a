//! The buffers attached for buffered sends (MPI 4.1 section 3.6.1): one per process
//! (MPI_Buffer_attach), per communicator (MPI_Comm_attach_buffer) and per session
//! (MPI_Session_attach_buffer). A user buffer is carved first-fit into blocks; an automatic one
//! (MPI_BUFFER_AUTOMATIC) allocates each block from the heap as the send needs it.
//!
//! Each block of a user buffer costs its payload plus `overhead` bytes (MPI_BSEND_OVERHEAD), as
//! the standard's sizing rule tells users to reserve.
use std::collections::HashMap;

/// Whose buffer: the process's, a communicator's (by its point-to-point context id) or a
/// session's (by its index in the rank's session table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Process,
    Comm(u32),
    Session(usize),
}

pub struct BsendPool {
    base: *mut u8,
    size: usize,
    overhead: usize,
    /// Blocks in use: (offset, length including overhead), sorted by offset. For an automatic
    /// pool the "offset" is the block's number (key of `heap`).
    used: Vec<(usize, usize)>,
    /// MPI_BUFFER_AUTOMATIC: the heap blocks in use, by number.
    heap: Option<HashMap<usize, Vec<u8>>>,
    next: usize,
}

impl BsendPool {
    pub fn new(base: *mut u8, size: usize, overhead: usize) -> BsendPool {
        BsendPool { base, size, overhead, used: Vec::new(), heap: None, next: 0 }
    }
    /// A pool of MPI_BUFFER_AUTOMATIC: it never runs out (short of memory).
    pub fn automatic() -> BsendPool {
        BsendPool { base: std::ptr::null_mut(), size: 0, overhead: 0, used: Vec::new(), heap: Some(HashMap::new()), next: 0 }
    }
    pub fn is_automatic(&self) -> bool {
        self.heap.is_some()
    }
    /// The payload of block `offset` (from `alloc`).
    pub fn payload(&self, offset: usize) -> *mut u8 {
        match &self.heap {
            Some(h) => h.get(&offset).map_or(std::ptr::null_mut(), |v| v.as_ptr() as *mut u8),
            None => self.base.wrapping_add(offset + self.overhead),
        }
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
        !self.used.is_empty() || self.heap.as_ref().is_some_and(|h| !h.is_empty())
    }

    /// Reserves room for `bytes` of payload; returns the block's offset and the payload pointer.
    pub fn alloc(&mut self, bytes: usize) -> Option<(usize, *mut u8)> {
        if let Some(h) = self.heap.as_mut() {
            let id = self.next;
            self.next += 1;
            let mut v = vec![0u8; bytes.max(1)];
            let p = v.as_mut_ptr();
            // The Vec's heap storage does not move when the Vec is moved into the map.
            h.insert(id, v);
            return Some((id, p));
        }
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
        if let Some(h) = self.heap.as_mut() {
            h.remove(&offset);
            return;
        }
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

    #[test]
    fn automatic_allocates_each_block() {
        let mut p = BsendPool::automatic();
        let (a, pa) = p.alloc(1 << 20).unwrap();
        let (b, _) = p.alloc(0).unwrap();
        assert_ne!(a, b);
        assert_eq!(p.payload(a), pa);
        assert!(p.in_use());
        p.free(a);
        p.free(b);
        assert!(!p.in_use());
    }
}
