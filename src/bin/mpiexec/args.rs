//! Command-line parsing for `mpiexec` / `mpirun`.
//!
//! Hand-written (std only) because the grammar is tiny and has one MPI-specific rule that generic
//! parsers get wrong: options stop at the first non-option, which is the program, so that
//! `mpiexec -n 2 ./prog -n 5` hands `-n 5` to the program untouched.
//!
//! Parsing is pure (environment values are passed in) so it can be unit-tested.
use crate::abi::Abi;
use crate::bind::Bind;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::time::Duration;

/// How ranks are run: one process per rank, or all ranks as threads of one host process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Processes,
    Threads,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        match s {
            "processes" | "process" | "proc" => Some(Mode::Processes),
            "threads" | "thread" => Some(Mode::Threads),
            _ => None,
        }
    }
}

/// A job time limit, remembered with the text the user gave so messages echo it back.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeout {
    pub limit: Duration,
    pub shown: String,
}

/// Everything needed to run a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub nranks: usize,
    pub mode: Mode,
    pub timeout: Option<Timeout>,
    /// Keep the survivors running when a rank dies (`--survive`, `OXMPI_SURVIVE=1`); without it
    /// the job still survives once a rank sets a non-fatal error handler (see `crate::ulfm`).
    pub survive: bool,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// `--monitor FILE`: record communication and write it to FILE as JSON at the end.
    pub monitor: Option<OsString>,
    /// `-usize N` / `--universe-size N` / `OXMPI_UNIVERSE_SIZE`: MPI_UNIVERSE_SIZE, the ranks
    /// the job may have with the ones it spawns (None: the default, see `universe_size`).
    pub universe: Option<usize>,
    /// `--join JOB` / `OXMPI_JOIN`: start the ranks inside the running job JOB (its mpiexec's
    /// pid, or `auto`: the only one running) instead of a job of their own (see `join`).
    pub join: Option<String>,
    /// `--nodes K`: the ranks emulate K nodes of this machine (blocks of consecutive ranks), each
    /// with its own shared memory, the nodes joined through UCX (see `oxmpi::runtime::node_map`).
    pub nodes: usize,
    /// `--abi mpich|ompi|mpi5` / `OXMPI_ABI`: the MPI ABI the program needs, when its NEEDED
    /// closure cannot tell (see `abi`).
    pub abi: Option<Abi>,
    /// Whether `-n` was given (with hosts, the default is then their slots, see `hosts`).
    pub nranks_given: bool,
    /// Where the job runs beyond this machine (`-hosts`, `--host`, `-f`, `-ppn`, `--launcher`,
    /// `--iface`; see `remote`).
    pub hosts: HostOptions,
    /// `-genv K V`, `-env K V`, `-x K[=V]`: variables for every rank (None: `-x K`, this
    /// environment's value).
    pub env: Vec<(String, Option<String>)>,
    /// `-wdir DIR`: the ranks' working directory.
    pub wdir: Option<OsString>,
    /// `-l`: prefix every line of the ranks' output with `[RANK] ` (processes mode).
    pub tag_output: bool,
    /// The segments of the command line (`-n 1 prog1 : -n 3 prog2`, MPMD), at least one; the
    /// first is `program` and `args`. Without ':' its `env` and `wdir` are empty (they are the
    /// job's, above).
    pub apps: Vec<App>,
    /// `--bind-to core|none` (see `bind`).
    pub bind: Bind,
    /// `--report-bindings`: each rank's CPUs on stderr as it starts.
    pub report_bindings: bool,
}

/// One segment of an MPMD command line: `nranks` ranks (consecutive, after the previous
/// segment's) of `program` with `args`, with its own `-env` variables and `-wdir` (as hydra:
/// `-genv` and `-x` are the whole job's wherever they appear).
#[derive(Clone, Debug, PartialEq)]
pub struct App {
    pub nranks: usize,
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(String, Option<String>)>,
    pub wdir: Option<OsString>,
}

/// The options of a launch on several hosts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostOptions {
    /// `-hosts h1,h2:2` / `--host ...` entries (comma-separated lists, as given).
    pub list: Vec<String>,
    /// `-f FILE` / `--hostfile FILE`.
    pub file: Option<OsString>,
    /// `-ppn N`: ranks per host.
    pub ppn: Option<usize>,
    /// `--launcher CMD`: how a host's node agent is started (default `ssh`).
    pub launcher: Option<String>,
    /// `--iface NAME`: the network interface whose address the node agents connect back to.
    pub iface: Option<String>,
}

impl HostOptions {
    /// Whether the job is placed on hosts (any host option given).
    pub fn any(&self) -> bool {
        !self.list.is_empty() || self.file.is_some() || self.ppn.is_some()
    }
}

impl Options {
    /// Whether the command line has several segments (MPMD).
    pub fn mpmd(&self) -> bool {
        self.apps.len() > 1
    }

    /// The segment of each rank, in rank order.
    pub fn app_of(&self) -> Vec<usize> {
        oxmpi::runtime::mpmd::app_of(&self.apps.iter().map(|a| a.nranks).collect::<Vec<_>>())
    }

