//! Private copies of the program's MPI libraries, one set per rank (threads mode).
//!
//! A library built on MPI (ScaLAPACK's BLACS, parallel HDF5, PETSc) keeps per-process state
//! (grids, open files, communicators) in its globals; shared by every rank of a threads-mode job,
//! that state would mix ranks. So each rank gets its own copies of those libraries, as it gets
//! its own copy of the program:
//!
//! * Rank 0's instance is loaded as the program asks. The objects its `dlopen` brought in
//!   (`dl_iterate_phdr` before and after) are the program's libraries. The *private set* is those
//!   that depend on MPI, directly or through another one of them, plus interpreters' libraries
//!   (`libpython`: the interpreter's whole state) and the user's
//!   `OXMPI_PRIVATE_LIBS`, minus `OXMPI_SHARED_LIBS` (name prefixes, comma-separated). Everything
//!   else (libc, the compilers' run-time libraries, zlib, curl...) stays one per process, as
//!   oxmpi itself does.
//! * Rank r > 0: each private library is written into a memfd of its own. In the copies of the
//!   program and of the private libraries, every `DT_NEEDED` naming a private library is rewritten
//!   in place (same string table, a name no longer than the original) to the path of rank r's
//!   copy: `/proc/self/fd/N`, or, for a name too short for that, `./N` with the process's working
//!   directory set to `/proc/self/fd` for the `dlopen` (the host loads ranks one after another,
//!   before any rank runs). ld.so loads them as distinct objects (distinct paths and inodes) and
//!   binds each rank's symbols inside its own set: one link-map namespace, so no limit of 16 as
//!   with `dlmopen`.
//! * A name that cannot be rewritten safely (another string of the table starts inside it, or no
//!   section headers to tell) leaves the whole set shared, as before this existed.
//!
//! The memfds stay open for the life of the process: ld.so matches loaded objects by path, so a
//! reused descriptor number would hand back an old copy.
use super::{phdrs, shdrs, u16_at, u32_at, u64_at, vaddr_to_off, DT_NULL, DT_STRSZ, DT_STRTAB, PT_DYNAMIC, SHT_DYNSYM};
use std::ffi::{c_int, c_void, CStr};
use std::fs::File;
use std::path::Path;

const DT_NEEDED: i64 = 1;
const DT_SONAME: i64 = 14;
const DT_RPATH: i64 = 15;
const DT_RUNPATH: i64 = 29;
const DT_FLAGS: i64 = 30;
/// `DF_STATIC_TLS`: the object uses the initial-exec TLS model; copies would exhaust the static
/// TLS block.
const DF_STATIC_TLS: u64 = 0x10;
const SHT_GNU_VERDEF: u32 = 0x6fff_fffd;
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;

/// Library names (prefixes) that are MPI itself: a library needing one of them is built on MPI.
const MPI_LIBS: &[&str] = &["libmpi.so", "libmpich.so", "libmpifort.so", "libmpichfort.so", "libmpicxx.so", "libmpichcxx.so", "libmpi_", "liboxmpi"];

/// Libraries private per rank even when listed as shared: an interpreter keeps its whole state in
/// its library (a Python interpreter per rank needs its own `libpython`).
const INTERPRETER_LIBS: &[&str] = &["libpython"];

