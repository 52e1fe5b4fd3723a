//! Two-phase collective I/O (del Rosario, Bordawekar & Choudhary 1993; ROMIO's
//! `ad_write_coll.c`/`ad_read_coll.c`, Thakur, Gropp & Lusk 1999): the ranks of a collective
//! access exchange their data so that a few aggregators each access one large contiguous file
//! range per round, instead of every rank making many small accesses.
//!
//! One call, every rank of the communicator, in the same order:
//! 1. allgather of every rank's [first byte, end) and a status (its runs are valid, the file's
//!    size could be read); a bad status on any rank fails the call on every rank, before any
//!    I/O. With `CbMode::Automatic` the accesses go two-phase only if they interleave in rank
//!    order (a rank starts before an earlier rank's end: ROMIO's rule) and, when the ranks do
//!    not share an address space, some rank has a piece shorter than `LARGE_PIECE`; else each
//!    rank accesses its own runs (`sieve`), as with `CbMode::Disable`. Every rank learns the
//!    same facts here, so all take the same path.
//! 2. The aggregate range is split into one file domain per aggregator (`domains`: evenly spaced
//!    ranks, boundaries optionally aligned to the striping unit). Every rank cuts its runs at the
//!    domain boundaries and sends each aggregator the pieces in its domain (alltoall of counts,
//!    alltoallv of the pieces).
//! 3. Each aggregator cuts the requested bytes of its domain into windows of at most
//!    `buffer_size` bytes, skipping unrequested stretches (`windows`), and the window lists are
//!    allgathered: round r serves window r of every aggregator.
//! 4. Per round, one alltoallv moves the data: a rank's bytes inside a window are one contiguous
//!    stretch of its packed data (its runs are sorted), so it sends straight from `data` and
//!    receives straight into it. A writing aggregator lays the pieces out in rank order (on
//!    overlaps the highest rank's bytes win) and writes the covered span once; holes inside it
//!    are first read back (read-modify-write) when they are no larger than the covered bytes
//!    and the file can be read, else each covered stretch is written by itself; the caller's
//!    byte-range lock is held over the span, so no writer through another handle loses bytes
//!    in a hole. A reading aggregator reads the span once and sends each rank its pieces; a
//!    rank's runs are first clipped at the end of the file, so its bytes past the end are left
//!    as they were (as independent reads leave them).
//! 5. An allgather of the aggregators' I/O status: a failed write or read fails the call on every
//!    rank (an aggregator that failed still takes part in every round, so no rank waits forever).
//!
//! When the ranks share one address space (threads mode on one node, as every rank tells in
//! step 1), step 4 has no messages: every rank passes its aggregators the address of its bytes
//! in their domain along with the piece counts (step 2), the aggregators skip the window
//! allgather and the rounds, and write each window straight from the ranks' buffers (read
//! straight into them); the ranks wait in step 5 until every aggregator is done, so their
//! buffers stay put meanwhile. A window whose pieces tile it (no hole, no overlap: the usual
//! case) is one vectored system call between the file and the pieces where they lie, in
//! either mode: no copy through the aggregator's buffer.
//!
//! All traffic is collective traffic on the communicator (the monitoring counts it as such,
//! direct copies included: each source counts what it hands an aggregator).
use super::backend::{error_class, Backend};
use super::cb_hints::{CbHints, CbMode};
use super::range_lock::FileLock;
use super::sieve::{self, Extent};
use crate::coll::alltoall::{linear as alltoallv, Slot};
use crate::coll::gather::Blocks;
use crate::coll::Coll;
use crate::comm::{Comm, Universe};
use crate::error::{err, ErrorClass, MpiError, MpiResult};

/// What the caller may add to the hints.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// A byte-range lock on the file: lets independent writes sieve (`sieve::write_locked`),
    /// and is held over an aggregator's read-modify-write.
    pub lock: Option<&'a FileLock>,
    /// The file system's stripe size (`striping_unit`); 0: none. File domains start on its
    /// multiples, so no two aggregators write into one stripe.
    pub striping_unit: u64,
}

/// MPI_File_write_all's data movement: writes this rank's `runs` from `data` (packed in run
/// order) together with every other rank of `comm`.
pub fn write_all(u: &Universe, comm: &Comm, file: &dyn Backend, runs: &[(u64, u64)], data: &[u8], hints: &CbHints) -> MpiResult {
    write_all_with(u, comm, file, runs, data, hints, Options::default())
}

/// MPI_File_read_all's data movement: reads this rank's `runs` into `data`; returns how many of
/// this rank's bytes lie before the end of the file (bytes past it are unspecified).
pub fn read_all(u: &Universe, comm: &Comm, file: &dyn Backend, runs: &[(u64, u64)], data: &mut [u8], hints: &CbHints) -> MpiResult<usize> {
    read_all_with(u, comm, file, runs, data, hints, Options::default())
}

