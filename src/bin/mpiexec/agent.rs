//! A node agent: `mpiexec --node-agent ADDR:PORT NODE TOKEN` (hidden, internal), started by the
//! head `mpiexec` of a job on several hosts (`remote`) on each host, through the launcher.
//!
//! It connects back to the head (`link`), receives the job's description (program, arguments,
//! environment, working directory, its node's ranks), makes the node's own shared segment and a
//! PMI server for the node's ranks whose fences go through the head, starts the ranks (processes
//! mode: a process per rank; threads mode: one host process whose ranks are threads) and
//! supervises them like a one-machine job, reporting the end to the head. The ranks' failures
//! are printed here (they reach the user through the launcher), naming rank and host.
//!
//! When the head says so (`end`, `signal S`) or its connection drops, the agent ends its ranks.
use crate::args::{App, HostOptions, Mode, Options};
use crate::rank_command::{rank_command, Program, World};
use crate::supervise::{self, Job};
use crate::{abi::Abi, link, pmi_server, program::prepare_apps, threads};
use oxmpi::runtime::segment::{Segment, RANK_NOT_STARTED};
use std::ffi::OsString;
use std::io::BufReader;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The hidden first argument that selects the agent.
pub const FLAG: &str = "--node-agent";

/// Segment slots (as a one-machine job's; spawning is not offered on several hosts).
const SLOTS: usize = crate::SPAWN_SLOTS;

/// The job as the head described it.
struct Job0 {
    o: Options,
    host: String,
    first: usize,
    count: usize,
    node_map: String,
    node_of: Vec<usize>,
}

fn die(msg: &str) -> ! {
    eprintln!("oxmpi: {msg}");
    std::process::exit(1);
}

/// Reads the description up to `go`, applying its environment and working directory here.
fn read_spec(r: &mut BufReader<TcpStream>) -> Result<Job0, String> {
    let mut o = Options {
        nranks: 1,
        mode: Mode::Processes,
        timeout: None,
        survive: false,
        program: OsString::new(),
        args: Vec::new(),
        monitor: None,
        universe: None,
        join: None,
        nodes: 1,
        abi: None,
        nranks_given: true,
        hosts: HostOptions::default(),
        env: Vec::new(),
        wdir: None,
        tag_output: false,
        apps: Vec::new(),
        bind: crate::bind::Bind::None,
        report_bindings: false,
    };
    let (mut host, mut first, mut count, mut node_map) = (String::new(), 0, 0, String::new());
    let num = |v: &str| v.parse::<usize>().map_err(|_| format!("the head sent a bad number '{v}'"));
    loop {
        let w = match link::recv(r) {
            Ok(Some(w)) => w,
            Ok(None) => return Err("the head closed the connection before the job started".into()),
            Err(e) => return Err(format!("cannot read the job from the head: {e}")),
        };
        match (w[0].as_str(), w.get(1).map(String::as_str), w.get(2).map(String::as_str)) {
            ("go", None, None) => break,
            ("set", Some(k), Some(v)) => match k {
                "nranks" => o.nranks = num(v)?,
                "mode" => o.mode = if v == "threads" { Mode::Threads } else { Mode::Processes },
                "app" => o.apps.push(App { nranks: num(v)?, program: OsString::new(), args: Vec::new(), env: Vec::new(), wdir: None }),
                "program" => current(&mut o.apps)?.program = v.into(),
                "arg" => current(&mut o.apps)?.args.push(v.into()),
                "appenv" => {
                    if let Some((k, val)) = v.split_once('=') {
                        current(&mut o.apps)?.env.push((k.to_string(), Some(val.to_string())));
                    }
                }
                "appwdir" => current(&mut o.apps)?.wdir = Some(v.into()),
                "abi" => o.abi = Some(Abi::parse("abi", v)?),
                "universe" => o.universe = Some(num(v)?),
                "nodemap" => node_map = v.to_string(),
                "host" => host = v.to_string(),
                "first" => first = num(v)?,
                "count" => count = num(v)?,
                "wdir" => o.wdir = Some(v.into()),
                "tag" => o.tag_output = v == "1",
                "bind" => o.bind = crate::bind::Bind::parse("bind", v)?,
                "report-bindings" => o.report_bindings = v == "1",
                "env" => {
                    if let Some((k, val)) = v.split_once('=') {
                        // Single-threaded still: nothing reads the environment concurrently.
                        std::env::set_var(k, val);
                    }
                }
                _ => {} // from a newer head: ignored
            },
            _ => return Err(format!("the head sent '{}', which this mpiexec does not understand", w.join(" "))),
        }
    }
    if o.apps.is_empty() || o.apps.iter().map(|a| a.nranks).sum::<usize>() != o.nranks || o.apps.iter().any(|a| a.program.is_empty()) {
        return Err("the head sent programs that do not add up to the job's ranks".into());
    }
    o.program = o.apps[0].program.clone();
    o.args = o.apps[0].args.clone();
    let node_of = oxmpi::runtime::node_map::parse(&node_map, o.nranks)?;
    if count == 0 || first + count > o.nranks {
        return Err("the head sent a bad rank range".into());
    }
    if let Some(d) = &o.wdir {
        if let Err(e) = std::env::set_current_dir(d) {
            return Err(format!("cannot change to the working directory {}: {e}", std::path::Path::new(d).display()));
        }
    }
    Ok(Job0 { o, host, first, count, node_map, node_of })
}

