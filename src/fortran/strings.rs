//! Fortran CHARACTER arguments: a pointer plus a hidden length passed after all explicit
//! arguments (`size_t` for gfortran >= 8 and ifort; older gfortran passed `int`, whose low 32 bits
//! are the same on x86-64). Input strings lose their trailing blanks (and, for info keys and
//! values, leading ones) like MPICH's `MPIR_fort_dup_str`; output strings are blank-padded.
use std::ffi::CString;
use std::os::raw::c_char;

/// A Fortran hidden string length.
pub type FLen = usize;

/// The text of an input CHARACTER argument without trailing blanks (and leading ones if `both`),
/// as a C string (an embedded NUL ends it, as C would read it).
///
/// # Safety
/// `s` points to `len` readable bytes (the Fortran argument).
pub unsafe fn input(s: *const c_char, len: FLen, both: bool) -> CString {
    let len = len & 0xffff_ffff;
    // SAFETY: the caller's CHARACTER*(len) argument.
    let bytes = if s.is_null() { &[][..] } else { unsafe { std::slice::from_raw_parts(s as *const u8, len) } };
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    let start = if both { bytes[..end].iter().position(|&b| b != b' ').unwrap_or(end) } else { 0 };
    CString::new(&bytes[start..end]).expect("no NUL left")
}

/// Copies the NUL-terminated C text in `c` into the CHARACTER*(len) argument `out`, truncated
/// and blank-padded. Returns the number of characters copied.
///
/// # Safety
/// `out` points to `len` writable bytes.
pub unsafe fn output(c: &[u8], out: *mut c_char, len: FLen) -> usize {
    let len = len & 0xffff_ffff;
    let text = c.split(|&b| b == 0).next().unwrap_or(&[]);
    let n = text.len().min(len);
    if !out.is_null() {
        // SAFETY: `out` has `len` bytes (the caller's CHARACTER argument), n <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), out as *mut u8, n);
            std::ptr::write_bytes((out as *mut u8).add(n), b' ', len - n);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn trims_and_pads() {
        let s = b"  key   ";
        // SAFETY: a local buffer of the given length.
        unsafe {
            assert_eq!(input(s.as_ptr() as *const c_char, s.len(), false).as_bytes(), b"  key");
            assert_eq!(input(s.as_ptr() as *const c_char, s.len(), true).as_bytes(), b"key");
            let mut out = [0 as c_char; 6];
            assert_eq!(output(b"abc\0zz", out.as_mut_ptr(), 6), 3);
            assert_eq!(out.map(|c| c as u8), *b"abc   ");
            assert_eq!(output(b"abcdefgh\0", out.as_mut_ptr(), 6), 6);
            assert_eq!(out.map(|c| c as u8), *b"abcdef");
        }
    }
}