/// `write_all` with a lock and a striping unit.
pub fn write_all_with(u: &Universe, comm: &Comm, file: &dyn Backend, runs: &[(u64, u64)], data: &[u8], hints: &CbHints, opt: Options) -> MpiResult {
    let cx = Coll::next(u, comm);
    let ext = sieve::extents(runs, data.len());
    let status = ext.as_ref().map(|_| ()).map_err(|e| io_status(e));
    let ext = ext.unwrap_or_default();
    let call = Call { data: data.as_ptr() as *mut u8, mode: hints.write, align: opt.striping_unit, write: true };
    let plan = match setup(&cx, &ext, status, hints, call)? {
        Setup::Independent => {
            let r = match opt.lock {
                Some(l) => sieve::write_locked(file, l, runs, data, hints.buffer_size, true),
                None => sieve::write(file, runs, data, hints.buffer_size),
            };
            return r.map_err(|e| super::backend::mpi_error("writing", "the file", &e));
        }
        Setup::TwoPhase(p) => p,
    };
    let mut window = Vec::new();
    if plan.direct {
        // SAFETY: the sources' addresses and pieces describe bytes of their `data`, which they
        // keep unchanged until `agree` below has heard from every aggregator.
        let r = unsafe { plan.direct_windows(|layout| write_window(file, opt.lock, layout, &mut window)) };
        return agree(&cx, r.err().map(|e| super::backend::mpi_error("writing", "the file", &e)));
    }
    let me = cx.rank();
    let mut failed: Option<MpiError> = None;
    let mut staging = Vec::new();
    for r in 0..plan.rounds {
        let ph = cx.phase(6);
        let sends = plan.send_slots(&ext, data.as_ptr() as *mut u8, r);
        // What this rank receives as an aggregator: per source, its pieces in the window.
        let mine = plan.my_window(me, r);
        let (recvs, layout) = plan.recv_layout(mine, r, &mut staging);
        // SAFETY: send slots lie inside `data`, receive slots inside `staging` (disjoint
        // stretches per source); all are waited for inside the call.
        unsafe { alltoallv(&ph, &sends, &recvs)? };
        if let (Some(_), None) = (mine, &failed) {
            // SAFETY: the layout's pointers are its sources' stretches of `staging`, received.
            if let Err(e) = unsafe { write_window(file, opt.lock, &layout, &mut window) } {
                failed = Some(super::backend::mpi_error("writing", "the file", &e));
            }
        }
    }
    agree(&cx, failed)
}

/// `read_all` with a striping unit (the lock is not used by reads).
pub fn read_all_with(u: &Universe, comm: &Comm, file: &dyn Backend, runs: &[(u64, u64)], data: &mut [u8], hints: &CbHints, opt: Options) -> MpiResult<usize> {
    let cx = Coll::next(u, comm);
    let ext = sieve::extents(runs, data.len());
    // The end of the file, for this rank's count of bytes read.
    let eof = file.size();
    let status = match (&ext, &eof) {
        (Err(e), _) | (_, Err(e)) => Err(io_status(e)),
        _ => Ok(()),
    };
    // Only the bytes before the end move: the rest of `data` stays as it was.
    let ext = clip_at_end(ext.unwrap_or_default(), *eof.as_ref().unwrap_or(&u64::MAX));
    let call = Call { data: data.as_mut_ptr(), mode: hints.read, align: opt.striping_unit, write: false };
    let plan = match setup(&cx, &ext, status, hints, call)? {
        Setup::Independent => return sieve::read(file, runs, data, hints.buffer_size).map_err(|e| super::backend::mpi_error("reading", "the file", &e)),
        Setup::TwoPhase(p) => p,
    };
    let got = ext.iter().map(|e| e.len as usize).sum();
    let mut window = Vec::new();
    if plan.direct {
        // SAFETY: the sources' addresses and pieces describe disjoint bytes of their `data`,
        // which they leave alone until `agree` below has heard from every aggregator.
        let r = unsafe { plan.direct_windows(|layout| read_window(file, layout, &mut window)) };
        agree(&cx, r.err().map(|e| super::backend::mpi_error("reading", "the file", &e)))?;
        return Ok(got);
    }
    let me = cx.rank();
    let mut failed: Option<MpiError> = None;
    let mut staging = Vec::new();
    for r in 0..plan.rounds {
        let ph = cx.phase(6);
        let mine = plan.my_window(me, r);
        // As an aggregator: read the window, then pack each source's pieces in `staging`.
        let (sends, layout) = plan.recv_layout(mine, r, &mut staging);
        if let (Some(_), None) = (mine, &failed) {
            // SAFETY: the layout's pointers are disjoint stretches of `staging`.
            if let Err(e) = unsafe { read_window(file, &layout, &mut window) } {
                failed = Some(super::backend::mpi_error("reading", "the file", &e));
            }
        }
        // The other way round from the write: what an aggregator would receive, it sends.
        let recvs = plan.send_slots(&ext, data.as_mut_ptr(), r);
        // SAFETY: receive slots are disjoint stretches of `data`, send slots lie in `staging`;
        // all are waited for inside the call.
        unsafe { alltoallv(&ph, &sends, &recvs)? };
    }
    agree(&cx, failed)?;
    Ok(got)
}

/// Whether the ranks' buffers may be accessed directly: this rank's token, the same non-zero
/// value on every rank exactly when they all live in one address space.
fn address_space(u: &Universe) -> u64 {
    if u.engine.local_peers() {
        std::process::id() as u64
    } else {
        0
    }
}

