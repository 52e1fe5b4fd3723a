//! Binds a rank's private library copies to its program's copies of MPI's predefined objects.
//!
//! In a process, an executable's copy of a library variable (`R_X86_64_COPY`) is the one
//! definition everybody uses: the executable comes first in the global scope, so every library
//! binds to it. In threads mode the MPI library (Open MPI's ABI: `libmpi.so.40`) is preloaded
//! into the host, so it sits in the global scope ahead of any rank's instance: each private
//! library (`private_libs`) binds `ompi_mpi_info_null` and the other predefined objects to MPI's
//! own definition while the program uses its copy. Handles are addresses, so the same handle has
//! two values in one rank, and a library comparing the program's `MPI_INFO_NULL` with its own
//! (netCDF-4: `info != MPI_INFO_NULL`) takes it for a real object. After an instance is loaded,
//! the GOT slots and absolute data words (`R_X86_64_GLOB_DAT`, `R_X86_64_64`) of the rank's
//! private libraries that point into such an MPI definition are pointed at the program's copy
//! instead, as a process's binding would have it. Only MPI's own objects are rebound: libc's
//! variables copied by a program are snapshots libc keeps changing in its own (see
//! `MUTABLE_LIBC_DATA`), and getopt's have storage of their own (`got_vars`).
use super::{got_vars, named_relocs, phdrs, private_libs::dynamic_entries, R_X86_64_GLOB_DAT};
use std::ffi::{c_void, CStr, CString};

/// `R_X86_64_64`: an absolute address (a library's initialised pointer to an object).
const R_X86_64_64: u32 = 1;
/// Objects whose definitions are MPI's (file name prefixes): the ABI libraries.
const MPI_DEFINERS: &[&str] = &["libmpi.so", "libmpi_", "libmpi_abi.so"];

/// Rebinds the slots of the libraries `libs` ((image, handle of the loaded object)) that point
/// into MPI's definition of one of `copies` ((name, this instance's copy)). Returns how many
/// slots were changed.
pub(super) fn bind(libs: &[(&[u8], *mut c_void)], copies: &[(String, usize)]) -> Result<usize, String> {
    let mut targets = Vec::new();
    for (name, cname, copy) in super::rewritable_copies(copies) {
        if let Some((def, size)) = mpi_definition(&cname) {
            if def != copy {
                targets.push((name, def, size, copy));
            }
        }
    }
    if targets.is_empty() {
        return Ok(0);
    }
    let mut changed = 0;
    for &(image, handle) in libs {
        let Some(base) = super::link_map_base(handle) else { continue };
        let ph = phdrs(image)?;
        let entries = dynamic_entries(image)?;
        let relro = got_vars::relro_of(&ph);
        for rtype in [R_X86_64_GLOB_DAT, R_X86_64_64] {
            for (name, offset) in named_relocs(image, &ph, &entries, rtype)? {
                let Some(&(_, def, size, copy)) = targets.iter().find(|t| t.0 == name) else { continue };
                let at = base.wrapping_add(offset as usize);
                // SAFETY: `at` is a relocated slot of this loaded object (its DT_RELA says so):
                // mapped, 8 bytes; no code of the rank runs yet.
                let v = unsafe { std::ptr::read_unaligned(at as *const usize) };
                if v < def || v >= def + size {
                    continue; // bound elsewhere (interposed): leave it
                }
                // SAFETY: as above; nothing else accesses the slot during the store.
                unsafe { got_vars::store(at, copy + (v - def), got_vars::in_relro(at, base, relro))? };
                changed += 1;
            }
        }
    }
    Ok(changed)
}

/// The definition (address, size) of `name` in the global scope, if an MPI library's.
fn mpi_definition(name: &CStr) -> Option<(usize, usize)> {
    // SAFETY: a C string; RTLD_DEFAULT searches the global scope.
    let def = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if def.is_null() {
        return None;
    }
    // SAFETY: Dl_info is plain pointers, for which all zeros is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    if unsafe { libc::dladdr(def, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated name owned by ld.so.
    let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let file = file.rsplit('/').next().unwrap_or("");
    if !MPI_DEFINERS.iter().any(|p| file.starts_with(p)) {
        return None;
    }
    let size = super::copy_refresh::symbol_size(def, &CString::from(name))?;
    Some((def as usize, size))
}