/// Libraries one per process (name prefixes): process-wide run-time libraries (the C library,
/// the compilers' run-times, whose I/O units and thread pools are the process's), and libraries
/// that are safe to call from several ranks at once and costly to copy (compression, TLS and
/// network stacks, XML and Unicode, BLAS and LAPACK, the MPI stack's own). Any other library a
/// program needs keeps per-process state the ranks must not share (FFTW's planner, a serial
/// HDF5, a Fortran library's SAVE variables), so it is loaded per rank.
const SHARED_LIBS: &[&str] = &[
    // C library and loader
    "libc.so", "libm.so", "libmvec.so", "libpthread.so", "libdl.so", "librt.so", "libresolv.so", "libutil.so", "libanl.so", "libnsl.so",
    "libcrypt.so", "libnss_", "ld-linux", "libBrokenLocale.so",
    // compilers' run-times
    "libgcc_s.so", "libstdc++.so", "libgfortran.so", "libquadmath.so", "libgomp.so", "libatomic.so", "libomp.so", "libiomp5.so",
    "libasan.so", "libubsan.so", "libtsan.so", "liblsan.so",
    // compression
    "libz.so", "libzstd.so", "liblzma.so", "libbz2.so", "libbrotli", "liblz4.so", "libsz.so", "libaec.so", "libsnappy.so", "liblzo2.so",
    // TLS, network, directory services
    "libcurl", "libcrypto.so", "libssl.so", "libgnutls.so", "libnettle.so", "libhogweed.so", "libgmp.so", "libp11-kit.so", "libtasn1.so",
    "libidn2.so", "libunistring.so", "libpsl.so", "libnghttp2.so", "librtmp.so", "libssh2.so", "libssh.so", "libgssapi_krb5.so",
    "libkrb5.so", "libkrb5support.so", "libk5crypto.so", "libcom_err.so", "libkeyutils.so", "libldap", "liblber", "libsasl2.so",
    "libgcrypt.so", "libgpg-error.so",
    // system
    "libxml2.so", "libicu", "libexpat.so", "libffi.so", "libuuid.so", "libblkid.so", "libmount.so", "libselinux.so", "libpcre",
    "libsystemd.so", "libudev.so", "libcap.so", "libbsd.so", "libmd.so", "libdbus-1.so", "libtinfo.so", "libncurses", "libreadline.so",
    // the MPI stack's own (one per process, as oxmpi is)
    "libhwloc.so", "libucp.so", "libuct.so", "libucs.so", "libucm.so", "libpmix.so", "libpmi", "libevent", "libnuma.so", "libltdl.so",
    "libmunge.so", "libibverbs.so", "librdmacm.so", "libfabric.so", "libpsm", "libxpmem.so", "libopen-pal.so", "libopen-rte.so",
    // BLAS and LAPACK (stateless, or thread-safe with a pool of their own)
    "libblas.so", "libcblas.so", "liblapack.so", "libopenblas", "libblis", "libatlas.so", "libf77blas.so", "libmkl_",
];

/// One library of the private set.
struct Lib {
    /// The names a `DT_NEEDED` entry may use for it: its `DT_SONAME` and its file's name.
    names: Vec<String>,
    /// The original's path, as loaded for rank 0.
    path: String,
    /// The file's bytes, which every rank's copy is made of.
    image: Vec<u8>,
}

/// The private set found from rank 0's instance.
pub struct PrivateLibs {
    libs: Vec<Lib>,
}

/// The private sets found so far, by program file (see `known`).
static KNOWN: std::sync::Mutex<Vec<(std::path::PathBuf, Option<std::sync::Arc<PrivateLibs>>)>> = std::sync::Mutex::new(Vec::new());

/// The private set found when `program` was first loaded in this process, if it was: a rank
/// spawned later with the same program must get copies, as its libraries are loaded already.
pub fn known(program: &Path) -> Option<Option<std::sync::Arc<PrivateLibs>>> {
    let k = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    k.iter().find(|(p, _)| p == program).map(|(_, s)| s.clone())
}

/// Records the private set found on `program`'s first load (see `known`).
pub fn remember(program: &Path, set: Option<std::sync::Arc<PrivateLibs>>) {
    let mut k = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if !k.iter().any(|(p, _)| p == program) {
        k.push((program.to_path_buf(), set));
    }
}

/// Cuts `b` after the last byte a program header maps and drops the section headers: a copy
/// to load needs only its segments (a library built with debugging information is mostly
/// sections: 23 MB of `libpython3.11` with 5.7 MB loaded).
fn keep_segments_only(b: &mut Vec<u8>) {
    let Ok(ph) = phdrs(b) else { return };
    let Some(end) = ph.iter().map(|p| p.p_offset.saturating_add(p.p_filesz)).max() else { return };
    let phend = u64_at(b, 0x20).unwrap_or(0).saturating_add(u64::from(u16_at(b, 0x38).unwrap_or(0)) * 56);
    let end = end.max(phend).max(64);
    if end < b.len() as u64 {
        b.truncate(end as usize);
        // e_shoff, e_shnum, e_shstrndx: no section headers any more.
        b[0x28..0x30].fill(0);
        b[0x3c..0x40].fill(0);
    }
}