    /// MPI_UNIVERSE_SIZE in processes mode: as asked, else the number of CPUs this process may
    /// use (Open MPI's default: one slot per core), and never less than the world.
    pub fn universe_size(&self, cpus: usize) -> usize {
        self.universe.unwrap_or(cpus).max(self.nranks)
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    Run(Options),
    Help,
    Version,
}

/// A usage mistake; printed as one line plus a hint, exit status 2.
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Values the parser takes from the environment (passed in, to keep parsing pure).
#[derive(Default, Clone, Debug)]
pub struct EnvDefaults {
    /// `OXMPI_MODE`
    pub mode: Option<String>,
    /// `MPIEXEC_TIMEOUT` (MPICH's name, so existing job scripts keep working)
    pub timeout: Option<String>,
    /// `OXMPI_SURVIVE` (1 = like --survive)
    pub survive: bool,
    /// `OXMPI_UNIVERSE_SIZE`
    pub universe: Option<String>,
    /// `OXMPI_JOIN`
    pub join: Option<String>,
    /// `OXMPI_ABI`
    pub abi: Option<String>,
}

impl EnvDefaults {
    pub fn from_env() -> EnvDefaults {
        EnvDefaults {
            mode: std::env::var("OXMPI_MODE").ok().filter(|s| !s.is_empty()),
            timeout: std::env::var("MPIEXEC_TIMEOUT").ok().filter(|s| !s.is_empty()),
            survive: std::env::var("OXMPI_SURVIVE").is_ok_and(|v| v == "1"),
            universe: std::env::var("OXMPI_UNIVERSE_SIZE").ok().filter(|s| !s.is_empty()),
            join: std::env::var("OXMPI_JOIN").ok().filter(|s| !s.is_empty()),
            abi: std::env::var("OXMPI_ABI").ok().filter(|s| !s.is_empty()),
        }
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

fn parse_nranks(opt: &str, v: &str) -> Result<usize, UsageError> {
    match v.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => err(format!("{opt} needs a positive number of processes, not '{v}'")),
    }
}

/// Seconds as a non-negative decimal; 0 means "no limit" (as with MPICH's MPIEXEC_TIMEOUT).
fn parse_timeout(what: &str, v: &str) -> Result<Option<Timeout>, UsageError> {
    match v.trim().parse::<f64>() {
        Ok(s) if (0.0..1e9).contains(&s) => {
            if s == 0.0 {
                Ok(None)
            } else {
                Ok(Some(Timeout { limit: Duration::from_secs_f64(s), shown: v.trim().to_string() }))
            }
        }
        _ => err(format!("{what} needs a number of seconds, not '{v}'")),
    }
}

fn parse_mode(what: &str, v: &str) -> Result<Mode, UsageError> {
    Mode::parse(v).ok_or_else(|| UsageError(format!("{what} must be 'processes' or 'threads', not '{v}'")))
}

/// Parses the arguments after argv[0].
pub fn parse(argv: &[OsString], env: &EnvDefaults) -> Result<Command, UsageError> {
    let mut nranks: Option<usize> = None;
    let mut mode: Option<Mode> = None;
    let mut timeout: Option<Option<Timeout>> = None;
    let mut monitor: Option<OsString> = None;
    let mut survive = env.survive;
    let mut universe: Option<usize> = None;
    let mut join = env.join.clone();
    let mut nodes: usize = 1;
    let mut abi: Option<Abi> = None;
    let mut hosts = HostOptions::default();
    let mut genv: Vec<(String, Option<String>)> = Vec::new();
    // Which of `genv` are the first segment's -env: with -wdir, the job's unless a ':' follows
    // (MPMD).
    let mut local_env: Vec<usize> = Vec::new();
    let mut wdir: Option<OsString> = None;
    let mut tag_output = false;
    let mut bind = Bind::None;
    let mut report_bindings = false;
    let mut i = 0;
    while i < argv.len() {
        let raw = &argv[i];
        let Some(a) = raw.to_str() else { break }; // a non-UTF-8 word is never one of our options
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break; // the program
        }
        // `--opt=value` form for the long options.
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let value = |i: &mut usize| -> Result<String, UsageError> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            *i += 1;
            match argv.get(*i).and_then(|v| v.to_str()) {
                Some(v) => Ok(v.to_string()),
                None => err(format!("option {name} needs a value")),
            }
        };
        match name {
            "-h" | "--help" | "-help" => return Ok(Command::Help),
            "--version" | "-version" => return Ok(Command::Version),
            "-n" | "-np" | "--np" | "--n" => {
                let v = value(&mut i)?;
                nranks = Some(parse_nranks(name, &v)?);
            }
            "-usize" | "--usize" | "--universe-size" => {
                let v = value(&mut i)?;
                universe = Some(parse_nranks(name, &v)?);
            }
            "--join" => {
                let v = value(&mut i)?;
                if v != "auto" && !v.parse::<i32>().is_ok_and(|p| p > 0) {
                    return err(format!("--join takes the pid of a running job's mpiexec, or 'auto', not '{v}'"));
                }
                join = Some(v);
            }
            "--nodes" => {
                let v = value(&mut i)?;
                nodes = parse_nranks(name, &v)?;
            }
            "--abi" => {
                let v = value(&mut i)?;
                abi = Some(Abi::parse("--abi", &v).map_err(UsageError)?);
            }
            "--mode" => {
                let v = value(&mut i)?;
                mode = Some(parse_mode("--mode", &v)?);
            }
            "--timeout" => {
                let v = value(&mut i)?;
                timeout = Some(parse_timeout("--timeout", &v)?);
            }
            "--monitor" => {
                let v = value(&mut i)?;
                if v.is_empty() {
                    return err("--monitor needs a file name");
                }
                monitor = Some(v.into());
            }
            "--survive" => {
                if inline.is_some() {
                    return err("--survive takes no value");
                }
                survive = true;
            }
            "-hosts" | "--hosts" | "-host" | "--host" | "-H" => {
                let v = value(&mut i)?;
                if v.trim().is_empty() {
                    return err(format!("{name} needs a host name"));
                }
                hosts.list.push(v);
            }
            "-f" | "-hostfile" | "--hostfile" | "-machinefile" | "--machinefile" => {
                let v = value(&mut i)?;
                if v.is_empty() {
                    return err(format!("{name} needs a file name"));
                }
                hosts.file = Some(v.into());
            }
            "-ppn" | "--ppn" | "-npernode" | "--npernode" => {
                let v = value(&mut i)?;
                hosts.ppn = Some(parse_nranks(name, &v)?);
            }
            "-launcher" | "--launcher" | "-bootstrap" | "-launcher-exec" | "-bootstrap-exec" => {
                let v = value(&mut i)?;
                if v.split_whitespace().next().is_none() {
                    return err(format!("{name} needs a command"));
                }
                hosts.launcher = Some(v);
            }
            "-iface" | "--iface" => {
                let v = value(&mut i)?;
                if v.is_empty() {
                    return err(format!("{name} needs a network interface name"));
                }
                hosts.iface = Some(v);
            }
            "-genv" | "--genv" | "-env" | "--env" => {
                if inline.is_some() {
                    return err(format!("{name} takes two words: {name} NAME VALUE"));
                }
                let k = value(&mut i)?;
                let v = value(&mut i).map_err(|_| UsageError(format!("{name} {k} needs a value: {name} NAME VALUE")))?;
                if !name.ends_with("genv") {
                    local_env.push(genv.len());
                }
                genv.push((env_name(name, &k)?, Some(v)));
            }
            "-x" => {
                let v = value(&mut i)?;
                match v.split_once('=') {
                    Some((k, val)) => genv.push((env_name(name, k)?, Some(val.to_string()))),
                    None => genv.push((env_name(name, &v)?, None)),
                }
            }
            "-l" | "-prepend-rank" | "--prepend-rank" | "--tag-output" | "-tag-output" => {
                if inline.is_some() {
                    return err(format!("{name} takes no value"));
                }
                tag_output = true;
            }
            "-bind-to" | "--bind-to" | "-binding" => {
                let v = value(&mut i)?;
                bind = Bind::parse(name, &v).map_err(UsageError)?;
            }
            "--report-bindings" | "-report-bindings" => {
                if inline.is_some() {
                    return err(format!("{name} takes no value"));
                }
                report_bindings = true;
            }
            // Every variable reaches the ranks already (hydra's default).
            "-genvall" | "--genvall" => {}
            "-wdir" | "--wdir" | "-wd" | "--wd" => {
                let v = value(&mut i)?;
                if v.is_empty() {
                    return err(format!("{name} needs a directory"));
                }
                wdir = Some(v.into());
            }
            // Open MPI users type it; with one node there is nothing to oversubscribe.
            "--oversubscribe" | "-oversubscribe" => {
                if inline.is_some() {
                    return err("--oversubscribe takes no value");
                }
            }
            _ => return err(format!("unknown option '{a}'")),
        }
        i += 1;
    }
    let Some(program) = argv.get(i).cloned() else {
        return err("no program given");
    };
    if program.is_empty() {
        return err("the program name is empty");
    }
    let (args, mut rest) = split_segment(&argv[i + 1..]);
    let mut apps = vec![App { nranks: nranks.unwrap_or(1), program: program.clone(), args: args.to_vec(), env: Vec::new(), wdir: None }];
    while let Some(seg) = rest {
        let (app, more) = parse_segment(seg, apps.len(), &mut genv)?;
        apps.push(app);
        rest = more;
    }
    let mpmd = apps.len() > 1;
    if mpmd {
        let all = std::mem::take(&mut genv);
        for (k, e) in all.into_iter().enumerate() {
            if local_env.contains(&k) { &mut apps[0].env } else { &mut genv }.push(e);
        }
        apps[0].wdir = wdir.take();
        nranks = Some(apps.iter().map(|a| a.nranks).sum());
    }
    let mode = match mode {
        Some(m) => m,
        None => match &env.mode {
            Some(v) => parse_mode("OXMPI_MODE", v)?,
            None => Mode::Processes,
        },
    };
    if join.is_some() && mode == Mode::Threads {
        return err("--join (or OXMPI_JOIN) starts ranks in processes mode only: drop --mode threads");
    }
    let nranks_given = nranks.is_some();
    let nranks = nranks.unwrap_or(1);
    if hosts.any() && nodes > 1 {
        return err("--nodes emulates nodes on this machine; with -hosts, --host or a host file each host is a node: drop --nodes");
    }
    if hosts.any() && join.is_some() {
        return err("--join (or OXMPI_JOIN) runs ranks on this machine only: drop the host options");
    }
    if hosts.any() && survive {
        return err("--survive (or OXMPI_SURVIVE=1) is not supported yet for a job on several hosts");
    }
    if (hosts.launcher.is_some() || hosts.iface.is_some()) && !hosts.any() {
        return err("--launcher and --iface go with -hosts, --host or a host file (-f)");
    }
    if tag_output && mode == Mode::Threads {
        return err("-l needs --mode processes: threads-mode ranks share one standard output");
    }
    if tag_output && join.is_some() {
        return err("-l and --join (or OXMPI_JOIN) do not go together yet");
    }
    if nodes > nranks {
        return err(format!("--nodes {nodes} is more nodes than ranks (-n {nranks}): each node needs at least one rank"));
    }
    if bind != Bind::None && join.is_some() {
        return err("--bind-to and --join (or OXMPI_JOIN) do not go together: the joined job's ranks are bound already, or not");
    }
    if nodes > 1 && join.is_some() {
        return err("--nodes and --join (or OXMPI_JOIN) do not go together: a joined job runs on one node");
    }
    if nodes > 1 && mode == Mode::Threads && survive {
        return err("--survive with --nodes runs in processes mode only for now (a node's threads-mode host cannot tell the other nodes of a dead rank): drop --mode threads");
    }
    let timeout = match timeout {
        Some(t) => t,
        None => match &env.timeout {
            Some(v) => parse_timeout("MPIEXEC_TIMEOUT", v)?,
            None => None,
        },
    };
    let universe = match (universe, &env.universe) {
        (Some(u), _) => Some(u),
        (None, Some(v)) => Some(parse_nranks("OXMPI_UNIVERSE_SIZE", v)?),
        (None, None) => None,
    };
    let abi = match (abi, &env.abi) {
        (Some(a), _) => Some(a),
        (None, Some(v)) => Some(Abi::parse("OXMPI_ABI", v).map_err(UsageError)?),
        (None, None) => None,
    };
    if mpmd && join.is_some() {
        return err("--join (or OXMPI_JOIN) starts the ranks of one program: drop the ':' segments (MPMD)");
    }
    if mpmd && mode == Mode::Threads && apps.iter().any(|a| !a.env.is_empty()) {
        return err("-env of one segment needs --mode processes: threads-mode ranks share one environment (use -genv for every rank)");
    }
    Ok(Command::Run(Options { nranks, mode, timeout, survive, program, args: apps[0].args.clone(), monitor, universe, join, nodes, abi, nranks_given, hosts, env: genv, wdir, tag_output, apps, bind, report_bindings }))
}