/// The error classes a status word can carry (index + 1; 0 is success).
const CLASSES: &[ErrorClass] = &[
    ErrorClass::Arg,
    ErrorClass::Io,
    ErrorClass::NoSuchFile,
    ErrorClass::FileExists,
    ErrorClass::Access,
    ErrorClass::NoSpace,
    ErrorClass::Quota,
    ErrorClass::ReadOnly,
    ErrorClass::FileInUse,
    ErrorClass::BadFile,
];

fn status_of(class: ErrorClass) -> u64 {
    CLASSES.iter().position(|&c| c == class).unwrap_or(1) as u64 + 1
}

fn class_of(status: u64) -> ErrorClass {
    CLASSES.get(status as usize - 1).copied().unwrap_or(ErrorClass::Io)
}

fn io_status(e: &std::io::Error) -> MpiError {
    if e.kind() == std::io::ErrorKind::InvalidInput && e.raw_os_error().is_none() {
        err(ErrorClass::Arg, format!("collective file access: {e}"))
    } else {
        err(error_class(e), format!("collective file access: {e}"))
    }
}

/// Step 5: every rank learns whether any rank failed; a rank that did returns its own error.
fn agree(cx: &Coll, failed: Option<MpiError>) -> MpiResult {
    let n = cx.size();
    let mut st = vec![0u64; n];
    st[cx.rank()] = failed.as_ref().map_or(0, |e| status_of(e.class));
    let blocks = Blocks { base: st.as_mut_ptr() as *mut u8, offs: (0..n).map(|i| (i * 8) as isize).collect(), lens: vec![8; n] };
    // SAFETY: `st` holds n disjoint 8-byte blocks; ours is in place.
    unsafe { crate::coll::allgather::allgather(&cx.phase(7), None, &blocks)? };
    if let Some(e) = failed {
        return Err(e);
    }
    match st.iter().position(|&s| s != 0) {
        Some(r) => Err(err(class_of(st[r]), format!("the collective file access failed on rank {r} (an aggregator)"))),
        None => Ok(()),
    }
}

/// With `CbMode::Automatic` and the ranks in separate address spaces, accesses whose every
/// piece (merged run) on every rank is at least this long go independent although they
/// interleave: one system call per piece then costs less than moving all the data through the
/// aggregators (on one node 1.5 to 5x faster for benches/io_bw.c's 16 KiB block rows). Where
/// the ranks share an address space, aggregators already write the pieces where they lie.
pub const LARGE_PIECE: u64 = sieve::DIRECT_MIN;

/// How the call proceeds.
enum Setup {
    Independent,
    TwoPhase(Plan),
}

/// One collective call's own parameters.
struct Call {
    /// This rank's packed data (read from for writes, written to for reads).
    data: *mut u8,
    mode: CbMode,
    /// File domains start on multiples of this (the striping unit); 0: anywhere.
    align: u64,
    write: bool,
}

/// The two-phase schedule, the same on every rank except for `from`, `addr` and `mine` (an
/// aggregator's).
struct Plan {
    /// Communicator ranks of the aggregators, by domain.
    aggs: Vec<usize>,
    /// Window lists, by domain (empty when `direct`: each aggregator knows only its own).
    windows: Vec<Vec<(u64, u64)>>,
    /// As an aggregator: the pieces of its domain each rank asked for, by rank.
    from: Vec<Vec<(u64, u64)>>,
    /// As an aggregator: where each rank's bytes of its domain start in that rank's data (an
    /// address in the rank's address space, of use only when `direct`).
    addr: Vec<*mut u8>,
    /// As an aggregator: its windows.
    mine: Vec<(u64, u64)>,
    rounds: usize,
    /// The ranks share an address space: aggregators access the ranks' buffers themselves.
    direct: bool,
}

