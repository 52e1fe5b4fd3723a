//! MPI_Reduce: binomial tree towards the root, for commutative operations (all predefined ones
//! the collectives accept).
//!
//! Relative to the root (`vr = (rank - root) mod n`), in round k a rank whose bit k is clear
//! receives the partial result of `vr + 2^k` and folds it into its own; a rank whose bit k is set
//! sends its partial result to `vr - 2^k` and is done. ceil(log2 n) rounds.
//!
//! Non-commutative ops must combine in rank order (MPI 4.1 section 6.9.1: `a0 op a1 op ...`).
//! Rotating the ranks around the root breaks that, so they reduce on the unrotated tree to rank 0
//! (`ordered`), each partial result covering a contiguous range of ranks with the lower range's
//! operand first, and rank 0 sends the result to the root.
use super::Coll;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["binomial", "rabenseifner", "clairvoyant", "arrival", "flat"];

/// Every rank publishes its vector in the communicator's shared memory, the non-roots return
/// at once, the root folds in rank order (`flat`); `auto` for vectors up to `flat::MAX` bytes
/// on 2 to 8 ranks that do not outnumber the CPUs.
const FLAT: usize = 4;

/// Commutative reductions of at least this many bytes record and share their arrival times, and
/// `auto` runs them with Clairvoyant when the predicted imbalance is above 1
/// (`clairvoyant_pap`).
const CLAIRVOYANT_MIN: usize = 256 << 10;

/// Vectors of at least this many bytes on at least `RABENSEIFNER_RANKS` ranks use Rabenseifner's
/// algorithm (commutative ops).
const RABENSEIFNER_MIN: usize = 1 << 20;
const RABENSEIFNER_RANKS: usize = 8;

/// MPI_Reduce: the algorithm `select` picks (see `binomial` for the arguments).
///
/// # Safety
/// As `binomial`.
pub unsafe fn reduce(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let arrived = super::clairvoyant_pap::now_ns();
    let n = cx.size();
    let bytes = count * red.size;
    let forced = super::select::forced(super::select::Collective::Reduce, ALGORITHMS)?;
    if n > 1 && bytes > 0 {
        // A rank-order fold: any op.
        if let Some(a) = super::flat::arena(cx, forced == Some(FLAT), forced.is_none())? {
            // SAFETY: per this function's contract.
            return unsafe { super::flat::reduce(cx, a, sendbuf, recvbuf, count, red, root, |s, r, k| beyond_flat(cx, s, r, k, red, root, forced, arrived)) };
        }
    }
    // SAFETY: per this function's contract.
    unsafe { beyond_flat(cx, sendbuf, recvbuf, count, red, root, forced, arrived) }
}

