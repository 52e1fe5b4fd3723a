//! Data sieving (Thakur, Gropp & Lusk, "Data sieving and collective I/O in ROMIO", 1999) for
//! one rank's independent non-contiguous access: many small file runs become a few large
//! accesses.
//!
//! The runs are first merged where they touch in the file (they are then contiguous in the
//! packed data as well: one access each). Then:
//! * a run of at least `DIRECT_MIN` bytes, or more than half the buffer, goes straight to the
//!   backend between the file and the caller's data;
//! * small runs are grouped into blocks of at most `buffer_size` bytes whose holes are at most
//!   `HOLE_MAX` bytes. A read reads the whole block once and copies the runs out. A write with a
//!   byte-range lock (`write_locked`) locks the block, reads it, copies the runs in and writes
//!   it back: other writers' bytes in the holes survive, as they wait for the lock. Without a
//!   lock a write cannot rewrite holes safely, so `write` writes each run by itself. A locked
//!   write without such blocks holds one shared lock over its span (`FileLock::lock_shared`).
//!
//! Runs are (file offset, length), sorted by offset, not overlapping; the data holds their bytes
//! packed in run order.
use super::backend::Backend;
use super::range_lock::FileLock;
use std::io;

/// Runs at least this long are accessed directly: one system call (a microsecond or two, with
/// the byte-range lock of a write) costs less than moving them and a hole as large through the
/// sieve buffer. With 64 KiB, the 16 KiB rows of a 2-D block (benches/io_bw.c, strided) were
/// sieved: 10 to 20% more CPU time for the pattern, and read-modify-writes of interleaved
/// ranks waiting for each other's locks.
pub const DIRECT_MIN: u64 = 8 << 10;
/// Largest hole read through inside a block; a larger gap starts a new block.
pub const HOLE_MAX: u64 = 32 << 10;

/// A maximal group of file-contiguous runs: `len` bytes at file offset `off`, at `pos` in the
/// packed data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub off: u64,
    pub len: u64,
    pub pos: usize,
}

impl Extent {
    pub fn end(&self) -> u64 {
        self.off + self.len
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_string())
}

/// Checks the runs against the data (sorted, not overlapping, no overflow, lengths summing to
/// `data_len`) and merges the touching ones; empty runs vanish.
pub fn extents(runs: &[(u64, u64)], data_len: usize) -> io::Result<Vec<Extent>> {
    let mut out: Vec<Extent> = Vec::with_capacity(runs.len());
    let mut pos = 0usize;
    let mut end = 0u64;
    for &(off, len) in runs {
        if off < end {
            return Err(invalid("file runs must be sorted by offset and must not overlap"));
        }
        let e = off.checked_add(len).filter(|&e| e <= i64::MAX as u64).ok_or_else(|| invalid("a file run reaches past the largest file offset"))?;
        if len == 0 {
            continue;
        }
        let l = usize::try_from(len).map_err(|_| invalid("a file run is larger than memory"))?;
        match out.last_mut() {
            Some(x) if x.end() == off => x.len += len,
            _ => out.push(Extent { off, len, pos }),
        }
        pos = pos.checked_add(l).ok_or_else(|| invalid("the runs are larger than memory"))?;
        end = e;
    }
    if pos != data_len {
        return Err(invalid("the file runs' lengths do not add up to the data's length"));
    }
    Ok(out)
}

/// What to do with a stretch of extents: one extent directly, or a sieve block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    Direct(usize),
    /// Extents [first, last) through a buffer covering file bytes [start, end).
    Block { first: usize, last: usize, start: u64, end: u64 },
}

/// Splits `ext` into direct accesses and sieve blocks of at most `buffer_size` bytes.
pub fn plan(ext: &[Extent], buffer_size: usize) -> Vec<Piece> {
    let bs = buffer_size.max(1) as u64;
    let small = |e: &Extent| e.len < DIRECT_MIN && e.len * 2 <= bs;
    let mut out = Vec::new();
    let mut i = 0;
    while i < ext.len() {
        if !small(&ext[i]) {
            out.push(Piece::Direct(i));
            i += 1;
            continue;
        }
        let start = ext[i].off;
        let mut j = i + 1;
        while j < ext.len() && small(&ext[j]) && ext[j].off - ext[j - 1].end() <= HOLE_MAX && ext[j].end() - start <= bs {
            j += 1;
        }
        out.push(if j == i + 1 { Piece::Direct(i) } else { Piece::Block { first: i, last: j, start, end: ext[j - 1].end() } });
        i = j;
    }
    out
}

