//! Returning strings (MPI 4.1 section 15.3.3): `len` on entry is the buffer size; with a null
//! buffer or a zero size, the call only reports the length needed (including the terminating
//! NUL). Otherwise at most `len - 1` characters and a NUL are stored, and `len` becomes the
//! number stored including the NUL. A null `len` means no string is wanted. (MPICH's
//! `MPIR_T_strncpy` behaves the same way.)
use std::os::raw::{c_char, c_int};

/// Stores `s` into (`buf`, `len`) by the rules above.
///
/// # Safety
/// `len` is null or valid; if `*len > 0` and `buf` is not null, `buf` has `*len` bytes.
pub unsafe fn put(s: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: `len` is valid (caller contract, checked non-null above).
    let cap = unsafe { *len };
    if buf.is_null() || cap <= 0 {
        // SAFETY: as above.
        unsafe { *len = s.len() as c_int + 1 };
        return;
    }
    let n = s.len().min(cap as usize - 1);
    // SAFETY: `buf` has `cap > n` bytes (caller contract).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
        *buf.add(n) = 0;
        *len = n as c_int + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn length_query_truncation_and_full_copy() {
        let mut len: c_int = 0;
        // SAFETY: a valid length, no buffer.
        unsafe { put("abcdef", std::ptr::null_mut(), &mut len) };
        assert_eq!(len, 7);
        let mut buf = [b'x' as c_char; 8];
        len = 4;
        // SAFETY: `buf` has at least `len` bytes.
        unsafe { put("abcdef", buf.as_mut_ptr(), &mut len) };
        assert_eq!(len, 4);
        assert_eq!(&buf[..4], &[b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]);
        len = 8;
        // SAFETY: as above.
        unsafe { put("abcdef", buf.as_mut_ptr(), &mut len) };
        assert_eq!(len, 7);
        assert_eq!(buf[6], 0);
        // SAFETY: a null length means no string is wanted.
        unsafe { put("abc", buf.as_mut_ptr(), std::ptr::null_mut()) };
    }
}