/// Steps 1 to 3 (see the module's notes).
fn setup(cx: &Coll, ext: &[Extent], status: Result<(), MpiError>, hints: &CbHints, call: Call) -> MpiResult<Setup> {
    let n = cx.size();
    let me = cx.rank();
    let lo = ext.first().map_or(u64::MAX, |e| e.off);
    let hi = ext.last().map_or(0, |e| e.end());
    let shortest = ext.iter().map(|e| e.len).min().unwrap_or(u64::MAX);
    let mut sums = vec![[0u64; 5]; n];
    sums[me] = [lo, hi, status.as_ref().err().map_or(0, |e| status_of(e.class)), address_space(cx.u), shortest];
    let blocks = Blocks { base: sums.as_mut_ptr() as *mut u8, offs: (0..n).map(|i| (i * 40) as isize).collect(), lens: vec![40; n] };
    // SAFETY: `sums` holds n disjoint 40-byte blocks; ours is in place.
    unsafe { crate::coll::allgather::allgather(&cx.phase(1), None, &blocks)? };
    status?;
    if let Some(r) = sums.iter().position(|s| s[2] != 0) {
        return Err(err(class_of(sums[r][2]), format!("the collective file access failed on rank {r} before any I/O (bad runs or an unreadable file size there)")));
    }
    let direct = sums[0][3] != 0 && sums.iter().all(|s| s[3] == sums[0][3]);
    let ranges: Vec<(u64, u64)> = sums.iter().map(|s| (s[0], s[1])).collect();
    let two_phase = match call.mode {
        CbMode::Enable => true,
        CbMode::Disable => false,
        CbMode::Automatic => interleaved(&ranges) && (direct || sums.iter().any(|s| s[4] < LARGE_PIECE)),
    };
    let (glo, ghi) = ranges.iter().filter(|r| r.0 < r.1).fold((u64::MAX, 0), |a, r| (a.0.min(r.0), a.1.max(r.1)));
    if !two_phase || glo >= ghi {
        return Ok(Setup::Independent);
    }
    let bounds = domains(glo, ghi, n, hints.nodes, hints.buffer_size, call.align);
    let aggs = aggregators(n, bounds.len() - 1);
    let domain = aggs.iter().position(|&a| a == me);

    // Step 2: the pieces of every domain go to its aggregator, with where their bytes start.
    let pieces = split(ext, &bounds);
    let total = ext.last().map_or(0, |e| e.pos + e.len as usize);
    let mut counts = vec![[0u64; 2]; n];
    for (d, p) in pieces.iter().enumerate() {
        let at = p.first().map_or(total, |f| data_pos(ext, f.0, total));
        counts[aggs[d]] = [p.len() as u64, call.data.wrapping_add(at) as u64];
    }
    let mut got = vec![[0u64; 2]; n];
    // SAFETY: n 16-byte blocks each way, in disjoint vectors.
    unsafe { crate::coll::alltoall::alltoall(&cx.phase(2), counts.as_ptr() as *const u8, 16, got.as_mut_ptr() as *mut u8, 16)? };
    let mut from: Vec<Vec<(u64, u64)>> = got.iter().map(|&c| vec![(0, 0); c[0] as usize]).collect();
    let addr: Vec<*mut u8> = got.iter().map(|c| c[1] as usize as *mut u8).collect();
    let sends: Vec<Slot> = pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(d, p)| Slot { peer: Some(aggs[d]), buf: p.as_ptr() as *mut u8, bytes: p.len() * 16, round: 0 })
        .collect();
    let recvs: Vec<Slot> = from
        .iter_mut()
        .enumerate()
        .filter(|(_, f)| !f.is_empty())
        .map(|(j, f)| Slot { peer: Some(j), buf: f.as_mut_ptr() as *mut u8, bytes: f.len() * 16, round: 0 })
        .collect();
    // SAFETY: the slots cover the piece vectors, each (u64, u64) 16 bytes; receive vectors are
    // distinct allocations.
    unsafe { alltoallv(&cx.phase(3), &sends, &recvs)? };

    // Step 3: the aggregators' windows, made known to all (to themselves only when direct).
    let mine = match domain {
        Some(d) => windows(&from, bounds[d + 1], hints.buffer_size),
        None => vec![],
    };
    if direct {
        record_direct(cx, &aggs, &pieces, &from, call.write);
        return Ok(Setup::TwoPhase(Plan { aggs, windows: vec![], from, addr, mine, rounds: 0, direct }));
    }
    let mut wcounts = vec![0u64; n];
    wcounts[me] = mine.len() as u64;
    let blocks = Blocks { base: wcounts.as_mut_ptr() as *mut u8, offs: (0..n).map(|i| (i * 8) as isize).collect(), lens: vec![8; n] };
    // SAFETY: `wcounts` holds n disjoint 8-byte blocks; ours is in place.
    unsafe { crate::coll::allgather::allgather(&cx.phase(4), None, &blocks)? };
    let total: u64 = wcounts.iter().sum();
    let mut all = vec![(0u64, 0u64); total as usize];
    let mut offs = Vec::with_capacity(n);
    let mut at = 0usize;
    for &c in &wcounts {
        offs.push(at);
        at += c as usize;
    }
    all[offs[me]..offs[me] + mine.len()].copy_from_slice(&mine);
    if total > 0 {
        let blocks = Blocks { base: all.as_mut_ptr() as *mut u8, offs: offs.iter().map(|&o| (o * 16) as isize).collect(), lens: wcounts.iter().map(|&c| c as usize * 16).collect() };
        // SAFETY: `all` holds the n disjoint blocks described; ours is in place.
        unsafe { crate::coll::allgather::allgather(&cx.phase(5), None, &blocks)? };
    }
    let windows: Vec<Vec<(u64, u64)>> = aggs.iter().map(|&a| all[offs[a]..offs[a] + wcounts[a] as usize].to_vec()).collect();
    let rounds = windows.iter().map(|w| w.len()).max().unwrap_or(0);
    Ok(Setup::TwoPhase(Plan { aggs, windows, from, addr, mine, rounds, direct }))
}

/// The monitoring's view of a direct exchange, as if it were messages on the communicator's
/// collective context: a writer hands each aggregator its pieces there, an aggregator hands
/// each reader its pieces.
fn record_direct(cx: &Coll, aggs: &[usize], pieces: &[Vec<(u64, u64)>], from: &[Vec<(u64, u64)>], write: bool) {
    let (u, c) = (cx.u, cx.c);
    let bytes = |l: &[(u64, u64)]| l.iter().map(|p| p.1 as usize).sum::<usize>();
    let send = |to: usize, b: usize| {
        if b > 0 {
            crate::monitoring::record_send(u.rank, u.size, c.world_rank(to), b, c.coll_context());
        }
    };
    if write {
        pieces.iter().enumerate().for_each(|(d, p)| send(aggs[d], bytes(p)));
    } else {
        from.iter().enumerate().for_each(|(j, p)| send(j, bytes(p)));
    }
}

