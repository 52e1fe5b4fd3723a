//! Threads mode, launcher side: checks that the job can run as threads and starts the host.
//!
//! All ranks run as threads of ONE host process, each with its own private instance of the
//! program; loading those instances and running the ranks is the library's job
//! (`oxmpi_threads_main` in liboxmpi.so). The launcher only prepares that process: the host is
//! this executable again (`/proc/self/exe --threads-host N /abs/PROGRAM ARGS...`, see
//! `threads_host`) with oxmpi's library and the threads-mode preload library
//! (liboxmpi-threads.so: the exit and pthread_create interposers) in LD_PRELOAD. There is no
//! job segment: the ranks share the host's memory. The launcher then supervises the host like a
//! single rank (time limit, signal forwarding); the host reports on its ranks itself.
use crate::args::{App, Options};
use crate::abi::{self, Abi};
use crate::{elf, libpath, resolve_program, supervise, threads_host};
use oxmpi::runtime::{env, mpmd};
use oxmpi::runtime::threads::shebang;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The preload library with the exit and pthread_create interposers (c-src/threads-preload.c).
pub const PRELOAD_LIB: &str = "liboxmpi-threads.so";
/// oxmpi's library under its SONAME, the name programs NEED.
const MPI_LIB: &str = "libmpi.so.12";

/// The ABI library (path under the library directory) a program needs ahead of libmpi.so.12:
/// the standard ABI's (`mpicc -mpi-abi`) or Open MPI's.
/// `fortran`: the program needs Open MPI's Fortran library (its closure NEEDs
/// libmpi_mpifh.so.40), which then goes first: its `mpi_send_`... must win over libmpi.so.12's.
fn abi_lib(abi: Option<Abi>, fortran: bool) -> Vec<PathBuf> {
    match abi {
        Some(Abi::Ompi) if fortran => vec![Path::new(libpath::OMPI_DIR).join(abi::OMPI_FORTRAN_LIBS[0]), Path::new(libpath::OMPI_DIR).join(libpath::OMPI_LIB)],
        Some(Abi::Ompi) => vec![Path::new(libpath::OMPI_DIR).join(libpath::OMPI_LIB)],
        Some(Abi::Mpi5) => vec![PathBuf::from(abi::MPI5_LIB)],
        Some(Abi::Mpich) | None => Vec::new(),
    }
}

/// The LD_PRELOAD of the host: our libraries first, then whatever the user preloads (the loader
/// accepts spaces and colons as separators). A program that needs another ABI gets that ABI's
/// library (`abi`) ahead of libmpi.so.12: the ranks' instances resolve `MPI_X` in the global
/// scope first, where the first of the two (same names, different ABIs) must be the ABI's.
fn preload_value(dir: &Path, user: Option<&std::ffi::OsStr>, abi: &[PathBuf]) -> OsString {
    let mut v = OsString::from(dir.join(PRELOAD_LIB));
    for a in abi {
        v.push(" ");
        v.push(dir.join(a));
    }
    v.push(" ");
    v.push(dir.join(MPI_LIB));
    if let Some(u) = user.filter(|u| !u.is_empty()) {
        v.push(" ");
        v.push(u);
    }
    v
}

/// The directory holding both libraries threads mode preloads, or the one-line reason why not.
fn threads_libdir(found: Option<&libpath::LibDir>, exe: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match (found, exe.and_then(Path::parent)) {
        (Some(l), _) => l.dir.clone(),
        (None, Some(bindir)) => bindir.join("../lib"),
        (None, None) => PathBuf::from("<dir of mpiexec>/../lib"),
    };
    for lib in [PRELOAD_LIB, MPI_LIB] {
        if !dir.join(lib).exists() {
            return Err(format!(
                "threads mode needs an installed oxmpi ({lib} not found in {}); run scripts/install.sh PREFIX or use --mode processes",
                dir.display()
            ));
        }
    }
    // LD_PRELOAD has no quoting: a space or a colon splits a path in two.
    if dir.as_os_str().as_bytes().iter().any(|&b| b == b' ' || b == b':') {
        return Err(format!(
            "threads mode cannot preload from {} (LD_PRELOAD cannot name a path with a space or a colon); install oxmpi elsewhere or use --mode processes",
            dir.display()
        ));
    }
    Ok(dir)
}

/// A threads-mode program ready to start: the host's command parts (`host_command`).
pub struct Prepared {
    /// The program (or its `#!` interpreter) as named in messages.
    pub shown: String,
    abs: PathBuf,
    head: Vec<OsString>,
    dir: PathBuf,
    user: libpath::UserEnv,
    abi: Option<Abi>,
    ompi_fortran: bool,
}

