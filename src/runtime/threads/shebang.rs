//! `#!` scripts in threads mode. A threads-mode rank is an instance of an ELF program loaded into
//! the host, so a script cannot be loaded itself: it runs as its interpreter's program with the
//! script as an argument, which is what execve(2) does for a process (Linux's `binfmt_script`).
//! mpiexec uses this for the job's program and `MPI_Comm_spawn` for the programs it starts.
//!
//! The rules are the kernel's: the first line (at most `LINE_MAX` bytes) is `#!INTERPRETER [ARG]`,
//! where ARG is everything after the interpreter with the surrounding blanks removed, one argument
//! however many words it has; the new argv is `[INTERPRETER, ARG?, SCRIPT, original argv[1..]]`;
//! an interpreter may itself be a script, at most `MAX_DEPTH` levels deep. One addition:
//! `#!/usr/bin/env NAME` (and `env -S NAME ARGS`) is resolved here by searching PATH for NAME,
//! because `env` as a rank would exec and replace the whole host process.
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Bytes of the first line the kernel reads (`BINPRM_BUF_SIZE`).
const LINE_MAX: usize = 256;
/// Interpreter levels the kernel follows (a script whose interpreter is a script, ...).
const MAX_DEPTH: usize = 4;

/// An ELF program and the arguments that go before the user's argv[1..].
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    /// The file to load: the script's interpreter (or the program itself when it is no script).
    pub program: PathBuf,
    /// argv[0] and the arguments in front of the original argv[1..]: for a script,
    /// `[INTERPRETER, ARG?, SCRIPT]`; for a program, `[argv0]`.
    pub head: Vec<OsString>,
}

/// The first line of a `#!` file split as the kernel splits it: interpreter and optional argument.
/// `None` when `bytes` does not start with `#!`.
fn parse(bytes: &[u8]) -> Option<Result<(Vec<u8>, Option<Vec<u8>>), &'static str>> {
    let rest = bytes.strip_prefix(b"#!")?;
    // A line that goes on past what the kernel reads is refused unless the interpreter's name
    // ends within it (the cut-off argument's tail is dropped then; so do we).
    let line = rest.iter().position(|&b| b == b'\n').map_or(rest, |end| &rest[..end]);
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let line = &line[line.iter().position(|b| !blank(b)).unwrap_or(line.len())..];
    let end = line.iter().position(blank).unwrap_or(line.len());
    if end == 0 {
        return Some(Err("its #! line names no interpreter"));
    }
    if end == line.len() && bytes.len() >= LINE_MAX && !rest.contains(&b'\n') {
        return Some(Err("its #! line is longer than the 256 bytes the kernel reads"));
    }
    let (interp, arg) = line.split_at(end);
    let arg = arg.trim_ascii();
    Some(Ok((interp.to_vec(), (!arg.is_empty()).then(|| arg.to_vec()))))
}

/// The first `LINE_MAX` bytes of `path`.
fn head_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let mut buf = Vec::with_capacity(LINE_MAX);
    std::fs::File::open(path)
        .and_then(|f| f.take(LINE_MAX as u64).read_to_end(&mut buf))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(buf)
}

/// `name` searched in `path_var`'s directories (an executable regular file), as env(1) does.
fn search_path(name: &[u8], path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let dirs = path_var.map(|p| p.as_bytes().to_vec()).unwrap_or_else(|| b"/usr/local/bin:/usr/bin:/bin".to_vec());
    dirs.split(|&b| b == b':')
        .map(|d| if d.is_empty() { PathBuf::from(".") } else { PathBuf::from(std::ffi::OsStr::from_bytes(d)) })
        .map(|d| d.join(std::ffi::OsStr::from_bytes(name)))
        .find(|p| executable(p))
}

/// Whether `p` is a regular file this process may execute (access(2) X_OK: the caller's IDs and
/// the file system's `noexec`, which mode bits alone do not tell). Also used by `MPI_Comm_spawn`.
pub fn executable(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else { return false };
    // SAFETY: access with a valid NUL-terminated path.
    p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
}

/// `env`'s arguments from a `#!/usr/bin/env ARG` line: the command and its arguments. Plain ARG
/// is one name (the kernel passes the whole rest of the line as one argument, so
/// `env python3 -u` looks for a program called "python3 -u", and so do we); `-S` splits it.
fn env_command(arg: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let words: Vec<Vec<u8>> = if let Some(split) = arg.strip_prefix(b"-S") {
        split.split(|b| *b == b' ' || *b == b'\t').filter(|w| !w.is_empty()).map(<[u8]>::to_vec).collect()
    } else {
        vec![arg.to_vec()]
    };
    match words.first() {
        None => Err("its #! line runs env with no command".into()),
        Some(w) if w.starts_with(b"-") => Err(format!(
            "its #! line passes the option '{}' to env, which threads mode does not interpret (it understands `env NAME` and `env -S NAME ARGS`)",
            String::from_utf8_lossy(w)
        )),
        Some(w) if w.contains(&b'=') => Err(format!(
            "its #! line makes env set '{}': threads-mode ranks share one environment; set it before mpiexec",
            String::from_utf8_lossy(w)
        )),
        Some(_) => Ok(words),
    }
}

