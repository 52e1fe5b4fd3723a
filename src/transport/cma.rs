//! Single-copy transfers to and from another process's memory (Linux Cross Memory Attach:
//! process_vm_readv / process_vm_writev). Needs ptrace permission over the peer: same user, and
//! under Yama ptrace_scope=1 the peer must have allowed it (ranks call PR_SET_PTRACER at MPI_Init).
//! When the kernel refuses, the caller falls back to streaming the message through the channel.
use std::io;

/// Which way the bytes go.
#[derive(Clone, Copy)]
enum Direction {
    /// Peer memory to ours.
    Read,
    /// Our memory to the peer's.
    Write,
}

/// Moves `len` bytes between `local` (ours) and `remote_addr` in process `pid`, looping over
/// partial transfers and EINTR.
fn transfer(dir: Direction, pid: i32, remote_addr: u64, local: *mut u8, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let l = libc::iovec { iov_base: local.wrapping_add(done) as *mut libc::c_void, iov_len: len - done };
        let r = libc::iovec { iov_base: (remote_addr as usize + done) as *mut libc::c_void, iov_len: len - done };
        // SAFETY: `l` describes `len - done` bytes of the caller's buffer (writable for Read, readable
        // for Write, per the public functions' contracts); the kernel validates the remote range and
        // fails with EFAULT rather than touching ours wrongly.
        let n = unsafe {
            match dir {
                Direction::Read => libc::process_vm_readv(pid, &l, 1, &r, 1, 0),
                Direction::Write => libc::process_vm_writev(pid, &l, 1, &r, 1, 0),
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "process_vm_readv/writev moved 0 bytes"));
        }
        done += n as usize;
    }
    Ok(())
}

/// Copies `len` bytes at `remote_addr` in process `pid` into `dst` (writable for `len` bytes).
pub fn read_from(pid: i32, remote_addr: u64, dst: *mut u8, len: usize) -> io::Result<()> {
    transfer(Direction::Read, pid, remote_addr, dst, len)
}

/// Copies `len` bytes from `src` (readable for `len` bytes) into process `pid` at `remote_addr`.
pub fn write_to(pid: i32, remote_addr: u64, src: *const u8, len: usize) -> io::Result<()> {
    transfer(Direction::Write, pid, remote_addr, src as *mut u8, len)
}

/// Most iovecs one process_vm_readv/writev call takes (IOV_MAX on Linux).
const IOV_MAX: usize = 1024;

/// Fills `iov` with up to IOV_MAX of `pieces` (address, length), stopping at `limit` bytes; returns
/// the bytes listed.
fn fill(iov: &mut Vec<libc::iovec>, pieces: impl Iterator<Item = (u64, usize)>, limit: usize) -> usize {
    iov.clear();
    let mut total = 0;
    for (a, l) in pieces.take(IOV_MAX) {
        let l = l.min(limit - total);
        iov.push(libc::iovec { iov_base: a as usize as *mut libc::c_void, iov_len: l });
        total += l;
        if total == limit {
            break;
        }
    }
    total
}

/// Cuts `iov` down to its first `n` bytes.
fn trim(iov: &mut Vec<libc::iovec>, n: usize) {
    let mut total = 0;
    for (i, v) in iov.iter_mut().enumerate() {
        if total + v.iov_len >= n {
            v.iov_len = n - total;
            iov.truncate(i + 1);
            return;
        }
        total += v.iov_len;
    }
}

/// Moves stream bytes `[start, end)` between scattered local pieces and scattered pieces of
/// process `pid` (`read`: theirs to ours). `local(a, b)` and `remote(a, b)` list the (address,
/// length) pieces of stream bytes `[a, b)` on each side. Each call moves at most IOV_MAX pieces a
/// side; a partial transfer resumes at the byte it reached.
pub fn transfer_pieces<L, R>(read: bool, pid: i32, start: usize, end: usize, local: impl Fn(usize, usize) -> L, remote: impl Fn(usize, usize) -> R) -> io::Result<()>
where
    L: Iterator<Item = (u64, usize)>,
    R: Iterator<Item = (u64, usize)>,
{
    let (mut liov, mut riov) = (Vec::with_capacity(IOV_MAX), Vec::with_capacity(IOV_MAX));
    let mut pos = start;
    while pos < end {
        let l = fill(&mut liov, local(pos, end), end - pos);
        let r = fill(&mut riov, remote(pos, pos + l), l);
        if r == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a typed buffer holds fewer bytes than the message"));
        }
        trim(&mut liov, r);
        // SAFETY: the local iovecs lie inside the caller's buffer (writable for a read, readable for
        // a write, per the callers' contracts); the kernel validates the remote ones and fails with
        // EFAULT rather than touching ours wrongly.
        let n = unsafe {
            if read {
                libc::process_vm_readv(pid, liov.as_ptr(), liov.len() as libc::c_ulong, riov.as_ptr(), riov.len() as libc::c_ulong, 0)
            } else {
                libc::process_vm_writev(pid, liov.as_ptr(), liov.len() as libc::c_ulong, riov.as_ptr(), riov.len() as libc::c_ulong, 0)
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "process_vm_readv/writev moved 0 bytes"));
        }
        pos += n as usize;
    }
    Ok(())
}

/// Allows any process of ours to read this one with process_vm_readv under Yama ptrace_scope=1.
pub fn allow_peers() {
    // SAFETY: prctl with PR_SET_PTRACER only changes this process's Yama exception; harmless when
    // Yama is absent (returns EINVAL, ignored).
    unsafe {
        libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0);
    }
}