/// Checks that every segment's program (one but for MPMD) can run as threads and prepares the
/// host; Err: the exit status and the reason. The segments share the host's libraries, so they
/// must need one MPI ABI.
pub fn prepare(o: &Options) -> Result<Vec<Prepared>, (i32, String)> {
    let ps = o.apps.iter().map(|a| prepare_app(o, a)).collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = ps.iter().find(|p| p.abi.map(Abi::name) != ps[0].abi.map(Abi::name)) {
        let name = |p: &Prepared| p.abi.map_or("mpich", Abi::name);
        return Err((2, format!("{} needs the {} ABI and {} the {} ABI: in threads mode the ranks of all programs share one process; use --mode processes", ps[0].shown, name(&ps[0]), p.shown, name(p))));
    }
    Ok(ps)
}

fn prepare_app(o: &Options, a: &App) -> Result<Prepared, (i32, String)> {
    let shown = a.program.to_string_lossy().into_owned();
    let named = match &a.wdir {
        Some(d) if a.program.as_bytes().contains(&b'/') => Path::new(d).join(&a.program).into_os_string(),
        _ => a.program.clone(),
    };
    let path = resolve_program(&named, std::env::var_os("PATH")).map_err(|e| (127, format!("cannot run '{shown}': {e}")))?;
    // A `#!` script runs as its interpreter with the script as an argument (as execve does).
    let cmd = shebang::resolve(&path, a.program.as_os_str(), std::env::var_os("PATH").as_deref()).map_err(|e| (2, format!("cannot run '{shown}' in threads mode: {e}")))?;
    // What the user named, or the script's interpreter when that is what fails.
    let shown = if cmd.program == path { shown } else { format!("{shown}'s #! interpreter {}", cmd.program.display()) };
    let path = cmd.program;
    // The ranks are instances of the program loaded into the host, so it must be an ELF file.
    let dyn_info = match elf::read_dyn_info(&path) {
        Ok(Some(i)) => i,
        Ok(None) => return Err((2, format!("threads mode needs an ELF program and {shown} is not one; run it with --mode processes"))),
        Err(e) => return Err((2, format!("threads mode cannot read {shown}: {e}; run it with --mode processes"))),
    };
    // `path` is what runs (`#!` resolved above): no second resolution, no second read.
    let (info, abi) = abi::of_run(&path, Some(dyn_info), o.abi);
    let exe = std::env::current_exe().ok();
    let found = libpath::find_libdir(std::env::var_os("OXMPI_LIBDIR"), exe.clone());
    let user = libpath::UserEnv::from_env();
    // Refuses Open MPI programs, with the same message as processes mode.
    libpath::plan(&shown, info.as_ref(), abi, found.as_ref(), &user).map_err(|m| (2, m))?;
    let dir = threads_libdir(found.as_ref(), exe.as_deref()).map_err(|m| (2, m))?;
    let abs = std::path::absolute(&path).unwrap_or(path);
    // An Open MPI program with Fortran gets libmpi_mpifh.so.40 preloaded too.
    let ompi_fortran = info.as_ref().is_some_and(|i| i.needs(abi::OMPI_FORTRAN_LIBS[0]));
    Ok(Prepared { shown, abs, head: cmd.head, dir, user, abi, ompi_fortran })
}

/// The command of the threads-mode host of one node of a job over several (`node_map`): its
/// ranks from `first` on, with the PMI descriptors `fds` (kept open across exec).
/// `bind`: the CPUs of the host's ranks (`bind::threads_value`).
pub fn node_host_command(o: &Options, ps: &[Prepared], node_map: &str, first: usize, fds: Vec<i32>, bind: Option<String>) -> Command {
    let mut cmd = host_command(o, ps, bind);
    cmd.env(oxmpi::runtime::node_map::ENV, node_map).env(oxmpi::runtime::node_map::HOST_ENV, oxmpi::runtime::node_map::format_host(first, &fds));
    // UCX, loaded by the ranks' MPI_Init, would take over the crash signals the host
    // watches to name a crashed rank; the user's setting wins.
    if std::env::var_os("UCX_HANDLE_ERRORS").is_none() {
        cmd.env("UCX_HANDLE_ERRORS", "none");
    }
    // SAFETY: the hook only calls fcntl, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            for &fd in &fds {
                crate::pmi_server::keep_for_child(fd)?;
            }
            Ok(())
        })
    };
    cmd
}