fn range(e: &Extent) -> std::ops::Range<usize> {
    e.pos..e.pos + e.len as usize
}

/// Reads the runs into `data`; returns how many of the requested bytes lie before the end of
/// the file (bytes beyond it are left as they were).
pub fn read(file: &dyn Backend, runs: &[(u64, u64)], data: &mut [u8], buffer_size: usize) -> io::Result<usize> {
    let ext = extents(runs, data.len())?;
    let mut got = 0usize;
    let mut buf = Vec::new();
    for p in plan(&ext, buffer_size) {
        match p {
            Piece::Direct(i) => got += file.read_at(&mut data[range(&ext[i])], ext[i].off)?,
            Piece::Block { first, last, start, end } => {
                buf.resize((end - start) as usize, 0);
                let n = file.read_at(&mut buf, start)? as u64;
                for e in &ext[first..last] {
                    let avail = (start + n).saturating_sub(e.off).min(e.len) as usize;
                    let at = (e.off - start) as usize;
                    data[e.pos..e.pos + avail].copy_from_slice(&buf[at..at + avail]);
                    got += avail;
                }
            }
        }
    }
    Ok(got)
}

/// Writes the runs from `data` without read-modify-write (no lock to make it safe): each
/// merged run is one write.
pub fn write(file: &dyn Backend, runs: &[(u64, u64)], data: &[u8], buffer_size: usize) -> io::Result<()> {
    let _ = buffer_size;
    for e in extents(runs, data.len())? {
        file.write_at(&data[range(&e)], e.off)?;
    }
    Ok(())
}