/// The file names of the objects loaded in the process, in load order (`dl_iterate_phdr`).
pub fn loaded_objects() -> Vec<String> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> c_int {
        // SAFETY: `data` is the Vec passed below; `info` is valid for this call (glibc).
        let (v, info) = unsafe { (&mut *(data as *mut Vec<String>), &*info) };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated name owned by ld.so.
            unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
        };
        v.push(name);
        0
    }
    let mut v: Vec<String> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut v as *mut Vec<String>).cast()) };
    v
}

/// Comma-separated name prefixes from environment variable `var`.
fn prefixes(var: &str) -> Vec<String> {
    std::env::var(var).map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()).unwrap_or_default()
}

fn file_name(p: &str) -> String {
    Path::new(p).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// What the rewriting needs of an object's dynamic section.
struct Dyn {
    /// File offset and size of the dynamic string table.
    strtab: u64,
    strsz: u64,
    /// (tag, value) of every dynamic entry.
    entries: Vec<(i64, u64)>,
}

/// The `DT_NEEDED` names of the image `b` (empty if it has no readable dynamic section).
pub fn needed_names(b: &[u8]) -> Vec<String> {
    dynamic(b).map(|d| d.needed(b).into_iter().map(|(_, n)| n).collect()).unwrap_or_default()
}

/// (tag, value) of every entry of the dynamic section of the image `b`.
pub(super) fn dynamic_entries(b: &[u8]) -> Result<Vec<(i64, u64)>, &'static str> {
    dynamic(b).map(|d| d.entries)
}

fn dynamic(b: &[u8]) -> Result<Dyn, &'static str> {
    let ph = phdrs(b)?;
    let d = ph.iter().find(|p| p.p_type == PT_DYNAMIC).ok_or("no dynamic section")?;
    let mut entries = Vec::new();
    for i in 0..d.p_filesz / 16 {
        let o = d.p_offset + i * 16;
        let tag = u64_at(b, o).ok_or("truncated dynamic section")? as i64;
        let val = u64_at(b, o + 8).ok_or("truncated dynamic section")?;
        if tag == DT_NULL {
            break;
        }
        entries.push((tag, val));
    }
    let get = |t: i64| entries.iter().find(|e| e.0 == t).map(|e| e.1);
    let strsz = get(DT_STRSZ).ok_or("no DT_STRSZ")?;
    let strtab = vaddr_to_off(&ph, get(DT_STRTAB).ok_or("no DT_STRTAB")?, strsz).ok_or("DT_STRTAB outside the file")?;
    Ok(Dyn { strtab, strsz, entries })
}

impl Dyn {
    fn string(&self, b: &[u8], off: u64) -> Option<String> {
        if off >= self.strsz {
            return None;
        }
        let start = usize::try_from(self.strtab + off).ok()?;
        let end = usize::try_from(self.strtab + self.strsz).ok()?.min(b.len());
        let s = b.get(start..end)?;
        let n = s.iter().position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&s[..n]).into_owned())
    }

    fn needed(&self, b: &[u8]) -> Vec<(u64, String)> {
        self.entries.iter().filter(|e| e.0 == DT_NEEDED).filter_map(|&(_, v)| Some((v, self.string(b, v)?))).collect()
    }
}

