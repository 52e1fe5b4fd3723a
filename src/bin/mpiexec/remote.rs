//! A job on several hosts, head side: `mpiexec -hosts a,b` (or `--host`, `-f FILE`, `-ppn`).
//!
//! Each host is a node. For every node the head starts a node agent (`agent`): this executable
//! with hidden arguments, `LAUNCHER HOST /path/of/mpiexec --node-agent ADDR:PORT NODE TOKEN`
//! (`--launcher`, default `ssh`), or directly when the host is this machine. The agent connects
//! back over TCP (`link`), receives the job's description, starts and supervises its node's
//! ranks, and reports. The head serves the job-wide part of the ranks' PMI fences (their UCX
//! addresses), forwards SIGINT/SIGTERM/SIGHUP, and ends every node when one fails (that
//! node's agent says which rank and host), when an agent is lost, or on `--timeout`.
//!
//! Every launcher process is tied to the head (killed if it dies) and every agent ends its ranks
//! when the head's connection drops, so nothing is left running anywhere.
use crate::args::{Mode, Options};
use crate::hosts::{self, Node};
use crate::{agent, head_addr, link, supervise};
use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the head looks at signals, launcher exits and the time limit.
const POLL: Duration = Duration::from_millis(20);
/// How long agents get to end their ranks when the job ends, before their launchers are killed.
const END_GRACE: Duration = Duration::from_secs(3);

/// What the connection threads tell the head's loop.
enum Event {
    Hello(usize, TcpStream),
    Msg(usize, Vec<String>),
    Gone(usize),
}

/// A node and its agent.
struct Agent {
    node: Node,
    /// The launcher's (or the local agent's) pid; 0 once reaped.
    pid: i32,
    conn: Option<TcpStream>,
    fenced: bool,
    done: Option<i32>,
}

/// Environment variables that describe the head's own session, not the job: not forwarded.
fn forwarded(k: &str) -> bool {
    !matches!(k, "HOSTNAME" | "HOST" | "PWD" | "OLDPWD" | "SHLVL" | "_" | "DISPLAY" | "XAUTHORITY" | "TERMCAP")
        && !k.starts_with("SSH_")
        && !k.starts_with("PMI_")
        && !k.starts_with("OXMPI_NODE_")
}

/// A secret the agents prove they were started by this head with.
fn token() -> String {
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b)).is_ok();
    if !ok {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        b[..16].copy_from_slice(&(t ^ u128::from(std::process::id()) << 64).to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn run(o: &Options) -> i32 {
    let list = match hosts::from_options(&o.hosts) {
        Ok(l) => l,
        Err(m) => {
            eprintln!("oxmpi: {m}");
            return 2;
        }
    };
    let n = if o.nranks_given { o.nranks } else { hosts::default_ranks(&list, o.hosts.ppn) };
    let nodes = hosts::place(n, &list, o.hosts.ppn);
    let own = hosts::own_name();
    let all_local = nodes.iter().all(|nd| hosts::is_local(&nd.host, &own));
    let want = match head_addr::choose(o.hosts.iface.as_deref(), std::env::var(head_addr::ENV).ok().as_deref(), all_local, &own) {
        Ok(a) => a,
        Err(m) => {
            eprintln!("oxmpi: {m}");
            return 2;
        }
    };
    let listener = match TcpListener::bind(want) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("oxmpi: cannot listen on {want} for the node agents: {e}; choose an address of this machine with --iface or {}", head_addr::ENV);
            return 1;
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("oxmpi: cannot listen for the node agents: {e}");
            return 1;
        }
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("oxmpi: cannot find this mpiexec's own path to start it on the hosts: {e}");
            return 1;
        }
    };
    let token = token();
    // Before any thread: every thread inherits the mask, so the signals wait for the loop.
    supervise::block_signals();
    let (tx, rx) = mpsc::channel();
    {
        let (k, token) = (nodes.len(), token.clone());
        let spawned = std::thread::Builder::new().name("agents".into()).spawn(move || accept(listener, k, &token, tx));
        if let Err(e) = spawned {
            eprintln!("oxmpi: cannot start a thread: {e}");
            return 1;
        }
    }
    // SAFETY: getpid has no preconditions.
    let head_pid = unsafe { libc::getpid() };
    let launcher: Vec<String> = o.hosts.launcher.as_deref().unwrap_or("ssh").split_whitespace().map(String::from).collect();
    let mut head = Head { agents: Vec::new(), launcher: launcher.join(" "), fresh: Vec::new(), rx, failures: Vec::new() };
    for (i, nd) in nodes.iter().enumerate() {
        let local = hosts::is_local(&nd.host, &own);
        let mut cmd = if local {
            Command::new(&exe)
        } else {
            let mut c = Command::new(&launcher[0]);
            c.args(&launcher[1..]).arg(&nd.host).arg(&exe);
            c
        };
        cmd.arg(agent::FLAG).arg(addr.to_string()).arg(i.to_string()).arg(&token);
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(0) } == 1;
        // Rank 0 reads the job's input, as on one machine; through a launcher, not from a
        // terminal (see below).
        cmd.stdin(if nd.first == 0 && (local || !tty) { Stdio::inherit() } else { Stdio::null() });
        if !local {
            // Its own process group: a ^C at the terminal reaches the head, which passes it to
            // every rank, and not the launcher, whose end would hang up the agent first. (A
            // local agent stays in the terminal's group, as the ranks of a one-machine job.)
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        }
        supervise::tie_to_launcher(&mut cmd, head_pid);
        match cmd.spawn() {
            Ok(c) => head.agents.push(Agent { node: nd.clone(), pid: c.id() as i32, conn: None, fenced: false, done: None }),
            Err(e) => {
                let what = if local { format!("the node agent ({})", exe.display()) } else { format!("the launcher '{}'", head.launcher) };
                eprintln!("oxmpi: cannot run {what} for host {}: {e}", nd.host);
                return head.end(1);
            }
        }
    }
    let spec = Spec { o, n, node_of: nodes.iter().enumerate().flat_map(|(i, nd)| std::iter::repeat_n(i, nd.count)).collect() };
    head.serve(&spec, addr)
}

