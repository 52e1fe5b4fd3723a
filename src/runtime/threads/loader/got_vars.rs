//! Per-rank storage for the getopt variables (`KEPT_LIBC_DATA`) a program reaches through its GOT.
//!
//! `-fPIC` code (a `-shared` program, or a PIE built with `-fPIC`, as oxmpi's own `mpicc` builds)
//! keeps no copy of `optind` and friends: each access loads libc's address from a GOT slot
//! (`R_X86_64_GLOB_DAT`). Every rank's instance would then read and write libc's one `optind`,
//! so a rank parsing its options after another had would see none (the other left `optind` at
//! the end), and ranks parsing at once would mix their results. After `dlopen`, the instance's
//! slots are pointed at storage of its own, reported as its copies (`Instance::copy_address`), so
//! the preload library's getopt family keeps them right exactly as for a PIE's `R_X86_64_COPY`
//! copies.
use super::Phdr;
use std::ffi::{c_char, c_int};

/// The getopt variables of one instance, with a fresh process's values.
#[repr(C)]
pub(super) struct Vars {
    optarg: *mut c_char,
    optind: c_int,
    opterr: c_int,
    optopt: c_int,
}

// SAFETY: plain data; the preload library reads and writes it under its getopt lock, on behalf of
// the rank that owns it.
unsafe impl Send for Vars {}
// SAFETY: as above.
unsafe impl Sync for Vars {}

impl Vars {
    fn new() -> Box<Vars> {
        Box::new(Vars { optarg: std::ptr::null_mut(), optind: 1, opterr: 1, optopt: b'?' as c_int })
    }

    /// Address of the variable `name` (one of `KEPT_LIBC_DATA`) inside this storage.
    fn address(&self, name: &str) -> Option<usize> {
        Some(match name {
            "optarg" => std::ptr::addr_of!(self.optarg) as usize,
            "optind" => std::ptr::addr_of!(self.optind) as usize,
            "opterr" => std::ptr::addr_of!(self.opterr) as usize,
            "optopt" => std::ptr::addr_of!(self.optopt) as usize,
            _ => return None,
        })
    }
}

/// `PT_GNU_RELRO`: the range the dynamic loader makes read-only once relocated.
const PT_GNU_RELRO: u32 = 0x6474_e552;

/// Where a program's GOT slots of the kept variables are (link-time addresses), and whether
/// they lie in its RELRO range.
#[derive(Debug, Default)]
pub(super) struct Slots {
    /// (variable, GOT slot's link-time address).
    slots: Vec<(String, u64)>,
    /// The RELRO range (link-time address, length), if the program has one.
    relro: Option<(u64, u64)>,
}

impl Slots {
    /// The kept variables among `glob_dat` (name, slot) relocations of the program's `DT_RELA`.
    pub(super) fn find(glob_dat: Vec<(String, u64)>, ph: &[Phdr]) -> Slots {
        let slots: Vec<(String, u64)> = glob_dat.into_iter().filter(|(n, _)| super::KEPT_LIBC_DATA.contains(&n.as_str())).collect();
        Slots { slots, relro: relro_of(ph) }
    }

    /// The program's RELRO range (link-time address, length), if it has one.
    pub(super) fn relro(&self) -> Option<(u64, u64)> {
        self.relro
    }

    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Points the slots of the instance loaded at `base` at new storage; returns the storage and
    /// (name, address) of each variable in it.
    pub(super) fn redirect(&self, base: usize) -> Result<(Box<Vars>, Vec<(String, usize)>), String> {
        let vars = Vars::new();
        let mut copies = Vec::new();
        for (name, slot) in &self.slots {
            let addr = vars.address(name).expect("slots hold kept variables only");
            let at = base.wrapping_add(*slot as usize);
            let relro = in_relro(at, base, self.relro);
            // SAFETY: `at` is a GOT slot of the instance just loaded at `base` (its DT_RELA says
            // so), 8 bytes, aligned; no code of the instance has run yet, so nothing reads it
            // concurrently. A RELRO slot is made writable for the store and read-only again.
            unsafe { store(at, addr, relro)? };
            copies.push((name.clone(), addr));
        }
        Ok((vars, copies))
    }
}

/// An object's RELRO range (link-time address, length), if it has one.
pub(super) fn relro_of(ph: &[Phdr]) -> Option<(u64, u64)> {
    ph.iter().find(|p| p.p_type == PT_GNU_RELRO).map(|p| (p.p_vaddr, p.p_memsz))
}

/// Whether the slot at `at`, in the object loaded at `base` with RELRO range `relro`, was made
/// read-only by the loader.
pub(super) fn in_relro(at: usize, base: usize, relro: Option<(u64, u64)>) -> bool {
    // The loader protects RELRO's whole pages only (glibc's `_dl_protect_relro` rounds both
    // ends down): a slot on its last, partial page stays writable, and that page also holds
    // data that must stay so.
    relro_pages(base, relro).is_some_and(|(start, end)| at >= start && at < end)
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize
}

/// Writes `bytes` at `at`, lifting the protection of the pages of `protected` (the range the
/// loader made read-only, `relro_pages`) it touches around the store.
///
/// # Safety
/// `[at, at + bytes.len())` must be mapped data of a loaded object nothing else accesses during
/// the call.
pub(super) unsafe fn store_bytes(at: usize, bytes: &[u8], protected: Option<(usize, usize)>) -> Result<(), String> {
    let page = page_size();
    let lo = at & !(page - 1);
    let hi = (at + bytes.len()).div_ceil(page) * page;
    let ro = protected.map(|(a, b)| (lo.max(a), hi.min(b))).filter(|(a, b)| a < b);
    let protect = |(a, b): (usize, usize), prot| {
        // SAFETY: [a, b) are mapped pages of the object (caller contract), page-aligned.
        if unsafe { libc::mprotect(a as *mut libc::c_void, b - a, prot) } != 0 {
            return Err(format!("mprotect of a copy: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    };
    if let Some(r) = ro {
        protect(r, libc::PROT_READ | libc::PROT_WRITE)?;
    }
    // SAFETY: a writable range (caller contract; its protected pages made writable above).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
    if let Some(r) = ro {
        protect(r, libc::PROT_READ)?;
    }
    Ok(())
}

/// The pages the loader made read-only (RELRO's whole pages) of the object loaded at `base`
/// with RELRO range `relro`, as `[start, end)`.
pub(super) fn relro_pages(base: usize, relro: Option<(u64, u64)>) -> Option<(usize, usize)> {
    let page = page_size();
    relro.map(|(a, len)| (base.wrapping_add(a as usize) & !(page - 1), base.wrapping_add(a.saturating_add(len) as usize) & !(page - 1)))
}

/// Writes `value` into the GOT slot at `at`, lifting RELRO's protection around the store.
///
/// # Safety
/// `at` must be a mapped, 8-byte aligned GOT slot nothing else accesses during the call.
pub(super) unsafe fn store(at: usize, value: usize, relro: bool) -> Result<(), String> {
    let page = page_size();
    let start = at & !(page - 1);
    let protect = |prot| {
        // SAFETY: [start, start + page) is the mapped page holding the slot (caller contract).
        if unsafe { libc::mprotect(start as *mut libc::c_void, page, prot) } != 0 {
            return Err(format!("mprotect of its GOT: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    };
    if relro {
        protect(libc::PROT_READ | libc::PROT_WRITE)?;
    }
    // SAFETY: a writable, aligned slot (caller contract; made writable above if RELRO).
    unsafe { std::ptr::write_volatile(at as *mut usize, value) };
    if relro {
        protect(libc::PROT_READ)?;
    }
    Ok(())
}
