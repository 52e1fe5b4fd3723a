//! Watching a running job and ending it as a whole.
//!
//! MPI jobs are all-or-nothing: once one rank fails, its peers would block forever waiting for it,
//! so the launcher's job is to notice the first failure quickly, say once what happened, kill
//! every other rank, reap them all (no strays, no zombies) and turn the failure into an exit
//! status the user's script can act on.
//!
//! The launcher blocks SIGCHLD, SIGINT, SIGTERM and SIGHUP and waits for them with
//! `sigtimedwait`, so a rank's death or a ^C wakes it at once without signal handlers or races,
//! while the 20 ms timeout bounds how late it notices an MPI_Abort recorded in the segment or the
//! job's time limit.
//!
//! A job that opted in to surviving failures (`--survive`, or a rank set a non-fatal error
//! handler, recorded in the segment) is not ended when a rank dies: the launcher reports the death,
//! marks the rank failed in the segment and rings every doorbell, and the survivors go on (their
//! operations with the dead rank fail with MPIX_ERR_PROC_FAILED, see `oxmpi::ulfm`). The job's
//! exit status is then the first death's, once every survivor has ended.
//!
//! In threads mode the job is one host process that runs every rank and reports on them itself;
//! the same supervision then watches that single process, or one per node (see `Job::threads_hosts`).
use crate::args::Timeout;
use oxmpi::runtime::segment::{Segment, RANK_FINALIZED, RANK_INITIALIZED};
use std::ffi::CStr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Longest sleep between checks of the abort record and the time limit.
const POLL: Duration = Duration::from_millis(20);
/// How long a rank that recorded an abort may take to print its message and exit by itself.
const ABORT_GRACE: Duration = Duration::from_millis(500);
/// How long a spawn waits for ranks that finalized to exit, so that their slots can be reused.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long ranks get to act on a signal forwarded from the launcher before SIGKILL.
const SIGNAL_GRACE: Duration = Duration::from_millis(100);

/// Signals the launcher handles synchronously (SIGUSR1: a rank left a spawn request at the desk).
const HANDLED: [i32; 5] = [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1];

