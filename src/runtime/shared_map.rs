//! A shared mapping that the members of one object (a window, a file, a communicator) make
//! together: the creator sizes a memfd and maps it, the others map the same file through
//! `/proc/<creator pid>/fd/<fd>` (in threads mode that is their own process). One piece of code
//! for `osc::shm`, `io::shared` and `coll::region`. Zero-filled at creation; unmapped on drop.
use std::ffi::CStr;
use std::io;

pub struct SharedMap {
    base: *mut u8,
    len: usize,
}

// SAFETY: a fixed mapping of shared memory; its users access it through atomics or under their
// own protocols (documented where they are), and it never moves until dropped.
unsafe impl Send for SharedMap {}
// SAFETY: as above.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// A new memfd called `name` of `len` bytes, mapped; returns the mapping and the descriptor
    /// the other members open (the caller closes it once they have).
    pub fn create(name: &CStr, len: usize) -> io::Result<(SharedMap, i32)> {
        // SAFETY: a valid C string; CLOEXEC: the descriptor is only for the object's members.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is ours.
        let r = if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 { Err(io::Error::last_os_error()) } else { Self::map(fd, len) };
        match r {
            Ok(m) => Ok((m, fd)),
            Err(e) => {
                // SAFETY: fd is ours, not used after.
                unsafe { libc::close(fd) };
                Err(e)
            }
        }
    }

    /// Maps the `len` bytes that process `pid` created as descriptor `fd`.
    pub fn open(pid: i32, fd: i32, len: usize) -> io::Result<SharedMap> {
        let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}")).expect("no NUL in a path of digits");
        // SAFETY: a valid C string.
        let my = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if my < 0 {
            return Err(io::Error::last_os_error());
        }
        let r = Self::map(my, len);
        // SAFETY: our descriptor; the mapping keeps the memfd alive.
        unsafe { libc::close(my) };
        r
    }

    fn map(fd: i32, len: usize) -> io::Result<SharedMap> {
        // SAFETY: mapping `len` bytes of a memfd its creator sized to `len`.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedMap { base: p as *mut u8, len })
    }

    /// The first byte of the mapping (page aligned).
    pub fn base(&self) -> *mut u8 {
        self.base
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: our mapping of `len` bytes; its owner drops it only when nothing uses it.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}