/// A segment's arguments up to a ':' word, and the words after it (the next segment).
fn split_segment(words: &[OsString]) -> (&[OsString], Option<&[OsString]>) {
    match words.iter().position(|w| w == ":") {
        Some(k) => (&words[..k], Some(&words[k + 1..])),
        None => (words, None),
    }
}

/// Segment `index` (> 0) of an MPMD command line, and the words after it: its own options
/// (`-n`, `-env`, `-wdir`; `-genv` and `-x` go to `genv`, the job's, as with hydra), then its
/// program and arguments.
fn parse_segment<'a>(words: &'a [OsString], index: usize, genv: &mut Vec<(String, Option<String>)>) -> Result<(App, Option<&'a [OsString]>), UsageError> {
    let mut app = App { nranks: 1, program: OsString::new(), args: Vec::new(), env: Vec::new(), wdir: None };
    let mut i = 0;
    let value = |i: &mut usize, name: &str| -> Result<String, UsageError> {
        *i += 1;
        match words.get(*i).and_then(|v| v.to_str()) {
            Some(v) if v != ":" => Ok(v.to_string()),
            _ => err(format!("option {name} needs a value")),
        }
    };
    while let Some(a) = words.get(i).and_then(|w| w.to_str()) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" || a == ":" {
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let one = |i: &mut usize| match &inline {
            Some(v) => Ok(v.clone()),
            None => value(i, name),
        };
        match name {
            "-n" | "-np" | "--np" | "--n" => app.nranks = parse_nranks(name, &one(&mut i)?)?,
            "-genv" | "--genv" | "-env" | "--env" => {
                let k = value(&mut i, name)?;
                let v = value(&mut i, name).map_err(|_| UsageError(format!("{name} {k} needs a value: {name} NAME VALUE")))?;
                if name.ends_with("genv") { &mut *genv } else { &mut app.env }.push((env_name(name, &k)?, Some(v)));
            }
            "-x" => {
                let v = one(&mut i)?;
                genv.push(match v.split_once('=') {
                    Some((k, val)) => (env_name(name, k)?, Some(val.to_string())),
                    None => (env_name(name, &v)?, None),
                });
            }
            "-wdir" | "--wdir" | "-wd" | "--wd" => {
                let v = one(&mut i)?;
                if v.is_empty() {
                    return err(format!("{name} needs a directory"));
                }
                app.wdir = Some(v.into());
            }
            _ => return err(format!("'{a}' after ':' (program {} of the command line): a segment takes only -n, -env, -genv, -x and -wdir; put the job's options before the first program", index + 1)),
        }
        i += 1;
    }
    match words.get(i) {
        Some(p) if p != ":" && !p.is_empty() => app.program = p.clone(),
        _ => return err(format!("no program after ':' (program {} of the command line)", index + 1)),
    }
    let (args, rest) = split_segment(&words[i + 1..]);
    app.args = args.to_vec();
    Ok((app, rest))
}

