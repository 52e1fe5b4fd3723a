//! PMI-1 client: the line protocol of MPICH's hydra (`mpiexec.mpich`), also understood by
//! Slurm's `srun --mpi=pmi2`. The launcher either hands the rank a connected socket
//! (`PMI_FD`, with `PMI_RANK` and `PMI_SIZE`), or a TCP address to connect to (`PMI_PORT`) and an
//! id to introduce itself with (`PMI_ID`), after which it sends the rank and size.
//!
//! Every command is one request line answered by one reply line, except `abort`, which gets no
//! reply (the launcher ends the job). Requests are serialised by a mutex; `abort` bypasses it
//! and writes its line with one write(2), so it works even while another thread waits for a
//! reply (say, in a fence).
use super::wire1::{self, Line};
use super::{proto_err, Pmi};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

pub struct Pmi1 {
    conn: Mutex<BufReader<File>>,
    /// The connection's descriptor, for `abort`'s unlocked write.
    fd: RawFd,
    rank: usize,
    size: usize,
    appnum: i32,
    kvsname: String,
    keylen_max: usize,
    vallen_max: usize,
}

/// Sends `line` and reads one reply line.
fn exchange(conn: &mut BufReader<File>, line: &str) -> io::Result<Line> {
    conn.get_ref().write_all(line.as_bytes())?;
    read_line(conn, line.trim_end())
}

/// Reads one reply line (`asked` names the request, for messages).
fn read_line(conn: &mut BufReader<File>, asked: &str) -> io::Result<Line> {
    let mut text = String::new();
    if conn.read_line(&mut text)? == 0 || !text.ends_with('\n') {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("the launcher closed the PMI connection (waiting for the reply to '{asked}')")));
    }
    wire1::parse(text.trim_end_matches(['\n', '\r']))
}

/// Checks that `reply` is the `cmd=want` answer to `asked`.
fn expect(reply: Line, want: &str, asked: &str) -> io::Result<Line> {
    if reply.cmd != want {
        return Err(proto_err(format!("PMI: the launcher answered 'cmd={}' to '{asked}' (expected cmd={want})", reply.cmd)));
    }
    Ok(reply)
}

fn number<T: std::str::FromStr>(l: &Line, key: &str) -> io::Result<T> {
    let v = l.need(key)?;
    v.parse().map_err(|_| proto_err(format!("PMI reply 'cmd={}' has {key}={v}, not a number", l.cmd)))
}

impl Pmi1 {
    /// Starts a session over the connected stream `fd`. `port_id` is `PMI_ID` when the
    /// connection was made to `PMI_PORT` (the launcher then tells the rank and size); otherwise
    /// `rank_size` must give them (from `PMI_RANK` and `PMI_SIZE`).
    pub fn start(fd: OwnedFd, port_id: Option<&str>, rank_size: Option<(usize, usize)>) -> io::Result<Pmi1> {
        let raw = fd.as_raw_fd();
        let mut conn = BufReader::new(File::from(fd));
        let (mut rank, mut size) = (rank_size.map(|r| r.0), rank_size.map(|r| r.1));
        if let Some(id) = port_id {
            let asked = wire1::format("initack", &[("pmiid", id)]);
            expect(exchange(&mut conn, &asked)?, "initack", asked.trim_end())?;
            // Then `cmd=set` lines for size, rank and debug, in that order.
            for _ in 0..3 {
                let l = expect(read_line(&mut conn, asked.trim_end())?, "set", asked.trim_end())?;
                if l.get("size").is_some() {
                    size = Some(number(&l, "size")?);
                } else if l.get("rank").is_some() {
                    rank = Some(number(&l, "rank")?);
                }
            }
        }
        let (Some(rank), Some(size)) = (rank, size) else {
            return Err(proto_err("PMI: the launcher did not tell this process its rank and size"));
        };
        if size == 0 || rank >= size {
            return Err(proto_err(format!("PMI: rank {rank} of {size} ranks makes no sense")));
        }
        let asked = wire1::format("init", &[("pmi_version", "1"), ("pmi_subversion", "1")]);
        let l = expect(exchange(&mut conn, &asked)?, "response_to_init", asked.trim_end())?;
        if l.rc()? != 0 {
            return Err(proto_err(format!("PMI: the launcher refused PMI version 1.1 (rc={})", l.rc()?)));
        }
        let asked = wire1::format("get_maxes", &[]);
        let maxes = expect(exchange(&mut conn, &asked)?, "maxes", asked.trim_end())?;
        let asked = wire1::format("get_appnum", &[]);
        // Slurm says -1 when srun runs one program (no --multi-prog): that program is the 0th.
        let appnum = number::<i32>(&expect(exchange(&mut conn, &asked)?, "appnum", asked.trim_end())?, "appnum")?.max(0);
        let asked = wire1::format("get_my_kvsname", &[]);
        let kvsname = expect(exchange(&mut conn, &asked)?, "my_kvsname", asked.trim_end())?.need("kvsname")?.to_string();
        Ok(Pmi1 {
            fd: raw,
            rank,
            size,
            appnum,
            kvsname,
            keylen_max: number(&maxes, "keylen_max")?,
            vallen_max: number(&maxes, "vallen_max")?,
            conn: Mutex::new(conn),
        })
    }

