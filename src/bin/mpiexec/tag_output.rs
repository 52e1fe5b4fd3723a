//! `mpiexec -l`: every line a rank writes to its standard output or error comes out prefixed
//! with `[RANK] ` (hydra's form), on mpiexec's own stdout or stderr. Processes mode: each rank's
//! two streams are pipes, read by a thread each that writes whole lines, so the lines of
//! different ranks do not mix. (Threads-mode ranks share their host's descriptors: refused there.)
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// Makes the rank's standard output and error pipes (before spawning `cmd`).
pub fn pipe(cmd: &mut Command) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
}

/// Copies `from` to `to` line by line, each line prefixed.
fn copy(from: impl Read, prefix: String, mut to: impl FnMut(&[u8])) {
    let mut r = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let mut out = Vec::with_capacity(prefix.len() + line.len() + 1);
                out.extend_from_slice(prefix.as_bytes());
                out.extend_from_slice(&line);
                if !line.ends_with(b"\n") {
                    out.push(b'\n');
                }
                to(&out);
            }
        }
    }
}

/// Starts the copying threads for rank `rank`'s pipes (taken from `child`).
pub fn start(child: &mut Child, rank: usize) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    if let Some(o) = child.stdout.take() {
        let p = format!("[{rank}] ");
        threads.extend(std::thread::Builder::new().name(format!("out-{rank}")).spawn(move || copy(o, p, |b| {
            let mut s = std::io::stdout().lock();
            let _ = s.write_all(b);
            let _ = s.flush();
        })));
    }
    if let Some(e) = child.stderr.take() {
        let p = format!("[{rank}] ");
        threads.extend(std::thread::Builder::new().name(format!("err-{rank}")).spawn(move || copy(e, p, |b| {
            let _ = std::io::stderr().lock().write_all(b);
        })));
    }
    threads
}

/// Waits for the copying threads (the ranks have ended, so their pipes are at end of file
/// unless a process they started still holds them: then up to a second).
pub fn finish(threads: Vec<JoinHandle<()>>) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(1);
    for t in threads {
        while !t.is_finished() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if t.is_finished() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed() {
        let mut got = Vec::new();
        copy(&b"a\nbc\nlast"[..], "[3] ".into(), |b| got.extend_from_slice(b));
        assert_eq!(got, b"[3] a\n[3] bc\n[3] last\n");
    }
}
