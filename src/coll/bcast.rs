//! MPI_Bcast algorithms.
//!
//! - `scatter_allgather` (`scatter_allgather.rs`): van de Geijn's binomial scatter + ring
//!   allgather, for large messages.
//! - `pipeline` (`pipeline.rs`): a chain of ranks forwarding segments.
//! - `arrival_tree` (`bcast_arrival.rs`): a binomial tree whose inner positions go to the
//!   ranks predicted to arrive first (issue 21 item 3); `auto` picks it when the root is among
//!   the first to arrive and the predicted imbalance is worth it.
//! - `shm_large` (`shm_large.rs`): processes mode, through the communicator's shared region
//!   in pieces of n blocks, one barrier each; `auto` for large messages on 8 ranks or more.
//! - `shared` (`bcast_shared.rs`): one episode of the communicator's shared arena, for messages
//!   that fit it; only when forced (`SHARED` says why).
//! - `flat` (`flat.rs`): the root publishes a record in the communicator's shared memory and
//!   returns, the others copy it; `auto` for messages up to `flat::MAX` on 2 to 8 ranks that do
//!   not outnumber the CPUs.
//! - `binomial`: binomial tree rooted at `root`. With ranks renumbered relative to the root
//!   (`vr = (rank - root) mod n`), rank `vr` receives from `vr` minus its lowest set bit, then
//!   sends to `vr + 2^k` for every `2^k` below that bit, largest subtree first: ceil(log2 n)
//!   rounds, each byte crosses each tree edge once.
use super::select::{forced, Collective};

/// Messages of at least this many bytes on at least `LARGE_RANKS` ranks leave the binomial tree.
const LARGE_MIN: usize = 2 << 20;
const LARGE_RANKS: usize = 8;
use super::Coll;
use crate::error::MpiResult;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial", "scatter_allgather", "pipeline", "arrival_tree", "shared", "shm_large", "flat"];

/// Index of the arrival-ordered tree in `ALGORITHMS`.
const ARRIVAL_TREE: usize = 3;
/// Index of the arena broadcast in `ALGORITHMS`. `auto` does not choose it yet: measured with
/// benches/coll_latency.c in processes mode (8 B to 4 KiB, forced `shared` against forced
/// `binomial`, interleaved, 3 rounds) on the 2-core development machine under a load average of
/// 8-10 from other builds, it lost at 2 ranks (the root waits for the other rank's arrival
/// instead of returning after one send: 1.7 against 0.7 us at 8 B in the quietest round) and was
/// level at 4 and 8 ranks within the noise. To be decided on a quiet machine; until then
/// `OXMPI_BCAST_ALGORITHM=shared` runs it.
const SHARED: usize = 4;
/// Index of the broadcast through the shared region's large area (`shm_large::bcast`,
/// processes mode; elsewhere forcing it falls back to the automatic choice).
const SHM_LARGE: usize = 5;
/// Index of `flat` (`flat::bcast`).
const FLAT: usize = 6;
/// Processes mode: `auto` broadcasts at least this many bytes on at least `SHM_LARGE_RANKS`
/// ranks through the shared region. Measured with benches/coll_latency.c, 8 ranks on 2 cores
/// under a load average of 8 from other builds (medians of 3 interleaved runs, us): 32 KiB 33
/// against the binomial tree's 43 (Open MPI 129), 256 KiB 104 against 726 (345), 1 MiB 636
/// against 1289 (2080); at 4 KiB and below the tree was as fast or faster (every rank waits for
/// the last to arrive in the region). Two ranks were too noisy to decide (the 2-core machine
/// was loaded): they keep the tree.
const SHM_LARGE_MIN: usize = 32 << 10;
const SHM_LARGE_RANKS: usize = 8;

/// Broadcasts of at least this many bytes record and share their arrival times, and `auto` runs
/// them on the arrival-ordered tree when the root is predicted among the first and the predicted
/// imbalance is above 1 (`bcast_arrival`).
const ARRIVAL_MIN: usize = 256 << 10;

/// Broadcasts `bytes` bytes at `buf` from communicator rank `root` (`root < cx.size()`).
///
/// # Safety
/// `buf` must hold `bytes` bytes, readable at the root and writable elsewhere.
pub unsafe fn bcast(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let arrived = super::clairvoyant_pap::now_ns();
    if cx.size() == 1 || bytes == 0 {
        return Ok(());
    }
    let forced = forced(Collective::Bcast, ALGORITHMS)?;
    if forced.is_none() {
        if let Some(l) = super::hierarchical::Layout::of(cx) {
            // SAFETY: per this function's contract.
            return unsafe { super::hierarchical::bcast(cx, &l, buf, bytes, root) };
        }
    }
    if let Some(a) = super::flat::arena(cx, forced == Some(FLAT), forced.is_none())? {
        // SAFETY: per this function's contract; `rest` gets a buffer of the root's size.
        return unsafe { super::flat::bcast(cx, a, buf, bytes, root, |b, len| beyond_flat(cx, b, len, root, forced, arrived)) };
    }
    // SAFETY: per this function's contract.
    unsafe { beyond_flat(cx, buf, bytes, root, forced, arrived) }
}

