//! Which MPI ABI a program needs: MPICH's (`libmpi.so.12`), Open MPI 4.1's (`libmpi.so.40`) or
//! the MPI-5 standard one (`libmpi_abi.so.1`).
//!
//! `--abi` or `OXMPI_ABI` say it outright; that is the only way for a program whose MPI library
//! is loaded at run time (a Python whose mpi4py extension module links libmpi.so.40 shows no MPI
//! library in python's NEEDED). Otherwise an ELF program's whole NEEDED closure decides: the
//! program may link an MPI library only through another library (a ScaLAPACK tester linking
//! `libscalapack-openmpi.so`, which NEEDs libmpi.so.40). We walk the closure as the dynamic loader
//! would find it (DT_RPATH/DT_RUNPATH, LD_LIBRARY_PATH, /etc/ld.so.conf, the default
//! directories), reading each object's dynamic section with `elf`; a library we cannot find or
//! read is skipped, as it cannot name an MPI library we could see anyway.
use crate::elf::{self, DynInfo};
use crate::libpath::{MPICH_NAMES, OMPI_LIB};
use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    Mpich,
    Ompi,
    Mpi5,
}

/// Open MPI's Fortran libraries: a program NEEDing one is Open MPI's even where no libmpi.so.40
/// is installed to show it in the closure (oxmpi provides libmpi_mpifh.so.40 next to its
/// libmpi.so.40).
pub const OMPI_FORTRAN_LIBS: [&str; 3] = ["libmpi_mpifh.so.40", "libmpi_usempi_ignore_tkr.so.40", "libmpi_usempif08.so.40"];

/// The MPI-5 standard ABI library (SONAME), for programs built with `mpicc -mpi-abi`.
pub const MPI5_LIB: &str = "libmpi_abi.so.1";

impl Abi {
    /// The value of `--abi` / `OXMPI_ABI`.
    /// The name `parse` reads back.
    pub fn name(self) -> &'static str {
        match self {
            Abi::Mpich => "mpich",
            Abi::Ompi => "ompi",
            Abi::Mpi5 => "mpi5",
        }
    }

    pub fn parse(what: &str, v: &str) -> Result<Abi, String> {
        match v {
            "mpich" => Ok(Abi::Mpich),
            "ompi" | "openmpi" => Ok(Abi::Ompi),
            "mpi5" | "abi" => Ok(Abi::Mpi5),
            _ => Err(format!("{what} is mpich, ompi or mpi5, not '{v}'")),
        }
    }

    /// The ABI that the libraries `info` NEEDs imply (Open MPI's, then the standard one, win
    /// over MPICH's: our own Open MPI and MPI-5 libraries NEED libmpi.so.12 themselves).
    pub fn of(info: &DynInfo) -> Option<Abi> {
        if info.needs(OMPI_LIB) || OMPI_FORTRAN_LIBS.iter().any(|n| info.needs(n)) {
            Some(Abi::Ompi)
        } else if info.needs(MPI5_LIB) {
            Some(Abi::Mpi5)
        } else {
            MPICH_NAMES.iter().any(|n| info.needs(n)).then_some(Abi::Mpich)
        }
    }
}

/// Where the loader looks for a library that is not named by path.
#[derive(Clone, Debug, Default)]
pub struct Search {
    pub ld_library_path: Vec<PathBuf>,
    /// /etc/ld.so.conf's directories, then the default ones.
    pub system: Vec<PathBuf>,
}

impl Search {
    pub fn from_env() -> Search {
        let ld_library_path = split_path(std::env::var_os("LD_LIBRARY_PATH"));
        let mut system = Vec::new();
        read_ld_so_conf(Path::new("/etc/ld.so.conf"), &mut system, 0);
        for d in ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
            system.push(PathBuf::from(d));
        }
        Search { ld_library_path, system }
    }
}

fn split_path(v: Option<OsString>) -> Vec<PathBuf> {
    let v = v.map(|v| v.to_string_lossy().into_owned()).unwrap_or_default();
    v.split([':', ';']).filter(|d| !d.is_empty()).map(PathBuf::from).collect()
}

/// /etc/ld.so.conf: one directory a line, `include GLOB` lines (a `*` in the file name only, as
/// Debian's `include /etc/ld.so.conf.d/*.conf`), `#` comments. `depth` stops include loops.
fn read_ld_so_conf(file: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(text) = std::fs::read_to_string(file) else { return };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pattern) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            if depth >= 4 {
                continue;
            }
            for f in glob_file_names(Path::new(pattern.trim())) {
                read_ld_so_conf(&f, out, depth + 1);
            }
        } else if line.starts_with('/') {
            out.push(PathBuf::from(line));
        }
    }
}

/// The files matching `pattern`, whose last component may hold one `*`, sorted (as glob(3)).
fn glob_file_names(pattern: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (pattern.parent(), pattern.file_name().and_then(|n| n.to_str())) else { return Vec::new() };
    let Some((pre, post)) = name.split_once('*') else { return vec![pattern.to_path_buf()] };
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post)))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// Bound on the objects visited, against a pathological closure.
const MAX_OBJECTS: usize = 1024;

