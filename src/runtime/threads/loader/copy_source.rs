//! Fills the program's copies that the dynamic loader filled from the program itself.
//!
//! glibc leaves the referencing object out of the lookup of an `R_X86_64_COPY` relocation's
//! source only when that object is the main executable (`lt_executable`). A rank's instance is a
//! loaded object, so a variable it copies from a library that is not in the global scope (the
//! program's own libraries, loaded `RTLD_LOCAL` with it) is found in the instance itself first
//! and copied onto itself: it stays zero. That is how the C++ bindings' vtables and constants
//! (`MPI::ERR_OTHER`, the typeinfo and vtables Boost's libraries export) came out empty in
//! threads mode. After loading, each copy that is all zeros takes the bytes of the definition a
//! process would have used: the first direct dependency that defines the name, else the first
//! whose dependency tree does. Copies a library's constructor has since written (`MPI::COMM_WORLD`)
//! are not zero and are left alone; copies of variables of the global scope's objects (MPI's
//! predefined objects, libc's) were found there and are right already.
use super::copy_refresh::{defines, symbol_size};
use super::got_vars;
use std::ffi::{c_void, CString};

/// Fills the all-zero `copies` ((name, address) of this instance's copies) from `deps` (handles
/// of the instance's direct dependencies, in `DT_NEEDED` order). `protected`: the instance's
/// pages the loader made read-only (`got_vars::relro_pages`). Returns how many were filled.
pub(super) fn fill(copies: &[(String, usize)], deps: &[*mut c_void], protected: Option<(usize, usize)>) -> Result<usize, String> {
    let mut filled = 0;
    for (_, cname, copy) in super::rewritable_copies(copies) {
        let Some((src, size)) = source(&cname, deps) else { continue };
        if src == copy {
            continue;
        }
        // SAFETY: the copy was made `size` bytes long from this symbol by the loader (it takes
        // `st_size`), the source is a loaded definition of that size; no rank runs yet.
        let (from, to) = unsafe { (std::slice::from_raw_parts(src as *const u8, size), std::slice::from_raw_parts(copy as *const u8, size)) };
        if to.iter().any(|&b| b != 0) || from.iter().all(|&b| b == 0) {
            continue;
        }
        // SAFETY: as above; the protected pages are the instance's own.
        unsafe { got_vars::store_bytes(copy, from, protected)? };
        filled += 1;
    }
    Ok(filled)
}

/// Where `name` is defined for the program, and its size: the first of `deps` defining it
/// itself, else the first whose dependency tree does (dlsym searches a handle's tree).
fn source(name: &CString, deps: &[*mut c_void]) -> Option<(usize, usize)> {
    let own = deps.iter().find(|&&h| defines(h, name));
    for &h in own.into_iter().chain(deps.iter()) {
        // SAFETY: a live handle and a C string.
        let def = unsafe { libc::dlsym(h, name.as_ptr()) };
        if !def.is_null() {
            return symbol_size(def, name).map(|size| (def as usize, size));
        }
    }
    None
}
