//! Gives a later rank's instance the values a shared library's constructor put into the first
//! instance's copies of its variables (`R_X86_64_COPY`).
//!
//! In an executable, a library binds its references to the executable's copy of its variable, so
//! its constructor initialises that copy. In threads mode the libraries shared by all ranks
//! (the MPI libraries themselves, libc, ...) are loaded and relocated once, with the first
//! instance: their references bind to the first instance's copies, and their constructors
//! initialise those. A later instance's copies are snapshots of the libraries' own, never
//! initialised, variables: C++ bindings' objects built by constructors (`MPI::COMM_WORLD` of Open
//! MPI's libmpi_cxx and MPICH's libmpichcxx) would stay zero in every rank but the first. So each
//! later instance takes the first instance's values, before any rank runs. Variables of the
//! rank's private library copies (`private_libs`) are its own already (those copies bind to it)
//! and are left alone, as are getopt's (`KEPT_LIBC_DATA`, kept per rank). Values set once at
//! start-up are right after this; a library changing its variable later is not followed (as for
//! libc's, see `MUTABLE_LIBC_DATA`).
use std::ffi::{c_int, c_void, CString};

/// glibc's `Dl_info` (`<dlfcn.h>`).
#[repr(C)]
struct DlInfo {
    dli_fname: *const std::ffi::c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const std::ffi::c_char,
    dli_saddr: *mut c_void,
}

/// `Elf64_Sym`.
#[repr(C)]
struct Elf64Sym {
    st_name: u32,
    st_info: u8,
    st_other: u8,
    st_shndx: u16,
    st_value: u64,
    st_size: u64,
}

const RTLD_DL_SYMENT: c_int = 1;

extern "C" {
    fn dladdr1(addr: *const c_void, info: *mut DlInfo, extra: *mut *mut c_void, flags: c_int) -> c_int;
}

/// Copies, for each of `copies` (name, this instance's copy) the first instance's copy of the
/// same name (`first`, same order: the same program) over it, the symbol's size (`st_size` of the
/// first instance's definition) long; except names one of `private` (handles of this rank's
/// private library copies) defines itself, and getopt's.
pub(super) fn take_first(copies: &[(String, usize)], first: &[(String, usize)], private: &[*mut c_void]) {
    for ((name, copy), (first_name, src)) in copies.iter().zip(first) {
        if name != first_name || copy == src || super::KEPT_LIBC_DATA.contains(&name.as_str()) {
            continue;
        }
        let Ok(cname) = CString::new(name.as_str()) else { continue };
        if private.iter().any(|&lib| defines(lib, &cname)) {
            continue;
        }
        let Some(size) = symbol_size(*src as *const c_void, &cname) else { continue };
        // SAFETY: both copies were made `size` bytes long from this symbol by the dynamic loader
        // (R_X86_64_COPY takes st_size), in two loaded instances of the same program; no rank
        // runs yet.
        let (from, to) = unsafe { (std::slice::from_raw_parts(*src as *const u8, size), std::slice::from_raw_parts_mut(*copy as *mut u8, size)) };
        // Equal copies are left untouched: the copies of read-only definitions (vtables, const
        // tables) sit in the program's RELRO, read-only by now, and no constructor changes them.
        if from != to {
            to.copy_from_slice(from);
        }
    }
}

/// `st_size` of symbol `name` defined at `addr` (dladdr1), if `addr` is where it starts: also
/// false once the first instance is unloaded (a spawned job reusing the program).
pub(super) fn symbol_size(addr: *const c_void, name: &CString) -> Option<usize> {
    let mut info = DlInfo { dli_fname: std::ptr::null(), dli_fbase: std::ptr::null_mut(), dli_sname: std::ptr::null(), dli_saddr: std::ptr::null_mut() };
    let mut sym: *mut c_void = std::ptr::null_mut();
    // SAFETY: dladdr1 only reads the loader's tables; with RTLD_DL_SYMENT it points `sym` at the
    // matching Elf64_Sym.
    if unsafe { dladdr1(addr, &mut info, &mut sym, RTLD_DL_SYMENT) } == 0 || sym.is_null() || info.dli_saddr as *const c_void != addr || info.dli_sname.is_null() {
        return None;
    }
    // SAFETY: dladdr1 set dli_sname to a NUL-terminated name in the object's string table.
    if unsafe { std::ffi::CStr::from_ptr(info.dli_sname) } != name.as_c_str() {
        return None;
    }
    // SAFETY: `sym` points at a symbol table entry of a loaded object (dladdr1 above).
    let size = unsafe { (*(sym as *const Elf64Sym)).st_size } as usize;
    (size > 0).then_some(size)
}

/// Whether library `lib` itself (not one of its dependencies) defines `name`.
pub(super) fn defines(lib: *mut c_void, name: &CString) -> bool {
    // SAFETY: a live handle and a C string.
    let def = unsafe { libc::dlsym(lib, name.as_ptr()) };
    if def.is_null() {
        return false;
    }
    let mut info = DlInfo { dli_fname: std::ptr::null(), dli_fbase: std::ptr::null_mut(), dli_sname: std::ptr::null(), dli_saddr: std::ptr::null_mut() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(def, (&mut info as *mut DlInfo).cast()) } == 0 {
        return false;
    }
    // dladdr names the object by its link map's own l_name string.
    name_of(lib) == Some(info.dli_fname)
}

/// The `l_name` pointer of `handle`'s link map.
fn name_of(handle: *mut c_void) -> Option<*const std::ffi::c_char> {
    let mut lm: *const super::LinkMapHead = std::ptr::null();
    // SAFETY: live handle; RTLD_DI_LINKMAP stores a `struct link_map *` into the pointer we pass.
    let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&mut lm as *mut *const super::LinkMapHead).cast()) };
    if rc != 0 || lm.is_null() {
        return None;
    }
    // SAFETY: glibc's link map, live while the handle is.
    Some(unsafe { (*lm).l_name })
}
