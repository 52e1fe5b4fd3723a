//! Making the ranks load oxmpi's libmpi.so.12 rather than MPICH's.
//!
//! oxmpi is a drop-in for the MPICH ABI, so a binary built with MPICH's `mpicc` runs unchanged if
//! the dynamic loader finds our library first. Prepending our directory to LD_LIBRARY_PATH does
//! that for most binaries. It is not enough when the binary has DT_RPATH (searched before
//! LD_LIBRARY_PATH) or DT_RUNPATH pointing at MPICH, or needs a name our directory does not hold
//! (Debian's `mpicc.mpich` links `libmpich.so.12`; cargo's target directory has only
//! `liboxmpi.so`); then we also LD_PRELOAD our library so its symbols win. Open MPI binaries (NEEDED libmpi.so.40) get
//! our Open MPI ABI library, `lib/openmpi-abi/libmpi.so.40`, the same ways (its directory first
//! in LD_LIBRARY_PATH; preloaded too when the binary has an rpath).
use crate::abi::Abi;
use crate::elf::DynInfo;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Where oxmpi's library lives, and the file to preload from there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibDir {
    pub dir: PathBuf,
    pub preload: PathBuf,
    /// Which of the MPICH library names (`libmpi.so.12`, `libmpich.so.12`) the directory holds,
    /// i.e. which DT_NEEDED entries LD_LIBRARY_PATH alone redirects to us.
    pub provides: Vec<String>,
    /// Our Open MPI ABI library (`openmpi-abi/libmpi.so.40` under `dir`), if installed.
    pub ompi: Option<PathBuf>,
}

/// Open MPI 4.1's library, by SONAME.
pub const OMPI_LIB: &str = "libmpi.so.40";
/// Where scripts/install.sh puts ours, under the library directory.
pub const OMPI_DIR: &str = "openmpi-abi";

impl LibDir {
    fn new(dir: PathBuf) -> LibDir {
        // Prefer the SONAME link (what programs NEED); fall back to the cargo build artefact,
        // whose SONAME is libmpi.so.12 so the loader treats it as that library once loaded.
        let soname = dir.join("libmpi.so.12");
        let artefact = dir.join("liboxmpi.so");
        let preload = if !soname.exists() && artefact.exists() { artefact } else { soname };
        let provides = MPICH_NAMES.iter().filter(|n| dir.join(n).exists()).map(|n| n.to_string()).collect();
        let ompi = Some(dir.join(OMPI_DIR).join(OMPI_LIB)).filter(|p| p.exists());
        LibDir { dir, preload, provides, ompi }
    }
}

/// The names an MPICH-ABI program may NEED for its MPI library (the Fortran ones too: oxmpi's
/// library holds the Fortran bindings, installed under those names as links).
pub const MPICH_NAMES: [&str; 4] = ["libmpi.so.12", "libmpich.so.12", "libmpifort.so.12", "libmpichfort.so.12"];

/// Finds our library directory: `OXMPI_LIBDIR`, else `<dir of mpiexec>/../lib` holding
/// libmpi.so.12 (installed layout), else `<dir of mpiexec>` holding libmpi.so.12 or liboxmpi.so
/// (cargo's target directory).
pub fn find_libdir(env_libdir: Option<OsString>, exe: Option<PathBuf>) -> Option<LibDir> {
    if let Some(d) = env_libdir.filter(|d| !d.is_empty()) {
        return Some(LibDir::new(PathBuf::from(d)));
    }
    let exe = exe?;
    let bindir = exe.parent()?;
    let lib = bindir.join("../lib");
    if lib.join("libmpi.so.12").exists() {
        return Some(LibDir::new(lib.canonicalize().unwrap_or(lib)));
    }
    if bindir.join("libmpi.so.12").exists() || bindir.join("liboxmpi.so").exists() {
        return Some(LibDir::new(bindir.to_path_buf()));
    }
    None
}

/// Environment changes for the ranks (None = leave the variable as it is).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LibEnv {
    pub ld_library_path: Option<OsString>,
    pub ld_preload: Option<OsString>,
}

/// What the user's environment says, for `plan`.
#[derive(Debug, Default, Clone)]
pub struct UserEnv {
    pub ld_library_path: Option<OsString>,
    pub ld_preload: Option<OsString>,
    /// `OXMPI_PRELOAD`: "1" forces preloading, "0" forbids it.
    pub preload: Option<String>,
}