pub fn run(o: &Options) -> i32 {
    let ps = match prepare(o) {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("oxmpi: {msg}");
            return code;
        }
    };
    let shown = &ps[0].shown;
    let n = o.nranks;
    let host = crate::hosts::own_name();
    let binds = match crate::bind::plan(o.bind, n, &host) {
        Ok(b) => b,
        Err(m) => {
            eprintln!("oxmpi: {m}");
            return 2;
        }
    };
    if o.report_bindings {
        for (r, c) in binds.iter().enumerate() {
            crate::bind::report(r, &host, c.as_deref());
        }
    }

    supervise::block_signals();
    // SAFETY: getpid has no preconditions.
    let launcher_pid = unsafe { libc::getpid() };
    // --nodes K: one host per node, each running its node's ranks; the PMI server connects
    // them (every rank its own descriptor, as in processes mode).
    let node_of = oxmpi::runtime::node_map::blocks(n, o.nodes);
    let mut pmi_fds: Vec<Option<std::os::fd::OwnedFd>> = Vec::new();
    if o.nodes > 1 {
        match crate::pmi_server::start(&node_of, o.app_of()) {
            Ok(server) => pmi_fds = server.rank_fds.into_iter().map(Some).collect(),
            Err(e) => {
                eprintln!("oxmpi: cannot start the PMI server of a job over {} nodes: {e}", o.nodes);
                return 1;
            }
        }
    }
    let node_map = oxmpi::runtime::node_map::format(&node_of);
    let mut pids = Vec::with_capacity(o.nodes);
    for node in 0..o.nodes.max(1) {
        let mut mine = Vec::new();
        let mut cmd = if o.nodes > 1 {
            let first = node_of.iter().position(|&x| x == node).unwrap_or(0);
            mine = (first..n).take_while(|&r| node_of[r] == node).filter_map(|r| pmi_fds[r].take()).collect();
            let raws: Vec<i32> = mine.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
            let count = raws.len();
            node_host_command(o, &ps, &node_map, first, raws, crate::bind::threads_value(&binds[first..first + count]))
        } else {
            host_command(o, &ps, crate::bind::threads_value(&binds))
        };
        supervise::tie_to_launcher(&mut cmd, launcher_pid);
        let spawned = cmd.spawn();
        // The host has its copies of its ranks' PMI descriptors now.
        drop(mine);
        match spawned {
            Ok(child) => pids.push(child.id() as i32),
            Err(e) => {
                eprintln!("oxmpi: cannot start the threads-mode host for '{shown}': {e}");
                let mut started = supervise::Job::threads_hosts(pids);
                started.kill_all();
                return 1;
            }
        }
    }
    supervise::Job::threads_hosts(pids).supervise(o.timeout.as_ref())
}

/// The command of a threads-mode host running ranks of the job of the programs `ps` (one per
/// segment of the command line; the first one's ABI and libraries are the host's).
fn host_command(o: &Options, ps: &[Prepared], bind: Option<String>) -> Command {
    let Prepared { abs, head, dir, user, abi, .. } = &ps[0];
    let (n, abi) = (o.nranks, *abi);
    let ompi_fortran = ps.iter().any(|p| p.ompi_fortran);
    let mut cmd = Command::new("/proc/self/exe");
    if o.mpmd() {
        // Every segment's program, arguments and directory (`oxmpi::runtime::mpmd`).
        let wdir = |a: &App| a.wdir.as_ref().map(|d| std::path::absolute(d).map_or_else(|_| d.clone(), PathBuf::into_os_string));
        let apps: Vec<mpmd::App> = ps.iter().zip(&o.apps).map(|(p, a)| mpmd::App { count: a.nranks, program: p.abs.clone().into_os_string(), argv: p.head.iter().chain(&a.args).cloned().collect(), wdir: wdir(a) }).collect();
        cmd.env(mpmd::ENV_APPS, mpmd::encode(&apps));
    }
    match bind {
        Some(b) => cmd.env(env::BIND, b),
        None => cmd.env_remove(env::BIND),
    };
    // argv[0] carries the program name as the user gave it: the host passes it on as the ranks'
    // argv[0] (and `ps` shows the job under the program's name).
    cmd.arg0(&head[0])
        .arg(threads_host::FLAG)
        .arg(n.to_string())
        .arg(abs)
        .args(&head[1..])
        .args(&o.args)
        .env("LD_PRELOAD", preload_value(dir, user.ld_preload.as_deref(), &abi_lib(abi, ompi_fortran)))
        .env("LD_LIBRARY_PATH", libpath_value(dir, user.ld_library_path.as_deref(), abi == Some(Abi::Ompi)))
        .env(env::MODE, "threads")
        .env(env::SIZE, n.to_string())
        // The host keeps slots for spawned ranks (`runtime::threads::spawn`).
        .env(env::UNIVERSE, o.universe_size(oxmpi::runtime::wait::available_cpus()).to_string())
        // The host marks a dead rank failed itself (`runtime::threads::host`).
        .env(env::SURVIVE, if o.survive { "1" } else { "0" })
        // Processes-mode variables would make the library look for a job segment.
        .env_remove(env::RANK)
        .env_remove(env::SHM_FD);
    cmd
}

