//! Port names (MPI_Open_port, MPI 4.1 section 11.10.2) and the record of open ports.
//!
//! A port is an address where one rank (the opener's slot) takes connection requests:
//! `oxmpi-port:JOB:SLOT:INDEX`, JOB naming the shared segment the opener's ranks live in (the
//! launcher's pid, or rank 0's for a job without oxmpi's launcher), INDEX telling the slot's ports
//! apart (the tag of their requests). An open port is a file `JOB.SLOT.INDEX` under the per-user
//! directory (`runtime::user_dir`), so any rank of the user can tell an open port from a closed or
//! made-up one (MPI_ERR_PORT) without asking the opener; the files of a job that ended without
//! closing its ports are removed by the next MPI_Open_port.
use super::user_dir;
use std::sync::atomic::{AtomicU32, Ordering};

const PREFIX: &str = "oxmpi-port:";

/// A parsed port name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    pub job: i32,
    pub slot: usize,
    pub index: u32,
}

impl Port {
    pub fn name(&self) -> String {
        format!("{PREFIX}{}:{}:{}", self.job, self.slot, self.index)
    }

    pub fn parse(s: &str) -> Option<Port> {
        let mut f = s.strip_prefix(PREFIX)?.split(':');
        let p = Port { job: f.next()?.parse().ok()?, slot: f.next()?.parse().ok()?, index: f.next()?.parse().ok()? };
        f.next().is_none().then_some(p)
    }

    fn file(&self) -> String {
        format!("{}.{}.{}", self.job, self.slot, self.index)
    }

    /// Whether the port is open (its opener did not close it, and its job runs).
    pub fn is_open(&self) -> Result<bool, String> {
        Ok(user_dir::alive(self.job) && user_dir::subdir("ports")?.join(self.file()).exists())
    }
}

/// Next index to try; shared by the ranks of a process (the slot tells theirs apart).
static NEXT: AtomicU32 = AtomicU32::new(1);

/// Removes the records of ports whose job is gone.
fn sweep(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let job = name.to_str().and_then(|n| n.split('.').next()).and_then(|j| j.parse::<i32>().ok());
        if job.is_some_and(|j| !user_dir::alive(j)) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// MPI_Open_port: a new open port of slot `slot` of job `job`.
pub fn open(job: i32, slot: usize) -> Result<Port, String> {
    let dir = user_dir::subdir("ports")?;
    sweep(&dir);
    loop {
        // Indexes name request tags (16 bits); a slot with 65535 ports open at once is refused below.
        let index = NEXT.fetch_add(1, Ordering::Relaxed) & 0xffff;
        if index == 0 {
            continue;
        }
        let port = Port { job, slot, index };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(dir.join(port.file())) {
            Ok(_) => return Ok(port),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let open = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
                if open >= 0xffff {
                    return Err("too many ports are open: close some with MPI_Close_port".into());
                }
            }
            Err(e) => return Err(format!("cannot record the port in '{}': {e}", dir.display())),
        }
    }
}

/// MPI_Close_port. Err: not an open port.
pub fn close(port: &Port) -> Result<(), String> {
    let dir = user_dir::subdir("ports")?;
    std::fs::remove_file(dir.join(port.file())).map_err(|_| format!("port '{}' is not open (closed already, or never opened)", port.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        let p = Port { job: 42, slot: 3, index: 7 };
        assert_eq!(Port::parse(&p.name()), Some(p));
        assert_eq!(Port::parse("oxmpi-port:1:2"), None);
        assert_eq!(Port::parse("oxmpi-port:1:2:3:4"), None);
        assert_eq!(Port::parse("tag#0$description#x"), None);
    }
}
