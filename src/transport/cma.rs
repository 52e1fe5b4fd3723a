//! Single-copy reads from another process's memory (Linux Cross Memory Attach, process_vm_readv).
//! Needs ptrace permission over the peer: same user, and under Yama ptrace_scope=1 the peer must
//! have allowed it (ranks call PR_SET_PTRACER at MPI_Init). When the kernel refuses, the caller falls
//! back to streaming the message through the channel.
use std::io;

/// Copies `len` bytes at `remote_addr` in process `pid` into `dst`, looping over partial reads.
pub fn read_from(pid: i32, remote_addr: u64, dst: *mut u8, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let local = libc::iovec { iov_base: dst.wrapping_add(done) as *mut libc::c_void, iov_len: len - done };
        let remote = libc::iovec { iov_base: (remote_addr as usize + done) as *mut libc::c_void, iov_len: len - done };
        // SAFETY: `local` describes writable memory of the caller (dst..dst+len, the receive buffer);
        // the kernel validates the remote range and fails with EFAULT rather than touching ours wrongly.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "process_vm_readv read 0 bytes"));
        }
        done += n as usize;
    }
    Ok(())
}

/// Copies `len` bytes from `src` into process `pid` at `remote_addr`, looping over partial writes.
pub fn write_to(pid: i32, remote_addr: u64, src: *const u8, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let local = libc::iovec { iov_base: src.wrapping_add(done) as *mut libc::c_void, iov_len: len - done };
        let remote = libc::iovec { iov_base: (remote_addr as usize + done) as *mut libc::c_void, iov_len: len - done };
        // SAFETY: `local` describes readable memory of the caller (the send buffer); the kernel
        // validates the remote range (the peer's receive buffer, which it announced).
        let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "process_vm_writev wrote 0 bytes"));
        }
        done += n as usize;
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