    /// One request, one reply of command `want`.
    fn request(&self, cmd: &str, fields: &[(&str, &str)], want: &str) -> io::Result<Line> {
        let line = wire1::format(cmd, fields);
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        expect(exchange(&mut conn, &line)?, want, line.trim_end())
    }
}

impl Pmi for Pmi1 {
    fn protocol(&self) -> &'static str {
        "PMI-1"
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
        wire1::check_token("key", key)?;
        wire1::check_token("value", value)?;
        if key.len() > self.keylen_max || value.len() > self.vallen_max {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("PMI key '{key}' or its value is longer than the launcher takes ({} / {} bytes)", self.keylen_max, self.vallen_max)));
        }
        let l = self.request("put", &[("kvsname", &self.kvsname), ("key", key), ("value", value)], "put_result")?;
        match l.rc()? {
            0 => Ok(()),
            rc => Err(proto_err(format!("PMI put of '{key}' failed (rc={rc}, {})", l.get("msg").unwrap_or("no message")))),
        }
    }

    fn fence(&self) -> io::Result<()> {
        self.request("barrier_in", &[], "barrier_out").map(|_| ())
    }

    fn get(&self, _owner: usize, key: &str) -> io::Result<Option<String>> {
        wire1::check_token("key", key)?;
        let l = self.request("get", &[("kvsname", &self.kvsname), ("key", key)], "get_result")?;
        Ok(if l.rc()? == 0 { Some(l.need("value")?.to_string()) } else { None })
    }

    fn job_attr(&self, key: &str) -> io::Result<Option<String>> {
        // PMI-1 launchers publish their job attributes (PMI_process_mapping) in the job's KVS.
        self.get(0, key)
    }

    fn abort(&self, code: i32, _message: &str) {
        let line = wire1::format("abort", &[("exitcode", &code.to_string())]);
        // SAFETY: writing a local buffer to the connection's descriptor, which `self` keeps open.
        unsafe { libc::write(self.fd, line.as_ptr() as *const libc::c_void, line.len()) };
    }

    fn abort_read(&self, until: std::time::Instant) {
        loop {
            let mut unread: libc::c_int = 0;
            // SAFETY: TIOCOUTQ (SIOCOUTQ) stores an int into the local: on a Unix or TCP socket,
            // the bytes written that the launcher has not read yet.
            let ok = unsafe { libc::ioctl(self.fd, libc::TIOCOUTQ, &mut unread) } == 0;
            if !ok || unread <= 0 || std::time::Instant::now() >= until {
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    fn finalize(&self) -> io::Result<()> {
        self.request("finalize", &[], "finalize_ack").map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;

    /// A fake launcher on the other end of a socketpair: answers each request line it expects
    /// (`script`: request prefix, reply) in order, then returns what it was sent.
    fn fake_server(script: Vec<(&'static str, &'static str)>) -> (OwnedFd, std::thread::JoinHandle<Vec<String>>) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || {
            let mut r = BufReader::new(theirs.try_clone().unwrap());
            let mut w = theirs;
            let mut seen = Vec::new();
            for (want, reply) in script {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap() == 0 {
                    break;
                }
                assert!(line.starts_with(want), "server expected '{want}', got '{line}'");
                seen.push(line.trim_end().to_string());
                if !reply.is_empty() {
                    w.write_all(reply.as_bytes()).unwrap();
                }
            }
            seen
        });
        (OwnedFd::from(ours), h)
    }

    const HANDSHAKE: [(&str, &str); 4] = [
        ("cmd=init pmi_version=1 pmi_subversion=1", "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"),
        ("cmd=get_maxes", "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"),
        ("cmd=get_appnum", "cmd=appnum appnum=3\n"),
        ("cmd=get_my_kvsname", "cmd=my_kvsname kvsname=kvs_42_0\n"),
    ];

    #[test]
    fn slurm_appnum_minus_one_is_the_first_program() {
        let mut script = HANDSHAKE.to_vec();
        script[2].1 = "cmd=appnum rc=0 appnum=-1\n";
        let (fd, server) = fake_server(script);
        let p = Pmi1::start(fd, None, Some((0, 2))).unwrap();
        assert_eq!(p.appnum(), 0);
        drop(p);
        server.join().unwrap();
    }

    #[test]
    fn session_over_pmi_fd() {
        let mut script = HANDSHAKE.to_vec();
        script.extend([
            ("cmd=put kvsname=kvs_42_0 key=oxmpi-seg value=/proc/7/fd/3", "cmd=put_result rc=0 msg=success\n"),
            ("cmd=barrier_in", "cmd=barrier_out\n"),
            ("cmd=get kvsname=kvs_42_0 key=oxmpi-seg", "cmd=get_result rc=0 msg=success value=/proc/7/fd/3\n"),
            ("cmd=get kvsname=kvs_42_0 key=nope", "cmd=get_result rc=-1 msg=key_nope_not_found value=unknown\n"),
            ("cmd=finalize", "cmd=finalize_ack\n"),
            ("cmd=abort exitcode=7", ""),
        ]);
        let (fd, server) = fake_server(script);
        let p = Pmi1::start(fd, None, Some((1, 2))).unwrap();
        assert_eq!((p.rank(), p.size(), p.appnum()), (1, 2, 3));
        p.put("oxmpi-seg", "/proc/7/fd/3").unwrap();
        p.fence().unwrap();
        assert_eq!(p.get(0, "oxmpi-seg").unwrap().as_deref(), Some("/proc/7/fd/3"));
        assert_eq!(p.get(0, "nope").unwrap(), None);
        assert!(p.put("a b", "x").is_err());
        assert!(p.put("k", &"x".repeat(1025)).is_err());
        p.finalize().unwrap();
        p.abort(7, "bye");
        drop(p);
        assert_eq!(server.join().unwrap().len(), 10);
    }

    #[test]
    fn session_over_pmi_port() {
        let mut script = vec![("cmd=initack pmiid=5", "cmd=initack\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n")];
        script.extend(HANDSHAKE);
        let (fd, server) = fake_server(script);
        let p = Pmi1::start(fd, Some("5"), None).unwrap();
        assert_eq!((p.rank(), p.size()), (2, 4));
        drop(p);
        server.join().unwrap();
    }

    #[test]
    fn errors_are_reported_not_hung() {
        // Launcher refuses the version.
        let (fd, server) = fake_server(vec![("cmd=init", "cmd=response_to_init rc=-1\n")]);
        let e = Pmi1::start(fd, None, Some((0, 1))).err().unwrap();
        assert!(e.to_string().contains("refused PMI version"), "{e}");
        server.join().unwrap();
        // Launcher hangs up mid-way.
        let (fd, server) = fake_server(vec![("cmd=init", "")]);
        let e = Pmi1::start(fd, None, Some((0, 1))).err().unwrap();
        assert!(e.to_string().contains("closed the PMI connection"), "{e}");
        server.join().unwrap();
        // A reply to another question.
        let (fd, server) = fake_server(vec![("cmd=init", "cmd=barrier_out\n")]);
        let e = Pmi1::start(fd, None, Some((0, 1))).err().unwrap();
        assert!(e.to_string().contains("expected cmd=response_to_init"), "{e}");
        server.join().unwrap();
        // Nonsense rank.
        let (fd, server) = fake_server(vec![]);
        assert!(Pmi1::start(fd, None, Some((2, 2))).is_err());
        server.join().unwrap();
    }
}
