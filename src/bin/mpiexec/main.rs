//! `mpiexec` (also installed as `mpirun`): starts an oxmpi job on this machine.
//!
//! This file is the outline: parse the command line, pick the run mode, and in processes mode
//! prepare the program (find it, check what it links against), create the job's shared segment
//! and start one process per rank; `supervise` then runs the job to its end. Threads mode (all
//! ranks as threads of one host process) is in `threads` (launcher side) and `threads_host`
//! (the host process, which is this executable started with hidden arguments).
//!
//! The launcher/rank contract (environment variables, segment layout, rank states) lives in the
//! library (`oxmpi::runtime`), which both sides share.
mod abi;
mod agent;
mod args;
mod bind;
mod elf;
mod head_addr;
mod hosts;
mod job_env;
mod join;
mod libpath;
mod link;
mod monitor;
mod pmi_server;
mod program;
mod rank_command;
mod remote;
mod spawn;
mod supervise;
mod tag_output;
mod threads;
mod threads_host;

use args::{Command as Cli, EnvDefaults, Mode, Options};
use program::{prepare_apps, Prepared};
use oxmpi::runtime::segment::Segment;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // The threads-mode host is this same executable, started by `threads::run`.
    if argv.get(1).is_some_and(|a| a == threads_host::FLAG) {
        threads_host::main(&argv);
    }
    // A node agent of a job on several hosts, started by `remote`.
    if argv.get(1).is_some_and(|a| a == agent::FLAG) {
        agent::main(&argv);
    }
    let name = args::invoked_name(argv.first().map(OsString::as_os_str));
    let rest = argv.get(1..).unwrap_or(&[]);
    let code = match args::parse(rest, &EnvDefaults::from_env()) {
        Err(e) => {
            eprintln!("oxmpi: {e}");
            eprintln!("Run '{name} --help' for usage.");
            2
        }
        Ok(Cli::Help) => {
            print!("{}", args::usage(&name));
            0
        }
        Ok(Cli::Version) => {
            println!("{name} (oxmpi) {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Cli::Run(opts)) => match job_env::apply(&opts) {
            Err(e) => {
                eprintln!("oxmpi: {e}");
                2
            }
            Ok(()) if opts.hosts.any() => monitor::around(&opts, || remote::run(&opts)),
            Ok(()) => monitor::around(&opts, || match opts.mode {
                Mode::Processes => run_processes(&opts),
                Mode::Threads => threads::run(&opts),
            }),
        },
    };
    std::process::exit(code);
}

/// Whether `p` is a regular file we may execute.
fn is_executable(p: &Path) -> io::Result<()> {
    let md = std::fs::metadata(p)?;
    if md.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    let c = CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: valid C string.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Finds the program the way execvp would, once, in the launcher: a failure is then reported one
/// time instead of once per rank, and we know which file to inspect for its libraries.
fn resolve_program(prog: &OsStr, path_var: Option<OsString>) -> io::Result<PathBuf> {
    if prog.as_bytes().contains(&b'/') {
        let p = PathBuf::from(prog);
        is_executable(&p)?;
        return Ok(p);
    }
    let path_var = path_var.unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    let mut first_err: Option<io::Error> = None;
    for dir in std::env::split_paths(&path_var) {
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        let cand = dir.join(prog);
        match is_executable(&cand) {
            Ok(()) => return Ok(cand),
            // Like execvp: remember that something was there but not runnable.
            Err(e) if e.kind() != io::ErrorKind::NotFound && first_err.is_none() => first_err = Some(e),
            Err(_) => {}
        }
    }
    Err(first_err.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ENOENT)))
}

/// Slots of a job's segment when `-usize` asks for fewer (64: jobs of 9 to 64 ranks keep their
/// inbox bitmap, see `oxmpi::transport::shm`).
const SPAWN_SLOTS: usize = 64;