/// A variable name for -genv / -env / -x.
fn env_name(opt: &str, k: &str) -> Result<String, UsageError> {
    if k.is_empty() || k.contains('=') || k.contains('\0') {
        return err(format!("{opt} needs a variable name, not '{k}'"));
    }
    Ok(k.to_string())
}

/// The name we were invoked as (`mpiexec` or `mpirun`), for messages.
pub fn invoked_name(argv0: Option<&OsStr>) -> String {
    argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "mpiexec".to_string())
}

pub fn usage(name: &str) -> String {
    format!(
        "\
Usage: {name} -n N [options] PROGRAM [ARGS...]
       {name} -n N -hosts H1,H2 [options] PROGRAM [ARGS...]
       {name} [options] -n N1 PROG1 [ARGS...] : -n N2 [-env NAME VALUE] [-wdir DIR] PROG2 ...

Runs N copies (ranks) of PROGRAM as one MPI job on this machine (or on the hosts
given), using oxmpi. Options end at PROGRAM; everything after it is passed to the
program, up to a ':' word, which starts another segment (MPMD): its ranks follow the
previous segment's in MPI_COMM_WORLD and run its program, and MPI_APPNUM is the
segment's index. A segment takes its own -n (default 1), -env and -wdir (the first
segment: those before its program); -genv and -x are the job's wherever they appear;
other options go before the first program. Threads mode refuses a segment's own -env
(the ranks share one environment).

Options:
  -n N, -np N, --np N      number of ranks (default 1)
  -usize N, --universe-size N
                           MPI_UNIVERSE_SIZE: how many ranks the job may have, the
                           ones MPI_Comm_spawn starts included (processes mode;
                           default: the number of CPUs, at least -n)
  --mode processes|threads how ranks run (default: $OXMPI_MODE, else processes):
                           processes = one process per rank; threads = all ranks as
                           threads of one process, each with a private instance of
                           PROGRAM (needs an installed oxmpi: liboxmpi-threads.so
                           next to libmpi.so.12, and an ELF PROGRAM, not a script)
  --timeout SECONDS        end the job (exit status 124) if it runs longer
  --monitor FILE           record who sends how much to whom (point-to-point, collective
                           transfers, one-sided) and write the job's matrices to FILE as
                           JSON at the end; 'oxmpi-monitor FILE' shows them
  --survive                when a rank dies, keep the others running (in threads mode: a
                           rank that exits, calls pthread_exit, or crashes on its own
                           thread; a rank cannot be killed there);
                           operations involving the dead rank then fail with
                           MPIX_ERR_PROC_FAILED. Also on once any rank sets a non-fatal
                           error handler on a communicator
  --join JOB               start the ranks inside the running job JOB (the pid of its
                           mpiexec, or 'auto': the only job of this user running), so
                           that they can connect to its ports (MPI_Comm_connect/accept);
                           processes mode
  --nodes K                emulate a job over K nodes on this machine: the ranks are
                           split into K blocks of consecutive ranks, each block with
                           its own shared memory, the blocks joined through UCX (set
                           UCX_TLS=tcp to force the network path). In threads mode
                           each node is one process whose ranks are threads
  --abi mpich|ompi|mpi5    the MPI ABI PROGRAM needs (default: $OXMPI_ABI, else found
                           in the libraries PROGRAM loads, its whole NEEDED closure):
                           mpich = libmpi.so.12, ompi = Open MPI 4.1's libmpi.so.40,
                           mpi5 = the MPI-5 standard ABI's libmpi_abi.so.1. Needed when
                           the MPI library is loaded at run time (python with mpi4py)
  -genv NAME VALUE, -env NAME VALUE, -x NAME[=VALUE]
                           set NAME for every rank (all of mpiexec's environment
                           reaches the ranks anyway, on every host); with ':'
                           segments, -env is its segment's only
  -wdir DIR                the ranks' working directory (default: the current one);
                           with ':' segments, its segment's
  --bind-to core|none      core: bind each rank to a core of its host (processes mode:
                           the rank's process; threads mode: its thread), the host's
                           k-th rank to the k-th core mpiexec may use; more ranks than
                           cores on a host is refused. none (default): no binding
  --report-bindings        print each rank's CPUs on stderr as the job starts
  -l, --tag-output         prefix each line the ranks print with '[RANK] ' (processes
                           mode)
  --oversubscribe          accepted for Open MPI compatibility; has no effect
  -h, --help               show this help
  --version                show the version

Several hosts (each host a node: shared memory inside, UCX between hosts):
  -hosts H1,H2:S, --host ..., -H ...
                           run on these hosts (:S = the host's slots, default 1);
                           ranks go in blocks of consecutive ranks, host by host
  -f FILE, --hostfile FILE, -machinefile FILE
                           the hosts in FILE: lines 'host', 'host:S', 'host slots=S'
  -ppn P, --npernode P     P ranks per host instead of the slots (without -n:
                           P times the hosts; else -n defaults to the slots)
  --launcher CMD           start each host's node agent as 'CMD HOST COMMAND...'
                           (default ssh; CMD may have arguments). A host that is
                           this machine (localhost, its name) starts directly
  --iface NAME             the interface whose address the node agents connect back
                           to (default: $OXMPI_HEAD_ADDR, else this machine's name's
                           address or its first interface that is up)
  (internal: '{name} --node-agent ...' is how the head starts an agent; not by hand)

Environment:
  OXMPI_MODE        default for --mode
  MPIEXEC_TIMEOUT   default for --timeout (seconds; 0 = no limit), as with MPICH
  OXMPI_LIBDIR      directory holding oxmpi's libmpi.so.12 (default: found next to {name})
  OXMPI_PRELOAD     1 = always LD_PRELOAD oxmpi into MPICH-built programs, 0 = never
                    (default: only when LD_LIBRARY_PATH cannot redirect the program:
                    it has an RPATH/RUNPATH or needs a name OXMPI_LIBDIR lacks)
  OXMPI_SURVIVE     1 = like --survive
  OXMPI_UNIVERSE_SIZE default for -usize
  OXMPI_JOIN        default for --join
  OXMPI_ABI         default for --abi
  OXMPI_HEAD_ADDR   IP or IP:PORT the node agents connect back to (-hosts)
  OXMPI_CONNECT_TIMEOUT  seconds to wait for an agent to connect back (default 30)
  OXMPI_WAIT        how idle ranks wait: auto, spin, yield or block (read by the library)

Exit status: 0 if every rank succeeded; the failing rank's exit code; 128+S if a rank
was killed by signal S (also when the survivors went on and finished: the first
death's status); the MPI_Abort code; 124 on timeout; 127 if PROGRAM cannot run;
2 on a usage error.
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, UsageError> {
        p_env(args, EnvDefaults::default())
    }
    fn p_env(args: &[&str], env: EnvDefaults) -> Result<Command, UsageError> {
        let v: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse(&v, &env)
    }
    fn run(args: &[&str]) -> Options {
        match p(args) {
            Ok(Command::Run(o)) => o,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn basic_forms() {
        for form in [&["-n", "4"][..], &["-np", "4"], &["--np", "4"], &["--np=4"]] {
            let mut a: Vec<&str> = form.to_vec();
            a.extend(["prog", "x"]);
            let o = run(&a);
            assert_eq!(o.nranks, 4);
            assert_eq!(o.program, "prog");
            assert_eq!(o.args, vec![OsString::from("x")]);
            assert_eq!(o.mode, Mode::Processes);
            assert_eq!(o.timeout, None);
        }
        assert_eq!(run(&["prog"]).nranks, 1);
    }

    #[test]
    fn nodes_in_both_modes() {
        let o = run(&["--nodes", "2", "--mode", "threads", "-n", "4", "prog"]);
        assert_eq!((o.nodes, o.mode), (2, Mode::Threads));
        assert_eq!(run(&["--nodes", "2", "--survive", "-n", "4", "prog"]).nodes, 2);
        let e = p(&["--nodes", "2", "--mode", "threads", "--survive", "-n", "4", "prog"]).unwrap_err();
        assert!(e.0.starts_with("--survive with --nodes runs in processes mode only"), "{}", e.0);
    }

    #[test]
    fn options_stop_at_program() {
        let o = run(&["-n", "2", "./a.out", "-n", "5", "--help", "--timeout", "x"]);
        assert_eq!(o.nranks, 2);
        assert_eq!(o.program, "./a.out");
        assert_eq!(o.args.len(), 5);
        let o = run(&["-n", "2", "--", "-weird"]);
        assert_eq!(o.program, "-weird");
    }

    #[test]
    fn mode_and_timeout() {
        let o = run(&["--mode", "processes", "--timeout", "2.5", "--oversubscribe", "p"]);
        assert_eq!(o.mode, Mode::Processes);
        assert_eq!(o.timeout.as_ref().unwrap().limit, Duration::from_millis(2500));
        assert_eq!(o.timeout.unwrap().shown, "2.5");
        assert_eq!(run(&["--mode=threads", "p"]).mode, Mode::Threads);
        assert_eq!(run(&["--timeout", "0", "p"]).timeout, None);
    }

    #[test]
    fn env_defaults() {
        let env = EnvDefaults { mode: Some("threads".into()), timeout: Some("7".into()), survive: true, universe: None, join: None, abi: None };
        let Ok(Command::Run(o)) = p_env(&["p"], env.clone()) else { panic!() };
        assert_eq!(o.mode, Mode::Threads);
        assert_eq!(o.timeout.unwrap().limit, Duration::from_secs(7));
        assert!(o.survive);
        let Ok(Command::Run(o)) = p(&["--survive", "p"]) else { panic!() };
        assert!(o.survive);
        let Ok(Command::Run(o)) = p(&["p"]) else { panic!() };
        assert!(!o.survive);
        // Command line wins over the environment.
        let Ok(Command::Run(o)) = p_env(&["--mode", "processes", "--timeout", "3", "p"], env) else { panic!() };
        assert_eq!(o.mode, Mode::Processes);
        assert_eq!(o.timeout.unwrap().shown, "3");
        let bad = EnvDefaults { timeout: Some("soon".into()), ..Default::default() };
        assert!(p_env(&["p"], bad).unwrap_err().0.contains("MPIEXEC_TIMEOUT"));
        let bad = EnvDefaults { mode: Some("fibers".into()), ..Default::default() };
        assert!(p_env(&["p"], bad).unwrap_err().0.contains("OXMPI_MODE"));
    }

    #[test]
    fn abi_option_and_env() {
        assert_eq!(run(&["p"]).abi, None);
        assert_eq!(run(&["--abi", "ompi", "python3", "t.py"]).abi, Some(Abi::Ompi));
        assert_eq!(run(&["--abi=mpi5", "p"]).abi, Some(Abi::Mpi5));
        assert_eq!(p(&["--abi", "lam", "p"]).unwrap_err().0, "--abi is mpich, ompi or mpi5, not 'lam'");
        let env = EnvDefaults { abi: Some("ompi".into()), ..Default::default() };
        let Ok(Command::Run(o)) = p_env(&["p"], env.clone()) else { panic!() };
        assert_eq!(o.abi, Some(Abi::Ompi));
        let Ok(Command::Run(o)) = p_env(&["--abi", "mpich", "p"], env) else { panic!() };
        assert_eq!(o.abi, Some(Abi::Mpich), "the option wins over OXMPI_ABI");
        let bad = EnvDefaults { abi: Some("x".into()), ..Default::default() };
        assert!(p_env(&["p"], bad).unwrap_err().0.contains("OXMPI_ABI"));
    }

    #[test]
    fn universe_size() {
        let o = run(&["-n", "2", "-usize", "6", "p"]);
        assert_eq!(o.universe_size(1), 6);
        assert_eq!(run(&["-n", "4", "--universe-size=2", "p"]).universe_size(1), 4);
        assert_eq!(run(&["-n", "2", "p"]).universe_size(8), 8);
        assert_eq!(run(&["-n", "3", "p"]).universe_size(2), 3);
        let env = EnvDefaults { universe: Some("5".into()), ..Default::default() };
        let Ok(Command::Run(o)) = p_env(&["p"], env.clone()) else { panic!() };
        assert_eq!(o.universe, Some(5));
        let Ok(Command::Run(o)) = p_env(&["-usize", "7", "p"], env) else { panic!() };
        assert_eq!(o.universe, Some(7));
        assert!(p(&["-usize", "0", "p"]).unwrap_err().0.contains("-usize"));
        let bad = EnvDefaults { universe: Some("many".into()), ..Default::default() };
        assert!(p_env(&["p"], bad).unwrap_err().0.contains("OXMPI_UNIVERSE_SIZE"));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["-h"]), Ok(Command::Help));
        assert_eq!(p(&["-n", "2", "--help", "prog"]), Ok(Command::Help));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
    }

    #[test]
    fn usage_errors() {
        assert!(p(&[]).unwrap_err().0.contains("no program"));
        assert!(p(&["-n", "2"]).unwrap_err().0.contains("no program"));
        assert!(p(&["-n"]).unwrap_err().0.contains("needs a value"));
        assert!(p(&["-n", "0", "p"]).unwrap_err().0.contains("positive"));
        assert!(p(&["-n", "x", "p"]).unwrap_err().0.contains("positive"));
        assert!(p(&["-n", "-3", "p"]).is_err());
        assert!(p(&["--bogus", "p"]).unwrap_err().0.contains("unknown option '--bogus'"));
        assert!(p(&["--mode", "fibers", "p"]).is_err());
        assert!(p(&["--timeout", "-1", "p"]).is_err());
        assert!(p(&["--timeout", "soon", "p"]).is_err());
    }

    #[test]
    fn invoked_as() {
        assert_eq!(invoked_name(Some(OsStr::new("/usr/bin/mpirun"))), "mpirun");
        assert_eq!(invoked_name(Some(OsStr::new("mpiexec"))), "mpiexec");
        assert_eq!(invoked_name(None), "mpiexec");
    }

    #[test]
    fn host_options() {
        let o = run(&["-hosts", "a,b:2", "-f", "hf", "-ppn", "3", "--launcher", "ssh -p 22", "-iface", "eth0", "prog"]);
        assert_eq!(o.hosts, HostOptions { list: vec!["a,b:2".into()], file: Some("hf".into()), ppn: Some(3), launcher: Some("ssh -p 22".into()), iface: Some("eth0".into()) });
        assert!(!o.nranks_given && run(&["-n", "2", "--host=a", "prog"]).nranks_given);
        assert!(!run(&["prog"]).hosts.any());
        assert!(p(&["--launcher", "ssh", "prog"]).unwrap_err().0.contains("go with -hosts"));
        assert!(p(&["-hosts", "a", "--nodes", "2", "-n", "2", "prog"]).unwrap_err().0.contains("drop --nodes"));
        assert!(p(&["-hosts", "a", "--survive", "prog"]).is_err());
        assert!(p(&["-ppn", "0", "prog"]).is_err());
    }

    #[test]
    fn env_wdir_and_tags() {
        let o = run(&["-genv", "A", "1 2", "-env", "B", "", "-x", "C=3", "-x", "D", "-wdir", "/tmp", "-l", "prog"]);
        assert_eq!(o.env, vec![("A".into(), Some("1 2".into())), ("B".into(), Some("".into())), ("C".into(), Some("3".into())), ("D".into(), None)]);
        assert_eq!(o.wdir, Some("/tmp".into()));
        assert!(o.tag_output);
        assert!(p(&["-genv", "A"]).unwrap_err().0.contains("needs a value"));
        assert!(p(&["-x", "=1", "prog"]).is_err());
        assert!(p(&["-l", "--mode", "threads", "prog"]).unwrap_err().0.starts_with("-l needs --mode processes"));
    }

    #[test]
    fn mpmd_segments() {
        let o = run(&["-genv", "G", "1", "-n", "1", "-env", "A", "x", "-wdir", "/w", "p1", "a", ":", "-n", "3", "-x", "X=2", "-env", "B", "y", "p2", "b", "c", ":", "p3"]);
        assert!(o.mpmd());
        assert_eq!((o.nranks, o.nranks_given), (5, true));
        assert_eq!((o.program.as_os_str(), o.args.len()), ("p1".as_ref(), 1), "the first segment is program and args");
        assert_eq!(o.env, vec![("G".into(), Some("1".into())), ("X".into(), Some("2".into()))], "-genv and -x are the job's");
        assert_eq!(o.wdir, None);
        let a = &o.apps;
        assert_eq!((a[0].nranks, a[0].env.clone(), a[0].wdir.clone()), (1, vec![("A".into(), Some("x".into()))], Some("/w".into())));
        assert_eq!((a[1].nranks, a[1].program.as_os_str(), a[1].args.clone(), a[1].env.clone()), (3, "p2".as_ref(), vec!["b".into(), "c".into()], vec![("B".into(), Some("y".into()))]));
        assert_eq!((a[2].nranks, a[2].program.as_os_str(), a[2].args.len()), (1, "p3".as_ref(), 0), "a segment without -n has one rank, as with hydra");
        assert_eq!(o.app_of(), vec![0, 1, 1, 1, 2]);
        // Without ':' the first segment's -env and -wdir are the job's, as before.
        let o = run(&["-env", "A", "x", "-wdir", "/w", "-n", "2", "p", ":x"]);
        assert!(!o.mpmd() && o.apps.len() == 1 && o.apps[0].env.is_empty());
        assert_eq!((o.env, o.wdir, o.args), (vec![("A".into(), Some("x".into()))], Some("/w".into()), vec![":x".into()]));
        // Bad segments.
        assert_eq!(p(&["-n", "1", "p", ":"]).unwrap_err().0, "no program after ':' (program 2 of the command line)");
        assert!(p(&["p", ":", ":", "q"]).unwrap_err().0.starts_with("no program after ':'"));
        assert!(p(&["p", ":", "-n", "0", "q"]).unwrap_err().0.contains("positive"));
        assert!(p(&["p", ":", "-n"]).unwrap_err().0.contains("needs a value"));
        assert!(p(&["p", ":", "--timeout", "3", "q"]).unwrap_err().0.starts_with("'--timeout' after ':' (program 2 of the command line): a segment takes only"));
        assert!(p(&["--mode", "threads", "p", ":", "-env", "A", "1", "q"]).unwrap_err().0.starts_with("-env of one segment needs --mode processes"));
        assert!(run(&["--mode", "threads", "-genv", "A", "1", "p", ":", "-wdir", "/tmp", "q"]).mpmd());
        assert!(p(&["--join", "auto", "p", ":", "q"]).unwrap_err().0.starts_with("--join (or OXMPI_JOIN) starts the ranks of one program"));
    }

    #[test]
    fn join() {
        assert_eq!(run(&["--join", "1234", "-n", "2", "prog"]).join.as_deref(), Some("1234"));
        assert_eq!(run(&["--join=auto", "prog"]).join.as_deref(), Some("auto"));
        assert_eq!(run(&["prog"]).join, None);
        let env = EnvDefaults { join: Some("auto".into()), ..Default::default() };
        assert!(matches!(p_env(&["prog"], env), Ok(Command::Run(o)) if o.join.as_deref() == Some("auto")));
        assert!(p(&["--join", "me", "prog"]).is_err());
        assert!(p(&["--join", "0", "prog"]).is_err());
        assert!(p(&["--join", "auto", "--mode", "threads", "prog"]).is_err());
    }
}