/// Every offset into the dynamic string table that something in `b` refers to: dynamic entries,
/// `.dynsym` names, version needs and definitions. Errors when the file has no section headers
/// (then the references cannot all be known).
fn string_refs(b: &[u8], d: &Dyn) -> Result<Vec<u64>, &'static str> {
    let mut refs: Vec<u64> = d.entries.iter().filter(|e| matches!(e.0, DT_NEEDED | DT_SONAME | DT_RPATH | DT_RUNPATH)).map(|e| e.1).collect();
    let secs = shdrs(b)?;
    if secs.is_empty() {
        return Err("no section headers");
    }
    for s in &secs {
        match s.sh_type {
            SHT_DYNSYM => {
                for i in 0..s.sh_size / 24 {
                    refs.push(u64::from(u32_at(b, s.sh_offset + i * 24).ok_or("truncated .dynsym")?));
                }
            }
            SHT_GNU_VERNEED => {
                // Elf64_Verneed { vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32 }
                // Elf64_Vernaux { vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32 }
                let mut o = s.sh_offset;
                for _ in 0..1024 {
                    let cnt = u16_at(b, o + 2).ok_or("truncated version needs")?;
                    refs.push(u64::from(u32_at(b, o + 4).ok_or("truncated version needs")?));
                    let mut a = o + u64::from(u32_at(b, o + 8).ok_or("truncated version needs")?);
                    for _ in 0..cnt {
                        refs.push(u64::from(u32_at(b, a + 8).ok_or("truncated version needs")?));
                        a += u64::from(u32_at(b, a + 12).ok_or("truncated version needs")?);
                    }
                    let next = u32_at(b, o + 12).ok_or("truncated version needs")?;
                    if next == 0 {
                        break;
                    }
                    o += u64::from(next);
                }
            }
            SHT_GNU_VERDEF => {
                // Elf64_Verdef { vd_version u16, vd_flags u16, vd_ndx u16, vd_cnt u16, vd_hash u32, vd_aux u32, vd_next u32 }
                // Elf64_Verdaux { vda_name u32, vda_next u32 }
                let mut o = s.sh_offset;
                for _ in 0..1024 {
                    let cnt = u16_at(b, o + 6).ok_or("truncated version definitions")?;
                    let mut a = o + u64::from(u32_at(b, o + 12).ok_or("truncated version definitions")?);
                    for _ in 0..cnt {
                        refs.push(u64::from(u32_at(b, a).ok_or("truncated version definitions")?));
                        a += u64::from(u32_at(b, a + 4).ok_or("truncated version definitions")?);
                    }
                    let next = u32_at(b, o + 16).ok_or("truncated version definitions")?;
                    if next == 0 {
                        break;
                    }
                    o += u64::from(next);
                }
            }
            _ => {}
        }
    }
    Ok(refs)
}

/// Rewrites, in `b`, each `DT_NEEDED` that `target` maps to a descriptor: to that descriptor's
/// path. Returns whether a relative (`./N`) name was used, which needs the working directory
/// `/proc/self/fd` while it is loaded.
fn rewrite_needed(b: &mut [u8], target: &dyn Fn(&str) -> Option<c_int>) -> Result<bool, String> {
    let d = dynamic(b).map_err(String::from)?;
    let wanted: Vec<(u64, String, c_int)> = d.needed(b).into_iter().filter_map(|(off, name)| target(&name).map(|fd| (off, name, fd))).collect();
    if wanted.is_empty() {
        return Ok(false);
    }
    let refs = string_refs(b, &d).map_err(String::from)?;
    let mut relative = false;
    for (off, name, fd) in wanted {
        let abs = format!("/proc/self/fd/{fd}");
        let new = if abs.len() <= name.len() {
            abs
        } else {
            relative = true;
            format!("./{fd}")
        };
        if new.len() > name.len() {
            return Err(format!("the name {name} is too short to rewrite"));
        }
        // Another string that starts inside the bytes written (tail merging) would change.
        if refs.iter().any(|&r| r > off && r <= off + new.len() as u64) {
            return Err(format!("another string shares the bytes of the name {name}"));
        }
        let at = (d.strtab + off) as usize; // in bounds: `string` read the name there
        b[at..at + new.len()].copy_from_slice(new.as_bytes());
        b[at + new.len()] = 0;
    }
    Ok(relative)
}