/// The NEEDED closure of the program at `path` (`info`: its own dynamic section), merged: every
/// library name any object of the closure NEEDs, and `has_rpath` if the program or any object
/// that NEEDs an MPI library carries DT_RPATH/DT_RUNPATH (which can make the loader prefer
/// another MPI over ours).
pub fn closure(path: &Path, info: &DynInfo, search: &Search) -> DynInfo {
    let mut out = DynInfo { needed: info.needed.clone(), has_rpath: info.has_rpath, rpath: info.rpath.clone() };
    let mut seen: HashSet<String> = info.needed.iter().cloned().collect();
    let mut queue: VecDeque<(String, PathBuf, Vec<String>)> = VecDeque::new();
    let origin = path.parent().map(Path::to_path_buf).unwrap_or_default();
    for n in &info.needed {
        queue.push_back((n.clone(), origin.clone(), info.rpath.clone()));
    }
    let mut visited = 0;
    while let Some((name, from_dir, rpath)) = queue.pop_front() {
        if visited >= MAX_OBJECTS {
            break;
        }
        let Some(file) = find(&name, &from_dir, &rpath, search) else { continue };
        let Ok(Some(lib)) = elf::read_dyn_info(&file) else { continue };
        visited += 1;
        if lib.has_rpath && Abi::of(&lib).is_some() {
            out.has_rpath = true;
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for n in lib.needed {
            if seen.insert(n.clone()) {
                out.needed.push(n.clone());
                queue.push_back((n, dir.clone(), lib.rpath.clone()));
            }
        }
    }
    out
}

/// Where the loader would find `name`, NEEDed by an object in `from_dir` with `rpath`.
fn find(name: &str, from_dir: &Path, rpath: &[String], search: &Search) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name)).filter(|p| p.is_file());
    }
    let expand = |d: &String| PathBuf::from(d.replace("${ORIGIN}", &from_dir.to_string_lossy()).replace("$ORIGIN", &from_dir.to_string_lossy()));
    rpath.iter().map(expand).chain(search.ld_library_path.iter().cloned()).chain(search.system.iter().cloned()).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The dynamic section of what runs (a `#!` script's interpreter; None for an unreadable or
/// non-ELF file), widened to its NEEDED closure, and the ABI it needs: `explicit` (`--abi`, `OXMPI_ABI`) if given, else the closure's.
pub fn of_program(path: &Path, explicit: Option<Abi>) -> (Option<DynInfo>, Option<Abi>) {
    // A `#!` script runs as its interpreter, whose libraries decide (the kernel execs it).
    let run = oxmpi::runtime::threads::shebang::resolve(path, path.as_os_str(), std::env::var_os("PATH").as_deref())
        .map_or_else(|_| path.to_path_buf(), |c| c.program);
    let dyn_info = elf::read_dyn_info(&run).ok().flatten();
    of_run(&run, dyn_info, explicit)
}

/// `of_program` for what runs, already resolved (`#!` followed) and read: the file `run` and its
/// dynamic section `dyn_info` (the threads launcher has both).
pub fn of_run(run: &Path, dyn_info: Option<DynInfo>, explicit: Option<Abi>) -> (Option<DynInfo>, Option<Abi>) {
    let info = dyn_info.map(|i| closure(run, &i, &Search::from_env()));
    let abi = explicit.or_else(|| info.as_ref().and_then(Abi::of));
    (info, abi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(needed: &[&str]) -> DynInfo {
        DynInfo { needed: needed.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn abi_names() {
        assert_eq!(Abi::parse("--abi", "ompi"), Ok(Abi::Ompi));
        assert_eq!(Abi::parse("--abi", "openmpi"), Ok(Abi::Ompi));
        assert_eq!(Abi::parse("--abi", "mpich"), Ok(Abi::Mpich));
        assert_eq!(Abi::parse("--abi", "mpi5"), Ok(Abi::Mpi5));
        assert_eq!(Abi::parse("OXMPI_ABI", "lam").unwrap_err(), "OXMPI_ABI is mpich, ompi or mpi5, not 'lam'");
    }

    #[test]
    fn abi_of_needed_names() {
        assert_eq!(Abi::of(&info(&["libc.so.6"])), None);
        assert_eq!(Abi::of(&info(&["libmpich.so.12"])), Some(Abi::Mpich));
        assert_eq!(Abi::of(&info(&["libmpi.so.12", "libmpi.so.40"])), Some(Abi::Ompi));
        assert_eq!(Abi::of(&info(&["libmpi.so.12", "libmpi_abi.so.1"])), Some(Abi::Mpi5));
    }

    #[test]
    fn ld_so_conf_includes() {
        let base = std::env::temp_dir().join(format!("oxmpi-ldconf-{}", std::process::id()));
        let d = base.join("conf.d");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(base.join("ld.so.conf"), format!("# c\ninclude {}/*.conf\n/top\n", d.display())).unwrap();
        std::fs::write(d.join("b.conf"), "/b1\n/b2 # x\n").unwrap();
        std::fs::write(d.join("a.conf"), "/a\n").unwrap();
        std::fs::write(d.join("a.conf.bak"), "/no\n").unwrap();
        // A loop is cut off, not followed forever.
        std::fs::write(d.join("c.conf"), format!("include {}\n", base.join("ld.so.conf").display())).unwrap();
        let mut v = Vec::new();
        read_ld_so_conf(&base.join("ld.so.conf"), &mut v, 0);
        let v: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(&v[..3], ["/a", "/b1", "/b2"]);
        assert!(!v.contains(&"/no".to_string()));
        assert_eq!(v.last().unwrap(), "/top");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Builds `prog` -> `libmid.so` (RUNPATH $ORIGIN) -> `libmpi.so.40`, a fake Open MPI library: the
    /// program's own NEEDED does not show Open MPI, the closure does.
    #[test]
    fn closure_finds_open_mpi_behind_another_library() {
        let cc_ok = std::process::Command::new("cc").arg("--version").output().is_ok_and(|o| o.status.success());
        if !cc_ok {
            eprintln!("skipped: no C compiler");
            return;
        }
        let base = std::env::temp_dir().join(format!("oxmpi-closure-{}", std::process::id()));
        let libs = base.join("libs");
        std::fs::create_dir_all(&libs).unwrap();
        let cc = |args: &[&str]| {
            let st = std::process::Command::new("cc").current_dir(&base).args(args).status().unwrap();
            assert!(st.success(), "cc {args:?}");
        };
        std::fs::write(base.join("ompi.c"), "int ompi_x(void) { return 1; }\n").unwrap();
        std::fs::write(base.join("mid.c"), "int ompi_x(void); int mid(void) { return ompi_x(); }\n").unwrap();
        std::fs::write(base.join("prog.c"), "int mid(void); int main(void) { return mid(); }\n").unwrap();
        cc(&["-shared", "-fPIC", "-o", "libs/libmpi.so.40", "-Wl,-soname,libmpi.so.40", "ompi.c"]);
        cc(&["-shared", "-fPIC", "-o", "libs/libmid.so", "mid.c", "libs/libmpi.so.40"]);
        // The program finds libmid.so through LD_LIBRARY_PATH (no rpath of its own).
        cc(&["-o", "prog", "prog.c", "-Llibs", "-lmid", "-Wl,--allow-shlib-undefined"]);
        let prog = base.join("prog");
        let own = elf::read_dyn_info(&prog).unwrap().unwrap();
        assert!(own.needs("libmid.so") && !own.needs(OMPI_LIB), "{own:?}");
        assert_eq!(Abi::of(&own), None);
        let search = Search { ld_library_path: vec![libs.clone()], system: Vec::new() };
        let all = closure(&prog, &own, &search);
        assert!(all.needs(OMPI_LIB), "{all:?}");
        assert_eq!(Abi::of(&all), Some(Abi::Ompi));
        assert!(!all.has_rpath, "{all:?}");
        // Not findable: the closure stops at the program's own NEEDED.
        let none = closure(&prog, &own, &Search::default());
        assert_eq!(none.needed, own.needed);
        // The library linking Open MPI carries the RUNPATH: preloading may be needed.
        cc(&["-shared", "-fPIC", "-o", "libs/libmid.so", "mid.c", "libs/libmpi.so.40", "-Wl,--enable-new-dtags,-rpath,/opt/openmpi/lib"]);
        let all = closure(&prog, &own, &search);
        assert!(all.needs(OMPI_LIB) && all.has_rpath, "{all:?}");
        // $ORIGIN is expanded: the program finds libmid.so through its own RUNPATH.
        cc(&["-o", "prog2", "prog.c", "-Llibs", "-lmid", "-Wl,--allow-shlib-undefined,--enable-new-dtags,-rpath,$ORIGIN/libs"]);
        let prog2 = base.join("prog2");
        let own2 = elf::read_dyn_info(&prog2).unwrap().unwrap();
        assert_eq!(own2.rpath, vec!["$ORIGIN/libs".to_string()]);
        assert_eq!(Abi::of(&closure(&prog2, &own2, &Search::default())), Some(Abi::Ompi));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn system_python_is_no_mpi_program() {
        let Some(py) = ["/usr/bin/python3"].into_iter().map(Path::new).find(|p| p.exists()) else { return };
        let (info, abi) = of_program(py, None);
        assert!(info.unwrap().needs("libc.so.6"));
        assert_eq!(abi, None, "python's closure links no MPI: --abi or OXMPI_ABI must say it");
        assert_eq!(of_program(py, Some(Abi::Ompi)).1, Some(Abi::Ompi));
    }
}