/// The segment the head is describing.
fn current(apps: &mut [App]) -> Result<&mut App, String> {
    apps.last_mut().ok_or_else(|| "the head described a program before its segment (an older mpiexec?)".to_string())
}

/// Runs the agent; `argv` is this process's whole argv (`[argv0, FLAG, ADDR:PORT, NODE, TOKEN]`).
pub fn main(argv: &[OsString]) -> ! {
    let arg = |i: usize| argv.get(i).and_then(|a| a.to_str()).unwrap_or_else(|| die(&format!("internal: usage: {FLAG} ADDR:PORT NODE TOKEN (started by mpiexec -hosts, not by hand)")));
    let (addr, node, token) = (arg(2), arg(3), arg(4));
    // A launcher may start us with SIGINT and SIGQUIT ignored (a shell's background job); the
    // ranks inherit dispositions, and must die of a forwarded ^C.
    for sig in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: restoring a default disposition; no other thread exists yet.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    // Before any thread, so that the signals wait for the supervisor.
    supervise::block_signals();
    let conn = match link::connect(addr, link::connect_timeout()) {
        Ok(c) => c,
        Err(e) => die(&format!(
            "the node agent on {} cannot reach mpiexec at {addr}: {e}; choose an address this host can reach with --iface or {}",
            crate::hosts::own_name(),
            crate::head_addr::ENV
        )),
    };
    let _ = conn.set_nodelay(true);
    if let Err(e) = link::send(&conn, &["hello", token, node]) {
        die(&format!("the node agent cannot talk to mpiexec at {addr}: {e}"));
    }
    let mut reader = BufReader::new(conn.try_clone().unwrap_or_else(|e| die(&format!("internal: {e}"))));
    let job = match read_spec(&mut reader) {
        Ok(j) => j,
        Err(m) => fail(&conn, 1, &m),
    };
    // The head's orders and the fences' answers come on the connection.
    let stop = Arc::new(AtomicI32::new(0));
    let (fence_tx, fence_rx) = mpsc::channel::<Vec<(String, String)>>();
    {
        let stop = stop.clone();
        let spawned = std::thread::Builder::new().name("head-link".into()).spawn(move || listen(reader, &stop, fence_tx));
        if let Err(e) = spawned {
            fail(&conn, 1, &format!("cannot start a thread: {e}"));
        }
    }
    let writer = Mutex::new(conn.try_clone().unwrap_or_else(|e| die(&format!("internal: {e}"))));
    let fence_rx = Mutex::new(fence_rx);
    let upstream: pmi_server::Upstream = Box::new(move |mine| {
        let w = writer.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for (k, v) in &mine {
            out.push_str(&link::line(&["put", k, v]));
        }
        out.push_str(&link::line(&["fence"]));
        std::io::Write::write_all(&mut &*w, out.as_bytes())?;
        drop(w);
        fence_rx.lock().unwrap_or_else(|p| p.into_inner()).recv().map_err(|_| std::io::Error::from(std::io::ErrorKind::ConnectionAborted))
    });
    let abort_conn = conn.try_clone().unwrap_or_else(|e| die(&format!("internal: {e}")));
    let aborted = Arc::new(Mutex::new(Vec::<usize>::new()));
    let first = job.first;
    let on_abort: pmi_server::OnAbort = {
        let aborted = aborted.clone();
        Box::new(move |index, code| {
            aborted.lock().unwrap_or_else(|p| p.into_inner()).push(first + index);
            let _ = link::send(&abort_conn, &["abort", &supervise::abort_exit_code(code).to_string(), &now_us()]);
        })
    };
    let app_of = job.o.app_of();
    let server = match pmi_server::start_node(&job.node_of, app_of[job.first..job.first + job.count].to_vec(), upstream, on_abort) {
        Ok(s) => s,
        Err(e) => fail(&conn, 1, &format!("cannot start the PMI server of node {node}: {e}")),
    };
    let code = match job.o.mode {
        Mode::Processes => run_processes(&job, &conn, server.rank_fds, &stop, &aborted),
        Mode::Threads => run_threads(&job, &conn, server.rank_fds, &stop),
    };
    // Told to end: the head knows why, and may be gone.
    if stop.load(Ordering::SeqCst) == 0 {
        let _ = link::send(&conn, &["done", &code.to_string()]);
    }
    std::process::exit(code);
}