/// The algorithms other than `flat` (`forced`: the forced choice; `arrived`: when the call
/// began).
///
/// # Safety
/// As `bcast`.
unsafe fn beyond_flat(cx: &Coll, buf: *mut u8, bytes: usize, root: usize, forced: Option<usize>, arrived: i64) -> MpiResult {
    let n = cx.size();
    if forced == Some(SHARED) {
        if let Some(a) = super::arena::of(cx)?.filter(|a| bytes <= a.capacity()) {
            // SAFETY: per this function's contract; `bytes` fits the arena.
            return unsafe { super::bcast_shared::bcast(cx, a, buf, bytes, root) };
        }
    }
    if forced == Some(SHM_LARGE) || (forced.is_none() && bytes >= SHM_LARGE_MIN && n >= SHM_LARGE_RANKS && !super::select::threads_mode()) {
        if let Some(a) = super::arena::of(cx)?.filter(|a| super::shm_large::bcast_step(a, n).is_some()) {
            // SAFETY: per this function's contract.
            return unsafe { super::shm_large::bcast(cx, a, buf, bytes, root) };
        }
    }
    let forced = forced.filter(|&f| f != SHM_LARGE && f != FLAT);
    // Candidate calls share their arrival times whatever runs them (as MPI_Reduce's).
    let min = if forced == Some(ARRIVAL_TREE) { 1 } else { ARRIVAL_MIN };
    let pap = if super::clairvoyant_pap::candidate(cx, bytes, 1, min) { Some(super::clairvoyant_pap::arrivals(cx, arrived, bytes, 1)?) } else { None };
    let mut algo = forced.unwrap_or_else(|| auto(bytes, n));
    if forced.is_none() && pap.as_ref().is_some_and(|a| super::bcast_arrival::worth_it(a, root)) {
        algo = ARRIVAL_TREE;
    }
    // SAFETY: per this function's contract.
    unsafe {
        match (algo, &pap) {
            (ARRIVAL_TREE, Some(a)) => super::bcast_arrival::bcast(cx, buf, bytes, root, &a.pattern),
            // A phase of a larger collective: no arrival pattern, the classic choice.
            (ARRIVAL_TREE, None) => classic(cx, buf, bytes, root),
            _ => run(cx, algo, buf, bytes, root),
        }
    }
}

/// Runs classic algorithm `algo` (an index into `ALGORITHMS`).
///
/// # Safety
/// As `bcast`.
unsafe fn run(cx: &Coll, algo: usize, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            1 => super::scatter_allgather::bcast(cx, buf, bytes, root),
            2 => super::pipeline::bcast(cx, buf, bytes, root),
            _ => binomial(cx, buf, bytes, root),
        }
    }
}

/// The automatic choice among the algorithms that ignore arrivals (for the second half of a
/// PAP-aware MPI_Allreduce, which runs when every rank has arrived).
///
/// # Safety
/// As `bcast`.
pub unsafe fn classic(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    if cx.size() == 1 || bytes == 0 {
        return Ok(());
    }
    // SAFETY: per this function's contract.
    unsafe { run(cx, auto(bytes, cx.size()), buf, bytes, root) }
}

/// The automatic choice: an index into `ALGORITHMS`.
///
/// Measured with benches/coll_sweep.c (root 0, best of 3 repetitions, microseconds per call) on
/// the 2-core development machine, shared (load average 15-20), so the numbers are noisy:
///
/// ```text
///  n   bytes   binomial  scatter_allgather  pipeline |  MPICH    Open MPI
///              proc/thr  proc/thr           proc/thr |
///  4    4 KiB   2.5/2.3    10.9/16.1    2.7/2.7      |   19.6     15.0
///  4  256 KiB    74/40      147/60       81/35       |  25429     94
///  8  256 KiB   193/65      708/212     301/72       | 122667    156
///  8    4 MiB 11698/1654   9744/4277   7912/7098     | 210663  11968
/// 16    1 MiB  1498/576    7597/2478   3843/1051     |    -     18598
/// 16    4 MiB 19657/10211 23896/6301  14536/8936     |    -     31869
/// ```
///
/// On shared memory a large message crosses each tree edge as one memcpy by the receiver, so
/// the binomial tree's log2 n copies cost less than the 2 (n-1) synchronised steps of the
/// bandwidth-optimal algorithms until messages are several MiB and ranks many. Oversubscribed,
/// every synchronisation may wait for a descheduled peer: the chain (two partners per rank) wins
/// in processes mode, scatter + allgather with 16 threads.
fn auto(bytes: usize, n: usize) -> usize {
    if bytes < LARGE_MIN || n < LARGE_RANKS {
        0
    } else if !super::select::threads_mode() {
        2
    } else if n >= 16 {
        1
    } else {
        0
    }
}

/// # Safety
/// As `bcast`.
pub unsafe fn binomial(cx: &Coll, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let n = cx.size();
    // SAFETY: per this function's contract.
    unsafe { binomial_mapped(cx, buf, bytes, n, (cx.rank() + n - root) % n, |vr| (vr + root) % n) }
}

/// The binomial tree over `n` tree positions: this rank sits at position `vr`, position 0 is the
/// root, and `rank_at(v)` is the communicator rank at position `v`.
///
/// # Safety
/// As `bcast`, with `buf` readable at position 0.
pub unsafe fn binomial_mapped(cx: &Coll, buf: *mut u8, bytes: usize, n: usize, vr: usize, rank_at: impl Fn(usize) -> usize) -> MpiResult {
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            // SAFETY: `buf` holds `bytes` writable bytes at non-roots.
            unsafe { cx.recv(buf, bytes, rank_at(vr - mask))? };
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            // SAFETY: `buf` holds `bytes` bytes; the sends are waited for below.
            match unsafe { cx.isend(buf, bytes, rank_at(vr + mask)) } {
                Ok(s) => sends.push(s),
                Err(e) => {
                    // This error is the one to report; the others' are of the same collective.
                    let _ = cx.wait_sends(&sends);
                    return Err(e);
                }
            }
        }
        mask >>= 1;
    }
    cx.wait_sends(&sends)
}
