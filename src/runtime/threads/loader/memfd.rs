//! In-memory files that hold the images threads mode hands to `dlopen` (a rank's copy of the
//! program, private copies of libraries, per-rank plugin copies): created, filled, and named as
//! `/proc/self/fd/N`, the path that makes each copy a distinct object for the dynamic loader.
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, IntoRawFd, RawFd};

/// A new empty memfd named `name` (seen in /proc/self/fd links), close-on-exec.
pub fn create(name: &str) -> std::io::Result<RawFd> {
    let n = CString::new(name).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid C string; MFD_CLOEXEC keeps it out of children's exec.
    let fd = unsafe { libc::memfd_create(n.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Writes `bytes` at the current offset of `fd` (a memfd from `create`, still open afterwards:
/// the caller owns and closes it).
pub fn fill(fd: RawFd, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: the caller owns fd; into_raw_fd hands it back unclosed whatever write_all did.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let written = file.write_all(bytes);
    let _ = file.into_raw_fd();
    written
}

/// The path under which the dynamic loader opens memfd `fd`.
pub fn path(fd: RawFd) -> String {
    format!("/proc/self/fd/{fd}")
}

/// A memfd named `name` holding `bytes`, or the error (nothing is left open then).
pub fn with_image(name: &str, bytes: &[u8]) -> std::io::Result<RawFd> {
    let fd = create(name)?;
    if let Err(e) = fill(fd, bytes) {
        // SAFETY: our descriptor, referred to by nothing yet.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    #[test]
    fn image_reads_back_through_its_path() {
        let fd = super::with_image("oxmpi-memfd-test", b"hello").unwrap();
        assert_eq!(std::fs::read(super::path(fd)).unwrap(), b"hello");
        super::fill(fd, b" world").unwrap();
        assert_eq!(std::fs::read(super::path(fd)).unwrap(), b"hello world");
        // SAFETY: ours.
        unsafe { libc::close(fd) };
        assert!(super::create("bad\0name").is_err());
    }
}
