//! Pointer arguments of the C entry points. The checks give the MPI error the standard prescribes
//! for a bad pointer (MPI_ERR_ARG, naming the argument) and are safe to call. What reads or writes
//! through a pointer is an `unsafe fn` whose contract is the C prototype's: a pointer that is not
//! NULL points to as many elements of its type as the other arguments say. The entry points keep
//! their own reads and writes of single values in small `unsafe` blocks after `out`.
use crate::abi::MPI_ERR_ARG;
use crate::error::{err, MpiResult};
use std::ffi::CStr;
use std::os::raw::c_char;

/// A required output (or in-out) argument: the pointer, or MPI_ERR_ARG "`what` is NULL".
pub fn out<T>(p: *mut T, what: &str) -> MpiResult<*mut T> {
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    Ok(p)
}

/// The `n` elements of an input array: empty when `n` is 0 (whatever `p` is), MPI_ERR_ARG
/// "`what` is NULL" when `p` is NULL with `n` > 0.
///
/// # Safety
/// If `n` > 0 and `p` is not NULL, `p` points to `n` initialised elements that nothing writes
/// while the returned slice lives.
pub unsafe fn input<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and `n` readable elements by this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Writes `v` to the first `v.len()` elements at `p`: nothing when `v` is empty (whatever `p`
/// is), MPI_ERR_ARG "`what` is NULL" when `p` is NULL and `v` is not empty.
///
/// # Safety
/// If `v` is not empty and `p` is not NULL, `p` points to `v.len()` writable elements, none of
/// them in `v`.
pub unsafe fn output<T: Copy>(p: *mut T, v: &[T], what: &str) -> MpiResult {
    if v.is_empty() {
        return Ok(());
    }
    let p = out(p, what)?;
    // SAFETY: non-NULL (checked by `out`), and `v.len()` writable elements apart from `v` by this
    // function's contract.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    Ok(())
}

/// A string argument: the string, or MPI_ERR_ARG "`what` is NULL".
///
/// # Safety
/// If `p` is not NULL, it is a NUL-terminated string that nothing changes while the result lives.
pub unsafe fn c_str<'a>(p: *const c_char, what: &str) -> MpiResult<&'a CStr> {
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and NUL-terminated and unchanging by this function's contract.
    Ok(unsafe { CStr::from_ptr(p) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::raw::c_int;

    fn class<T: std::fmt::Debug>(r: MpiResult<T>) -> c_int {
        r.unwrap_err().class.mpich()
    }

    #[test]
    fn null_pointers_are_mpi_err_arg() {
        assert_eq!(class(out(std::ptr::null_mut::<c_int>(), "size")), MPI_ERR_ARG);
        // SAFETY: NULL is checked before any read or write.
        unsafe {
            assert_eq!(class(input(std::ptr::null::<c_int>(), 2, "ranks")), MPI_ERR_ARG);
            assert_eq!(class(output(std::ptr::null_mut::<c_int>(), &[1], "ranks")), MPI_ERR_ARG);
            assert_eq!(class(c_str(std::ptr::null(), "name")), MPI_ERR_ARG);
        }
    }

    #[test]
    fn empty_arrays_ignore_the_pointer() {
        // SAFETY: nothing is read or written for zero elements.
        unsafe {
            assert!(input(std::ptr::null::<c_int>(), 0, "ranks").unwrap().is_empty());
            output(std::ptr::null_mut::<c_int>(), &[], "ranks").unwrap();
        }
    }

    #[test]
    fn reads_and_writes() {
        let src = [1, 2, 3];
        let mut dst = [0; 3];
        // SAFETY: both arrays hold three ints; the string is NUL-terminated.
        unsafe {
            assert_eq!(input(src.as_ptr(), 3, "src").unwrap(), &src);
            output(dst.as_mut_ptr(), &src, "dst").unwrap();
            assert_eq!(c_str(c"abc".as_ptr(), "s").unwrap().to_bytes(), b"abc");
        }
        assert_eq!(dst, src);
    }
}
