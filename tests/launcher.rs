//! End-to-end tests of `mpiexec` on shell programs (no MPI library needed).
//!
//! Ranks that should "call MPI_Init", "MPI_Finalize" or "MPI_Abort" do what the library would:
//! they write the rank state or the abort record into the job segment through
//! /proc/self/fd/$OXMPI_SHM_FD, at offsets taken from the crate's own layout.
//! Time is only asserted as generous upper bounds, to catch hangs.
use oxmpi::runtime::segment::{Layout, RankControl, SegmentHeader};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MPIEXEC: &str = env!("CARGO_BIN_EXE_mpiexec");
/// No job in these tests should take anywhere near this long; beyond it we call it a hang.
const HANG: Duration = Duration::from_secs(10);

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!("oxmpi-launch-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Out {
    fn stderr_lines(&self) -> Vec<&str> {
        self.stderr.lines().collect()
    }
}

fn mpiexec(dir: &TempDir) -> Command {
    let mut c = Command::new(MPIEXEC);
    c.env("D", dir.path()).env_remove("MPIEXEC_TIMEOUT").env_remove("OXMPI_MODE");
    c
}

/// Starts `cmd` with output going to files in `dir` (pipes could be held open by a stray rank).
fn start(cmd: &mut Command, dir: &TempDir, stdin: Option<&str>) -> Child {
    let input = match stdin {
        Some(text) => {
            let p = dir.path().join("launcher.stdin");
            std::fs::write(&p, text).unwrap();
            Stdio::from(File::open(p).unwrap())
        }
        None => Stdio::null(),
    };
    cmd.stdin(input)
        .stdout(File::create(dir.path().join("launcher.stdout")).unwrap())
        .stderr(File::create(dir.path().join("launcher.stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// Waits for the launcher, killing it (and failing) if it hangs.
fn finish(mut child: Child, dir: &TempDir, started: Instant) -> Out {
    let limit = Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mpiexec hung; stderr: {}", std::fs::read_to_string(dir.path().join("launcher.stderr")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Out { code: status.code(), stdout: dir.read("launcher.stdout"), stderr: dir.read("launcher.stderr"), elapsed: started.elapsed() }
}

fn run(cmd: &mut Command, dir: &TempDir, stdin: Option<&str>) -> Out {
    let t = Instant::now();
    let child = start(cmd, dir, stdin);
    finish(child, dir, t)
}

/// Shell snippet: the rank records its pid in $D/pid.$OXMPI_RANK (atomically) and sleeps in place.
const PID_THEN_SLEEP: &str = r#"echo $$ > "$D/tmp.$OXMPI_RANK" && mv "$D/tmp.$OXMPI_RANK" "$D/pid.$OXMPI_RANK"; exec sleep 60"#;
/// Shell snippet: only the pid file part of PID_THEN_SLEEP.
const PID: &str = r#"echo $$ > "$D/tmp.$OXMPI_RANK" && mv "$D/tmp.$OXMPI_RANK" "$D/pid.$OXMPI_RANK""#;

/// Shell snippet: wait (bounded) until `$1` pid files exist.
fn wait_pids(count: usize) -> String {
    format!(r#"i=0; while [ "$(ls "$D" | grep -c '^pid\.')" -lt {count} ] && [ $i -lt 400 ]; do sleep 0.025; i=$((i+1)); done"#)
}

fn wait_for_files(dir: &TempDir, count: usize) {
    let t = Instant::now();
    loop {
        let n = std::fs::read_dir(dir.path()).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("pid.")).count();
        if n >= count {
            return;
        }
        assert!(t.elapsed() < HANG, "ranks did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts that every pid recorded in $D/pid.* is gone (killed and reaped).
fn assert_pids_gone(dir: &TempDir, expected: usize) {
    let mut seen = 0;
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        if !e.file_name().to_string_lossy().starts_with("pid.") {
            continue;
        }
        let pid: i32 = std::fs::read_to_string(e.path()).unwrap().trim().parse().unwrap();
        // SAFETY: signal 0 only checks for existence.
        let rc = unsafe { libc::kill(pid, 0) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        assert!(rc == -1 && errno == Some(libc::ESRCH), "rank pid {pid} ({:?}) was left behind", e.file_name());
        seen += 1;
    }
    assert_eq!(seen, expected, "pid files");
}

/// Shell function `put OFFSET BYTES`: writes printf-escaped BYTES into the job segment.
const PUT: &str = r#"put() { printf "$2" | dd of=/proc/$$/fd/$OXMPI_SHM_FD bs=1 seek=$1 conv=notrunc status=none; }"#;

fn state_offset(nranks: usize, rank: usize) -> usize {
    let l = Layout::new(nranks, oxmpi::transport::shm::geometry(nranks));
    l.ranks_off + rank * std::mem::size_of::<RankControl>() + std::mem::offset_of!(RankControl, state)
}

/// Shell commands that record an abort by `rank` with `code` (0..=255) like Segment::record_abort.
fn record_abort_sh(rank: u8, code: u8) -> String {
    let flag = std::mem::offset_of!(SegmentHeader, abort_flag);
    let r = std::mem::offset_of!(SegmentHeader, abort_rank);
    let c = std::mem::offset_of!(SegmentHeader, abort_code);
    let ready = std::mem::offset_of!(SegmentHeader, abort_ready);
    format!(r"put {flag} '\001'; put {r} '\{rank:03o}'; put {c} '\{code:03o}'; put {ready} '\001'")
}

#[test]
fn all_ranks_succeed() {
    let d = TempDir::new("ok");
    let o = run(mpiexec(&d).args(["-n", "4", "sh", "-c", r#"echo hi from $OXMPI_RANK"#]), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout.lines().count(), 4);
    assert_eq!(o.stderr, "");
}

#[test]
fn exit_code_propagates() {
    let d = TempDir::new("exit");
    let script = format!(r#"if [ "$OXMPI_RANK" = 1 ]; then {} ; exit 3; fi; {PID_THEN_SLEEP}"#, wait_pids(2));
    let o = run(mpiexec(&d).args(["-n", "3", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(3), "{}", o.stderr);
    let lines = o.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].starts_with("oxmpi: rank 1 (pid "), "{}", lines[0]);
    assert!(lines[0].ends_with(") exited with code 3; ending the job"), "{}", lines[0]);
    assert!(o.elapsed < HANG);
    assert_pids_gone(&d, 2);
}

#[test]
fn signal_death_ends_the_job() {
    let d = TempDir::new("segv");
    let script = format!(r#"if [ "$OXMPI_RANK" = 1 ]; then {}; kill -SEGV $$; fi; {PID_THEN_SLEEP}"#, wait_pids(3));
    let o = run(mpiexec(&d).args(["-n", "4", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(139), "{}", o.stderr);
    let lines = o.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].starts_with("oxmpi: rank 1 (pid "), "{}", lines[0]);
    assert!(lines[0].ends_with(") killed by signal 11 (Segmentation fault); ending the job"), "{}", lines[0]);
    assert!(o.elapsed < HANG, "took {:?}", o.elapsed);
    assert_pids_gone(&d, 3);
}

#[test]
fn stdin_reaches_rank_zero_only() {
    let d = TempDir::new("stdin");
    let o = run(mpiexec(&d).args(["-n", "3", "sh", "-c", r#"cat > "$D/in.$OXMPI_RANK""#]), &d, Some("hello\nworld\n"));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(d.read("in.0"), "hello\nworld\n");
    assert_eq!(d.read("in.1"), "");
    assert_eq!(d.read("in.2"), "");
}

#[test]
fn environment_of_eight_ranks() {
    let d = TempDir::new("env");
    let script = r#"echo "$OXMPI_RANK $OXMPI_SIZE $OXMPI_MODE $PMI_RANK $PMI_SIZE $MPI_LOCALRANKID $MPI_LOCALNRANKS $(readlink /proc/$$/fd/$OXMPI_SHM_FD)" > "$D/env.$OXMPI_RANK""#;
    let o = run(mpiexec(&d).args(["-n", "8", "sh", "-c", script]).env("OXMPI_RANK", "99"), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for r in 0..8 {
        let line = d.read(&format!("env.{r}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&f[..7], &[&*r.to_string(), "8", "processes", &*r.to_string(), "8", &*r.to_string(), "8"], "{line}");
        assert!(f[7].starts_with("/memfd:oxmpi-job"), "segment fd is not the job memfd: {line}");
    }
}

#[test]
fn mpi_abort_record_ends_the_job_with_its_code() {
    let d = TempDir::new("abort");
    // Rank 2 aborts like MPI_Abort(MPI_COMM_WORLD, 7): record, own message, exit.
    let script = format!(
        r#"{PUT}; if [ "$OXMPI_RANK" = 2 ]; then {}; {}; echo "rank 2 called MPI_Abort" >&2; exit 7; fi; {PID_THEN_SLEEP}"#,
        wait_pids(2),
        record_abort_sh(2, 7)
    );
    let o = run(mpiexec(&d).args(["-n", "3", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(7), "{}", o.stderr);
    assert_eq!(o.stderr_lines(), vec!["rank 2 called MPI_Abort"], "the launcher must not add a message");
    assert!(o.elapsed < HANG);
    assert_pids_gone(&d, 2);
}

#[test]
fn abort_record_without_exit_still_ends_the_job() {
    let d = TempDir::new("abort-stuck");
    // Rank 0 records an abort but never exits: it must be killed after a short grace.
    let script = format!(r#"{PUT}; if [ "$OXMPI_RANK" = 0 ]; then {PID}; {}; {}; exec sleep 60; fi; {PID_THEN_SLEEP}"#, wait_pids(3), record_abort_sh(0, 42));
    let o = run(mpiexec(&d).args(["-n", "3", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(42), "{}", o.stderr);
    assert_eq!(o.stderr, "");
    assert!(o.elapsed < HANG);
    assert_pids_gone(&d, 3);
}

#[test]
fn exit_without_finalize_is_a_failure() {
    let d = TempDir::new("nofin");
    let off = state_offset(2, 1);
    let script = format!(r#"{PUT}; if [ "$OXMPI_RANK" = 1 ]; then {}; put {off} '\001'; exit 0; fi; {PID_THEN_SLEEP}"#, wait_pids(1));
    let o = run(mpiexec(&d).args(["-n", "2", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let lines = o.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].starts_with("oxmpi: rank 1 (pid "), "{}", lines[0]);
    assert!(lines[0].ends_with(") exited before calling MPI_Finalize; ending the job"), "{}", lines[0]);
    assert_pids_gone(&d, 1);
}

#[test]
fn finalized_ranks_exit_normally() {
    let d = TempDir::new("fin");
    let script = format!(r#"{PUT}; put $(( {} + 64 * OXMPI_RANK )) '\002'; exit 0"#, state_offset(3, 0));
    assert_eq!(state_offset(3, 1) - state_offset(3, 0), 64, "test assumes 64-byte RankControl");
    let o = run(mpiexec(&d).args(["-n", "3", "sh", "-c", &script]), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stderr, "");
}

#[test]
fn timeout_option_and_environment() {
    let d = TempDir::new("timeout");
    let o = run(mpiexec(&d).args(["--timeout", "1", "-n", "2", "sh", "-c", PID_THEN_SLEEP]), &d, None);
    assert_eq!(o.code, Some(124), "{}", o.stderr);
    assert_eq!(o.stderr_lines(), vec!["oxmpi: job timed out after 1 s; ending the job"]);
    assert!(o.elapsed < HANG);
    assert_pids_gone(&d, 2);

    let d = TempDir::new("timeout-env");
    let o = run(mpiexec(&d).args(["-n", "2", "sh", "-c", PID_THEN_SLEEP]).env("MPIEXEC_TIMEOUT", "1"), &d, None);
    assert_eq!(o.code, Some(124), "{}", o.stderr);
    assert_eq!(o.stderr_lines(), vec!["oxmpi: job timed out after 1 s; ending the job"]);
    assert_pids_gone(&d, 2);
}

#[test]
fn program_not_found_is_reported_once() {
    let d = TempDir::new("notfound");
    let o = run(mpiexec(&d).args(["-n", "4", "no-such-program-oxmpi-test", "x"]), &d, None);
    assert_eq!(o.code, Some(127));
    assert_eq!(o.stderr_lines().len(), 1, "{}", o.stderr);
    assert!(o.stderr.starts_with("oxmpi: cannot run 'no-such-program-oxmpi-test': No such file or directory"), "{}", o.stderr);
}

#[test]
fn help_and_version() {
    let d = TempDir::new("help");
    let o = run(mpiexec(&d).arg("--help"), &d, None);
    assert_eq!(o.code, Some(0));
    for w in ["Usage: mpiexec -n N", "--np", "--mode", "--timeout", "--oversubscribe", "OXMPI_MODE", "MPIEXEC_TIMEOUT", "OXMPI_LIBDIR", "OXMPI_PRELOAD", "OXMPI_WAIT"] {
        assert!(o.stdout.contains(w), "help lacks {w}:\n{}", o.stdout);
    }
    let o = run(mpiexec(&d).arg("-h"), &d, None);
    assert_eq!(o.code, Some(0));
    let o = run(mpiexec(&d).arg("--version"), &d, None);
    assert_eq!(o.code, Some(0));
    assert!(o.stdout.contains("oxmpi"));
}

#[test]
fn usage_errors_exit_2() {
    let d = TempDir::new("usage");
    for args in [&[][..], &["-n", "0", "true"], &["-n"], &["--bogus", "true"], &["--timeout", "soon", "true"]] {
        let o = run(mpiexec(&d).args(args), &d, None);
        assert_eq!(o.code, Some(2), "{args:?}");
        let lines = o.stderr_lines();
        assert_eq!(lines.len(), 2, "{args:?}: {}", o.stderr);
        assert!(lines[0].starts_with("oxmpi: "));
        assert_eq!(lines[1], "Run 'mpiexec --help' for usage.");
    }
    // Options after the program belong to the program; --oversubscribe is accepted.
    let o = run(mpiexec(&d).args(["--oversubscribe", "-n", "2", "sh", "-c", "exit 0", "--bogus"]), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// `OXMPI_LIBDIR` pointing at `dir` with empty stand-ins for the libraries threads mode needs
/// (enough for the launcher's checks, which only look for the files).
fn stand_in_libdir(d: &TempDir) -> PathBuf {
    let lib = d.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    for f in ["libmpi.so.12", "liboxmpi-threads.so"] {
        std::fs::write(lib.join(f), "").unwrap();
    }
    lib
}

#[test]
fn threads_mode_needs_an_installed_oxmpi() {
    let d = TempDir::new("threads-lib");
    let lib = d.path().join("emptylib");
    std::fs::create_dir_all(&lib).unwrap();
    let msg = format!(
        "oxmpi: threads mode needs an installed oxmpi (liboxmpi-threads.so not found in {}); run scripts/install.sh PREFIX or use --mode processes",
        lib.display()
    );
    let o = run(mpiexec(&d).args(["--mode", "threads", "-n", "2", "true"]).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines(), vec![msg.as_str()]);
    let o = run(mpiexec(&d).args(["-n", "2", "true"]).env("OXMPI_MODE", "threads").env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines(), vec![msg.as_str()]);
    // The preload library alone is not enough either.
    std::fs::write(lib.join("liboxmpi-threads.so"), "").unwrap();
    let o = run(mpiexec(&d).args(["--mode", "threads", "true"]).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("(libmpi.so.12 not found in "), "{}", o.stderr);
    let o = run(mpiexec(&d).args(["--mode", "processes", "-n", "2", "true"]).env("OXMPI_MODE", "threads").env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn threads_mode_refuses_what_it_cannot_load() {
    let d = TempDir::new("threads-script");
    let lib = stand_in_libdir(&d);
    let exe = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    };
    // A script runs through its interpreter, which must exist and be an ELF program.
    exe("job.sh", "#!/no/such/interpreter\nexit 0\n");
    let o = run(mpiexec(&d).args(["--mode", "threads", "-n", "2", "./job.sh"]).current_dir(d.path()).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines().len(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("its #! interpreter /no/such/interpreter is not an executable file"), "{}", o.stderr);
    exe("plain", "exit 0\n");
    exe("job2.sh", "#!./plain\n");
    let o = run(mpiexec(&d).args(["--mode", "threads", "-n", "2", "./job2.sh"]).current_dir(d.path()).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines(), vec!["oxmpi: threads mode needs an ELF program and ./job2.sh's #! interpreter ./plain is not one; run it with --mode processes"]);
    let o = run(mpiexec(&d).args(["--mode", "threads", "-n", "2", "./plain"]).current_dir(d.path()).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines(), vec!["oxmpi: threads mode needs an ELF program and ./plain is not one; run it with --mode processes"]);
    // Not found is still 127, once.
    let o = run(mpiexec(&d).args(["--mode", "threads", "-n", "2", "no-such-program-oxmpi-test"]).env("OXMPI_LIBDIR", &lib), &d, None);
    assert_eq!(o.code, Some(127));
    assert_eq!(o.stderr_lines().len(), 1, "{}", o.stderr);
}

#[test]
fn threads_host_entry_without_the_library() {
    let d = TempDir::new("threads-host");
    let o = run(mpiexec(&d).args(["--threads-host", "2", "/bin/true", "x"]).env_remove("LD_PRELOAD"), &d, None);
    assert_eq!(o.code, Some(2));
    assert_eq!(o.stderr_lines(), vec!["oxmpi: internal: liboxmpi.so is not preloaded in the threads-mode host"]);
    assert_eq!(o.stdout, "");
    // The hidden entry is not advertised.
    let o = run(mpiexec(&d).arg("--help"), &d, None);
    assert!(!o.stdout.contains("threads-host"));
}

/// A stand-in for liboxmpi.so's threads-mode side: `oxmpi_threads_main` prints what it got,
/// runs N "ranks" as threads that each create a thread (which must inherit the rank context
/// through the preload library) and call exit() (which must end only that thread), then does
/// what FAKE_SLEEP / FAKE_SIGNAL / FAKE_CODE say.
const FAKE_THREADS_LIB: &str = r#"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static __thread int ctx = -1;
static int codes[64];
int oxmpi_threads_current(void) { return ctx; }
void oxmpi_threads_adopt(int c) { ctx = c; }
int oxmpi_threads_exit_hook(int code) { if (ctx < 0) return 0; codes[ctx] = code; return 1; }
static void *child(void *p) { *(int *)p = oxmpi_threads_current(); return NULL; }
static void *rank(void *p) {
    oxmpi_threads_adopt((int)(long)p);
    int seen = -2;
    pthread_t t;
    pthread_create(&t, NULL, child, &seen);
    pthread_join(t, NULL);
    printf("rank %d: child thread context %d\n", ctx, seen);
    exit(10 + ctx);
}
int oxmpi_threads_main(int n, const char *program, int argc, char **argv) {
    const char *d = getenv("D");
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.host", d ? d : ".");
    FILE *f = fopen(path, "w");
    if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
    printf("nranks=%d program=%s", n, program);
    for (int i = 0; i < argc; i++) printf(" [%s]", argv[i]);
    printf("%s\n", argv[argc] ? " (argv not NULL-terminated)" : "");
    const char *vars[] = {"OXMPI_MODE", "OXMPI_SIZE", "OXMPI_RANK", "OXMPI_SHM_FD", "LD_PRELOAD", "LD_LIBRARY_PATH"};
    for (int i = 0; i < 6; i++) printf("%s=%s\n", vars[i], getenv(vars[i]) ? getenv(vars[i]) : "(unset)");
    const int sigs[] = {SIGPIPE, SIGSEGV, SIGBUS};
    printf("signal dispositions:");
    for (int i = 0; i < 3; i++) {
        struct sigaction sa;
        sigaction(sigs[i], NULL, &sa);
        printf(" %s", sa.sa_handler == SIG_DFL ? "default" : "changed");
    }
    printf("\n");
    pthread_t t[64];
    for (long r = 0; r < n && r < 64; r++) pthread_create(&t[r], NULL, rank, (void *)r);
    for (long r = 0; r < n && r < 64; r++) pthread_join(t[r], NULL);
    printf("exit codes:");
    for (int r = 0; r < n && r < 64; r++) printf(" %d", codes[r]);
    printf("\n");
    fflush(stdout);
    if (getenv("FAKE_SLEEP")) sleep(60);
    if (getenv("FAKE_SIGNAL")) raise(atoi(getenv("FAKE_SIGNAL")));
    return getenv("FAKE_CODE") ? atoi(getenv("FAKE_CODE")) : 7;
}
"#;

fn have_gcc() -> bool {
    Command::new("gcc").arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// Builds `dir/lib` with the fake libmpi.so.12 and the real liboxmpi-threads.so.
fn fake_threads_libdir(d: &TempDir) -> PathBuf {
    let lib = d.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let src = d.path().join("fake.c");
    std::fs::write(&src, FAKE_THREADS_LIB).unwrap();
    let preload_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-src/threads-preload.c");
    let builds: [(&Path, &str, &[&str]); 2] = [
        (&src, "libmpi.so.12", &["-Wl,-soname,libmpi.so.12", "-lpthread"]),
        // Exactly as scripts/install.sh builds it; it must compile without warnings.
        (&preload_src, "liboxmpi-threads.so", &["-O2", "-Wall", "-ldl", "-lpthread"]),
    ];
    for (src, out, extra) in builds {
        let o = Command::new("gcc").args(["-shared", "-fPIC", "-o"]).arg(lib.join(out)).arg(src).args(extra).output().unwrap();
        assert!(o.status.success() && o.stderr.is_empty(), "gcc {out}: {}", String::from_utf8_lossy(&o.stderr));
    }
    lib
}

fn threads_job(d: &TempDir, lib: &Path, args: &[&str]) -> Command {
    let mut c = mpiexec(d);
    c.args(["--mode", "threads"]).args(args).env("OXMPI_LIBDIR", lib).env_remove("LD_PRELOAD").env_remove("FAKE_CODE");
    c
}

#[test]
fn threads_mode_runs_one_host_with_the_library() {
    if !have_gcc() {
        eprintln!("skipped: no gcc");
        return;
    }
    let d = TempDir::new("threads-fake");
    let lib = fake_threads_libdir(&d);
    let mut cmd = threads_job(&d, &lib, &["-n", "3", "/bin/true", "a", "b c"]);
    cmd.env("LD_LIBRARY_PATH", "/x").env("OXMPI_RANK", "5").env("OXMPI_SHM_FD", "9");
    let o = run(&mut cmd, &d, None);
    assert_eq!(o.code, Some(7), "{}", o.stderr);
    assert_eq!(o.stderr, "");
    let l = lib.display();
    let mut want = vec![
        "nranks=3 program=/bin/true [/bin/true] [a] [b c]".to_string(),
        "OXMPI_MODE=threads".to_string(),
        "OXMPI_SIZE=3".to_string(),
        "OXMPI_RANK=(unset)".to_string(),
        "OXMPI_SHM_FD=(unset)".to_string(),
        format!("LD_PRELOAD={l}/liboxmpi-threads.so {l}/libmpi.so.12"),
        format!("LD_LIBRARY_PATH={l}:/x"),
        "signal dispositions: default default default".to_string(),
    ];
    // Rank lines come in any order; each rank's thread inherited its context and its exit()
    // ended only its own thread.
    let mut ranks: Vec<&str> = o.stdout.lines().filter(|s| s.starts_with("rank ")).collect();
    ranks.sort();
    assert_eq!(ranks, vec!["rank 0: child thread context 0", "rank 1: child thread context 1", "rank 2: child thread context 2"], "{}", o.stdout);
    want.push("exit codes: 10 11 12".to_string());
    let rest: Vec<&str> = o.stdout.lines().filter(|s| !s.starts_with("rank ")).collect();
    assert_eq!(rest, want, "{}", o.stdout);

    // A relative program is passed as an absolute path, argv[0] as the user wrote it; a user's
    // own LD_PRELOAD comes after ours.
    std::fs::copy("/bin/true", d.path().join("prog")).unwrap();
    let mut cmd = threads_job(&d, &lib, &["./prog"]);
    cmd.current_dir(d.path()).env("LD_PRELOAD", lib.join("liboxmpi-threads.so"));
    let o = run(&mut cmd, &d, None);
    assert_eq!(o.code, Some(7), "{}", o.stderr);
    let first = o.stdout.lines().next().unwrap();
    assert_eq!(first, format!("nranks=1 program={}/prog [./prog]", d.path().display()));
    assert!(o.stdout.contains(&format!("LD_PRELOAD={l}/liboxmpi-threads.so {l}/libmpi.so.12 {l}/liboxmpi-threads.so\n")), "{}", o.stdout);
}

#[test]
fn threads_mode_exit_codes_and_signals() {
    if !have_gcc() {
        eprintln!("skipped: no gcc");
        return;
    }
    let d = TempDir::new("threads-codes");
    let lib = fake_threads_libdir(&d);
    for code in [0, 3] {
        let o = run(threads_job(&d, &lib, &["-n", "2", "/bin/true"]).env("FAKE_CODE", code.to_string()), &d, None);
        assert_eq!(o.code, Some(code), "{}", o.stderr);
        assert_eq!(o.stderr, "", "the host's exit code is passed on silently");
    }
    let o = run(threads_job(&d, &lib, &["-n", "2", "/bin/true"]).env("FAKE_SIGNAL", "11"), &d, None);
    assert_eq!(o.code, Some(139), "{}", o.stderr);
    let lines = o.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(lines[0].starts_with("oxmpi: threads-mode job (pid "), "{}", lines[0]);
    assert!(lines[0].ends_with(") killed by signal 11 (Segmentation fault); ending the job"), "{}", lines[0]);
}

#[test]
fn threads_mode_timeout_and_signal_forwarding() {
    if !have_gcc() {
        eprintln!("skipped: no gcc");
        return;
    }
    let d = TempDir::new("threads-timeout");
    let lib = fake_threads_libdir(&d);
    let o = run(threads_job(&d, &lib, &["--timeout", "1", "-n", "2", "/bin/true"]).env("FAKE_SLEEP", "1"), &d, None);
    assert_eq!(o.code, Some(124), "{}", o.stderr);
    assert_eq!(o.stderr_lines(), vec!["oxmpi: job timed out after 1 s; ending the job"]);
    assert!(o.elapsed < HANG);
    assert_host_gone(&d);

    std::fs::remove_file(d.path().join("pid.host")).unwrap();
    let o = run(threads_job(&d, &lib, &["-n", "2", "/bin/true"]).env("FAKE_SLEEP", "1").env("MPIEXEC_TIMEOUT", "1"), &d, None);
    assert_eq!(o.code, Some(124), "{}", o.stderr);
    assert_host_gone(&d);

    std::fs::remove_file(d.path().join("pid.host")).unwrap();
    let t = Instant::now();
    let child = start(threads_job(&d, &lib, &["-n", "2", "/bin/true"]).env("FAKE_SLEEP", "1"), &d, None);
    let pid_file = d.path().join("pid.host");
    while !pid_file.exists() {
        assert!(t.elapsed() < HANG, "the host did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = finish(child, &d, t);
    assert_eq!(o.code, Some(128 + libc::SIGTERM), "{}", o.stderr);
    assert!(o.elapsed < HANG);
    assert_host_gone(&d);
}

/// The host recorded its pid in $D/pid.host; it must be gone (killed and reaped).
fn assert_host_gone(d: &TempDir) {
    let pid: i32 = d.read("pid.host").trim().parse().unwrap();
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::kill(pid, 0) };
    assert!(rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH), "host pid {pid} was left behind");
}

#[test]
fn mpirun_alias() {
    let d = TempDir::new("mpirun");
    let link = d.path().join("mpirun");
    std::os::unix::fs::symlink(MPIEXEC, &link).unwrap();
    let mut c = Command::new(&link);
    c.env("D", d.path()).env_remove("MPIEXEC_TIMEOUT").env_remove("OXMPI_MODE");
    let o = run(c.args(["-np", "2", "sh", "-c", r#"[ "$OXMPI_RANK" = 1 ] && exit 4; exit 0"#]), &d, None);
    assert_eq!(o.code, Some(4), "{}", o.stderr);
    assert!(o.stderr.contains("rank 1 (pid"));
    let o = run(Command::new(&link).arg("--help"), &d, None);
    assert!(o.stdout.starts_with("Usage: mpirun -n N"), "{}", o.stdout);
    let o = run(Command::new(&link).arg("--bogus"), &d, None);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("Run 'mpirun --help' for usage."));
}

fn signal_launcher(sig: i32) {
    let d = TempDir::new("sig");
    let t = Instant::now();
    let child = start(mpiexec(&d).args(["-n", "3", "sh", "-c", PID_THEN_SLEEP]), &d, None);
    wait_for_files(&d, 3);
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let o = finish(child, &d, t);
    assert_eq!(o.code, Some(128 + sig), "{}", o.stderr);
    assert!(o.elapsed < HANG);
    assert!(o.stderr_lines().len() <= 1, "{}", o.stderr);
    assert_pids_gone(&d, 3);
}

#[test]
fn sigterm_to_launcher_ends_the_job() {
    signal_launcher(libc::SIGTERM);
}

#[test]
fn sigint_to_launcher_ends_the_job() {
    signal_launcher(libc::SIGINT);
}

#[test]
fn sigkill_to_launcher_takes_the_ranks_along() {
    let d = TempDir::new("sigkill");
    let t = Instant::now();
    let child = start(mpiexec(&d).args(["-n", "3", "sh", "-c", PID_THEN_SLEEP]), &d, None);
    wait_for_files(&d, 3);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let o = finish(child, &d, t);
    assert_eq!(o.code, None);
    // PR_SET_PDEATHSIG: the kernel kills the ranks; they get reparented and reaped by init,
    // which may take a moment.
    let t = Instant::now();
    loop {
        let alive = (0..3).any(|r| {
            let pid: i32 = d.read(&format!("pid.{r}")).trim().parse().unwrap();
            // SAFETY: existence check only.
            unsafe { libc::kill(pid, 0) == 0 }
        });
        if !alive {
            break;
        }
        assert!(t.elapsed() < HANG, "ranks outlived a SIGKILLed launcher");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn nothing_left_in_dev_shm() {
    let list = || -> Vec<String> {
        std::fs::read_dir("/dev/shm")
            .map(|it| it.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains("oxmpi")).collect())
            .unwrap_or_default()
    };
    let before = list();
    let d = TempDir::new("shm");
    let o = run(mpiexec(&d).args(["-n", "4", "sh", "-c", "ls /dev/shm > /dev/null"]), &d, None);
    assert_eq!(o.code, Some(0));
    assert_eq!(list(), before);
}

#[test]
fn library_directory_goes_first_in_ld_library_path() {
    let d = TempDir::new("ldpath");
    let o = run(
        mpiexec(&d)
            .args(["-n", "2", "sh", "-c", r#"echo "$LD_LIBRARY_PATH|$LD_PRELOAD""#])
            .env("OXMPI_LIBDIR", "/opt/oxmpi-test/lib")
            .env("LD_LIBRARY_PATH", "/a:/b")
            .env_remove("LD_PRELOAD"),
        &d,
        None,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, "/opt/oxmpi-test/lib:/a:/b|\n/opt/oxmpi-test/lib:/a:/b|\n");
}

/// Builds fake MPI programs with gcc: one NEEDing libmpi.so.40 (Open MPI) and one NEEDing
/// libmpi.so.12 with an RPATH, which must be started with oxmpi preloaded.
#[test]
fn fake_mpi_binaries() {
    if Command::new("gcc").arg("--version").output().map(|o| !o.status.success()).unwrap_or(true) {
        eprintln!("skipped: no gcc");
        return;
    }
    let d = TempDir::new("fake");
    let p = d.path();
    std::fs::write(p.join("lib.c"), "int fake_mpi_symbol(void) { return 1; }\n").unwrap();
    std::fs::write(
        p.join("main.c"),
        "#include <stdio.h>\n#include <stdlib.h>\nint fake_mpi_symbol(void);\nint main(void) { const char *s = getenv(\"LD_PRELOAD\"); printf(\"%s\\n\", s ? s : \"\"); return fake_mpi_symbol() - 1; }\n",
    )
    .unwrap();
    let gcc = |args: &[&str]| {
        let ok = Command::new("gcc").current_dir(p).args(args).status().unwrap().success();
        assert!(ok, "gcc {args:?}");
    };
    for (dir, soname) in [("ompi", "libmpi.so.40"), ("mpich", "libmpi.so.12")] {
        std::fs::create_dir_all(p.join(dir)).unwrap();
        gcc(&["-shared", "-fPIC", &format!("-Wl,-soname,{soname}"), "-o", &format!("{dir}/libmpi.so"), "lib.c"]);
        std::fs::copy(p.join(dir).join("libmpi.so"), p.join(dir).join(soname)).unwrap();
        let rpath = format!("-Wl,-rpath,{}", p.join(dir).display());
        gcc(&["-o", &format!("{dir}_prog"), "main.c", &format!("-L{dir}"), "-lmpi", &rpath]);
    }
    for mode in ["processes", "threads"] {
        let o = run(mpiexec(&d).args(["--mode", mode, "-n", "2", "./ompi_prog"]).current_dir(p), &d, None);
        assert_eq!(o.code, Some(2), "{mode}");
        assert_eq!(
            o.stderr_lines(),
            // cargo's target directory holds no lib/openmpi-abi/libmpi.so.40 (scripts/install.sh makes it)
            vec!["oxmpi: ./ompi_prog was built against Open MPI (libmpi.so.40) and oxmpi's Open MPI ABI library (lib/openmpi-abi/libmpi.so.40) is not installed; run scripts/install.sh PREFIX and use PREFIX/bin/mpiexec"],
            "{mode}"
        );
    }
    // Pretend the fake MPICH library directory is oxmpi's: the RPATH triggers the preload.
    let libdir = p.join("mpich");
    let o = run(mpiexec(&d).args(["-n", "2", "./mpich_prog"]).current_dir(p).env("OXMPI_LIBDIR", &libdir).env_remove("LD_PRELOAD"), &d, None);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let want = format!("{}\n", libdir.join("libmpi.so.12").display());
    assert_eq!(o.stdout, want.repeat(2));
    let o = run(
        mpiexec(&d).args(["-n", "1", "./mpich_prog"]).current_dir(p).env("OXMPI_LIBDIR", &libdir).env("OXMPI_PRELOAD", "0").env_remove("LD_PRELOAD"),
        &d,
        None,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, "\n");
}
