//! `mpiexec --join JOB`: a job started inside another's universe, so that the two can connect
//! (MPI_Comm_connect/accept, MPI_Comm_join) though they were started separately.
//!
//! Ranks talk through the shared segment, so the ranks of the second job must live in the
//! first's. Every processes-mode `mpiexec` records its segment under the per-user directory
//! (`jobs/PID` holds the descriptor number; `runtime::user_dir`). A joining `mpiexec` opens that
//! descriptor through `/proc/PID/fd`, asks the first launcher's spawn desk for free slots (a
//! request that starts nothing, `spawn_desk::RESERVE_SLOTS`), and starts and supervises its
//! ranks there itself: they form their own MPI_COMM_WORLD, and their output and exit status
//! are this `mpiexec`'s. The first launcher keeps those slots reserved until it ends. Both jobs
//! share the segment's fate: an MPI_Abort in either ends both.
use crate::args::Options;
use crate::libpath;
use crate::rank_command::{rank_command, Program, World};
use crate::supervise::Job;
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::spawn_desk::{self, App, Request};
use oxmpi::runtime::user_dir;
use std::path::{Path, PathBuf};

/// The record of a running job's segment; removed when dropped (the job ended).
pub struct Registration(PathBuf);

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Records the segment of the job launched by `pid` so that other `mpiexec`s can join it.
/// Best effort: a job that cannot be recorded runs anyway (it cannot be joined).
pub fn register(seg: &Segment, pid: i32) -> Option<Registration> {
    let path = user_dir::subdir("jobs").ok()?.join(pid.to_string());
    std::fs::write(&path, seg.fd().to_string()).ok()?;
    Some(Registration(path))
}

/// The running jobs this user may join: (launcher pid, descriptor of its segment).
fn running() -> Result<Vec<(i32, i32)>, String> {
    let dir = user_dir::subdir("jobs")?;
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).map_err(|e| format!("'{}': {e}", dir.display()))?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if !user_dir::alive(pid) {
            let _ = std::fs::remove_file(e.path());
            continue;
        }
        if let Some(fd) = std::fs::read_to_string(e.path()).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            out.push((pid, fd));
        }
    }
    Ok(out)
}

/// The job `spec` names (a launcher pid, or `auto`), with its segment mapped.
fn find(spec: &str) -> Result<(i32, Segment), String> {
    let jobs = running()?;
    let (pid, fd) = if spec == "auto" {
        match jobs[..] {
            [one] => one,
            [] => return Err("--join auto: no oxmpi job of this user is running (in processes mode) to join".into()),
            _ => {
                let pids: Vec<String> = jobs.iter().map(|j| j.0.to_string()).collect();
                return Err(format!("--join auto: {} jobs run ({}): name one with --join PID", jobs.len(), pids.join(", ")));
            }
        }
    } else {
        let pid: i32 = spec.parse().map_err(|_| format!("--join {spec}: not a pid"))?;
        *jobs.iter().find(|j| j.0 == pid).ok_or_else(|| format!("--join {pid}: no oxmpi job of this user with that mpiexec pid runs in processes mode"))?
    };
    let path = format!("/proc/{pid}/fd/{fd}");
    let c = std::ffi::CString::new(path.clone()).expect("no NUL in a path made of numbers");
    // SAFETY: a valid C string; the descriptor is kept open (inherited by the ranks), no CLOEXEC.
    let own = unsafe { libc::open(c.as_ptr(), libc::O_RDWR) };
    if own < 0 {
        return Err(format!("--join {pid}: cannot open the job's segment '{path}': {}", std::io::Error::last_os_error()));
    }
    let seg = Segment::attach(own).map_err(|e| format!("--join {pid}: {e}"))?;
    Ok((pid, seg))
}

/// Runs the job of `o` inside the job `spec` names: `path` is the resolved program, `libenv` and
/// `preload` its library environment. Returns the exit status, like `run_processes`.
pub fn run(o: &Options, spec: &str, path: &Path, libenv: &libpath::LibEnv, preload: Option<&std::ffi::OsStr>) -> i32 {
    let (host, seg) = match find(spec) {
        Ok(x) => x,
        Err(m) => {
            eprintln!("oxmpi: {m}");
            return 1;
        }
    };
    let n = o.nranks;
    let req = Request { parent_root: spawn_desk::RESERVE_SLOTS, apps: vec![App { program: "(mpiexec --join)".into(), args: Vec::new(), nprocs: n, wdir: None, path: None, soft: None }] };
    let slots = match spawn_desk::ask(&seg, &req) {
        Ok(a) => a.slots,
        Err(m) => {
            eprintln!("oxmpi: --join {host}: {m}");
            return 1;
        }
    };
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut job = Job::new(&seg);
    let first = slots.first().copied().unwrap_or(0);
    for _ in 0..first {
        job.add_named(-1, String::new());
    }
    let list = crate::rank_command::slot_list(&slots);
    let program = Program { path, arg0: &o.program, args: &o.args, libenv, preload };
    let world = World { size: n, shm_fd: seg.fd(), slots: Some(&list), spawned_by: None, input: true };
    for (r, &slot) in slots.iter().enumerate() {
        let mut cmd = rank_command(&program, &world, r, slot, me);
        let label = format!("rank {r} of the job joined to {host} (slot {slot})");
        match cmd.spawn() {
            Ok(child) => job.add_named(child.id() as i32, label),
            Err(e) => {
                eprintln!("oxmpi: cannot start rank {r} of '{}': {e}", o.program.to_string_lossy());
                job.kill_all();
                return 127;
            }
        }
    }
    job.supervise(o.timeout.as_ref())
}