/// LD_LIBRARY_PATH of the host: our directory first.
fn libpath_value(dir: &Path, user: Option<&std::ffi::OsStr>, ompi: bool) -> OsString {
    let mut v = OsString::new();
    if ompi {
        // Our libmpi.so.40 before any Open MPI's, for the libraries the program loads later.
        v.push(dir.join(libpath::OMPI_DIR));
        v.push(":");
    }
    v.push(dir);
    if let Some(u) = user.filter(|u| !u.is_empty()) {
        v.push(":");
        v.push(u);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_values() {
        let d = Path::new("/opt/ox/lib");
        assert_eq!(preload_value(d, None, &[]), "/opt/ox/lib/liboxmpi-threads.so /opt/ox/lib/libmpi.so.12");
        assert_eq!(preload_value(d, None, &abi_lib(Some(Abi::Mpi5), false)), "/opt/ox/lib/liboxmpi-threads.so /opt/ox/lib/libmpi_abi.so.1 /opt/ox/lib/libmpi.so.12");
        assert_eq!(preload_value(d, None, &abi_lib(Some(Abi::Ompi), false)), "/opt/ox/lib/liboxmpi-threads.so /opt/ox/lib/openmpi-abi/libmpi.so.40 /opt/ox/lib/libmpi.so.12");
        assert_eq!(
            preload_value(d, None, &abi_lib(Some(Abi::Ompi), true)),
            "/opt/ox/lib/liboxmpi-threads.so /opt/ox/lib/openmpi-abi/libmpi_mpifh.so.40 /opt/ox/lib/openmpi-abi/libmpi.so.40 /opt/ox/lib/libmpi.so.12"
        );
        assert_eq!(preload_value(d, Some("/a.so:/b.so".as_ref()), &[]), "/opt/ox/lib/liboxmpi-threads.so /opt/ox/lib/libmpi.so.12 /a.so:/b.so");
        assert_eq!(libpath_value(d, Some("".as_ref()), false), "/opt/ox/lib");
        assert_eq!(libpath_value(d, Some("/x:/y".as_ref()), false), "/opt/ox/lib:/x:/y");
        assert_eq!(libpath_value(d, None, true), "/opt/ox/lib/openmpi-abi:/opt/ox/lib");
    }

    #[test]
    fn libdir_requirements() {
        let base = std::env::temp_dir().join(format!("oxmpi-thrlib-{}", std::process::id()));
        let lib = base.join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(base.join("bin")).unwrap(); // bin/../lib must resolve
        let exe = base.join("bin/mpiexec");
        let e = threads_libdir(None, Some(&exe)).unwrap_err();
        assert!(e.starts_with("threads mode needs an installed oxmpi (liboxmpi-threads.so not found in "), "{e}");
        assert!(e.ends_with("/bin/../lib); run scripts/install.sh PREFIX or use --mode processes"), "{e}");
        std::fs::write(lib.join(PRELOAD_LIB), "").unwrap();
        let e = threads_libdir(None, Some(&exe)).unwrap_err();
        assert!(e.contains("(libmpi.so.12 not found in "), "{e}");
        std::fs::write(lib.join(MPI_LIB), "").unwrap();
        let found = libpath::find_libdir(None, Some(exe.clone()));
        assert_eq!(threads_libdir(found.as_ref(), Some(&exe)).unwrap(), lib.canonicalize().unwrap());
        let spaced = base.join("a b");
        std::fs::create_dir_all(&spaced).unwrap();
        std::fs::write(spaced.join(PRELOAD_LIB), "").unwrap();
        std::fs::write(spaced.join(MPI_LIB), "").unwrap();
        let found = libpath::find_libdir(Some(spaced.clone().into()), None);
        assert!(threads_libdir(found.as_ref(), None).unwrap_err().contains("cannot preload from"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
