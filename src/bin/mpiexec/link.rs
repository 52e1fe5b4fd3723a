//! The connection between the head `mpiexec` (`remote`) and a node agent (`agent`): one TCP
//! connection per node, the agent connecting back to the head. Messages are lines of words, each
//! word percent-encoded (so values may hold spaces, `%` or newlines):
//!
//! ```text
//! agent -> head   hello TOKEN NODE          first line; TOKEN is the job's secret
//!                 put KEY VALUE             a PMI put of the node's ranks (before a fence)
//!                 fence                     the node's ranks entered a PMI fence
//!                 fail CODE MESSAGE         the node could not start its ranks (MESSAGE: one line)
//!                 done CODE                 the node's ranks ended; CODE as mpiexec's exit status
//! head -> agent   set KEY VALUE             the job's description (`Spec`), then
//!                 go                        start the ranks
//!                 put KEY VALUE ... fenced  every node's puts, then the end of the fence
//!                 signal SIG                forward SIG to the ranks and end
//!                 end                       end the ranks now, quietly (another node failed)
//! ```
//! An agent ends its ranks when the connection drops; the head ends the job when an agent's
//! connection drops before `done`.
use std::io::{self, BufRead, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long an agent tries to reach the head, and the head waits for every agent's hello
/// (`OXMPI_CONNECT_TIMEOUT` seconds).
pub fn connect_timeout() -> Duration {
    let secs = std::env::var("OXMPI_CONNECT_TIMEOUT").ok().and_then(|v| v.trim().parse::<f64>().ok()).filter(|s| *s > 0.0 && *s < 1e6);
    Duration::from_secs_f64(secs.unwrap_or(30.0))
}

fn encode(w: &str) -> String {
    let mut o = String::with_capacity(w.len());
    for b in w.bytes() {
        if b.is_ascii_graphic() && b != b'%' {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    if o.is_empty() {
        o.push_str("%");
    }
    o
}

fn decode(w: &str) -> Option<String> {
    if w == "%" {
        return Some(String::new());
    }
    let b = w.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A message as one line.
pub fn line(words: &[&str]) -> String {
    let mut s = words.iter().map(|w| encode(w)).collect::<Vec<_>>().join(" ");
    s.push('\n');
    s
}

/// Sends a message.
pub fn send(mut out: &TcpStream, words: &[&str]) -> io::Result<()> {
    out.write_all(line(words).as_bytes())
}

/// Reads the next message: its words, None at the end of the connection.
pub fn recv(r: &mut impl BufRead) -> io::Result<Option<Vec<String>>> {
    let mut l = String::new();
    if r.read_line(&mut l)? == 0 {
        return Ok(None);
    }
    let words: Option<Vec<String>> = l.trim_end_matches('\n').split(' ').filter(|w| !w.is_empty()).map(decode).collect();
    match words {
        Some(w) if !w.is_empty() => Ok(Some(w)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidData, format!("garbled message '{}'", l.trim_end()))),
    }
}

/// Connects to `addr` (`host:port`), trying its addresses until `timeout` has passed.
pub fn connect(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let end = std::time::Instant::now() + timeout;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    loop {
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
        for a in &addrs {
            let left = end.saturating_duration_since(std::time::Instant::now()).max(Duration::from_millis(100));
            match TcpStream::connect_timeout(a, left) {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        if std::time::Instant::now() >= end {
            return Err(last);
        }
        // Refused at once (nobody listening yet, or a firewall): try again a little later.
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let l = line(&["put", "a key", "v%1\nx", ""]);
        assert_eq!(l, "put a%20key v%251%0Ax %\n");
        let got = recv(&mut io::Cursor::new(l.as_bytes())).unwrap().unwrap();
        assert_eq!(got, ["put", "a key", "v%1\nx", ""]);
        assert!(recv(&mut io::Cursor::new(&b""[..])).unwrap().is_none());
        assert!(recv(&mut io::Cursor::new(&b"put %4\n"[..])).is_err());
    }
}