/// The algorithms other than `flat` (`forced`: the forced choice; `arrived`: when the call
/// began).
///
/// # Safety
/// As `binomial`.
#[allow(clippy::too_many_arguments)]
unsafe fn beyond_flat(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize, forced: Option<usize>, arrived: i64) -> MpiResult {
    let n = cx.size();
    let bytes = count * red.size;
    let forced = forced.filter(|&f| f != FLAT);
    // Rabenseifner combines blocks in an order that depends on the rank layout: commutative ops
    // only; the others combine in rank order (`ordered`).
    if !red.commutative() {
        // SAFETY: per this function's contract.
        return unsafe { ordered(cx, sendbuf, recvbuf, count, red, root) };
    }
    // Clairvoyant (Marendic et al. 2016; Proficz & Ocetkiewicz 2021) needs every rank to agree on
    // the arrival pattern: candidate calls share their arrival times whatever runs them.
    let min = if matches!(forced, Some(CLAIRVOYANT | ARRIVAL)) { 1 } else { CLAIRVOYANT_MIN };
    let arrivals = if super::clairvoyant_pap::candidate(cx, count, red.size, min) {
        Some(super::clairvoyant_pap::arrivals(cx, arrived, count, red.size)?)
    } else {
        None
    };
    let mut algo = if n == 1 || bytes == 0 { 0 } else { forced.unwrap_or_else(|| auto(bytes, count, n)) };
    if forced.is_none() {
        if let Some(a) = &arrivals {
            // Arrivals spread over more than 1/`ARRIVAL_SPREAD_DIV` of the member count times
            // one whole-vector step (the chain's work, one step per member) leave the chain time
            // to keep up; reports that predict as much count too (informed patterns are
            // trusted).
            let step = a.round.saturating_mul(a.segments as i64);
            let predicted = if a.imbalance > 0.0 { a.pattern.iter().max().copied().unwrap_or(0).saturating_mul(a.quantum) } else { 0 };
            let spread = a.last_spread.max(predicted);
            let crowded = bytes >= CROWDED_MIN && !super::select::threads_mode() && super::select::oversubscribed(n / CROWDED_RANKS_PER_CPU);
            let div = if super::select::threads_mode() { ARRIVAL_SPREAD_DIV } else { ARRIVAL_SPREAD_DIV_PROCESSES };
            if a.cell().is_some() && !crowded && spread >= step.saturating_mul(n as i64) / div {
                algo = ARRIVAL;
            } else if crowded && (a.imbalance > 0.0 || spread > step) {
                // Imbalanced, but too many processes per core for the chain or a
                // Clairvoyant schedule of whole-vector pieces: the tree combines in parallel.
                algo = 0;
            } else if a.imbalance > 1.0 && bytes < CLAIRVOYANT_MAX {
                algo = CLAIRVOYANT;
            } else if algo == 1 && spread > step {
                // Rabenseifner's halving waits for every rank at every step: with arrivals
                // spread wider than one vector's transfer, the tree's early pairs finish before
                // the last arrival (measured at 8 ranks, 1 MiB floats, 20 ms spread).
                algo = 0;
            }
        }
    }
    // SAFETY: per this function's contract.
    unsafe {
        match algo {
            1 => super::rabenseifner::reduce(cx, sendbuf, recvbuf, count, red, root),
            CLAIRVOYANT => match arrivals {
                Some(a) => {
                    let mut p = a.into_plan(cx, |_, _| root)?;
                    super::clairvoyant_exec::reduce(cx, sendbuf, recvbuf, count, red, root, &p.sched, p.segments, p.live.take())
                }
                // A phase of a larger collective, or too few elements: a balanced schedule.
                None => clairvoyant_balanced(cx, sendbuf, recvbuf, count, red, root),
            },
            ARRIVAL => match arrivals.as_ref().and_then(|a| a.cell().map(|c| (c, a.segments))) {
                Some((cell, segments)) => super::reduce_arrival::reduce(cx, sendbuf, recvbuf, count, red, root, cell, segments),
                // No arrival board (several nodes, a phase, too few elements): the tree.
                None => binomial(cx, sendbuf, recvbuf, count, red, root),
            },
            _ => binomial(cx, sendbuf, recvbuf, count, red, root),
        }
    }
}

/// Index of the arrival-order reduce in `ALGORITHMS`.
const ARRIVAL: usize = 3;
/// `auto` takes the arrival order when the arrivals spread over at least 1/`ARRIVAL_SPREAD_DIV`
/// of the member count times one whole-vector step.
const ARRIVAL_SPREAD_DIV: i64 = 2;
/// The same in processes mode: a spread of the whole chain's work (one step per member), the
/// least at which the chain keeps up (at half of it the last arrival waits about n/2 steps, the
/// tree log2 n), since every link there is a process to wake. Measured with
/// scripts/bench-pap.sh (8 ranks, 1M floats, random delays up to 1 ms, no reports, 7
/// interleaved runs, load 10-23 on 2 cores, so noisy): with 1/2, `auto` took the chain in most
/// calls (seen with `mpiexec --monitor`), tail median 51.4 ms against binomial 38.4 (arrival
/// forced 43.3; slower than binomial in 6 of 7 runs); at 20 ms, `auto` 31.7, binomial 52.1.
/// Threads mode keeps 1/2: there the chain won at 1 ms (arrival 24.8 ms, binomial 39.3).
const ARRIVAL_SPREAD_DIV_PROCESSES: i64 = 1;

/// In processes mode with more than `CROWDED_RANKS_PER_CPU` ranks per CPU (16 on 2 cores),
/// vectors of at least `CROWDED_MIN` bytes are "crowded": every link of the arrival chain must be woken and
/// scheduled among the other ranks' copies, and the calibrated round was then too noisy to
/// weigh the chain against the spread (measured when it was a MAX over ranks of one timing; it
/// is now a robust fit, `clairvoyant_calib`, not re-measured for this rule). `auto` runs
/// the binomial tree for them when the arrivals are imbalanced. Measured with
/// scripts/bench-pap.sh (random 20 ms delays, progress reports, 2 cores, load 4-12): 16
/// processes, 1M floats: arrival 38394/30501 us, binomial 27502/23792, Clairvoyant
/// 34178/35985; 8 processes, 1M floats: arrival 5547 us, binomial 11077; 16 processes, 128K
/// floats: arrival 621 us, binomial 1918.
const CROWDED_MIN: usize = 1 << 20;
const CROWDED_RANKS_PER_CPU: usize = 4;