/// This moment, in microseconds since the epoch: the head takes the earliest failure as the
/// cause of the others (ranks of other nodes fail when they lose a peer).
fn now_us() -> String {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros()).unwrap_or(0).to_string()
}

/// Tells the head of the failure that ends this node's ranks (the head prints `msg`, if this
/// failure came first).
fn report(conn: &TcpStream, code: i32, msg: Option<&str>) {
    if link::send(conn, &["failing", &code.to_string(), &now_us(), msg.unwrap_or("")]).is_err() {
        if let Some(m) = msg {
            eprintln!("{m}");
        }
    }
}

/// Tells the head why the node cannot run, and exits.
fn fail(conn: &TcpStream, code: i32, msg: &str) -> ! {
    if link::send(conn, &["fail", &code.to_string(), msg]).is_err() {
        eprintln!("oxmpi: {msg}");
    }
    std::process::exit(code);
}

/// Passes the head's messages on until the connection ends, then ends the node's ranks.
fn listen(mut reader: BufReader<TcpStream>, stop: &AtomicI32, fences: mpsc::Sender<Vec<(String, String)>>) {
    let mut puts = Vec::new();
    let order = |sig: i32| {
        // The first order wins (`signal` is followed by `end`).
        let _ = stop.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        // SAFETY: waking our own supervisor (SIGUSR1 is blocked and waited for there).
        unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
    };
    loop {
        match link::recv(&mut reader) {
            Ok(Some(w)) => match (w[0].as_str(), w.len()) {
                ("put", 3) => puts.push((w[1].clone(), w[2].clone())),
                ("fenced", 1) => {
                    let _ = fences.send(std::mem::take(&mut puts));
                }
                ("signal", 2) => order(w[1].parse().unwrap_or(libc::SIGTERM)),
                _ => {
                    order(libc::SIGKILL);
                    return;
                }
            },
            _ => {
                order(libc::SIGKILL);
                return;
            }
        }
    }
}