impl UserEnv {
    pub fn from_env() -> UserEnv {
        UserEnv {
            ld_library_path: std::env::var_os("LD_LIBRARY_PATH"),
            ld_preload: std::env::var_os("LD_PRELOAD"),
            preload: std::env::var("OXMPI_PRELOAD").ok(),
        }
    }
}

fn prepend(first: &OsStr, rest: Option<&OsStr>) -> OsString {
    let mut v = OsString::from(first);
    if let Some(r) = rest.filter(|r| !r.is_empty()) {
        v.push(":");
        v.push(r);
    }
    v
}

/// Decides the loader environment for `program` (`info` is None for non-ELF programs, else its
/// NEEDED closure, see `abi::closure`), which needs the ABI `abi` (`abi::of_program`).
/// Err is the message for a program we cannot run (built against Open MPI, and our Open MPI ABI
/// library is not installed).
pub fn plan(program: &str, info: Option<&DynInfo>, abi: Option<Abi>, libdir: Option<&LibDir>, user: &UserEnv) -> Result<LibEnv, String> {
    if abi == Some(Abi::Ompi) {
        let Some(ompi) = libdir.and_then(|l| l.ompi.as_ref().map(|o| (l, o))) else {
            return Err(format!(
                "{program} was built against Open MPI (libmpi.so.40) and oxmpi's Open MPI ABI library (lib/{OMPI_DIR}/{OMPI_LIB}) is not installed; run scripts/install.sh PREFIX and use PREFIX/bin/mpiexec"
            ));
        };
        let (lib, path) = ompi;
        let dirs = prepend(lib.dir.join(OMPI_DIR).as_os_str(), Some(lib.dir.as_os_str()));
        let mut out = LibEnv { ld_library_path: Some(prepend(&dirs, user.ld_library_path.as_deref())), ld_preload: None };
        let want = match user.preload.as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => info.is_some_and(|i| i.has_rpath),
        };
        if want {
            let mut first = path.clone().into_os_string();
            // Open MPI's Fortran library too when the program needs it: an rpath naming Open
            // MPI's directory would give it Open MPI's own, which needs Open MPI's internals.
            let fortran = path.with_file_name(crate::abi::OMPI_FORTRAN_LIBS[0]);
            if info.is_some_and(|i| i.needs(crate::abi::OMPI_FORTRAN_LIBS[0])) && fortran.exists() {
                first = prepend(fortran.as_os_str(), Some(&first));
            }
            out.ld_preload = Some(prepend(&first, user.ld_preload.as_deref()));
        }
        return Ok(out);
    }
    let Some(lib) = libdir else { return Ok(LibEnv::default()) };
    let mut out = LibEnv { ld_library_path: Some(prepend(lib.dir.as_os_str(), user.ld_library_path.as_deref())), ld_preload: None };
    if let Some(i) = info {
        let mpich: Vec<&str> = MPICH_NAMES.iter().copied().filter(|n| i.needs(n)).collect();
        let unredirected = mpich.iter().any(|n| !lib.provides.iter().any(|p| p == n));
        let want = match user.preload.as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => i.has_rpath || unredirected,
        };
        // Only an MPICH-ABI program: the closure of a standard-ABI one holds libmpi.so.12 too
        // (libmpi_abi.so.1 NEEDs it), whose symbols must not win over libmpi_abi.so.1's.
        if !mpich.is_empty() && want && abi == Some(Abi::Mpich) {
            out.ld_preload = Some(prepend(lib.preload.as_os_str(), user.ld_preload.as_deref()));
        }
    }
    Ok(out)
}

