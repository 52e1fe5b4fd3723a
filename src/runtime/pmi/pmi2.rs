//! PMI-2 client: the protocol of `srun --mpi=pmi2`, which hydra also answers on `PMI_FD`
//! (chosen with `OXMPI_PMI=2`). A message is a 6-character decimal length, space padded, then
//! `cmd=NAME;key=value;...;`. As in `pmi1`, requests are serialised and `abort` writes alone.
use super::wire1::check_token;
use super::{proto_err, Pmi};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

pub struct Pmi2 {
    conn: Mutex<File>,
    fd: RawFd,
    rank: usize,
    size: usize,
    appnum: i32,
}

/// Frames `cmd=NAME;k=v;...;` with its length header.
pub fn frame(cmd: &str, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = format!("cmd={cmd};");
    for (k, v) in fields {
        body.push_str(&format!("{k}={v};"));
    }
    format!("{:<6}{body}", body.len()).into_bytes()
}

/// Splits a message body into its fields (the first being `cmd`).
pub fn parse(body: &str) -> io::Result<Vec<(String, String)>> {
    let fields: Vec<(String, String)> = body
        .split(';')
        .filter(|f| !f.is_empty())
        .map(|f| f.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).ok_or_else(|| proto_err(format!("PMI-2 message '{body}': field '{f}' has no '='"))))
        .collect::<Result<_, _>>()?;
    if fields.first().map(|(k, _)| k.as_str()) != Some("cmd") {
        return Err(proto_err(format!("PMI-2 message '{body}' does not start with cmd=")));
    }
    Ok(fields)
}

fn field<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn number<T: std::str::FromStr>(fields: &[(String, String)], key: &str) -> io::Result<T> {
    let v = field(fields, key).ok_or_else(|| proto_err(format!("PMI-2 reply '{}' has no '{key}'", fields[0].1)))?;
    v.parse().map_err(|_| proto_err(format!("PMI-2 reply '{}' has {key}={v}, not a number", fields[0].1)))
}

/// Sends one request and reads its reply, which must be `cmd=<cmd>-response` with rc=0.
fn exchange(conn: &mut File, cmd: &str, fields: &[(&str, &str)]) -> io::Result<Vec<(String, String)>> {
    conn.write_all(&frame(cmd, fields))?;
    let closed = |e: io::Error| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            io::Error::new(io::ErrorKind::UnexpectedEof, format!("the launcher closed the PMI connection (waiting for the reply to cmd={cmd})"))
        } else {
            e
        }
    };
    let mut header = [0u8; 6];
    conn.read_exact(&mut header).map_err(closed)?;
    let len: usize = std::str::from_utf8(&header).ok().and_then(|h| h.trim().parse().ok()).ok_or_else(|| proto_err(format!("PMI-2: bad length header {:?}", String::from_utf8_lossy(&header))))?;
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).map_err(closed)?;
    let body = String::from_utf8(body).map_err(|_| proto_err("PMI-2: reply is not text"))?;
    let reply = parse(&body)?;
    let want = format!("{cmd}-response");
    if reply[0].1 != want {
        return Err(proto_err(format!("PMI-2: the launcher answered 'cmd={}' to cmd={cmd} (expected cmd={want})", reply[0].1)));
    }
    match field(&reply, "rc") {
        None | Some("0") => Ok(reply),
        Some(rc) => Err(proto_err(format!("PMI-2 cmd={cmd} failed (rc={rc}{})", field(&reply, "errmsg").map(|m| format!(", {m}")).unwrap_or_default()))),
    }
}

/// Reads one newline-terminated line (the PMI-1 form the session starts with), byte by byte so
/// that nothing after it is consumed.
fn read_line(conn: &mut File) -> io::Result<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 1024 {
        if conn.read(&mut b)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the launcher closed the PMI connection (waiting for the reply to cmd=init)"));
        }
        if b[0] == b'\n' {
            return String::from_utf8(line).map_err(|_| proto_err("PMI-2: the reply to cmd=init is not text"));
        }
        line.push(b[0]);
    }
    Err(proto_err("PMI-2: the reply to cmd=init has no end"))
}

