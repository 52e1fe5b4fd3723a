//! MPI_Comm_spawn in threads mode: the new ranks are ranks of this process, each running its
//! own instance of the spawned program (`loader`), started like the job's first ranks (`host`).
//!
//! The job's segment has slots above the world for them (`host::run`, as processes mode's
//! launcher sizes its segment). A spawn takes the slots of spawned ranks that ended entirely
//! first (lowest first; `host::retire` unloads the rank's program instance and makes its
//! per-rank state new, once the rank finalized, returned 0 and its thread was joined or its
//! fiber's stack freed: a rank still running, or one that died, keeps its slot), then never used
//! ones (`spawn_desk::claim_fresh`). When too few are free it gives running spawned ranks a
//! moment to end, as processes mode's launcher does (a parent that disconnected from its
//! children and spawns again finds their slots free, though they may still be finishing). A request is served all or nothing: every program is found, loaded and checked
//! before any new rank starts. The spawned ranks learn their world and parent from
//! `runtime::spawned`, recorded here before they start; then they start one after another, each
//! past its start-up (MPI_Init) before the next, as `host::run` starts the first ranks.
//!
//! A program spawning `/proc/self/exe` (itself, in processes mode) gets the spawning rank's own
//! program: in this process that file is the host (`mpiexec`). The info key `wdir` gives a rank
//! kernel thread its own working directory (`unshare(CLONE_FS)`). In a job whose ranks run as
//! fibers, ranks that cannot be fibers run as kernel threads beside them: those given `wdir` (a
//! fiber shares its carrier's working directory) and those of a program fibers cannot run
//! (thread-local variables, OpenMP: `host::fiber_blocker`).
use super::host::{self, RankStart};
use super::loader;
use super::shebang;
use crate::runtime::job;
use crate::runtime::spawn_desk::{claim_fresh, soft_count, Answer, App};
use crate::runtime::spawned::{self, Spawned};
use crate::runtime::segment::Segment;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The slots spawned ranks hold: one spawn at a time (slots are claimed and recorded together).
static SLOTS: std::sync::Mutex<SpawnedSlots> = std::sync::Mutex::new(SpawnedSlots { running: Vec::new(), free: BTreeSet::new() });

/// Slots handed to spawned ranks, and those of spawned ranks retired since.
struct SpawnedSlots {
    /// Given to a spawned rank, not yet retired.
    running: Vec<usize>,
    /// Retired: free for the next spawn.
    free: BTreeSet<usize>,
}