fn run_processes(o: &Options) -> i32 {
    let prepared = match prepare_apps(o) {
        Ok(p) => p,
        Err((code, msg)) => {
            eprintln!("oxmpi: {msg}");
            return code;
        }
    };
    let Prepared { path, libenv, libdir, preload, .. } = &prepared[0];

    let host = hosts::own_name();
    let binds = match bind::plan(o.bind, o.nranks, &host) {
        Ok(b) => b,
        Err(m) => {
            eprintln!("oxmpi: {m}");
            return 2;
        }
    };

    supervise::block_signals();
    if let Some(spec) = &o.join {
        return join::run(o, spec, path, libenv, preload.as_deref());
    }
    // SAFETY: getpid has no preconditions.
    let launcher_pid = unsafe { libc::getpid() };
    let n = o.nranks;
    // Free slots above the world wait for spawned ranks (see oxmpi::runtime::spawn_desk); the
    // channels are shaped for the world, as ranks that never spawn use them. MPI_UNIVERSE_SIZE is
    // a hint, so spawns may go beyond it (as with MPICH and Open MPI), up to `SPAWN_SLOTS`
    // ranks in all: slots cost address space only until used.
    let universe = o.universe_size(oxmpi::runtime::wait::available_cpus());
    let slots = universe.max(SPAWN_SLOTS);
    let seg = match Segment::create(slots, n, launcher_pid, oxmpi::transport::shm::geometry(n)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("oxmpi: cannot create the shared memory segment for {n} ranks: {e}");
            return 1;
        }
    };
    if o.survive {
        seg.want_survival();
    }
    seg.set_universe_size(universe);
    // Other mpiexecs may start their ranks in this segment (`mpiexec --join`), until we return.
    let _registration = join::register(&seg, launcher_pid);
    // --nodes: a segment per emulated node (node 0's is `seg`), and the PMI server through which
    // the ranks connect the nodes.
    let node_of = oxmpi::runtime::node_map::blocks(n, o.nodes);
    let mut node_segs = Vec::new();
    for node in 1..o.nodes {
        // Shaped as node 0's, so that every rank's engine counts the same slots.
        match Segment::create(slots, n, launcher_pid, oxmpi::transport::shm::geometry(n)) {
            Ok(s) => node_segs.push(s),
            Err(e) => {
                eprintln!("oxmpi: cannot create the shared memory segment of node {node}: {e}");
                return 1;
            }
        }
    }
    for s in &node_segs {
        if o.survive {
            s.want_survival();
        }
        s.set_universe_size(universe);
    }
    let mut pmi_fds: Vec<Option<std::os::fd::OwnedFd>> = Vec::new();
    if o.nodes > 1 {
        match pmi_server::start(&node_of, o.app_of()) {
            Ok(server) => pmi_fds = server.rank_fds.into_iter().map(Some).collect(),
            Err(e) => {
                eprintln!("oxmpi: cannot start the PMI server of a job over {} nodes: {e}", o.nodes);
                return 1;
            }
        }
    }
    let node_map = oxmpi::runtime::node_map::format(&node_of);
    let mut job = supervise::Job::new(&seg);
    job.set_nodes(node_segs.iter().collect(), node_of.clone());
    let mut spawner = spawn::Spawner { seg: &seg, launcher_pid, libdir: libdir.clone(), abi: o.abi, served: 0 };
    job.set_spawner(move |job| spawner.serve(job));
    let programs: Vec<_> = prepared.iter().zip(&o.apps).map(|(p, a)| rank_command::Program { path: &p.path, arg0: &a.program, args: &a.args, libenv: &p.libenv, preload: p.preload.as_deref() }).collect();
    let app_of = o.app_of();
    let world = rank_command::World { size: n, shm_fd: seg.fd(), slots: None, spawned_by: None, input: true };
    let mut taggers = Vec::new();
    for r in 0..n {
        let node = node_of[r];
        let fd = if node == 0 { seg.fd() } else { node_segs[node - 1].fd() };
        let local_rank = node_of[..r].iter().filter(|&&x| x == node).count();
        let local_size = node_of.iter().filter(|&&x| x == node).count();
        let mut cmd = rank_command::rank_command(&programs[app_of[r]], &world, r, r, launcher_pid);
        if o.mpmd() {
            rank_command::segment(&mut cmd, &o.apps[app_of[r]], app_of[r]);
        }
        // --nodes: the rank's node's segment and its place on that node.
        cmd.env(oxmpi::runtime::env::SHM_FD, fd.to_string()).env("MPI_LOCALRANKID", local_rank.to_string()).env("MPI_LOCALNRANKS", local_size.to_string());
        let pmi_fd = pmi_fds.get_mut(r).and_then(Option::take);
        if let Some(pfd) = &pmi_fd {
            let raw = std::os::fd::AsRawFd::as_raw_fd(pfd);
            cmd.env(oxmpi::runtime::node_map::ENV, &node_map).env("PMI_FD", raw.to_string());
            // SAFETY: the hook only calls fcntl, which is async-signal-safe.
            unsafe { std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || pmi_server::keep_for_child(raw)) };
        }
        if let Some(c) = &binds[r] {
            bind::apply(&mut cmd, c);
        }
        if o.report_bindings {
            bind::report(r, &host, binds[r].as_deref());
        }
        if o.tag_output {
            tag_output::pipe(&mut cmd);
        }
        let spawned = cmd.spawn();
        // The rank has its copy now.
        drop(pmi_fd);
        match spawned {
            Ok(mut child) => {
                taggers.extend(tag_output::start(&mut child, r));
                job.add(child.id() as i32)
            }
            Err(e) => {
                // The program is resolved already, so this is rare (it vanished, a bad #! line,
                // out of processes): report once and take down the ranks already started.
                let transient = matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOMEM));
                if transient {
                    eprintln!("oxmpi: cannot start rank {r} of '{}': {e}", prepared[app_of[r]].shown);
                } else {
                    eprintln!("oxmpi: cannot run '{}': {e}", prepared[app_of[r]].shown);
                }
                job.kill_all();
                return if transient { 1 } else { 127 };
            }
        }
    }
    let code = job.supervise(o.timeout.as_ref());
    tag_output::finish(taggers);
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_execvp() {
        let p = resolve_program(OsStr::new("sh"), Some("/nonexistent:/bin:/usr/bin".into())).unwrap();
        assert!(p.ends_with("sh"));
        let e = resolve_program(OsStr::new("no-such-program-oxmpi"), Some("/bin".into())).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(resolve_program(OsStr::new("/bin/sh"), None).is_ok());
        assert!(resolve_program(OsStr::new("/etc/passwd"), None).unwrap_err().kind() == io::ErrorKind::PermissionDenied);
        assert!(resolve_program(OsStr::new("/"), None).is_err());
    }
}