/// ROMIO's test for collective buffering: some rank's access starts before the end of an
/// access of a lower rank. Empty ranges (start >= end) are left out.
pub fn interleaved(ranges: &[(u64, u64)]) -> bool {
    let mut end = 0u64;
    let mut any = false;
    for &(lo, hi) in ranges.iter().filter(|r| r.0 < r.1) {
        if any && lo < end {
            return true;
        }
        end = end.max(hi);
        any = true;
    }
    false
}

/// Boundaries of the file domains of [`lo`, `hi`): `k + 1` increasing offsets from `lo` to `hi`.
/// `nodes` 0 means one domain per `buffer_size` bytes; the count is at most `n`. With `align`,
/// the inner boundaries are rounded to its nearest multiple (domains may then be empty).
pub fn domains(lo: u64, hi: u64, n: usize, nodes: usize, buffer_size: usize, align: u64) -> Vec<u64> {
    let extent = hi - lo;
    let k = if nodes == 0 { extent.div_ceil(buffer_size.max(1) as u64).min(n as u64) as usize } else { nodes.min(n) }.max(1);
    let size = extent.div_ceil(k as u64);
    let mut b = Vec::with_capacity(k + 1);
    b.push(lo);
    for i in 1..k {
        let mut x = lo.saturating_add(size.saturating_mul(i as u64)).min(hi);
        if align > 1 {
            x = ((x + align / 2) / align).saturating_mul(align);
        }
        let prev = *b.last().unwrap();
        b.push(x.clamp(prev, hi));
    }
    b.push(hi);
    b
}

/// The aggregators of `k` domains among `n` ranks: evenly spaced (ranks of a node are
/// consecutive in oxmpi, so this also spreads them over sockets as OMPIO's choice does).
pub fn aggregators(n: usize, k: usize) -> Vec<usize> {
    (0..k).map(|i| i * n / k).collect()
}

/// This rank's extents cut at the domain boundaries: the pieces of each domain.
pub fn split(ext: &[Extent], bounds: &[u64]) -> Vec<Vec<(u64, u64)>> {
    let k = bounds.len() - 1;
    let mut out = vec![Vec::new(); k];
    let mut d = 0;
    for e in ext {
        let (mut off, end) = (e.off, e.end());
        while off < end {
            while d + 1 < k && bounds[d + 1] <= off {
                d += 1;
            }
            let stop = if d + 1 < k { end.min(bounds[d + 1]) } else { end };
            out[d].push((off, stop - off));
            off = stop;
        }
    }
    out
}

/// An aggregator's windows over the pieces `from` (every rank's, each list sorted) of its
/// domain (which ends at `dend`): each starts at the first requested byte not yet covered and
/// spans at most `buffer_size` bytes, not past the domain.
pub fn windows(from: &[Vec<(u64, u64)>], dend: u64, buffer_size: usize) -> Vec<(u64, u64)> {
    let bs = buffer_size.max(1) as u64;
    // The pieces' span and byte count, without merging them: each list is sorted and a rank's
    // pieces do not overlap, so its first piece starts and its last ends its part.
    let lo = from.iter().filter_map(|l| l.first()).map(|p| p.0).min();
    let hi = from.iter().filter_map(|l| l.last()).map(|p| p.0 + p.1).max();
    let (Some(lo), Some(hi)) = (lo, hi) else { return vec![] };
    let total: u64 = from.iter().flatten().map(|p| p.1).sum();
    if total >= hi - lo {
        // As many bytes as the span: it has no hole (the usual interleaved access; with
        // overlaps it may have some, and cutting them in is still correct: windows only
        // schedule the accesses, which cover just the requested bytes). The windows are the
        // span's cuts, as the merge below would give, without sorting every piece.
        let mut out = Vec::with_capacity((hi - lo).div_ceil(bs) as usize);
        let mut s = lo;
        while s < hi {
            let e = s.saturating_add(bs).min(dend);
            out.push((s, e));
            s = e;
        }
        return out;
    }
    merged_windows(from, dend, bs)
}

/// `windows` of pieces with holes: merged in file order, gaps skipped.
fn merged_windows(from: &[Vec<(u64, u64)>], dend: u64, bs: u64) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = from.iter().flatten().copied().collect();
    // Each rank's list is sorted: the stable sort finds these runs and only merges them.
    all.sort();
    let mut out = Vec::new();
    let mut covered = 0u64;
    for (o, l) in all {
        let end = o + l;
        while end > covered {
            let s = o.max(covered);
            let e = s.saturating_add(bs).min(dend);
            out.push((s, e));
            covered = e;
        }
    }
    out
}

/// Where in the packed data the first requested byte at or after file offset `x` is.
fn data_pos(ext: &[Extent], x: u64, total: usize) -> usize {
    let k = ext.partition_point(|e| e.end() <= x);
    match ext.get(k) {
        Some(e) => e.pos + x.saturating_sub(e.off) as usize,
        None => total,
    }
}

/// The pieces of `list` inside [`s`, `e`), clipped.
fn clip(list: &[(u64, u64)], s: u64, e: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
    let k = list.partition_point(|p| p.0 + p.1 <= s);
    list[k..].iter().take_while(move |p| p.0 < e).map(move |&(o, l)| {
        let a = o.max(s);
        (a, (o + l).min(e) - a)
    })
}

