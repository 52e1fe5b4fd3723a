//! Serving MPI_Comm_spawn in processes mode: the launcher side of `oxmpi::runtime::spawn_desk`
//! (which holds the design). A request is served all or nothing: every program is found and
//! every working directory checked before a slot is taken, and the new ranks are started as the
//! launcher's own children, supervised like the ones it started with. Slots of spawned ranks
//! that finalized and were reaped are handed out again (lowest first), then never used ones.
use crate::libpath;
use crate::rank_command::{rank_command, Program, World};
use crate::supervise::Job;
use oxmpi::runtime::segment::Segment;
use oxmpi::runtime::spawn_desk::{self, Answer, App, Request};
use std::ffi::OsString;
use std::path::PathBuf;

/// What the launcher needs to start spawned ranks like the first ones.
pub struct Spawner<'a> {
    pub seg: &'a Segment,
    pub launcher_pid: i32,
    pub libdir: Option<libpath::LibDir>,
    /// The job's `--abi` (`OXMPI_ABI`), which the spawned programs need too when their closure
    /// shows none (python).
    pub abi: Option<crate::abi::Abi>,
    /// Number of spawns served (names the spawned jobs in messages).
    pub served: usize,
}

/// A program of the request, found and checked.
struct Ready {
    app: App,
    path: PathBuf,
    libenv: libpath::LibEnv,
    wdir: Option<PathBuf>,
}

impl<'a> Spawner<'a> {
    /// Serves the request waiting at the desk, if any.
    pub fn serve(&mut self, job: &mut Job<'a>) {
        let Some(req) = spawn_desk::take(self.seg) else { return };
        let result = match req {
            Ok(req) => self.start(req, job),
            Err(()) => Err("the spawn request is malformed (a rank of another oxmpi version?)".into()),
        };
        spawn_desk::answer(self.seg, result);
    }

    fn prepare(&self, app: &App) -> Result<Ready, String> {
        let wdir = app.wdir.as_ref().map(PathBuf::from);
        if let Some(d) = &wdir {
            if !d.is_dir() {
                return Err(format!("cannot spawn '{}': the working directory (info key wdir) '{}' is not a directory", app.program, d.display()));
            }
        }
        // A relative program name with a slash is relative to the new working directory; the
        // info key `path` is searched before PATH.
        let search = match (&app.path, std::env::var_os("PATH")) {
            (Some(p), Some(q)) => Some(OsString::from(format!("{p}:{}", q.to_string_lossy()))),
            (Some(p), None) => Some(OsString::from(p)),
            (None, q) => q,
        };
        let prog = match &wdir {
            Some(d) if app.program.contains('/') && !app.program.starts_with('/') => d.join(&app.program).into_os_string(),
            _ => OsString::from(&app.program),
        };
        let path = crate::resolve_program(&prog, search).map_err(|e| format!("cannot spawn '{}': {e}", app.program))?;
        let (info, abi) = crate::abi::of_program(&path, self.abi);
        let libenv = libpath::plan(&app.program, info.as_ref(), abi, self.libdir.as_ref(), &libpath::UserEnv::from_env())?;
        Ok(Ready { app: app.clone(), path, libenv, wdir })
    }