/// Accepts the agents' connections; a thread per agent passes its messages on.
fn accept(listener: TcpListener, k: usize, token: &str, tx: mpsc::Sender<Event>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let (tx, token) = (tx.clone(), token.to_string());
        let _ = std::thread::Builder::new().name("agent-link".into()).spawn(move || {
            // Fences are small request/answer exchanges: no Nagle delay.
            let _ = conn.set_nodelay(true);
            let _ = conn.set_read_timeout(Some(link::connect_timeout()));
            let Ok(read) = conn.try_clone() else { return };
            let mut reader = BufReader::new(read);
            // Anything but a hello with our token is a stranger: dropped.
            let node = match link::recv(&mut reader) {
                Ok(Some(w)) if w.len() == 3 && w[0] == "hello" && w[1] == token => match w[2].parse::<usize>() {
                    Ok(i) if i < k => i,
                    _ => return,
                },
                _ => return,
            };
            let _ = conn.set_read_timeout(None);
            if tx.send(Event::Hello(node, conn)).is_err() {
                return;
            }
            loop {
                match link::recv(&mut reader) {
                    Ok(Some(w)) => {
                        if tx.send(Event::Msg(node, w)).is_err() {
                            return;
                        }
                    }
                    _ => {
                        let _ = tx.send(Event::Gone(node));
                        return;
                    }
                }
            }
        });
    }
}

/// What every agent is told about the job.
struct Spec<'a> {
    o: &'a Options,
    n: usize,
    node_of: Vec<usize>,
}

struct Head {
    agents: Vec<Agent>,
    launcher: String,
    /// Puts of the current fence.
    fresh: Vec<(String, String)>,
    rx: mpsc::Receiver<Event>,
    /// The failures the agents reported: (when, exit status, message to print).
    failures: Vec<(u128, i32, String)>,
}

impl Head {
    fn send_spec(&self, i: usize, s: &Spec<'_>) -> std::io::Result<()> {
        let a = &self.agents[i];
        let Some(c) = &a.conn else { return Ok(()) };
        let mut lines = String::new();
        let mut set = |k: &str, v: &str| lines.push_str(&link::line(&["set", k, v]));
        set("nranks", &s.n.to_string());
        set("mode", if s.o.mode == Mode::Threads { "threads" } else { "processes" });
        // Each segment of the command line (one but for MPMD): its ranks, program, arguments,
        // own variables and directory.
        for app in &s.o.apps {
            set("app", &if s.o.mpmd() { app.nranks } else { s.n }.to_string());
            set("program", &app.program.to_string_lossy());
            for arg in &app.args {
                set("arg", &arg.to_string_lossy());
            }
            for (k, v) in &app.env {
                if let Some(v) = v {
                    set("appenv", &format!("{k}={v}"));
                }
            }
            if let Some(d) = &app.wdir {
                set("appwdir", &d.to_string_lossy());
            }
        }
        if let Some(abi) = s.o.abi {
            set("abi", abi.name());
        }
        set("universe", &s.o.universe.unwrap_or(s.n).max(s.n).to_string());
        set("tag", if s.o.tag_output { "1" } else { "0" });
        set("bind", s.o.bind.name());
        set("report-bindings", if s.o.report_bindings { "1" } else { "0" });
        set("nodemap", &oxmpi::runtime::node_map::format(&s.node_of));
        set("host", &a.node.host);
        set("first", &a.node.first.to_string());
        set("count", &a.node.count.to_string());
        if let Ok(d) = std::env::current_dir() {
            set("wdir", &d.to_string_lossy());
        }
        for (k, v) in std::env::vars_os() {
            if let (Some(k), Some(v)) = (k.to_str(), v.to_str()) {
                if forwarded(k) {
                    set("env", &format!("{k}={v}"));
                }
            }
        }
        lines.push_str(&link::line(&["go"]));
        std::io::Write::write_all(&mut &*c, lines.as_bytes())
    }

