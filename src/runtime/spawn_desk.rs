//! Dynamic processes in processes mode: how a rank asks `mpiexec` to start new ranks
//! (MPI_Comm_spawn), through the spawn desk of the job segment.
//!
//! Design. `mpiexec` sizes the segment for the universe (`mpiexec -usize N`, default: the number
//! of CPUs, at least the world size), not only for the ranks it starts: the slots above the
//! initial world are free. Every rank of the segment, started or spawned, talks to every other
//! through the same N x N channels, so spawned ranks need no bridge and the point-to-point,
//! collective and intercommunicator code works unchanged on slot numbers (a communicator's group
//! lists slots). The hot path of a job that never spawns stays as it was: progress scans the
//! channels of the occupied slots only (`Segment::occupied`, one load of a read-mostly line), and
//! the channel geometry and inbox mode follow the initial world size.
//!
//! The root of a spawn takes the desk's lock, writes its request (programs, arguments, counts,
//! `wdir`/`path`) into the desk, marks it asked and sends SIGUSR1 to the launcher, whose
//! supervision loop wakes, resolves the programs (all or none start), raises `occupied`, forks
//! the new ranks as its own children (so they are supervised, reaped and killed like the others:
//! nothing outlives the job, and the segment stays a memfd, never in /dev/shm) and answers with
//! the first slot and the count, or an error message. Each spawned rank learns its slot, world
//! (`OXMPI_WORLD_BASE`, `OXMPI_SIZE`) and the parent root's slot (`OXMPI_PARENT_ROOT`) from its
//! environment; its MPI_Init then builds the parent intercommunicator with the parents, who
//! build it in MPI_Comm_spawn (`construct::spawn`).
//!
//! Slots are reused: the slot of a spawned rank that finalized and was reaped is free again (a
//! rank that died is not: its slot stays failed). Before handing it out, the launcher empties the
//! channels into it (it is their only consumer now; packets a dead rank never read must not reach
//! its successor) and resets its control block. A spawned world is therefore any list of slots
//! (`OXMPI_WORLD_SLOTS`), not a range.
use super::segment::{Segment, DESK_BYTES};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::Duration;

/// Environment of a spawned rank: the slots of its MPI_COMM_WORLD, comma-separated, in rank order.
pub const ENV_WORLD_SLOTS: &str = "OXMPI_WORLD_SLOTS";
/// Environment of a spawned rank: the slot of the spawning root.
pub const ENV_PARENT_ROOT: &str = "OXMPI_PARENT_ROOT";
/// Environment of a spawned rank: the index of its command in MPI_Comm_spawn_multiple.
pub const ENV_APPNUM: &str = "OXMPI_APPNUM";

/// `Request::parent_root` of a request for free slots only, which the launcher reserves and
/// answers without starting anything: `mpiexec --join` starts its ranks there itself.
pub const RESERVE_SLOTS: usize = usize::MAX;

const IDLE: u32 = 0;
const ASKED: u32 = 1;
const ANSWERED: u32 = 2;

/// The desk's control words; the request or answer text follows at `DATA`.
#[repr(C)]
struct Desk {
    lock: AtomicU32,
    state: AtomicU32,
    len: AtomicU32,
    /// 0: started, the text is an `Answer`; else it is an error message.
    result: AtomicI32,
}
const DATA: usize = 64;
const MAX_TEXT: usize = DESK_BYTES - DATA;

/// One command of a spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    pub program: String,
    pub args: Vec<String>,
    pub nprocs: usize,
    /// Info key `wdir`: the working directory of the new ranks.
    pub wdir: Option<String>,
    /// Info key `path`: directories (`:`-separated) searched for the program first.
    pub path: Option<String>,
    /// Info key `soft`: the counts allowed (`soft_count`), `nprocs` the largest wanted.
    pub soft: Option<String>,
}

/// What the launcher started: the new world's slots in rank order, and how many ranks of each
/// command (at most its `nprocs`; fewer only with `soft`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub slots: Vec<usize>,
    pub counts: Vec<usize>,
}

impl Answer {
    fn encode(&self) -> String {
        let list = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
        format!("{};{}", list(&self.slots), list(&self.counts))
    }