/// One source's pieces of a window, and where their bytes lie, packed in piece order: in the
/// aggregator's staging buffer, or (direct) in the source's own data.
struct Source {
    ptr: *mut u8,
    pieces: Vec<(u64, u64)>,
}

impl Plan {
    /// This rank's stretch of `data` for every aggregator's window of round `r`.
    fn send_slots(&self, ext: &[Extent], data: *mut u8, r: usize) -> Vec<Slot> {
        let total = ext.last().map_or(0, |e| e.pos + e.len as usize);
        let mut out = Vec::new();
        for (d, w) in self.windows.iter().enumerate() {
            let Some(&(s, e)) = w.get(r) else { continue };
            let (a, b) = (data_pos(ext, s, total), data_pos(ext, e, total));
            if b > a {
                out.push(Slot { peer: Some(self.aggs[d]), buf: data.wrapping_add(a), bytes: b - a, round: r & 0xff });
            }
        }
        out
    }

    /// This rank's window in round `r`, if it aggregates one.
    fn my_window(&self, _me: usize, r: usize) -> Option<(u64, u64)> {
        self.mine.get(r).copied()
    }

    /// As an aggregator with window `w`: the slots of every source's bytes in `staging` (grown
    /// to hold them, packed in rank order) and their pieces.
    fn recv_layout(&self, w: Option<(u64, u64)>, r: usize, staging: &mut Vec<u8>) -> (Vec<Slot>, Vec<Source>) {
        let Some((s, e)) = w else { return (vec![], vec![]) };
        let mut lists = Vec::with_capacity(self.from.len());
        let mut at = 0usize;
        for list in &self.from {
            let pieces: Vec<(u64, u64)> = clip(list, s, e).collect();
            let bytes: usize = pieces.iter().map(|p| p.1 as usize).sum();
            lists.push((at, bytes, pieces));
            at += bytes;
        }
        if staging.len() < at {
            // A fresh zeroed allocation (calloc: the kernel's zero pages) rather than `resize`,
            // which would memset the whole window in user space first; every round's bytes are
            // received (written) or read (read) into it before they are used.
            *staging = vec![0u8; at];
        }
        let base = staging.as_mut_ptr();
        let slots = lists
            .iter()
            .enumerate()
            .filter(|x| x.1 .1 > 0)
            .map(|(j, &(at, bytes, _))| Slot { peer: Some(j), buf: base.wrapping_add(at), bytes, round: r & 0xff })
            .collect();
        (slots, lists.into_iter().map(|(at, _, pieces)| Source { ptr: base.wrapping_add(at), pieces }).collect())
    }

    /// As a direct aggregator: `f` on the layout of each of its windows in turn, the sources'
    /// pieces pointing into their own data; stops at the first error.
    ///
    /// # Safety
    /// `addr` and `from` must describe the sources' data truly (step 2), and that data must
    /// stay valid, and not be accessed by others, until the call is over.
    unsafe fn direct_windows(&self, mut f: impl FnMut(&[Source]) -> std::io::Result<()>) -> std::io::Result<()> {
        // Windows go up the file and each source's pieces are packed in file order, so its
        // bytes of a window follow those of the windows before.
        let mut cursor = vec![0usize; self.from.len()];
        for &(s, e) in &self.mine {
            let layout: Vec<Source> = self
                .from
                .iter()
                .zip(&self.addr)
                .zip(cursor.iter_mut())
                .map(|((list, &a), c)| {
                    let pieces: Vec<(u64, u64)> = clip(list, s, e).collect();
                    let src = Source { ptr: a.wrapping_add(*c), pieces };
                    *c += src.pieces.iter().map(|p| p.1 as usize).sum::<usize>();
                    src
                })
                .collect();
            f(&layout)?;
        }
        Ok(())
    }
}

/// Every piece of the layout as (file offset, length, address), in file order (on equal
/// offsets, in source order). Each source's pieces are sorted already, so the stable sort only
/// finds and merges those runs: O(pieces x log sources) where a general sort was a quarter of
/// an aggregator's CPU time with small pieces.
fn in_file_order(layout: &[Source]) -> Vec<(u64, usize, *mut u8)> {
    let mut v = Vec::with_capacity(layout.iter().map(|s| s.pieces.len()).sum());
    for src in layout {
        let mut p = src.ptr;
        for &(o, l) in &src.pieces {
            v.push((o, l as usize, p));
            p = p.wrapping_add(l as usize);
        }
    }
    v.sort_by_key(|x| x.0);
    v
}