    fn broadcast(&self, words: &[&str]) {
        self.broadcast_except(words, None);
    }

    fn broadcast_except(&self, words: &[&str], except: Option<usize>) {
        for (i, a) in self.agents.iter().enumerate() {
            if Some(i) == except {
                continue;
            }
            if let (Some(c), None) = (&a.conn, a.done) {
                let _ = link::send(c, words);
            }
        }
    }

    /// Runs the job to its end; returns mpiexec's exit status.
    fn serve(&mut self, spec: &Spec<'_>, addr: SocketAddr) -> i32 {
        let hello_by = Instant::now() + link::connect_timeout();
        let deadline = spec.o.timeout.as_ref().map(|t| (Instant::now() + t.limit, t.shown.clone()));
        loop {
            match self.rx.recv_timeout(POLL) {
                Ok(Event::Hello(i, conn)) => {
                    if self.agents[i].conn.is_some() {
                        continue; // a second hello for the node: not one of ours
                    }
                    self.agents[i].conn = Some(conn);
                    if let Err(e) = self.send_spec(i, spec) {
                        eprintln!("oxmpi: lost the node agent on host {} while starting it: {e}; ending the job", self.agents[i].node.host);
                        return self.end(1);
                    }
                }
                Ok(Event::Msg(i, w)) => {
                    if let Some(code) = self.message(i, &w) {
                        return code;
                    }
                }
                Ok(Event::Gone(i)) => {
                    if self.agents[i].done.is_none() {
                        eprintln!("oxmpi: lost the connection to the node agent on host {}; ending the job", self.agents[i].node.host);
                        return self.end(1);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.end(1),
            }
            if let Some(s) = supervise::take_pending_stop_signal() {
                if s != libc::SIGINT {
                    eprintln!("oxmpi: received signal {s} ({}); ending the job", supervise::signal_name(s));
                }
                self.broadcast(&["signal", &s.to_string()]);
                return self.end(128 + s);
            }
            if let Some(code) = self.reap_launchers(addr) {
                return code;
            }
            if Instant::now() >= hello_by {
                if let Some(a) = self.agents.iter().find(|a| a.conn.is_none()) {
                    eprintln!(
                        "oxmpi: the node agent on host {} did not connect back to {addr} within {} s; check that the host can reach this address (choose it with --iface or {}, the wait with OXMPI_CONNECT_TIMEOUT)",
                        a.node.host,
                        link::connect_timeout().as_secs_f64(),
                        head_addr::ENV
                    );
                    return self.end(1);
                }
            }
            if let Some((end, shown)) = &deadline {
                if Instant::now() >= *end {
                    eprintln!("oxmpi: job timed out after {shown} s; ending the job");
                    return self.end(124);
                }
            }
        }
    }

    /// Handles agent `i`'s message; Some: the job is over with that status.
    fn message(&mut self, i: usize, w: &[String]) -> Option<i32> {
        match (w[0].as_str(), w.len()) {
            ("put", 3) => {
                self.fresh.push((w[1].clone(), w[2].clone()));
            }
            ("fence", 1) => {
                self.agents[i].fenced = true;
                if self.agents.iter().all(|a| a.fenced) {
                    let fresh = std::mem::take(&mut self.fresh);
                    for a in &mut self.agents {
                        a.fenced = false;
                        if let Some(c) = &a.conn {
                            let mut out = String::new();
                            for (k, v) in &fresh {
                                out.push_str(&link::line(&["put", k, v]));
                            }
                            out.push_str(&link::line(&["fenced"]));
                            let _ = std::io::Write::write_all(&mut &*c, out.as_bytes());
                        }
                    }
                }
            }
            ("fail", 3) => {
                eprintln!("oxmpi: host {}: {}", self.agents[i].node.host, w[2]);
                let code = w[1].parse().unwrap_or(1);
                self.agents[i].done = Some(code);
                return Some(self.end(code));
            }
            // A node's ranks failed (a rank called MPI_Abort, died, ...): every node is ended,
            // then the earliest failure reported is the job's.
            ("failing", 4) | ("abort", 3) => {
                self.failure(&w);
                return Some(self.end_failed());
            }
            ("done", 2) => {
                let code = w[1].parse().unwrap_or(1);
                self.agents[i].done = Some(code);
                if code != 0 {
                    self.failures.push((u128::MAX, code, String::new()));
                    return Some(self.end_failed());
                }
                if self.agents.iter().all(|a| a.done.is_some()) {
                    return Some(self.end(0));
                }
            }
            _ => {
                eprintln!("oxmpi: the node agent on host {} sent '{}', which this mpiexec does not understand (a different oxmpi version there?); ending the job", self.agents[i].node.host, w.join(" "));
                return Some(self.end(1));
            }
        }
        None
    }

    /// Reaps launchers that exited; Some: one ended before its agent connected (the job is over).
    fn reap_launchers(&mut self, addr: SocketAddr) -> Option<i32> {
        loop {
            let mut status = 0;
            // SAFETY: reaping our own children.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return None;
            }
            let Some(i) = self.agents.iter().position(|a| a.pid == pid) else { continue };
            self.agents[i].pid = 0;
            // Once connected, the connection tells the agent's end (`Gone` after `done`).
            if self.agents[i].conn.is_none() {
                let how = if libc::WIFEXITED(status) { format!("exit status {}", libc::WEXITSTATUS(status)) } else { format!("signal {}", libc::WTERMSIG(status)) };
                let a = &self.agents[i];
                eprintln!(
                    "oxmpi: could not start the node agent on host {} ('{} {}' ended with {how} before the agent connected back to {addr}); ending the job",
                    a.node.host, self.launcher, a.node.host
                );
                return Some(self.end(1));
            }
        }
    }

    /// Records a `failing CODE WHEN MESSAGE` or `abort CODE WHEN` report.
    fn failure(&mut self, w: &[String]) {
        let code = w[1].parse().unwrap_or(1);
        let when = w[2].parse().unwrap_or(u128::MAX);
        self.failures.push((when, code, w.get(3).cloned().unwrap_or_default()));
    }

    /// Ends the job after a failure, named by the earliest report with a message (a rank the
    /// agent saw die: killed, exited with a code or before MPI_Finalize), else the earliest one
    /// (an MPI_Abort or fatal error, the rank having said why). The others may be consequences
    /// on other nodes (ranks that lost a peer abort with a fatal error), reported sooner.
    fn end_failed(&mut self) -> i32 {
        self.end_all();
        let said = self.failures.iter().filter(|f| !f.2.is_empty()).min_by_key(|f| f.0);
        let first = said.or_else(|| self.failures.iter().min_by_key(|f| f.0)).cloned().unwrap_or((0, 1, String::new()));
        if !first.2.is_empty() {
            eprintln!("{}", first.2);
        }
        first.1
    }

    /// Ends the job with status `code` (the head's own reason, said already).
    fn end(&mut self, code: i32) -> i32 {
        self.end_all();
        code
    }

    /// The agents end their ranks (their failure reports are collected meanwhile), then every
    /// launcher still running is killed and reaped.
    fn end_all(&mut self) {
        self.broadcast(&["end"]);
        let until = Instant::now() + END_GRACE;
        while self.agents.iter().any(|a| a.pid > 0) && Instant::now() < until {
            while let Ok(ev) = self.rx.try_recv() {
                if let Event::Msg(i, w) = ev {
                    match (w[0].as_str(), w.len()) {
                        ("failing", 4) | ("abort", 3) => self.failure(&w),
                        ("done", 2) => self.agents[i].done = w[1].parse().ok(),
                        _ => {}
                    }
                }
            }
            let mut status = 0;
            // SAFETY: reaping our own children.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid > 0 {
                if let Some(a) = self.agents.iter_mut().find(|a| a.pid == pid) {
                    a.pid = 0;
                }
            } else {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        for a in &mut self.agents {
            if a.pid > 0 {
                // SAFETY: our unreaped child, so the pid cannot have been recycled.
                unsafe { libc::kill(a.pid, libc::SIGKILL) };
                let mut status = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(a.pid, &mut status, 0) };
                a.pid = 0;
            }
        }
    }
}