/// LD_PRELOAD of a processes-mode rank: the preload library of threads mode first when it is
/// installed next to our library (in a rank process it wraps the program's own crash handlers so a
/// handler that cannot repair a fault runs once, see c-src/threads-preload.c), then what `plan`
/// chose (`planned`) or else the user's own. None: leave LD_PRELOAD as the user set it.
pub fn processes_preload(lib: Option<&LibDir>, planned: Option<&OsStr>, user: Option<&OsStr>) -> Option<OsString> {
    let rest = planned.or(user).filter(|v| !v.is_empty());
    let ours = lib.map(|l| l.dir.join(crate::threads::PRELOAD_LIB)).filter(|p| p.exists());
    // LD_PRELOAD has no quoting: a space or a colon would split the path.
    let ours = ours.filter(|p| !p.as_os_str().as_bytes().iter().any(|&b| b == b' ' || b == b':'));
    let Some(ours) = ours else { return planned.map(OsStr::to_os_string) };
    let mut v = ours.into_os_string();
    if let Some(r) = rest {
        v.push(" ");
        v.push(r);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(needed: &[&str], has_rpath: bool) -> DynInfo {
        DynInfo { needed: needed.iter().map(|s| s.to_string()).collect(), has_rpath, rpath: Vec::new() }
    }
    fn lib() -> LibDir {
        LibDir {
            dir: "/opt/ox/lib".into(),
            preload: "/opt/ox/lib/libmpi.so.12".into(),
            provides: vec!["libmpi.so.12".into(), "libmpich.so.12".into()],
            ompi: None,
        }
    }

    #[test]
    fn script_gets_library_path_only() {
        let e = plan("s.sh", None, None, Some(&lib()), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib");
        assert_eq!(e.ld_preload, None);
        let u = UserEnv { ld_library_path: Some("/a:/b".into()), ..Default::default() };
        let e = plan("s.sh", None, None, Some(&lib()), &u).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib:/a:/b");
    }

    #[test]
    fn mpich_binary_preload_rules() {
        let plain = info(&["libmpich.so.12", "libc.so.6"], false);
        let rp = info(&["libmpi.so.12", "libc.so.6"], true);
        let e = plan("p", Some(&plain), Abi::of(&plain), Some(&lib()), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_preload, None);
        let e = plan("p", Some(&rp), Abi::of(&rp), Some(&lib()), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_preload.unwrap(), "/opt/ox/lib/libmpi.so.12");
        let forced = UserEnv { preload: Some("1".into()), ld_preload: Some("/x.so".into()), ..Default::default() };
        let e = plan("p", Some(&plain), Abi::of(&plain), Some(&lib()), &forced).unwrap();
        assert_eq!(e.ld_preload.unwrap(), "/opt/ox/lib/libmpi.so.12:/x.so");
        let never = UserEnv { preload: Some("0".into()), ..Default::default() };
        assert_eq!(plan("p", Some(&rp), Abi::of(&rp), Some(&lib()), &never).unwrap().ld_preload, None);
        // A non-MPI binary with an RPATH is left alone.
        let other = info(&["libc.so.6"], true);
        assert_eq!(plan("p", Some(&other), Abi::of(&other), Some(&lib()), &forced).unwrap().ld_preload, None);
    }

    #[test]
    fn preload_when_the_needed_name_is_not_in_our_directory() {
        let only_soname = LibDir { provides: vec!["libmpi.so.12".into()], ..lib() };
        let debian = info(&["libmpich.so.12", "libc.so.6"], false);
        let e = plan("p", Some(&debian), Abi::of(&debian), Some(&only_soname), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_preload.unwrap(), "/opt/ox/lib/libmpi.so.12");
        let plain = info(&["libmpi.so.12"], false);
        assert_eq!(plan("p", Some(&plain), Abi::of(&plain), Some(&only_soname), &UserEnv::default()).unwrap().ld_preload, None);
        let cargo_dir = LibDir { preload: "/t/liboxmpi.so".into(), provides: vec![], ..lib() };
        assert_eq!(plan("p", Some(&plain), Abi::of(&plain), Some(&cargo_dir), &UserEnv::default()).unwrap().ld_preload.unwrap(), "/t/liboxmpi.so");
        let never = UserEnv { preload: Some("0".into()), ..Default::default() };
        assert_eq!(plan("p", Some(&debian), Abi::of(&debian), Some(&only_soname), &never).unwrap().ld_preload, None);
    }

    #[test]
    fn open_mpi_without_our_library_refused() {
        let ompi = info(&["libmpi.so.40", "libc.so.6"], false);
        let m = plan("./ring", Some(&ompi), Abi::of(&ompi), Some(&lib()), &UserEnv::default()).unwrap_err();
        assert!(m.starts_with("./ring was built against Open MPI (libmpi.so.40) and oxmpi's Open MPI ABI library"), "{m}");
        assert!(plan("./ring", Some(&ompi), Abi::of(&ompi), None, &UserEnv::default()).is_err());
    }

    #[test]
    fn open_mpi_gets_our_libmpi_so_40() {
        let with = LibDir { ompi: Some("/opt/ox/lib/openmpi-abi/libmpi.so.40".into()), ..lib() };
        let user = UserEnv { ld_library_path: Some("/u".into()), ..Default::default() };
        let e = plan("./ring", Some(&info(&["libmpi.so.40", "libc.so.6"], false)), Some(Abi::Ompi), Some(&with), &user).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib/openmpi-abi:/opt/ox/lib:/u");
        assert_eq!(e.ld_preload, None);
        let e = plan("./ring", Some(&info(&["libmpi.so.40"], true)), Some(Abi::Ompi), Some(&with), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_preload.unwrap(), "/opt/ox/lib/openmpi-abi/libmpi.so.40", "an rpath may name Open MPI's own");
        // `--abi ompi` for a program whose NEEDED shows no MPI (python running mpi4py).
        let e = plan("python3", None, Some(Abi::Ompi), Some(&with), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib/openmpi-abi:/opt/ox/lib");
        assert_eq!(e.ld_preload, None);
        let e = plan("python3", Some(&info(&["libc.so.6"], false)), Some(Abi::Ompi), Some(&with), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib/openmpi-abi:/opt/ox/lib");
        assert!(plan("python3", None, Some(Abi::Ompi), Some(&lib()), &UserEnv::default()).is_err());
    }

    #[test]
    fn standard_abi_program_is_not_given_libmpi_so_12_first() {
        // The closure of an `mpicc -mpi-abi` program with its RUNPATH.
        let p = info(&["libmpi_abi.so.1", "libc.so.6", "libmpi.so.12"], true);
        let e = plan("p", Some(&p), Abi::of(&p), Some(&lib()), &UserEnv::default()).unwrap();
        assert_eq!(e.ld_library_path.unwrap(), "/opt/ox/lib");
        assert_eq!(e.ld_preload, None);
    }

    #[test]
    fn no_libdir_changes_nothing() {
        let rp = info(&["libmpi.so.12"], true);
        assert_eq!(plan("p", Some(&rp), Abi::of(&rp), None, &UserEnv::default()).unwrap(), LibEnv::default());
    }

    #[test]
    fn libdir_search() {
        let base = std::env::temp_dir().join(format!("oxmpi-libdir-{}", std::process::id()));
        let bin = base.join("bin");
        let libd = base.join("lib");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&libd).unwrap();
        let exe = bin.join("mpiexec");
        assert_eq!(find_libdir(None, Some(exe.clone())), None);
        std::fs::write(bin.join("liboxmpi.so"), "").unwrap();
        let d = find_libdir(None, Some(exe.clone())).unwrap();
        assert_eq!(d.dir, bin);
        assert_eq!(d.preload, bin.join("liboxmpi.so"));
        std::fs::write(libd.join("libmpi.so.12"), "").unwrap();
        let d = find_libdir(None, Some(exe.clone())).unwrap();
        assert_eq!(d.dir, libd.canonicalize().unwrap());
        assert_eq!(d.preload, libd.canonicalize().unwrap().join("libmpi.so.12"));
        assert_eq!(d.provides, vec!["libmpi.so.12".to_string()]);
        let d = find_libdir(Some("/elsewhere".into()), Some(exe)).unwrap();
        assert_eq!(d.dir, PathBuf::from("/elsewhere"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn processes_preload_puts_the_crash_wrapper_first() {
        let base = std::env::temp_dir().join(format!("oxmpi-ppre-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let l = LibDir { dir: base.clone(), preload: base.join("libmpi.so.12"), provides: vec![], ompi: None };
        let planned = OsStr::new("/p/libmpi.so.12");
        let user = OsStr::new("/u.so");
        // Not installed: what plan chose, or nothing (the user's stays in the environment).
        assert_eq!(processes_preload(Some(&l), Some(planned), Some(user)), Some(planned.into()));
        assert_eq!(processes_preload(Some(&l), None, Some(user)), None);
        assert_eq!(processes_preload(None, None, None), None);
        std::fs::write(base.join(crate::threads::PRELOAD_LIB), "").unwrap();
        let ours = base.join(crate::threads::PRELOAD_LIB).into_os_string();
        assert_eq!(processes_preload(Some(&l), None, None), Some(ours.clone()));
        let mut both = ours.clone();
        both.push(" /p/libmpi.so.12");
        assert_eq!(processes_preload(Some(&l), Some(planned), Some(user)), Some(both));
        let mut with_user = ours;
        with_user.push(" /u.so");
        assert_eq!(processes_preload(Some(&l), None, Some(user)), Some(with_user));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