impl Pmi2 {
    /// Starts a session over `fd` (`PMI_FD`) as rank `rank` (`PMI_RANK`) of job `jobid`
    /// (`PMI_JOBID`, which Slurm requires). As MPICH's PMI-2 client does, the session opens
    /// with a PMI-1 line asking for version 2 (Slurm's server decides the protocol from it).
    pub fn start(fd: OwnedFd, rank: usize, jobid: Option<&str>) -> io::Result<Pmi2> {
        let raw = fd.as_raw_fd();
        let mut conn = File::from(fd);
        conn.write_all(b"cmd=init pmi_version=2 pmi_subversion=0\n")?;
        let hello = super::wire1::parse(&read_line(&mut conn)?)?;
        if hello.cmd != "response_to_init" || hello.rc()? != 0 || hello.get("pmi_version") != Some("2") {
            return Err(proto_err(format!("PMI-2: the launcher refused PMI version 2 (cmd={} rc={} pmi_version={})", hello.cmd, hello.get("rc").unwrap_or("?"), hello.get("pmi_version").unwrap_or("?"))));
        }
        let r = rank.to_string();
        let mut fields = vec![("pmirank", r.as_str()), ("threaded", "FALSE")];
        if let Some(j) = jobid {
            check_token("PMI_JOBID", j)?;
            fields.insert(0, ("pmijobid", j));
        }
        let init = exchange(&mut conn, "fullinit", &fields)?;
        let (rank, size): (usize, usize) = (number(&init, "rank")?, number(&init, "size")?);
        if size == 0 || rank >= size {
            return Err(proto_err(format!("PMI-2: rank {rank} of {size} ranks makes no sense")));
        }
        // Slurm says -1 when srun runs one program (no --multi-prog): that program is the 0th.
        let appnum = number::<i32>(&init, "appnum").unwrap_or(0).max(0);
        Ok(Pmi2 { conn: Mutex::new(conn), fd: raw, rank, size, appnum })
    }

    fn request(&self, cmd: &str, fields: &[(&str, &str)]) -> io::Result<Vec<(String, String)>> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        exchange(&mut conn, cmd, fields)
    }

    fn found(reply: &[(String, String)]) -> io::Result<Option<String>> {
        match field(reply, "found") {
            Some("TRUE") => field(reply, "value").map(|v| Some(v.to_string())).ok_or_else(|| proto_err("PMI-2: found=TRUE without a value")),
            _ => Ok(None),
        }
    }
}