fn handled_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset/sigaddset initialise it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in HANDLED {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks the handled signals in the launcher. Call before spawning ranks, so a signal that
/// arrives while they start stays pending for the supervisor instead of killing the launcher.
pub fn block_signals() {
    let set = handled_set();
    // SAFETY: valid set; the launcher is single-threaded.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// In a forked child before exec: ranks must start with no signals blocked (the mask survives exec).
/// Async-signal-safe.
pub fn unblock_all_in_child() {
    // SAFETY: sigemptyset and sigprocmask are async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// Ties a child about to be spawned to the launcher: it starts with no signals blocked and is
/// SIGKILLed by the kernel when the launcher dies, even by SIGKILL.
pub fn tie_to_launcher(cmd: &mut std::process::Command, launcher_pid: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure only makes async-signal-safe calls (sigprocmask, prctl, getppid, _exit).
    unsafe {
        cmd.pre_exec(move || {
            unblock_all_in_child();
            // Children never outlive the launcher, even if it is SIGKILLed...
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            // ...including when it died before the line above took effect.
            if libc::getppid() != launcher_pid {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// The human name of signal `sig`, e.g. "Segmentation fault".
pub fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a valid C string (or NULL on some libcs); single-threaded use.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        return format!("signal {sig}");
    }
    // SAFETY: non-null, NUL-terminated.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Maps an MPI_Abort error code to an exit status, as the shell would truncate it, but never
/// turning a non-zero code into success.
pub fn abort_exit_code(code: i32) -> i32 {
    let c = code & 0xff;
    if c == 0 && code != 0 {
        1
    } else {
        c
    }
}

/// A running job: the ranks' pids and which of them are not reaped yet.
pub struct Job<'a> {
    /// The job segment (processes mode); None for a threads-mode host, which has none.
    seg: Option<&'a Segment>,
    pids: Vec<i32>,
    alive: Vec<bool>,
    /// Exit status owed for a rank that died while the survivors went on (the first one).
    survived: Option<i32>,
    /// How each rank is named in messages (by slot); "rank N" when empty.
    labels: Vec<String>,
    /// Serves the spawn requests of the ranks (`crate::spawn`), called once per loop.
    spawner: Option<Box<dyn FnMut(&mut Job<'a>) + 'a>>,
    /// Per slot: its rank exited with status 0 (a spawn may reuse a finalized one).
    clean: Vec<bool>,
    /// Exits reaped while serving a spawn, judged by the next pass of the loop.
    deferred: Vec<(usize, i32, i32)>,
    /// `--nodes`: the segments of nodes 1.. (node 0's is `seg`) and the node of every rank.
    nodes: Vec<&'a Segment>,
    node_of: Vec<usize>,
    /// A node agent's order from the head (`agent`): 0 none, else the signal to end the ranks
    /// with, quietly (the head says what happened).
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicI32>>,
    /// Told the job's exit status and message (None: the rank printed its own) the moment a
    /// failure ends the job, before the ranks are killed; it prints the message, not the job
    /// (a node agent tells the head, which ends the other nodes and says which failure came
    /// first).
    on_fail: Option<Box<dyn FnMut(usize, i32, Option<&str>) + 'a>>,
}

/// What a rank's exit means for the job.
enum Outcome {
    Normal,
    /// Message to print (if any) and exit status of the launcher.
    Fail(Option<String>, i32),
}

impl<'a> Job<'a> {
    pub fn new(seg: &'a Segment) -> Job<'a> {
        Job { seg: Some(seg), pids: Vec::new(), alive: Vec::new(), survived: None, labels: Vec::new(), spawner: None, clean: Vec::new(), deferred: Vec::new(), nodes: Vec::new(), node_of: Vec::new(), stop: None, on_fail: None }
    }

    /// A threads-mode job: the processes `pids` (one, or one per node with `--nodes`) run the
    /// ranks and print their own messages about them, so an exit code is passed on silently;
    /// only a death by a signal is reported. The first host that fails ends the others.
    pub fn threads_hosts(pids: Vec<i32>) -> Job<'a> {
        let k = pids.len();
        Job { seg: None, alive: vec![true; k], pids, survived: None, labels: vec![String::new(); k], spawner: None, clean: vec![false; k], deferred: Vec::new(), nodes: Vec::new(), node_of: Vec::new(), stop: None, on_fail: None }
    }

    /// Names the processes of a threads-mode job in messages (one label per host process).
    pub fn set_labels(&mut self, labels: Vec<String>) {
        for (l, new) in self.labels.iter_mut().zip(labels) {
            *l = new;
        }
    }

    /// Lets a node agent end the job from another thread: store a signal in `flag`, then wake the
    /// supervisor with SIGUSR1 to this process.
    pub fn set_stop(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicI32>) {
        self.stop = Some(flag);
    }

    /// Installs the hook told of a failure that ends the job (see `on_fail`).
    /// (`f` is told the failed slot too.)
    pub fn set_on_fail(&mut self, f: impl FnMut(usize, i32, Option<&str>) + 'a) {
        self.on_fail = Some(Box::new(f));
    }

    /// Reports the failure that ends the job: to the hook if any, else `msg` on stderr.
    fn failing(&mut self, slot: usize, code: i32, msg: Option<&str>) {
        match &mut self.on_fail {
            Some(f) => f(slot, code, msg),
            None => {
                if let Some(m) = msg {
                    eprintln!("{m}");
                }
            }
        }
    }

    /// A job over several nodes: `nodes` are the segments of nodes 1.. and `node_of` the node
    /// of every rank.
    pub fn set_nodes(&mut self, nodes: Vec<&'a Segment>, node_of: Vec<usize>) {
        self.nodes = nodes;
        self.node_of = node_of;
    }

    /// The segment holding rank `r`'s state: its node's.
    fn seg_of(&self, r: usize) -> Option<&'a Segment> {
        match self.node_of.get(r) {
            Some(&node) if node > 0 => self.nodes.get(node - 1).copied(),
            _ => self.seg,
        }
    }

    /// Every segment of the job (one per node).
    fn all_segs(&self) -> impl Iterator<Item = &'a Segment> + '_ {
        self.seg.into_iter().chain(self.nodes.iter().copied())
    }

    pub fn add(&mut self, pid: i32) {
        self.add_named(pid, String::new());
    }

    /// Records a started rank (in slot order) named `label` in messages ("rank N" if empty);
    /// pid 0: a slot whose rank could not be started.
    pub fn add_named(&mut self, pid: i32, label: String) {
        self.pids.push(pid);
        self.alive.push(pid > 0);
        self.labels.push(label);
        self.clean.push(false);
    }

    /// Installs the server of the ranks' spawn requests.
    pub fn set_spawner(&mut self, f: impl FnMut(&mut Job<'a>) + 'a) {
        self.spawner = Some(Box::new(f));
    }

    /// Puts the rank started as `pid` in slot `slot` (one `add_named` made, or a reused one).
    pub fn set_slot(&mut self, slot: usize, pid: i32, label: String) {
        self.pids[slot] = pid;
        self.alive[slot] = true;
        self.labels[slot] = label;
        self.clean[slot] = false;
    }

    /// Slots from `from` on whose rank ended cleanly (finalized, exited with 0, reaped, not
    /// failed) or never started: a spawn may give them to new ranks. When fewer than `need`
    /// are, spawned ranks get a moment to end (a parent that disconnected from its children and
    /// spawns again should find their slots free, though they may still be in MPI_Finalize).
    pub fn reusable_slots(&mut self, from: usize, need: usize) -> Vec<usize> {
        let Some(seg) = self.seg else { return Vec::new() };
        let end = Instant::now() + EXIT_GRACE;
        loop {
            let ok: Vec<usize> = (from..self.pids.len())
                .filter(|&r| !self.alive[r] && !seg.is_failed(r) && (self.pids[r] == 0 || (self.clean[r] && seg.rank(r).state.load(Ordering::SeqCst) == RANK_FINALIZED)))
                .collect();
            let spawned_alive = (from..self.pids.len()).any(|r| self.alive[r]);
            if ok.len() >= need || !spawned_alive || Instant::now() >= end {
                return ok;
            }
            let got = self.reap_nohang();
            if got.is_empty() {
                std::thread::sleep(Duration::from_micros(500));
            }
            // A clean end needs no judging (and its slot may hold another rank by the next
            // pass); any other is judged there, its slot not reused.
            let clean_end = |r: usize| self.clean[r] && seg.rank(r).state.load(Ordering::SeqCst) == RANK_FINALIZED;
            let judge_later: Vec<_> = got.into_iter().filter(|&(r, _, _)| !clean_end(r)).collect();
            self.deferred.extend(judge_later);
        }
    }

    /// Ends the ranks of `slots` that were started (a spawn that failed half-way).
    pub fn kill_slots(&mut self, slots: &[usize]) {
        for &r in slots {
            if self.alive.get(r) == Some(&true) {
                // SAFETY: pid is our unreaped child, so it cannot have been recycled.
                unsafe { libc::kill(self.pids[r], libc::SIGKILL) };
                let mut status = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(self.pids[r], &mut status, 0) };
                self.alive[r] = false;
                // Never finalized: the slot is not handed out again.
                self.pids[r] = -1;
            }
        }
    }

    fn serve_spawns(&mut self) {
        if let Some(mut f) = self.spawner.take() {
            f(self);
            self.spawner = Some(f);
        }
    }

    fn rank_of(&self, pid: i32) -> Option<usize> {
        self.pids.iter().position(|&p| p == pid)
    }

    fn any_alive(&self) -> bool {
        self.alive.iter().any(|&a| a)
    }

    /// Reaps every rank that has exited, without blocking.
    fn reap_nohang(&mut self) -> Vec<(usize, i32, i32)> {
        let mut out = std::mem::take(&mut self.deferred);
        loop {
            let mut status = 0;
            // SAFETY: plain syscall on our own children.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break; // 0: none exited; -1/ECHILD: no children left
            }
            if let Some(r) = self.rank_of(pid) {
                self.alive[r] = false;
                self.clean[r] = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
                out.push((r, pid, status));
            }
        }
        out
    }

    fn signal_alive(&self, sig: i32, except: Option<usize>) {
        for (r, (&pid, &alive)) in self.pids.iter().zip(&self.alive).enumerate() {
            if alive && Some(r) != except {
                // SAFETY: pid is our unreaped child, so it cannot have been recycled.
                unsafe { libc::kill(pid, sig) };
            }
        }
    }

    /// Waits up to `grace` for the ranks in `watch` (all alive ones if None) to exit, reaping them.
    fn wait_for_exit(&mut self, grace: Duration, watch: Option<usize>) {
        let end = Instant::now() + grace;
        loop {
            self.reap_nohang();
            let done = match watch {
                Some(r) => !self.alive[r],
                None => !self.any_alive(),
            };
            if done {
                return;
            }
            let now = Instant::now();
            if now >= end {
                return;
            }
            wait_signal(Some((end - now).min(Duration::from_millis(5))));
        }
    }

    /// SIGKILLs every rank still alive and reaps them all. Blocking reaps are fine: SIGKILL
    /// cannot be caught, and our unreaped children cannot be replaced by other processes.
    pub fn kill_all(&mut self) {
        self.signal_alive(libc::SIGKILL, None);
        for r in 0..self.pids.len() {
            if self.alive[r] {
                let mut status = 0;
                loop {
                    // SAFETY: reaping our own child.
                    let rc = unsafe { libc::waitpid(self.pids[r], &mut status, 0) };
                    if rc >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        break;
                    }
                }
                self.alive[r] = false;
            }
        }
    }

    fn judge(&self, r: usize, pid: i32, status: i32) -> Outcome {
        let who = match self.seg {
            Some(_) if self.labels.get(r).is_some_and(|l| !l.is_empty()) => format!("{} (pid {pid})", self.labels[r]),
            Some(_) => format!("rank {r} (pid {pid})"),
            None if self.labels.get(r).is_some_and(|l| !l.is_empty()) => format!("threads-mode host of {} (pid {pid})", self.labels[r]),
            None => format!("threads-mode job (pid {pid})"),
        };
        if libc::WIFSIGNALED(status) {
            let s = libc::WTERMSIG(status);
            return Outcome::Fail(Some(format!("oxmpi: {who} killed by signal {s} ({}); ending the job", signal_name(s))), 128 + s);
        }
        let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 1 };
        let Some(seg) = self.seg_of(r) else {
            // The threads-mode host has said what happened to its ranks already.
            return if code != 0 { Outcome::Fail(None, code) } else { Outcome::Normal };
        };
        if code != 0 {
            return Outcome::Fail(Some(format!("oxmpi: {who} exited with code {code}; ending the job")), code);
        }
        if seg.rank(r).state.load(Ordering::SeqCst) == RANK_INITIALIZED {
            return Outcome::Fail(Some(format!("oxmpi: {who} exited before calling MPI_Finalize; ending the job")), 1);
        }
        Outcome::Normal
    }

    /// In a job that survives failures, reports rank `r`'s death (`msg`, exit status `code`),
    /// marks it failed and lets the others go on; false when the job must end as usual.
    fn survive(&mut self, r: usize, msg: Option<&str>, code: i32) -> bool {
        if !self.all_segs().any(|s| s.survival_wanted()) {
            return false;
        }
        if let Some(m) = msg {
            eprintln!("{}; the other ranks go on (failure survival is on)", m.trim_end_matches("; ending the job"));
        }
        // Every node's ranks learn it from their own segment.
        for s in self.all_segs() {
            s.mark_failed(r);
        }
        self.survived.get_or_insert(code);
        true
    }

    /// A rank recorded MPI_Abort / a fatal error and prints its own message: end the others now,
    /// give it a moment to finish printing and exit, then end it too.
    fn end_for_abort(&mut self, rank: i32, code: i32) -> i32 {
        let aborter = usize::try_from(rank).ok().filter(|&r| r < self.pids.len());
        self.signal_alive(libc::SIGKILL, aborter);
        if let Some(r) = aborter {
            self.wait_for_exit(ABORT_GRACE, Some(r));
        }
        self.kill_all();
        abort_exit_code(code)
    }

    /// The launcher got `sig`: pass it on, give the ranks a moment, then make sure they are gone.
    fn end_for_signal(&mut self, sig: i32) -> i32 {
        if sig != libc::SIGINT {
            eprintln!("oxmpi: received signal {sig} ({}); ending the job", signal_name(sig));
        }
        self.signal_alive(sig, None);
        self.wait_for_exit(SIGNAL_GRACE, None);
        self.kill_all();
        128 + sig
    }

    /// Supervises the job until it ends; returns the launcher's exit status.
    pub fn supervise(&mut self, timeout: Option<&Timeout>) -> i32 {
        let deadline = timeout.map(|t| (Instant::now() + t.limit, t.shown.clone()));
        loop {
            self.serve_spawns();
            let exited = self.reap_nohang();
            // An abort record explains any exit that came with it, so it is looked at first.
            let aborted = self.all_segs().find_map(Segment::abort_record);
            if let Some((rank, code)) = aborted {
                self.failing(usize::try_from(rank).unwrap_or(0), abort_exit_code(code), None);
                return self.end_for_abort(rank, code);
            }
            // A ^C reaches the ranks from the terminal as well as the launcher: a rank that died
            // of it is part of the launcher's own shutdown, not a failure to report.
            if let Some(s) = take_pending_stop_signal() {
                return self.end_for_signal(s);
            }
            for (r, pid, status) in exited {
                if let Outcome::Fail(msg, code) = self.judge(r, pid, status) {
                    if self.survive(r, msg.as_deref(), code) {
                        continue;
                    }
                    self.failing(r, code, msg.as_deref());
                    self.kill_all();
                    return code;
                }
            }
            // Told to end by the head (after the exits above: a rank that died first is still
            // reported).
            if let Some(sig) = self.stop.as_ref().map(|f| f.load(Ordering::SeqCst)).filter(|&s| s > 0) {
                // A rank that died meanwhile may be the cause of it all: still reported.
                for (r, pid, status) in self.reap_nohang() {
                    if let Outcome::Fail(msg, code) = self.judge(r, pid, status) {
                        self.failing(r, code, msg.as_deref());
                        break;
                    }
                }
                self.signal_alive(sig, None);
                self.wait_for_exit(SIGNAL_GRACE, None);
                self.kill_all();
                return 128 + sig;
            }
            if !self.any_alive() {
                return self.survived.unwrap_or(0);
            }
            let mut wait = POLL;
            if let Some((end, shown)) = &deadline {
                let now = Instant::now();
                if now >= *end {
                    eprintln!("oxmpi: job timed out after {shown} s; ending the job");
                    self.kill_all();
                    return 124;
                }
                wait = wait.min(*end - now);
            }
            match wait_signal(Some(wait)) {
                Some(s) if s != libc::SIGCHLD && s != libc::SIGUSR1 => return self.end_for_signal(s),
                _ => {}
            }
        }
    }
}

/// Consumes a pending SIGINT, SIGTERM or SIGHUP, if any, without waiting.
pub fn take_pending_stop_signal() -> Option<i32> {
    // SAFETY: sigset_t is plain data, initialised by the calls; zero timeout never blocks.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let s = libc::sigtimedwait(&set, std::ptr::null_mut(), &zero);
        (s > 0).then_some(s)
    }
}

/// Waits for one of the handled signals for at most `timeout`; returns it, or None on timeout.
fn wait_signal(timeout: Option<Duration>) -> Option<i32> {
    let set = handled_set();
    let t = timeout.unwrap_or(POLL);
    let ts = libc::timespec { tv_sec: t.as_secs() as libc::time_t, tv_nsec: t.subsec_nanos() as libc::c_long };
    // SAFETY: valid set and timespec; info may be null.
    let s = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
    if s > 0 {
        Some(s)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_codes() {
        assert_eq!(abort_exit_code(3), 3);
        assert_eq!(abort_exit_code(255), 255);
        assert_eq!(abort_exit_code(256), 1);
        assert_eq!(abort_exit_code(257), 1);
        assert_eq!(abort_exit_code(-1), 255);
        assert_eq!(abort_exit_code(0), 0);
    }

    #[test]
    fn names() {
        assert_eq!(signal_name(libc::SIGSEGV), "Segmentation fault");
        assert_eq!(signal_name(libc::SIGKILL), "Killed");
    }
}