/// How long a spawn that finds too few free slots waits for running spawned ranks to end.
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl SpawnedSlots {
    /// Retires the running spawned ranks that ended entirely; until `need` slots are free (with
    /// the never used ones) or `EXIT_GRACE` passed while some still run. Returns the free count.
    fn sweep(&mut self, seg: &Segment, need: usize) -> usize {
        let deadline = Instant::now() + EXIT_GRACE;
        loop {
            let free = &mut self.free;
            self.running.retain(|&r| {
                let gone = host::retire(seg, r);
                if gone {
                    free.insert(r);
                }
                !gone
            });
            let n = self.free.len() + seg.nranks() - seg.occupied();
            if n >= need || self.running.is_empty() || Instant::now() >= deadline {
                return n;
            }
            if super::sched::in_fiber() {
                super::sched::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
}

/// How long a spawned rank may take to reach MPI_Init before the next one starts anyway.
const STARTUP_LIMIT: Duration = Duration::from_secs(1);

/// The file of `app`'s program, found as processes mode's launcher finds it: a name with a slash
/// relative to `wdir` (or the current directory), else searched in the info key `path`, then PATH.
fn find_program(app: &App, wdir: Option<&Path>) -> Result<PathBuf, String> {
    let name = &app.program;
    let found = if name.contains('/') {
        let p = match wdir {
            Some(d) if !name.starts_with('/') => d.join(name),
            _ => PathBuf::from(name),
        };
        shebang::executable(&p).then_some(p)
    } else {
        let dirs = app.path.iter().cloned().chain(std::env::var("PATH").ok()).collect::<Vec<_>>().join(":");
        dirs.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(name)).find(|p| shebang::executable(p))
    };
    found.ok_or_else(|| format!("cannot spawn '{name}': no such executable file (searched the info key path and PATH for a bare name)"))
}

/// A command of the request, found and loaded.
struct Ready {
    instances: Vec<loader::Instance>,
    /// The ELF program loaded: the command's, or its `#!` interpreter's.
    program: PathBuf,
    /// argv before the command's own arguments (`shebang::Command::head`).
    head: Vec<std::ffi::OsString>,
    wdir: Option<CString>,
    /// Its ranks run as kernel threads though the job's run as fibers: a working directory of
    /// their own (a fiber shares its carrier's), or a program fibers cannot run
    /// (`host::fiber_blocker`).
    threads: bool,
}

/// Serves MPI_Comm_spawn(_multiple) for the root `parent_root`: starts the new ranks and answers
/// like processes mode's launcher (`spawn_desk::ask`), or with the one-line reason why not.
pub fn spawn(parent_root: usize, apps: &[App]) -> Result<Answer, String> {
    let Some(job) = job::threads_job() else { return Err("no threads-mode job runs in this process".into()) };
    let Some(starter) = host::STARTER.get() else { return Err("the threads-mode host is not running ranks".into()) };
    let mut held = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    let seg = &*job.seg;
    let asked: usize = apps.iter().map(|a| a.nprocs).sum();
    let mut free = held.sweep(seg, asked);
    let own_exe = std::fs::canonicalize("/proc/self/exe").ok();
    let parent_program = host::PROGRAMS.lock().unwrap_or_else(|p| p.into_inner()).get(parent_root).cloned();

    // Find every program and count the ranks before taking a slot.
    let mut found = Vec::new();
    let available = free;
    let mut counts = Vec::new();
    for app in apps {
        let wdir = app.wdir.as_ref().map(PathBuf::from);
        if let Some(d) = &wdir {
            if !d.is_dir() {
                return Err(format!("cannot spawn '{}': the working directory (info key wdir) '{}' is not a directory", app.program, d.display()));
            }
        }
        let mut path = find_program(app, wdir.as_deref())?;
        if own_exe.is_some() && std::fs::canonicalize(&path).ok() == own_exe {
            path = parent_program.clone().ok_or("the spawning rank's program is unknown")?;
        }
        // A `#!` script runs as its interpreter with the script as an argument (as execve does).
        let cmd = shebang::resolve(&path, app.program.as_ref(), std::env::var_os("PATH").as_deref())
            .map_err(|e| format!("cannot spawn '{}': {e}", app.program))?;
        let k = match &app.soft {
            None => app.nprocs,
            Some(v) => soft_count(v, app.nprocs.min(free))?.ok_or_else(|| {
                format!("cannot spawn '{}': info key soft = '{v}' allows no count of at most {} ({free} of the job's {} slots for ranks are free)", app.program, app.nprocs.min(free), seg.nranks())
            })?,
        };
        counts.push(k);
        free = free.saturating_sub(k);
        found.push((cmd, wdir));
    }
    let total: usize = counts.iter().sum();
    if total > available {
        return Err(format!(
            "cannot spawn {total} ranks: the job has {} slots for ranks and {available} are free (a spawned rank's slot is free once it finished); start mpiexec with a larger -usize (or OXMPI_UNIVERSE_SIZE)",
            seg.nranks()
        ));
    }

    // The slots: retired ones first, then never used ones. Every instance is loaded before any
    // slot is taken: nothing is taken when a program cannot run.
    let reused: Vec<usize> = held.free.iter().copied().take(total).collect();
    let first = seg.occupied();
    let chosen: Vec<usize> = reused.iter().copied().chain(first..first + (total - reused.len())).collect();
    let mut ready = Vec::new();
    let mut chosen_iter = chosen.iter().copied();
    for ((cmd, wdir), (&k, app)) in found.into_iter().zip(counts.iter().zip(apps)) {
        let prepared = loader::prepare(&cmd.program).map_err(|e| format!("cannot spawn '{}': {}", app.program, e.0))?;
        let mut instances = Vec::with_capacity(k);
        for _ in 0..k {
            let slot = chosen_iter.next().expect("one slot per rank");
            let inst = prepared.load_instance(slot).map_err(|e| format!("cannot spawn '{}': {}", app.program, e.0))?;
            instances.push(inst);
        }
        let wdir = wdir.map(|d| CString::new(d.as_os_str().as_bytes()).map_err(|_| "the info key wdir holds a NUL byte".to_string())).transpose()?;
        let threads = starter.fibers.is_some() && (wdir.is_some() || instances.first().is_some_and(|i| host::fiber_blocker(i).is_some()));
        ready.push(Ready { instances, program: cmd.program, head: cmd.head, wdir, threads });
    }
    let fresh = claim_fresh(seg, total - reused.len()).ok_or("the job's free slots were taken meanwhile")?;
    debug_assert_eq!(fresh.start, first);
    for s in &reused {
        held.free.remove(s);
    }
    let slots = chosen;
    held.running.extend(&slots);

    let mut next = slots.iter().copied();
    let mut starts = Vec::with_capacity(total);
    for ((r, app), appnum) in ready.into_iter().zip(apps).zip(0..) {
        let args: Vec<CString> = r.head.iter()
            .map(|a| a.as_bytes())
            .chain(app.args.iter().map(|a| a.as_bytes()))
            .map(|a| CString::new(a).map_err(|_| format!("cannot spawn '{}': an argument holds a NUL byte", app.program)))
            .collect::<Result<_, _>>()?;
        for inst in r.instances {
            let s = next.next().expect("one slot per instance");
            spawned::record(s, Spawned { world: slots.clone(), parent_root: Some(parent_root), appnum });
            host::register_instance(s, &inst, &r.program);
            let own = args.clone();
            let mut argv: Vec<*mut std::os::raw::c_char> = own.iter().map(|a| a.as_ptr() as *mut _).collect();
            argv.push(std::ptr::null_mut());
            starts.push((RankStart { rank: s, main: inst.main, constructors: inst.constructors().to_vec(), _args: own, argv, wdir: r.wdir.clone(), cpus: None }, r.threads));
            host::keep_instance(s, inst);
        }
    }
    for (start, thread) in starts {
        let rank = start.rank;
        host::start_spawned(start, thread)?;
        wait_startup(seg, rank);
    }
    Ok(Answer { slots, counts })
}

/// Waits until spawned rank `rank` is past its start-up, at most `STARTUP_LIMIT` (a fiber parks,
/// so its carrier runs the new rank meanwhile).
fn wait_startup(seg: &Segment, rank: usize) {
    let deadline = Instant::now() + STARTUP_LIMIT;
    while !host::past_startup(seg, rank) && Instant::now() < deadline {
        if super::sched::in_fiber() {
            super::sched::park(&|| host::past_startup(seg, rank), None);
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}
