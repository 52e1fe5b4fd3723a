//! The hosts of a job on several machines: the host list (`-hosts a,b:2`, `--host`), the host
//! file (`-f FILE`: lines `host`, `host:n` or `host slots=n`, `#` comments) and the placement of
//! the ranks on them (`-ppn N` or the hosts' slots).
//!
//! Each host is one node of the job. Ranks are placed in blocks of consecutive ranks, host by
//! host in the order given: a host gets `-ppn` ranks, else its slots (1 when not given); with
//! more ranks than that, the hosts are filled again in turn (as hydra wraps around). The blocks
//! keep a node's ranks consecutive, which threads mode needs (one process per node).
use crate::args::HostOptions;

/// A host as listed: its name and slots (None: not given).
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    pub name: String,
    pub slots: Option<usize>,
}

/// A node of the job: its host and its ranks `first..first + count`.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub host: String,
    pub first: usize,
    pub count: usize,
}

fn parse_slots(v: &str, host: &str, whence: &str) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(0) => Err(format!("{whence}: host {host} has 0 slots; give it at least 1 or leave it out")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{whence}: '{v}' is not a number of slots for host {host}")),
    }
}

/// One `host[:n]` entry.
fn parse_entry(e: &str, whence: &str) -> Result<Host, String> {
    let (name, slots) = match e.rsplit_once(':') {
        // An IPv6 address has colons of its own: only `[addr]:n` carries slots.
        Some((n, s)) if !n.contains(':') || n.ends_with(']') => (n.trim_matches(['[', ']']), Some(parse_slots(s, n, whence)?)),
        _ => (e.trim_matches(['[', ']']), None),
    };
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(format!("{whence}: '{e}' is not a host name"));
    }
    Ok(Host { name: name.to_string(), slots })
}

/// The hosts of `-hosts` / `--host` lists (`a,b:2`).
pub fn parse_list(lists: &[String]) -> Result<Vec<Host>, String> {
    let mut out = Vec::new();
    for l in lists {
        for e in l.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            out.push(parse_entry(e, "-hosts")?);
        }
    }
    Ok(out)
}

/// The hosts of a host file's text (`file` names it in messages).
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Host>, String> {
    let mut out = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let whence = format!("{file}:{}", no + 1);
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let mut host = parse_entry(first, &whence)?;
        for w in words {
            match w.split_once('=') {
                Some(("slots", v)) => host.slots = Some(parse_slots(v, &host.name, &whence)?),
                // Open MPI's other keys (max_slots=...) do not change the placement.
                Some(_) => {}
                None => return Err(format!("{whence}: unexpected '{w}' (lines are 'host', 'host:n' or 'host slots=n')")),
            }
        }
        out.push(host);
    }
    if out.is_empty() {
        return Err(format!("host file {file} lists no host"));
    }
    Ok(out)
}

/// The hosts the options name: the lists, then the host file.
pub fn from_options(h: &HostOptions) -> Result<Vec<Host>, String> {
    let mut hosts = parse_list(&h.list)?;
    if let Some(f) = &h.file {
        let shown = std::path::Path::new(f).display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("cannot read host file {shown}: {e}"))?;
        hosts.extend(parse_file(&shown, &text)?);
    }
    if hosts.is_empty() {
        // `-ppn` alone: this machine.
        hosts.push(Host { name: "localhost".into(), slots: None });
    }
    Ok(hosts)
}

/// The number of ranks when `-n` is not given: `-ppn` per host, else the hosts' slots.
pub fn default_ranks(hosts: &[Host], ppn: Option<usize>) -> usize {
    match ppn {
        Some(p) => p * distinct(hosts).len(),
        None => hosts.iter().map(|h| h.slots.unwrap_or(1)).sum(),
    }
}

