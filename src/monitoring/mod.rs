//! Communication monitoring: per-pair message counts, bytes and a log2 size histogram, after the
//! Open MPI monitoring components (Bosilca, Foyer, Jeannot, Mercier, Papauré, "MPI Monitoring
//! Interface"; design notes in `docs/design/monitoring.md`).
//!
//! What is counted: every send this rank starts, on the sender side, by destination
//! `MPI_COMM_WORLD` rank, with its payload bytes. The engine tells user traffic from internal
//! traffic by context id: a communicator's point-to-point context is even, its collective context
//! (`context + 1`) is odd (`comm/mod.rs`). So `P2p` is user point-to-point traffic and `Coll` is
//! what collectives became once decomposed into transfers (a reduce's tree shows as such). `Osc*`
//! exist for one-sided traffic; nothing records them yet, so they read zero. File I/O has its own
//! per-rank counters (`io`).
//!
//! Cost: `record_send` first does one relaxed load of a process-wide flag; when it is off, nothing
//! else happens. When on, each rank updates its own row with relaxed atomic adds (a rank may send
//! from several threads: MPI_THREAD_MULTIPLE, MPI_Comm_idup's background thread), no lock.
//!
//! Recording is on while `OXMPI_MONITORING=1` (also set by `mpiexec --monitor FILE`), while the
//! `pml_monitoring_enable` control variable is 1, or while any monitoring performance variable
//! handle of the rank is started (MPI_T; per rank also in threads mode, where the environment and
//! the control variable apply to every rank of the process).
pub mod comms;
pub mod dump;
pub mod io;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Histogram buckets: 0 for empty messages, `1 + floor(log2(bytes))` otherwise (Open MPI's 66).
pub const BUCKETS: usize = 66;

/// The kinds of traffic, each with its own per-pair arrays.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    P2p = 0,
    Coll = 1,
    OscSent = 2,
    OscRecv = 3,
}
pub const KINDS: usize = 4;

/// Reasons recording is on anywhere in the process (a fast filter: one relaxed load per send).
static ON: AtomicU32 = AtomicU32::new(0);
/// Process-wide reasons: the environment, the `pml_monitoring_enable` control variable.
static GLOBAL: AtomicU32 = AtomicU32::new(0);
static ENV_READ: std::sync::Once = std::sync::Once::new();

/// Whether recording may be on (one relaxed load); `recording` decides for a rank.
#[inline(always)]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed) != 0
}

fn count(a: &AtomicU32, yes: bool) {
    if yes {
        a.fetch_add(1, Ordering::Relaxed);
    } else {
        let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(1));
    }
}

/// Adds (`true`) or removes a process-wide reason for recording.
pub fn hold(yes: bool) {
    count(&GLOBAL, yes);
    count(&ON, yes);
}

/// Adds or removes a reason for world rank `me` (of `n`) only: a started MPI_T handle. In
/// threads mode the other ranks of the process keep their own state.
pub fn hold_rank(me: usize, n: usize, yes: bool) {
    count(&row(me, n).held, yes);
    count(&ON, yes);
}

/// Whether world rank `me` (of `n`) records now.
pub fn recording(me: usize, n: usize) -> bool {
    on() && (GLOBAL.load(Ordering::Relaxed) != 0 || row(me, n).held.load(Ordering::Relaxed) != 0)
}

/// Reads `OXMPI_MONITORING` once (at MPI_Init, through `rows`): `1` turns recording on for the
/// whole run.
pub fn from_env() -> bool {
    std::env::var("OXMPI_MONITORING").is_ok_and(|v| v.trim() == "1")
}

fn env_once() {
    ENV_READ.call_once(|| {
        if from_env() {
            hold(true);
        }
    });
}

/// The counters of one rank: `bytes[kind * n + peer]` and `hist[(kind * n + peer) * BUCKETS +
/// bucket]`. The message count is the histogram's sum, so a send costs two atomic adds.
pub struct Row {
    n: usize,
    bytes: Box<[AtomicU64]>,
    hist: Box<[AtomicU64]>,
    /// Per-communicator collective counters (o2a, a2o, a2a).
    pub comms: comms::CommCounters,
    /// Started MPI_T handles of this rank.
    held: AtomicU32,
}