impl Pmi for Pmi2 {
    fn protocol(&self) -> &'static str {
        "PMI-2"
    }
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn appnum(&self) -> i32 {
        self.appnum
    }

    fn put(&self, key: &str, value: &str) -> io::Result<()> {
        check_token("key", key)?;
        check_token("value", value)?;
        self.request("kvs-put", &[("key", key), ("value", value)]).map(|_| ())
    }

    fn fence(&self) -> io::Result<()> {
        self.request("kvs-fence", &[]).map(|_| ())
    }

    fn get(&self, owner: usize, key: &str) -> io::Result<Option<String>> {
        check_token("key", key)?;
        let src = owner.to_string();
        // An empty jobid means this job.
        Self::found(&self.request("kvs-get", &[("jobid", ""), ("srcid", &src), ("key", key)])?)
    }

    fn job_attr(&self, key: &str) -> io::Result<Option<String>> {
        check_token("key", key)?;
        Self::found(&self.request("info-getjobattr", &[("key", key)])?)
    }

    fn abort(&self, _code: i32, message: &str) {
        // The exit status is the launcher's to choose; the message stays printable.
        let msg: String = message.chars().map(|c| if c == ';' || c.is_control() { ' ' } else { c }).take(512).collect();
        let bytes = frame("abort", &[("isworld", "TRUE"), ("msg", &msg)]);
        // SAFETY: writing a local buffer to the connection's descriptor, which `self` keeps open.
        unsafe { libc::write(self.fd, bytes.as_ptr() as *const libc::c_void, bytes.len()) };
    }

    fn finalize(&self) -> io::Result<()> {
        self.request("finalize", &[]).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    /// A fake PMI-2 server: for each (expected request prefix, reply body), reads one framed
    /// request, checks it, answers (no answer when the reply is empty).
    fn fake_server(script: Vec<(&'static str, &'static str)>) -> (OwnedFd, std::thread::JoinHandle<()>) {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || {
            for (want, reply) in script {
                if want.starts_with("cmd=init ") {
                    let mut line = Vec::new();
                    let mut b = [0u8; 1];
                    while theirs.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
                        line.push(b[0]);
                    }
                    assert_eq!(String::from_utf8(line).unwrap(), want.trim_end());
                    theirs.write_all(reply.as_bytes()).unwrap();
                    continue;
                }
                let mut hdr = [0u8; 6];
                if theirs.read_exact(&mut hdr).is_err() {
                    return;
                }
                let n: usize = std::str::from_utf8(&hdr).unwrap().trim().parse().unwrap();
                let mut body = vec![0u8; n];
                theirs.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                assert!(body.starts_with(want), "server expected '{want}', got '{body}'");
                if !reply.is_empty() {
                    theirs.write_all(format!("{:<6}{reply}", reply.len()).as_bytes()).unwrap();
                }
            }
        });
        (OwnedFd::from(ours), h)
    }

    #[test]
    fn frames_and_parses() {
        assert_eq!(frame("kvs-fence", &[]), b"14    cmd=kvs-fence;".to_vec());
        let f = parse("cmd=kvs-get-response;found=TRUE;value=a=b;rc=0;").unwrap();
        assert_eq!(field(&f, "value"), Some("a=b"));
        assert!(parse("key=x;cmd=y;").is_err());
        assert!(parse("cmd=x;junk;").is_err());
    }

    #[test]
    fn session() {
        let (fd, server) = fake_server(vec![
            ("cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"),
            ("cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;", "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=3;appnum=2;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
            ("cmd=info-getjobattr;key=PMI_process_mapping;", "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1,3));rc=0;"),
            ("cmd=kvs-put;key=k;value=v;", "cmd=kvs-put-response;rc=0;"),
            ("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;"),
            ("cmd=kvs-get;jobid=;srcid=0;key=k;", "cmd=kvs-get-response;found=TRUE;value=v;rc=0;"),
            ("cmd=kvs-get;jobid=;srcid=0;key=x;", "cmd=kvs-get-response;found=FALSE;rc=0;"),
            ("cmd=kvs-put;key=a;value=b;", "cmd=kvs-put-response;rc=1;errmsg=full;"),
            ("cmd=finalize;", "cmd=finalize-response;rc=0;"),
            ("cmd=abort;isworld=TRUE;msg=bye a b", ""),
        ]);
        let p = Pmi2::start(fd, 1, Some("7.0")).unwrap();
        assert_eq!((p.rank(), p.size(), p.appnum()), (1, 3, 2));
        assert_eq!(p.job_attr("PMI_process_mapping").unwrap().as_deref(), Some("(vector,(0,1,3))"));
        p.put("k", "v").unwrap();
        p.fence().unwrap();
        assert_eq!(p.get(0, "k").unwrap().as_deref(), Some("v"));
        assert_eq!(p.get(0, "x").unwrap(), None);
        assert!(p.put("a", "b").unwrap_err().to_string().contains("rc=1, full"));
        p.finalize().unwrap();
        p.abort(3, "bye;a\nb");
        drop(p);
        server.join().unwrap();
    }

    #[test]
    fn hang_up_is_an_error() {
        let hello = ("cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
        let (fd, server) = fake_server(vec![hello, ("cmd=fullinit", "")]);
        let e = Pmi2::start(fd, 0, None).err().unwrap();
        assert!(e.to_string().contains("closed the PMI connection"), "{e}");
        server.join().unwrap();
        let (fd, server) = fake_server(vec![("cmd=init pmi_version=2 pmi_subversion=0\n", "")]);
        let e = Pmi2::start(fd, 0, None).err().unwrap();
        assert!(e.to_string().contains("closed the PMI connection"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn slurm_session() {
        // Slurm's answers: version 2 agreed on in the PMI-1 form, appnum -1 for one program.
        let (fd, server) = fake_server(vec![
            ("cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"),
            ("cmd=fullinit;pmijobid=4.0;pmirank=0;threaded=FALSE;", "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=2;appnum=-1;spawner-jobid=;debugged=FALSE;pmiverbose=FALSE;"),
        ]);
        let p = Pmi2::start(fd, 0, Some("4.0")).unwrap();
        assert_eq!((p.rank(), p.size(), p.appnum()), (0, 2, 0));
        drop(p);
        server.join().unwrap();
        // A server that speaks only version 1 is told apart from one that hangs up.
        let (fd, server) = fake_server(vec![("cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n")]);
        let e = Pmi2::start(fd, 0, None).err().unwrap();
        assert!(e.to_string().contains("refused PMI version 2"), "{e}");
        server.join().unwrap();
    }
}