/// How to run `program` (already found) with argv[0] `argv0` as a threads-mode rank: the program
/// itself, or for a `#!` script its interpreter with the script as an argument. `path_var` is
/// the PATH `#!/usr/bin/env NAME` searches. The error is one line naming what is wrong.
pub fn resolve(program: &Path, argv0: &std::ffi::OsStr, path_var: Option<&std::ffi::OsStr>) -> Result<Command, String> {
    let mut cmd = Command { program: program.to_path_buf(), head: vec![argv0.to_os_string()] };
    for _ in 0..=MAX_DEPTH {
        let bytes = head_bytes(&cmd.program)?;
        let Some(line) = parse(&bytes) else { return Ok(cmd) };
        let shown = cmd.program.display().to_string();
        let (interp, arg) = line.map_err(|e| format!("{shown}: {e}"))?;
        // The script's argv[0] gives way to the interpreter line, as in execve(2).
        let script = cmd.program.clone().into_os_string();
        let mut head: Vec<OsString> = vec![OsString::from_vec(interp.clone())];
        head.extend(arg.clone().map(OsString::from_vec));
        head.push(script);
        head.extend(cmd.head.drain(..).skip(1));
        let interp_path = PathBuf::from(OsString::from_vec(interp));
        if interp_path.file_name().is_some_and(|n| n == "env") {
            let words = env_command(arg.as_deref().unwrap_or_default()).map_err(|e| format!("{shown}: {e}"))?;
            let found = search_path(&words[0], path_var).ok_or_else(|| {
                format!("{shown}: its #! line runs '{}' through env, and PATH has no such program", String::from_utf8_lossy(&words[0]))
            })?;
            // env execs NAME with argv [NAME, ARGS..., SCRIPT, ...]: drop env and its argument.
            let skip = 1 + usize::from(arg.is_some());
            let mut h: Vec<OsString> = words.into_iter().map(OsString::from_vec).collect();
            h.extend(head.drain(skip..));
            cmd = Command { program: found, head: h };
        } else {
            if !executable(&interp_path) {
                return Err(format!("{shown}: its #! interpreter {} is not an executable file", interp_path.display()));
            }
            cmd = Command { program: interp_path, head };
        }
    }
    Err(format!("{}: more than {MAX_DEPTH} levels of #! interpreters", program.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn first_line_split_as_the_kernel_splits_it() {
        assert_eq!(parse(b"\x7fELF..."), None);
        assert_eq!(parse(b"#!/bin/sh\necho"), Some(Ok((b"/bin/sh".to_vec(), None))));
        assert_eq!(parse(b"#! \t/bin/sh  -e -x \t\nx"), Some(Ok((b"/bin/sh".to_vec(), Some(b"-e -x".to_vec())))));
        assert_eq!(parse(b"#!/bin/sh"), Some(Ok((b"/bin/sh".to_vec(), None))));
        assert!(parse(b"#!  \n").unwrap().is_err());
        let long = [b"#!/".as_slice(), &[b'a'; 300]].concat();
        assert!(parse(&long[..LINE_MAX]).unwrap().unwrap_err().contains("256 bytes"));
    }

    #[test]
    fn scripts_resolve_to_their_interpreter() {
        let dir = std::env::temp_dir().join(format!("oxmpi-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        // A program is itself.
        let c = resolve(&sh, "sh".as_ref(), None).unwrap();
        assert_eq!(c, Command { program: sh.clone(), head: os(&["sh"]) });
        // A script: [interp, arg, script]; the script's argv[0] is dropped.
        let s = script(&dir, "a.sh", &format!("#!{} -e\necho\n", sh.display()));
        let c = resolve(&s, "./a.sh".as_ref(), None).unwrap();
        assert_eq!(c.program, sh);
        assert_eq!(c.head, os(&[sh.to_str().unwrap(), "-e", s.to_str().unwrap()]));
        // A script whose interpreter is a script.
        let t = script(&dir, "b", &format!("#!{}\n", s.display()));
        let c = resolve(&t, "b".as_ref(), None).unwrap();
        assert_eq!(c.program, sh);
        assert_eq!(c.head, os(&[sh.to_str().unwrap(), "-e", s.to_str().unwrap(), t.to_str().unwrap()]));
        // env NAME searches the given PATH; env -S splits.
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(&sh, bin.join("mysh")).ok();
        let e = script(&dir, "c", "#!/usr/bin/env mysh\n");
        let c = resolve(&e, "c".as_ref(), Some(bin.as_os_str())).unwrap();
        assert_eq!((c.program.clone(), c.head), (bin.join("mysh"), os(&["mysh", e.to_str().unwrap()])));
        let e2 = script(&dir, "d", "#!/usr/bin/env -S mysh -u  -x\n");
        let c = resolve(&e2, "d".as_ref(), Some(bin.as_os_str())).unwrap();
        assert_eq!(c.head, os(&["mysh", "-u", "-x", e2.to_str().unwrap()]));
        // Refusals, one line each.
        let e3 = script(&dir, "e", "#!/usr/bin/env nosuchprogram-xyz\n");
        assert!(resolve(&e3, "e".as_ref(), Some(bin.as_os_str())).unwrap_err().contains("PATH has no such program"));
        let e4 = script(&dir, "f", "#!/usr/bin/env A=1 mysh\n");
        assert!(resolve(&e4, "f".as_ref(), Some(bin.as_os_str())).unwrap_err().contains("share one environment"));
        let e5 = script(&dir, "g", "#!/nonexistent/interp\n");
        assert!(resolve(&e5, "g".as_ref(), None).unwrap_err().contains("is not an executable file"));
        let e6 = script(&dir, "h", &format!("#!{}\n", dir.join("h").display()));
        assert!(resolve(&e6, "h".as_ref(), None).unwrap_err().contains("levels of #! interpreters"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