impl PrivateLibs {
    /// The private set among `new` (the objects rank 0's `dlopen` loaded, file paths) for a
    /// program needing `roots` (its `DT_NEEDED` names), or None when it is empty, cannot be
    /// read, or privatizing is turned off (`OXMPI_PRIVATE_LIBS=0`).
    ///
    /// Private: every library the program reaches through `DT_NEEDED` without passing through a
    /// shared one, where shared means MPI itself, a process-wide run-time library
    /// (`SHARED_LIBS`), one in static TLS, or one the user names in `OXMPI_SHARED_LIBS`; plus
    /// any library that depends on a private one built on MPI (it must bind to the rank's copy),
    /// and those the user names in `OXMPI_PRIVATE_LIBS`. A library only shared ones need stays
    /// shared.
    pub fn find(new: &[String], roots: &[String]) -> Option<PrivateLibs> {
        let mut user_private = prefixes("OXMPI_PRIVATE_LIBS");
        if user_private.iter().any(|p| p == "0") {
            return None;
        }
        user_private.extend(INTERPRETER_LIBS.iter().map(|s| s.to_string()));
        let user_shared = prefixes("OXMPI_SHARED_LIBS");
        struct Cand {
            path: String,
            names: Vec<String>,
            needed: Vec<String>,
            static_tls: bool,
            image: Vec<u8>,
        }
        let mut cands = Vec::new();
        for path in new.iter().filter(|p| p.starts_with('/')) {
            let Ok(image) = std::fs::read(path) else { continue };
            let Ok(d) = dynamic(&image) else { continue };
            let mut names = vec![file_name(path)];
            if let Some(so) = d.entries.iter().find(|e| e.0 == DT_SONAME).and_then(|e| d.string(&image, e.1)) {
                names.push(so);
            }
            let needed = d.needed(&image).into_iter().map(|(_, n)| n).collect();
            let static_tls = d.entries.iter().any(|e| e.0 == DT_FLAGS && e.1 & DF_STATIC_TLS != 0);
            cands.push(Cand { path: path.clone(), names, needed, static_tls, image });
        }
        let named = |c: &Cand, list: &[String]| c.names.iter().any(|n| list.iter().any(|p| n.starts_with(p.as_str())));
        let listed = |c: &Cand, list: &[&str]| c.names.iter().any(|n| list.iter().any(|p| n.starts_with(p)));
        let is_mpi = |n: &str| MPI_LIBS.iter().any(|m| n.starts_with(m));
        let mpi = |c: &Cand| c.names.iter().any(|n| is_mpi(n));
        let shared: Vec<bool> = cands.iter().map(|c| mpi(c) || c.static_tls || named(c, &user_shared) || (listed(c, SHARED_LIBS) && !named(c, &user_private))).collect();
        // Reached from the program through libraries that are not shared.
        let mut private = vec![false; cands.len()];
        let mut stack: Vec<&str> = roots.iter().map(String::as_str).collect();
        while let Some(name) = stack.pop() {
            if let Some(i) = cands.iter().position(|c| c.names.iter().any(|n| n == name)) {
                if !shared[i] && !private[i] {
                    private[i] = true;
                    stack.extend(cands[i].needed.iter().map(String::as_str));
                }
            }
        }
        for (i, c) in cands.iter().enumerate() {
            private[i] |= !mpi(c) && !c.static_tls && named(c, &user_private);
        }
        // A library needing MPI or a private library built on it binds to the rank's copy only
        // if it is a copy itself (a fixpoint over DT_NEEDED).
        let mut on_mpi: Vec<bool> = cands.iter().map(|c| !mpi(c) && c.needed.iter().any(|n| is_mpi(n))).collect();
        loop {
            let mut changed = false;
            for i in 0..cands.len() {
                if on_mpi[i] || mpi(&cands[i]) {
                    continue;
                }
                if cands[i].needed.iter().any(|n| cands.iter().zip(&on_mpi).any(|(c, &p)| p && c.names.contains(n))) {
                    on_mpi[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let libs: Vec<Lib> = cands
            .into_iter()
            .zip(private.into_iter().zip(on_mpi))
            .filter(|(c, (p, m))| (*p || (*m && !c.static_tls)) && !named(c, &user_shared))
            .map(|(c, _)| Lib { names: c.names, path: c.path, image: c.image })
            .collect();
        (!libs.is_empty()).then_some(PrivateLibs { libs })
    }

    /// Rank `rank`'s copies: writes each private library, rewritten to need the rank's copies,
    /// into a memfd, and rewrites `program` (a copy of the program's image) the same way.
    /// Returns whether loading needs the working directory `/proc/self/fd` (see `rewrite_needed`),
    /// and the copies' memfds (closed when the instance is unloaded).
    pub fn make_copies(&self, rank: usize, program: &mut [u8]) -> Result<(bool, Vec<c_int>), String> {
        let mut fds = Vec::with_capacity(self.libs.len());
        for (i, _) in self.libs.iter().enumerate() {
            let fd = super::memfd::create(&format!("oxmpi-rank-{rank}-lib{i}")).map_err(|e| format!("memfd_create: {e}"))?;
            fds.push(fd);
        }
        let target = |needed: &str| self.libs.iter().position(|l| l.names.iter().any(|n| n == needed)).map(|i| fds[i]);
        let mut relative = false;
        for (lib, &fd) in self.libs.iter().zip(&fds) {
            let mut image = lib.image.clone();
            relative |= rewrite_needed(&mut image, &target)?;
            keep_segments_only(&mut image);
            // The fd stays open for the life of the process (see the module comment).
            super::memfd::fill(fd, &image).map_err(|e| format!("writing a private library copy: {e}"))?;
        }
        relative |= rewrite_needed(program, &target)?;
        Ok((relative, fds))
    }

    /// Each library's image and the path it is loaded under: rank 0's originals (`fds` None),
    /// or the copies in `fds` (`make_copies`, same order).
    pub fn loaded_as(&self, fds: Option<&[c_int]>) -> Vec<(&[u8], String)> {
        self.libs
            .iter()
            .enumerate()
            .map(|(i, l)| (&l.image[..], fds.and_then(|f| f.get(i)).map_or_else(|| l.path.clone(), |&fd| super::memfd::path(fd))))
            .collect()
    }

    /// How many libraries each rank gets a copy of, and their names (for messages and tests).
    pub fn names(&self) -> Vec<String> {
        self.libs.iter().map(|l| l.names.last().cloned().unwrap_or_default()).collect()
    }
}

/// Runs `f` with the working directory `/proc/self/fd` when `relative`, restoring it after.
pub fn in_fd_dir<T>(relative: bool, f: impl FnOnce() -> T) -> Result<T, String> {
    if !relative {
        return Ok(f());
    }
    let here = File::open(".").map_err(|e| format!("cannot open the working directory: {e}"))?;
    std::env::set_current_dir("/proc/self/fd").map_err(|e| format!("chdir /proc/self/fd: {e}"))?;
    let out = f();
    // SAFETY: fchdir on a descriptor we own.
    if unsafe { libc::fchdir(std::os::fd::AsRawFd::as_raw_fd(&here)) } != 0 {
        return Err(format!("cannot return to the working directory: {}", std::io::Error::last_os_error()));
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::ffi::CString;
    use std::process::Command;

    /// Builds `lib` from C `src` with `args` in `dir` (cc -shared -fPIC); also used by
    /// `scope_object`'s tests.
    pub(in super::super) fn cc(dir: &Path, lib: &str, src: &str, args: &[&str]) {
        let c = dir.join(format!("{lib}.c"));
        std::fs::write(&c, src).unwrap();
        let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(lib))
            .arg(&c)
            .args(args)
            .status()
            .expect("a C compiler (cc)");
        assert!(st.success(), "cc {lib}");
    }

    fn sym(handle: *mut c_void, name: &CStr) -> extern "C" fn() -> c_int {
        // SAFETY: a live handle and a C string.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        assert!(!p.is_null(), "{name:?} not found");
        // SAFETY: the test's C functions all have this signature.
        unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(p) }
    }

    /// A library built on "MPI" and a plain library the program needs get copies of their own
    /// for a rank's copy of the program; MPI itself and a process-wide library (`SHARED_LIBS`)
    /// stay shared.
    #[test]
    fn a_rank_copy_binds_to_its_own_copy_of_a_library_built_on_mpi() {
        let dir = std::env::temp_dir().join(format!("oxmpi-private-libs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rpath = format!("-Wl,-rpath,{}", dir.display());
        let l = format!("-L{}", dir.display());
        cc(&dir, "libmpich.so.12", "int oxpl_mpi_calls; int oxpl_mpi(void) { return ++oxpl_mpi_calls; }", &["-Wl,-soname,libmpich.so.12"]);
        cc(&dir, "liboxpl_plain_helper.so", "int oxpl_plain_n; int oxpl_plain(void) { return ++oxpl_plain_n; }", &["-Wl,-soname,liboxpl_plain_helper.so"]);
        // Named like a run-time library of `SHARED_LIBS` (libz.so.*).
        cc(&dir, "libz.so.77", "int oxpl_shared_n; int oxpl_shared(void) { return ++oxpl_shared_n; }", &["-Wl,-soname,libz.so.77"]);
        std::fs::copy(dir.join("libmpich.so.12"), dir.join("libmpich.so")).unwrap();
        cc(&dir, "liboxpl_on_mpi_state.so", "int oxpl_mpi(void); int oxpl_n; int oxpl_bump(void) { oxpl_mpi(); return ++oxpl_n; }", &["-Wl,-soname,liboxpl_on_mpi_state.so", &l, "-lmpich", &rpath]);
        cc(
            &dir,
            "oxpl_prog.so",
            "int oxpl_bump(void); int oxpl_plain(void); int oxpl_shared(void); int prog_bump(void) { return oxpl_bump(); } \
             int prog_plain(void) { return oxpl_plain(); } int prog_shared(void) { return oxpl_shared(); }",
            &[&l, "-loxpl_on_mpi_state", "-loxpl_plain_helper", &dir.join("libz.so.77").to_string_lossy(), &rpath],
        );
        let prog = dir.join("oxpl_prog.so");
        let before = loaded_objects();
        let path = CString::new(prog.to_str().unwrap()).unwrap();
        // SAFETY: the test's own library; its constructors are the compiler's.
        let h0 = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!h0.is_null());
        // As the loader does, the program itself is not one of its libraries.
        let new: Vec<String> = loaded_objects().into_iter().filter(|o| !before.contains(o) && Path::new(o) != prog).collect();
        let set = PrivateLibs::find(&new, &needed_names(&std::fs::read(&prog).unwrap())).expect("a private set");
        let mut names = set.names();
        names.sort();
        assert_eq!(names, vec!["liboxpl_on_mpi_state.so".to_string(), "liboxpl_plain_helper.so".to_string()]);

        let mut image = std::fs::read(&prog).unwrap();
        let (relative, fds) = set.make_copies(1, &mut image).unwrap();
        assert_eq!(fds.len(), 2, "one memfd per private library");
        assert!(!relative, "the names are long enough for /proc/self/fd/N");
        // The rewritten copy's memfd stays open (see the module comment).
        let fd = super::super::memfd::with_image("oxpl-prog-copy", &image).unwrap();
        let copy = CString::new(super::super::memfd::path(fd)).unwrap();
        // SAFETY: the rewritten copy of the test's library.
        let h1 = unsafe { libc::dlopen(copy.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!h1.is_null(), "{}", super::super::dlerror_text());

        let (b0, b1) = (sym(h0, c"prog_bump"), sym(h1, c"prog_bump"));
        assert_eq!((b0(), b0(), b0()), (1, 2, 3));
        assert_eq!(b1(), 1, "the copy's library state is its own");
        assert_eq!(b0(), 4);
        let (p0, p1) = (sym(h0, c"prog_plain"), sym(h1, c"prog_plain"));
        assert_eq!((p0(), p1(), p0()), (1, 1, 2), "a plain library's state is the copy's own too");
        let (s0, s1) = (sym(h0, c"prog_shared"), sym(h1, c"prog_shared"));
        assert_eq!((s0(), s1(), s0()), (1, 2, 3), "a process-wide library is shared");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A name shorter than /proc/self/fd/N becomes ./N; one whose bytes another string starts
    /// inside (tail merging) is refused.
    #[test]
    fn short_names_go_relative_and_shared_bytes_are_refused() {
        let dir = std::env::temp_dir().join(format!("oxmpi-private-libs-short-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rpath = format!("-Wl,-rpath,{}", dir.display());
        let l = format!("-L{}", dir.display());
        cc(&dir, "libq.so", "int q(void) { return 1; }", &["-Wl,-soname,libq.so"]);
        cc(&dir, "p.so", "int q(void); int p(void) { return q(); }", &[&l, "-lq", &rpath]);
        let mut image = std::fs::read(dir.join("p.so")).unwrap();
        let relative = rewrite_needed(&mut image, &|n| (n == "libq.so").then_some(7)).unwrap();
        assert!(relative);
        let d = dynamic(&image).unwrap();
        assert!(d.needed(&image).iter().any(|(_, n)| n == "./7"), "{:?}", d.needed(&image));
        // A symbol named "q.so" would start inside "libq.so": tail merging may share it.
        cc(&dir, "p2.so", "int q(void); int p(void) { return q(); } int __attribute__((used)) a_sym_q;", &[&l, "-lq", &rpath]);
        let mut image = std::fs::read(dir.join("p2.so")).unwrap();
        let d = dynamic(&image).unwrap();
        let (off, _) = d.needed(&image).into_iter().find(|(_, n)| n == "libq.so").unwrap();
        let refs = string_refs(&image, &d).unwrap();
        // Whether the linker merged anything or not, a rewrite never lands on another string.
        let clash = refs.iter().any(|&r| r > off && r <= off + 3);
        assert_eq!(rewrite_needed(&mut image, &|n| (n == "libq.so").then_some(7)).is_err(), clash);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