/// The hosts with a host named twice merged (its slots added up), in first-seen order.
fn distinct(hosts: &[Host]) -> Vec<Host> {
    let mut out: Vec<Host> = Vec::new();
    for h in hosts {
        match out.iter_mut().find(|o| o.name == h.name) {
            Some(o) => o.slots = Some(o.slots.unwrap_or(1) + h.slots.unwrap_or(1)),
            None => out.push(h.clone()),
        }
    }
    out
}

/// Places `n` ranks on `hosts` (see the module notes); hosts that get no rank are left out.
pub fn place(n: usize, hosts: &[Host], ppn: Option<usize>) -> Vec<Node> {
    let hosts = distinct(hosts);
    let mut count = vec![0usize; hosts.len()];
    let mut left = n;
    while left > 0 {
        for (h, c) in hosts.iter().zip(count.iter_mut()) {
            let take = ppn.unwrap_or(h.slots.unwrap_or(1)).min(left);
            *c += take;
            left -= take;
        }
    }
    let mut first = 0;
    let mut out = Vec::new();
    for (h, c) in hosts.iter().zip(count) {
        if c > 0 {
            out.push(Node { host: h.name.clone(), first, count: c });
            first += c;
        }
    }
    out
}

/// This machine's name (gethostname).
pub fn own_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length are valid; gethostname NUL-terminates within it or fails.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Whether `host` names this machine: its ranks start here without the launcher.
pub fn is_local(host: &str, own: &str) -> bool {
    let short = |s: &str| s.split('.').next().unwrap_or("").to_string();
    matches!(host, "localhost" | "127.0.0.1" | "::1") || (!own.is_empty() && (host == own || short(host) == own || host == short(own)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: Option<usize>) -> Host {
        Host { name: name.into(), slots }
    }

    #[test]
    fn lists_and_files() {
        assert_eq!(parse_list(&["a,b:2".into(), "c".into()]).unwrap(), vec![h("a", None), h("b", Some(2)), h("c", None)]);
        assert_eq!(parse_list(&["[fe80::1]:3".into()]).unwrap(), vec![h("fe80::1", Some(3))]);
        assert!(parse_list(&["a:0".into()]).unwrap_err().contains("host a has 0 slots"));
        assert!(parse_list(&["a:x".into()]).is_err());
        let f = parse_file("hf", "# nodes\nn1 slots=4\nn2:2 # two\n\nn3 max_slots=8\n").unwrap();
        assert_eq!(f, vec![h("n1", Some(4)), h("n2", Some(2)), h("n3", None)]);
        assert_eq!(parse_file("hf", "n1 slots=0\n").unwrap_err(), "hf:1: host n1 has 0 slots; give it at least 1 or leave it out");
        assert!(parse_file("hf", "n1 lots\n").unwrap_err().starts_with("hf:1: unexpected 'lots'"));
        assert!(parse_file("hf", "# none\n").unwrap_err().contains("lists no host"));
    }

    #[test]
    fn placement_in_blocks() {
        let hosts = [h("a", None), h("b", None)];
        let p = place(4, &hosts, None);
        assert_eq!(p, vec![Node { host: "a".into(), first: 0, count: 2 }, Node { host: "b".into(), first: 2, count: 2 }]);
        let p = place(3, &[h("a", Some(2)), h("b", Some(2))], None);
        assert_eq!(p.iter().map(|n| n.count).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(place(1, &hosts, None).len(), 1, "a host without ranks is left out");
        assert_eq!(place(5, &hosts, Some(2)).iter().map(|n| n.count).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(place(3, &[h("a", None), h("a", None), h("b", None)], None).iter().map(|n| n.count).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(default_ranks(&[h("a", Some(2)), h("b", None)], None), 3);
        assert_eq!(default_ranks(&hosts, Some(3)), 6);
    }

    #[test]
    fn local_names() {
        assert!(is_local("localhost", "box.example.org"));
        assert!(is_local("box", "box.example.org") && is_local("box.example.org", "box"));
        assert!(!is_local("other", "box"));
    }
}