/// `auto` does not run Clairvoyant for vectors of this many bytes or more: its schedule is fixed
/// when the first rank enters and the last rank's segments go one per round; measured slower
/// than the binomial tree at 16 ranks in both modes and level with it at 8 (1M floats, see
/// `CROWDED_MIN`). Forcing it still runs it.
const CLAIRVOYANT_MAX: usize = 4 << 20;

/// Clairvoyant without an arrival pattern (a phase of a larger collective, or too few elements
/// for the arrival exchange): the schedule for simultaneous arrivals; binomial when there is
/// nothing to reduce.
///
/// # Safety
/// As `binomial`.
pub unsafe fn clairvoyant_balanced(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let n = cx.size();
    // SAFETY: per this function's contract.
    unsafe {
        if n > 1 && count > 0 {
            let (segments, round) = super::clairvoyant_pap::params(count, red.size, n);
            let pb = crate::clairvoyant::Problem { arrivals: vec![0; n], root, segments, round, holds: Vec::new() };
            let s = crate::clairvoyant::cache::get(&pb);
            super::clairvoyant_exec::reduce(cx, sendbuf, recvbuf, count, red, root, &s, segments, None)
        } else {
            binomial(cx, sendbuf, recvbuf, count, red, root)
        }
    }
}

/// Index of Clairvoyant in `ALGORITHMS`.
const CLAIRVOYANT: usize = 2;

/// The automatic choice for a commutative op: an index into `ALGORITHMS`.
///
/// Measured with benches/coll_sweep.c (MPI_SUM on doubles to root 0, best of 3 repetitions,
/// microseconds per call) on the 2-core development machine, shared (load average 15-20):
///
/// ```text
///  n   bytes   binomial     rabenseifner |  MPICH    Open MPI
///              proc/thr     proc/thr     |
///  4   32 KiB    16/15        64/33      |  18487     16
///  4    1 MiB   460/256      686/380     |  40342   2064
///  8  256 KiB  1110/154     3977/271     |  98677   2676
///  8    1 MiB  8030/6520   16747/1206    |  96686   8980
///  8    4 MiB 37456/36556  22219/15360   | 107676  41708
/// ```
///
/// Shared memory makes a large message one memcpy by the receiver, so the tree's log2 n full
/// vectors are cheap until vectors reach MiB and ranks are many; then the halving's smaller,
/// fewer bytes win.
fn auto(bytes: usize, count: usize, n: usize) -> usize {
    if bytes >= RABENSEIFNER_MIN && n >= RABENSEIFNER_RANKS && count >= n {
        1
    } else {
        0
    }
}
use crate::error::MpiResult;
use crate::op::Reduction;

/// Reduces `count` elements from every rank into `recvbuf` at communicator rank `root`.
/// `sendbuf` is this rank's contribution; at the root with MPI_IN_PLACE the caller passes
/// `sendbuf == recvbuf`.
///
/// # Safety
/// `sendbuf` must hold `count` elements of `red`'s datatype; at the root `recvbuf` must hold
/// `count` writable elements and be either `sendbuf` or disjoint from it. `recvbuf` is not used
/// elsewhere.
pub unsafe fn binomial(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let n = cx.size();
    let bytes = count * red.size;
    let is_root = cx.rank() == root;
    if is_root && !std::ptr::eq(sendbuf, recvbuf) {
        // SAFETY: both hold `bytes` bytes and are disjoint (caller contract).
        unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
    }
    if n == 1 || bytes == 0 {
        return Ok(());
    }
    let vr = (cx.rank() + n - root) % n;
    // The partial result lives in `acc`: the root's recvbuf, or (elsewhere) the send buffer until
    // the first receive makes a private copy necessary. One allocation per call: the incoming
    // buffer, plus the private accumulator at non-roots that receive.
    let mut scratch: Vec<u8> = Vec::new();
    let mut acc: *const u8 = if is_root { recvbuf } else { sendbuf };
    let mut acc_mut: *mut u8 = if is_root { recvbuf } else { std::ptr::null_mut() };
    let mut mask = 1;
    while mask < n {
        if vr & mask == 0 {
            let src = vr | mask;
            if src < n {
                if scratch.is_empty() {
                    scratch = vec![0u8; if is_root { bytes } else { 2 * bytes }];
                    if !is_root {
                        let own = scratch[bytes..].as_mut_ptr();
                        // SAFETY: `own` has `bytes` bytes; sendbuf holds `bytes` bytes and is the
                        // user's buffer, disjoint from our allocation.
                        unsafe { std::ptr::copy_nonoverlapping(sendbuf, own, bytes) };
                        acc_mut = own;
                        acc = own;
                    }
                }
                let tmp = scratch.as_mut_ptr();
                // SAFETY: `tmp` is scratch[..bytes].
                unsafe { cx.recv(tmp, bytes, (src + root) % n) }?;
                // SAFETY: `tmp` (scratch[..bytes]) and `acc_mut` (recvbuf or scratch[bytes..])
                // each hold `count` elements and are disjoint.
                unsafe { red.apply(tmp, acc_mut, count) };
            }
        } else {
            let dst = vr & !mask;
            // SAFETY: `acc` is sendbuf (`bytes` readable, caller contract) or recvbuf/scratch, as long.
            unsafe { cx.send(acc, bytes, (dst + root) % n) }?;
            break;
        }
        mask <<= 1;
    }
    Ok(())
}