/// Writes the runs from `data`, with `sieve` small runs by read-modify-write of covering blocks
/// (not where `file` cannot be read), else run by run; every write holds `lock` (a lock on the
/// same file as `file`) over its bytes, so another writer's read-modify-write cannot undo it.
pub fn write_locked(file: &dyn Backend, lock: &FileLock, runs: &[(u64, u64)], data: &[u8], buffer_size: usize, sieve: bool) -> io::Result<()> {
    let ext = extents(runs, data.len())?;
    let pieces = if sieve && file.can_read() { plan(&ext, buffer_size) } else { (0..ext.len()).map(Piece::Direct).collect() };
    if pieces.iter().all(|p| matches!(p, Piece::Direct(_))) {
        // Plain writes only: one shared lock over their span keeps others' read-modify-writes
        // out of it, and lets other plain writers (the interleaved rows of other ranks) in.
        let (Some(first), Some(last)) = (ext.first(), ext.last()) else { return Ok(()) };
        let _guard = lock.lock_shared(first.off, last.end() - first.off)?;
        for e in &ext {
            file.write_at(&data[range(e)], e.off)?;
        }
        return Ok(());
    }
    let mut buf = Vec::new();
    for p in pieces {
        match p {
            Piece::Direct(i) => {
                // Locked as well: another writer's read-modify-write over these bytes would
                // otherwise put back what it read before this write.
                let _guard = lock.lock_shared(ext[i].off, ext[i].len)?;
                file.write_at(&data[range(&ext[i])], ext[i].off)?
            }
            Piece::Block { first, last, start, end } => {
                let _guard = lock.lock(start, end - start)?;
                buf.clear();
                buf.resize((end - start) as usize, 0);
                // Past the end of the file the holes stay zero (the write extends the file to
                // `end` anyway).
                file.read_at(&mut buf, start)?;
                for e in &ext[first..last] {
                    let at = (e.off - start) as usize;
                    buf[at..at + e.len as usize].copy_from_slice(&data[range(e)]);
                }
                file.write_at(&buf, start)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::backend::{OpenMode, Posix};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A real file that counts the backend calls made on it.
    struct Counted {
        f: Posix,
        calls: AtomicUsize,
    }
    impl Backend for Counted {
        fn read_at(&self, b: &mut [u8], o: u64) -> io::Result<usize> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.f.read_at(b, o)
        }
        fn write_at(&self, b: &[u8], o: u64) -> io::Result<()> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.f.write_at(b, o)
        }
        fn read_vectored_at(&self, b: &mut [io::IoSliceMut<'_>], o: u64) -> io::Result<usize> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.f.read_vectored_at(b, o)
        }
        fn write_vectored_at(&self, b: &[io::IoSlice<'_>], o: u64) -> io::Result<()> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.f.write_vectored_at(b, o)
        }
        fn size(&self) -> io::Result<u64> {
            self.f.size()
        }
        fn set_size(&self, s: u64) -> io::Result<()> {
            self.f.set_size(s)
        }
        fn preallocate(&self, s: u64) -> io::Result<()> {
            self.f.preallocate(s)
        }
        fn sync(&self) -> io::Result<()> {
            self.f.sync()
        }
    }

    struct Temp(String);
    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    fn temp(name: &str) -> (Temp, Counted) {
        let p = std::env::temp_dir().join(format!("oxmpi-sieve-{}-{name}", std::process::id())).to_string_lossy().into_owned();
        let _ = std::fs::remove_file(&p);
        let f = Posix::open(&p, OpenMode { read: true, write: true, create: true, exclusive: true }).unwrap();
        (Temp(p), Counted { f, calls: AtomicUsize::new(0) })
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    /// Random sorted, non-overlapping runs (some touching, some empty, some large) from `base`.
    fn random_runs(rng: &mut Rng, count: usize, base: u64) -> Vec<(u64, u64)> {
        let mut at = base;
        (0..count)
            .map(|_| {
                at += match rng.below(4) {
                    0 => 0,
                    1 => rng.below(8),
                    2 => rng.below(200),
                    _ => rng.below(100_000),
                };
                let len = match rng.below(6) {
                    0 => 0,
                    5 => rng.below(200_000),
                    _ => 1 + rng.below(40),
                };
                let r = (at, len);
                at += len;
                r
            })
            .collect()
    }

    #[test]
    fn extents_merge_and_reject_bad_runs() {
        let e = extents(&[(0, 2), (2, 3), (5, 0), (9, 1), (10, 1)], 7).unwrap();
        assert_eq!(e, vec![Extent { off: 0, len: 5, pos: 0 }, Extent { off: 9, len: 2, pos: 5 }]);
        assert!(extents(&[(4, 2), (5, 1)], 3).is_err(), "overlap");
        assert!(extents(&[(4, 2), (0, 1)], 3).is_err(), "unsorted");
        assert!(extents(&[(0, 2)], 3).is_err(), "lengths do not add up");
        assert!(extents(&[(u64::MAX - 1, 2)], 2).is_err(), "offset overflow");
    }

    #[test]
    fn many_small_runs_become_few_accesses() {
        let (_t, f) = temp("few");
        let runs: Vec<(u64, u64)> = (0..1000).map(|i| (i * 10, 4)).collect();
        let data: Vec<u8> = (0..4000).map(|i| (i % 251) as u8).collect();
        let lock = FileLock::open(&_t.0).unwrap();
        write_locked(&f, &lock, &runs, &data, 4096, true).unwrap();
        let writes = f.calls.swap(0, Ordering::Relaxed);
        // 10000 bytes in blocks of at most 4096: 3 blocks, each one read and one write.
        assert_eq!(writes, 6);
        let mut back = vec![0u8; 4000];
        assert_eq!(read(&f, &runs, &mut back, 4096).unwrap(), 4000);
        assert_eq!(f.calls.load(Ordering::Relaxed), 3);
        assert_eq!(back, data);
    }

    /// Random run lists, with and without the lock, at several buffer sizes, against a
    /// reference image of the file; reads past the end count only what exists.
    #[test]
    fn random_runs_match_a_reference() {
        let mut rng = Rng(0x2545F4914F6CDD1D);
        for case in 0..60 {
            let (t, f) = temp(&format!("rand{case}"));
            let lock = FileLock::open(&t.0).unwrap();
            let bs = [1usize, 7, 64, 4096, 1 << 20][case % 5];
            // Pre-existing content the holes must keep.
            let pre: Vec<u8> = (0..rng.below(300_000)).map(|i| (i * 7 % 253) as u8).collect();
            f.write_at(&pre, 0).unwrap();
            let mut reference = pre.clone();
            let (count, base) = (1 + rng.below(300) as usize, rng.below(1000));
            let runs = random_runs(&mut rng, count, base);
            let total: u64 = runs.iter().map(|r| r.1).sum();
            let data: Vec<u8> = (0..total).map(|_| rng.below(256) as u8).collect();
            let mut pos = 0;
            for &(o, l) in runs.iter().filter(|r| r.1 > 0) {
                let end = (o + l) as usize;
                if reference.len() < end {
                    reference.resize(end, 0);
                }
                reference[o as usize..end].copy_from_slice(&data[pos..pos + l as usize]);
                pos += l as usize;
            }
            if case % 2 == 0 {
                write_locked(&f, &lock, &runs, &data, bs, true).unwrap();
            } else {
                write(&f, &runs, &data, bs).unwrap();
            }
            let mut img = vec![0u8; f.size().unwrap() as usize];
            assert_eq!(f.read_at(&mut img, 0).unwrap(), img.len());
            assert_eq!(img, reference, "case {case}");
            // Read back, then read runs shifted past the end of the file.
            let mut back = vec![0u8; total as usize];
            assert_eq!(read(&f, &runs, &mut back, bs).unwrap(), total as usize);
            assert_eq!(back, data);
            let eof = reference.len() as u64;
            let shift = eof.saturating_sub(total / 2 + 3);
            let late: Vec<(u64, u64)> = runs.iter().map(|&(o, l)| (o - runs[0].0 + shift, l)).collect();
            let expect: u64 = late.iter().map(|&(o, l)| eof.saturating_sub(o).min(l)).sum();
            let mut back = vec![0xAAu8; total as usize];
            assert_eq!(read(&f, &late, &mut back, bs).unwrap() as u64, expect, "case {case}");
            let mut p = 0;
            for &(o, l) in &late {
                let have = eof.saturating_sub(o).min(l) as usize;
                if have > 0 {
                    assert_eq!(&back[p..p + have], &reference[o as usize..o as usize + have]);
                }
                assert!(back[p + have..p + l as usize].iter().all(|&b| b == 0xAA), "bytes past the end are left alone");
                p += l as usize;
            }
        }
    }

    /// Threads write interleaved bytes of one file at once (thread t owns the bytes i with
    /// i % 4 == t) through read-modify-write sieving; the lock keeps every thread's bytes.
    #[test]
    fn concurrent_sieved_writes_keep_each_others_bytes() {
        let (t, f) = temp("concurrent");
        let len = 64 * 1024u64;
        f.set_size(len).unwrap();
        let f = std::sync::Arc::new(f);
        let ts: Vec<_> = (0..4u64)
            .map(|me| {
                let (f, path) = (f.clone(), t.0.clone());
                std::thread::spawn(move || {
                    let lock = FileLock::open(&path).unwrap();
                    let runs: Vec<(u64, u64)> = (0..len / 4).map(|i| (i * 4 + me, 1)).collect();
                    let data = vec![me as u8 + 1; runs.len()];
                    for chunk in 0..8 {
                        let n = runs.len() / 8;
                        write_locked(&*f, &lock, &runs[chunk * n..(chunk + 1) * n], &data[chunk * n..(chunk + 1) * n], 1000, true).unwrap();
                    }
                })
            })
            .collect();
        ts.into_iter().for_each(|t| t.join().unwrap());
        let mut img = vec![0u8; len as usize];
        f.read_at(&mut img, 0).unwrap();
        for (i, b) in img.iter().enumerate() {
            assert_eq!(*b as usize, i % 4 + 1, "byte {i}");
        }
    }
}