fn zeros(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

impl Row {
    fn new(n: usize) -> Row {
        Row { n, bytes: zeros(KINDS * n), hist: zeros(KINDS * n * BUCKETS), comms: Default::default(), held: AtomicU32::new(0) }
    }
    pub fn peers(&self) -> usize {
        self.n
    }
    /// Messages of `kind` sent to world rank `peer`.
    pub fn count(&self, kind: Kind, peer: usize) -> u64 {
        self.histogram(kind, peer).iter().sum()
    }
    /// Bytes of `kind` sent to world rank `peer`.
    pub fn bytes(&self, kind: Kind, peer: usize) -> u64 {
        self.bytes[kind as usize * self.n + peer].load(Ordering::Relaxed)
    }
    /// The size histogram of `kind` messages to `peer`.
    pub fn histogram(&self, kind: Kind, peer: usize) -> [u64; BUCKETS] {
        let base = (kind as usize * self.n + peer) * BUCKETS;
        std::array::from_fn(|b| self.hist[base + b].load(Ordering::Relaxed))
    }
    fn add(&self, kind: Kind, peer: usize, bytes: usize) {
        let i = kind as usize * self.n + peer;
        self.bytes[i].fetch_add(bytes as u64, Ordering::Relaxed);
        self.hist[i * BUCKETS + bucket(bytes as u64)].fetch_add(1, Ordering::Relaxed);
    }
    /// Zeroes every counter (a flush).
    pub fn clear(&self) {
        for a in self.bytes.iter().chain(self.hist.iter()) {
            a.store(0, Ordering::Relaxed);
        }
        self.comms.clear();
    }
}

/// The histogram bucket of a message of `bytes` bytes.
pub fn bucket(bytes: u64) -> usize {
    if bytes == 0 {
        0
    } else {
        (64 - bytes.leading_zeros() as usize).min(BUCKETS - 1)
    }
}

/// One slot per world rank of this process (processes mode: only its own is ever filled).
static ROWS: OnceLock<Box<[OnceLock<Row>]>> = OnceLock::new();

/// The counters of world rank `me` in a job of `n` ranks, created on first use.
pub fn row(me: usize, n: usize) -> &'static Row {
    env_once();
    let rows = ROWS.get_or_init(|| (0..n).map(|_| OnceLock::new()).collect());
    rows[me].get_or_init(|| Row::new(n))
}

/// The counters of world rank `me` if it ever recorded or was read.
pub fn existing_row(me: usize) -> Option<&'static Row> {
    ROWS.get().and_then(|r| r.get(me)).and_then(|s| s.get())
}

/// Called at MPI_Init: reads the environment so that recording starts with the job.
pub fn init(me: usize, n: usize) {
    let _ = row(me, n);
}

/// Records a send of `bytes` bytes from world rank `me` (of `n`) to world rank `dest` on context
/// `ctx` (odd: a collective's internal transfer).
#[inline(always)]
pub fn record_send(me: usize, n: usize, dest: usize, bytes: usize, ctx: u32) {
    if on() {
        record_slow(me, n, dest, bytes, ctx);
    }
}

/// Records one-sided traffic of world rank `me` (of `n`) with world rank `peer`: `bytes` moved
/// to the target (`sent`: put, accumulate) or from it (get, the fetch of get_accumulate), as
/// Open MPI's `osc_monitoring_messages_{sent,recv}_*` count them.
#[inline(always)]
pub fn record_osc(me: usize, n: usize, peer: usize, bytes: usize, sent: bool) {
    if on() && peer < n && me < n && recording(me, n) {
        row(me, n).add(if sent { Kind::OscSent } else { Kind::OscRecv }, peer, bytes);
    }
}

thread_local! {
    /// Inside `unrecorded`: the messages sent are the library's own (RMA between nodes, already
    /// counted as one-sided traffic by `record_osc`).
    static UNRECORDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` without recording the messages it sends as point-to-point or collective traffic.
pub fn unrecorded<R>(f: impl FnOnce() -> R) -> R {
    let was = UNRECORDED.with(|u| u.replace(true));
    let r = f();
    UNRECORDED.with(|u| u.set(was));
    r
}

#[cold]
#[inline(never)]
fn record_slow(me: usize, n: usize, dest: usize, bytes: usize, ctx: u32) {
    if dest < n && me < n && recording(me, n) && !UNRECORDED.with(|u| u.get()) {
        row(me, n).add(if ctx % 2 == 1 { Kind::Coll } else { Kind::P2p }, dest, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn buckets_are_log2() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!(bucket(4), 3);
        assert_eq!(bucket(7), 3);
        assert_eq!(bucket(100), 7);
        assert_eq!(bucket(4096), 13);
        assert_eq!(bucket(33000), 16);
        assert_eq!(bucket(u64::MAX), 64);
    }

    /// The cost of one recorded send (run with `--ignored --nocapture`; prints, asserts nothing
    /// about time): the best of several rounds, recording on, against the flag check alone.
    #[test]
    #[ignore]
    fn cost_of_recording() {
        let rounds = 2_000_000;
        let mut best = [f64::MAX; 2];
        for _ in 0..15 {
            for (k, on) in [false, true].into_iter().enumerate() {
                hold(on);
                let t = std::time::Instant::now();
                for i in 0..rounds {
                    record_send(0, 4, std::hint::black_box(1 + (i & 1)), std::hint::black_box(8), 0);
                }
                best[k] = best[k].min(t.elapsed().as_nanos() as f64 / rounds as f64);
                if on {
                    hold(false);
                }
            }
        }
        println!("per send: monitoring off {:.2} ns, on {:.2} ns", best[0], best[1]);
        assert_eq!(row(0, 4).count(Kind::P2p, 1), 15 * rounds as u64 / 2);
    }
}