/// The binomial tree rooted at rank 0 without rotation, combining in rank order (any op); the
/// result then goes from rank 0 to `root`. Arguments as `binomial`.
///
/// # Safety
/// As `binomial`.
pub unsafe fn ordered(cx: &Coll, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction, root: usize) -> MpiResult {
    let n = cx.size();
    let rank = cx.rank();
    let bytes = count * red.size;
    if n == 1 || bytes == 0 {
        if rank == root && !std::ptr::eq(sendbuf, recvbuf) {
            // SAFETY: both hold `bytes` bytes and are disjoint (caller contract).
            unsafe { std::ptr::copy_nonoverlapping(sendbuf, recvbuf, bytes) };
        }
        return Ok(());
    }
    // `acc` holds the partial result of ranks rank..rank+2^k; `inc` receives that of the next
    // 2^k ranks, and `acc op inc` lands in `inc`, after which the two swap. Both are private
    // (the send buffer is read only; the root's recvbuf is written only at the end).
    let mut scratch: Vec<u8> = Vec::new();
    let mut acc: *mut u8 = sendbuf as *mut u8;
    let mut inc: *mut u8 = std::ptr::null_mut();
    let mut mask = 1;
    while mask < n {
        if rank & mask == 0 {
            let src = rank | mask;
            if src < n {
                if scratch.is_empty() {
                    scratch = vec![0u8; 2 * bytes];
                    let own = scratch.as_mut_ptr();
                    // SAFETY: `own` has `bytes` bytes; sendbuf holds `bytes` bytes, disjoint.
                    unsafe { std::ptr::copy_nonoverlapping(sendbuf, own, bytes) };
                    acc = own;
                    inc = own.wrapping_add(bytes);
                }
                // SAFETY: `inc` is the second half of scratch, `bytes` long.
                unsafe { cx.recv(inc, bytes, src) }?;
                // SAFETY: `acc` and `inc` are the two disjoint halves of scratch; lower ranks'
                // operand (acc) first.
                unsafe { red.apply(acc, inc, count) };
                std::mem::swap(&mut acc, &mut inc);
            }
        } else {
            // SAFETY: `acc` is sendbuf (`bytes` readable, caller contract) or a half of scratch.
            unsafe { cx.send(acc, bytes, rank & !mask) }?;
            break;
        }
        mask <<= 1;
    }
    if rank == 0 {
        if root == 0 {
            // SAFETY: `acc` (scratch, or sendbuf when rank 0 received nothing, impossible with
            // n > 1) holds `bytes` bytes; recvbuf holds `bytes` writable ones.
            unsafe { std::ptr::copy(acc, recvbuf, bytes) };
        } else {
            // SAFETY: `acc` is a `bytes`-byte half of scratch (rank 0 received at least once as n > 1).
            unsafe { cx.send(acc, bytes, root) }?;
        }
    } else if rank == root {
        // SAFETY: recvbuf holds `bytes` writable bytes at the root (caller contract).
        unsafe { cx.recv(recvbuf, bytes, 0)? };
    }
    Ok(())
}
