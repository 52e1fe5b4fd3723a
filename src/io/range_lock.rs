//! Byte-range locks on a file, for data sieving's read-modify-write (`sieve`): while a rank
//! rewrites a block that covers its runs and the holes between them (an exclusive lock), no
//! other writer may change the holes. Plain writes take a shared lock over their span: they
//! exclude read-modify-writes over it but not each other, so ranks writing interleaved rows
//! directly need one lock per access, not one per row.
//!
//! Two levels, because one alone does not cover both rank modes:
//! * Across processes: Linux open-file-description record locks (`F_OFD_SETLKW`), or classic
//!   POSIX `fcntl` record locks where OFD locks are missing. OFD locks belong to the lock's own
//!   descriptor, so closing some other descriptor of the file (another handle, another rank's
//!   in threads mode) does not drop them, as it would drop classic POSIX locks.
//! * Within a process: record locks do not exclude threads using one descriptor (and classic
//!   ones not even different descriptors), so ranges are also taken in a process-wide table
//!   keyed by the file's (device, inode): threads-mode ranks, and threads of one rank, wait
//!   there for each other.
//!
//! A guard holds one range; sieving holds one at a time, so waits cannot form a cycle.
//! Where the kernel lacks OFD locks, classic locks of one process merge: a thread's unlock of a
//! shared range then also drops another thread's over the same bytes (against other processes
//! only; the table still excludes threads).
use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Condvar, Mutex};

/// A held range: [start, end) and whether it is shared.
type Held = (u64, u64, bool);

/// The byte ranges held in this process, per file.
struct Table {
    held: Mutex<Option<HashMap<(u64, u64), Vec<Held>>>>,
    freed: Condvar,
}

static TABLE: Table = Table { held: Mutex::new(None), freed: Condvar::new() };

fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether `h` keeps a lock on `range` (`shared` or not) from being taken.
fn conflicts(h: Held, range: (u64, u64), shared: bool) -> bool {
    overlaps((h.0, h.1), range) && !(h.2 && shared)
}

/// A descriptor of an open file used only for its record locks.
pub struct FileLock {
    fd: OwnedFd,
    key: (u64, u64),
}

/// One locked range; dropping it unlocks.
pub struct RangeGuard<'a> {
    lock: &'a FileLock,
    range: (u64, u64),
    shared: bool,
}

impl FileLock {
    /// Opens `path` for locking (read-write: write locks need a writable descriptor).
    pub fn open(path: &str) -> io::Result<FileLock> {
        let c = CString::new(path).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: an all-zero stat is a valid value for fstat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is open and `st` is writable.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(FileLock { fd, key: (st.st_dev as u64, st.st_ino as u64) })
    }

    /// Locks bytes [`off`, `off + len`) exclusively, waiting for other holders in this process
    /// and in others. An empty range locks nothing.
    pub fn lock(&self, off: u64, len: u64) -> io::Result<RangeGuard<'_>> {
        self.take(off, len, false)
    }

    /// Locks bytes [`off`, `off + len`) shared: other shared holders may hold them too, an
    /// exclusive holder may not.
    pub fn lock_shared(&self, off: u64, len: u64) -> io::Result<RangeGuard<'_>> {
        self.take(off, len, true)
    }

    fn take(&self, off: u64, len: u64, shared: bool) -> io::Result<RangeGuard<'_>> {
        let range = (off, off.saturating_add(len));
        if len == 0 {
            return Ok(RangeGuard { lock: self, range: (off, off), shared });
        }
        {
            let mut held = TABLE.held.lock().unwrap_or_else(|p| p.into_inner());
            while held.get_or_insert_with(HashMap::new).get(&self.key).is_some_and(|v| v.iter().any(|&h| conflicts(h, range, shared))) {
                held = TABLE.freed.wait(held).unwrap_or_else(|p| p.into_inner());
            }
            held.get_or_insert_with(HashMap::new).entry(self.key).or_default().push((range.0, range.1, shared));
        }
        let guard = RangeGuard { lock: self, range, shared };
        self.record_lock(range, if shared { libc::F_RDLCK } else { libc::F_WRLCK } as libc::c_short)?;
        Ok(guard)
    }

    /// Sets (`F_WRLCK`, `F_RDLCK`) or clears (`F_UNLCK`) the record lock on `range`, waiting for
    /// it.
    fn record_lock(&self, range: (u64, u64), kind: libc::c_short) -> io::Result<()> {
        // SAFETY: an all-zero flock is a valid value; the fields that matter are set below.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = range.0 as libc::off_t;
        // A range reaching past off_t's largest value locks "to the end of the file" (0).
        fl.l_len = if range.1 > i64::MAX as u64 { 0 } else { (range.1 - range.0) as libc::off_t };
        for cmd in [libc::F_OFD_SETLKW, libc::F_SETLKW] {
            loop {
                // SAFETY: `fl` is a valid flock for the call; the fd is open.
                if unsafe { libc::fcntl(self.fd.as_raw_fd(), cmd, &mut fl as *mut libc::flock) } == 0 {
                    return Ok(());
                }
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // No OFD locks (old kernel): classic record locks.
                    Some(libc::EINVAL) if cmd == libc::F_OFD_SETLKW => break,
                    _ => return Err(e),
                }
            }
        }
        Err(io::Error::from_raw_os_error(libc::ENOLCK))
    }
}