    fn decode(s: &str) -> Option<Answer> {
        let (a, b) = s.split_once(';')?;
        let list = |t: &str| t.split(',').filter(|x| !x.is_empty()).map(|x| x.parse().ok()).collect::<Option<Vec<usize>>>();
        Some(Answer { slots: list(a)?, counts: list(b)? })
    }
}

/// The info key `soft` (MPI 4.1 section 11.8.4): the largest count it allows that is at most
/// `most`. Its value is a comma-separated list of `a`, `a:b` or `a:b:c` (from a to b by c).
pub fn soft_count(value: &str, most: usize) -> Result<Option<usize>, String> {
    let bad = || format!("info key soft: '{value}' is not a list of a, a:b or a:b:c");
    let mut best = None;
    for part in value.split(',').map(str::trim) {
        let nums: Vec<usize> = part.split(':').map(|x| x.trim().parse::<usize>()).collect::<Result<_, _>>().map_err(|_| bad())?;
        let (a, b, c) = match nums[..] {
            [a] => (a, a, 1),
            [a, b] => (a, b, 1),
            [a, b, c] if c > 0 => (a, b, c),
            _ => return Err(bad()),
        };
        let mut x = a;
        while x <= b && x <= most {
            if x > 0 {
                best = best.max(Some(x));
            }
            x += c;
        }
    }
    Ok(best)
}

/// What the root asks the launcher for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub parent_root: usize,
    pub apps: Vec<App>,
}

impl Request {
    /// NUL-terminated fields: parent root, number of apps, then per app program, nprocs, wdir,
    /// path, soft (empty: none), number of arguments, arguments.
    pub fn encode(&self) -> Vec<u8> {
        let mut f: Vec<String> = vec![self.parent_root.to_string(), self.apps.len().to_string()];
        for a in &self.apps {
            f.push(a.program.clone());
            f.push(a.nprocs.to_string());
            f.push(a.wdir.clone().unwrap_or_default());
            f.push(a.path.clone().unwrap_or_default());
            f.push(a.soft.clone().unwrap_or_default());
            f.push(a.args.len().to_string());
            f.extend(a.args.iter().cloned());
        }
        let mut out = Vec::new();
        for s in f {
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        }
        out
    }

    pub fn decode(b: &[u8]) -> Option<Request> {
        let mut it = b.split(|&c| c == 0).map(|s| String::from_utf8_lossy(s).into_owned());
        let num = |it: &mut dyn Iterator<Item = String>| it.next()?.parse::<usize>().ok();
        let parent_root = num(&mut it)?;
        let napps = num(&mut it)?;
        let mut apps = Vec::new();
        for _ in 0..napps {
            let program = it.next()?;
            let nprocs = num(&mut it)?;
            let opt = |s: String| (!s.is_empty()).then_some(s);
            let wdir = opt(it.next()?);
            let path = opt(it.next()?);
            let soft = opt(it.next()?);
            let nargs = num(&mut it)?;
            let args: Vec<String> = (0..nargs).map_while(|_| it.next()).collect();
            if args.len() != nargs {
                return None;
            }
            apps.push(App { program, args, nprocs, wdir, path, soft });
        }
        Some(Request { parent_root, apps })
    }
}

fn desk(seg: &Segment) -> &Desk {
    // SAFETY: the desk area is DESK_BYTES >= size_of::<Desk>() bytes of the mapping, aligned like
    // CachePadded, zero-filled at creation (all atomics' initial state); it lives as long as `seg`.
    unsafe { &*(seg.desk_area() as *const Desk) }
}

fn text_area(seg: &Segment) -> *mut u8 {
    // SAFETY: DATA < DESK_BYTES: still inside the desk.
    unsafe { seg.desk_area().add(DATA) }
}