/// The covered stretches of the pieces `v` (in file order), merged where they touch or overlap.
fn coverage(v: &[(u64, usize, *mut u8)]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(a, l, _) in v {
        let b = a + l as u64;
        match out.last_mut() {
            Some(x) if a <= x.1 => x.1 = x.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Whether the pieces `v` (in file order) tile one stretch of the file (no hole, no overlap):
/// one vectored access then moves the window.
fn tiles(v: &[(u64, usize, *mut u8)]) -> bool {
    v.windows(2).all(|w| w[0].0 + w[0].1 as u64 == w[1].0)
}

/// The extents cut at the end of the file `eof`: those starting past it are dropped.
fn clip_at_end(mut ext: Vec<Extent>, eof: u64) -> Vec<Extent> {
    ext.retain(|e| e.off < eof);
    for e in &mut ext {
        e.len = e.len.min(eof - e.off);
    }
    ext
}

/// An aggregator's write of one window: the sources' pieces in one vectored write where they
/// tile the window, else laid out in rank order (later ranks win on overlaps) in `buf` and
/// written as the module's notes say.
///
/// # Safety
/// Every source's `ptr` holds its pieces' bytes, readable for the call.
unsafe fn write_window(file: &dyn Backend, lock: Option<&FileLock>, layout: &[Source], buf: &mut Vec<u8>) -> std::io::Result<()> {
    let t = in_file_order(layout);
    let cov = coverage(&t);
    let (Some(first), Some(last)) = (cov.first(), cov.last()) else { return Ok(()) };
    let (s, e) = (first.0, last.1);
    // Held from the read to the write: a writer into a hole meanwhile would be overwritten. Plain
    // writes take it too, so another handle's read-modify-write cannot undo them.
    let _guard = match lock {
        Some(l) => Some(l.lock(s, e - s)?),
        None => None,
    };
    if tiles(&t) {
        // SAFETY: each piece is `len` readable bytes at its address (this function's contract).
        let iov: Vec<std::io::IoSlice> = t.iter().map(|&(_, l, p)| std::io::IoSlice::new(unsafe { std::slice::from_raw_parts(p, l) })).collect();
        return file.write_vectored_at(&iov, s);
    }
    let covered: u64 = cov.iter().map(|c| c.1 - c.0).sum();
    let holes = (e - s) - covered;
    buf.clear();
    buf.resize((e - s) as usize, 0);
    let rmw = holes > 0 && holes <= covered && file.can_read();
    if rmw {
        // Past the end of the file the holes stay zero: the write extends the file to `e`.
        file.read_at(buf, s)?;
    }
    for src in layout {
        let mut at = src.ptr as *const u8;
        for &(o, l) in &src.pieces {
            let to = (o - s) as usize;
            // SAFETY: `l` readable bytes at `at` (contract), inside `buf` at `to`, disjoint.
            buf[to..to + l as usize].copy_from_slice(unsafe { std::slice::from_raw_parts(at, l as usize) });
            at = at.wrapping_add(l as usize);
        }
    }
    if holes == 0 || rmw {
        return file.write_at(buf, s);
    }
    for (a, b) in cov {
        file.write_at(&buf[(a - s) as usize..(b - s) as usize], a)?;
    }
    Ok(())
}

/// An aggregator's read of one window: straight into the pieces where they tile the window,
/// else the span of the requested pieces in one access (holes included: they are no larger
/// than the buffer), then copied to each piece. Bytes past the end of the file read as zero.
///
/// # Safety
/// Every source's `ptr` has room for its pieces' bytes, writable for the call, and no two
/// sources' bytes overlap.
unsafe fn read_window(file: &dyn Backend, layout: &[Source], buf: &mut Vec<u8>) -> std::io::Result<()> {
    let t = in_file_order(layout);
    if tiles(&t) {
        let Some(&(s, ..)) = t.first() else { return Ok(()) };
        // SAFETY: each piece is `len` writable bytes at its address, disjoint (contract).
        let mut iov: Vec<std::io::IoSliceMut> = t.iter().map(|&(_, l, p)| std::io::IoSliceMut::new(unsafe { std::slice::from_raw_parts_mut(p, l) })).collect();
        let mut got = file.read_vectored_at(&mut iov, s)?;
        // A file shortened meanwhile: the rest reads as zero.
        for b in iov.iter_mut() {
            let keep = got.min(b.len());
            b[keep..].fill(0);
            got -= keep;
        }
        return Ok(());
    }
    let cov = coverage(&t);
    let (Some(first), Some(last)) = (cov.first(), cov.last()) else { return Ok(()) };
    let (s, e) = (first.0, last.1);
    buf.clear();
    buf.resize((e - s) as usize, 0);
    file.read_at(buf, s)?;
    for src in layout {
        let mut at = src.ptr;
        for &(o, l) in &src.pieces {
            let from = (o - s) as usize;
            // SAFETY: room for `l` bytes at `at` (contract), disjoint from `buf`.
            unsafe { std::slice::from_raw_parts_mut(at, l as usize) }.copy_from_slice(&buf[from..from + l as usize]);
            at = at.wrapping_add(l as usize);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An aggregator's read-modify-write around a hole never undoes an independent write into
    /// the hole: every value the independent writer puts there reads back until its next write.
    #[test]
    fn read_modify_write_keeps_a_concurrent_write_into_its_hole() {
        use super::super::backend::{OpenMode, Posix};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let path = std::env::temp_dir().join(format!("oxmpi-rmw-{}", std::process::id())).to_string_lossy().into_owned();
        let f = Arc::new(Posix::open(&path, OpenMode { read: true, write: true, create: true, exclusive: false }).unwrap());
        f.set_size(12).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let aggregator = {
            let (f, path, done) = (f.clone(), path.clone(), done.clone());
            std::thread::spawn(move || {
                let lock = FileLock::open(&path).unwrap();
                // Two pieces around the hole [4, 8): holes 4 <= covered 8, so read-modify-write.
                let mut staging = vec![0xEEu8; 8];
                let layout = [Source { ptr: staging.as_mut_ptr(), pieces: vec![(0, 4), (8, 4)] }];
                let mut buf = Vec::new();
                while !done.load(Ordering::Relaxed) {
                    // SAFETY: `staging` holds the pieces' 8 bytes.
                    unsafe { write_window(&*f, Some(&lock), &layout, &mut buf) }.unwrap();
                }
            })
        };
        let lock = FileLock::open(&path).unwrap();
        let mut lost = 0;
        for i in 0..20_000u32 {
            let v = i.to_le_bytes();
            sieve::write_locked(&*f, &lock, &[(4, 4)], &v, 1 << 20, true).unwrap();
            let mut back = [0u8; 4];
            f.read_at(&mut back, 4).unwrap();
            lost += (back != v) as u32;
        }
        done.store(true, Ordering::Relaxed);
        aggregator.join().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(lost, 0, "writes into the hole undone by the aggregator's read-modify-write");
    }

    #[test]
    fn interleaving_follows_romio() {
        assert!(!interleaved(&[(0, 10), (10, 20), (20, 30)]));
        assert!(interleaved(&[(0, 10), (5, 20)]));
        assert!(interleaved(&[(0, 100), (u64::MAX, 0), (50, 60)]), "an empty rank in between");
        assert!(interleaved(&[(10, 20), (0, 5)]), "a later rank before an earlier one");
        assert!(!interleaved(&[(u64::MAX, 0), (u64::MAX, 0)]));
    }

    #[test]
    fn domains_cover_the_range() {
        assert_eq!(domains(0, 100, 4, 4, 1 << 20, 0), vec![0, 25, 50, 75, 100]);
        assert_eq!(domains(0, 100, 2, 4, 1 << 20, 0), vec![0, 50, 100], "at most one per rank");
        assert_eq!(domains(10, 110, 8, 0, 40, 0), vec![10, 44, 78, 110], "automatic: one per buffer");
        assert_eq!(domains(0, 100, 4, 4, 1, 16), vec![0, 32, 48, 80, 100], "aligned to 16");
        assert_eq!(domains(3, 5, 4, 4, 1, 1000), vec![3, 3, 3, 3, 5], "tiny range, large stripes: empty domains");
        let big = 5u64 << 32;
        assert_eq!(domains(big, big + 3, 3, 0, 1, 0), vec![big, big + 1, big + 2, big + 3]);
        assert_eq!(aggregators(8, 3), vec![0, 2, 5]);
        assert_eq!(aggregators(3, 3), vec![0, 1, 2]);
    }

    #[test]
    fn split_cuts_at_boundaries() {
        let ext = sieve::extents(&[(0, 30), (40, 5), (60, 40)], 75).unwrap();
        assert_eq!(split(&ext, &[0, 25, 50, 100]), vec![vec![(0, 25)], vec![(25, 5), (40, 5)], vec![(60, 40)]]);
        assert_eq!(split(&ext, &[0, 0, 100]), vec![vec![], vec![(0, 30), (40, 5), (60, 40)]]);
    }

    #[test]
    fn windows_skip_gaps_and_stop_at_the_domain() {
        let from = vec![vec![(0, 5), (1000, 3)], vec![], vec![(2, 10)]];
        assert_eq!(windows(&from, 2000, 4), vec![(0, 4), (4, 8), (8, 12), (1000, 1004)]);
        assert_eq!(windows(&[vec![(0, 10)]], 10, 64), vec![(0, 10)]);
        assert_eq!(windows(&[vec![]], 10, 64), vec![]);
        assert_eq!(windows(&[vec![], vec![]], 10, 64), vec![]);
    }

    #[test]
    fn dense_windows_are_the_merged_ones() {
        // Interleaved rows of 4 ranks, every byte of the span requested once.
        let from: Vec<Vec<(u64, u64)>> = (0..4u64).map(|r| (0..50u64).map(|i| (100 + (i * 4 + r) * 7, 7)).collect()).collect();
        let dend = 100 + 4 * 50 * 7 + 30;
        for bs in [1usize, 5, 7, 64, 1000, 1 << 20] {
            assert_eq!(windows(&from, dend, bs), merged_windows(&from, dend, bs as u64), "buffer {bs}");
        }
        // Overlaps and a hole that add up to the span: cuts of the span cover every piece.
        let odd = vec![vec![(0, 6)], vec![(4, 4)], vec![(10, 2)]];
        let w = windows(&odd, 20, 5);
        assert_eq!(w, vec![(0, 5), (5, 10), (10, 15)]);
        for p in odd.iter().flatten() {
            assert!(w.iter().any(|x| x.0 <= p.0 && p.0 < x.1), "piece {p:?} starts in a window");
        }
    }

    #[test]
    fn data_positions_and_clipping() {
        let ext = sieve::extents(&[(10, 5), (20, 5)], 10).unwrap();
        assert_eq!(data_pos(&ext, 0, 10), 0);
        assert_eq!(data_pos(&ext, 12, 10), 2);
        assert_eq!(data_pos(&ext, 17, 10), 5);
        assert_eq!(data_pos(&ext, 24, 10), 9);
        assert_eq!(data_pos(&ext, 25, 10), 10);
        assert_eq!(clip(&[(10, 5), (20, 5)], 12, 22).collect::<Vec<_>>(), vec![(12, 3), (20, 2)]);
    }
}