impl Drop for RangeGuard<'_> {
    fn drop(&mut self) {
        if self.range.0 == self.range.1 {
            return;
        }
        // An unlock fails only on a bad descriptor, which this guard's lock keeps open.
        let _ = self.lock.record_lock(self.range, libc::F_UNLCK as libc::c_short);
        let mut guard = TABLE.held.lock().unwrap_or_else(|p| p.into_inner());
        let held = guard.get_or_insert_with(HashMap::new);
        if let Some(v) = held.get_mut(&self.lock.key) {
            if let Some(i) = v.iter().position(|&h| h == (self.range.0, self.range.1, self.shared)) {
                v.swap_remove(i);
            }
            if v.is_empty() {
                held.remove(&self.lock.key);
            }
        }
        TABLE.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn temp(name: &str) -> String {
        let p = std::env::temp_dir().join(format!("oxmpi-rangelock-{}-{name}", std::process::id()));
        std::fs::write(&p, [0u8; 64]).unwrap();
        p.to_string_lossy().into_owned()
    }

    /// Threads holding overlapping ranges through different descriptors of one file never hold
    /// them at once; disjoint ranges are held together.
    #[test]
    fn overlapping_ranges_exclude_each_other_across_threads() {
        let p = temp("threads");
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let ts: Vec<_> = (0..4)
            .map(|t| {
                let (p, inside, most) = (p.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    let l = FileLock::open(&p).unwrap();
                    for i in 0..200 {
                        // All ranges overlap [10, 20).
                        let g = l.lock(5 + (t + i) as u64 % 5, 16).unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(g);
                    }
                })
            })
            .collect();
        ts.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(most.load(Ordering::SeqCst), 1);
        let l = FileLock::open(&p).unwrap();
        let a = l.lock(0, 10).unwrap();
        let b = l.lock(10, 10).unwrap();
        let c = l.lock(1 << 40, u64::MAX).unwrap();
        drop((a, b, c));
        std::fs::remove_file(&p).unwrap();
    }

    /// A record lock held by this process blocks another process (a forked child tests it with
    /// F_GETLK, which reports the conflicting lock without waiting).
    #[test]
    fn record_lock_is_seen_by_another_process() {
        let p = temp("procs");
        let l = FileLock::open(&p).unwrap();
        let g = l.lock(8, 8).unwrap();
        let probe_kind = |start: i64, kind: i32| -> i32 {
            // SAFETY: fork in a test; the child only makes system calls and _exits.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let c = CString::new(p.clone()).unwrap();
                // SAFETY: plain system calls on a fresh descriptor in the child.
                unsafe {
                    let fd = libc::open(c.as_ptr(), libc::O_RDWR);
                    let mut fl: libc::flock = std::mem::zeroed();
                    fl.l_type = kind as libc::c_short;
                    fl.l_whence = libc::SEEK_SET as libc::c_short;
                    fl.l_start = start;
                    fl.l_len = 4;
                    let r = libc::fcntl(fd, libc::F_GETLK, &mut fl as *mut libc::flock);
                    libc::_exit(if r != 0 { 2 } else if fl.l_type == libc::F_UNLCK as libc::c_short { 0 } else { 1 });
                }
            }
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            libc::WEXITSTATUS(status)
        };
        let probe = |start: i64| probe_kind(start, libc::F_WRLCK);
        assert_eq!(probe(10), 1, "the held range conflicts");
        assert_eq!(probe(20), 0, "other bytes are free");
        drop(g);
        assert_eq!(probe(10), 0, "dropping the guard unlocks");
        // A shared range keeps writers out, not other shared holders.
        let g = l.lock_shared(8, 8).unwrap();
        assert_eq!(probe(10), 1, "a shared range conflicts with an exclusive one");
        assert_eq!(probe_kind(10, libc::F_RDLCK), 0, "a shared range admits another shared one");
        drop(g);
        assert_eq!(probe(10), 0, "dropping the shared guard unlocks");
        std::fs::remove_file(&p).unwrap();
    }

    /// Shared ranges of several descriptors are held at once; an exclusive range over them waits
    /// until every shared holder has let go.
    #[test]
    fn shared_ranges_admit_each_other_and_exclude_exclusive() {
        let p = temp("shared");
        let (a, b, c) = (FileLock::open(&p).unwrap(), FileLock::open(&p).unwrap(), FileLock::open(&p).unwrap());
        // Overlapping shared ranges, both held: neither waits for the other.
        let ga = a.lock_shared(0, 32).unwrap();
        let gb = b.lock_shared(16, 32).unwrap();
        let released = Arc::new(AtomicUsize::new(0));
        let r = released.clone();
        let t = std::thread::spawn(move || {
            let g = c.lock(20, 4).unwrap();
            let seen = r.load(Ordering::SeqCst);
            drop(g);
            seen
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        released.store(1, Ordering::SeqCst);
        drop(ga);
        std::thread::sleep(std::time::Duration::from_millis(20));
        released.store(2, Ordering::SeqCst);
        drop(gb);
        assert_eq!(t.join().unwrap(), 2, "the exclusive range was taken while a shared one was held");
        std::fs::remove_file(&p).unwrap();
    }
}