/// `aborted`: the ranks that told the PMI server of their MPI_Abort or fatal error (they
/// printed their own line, and the head knows already).
fn run_processes(j: &Job0, conn: &TcpStream, fds: Vec<OwnedFd>, stop: &Arc<AtomicI32>, aborted: &Mutex<Vec<usize>>) -> i32 {
    let ps = match prepare_apps(&j.o) {
        Ok(p) => p,
        Err((code, msg)) => fail(conn, code, &msg),
    };
    let app_of = j.o.app_of();
    // SAFETY: getpid has no preconditions.
    let agent_pid = unsafe { libc::getpid() };
    let n = j.o.nranks;
    // Shaped as every node's, indexed by world rank (the other nodes' slots stay unused).
    let seg = match Segment::create(SLOTS.max(n), n, agent_pid, oxmpi::transport::shm::geometry(n)) {
        Ok(s) => s,
        Err(e) => fail(conn, 1, &format!("cannot create the shared memory segment of the node for {n} ranks: {e}")),
    };
    seg.set_universe_size(j.o.universe.unwrap_or(n));
    let programs: Vec<_> = ps.iter().zip(&j.o.apps).map(|(p, a)| Program { path: &p.path, arg0: &a.program, args: &a.args, libenv: &p.libenv, preload: p.preload.as_deref() }).collect();
    let world = World { size: n, shm_fd: seg.fd(), slots: None, spawned_by: None, input: true };
    let mut job = Job::new(&seg);
    job.set_stop(stop.clone());
    let seg_ref = &seg;
    job.set_on_fail(move |r, code, msg| {
        // A rank that said it aborts printed why, and so does one that ended with an error
        // inside MPI_Init (such as a peer of another node that is gone): reported as such, to
        // be named only if no rank died on its own (see `remote::Head::end_failed`).
        let said = aborted.lock().unwrap_or_else(|p| p.into_inner()).contains(&r);
        let in_init = seg_ref.rank(r).state.load(Ordering::SeqCst) == RANK_NOT_STARTED && !msg.is_some_and(|m| m.contains("killed by signal"));
        report(conn, code, if said || in_init { None } else { msg })
    });
    let binds = match crate::bind::plan(j.o.bind, j.count, &j.host) {
        Ok(b) => b,
        Err(m) => fail(conn, 2, &m),
    };
    let mut fds = fds.into_iter();
    let mut taggers = Vec::new();
    for r in 0..n {
        if !(j.first..j.first + j.count).contains(&r) {
            job.add_named(0, String::new());
            continue;
        }
        let mut cmd = rank_command(&programs[app_of[r]], &world, r, r, agent_pid);
        if j.o.mpmd() {
            crate::rank_command::segment(&mut cmd, &j.o.apps[app_of[r]], app_of[r]);
        }
        cmd.env("MPI_LOCALRANKID", (r - j.first).to_string()).env("MPI_LOCALNRANKS", j.count.to_string()).env(oxmpi::runtime::node_map::ENV, &j.node_map);
        let pmi = fds.next();
        if let Some(fd) = &pmi {
            let raw = fd.as_raw_fd();
            cmd.env("PMI_FD", raw.to_string());
            // SAFETY: the hook only calls fcntl, which is async-signal-safe.
            unsafe { std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || pmi_server::keep_for_child(raw)) };
        }
        if let Some(c) = &binds[r - j.first] {
            crate::bind::apply(&mut cmd, c);
        }
        if j.o.report_bindings {
            crate::bind::report(r, &j.host, binds[r - j.first].as_deref());
        }
        if j.o.tag_output {
            crate::tag_output::pipe(&mut cmd);
        }
        let spawned = cmd.spawn();
        drop(pmi);
        match spawned {
            Ok(mut child) => {
                taggers.extend(crate::tag_output::start(&mut child, r));
                job.add_named(child.id() as i32, format!("rank {r} on {}", j.host))
            }
            Err(e) => {
                job.kill_all();
                fail(conn, 127, &format!("cannot start rank {r} of '{}': {e}", ps[app_of[r]].shown));
            }
        }
    }
    let code = job.supervise(None);
    crate::tag_output::finish(taggers);
    code
}

fn run_threads(j: &Job0, conn: &TcpStream, fds: Vec<OwnedFd>, stop: &Arc<AtomicI32>) -> i32 {
    let ps = match threads::prepare(&j.o) {
        Ok(p) => p,
        Err((code, msg)) => fail(conn, code, &msg),
    };
    let p = &ps[0];
    // SAFETY: getpid has no preconditions.
    let agent_pid = unsafe { libc::getpid() };
    let raws: Vec<i32> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let binds = match crate::bind::plan(j.o.bind, j.count, &j.host) {
        Ok(b) => b,
        Err(m) => fail(conn, 2, &m),
    };
    if j.o.report_bindings {
        for (i, c) in binds.iter().enumerate() {
            crate::bind::report(j.first + i, &j.host, c.as_deref());
        }
    }
    let mut cmd = threads::node_host_command(&j.o, &ps, &j.node_map, j.first, raws, crate::bind::threads_value(&binds));
    supervise::tie_to_launcher(&mut cmd, agent_pid);
    let spawned = cmd.spawn();
    // The host has its copies of the ranks' PMI descriptors now.
    drop(fds);
    let pid = match spawned {
        Ok(c) => c.id() as i32,
        Err(e) => fail(conn, 1, &format!("cannot start the threads-mode host for '{}': {e}", p.shown)),
    };
    let mut job = Job::threads_hosts(vec![pid]);
    let ranks = if j.count == 1 { format!("rank {}", j.first) } else { format!("ranks {}-{}", j.first, j.first + j.count - 1) };
    job.set_labels(vec![format!("{ranks} on {}", j.host)]);
    job.set_stop(stop.clone());
    job.set_on_fail(|_, code, msg| report(conn, code, msg));
    job.supervise(None)
}
