//! Storage under MPI-IO (MPI 4.1 chapter 14): the few operations the chapter's logic needs from a
//! file system, behind one trait so that another backend (Lustre striping, io_uring) can come
//! later without touching views, file pointers or collective buffering. `Posix` is the only
//! backend today: `pread`/`pwrite` (and their vectored forms), `fallocate`, `ftruncate`, `fsync`.
//!
//! Offsets and lengths are bytes of the file. Reads past the end of the file are short, as
//! POSIX's; writes are whole or an error.
use crate::error::{err, ErrorClass, MpiError};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What a backend does for an open file. Implementations are shared by the threads of a rank
/// (and, in threads mode, by ranks), so every operation takes `&self` and is positioned: no
/// backend keeps a file offset.
pub trait Backend: Send + Sync {
    /// Reads into `buf` from byte `off`; returns how many bytes were read (fewer than
    /// `buf.len()` only at the end of the file).
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    /// Writes all of `buf` at byte `off`, extending the file if needed.
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<()>;
    /// Reads the contiguous file range starting at `off` into the memory pieces `bufs`, in
    /// order; returns the bytes read (short only at the end of the file).
    fn read_vectored_at(&self, bufs: &mut [io::IoSliceMut<'_>], off: u64) -> io::Result<usize>;
    /// Writes the memory pieces `bufs`, in order, to the contiguous file range at `off`.
    fn write_vectored_at(&self, bufs: &[io::IoSlice<'_>], off: u64) -> io::Result<()>;
    /// The file's size in bytes.
    fn size(&self) -> io::Result<u64>;
    /// Truncates or extends the file to `size` bytes (MPI_File_set_size).
    fn set_size(&self, size: u64) -> io::Result<()>;
    /// Makes sure the first `size` bytes have storage (MPI_File_preallocate); never shrinks.
    fn preallocate(&self, size: u64) -> io::Result<()>;
    /// Transfers written data to the storage device (MPI_File_sync).
    fn sync(&self) -> io::Result<()>;
    /// Whether `read_at` works: read-modify-write (sieved and two-phase writes with holes) needs
    /// it, also on a file the application opened MPI_MODE_WRONLY.
    fn can_read(&self) -> bool {
        true
    }
}

/// How to open a file: the POSIX reading of an MPI access mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenMode {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    /// Fail if the file exists (with `create`).
    pub exclusive: bool,
}

/// A file opened with POSIX calls.
pub struct Posix {
    fd: OwnedFd,
    /// Opened for reading: always, unless the mode is write-only and the file may not be read.
    readable: bool,
}

/// Largest byte count one POSIX read or write call is asked for (Linux transfers at most
/// 0x7ffff000 bytes per call anyway).
const MAX_CALL: usize = 1 << 30;
/// Most pieces one preadv/pwritev call takes (IOV_MAX on Linux).
const MAX_IOV: usize = 1024;

impl Posix {
    /// Opens `path` as `mode` says; new files get mode 0666 less the umask, as ROMIO's. A
    /// write-only mode is opened read-write where permissions allow (as ROMIO does), so writes
    /// with holes can read them back; the application's own reads stay refused by its amode.
    pub fn open(path: &str, mode: OpenMode) -> io::Result<Posix> {
        if mode.write && !mode.read {
            match Self::open_exact(path, OpenMode { read: true, ..mode }) {
                Err(e) if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EPERM) => {}
                r => return r,
            }
        }
        Self::open_exact(path, mode)
    }

    fn open_exact(path: &str, mode: OpenMode) -> io::Result<Posix> {
        let c = CString::new(path).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let mut flags = libc::O_CLOEXEC
            | match (mode.read, mode.write) {
                (true, true) => libc::O_RDWR,
                (false, true) => libc::O_WRONLY,
                _ => libc::O_RDONLY,
            };
        if mode.create {
            flags |= libc::O_CREAT;
        }
        if mode.exclusive {
            flags |= libc::O_EXCL;
        }
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        let fd = unsafe { libc::open(c.as_ptr(), flags, 0o666 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        Ok(Posix { fd: unsafe { OwnedFd::from_raw_fd(fd) }, readable: mode.read })
    }
}

/// Deletes the file `path` (MPI_File_delete).
pub fn delete(path: &str) -> io::Result<()> {
    std::fs::remove_file(path)
}

/// Retries `f` while it fails with EINTR.
fn retry<T>(mut f: impl FnMut() -> isize, done: impl FnOnce(usize) -> T) -> io::Result<T> {
    loop {
        let n = f();
        if n >= 0 {
            return Ok(done(n as usize));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl Backend for Posix {
    fn can_read(&self) -> bool {
        self.readable
    }

    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let want = (buf.len() - done).min(MAX_CALL);
            let at = (off + done as u64) as libc::off_t;
            // SAFETY: the destination is `want` writable bytes inside `buf`.
            let n = retry(|| unsafe { libc::pread(self.fd.as_raw_fd(), buf[done..].as_mut_ptr().cast(), want, at) }, |n| n)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        Ok(done)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let want = (buf.len() - done).min(MAX_CALL);
            let at = (off + done as u64) as libc::off_t;
            // SAFETY: the source is `want` readable bytes inside `buf`.
            let n = retry(|| unsafe { libc::pwrite(self.fd.as_raw_fd(), buf[done..].as_ptr().cast(), want, at) }, |n| n)?;
            if n == 0 {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            done += n;
        }
        Ok(())
    }

    fn read_vectored_at(&self, bufs: &mut [io::IoSliceMut<'_>], off: u64) -> io::Result<usize> {
        let mut total = 0usize;
        for chunk in bufs.chunks_mut(MAX_IOV) {
            let want: usize = chunk.iter().map(|b| b.len()).sum();
            let at = (off + total as u64) as libc::off_t;
            // SAFETY: IoSliceMut is ABI-compatible with struct iovec, and every piece is
            // writable memory borrowed for the call.
            let n = retry(|| unsafe { libc::preadv(self.fd.as_raw_fd(), chunk.as_ptr().cast(), chunk.len() as libc::c_int, at) }, |n| n)?;
            total += n;
            if n < want {
                // A short vectored read: finish piece by piece (the end of the file, or a
                // transfer the kernel split).
                let mut skip = n;
                for b in chunk.iter_mut() {
                    if skip >= b.len() {
                        skip -= b.len();
                        continue;
                    }
                    let got = self.read_at(&mut b[skip..], off + total as u64)?;
                    total += got;
                    if got < b.len() - skip {
                        return Ok(total);
                    }
                    skip = 0;
                }
            }
        }
        Ok(total)
    }

    fn write_vectored_at(&self, bufs: &[io::IoSlice<'_>], off: u64) -> io::Result<()> {
        let mut total = 0u64;
        for chunk in bufs.chunks(MAX_IOV) {
            let want: usize = chunk.iter().map(|b| b.len()).sum();
            let at = (off + total) as libc::off_t;
            // SAFETY: IoSlice is ABI-compatible with struct iovec, and every piece is readable
            // memory borrowed for the call.
            let n = retry(|| unsafe { libc::pwritev(self.fd.as_raw_fd(), chunk.as_ptr().cast(), chunk.len() as libc::c_int, at) }, |n| n)?;
            if n < want {
                // Finish a short vectored write piece by piece.
                let mut skip = n;
                let mut pos = off + total + n as u64;
                for b in chunk {
                    if skip >= b.len() {
                        skip -= b.len();
                        continue;
                    }
                    self.write_at(&b[skip..], pos)?;
                    pos += (b.len() - skip) as u64;
                    skip = 0;
                }
            }
            total += want as u64;
        }
        Ok(())
    }

    fn size(&self) -> io::Result<u64> {
        // SAFETY: an all-zero stat is a valid value for fstat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is open and `st` is writable.
        if unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(st.st_size as u64)
    }

    fn set_size(&self, size: u64) -> io::Result<()> {
        // SAFETY: plain system call on an open fd.
        retry(|| unsafe { libc::ftruncate(self.fd.as_raw_fd(), size as libc::off_t) } as isize, |_| ())
    }

    fn preallocate(&self, size: u64) -> io::Result<()> {
        if size <= self.size()? {
            return Ok(());
        }
        // SAFETY: plain system call on an open fd; mode 0 only allocates and extends.
        let r = unsafe { libc::posix_fallocate(self.fd.as_raw_fd(), 0, size as libc::off_t) };
        match r {
            0 => Ok(()),
            // File systems without fallocate (some FUSE, old NFS): extending the size gives the
            // same visible result.
            libc::EOPNOTSUPP | libc::EINVAL => self.set_size(size),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    fn sync(&self) -> io::Result<()> {
        // SAFETY: plain system call on an open fd.
        retry(|| unsafe { libc::fsync(self.fd.as_raw_fd()) } as isize, |_| ())
    }
}

/// The MPI error class of a failed file-system call (MPI 4.1 section 14.7, table 14.3).
pub fn error_class(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(libc::ENOENT) => ErrorClass::NoSuchFile,
        Some(libc::EEXIST) => ErrorClass::FileExists,
        Some(libc::EACCES) | Some(libc::EPERM) => ErrorClass::Access,
        Some(libc::ENOSPC) | Some(libc::EFBIG) => ErrorClass::NoSpace,
        Some(libc::EDQUOT) => ErrorClass::Quota,
        Some(libc::EROFS) => ErrorClass::ReadOnly,
        Some(libc::ETXTBSY) | Some(libc::EBUSY) => ErrorClass::FileInUse,
        Some(libc::EISDIR) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) | Some(libc::EINVAL) => ErrorClass::BadFile,
        _ => ErrorClass::Io,
    }
}

/// `e` as an MPI error saying what failed on which file.
pub fn mpi_error(what: &str, path: &str, e: &io::Error) -> MpiError {
    err(error_class(e), format!("{what} {path:?} failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> String {
        let d = std::env::temp_dir().join(format!("oxmpi-backend-{}-{name}", std::process::id()));
        d.to_string_lossy().into_owned()
    }

    #[test]
    fn positioned_and_vectored_round_trip() {
        let p = temp("rt");
        let f = Posix::open(&p, OpenMode { read: true, write: true, create: true, exclusive: true }).unwrap();
        f.write_at(b"hello", 10).unwrap();
        assert_eq!(f.size().unwrap(), 15);
        let (a, b) = (b"ab".to_vec(), b"cde".to_vec());
        f.write_vectored_at(&[io::IoSlice::new(&a), io::IoSlice::new(&b)], 0).unwrap();
        let mut x = [0u8; 4];
        let mut y = [0u8; 20];
        let n = f.read_vectored_at(&mut [io::IoSliceMut::new(&mut x), io::IoSliceMut::new(&mut y)], 1).unwrap();
        assert_eq!(n, 14, "a read past the end is short");
        assert_eq!(&x, b"bcde");
        assert_eq!(&y[5..10], b"hello");
        f.set_size(3).unwrap();
        assert_eq!(f.size().unwrap(), 3);
        f.preallocate(4096).unwrap();
        assert_eq!(f.size().unwrap(), 4096);
        f.preallocate(10).unwrap();
        assert_eq!(f.size().unwrap(), 4096, "preallocate never shrinks");
        f.sync().unwrap();
        delete(&p).unwrap();
    }

    #[test]
    fn errors_map_to_mpi_classes() {
        let p = temp("missing");
        let e = Posix::open(&p, OpenMode { read: true, ..Default::default() }).err().unwrap();
        assert_eq!(error_class(&e), ErrorClass::NoSuchFile);
        let f = Posix::open(&p, OpenMode { write: true, create: true, ..Default::default() }).unwrap();
        drop(f);
        let e = Posix::open(&p, OpenMode { write: true, create: true, exclusive: true, ..Default::default() }).err().unwrap();
        assert_eq!(error_class(&e), ErrorClass::FileExists);
        delete(&p).unwrap();
        assert_eq!(error_class(&delete(&p).unwrap_err()), ErrorClass::NoSuchFile);
    }
}