/// Rank side: hands `req` to the launcher and waits for its answer, or its message.
pub fn ask(seg: &Segment, req: &Request) -> Result<Answer, String> {
    let launcher = seg.header().launcher_pid;
    if launcher <= 0 {
        return Err("this job was not started by oxmpi's mpiexec, which alone can start new ranks: run it with 'mpiexec -n N PROGRAM'".into());
    }
    let bytes = req.encode();
    if bytes.len() > MAX_TEXT {
        return Err(format!("the spawn request takes {} bytes (commands and arguments); oxmpi takes at most {MAX_TEXT}", bytes.len()));
    }
    let d = desk(seg);
    while d.lock.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
        std::thread::sleep(Duration::from_micros(200));
    }
    // SAFETY: we hold the desk's lock; the text area holds MAX_TEXT >= bytes.len() bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), text_area(seg), bytes.len()) };
    d.len.store(bytes.len() as u32, Ordering::Relaxed);
    d.state.store(ASKED, Ordering::Release);
    // SAFETY: plain syscall; the launcher blocks SIGUSR1 and takes it with sigtimedwait.
    unsafe { libc::kill(launcher, libc::SIGUSR1) };
    let mut pause = Duration::from_micros(50);
    while d.state.load(Ordering::Acquire) != ANSWERED {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
    let n = (d.len.load(Ordering::Relaxed) as usize).min(MAX_TEXT);
    // SAFETY: the launcher wrote n <= MAX_TEXT bytes of text before its Release store of ANSWERED.
    let text = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(text_area(seg), n) }).into_owned();
    let out = if d.result.load(Ordering::Relaxed) == 0 {
        Answer::decode(&text).ok_or_else(|| format!("the launcher's answer '{text}' is malformed"))
    } else {
        Err(text)
    };
    d.state.store(IDLE, Ordering::Relaxed);
    d.lock.store(0, Ordering::Release);
    out
}

/// Launcher side: the request waiting at the desk, if any (answer it with `answer`).
pub fn take(seg: &Segment) -> Option<Result<Request, ()>> {
    let d = desk(seg);
    if d.state.load(Ordering::Acquire) != ASKED {
        return None;
    }
    let n = (d.len.load(Ordering::Relaxed) as usize).min(MAX_TEXT);
    // SAFETY: the asking rank wrote n bytes before its Release store of ASKED and waits.
    let b = unsafe { std::slice::from_raw_parts(text_area(seg), n) };
    Some(Request::decode(b).ok_or(()))
}

/// Launcher side: answers the waiting request with what was started, or an error message.
pub fn answer(seg: &Segment, result: Result<Answer, String>) {
    let d = desk(seg);
    let (code, text) = match result {
        Ok(a) => (0, a.encode()),
        Err(m) => (1, m),
    };
    let b = &text.as_bytes()[..text.len().min(MAX_TEXT)];
    // SAFETY: the asker waits for ANSWERED and does not touch the text meanwhile.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), text_area(seg), b.len()) };
    d.len.store(b.len() as u32, Ordering::Relaxed);
    d.result.store(code, Ordering::Relaxed);
    d.state.store(ANSWERED, Ordering::Release);
}

/// Launcher side: takes `count` never used slots (raising `occupied`); None if there are fewer.
pub fn claim_fresh(seg: &Segment, count: usize) -> Option<std::ops::Range<usize>> {
    let h = seg.header();
    let base = h.occupied.load(Ordering::Acquire) as usize;
    if base + count > seg.nranks() {
        return None;
    }
    h.occupied.store((base + count) as u32, Ordering::Release);
    Some(base..base + count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_roundtrip() {
        let r = Request {
            parent_root: 3,
            apps: vec![
                App { program: "./a".into(), args: vec!["x".into(), "".into(), "y z".into()], nprocs: 2, wdir: Some("/tmp".into()), path: None, soft: Some("1:2".into()) },
                App { program: "b".into(), args: vec![], nprocs: 1, wdir: None, path: Some("/bin:/usr/bin".into()), soft: None },
            ],
        };
        assert_eq!(Request::decode(&r.encode()), Some(r));
        assert_eq!(Request::decode(b"1\x005\x00"), None);
        let a = Answer { slots: vec![4, 2, 9], counts: vec![2, 1] };
        assert_eq!(Answer::decode(&a.encode()), Some(a));
    }

    #[test]
    fn soft_values() {
        assert_eq!(soft_count("1:4", 3), Ok(Some(3)));
        assert_eq!(soft_count("2,4,8", 7), Ok(Some(4)));
        assert_eq!(soft_count("1:9:4", 8), Ok(Some(5)));
        assert_eq!(soft_count("5", 4), Ok(None));
        assert!(soft_count("x", 4).is_err());
        assert!(soft_count("1:2:0", 4).is_err());
    }
}