    fn start(&mut self, req: Request, job: &mut Job<'a>) -> Result<Answer, String> {
        if req.parent_root == spawn_desk::RESERVE_SLOTS {
            return self.reserve(req.apps.iter().map(|a| a.nprocs).sum(), job);
        }
        let ready = req.apps.iter().map(|a| self.prepare(a)).collect::<Result<Vec<_>, _>>()?;
        let asked: usize = ready.iter().map(|r| r.app.nprocs).sum();
        let fresh_free = self.seg.nranks() - self.seg.occupied();
        let mut reusable = job.reusable_slots(self.seg.initial(), asked.saturating_sub(fresh_free));
        let mut free = reusable.len() + self.seg.nranks() - self.seg.occupied();
        // How many of each command: all it asks for, or with `soft` the most it allows that fit.
        let mut counts = Vec::new();
        for r in &ready {
            let k = match &r.app.soft {
                None => r.app.nprocs,
                Some(v) => spawn_desk::soft_count(v, r.app.nprocs.min(free))?.ok_or_else(|| {
                    format!("cannot spawn '{}': info key soft = '{v}' allows no count of at most {} ({free} of the job's {} slots for ranks are free)", r.app.program, r.app.nprocs.min(free), self.seg.nranks())
                })?,
            };
            counts.push(k);
            free = free.saturating_sub(k);
        }
        let total: usize = counts.iter().sum();
        let available = reusable.len() + self.seg.nranks() - self.seg.occupied();
        if total > available {
            return Err(format!(
                "cannot spawn {total} ranks: the job has {} slots for ranks and {available} are free; start mpiexec with a larger -usize (or OXMPI_UNIVERSE_SIZE)",
                self.seg.nranks()
            ));
        }
        let reused: Vec<usize> = reusable.drain(..total.min(reusable.len())).collect();
        for &s in &reused {
            recycle(self.seg, s);
        }
        let fresh = spawn_desk::claim_fresh(self.seg, total - reused.len()).expect("counted free above");
        for _ in fresh.clone() {
            job.add_named(0, String::new());
        }
        let slots: Vec<usize> = reused.into_iter().chain(fresh).collect();
        self.served += 1;
        let list = crate::rank_command::slot_list(&slots);
        let mut next = slots.iter().copied().enumerate();
        for (appnum, (r, &k)) in ready.iter().zip(&counts).enumerate() {
            let preload = libpath::processes_preload(self.libdir.as_ref(), r.libenv.ld_preload.as_deref(), std::env::var_os("LD_PRELOAD").as_deref());
            let program = Program { path: &r.path, arg0: r.app.program.as_ref(), args: &r.app.args, libenv: &r.libenv, preload: preload.as_deref() };
            let world = World { size: total, shm_fd: self.seg.fd(), slots: Some(&list), spawned_by: Some((req.parent_root, appnum)), input: false };
            for (rank, slot) in next.by_ref().take(k) {
                let mut cmd = rank_command(&program, &world, rank, slot, self.launcher_pid);
                if let Some(d) = &r.wdir {
                    cmd.current_dir(d);
                }
                let label = format!("rank {rank} of spawned job {} ('{}', slot {slot})", self.served, r.app.program);
                match cmd.spawn() {
                    Ok(child) => job.set_slot(slot, child.id() as i32, label),
                    Err(e) => {
                        // Rare (the program was found): out of processes, or it vanished. The
                        // ranks of this spawn already started would wait for the others forever.
                        job.kill_slots(&slots);
                        return Err(format!("cannot start rank {rank} of '{}': {e}", r.app.program));
                    }
                }
            }
        }
        Ok(Answer { slots, counts })
    }
}

impl<'a> Spawner<'a> {
    /// Reserves `n` never used slots for the ranks of a joining `mpiexec` (`crate::join`), which
    /// starts and supervises them itself: here they stay taken (never reused) until the job ends.
    fn reserve(&mut self, n: usize, job: &mut Job<'a>) -> Result<Answer, String> {
        let free = self.seg.nranks() - self.seg.occupied();
        let Some(fresh) = spawn_desk::claim_fresh(self.seg, n) else {
            return Err(format!("the job has {free} free slots for ranks, not {n}: start it with a larger -usize (or OXMPI_UNIVERSE_SIZE)"));
        };
        for s in fresh.clone() {
            job.add_named(-1, format!("slot {s} (a joined job's)"));
        }
        Ok(Answer { slots: fresh.collect(), counts: vec![n] })
    }
}

/// Makes the slot of a rank that finalized and was reaped ready for a new rank: drops the
/// packets nobody will read from its inbound channels (the launcher is their only consumer now)
/// and resets its control block.
fn recycle(seg: &Segment, slot: usize) {
    oxmpi::transport::shm::discard_inbound(seg, slot);
    let rc = seg.rank(slot);
    rc.pid.store(0, std::sync::atomic::Ordering::Relaxed);
    rc.state.store(oxmpi::runtime::segment::RANK_NOT_STARTED, std::sync::atomic::Ordering::Release);
}
