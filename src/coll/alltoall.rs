//! MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw algorithms on contiguous bytes (the FFI layer
//! stages derived datatypes block by block). Intracommunicators exchange with their own ranks;
//! intercommunicators with the remote group (MPI 4.1 section 6.8: block j goes to remote rank j,
//! block j comes from remote rank j), which the algorithms address as "peers" (`Comm::peers`).
//!
//! - `linear`: post every receive, then every send, then wait. Each block moves in one message
//!   straight between the user buffers (large messages are single-copy), and all transfers overlap.
//! - `pairwise`: rounds of one exchange each (Thakur, Rabenseifner & Gropp 2005, section 4.5): in
//!   round k a rank sends to (rank + k) mod m and receives from (rank - k) mod m, or exchanges with
//!   rank xor k when the group size is a power of two; m is the larger group size on
//!   intercommunicators, and partners beyond the remote group are skipped (as MPICH does). One
//!   message in flight per rank: kind to oversubscribed machines and large messages.
//! - `bruck`: Bruck, Ho, Kipnis, Upfal & Weathersby 1997 (index algorithm, as in Thakur et al.
//!   2005): rotate the blocks locally, then in round k = 1, 2, 4, ... send every block whose index
//!   has bit k set to rank + k, and undo the rotation. ceil(log2 n) messages per rank instead of
//!   n - 1, each carrying about half the data: the choice for small blocks on many ranks. Uniform
//!   intracommunicator alltoall only; elsewhere it falls back to `linear`.
//! - `shared` (`shm_large.rs`): processes mode, every rank writes its row into the communicator's
//!   shared region and reads its column after one barrier; `auto` for blocks up to 4 KiB whose
//!   row fits the region's block. Elsewhere the automatic choice among the others.
//! - `flat` (`flat.rs`): every rank publishes its send row in the communicator's shared memory
//!   and copies its column out of the others' rows; `auto` for rows up to `flat::MAX` bytes on 2
//!   to 8 ranks that do not outnumber the CPUs. Elsewhere the automatic choice among the others.
//! - `peer_copy` (`alltoall_peer_copy.rs`): threads mode, blocks copied straight between the
//!   ranks' buffers after one arena episode; `auto` there for equal blocks up to 4 KiB on
//!   intracommunicators. Elsewhere `linear`.
use super::select::{forced, oversubscribed, Collective};
use super::Coll;
use crate::error::MpiResult;
use crate::p2p::ReqId;

/// The algorithms, in the order `select` names them.
pub const ALGORITHMS: &[&str] = &["linear", "pairwise", "bruck", "shared", "peer_copy", "flat"];
const LINEAR: usize = 0;
const PAIRWISE: usize = 1;
const BRUCK: usize = 2;
/// Processes mode: rows and columns through the communicator's shared region
/// (`shm_large::alltoall`), for blocks whose row fits a block of it; elsewhere forcing it
/// runs `linear`.
const SHARED: usize = 3;
/// Threads mode: blocks copied straight between the ranks' buffers (`alltoall_peer_copy`), the
/// automatic choice there for equal blocks on intracommunicators; elsewhere forcing it runs
/// `linear`.
const PEER_COPY: usize = 4;
/// Every rank publishes its send row in the communicator's shared memory and copies its column
/// out of the others' rows (`flat`); `auto` for equal blocks whose row is at most `flat::MAX`
/// bytes on 2 to 8 ranks that do not outnumber the CPUs; elsewhere forcing it runs `linear`.
const FLAT: usize = 5;

/// Threads mode: blocks up to this size use `peer_copy`. Measured with benches/coll_latency.c,
/// 8 ranks on 2 cores under a load average of 10 from other jobs (3 interleaved runs, us): 8 B
/// 4.8-22 against Bruck's 12.6-45, 64 B 4.7-15.5 against 13-22, 512 B 8.0-8.7 against 15.5-16.7,
/// 4 KiB 16-25 against linear's 43-48; from 32 KiB no better in these noisy runs (233-594
/// against 185-270), so those keep the message-based choice until measured on a quiet machine.
const PEER_COPY_MAX_BLOCK: usize = 4 << 10;

/// Processes mode: blocks up to this size go through the shared region. Measured with
/// benches/coll_latency.c, 8 ranks on 2 cores under a load average of 8 (medians of 3
/// interleaved runs, us): 8 B 39 against Bruck's 116 (Open MPI 397), 512 B 52 against linear's
/// 70 (185), 4 KiB 89 against 194 (4541).
const SHARED_MAX_BLOCK: usize = 4 << 10;

/// Blocks up to this size use `bruck` on 8 ranks or more (MPICH's default threshold).
const BRUCK_MAX_BLOCK: usize = 256;
/// Blocks from this size use `pairwise` when the ranks outnumber the cores.
const PAIRWISE_MIN_BLOCK: usize = 32 * 1024;

/// One block of an exchange: `bytes` bytes at `buf`, sent to or received from peer `peer` (an
/// index into `Comm::peers`), or nothing for MPI_PROC_NULL (`None`). `linear` sends it with the
/// collective's tag of round `round` (`Coll::tag_at`): a send matches the receive of the same
/// round, which lets Cartesian neighborhood collectives pair blocks by direction.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub peer: Option<usize>,
    pub buf: *mut u8,
    pub bytes: usize,
    pub round: usize,
}

/// MPI_Alltoall on bytes: block j (`sblock` bytes at `send + j * sblock`) goes to peer j, block j
/// of `recv` (`rblock` bytes) comes from peer j.
///
/// # Safety
/// `send` holds `peers * sblock` readable bytes, `recv` `peers * rblock` writable ones, disjoint.
pub unsafe fn alltoall(cx: &Coll, send: *const u8, sblock: usize, recv: *mut u8, rblock: usize) -> MpiResult {
    let forced = forced(Collective::Alltoall, ALGORITHMS)?;
    if !cx.c.is_inter() && sblock == rblock && sblock > 0 {
        if let Some(a) = super::flat::arena(cx, forced == Some(FLAT), forced.is_none())? {
            // SAFETY: per this function's contract; an intracommunicator with equal blocks;
            // `rest` gets buffers of n blocks.
            return unsafe { super::flat::alltoall(cx, a, send, recv, sblock, |s, r, b| beyond_flat(cx, s, b, r, b, forced)) };
        }
    }
    // SAFETY: per this function's contract.
    unsafe { beyond_flat(cx, send, sblock, recv, rblock, forced) }
}

/// The algorithms other than `flat` (`forced`: the forced choice).
///
/// # Safety
/// As `alltoall`.
unsafe fn beyond_flat(cx: &Coll, send: *const u8, sblock: usize, recv: *mut u8, rblock: usize, forced: Option<usize>) -> MpiResult {
    let m = cx.c.peer_size();
    let sends: Vec<Slot> = (0..m).map(|j| Slot { peer: Some(j), buf: send.wrapping_add(j * sblock) as *mut u8, bytes: sblock, round: 0 }).collect();
    let recvs: Vec<Slot> = (0..m).map(|j| Slot { peer: Some(j), buf: recv.wrapping_add(j * rblock), bytes: rblock, round: 0 }).collect();
    let n = cx.size();
    if (forced.is_none() && sblock <= SHARED_MAX_BLOCK || forced == Some(SHARED)) && !cx.c.is_inter() && sblock == rblock && n > 1 && sblock > 0 {
        if let Some(a) = super::arena::of(cx)?.filter(|a| super::shm_large::alltoall_fits(a, n, sblock)) {
            // SAFETY: per this function's contract; an intracommunicator with equal blocks.
            return unsafe { super::shm_large::alltoall(cx, a, send, recv, sblock) };
        }
    }
    if (forced.is_none() && sblock <= PEER_COPY_MAX_BLOCK || forced == Some(PEER_COPY)) && !cx.c.is_inter() && sblock == rblock && n > 1 && sblock > 0 && super::select::threads_mode() {
        if let Some(a) = super::arena::of(cx)? {
            // SAFETY: per this function's contract; an intracommunicator with equal blocks.
            if unsafe { super::alltoall_peer_copy::alltoall(cx, a, send, recv, sblock) }? {
                return Ok(());
            }
        }
    }
    let alg = match forced {
        Some(a) => a,
        None if sblock <= BRUCK_MAX_BLOCK && n >= 8 => BRUCK,
        None if sblock >= PAIRWISE_MIN_BLOCK && oversubscribed(n) => PAIRWISE,
        None => LINEAR,
    };
    match alg {
        // SAFETY: per this function's contract.
        BRUCK if !cx.c.is_inter() && sblock == rblock => unsafe { bruck(cx, send, recv, sblock) },
        // SAFETY: the slots cover the caller's buffers; block j is peer j's.
        PAIRWISE => unsafe { pairwise(cx, &sends, &recvs) },
        // SAFETY: as above.
        _ => unsafe { linear(cx, &sends, &recvs) },
    }
}

/// MPI_Alltoallv / MPI_Alltoallw on bytes: `sends[j]` goes to peer j, `recvs[j]` comes from peer j
/// (one slot per peer, in peer order).
///
/// # Safety
/// Each slot's buffer holds its bytes (readable for sends, writable for receives); receive slots
/// are disjoint from each other and from the send slots.
pub unsafe fn alltoallv(cx: &Coll, sends: &[Slot], recvs: &[Slot]) -> MpiResult {
    let largest = sends.iter().map(|s| s.bytes).max().unwrap_or(0);
    let alg = match forced(Collective::Alltoall, ALGORITHMS)? {
        Some(a) => a,
        // Ranks may choose differently here (their blocks differ); the two algorithms still
        // pair up, as `linear` never blocks before all its messages are posted.
        None if largest >= PAIRWISE_MIN_BLOCK && oversubscribed(cx.size()) => PAIRWISE,
        None => LINEAR,
    };
    match alg {
        // SAFETY: per this function's contract.
        PAIRWISE => unsafe { pairwise(cx, sends, recvs) },
        // SAFETY: as above.
        _ => unsafe { linear(cx, sends, recvs) },
    }
}

/// Posts every receive in slot order, then every send in slot order (messages of one round between
/// two ranks match in that order, which neighborhood collectives with repeated neighbors rely on),
/// then waits for all. Returns the first error, after every posted request completed.
///
/// # Safety
/// As `alltoallv`; the slots may name any peers, repeated or MPI_PROC_NULL.
pub unsafe fn linear(cx: &Coll, sends: &[Slot], recvs: &[Slot]) -> MpiResult {
    let mut posted: Vec<(ReqId, usize, usize)> = Vec::with_capacity(recvs.len());
    for r in recvs {
        if let Some(p) = r.peer {
            // SAFETY: the slot's buffer holds `bytes` writable bytes until waited for below.
            let id = unsafe { cx.irecv_world(r.buf, r.bytes, cx.c.peer_world_rank(p), cx.tag_at(r.round)) };
            posted.push((id, r.bytes, p));
        }
    }
    let mut first: MpiResult = Ok(());
    let mut reqs = Vec::with_capacity(sends.len());
    for s in sends {
        if let Some(p) = s.peer {
            // SAFETY: the slot's buffer holds `bytes` readable bytes until waited for below.
            match unsafe { cx.isend_world(s.buf, s.bytes, cx.c.peer_world_rank(p), cx.tag_at(s.round)) } {
                Ok(id) => reqs.push(id),
                Err(e) => {
                    first = first.and(Err(e));
                }
            }
        }
    }
    for (id, bytes, p) in posted {
        let got = cx.wait_recv(id, bytes, p);
        first = first.and(got);
    }
    let sent = cx.wait_sends(&reqs);
    first.and(sent)
}

/// The pairwise exchange: `sends[j]` / `recvs[j]` are peer j's blocks (one slot per peer, in peer
/// order; their `peer` fields are not consulted).
///
/// # Safety
/// As `alltoallv`.
pub unsafe fn pairwise(cx: &Coll, sends: &[Slot], recvs: &[Slot]) -> MpiResult {
    let (me, n, remote) = (cx.rank(), cx.size(), cx.c.peer_size());
    let m = n.max(remote);
    let xor = !cx.c.is_inter() && n.is_power_of_two();
    for k in 0..m {
        let (to, from) = if xor { (me ^ k, me ^ k) } else { ((me + k) % m, (me + m - k) % m) };
        let (r, s) = (recvs.get(from), sends.get(to));
        // SAFETY: the slot's buffer holds `bytes` writable bytes; waited for below.
        let rid = r.map(|r| unsafe { cx.irecv_world(r.buf, r.bytes, cx.c.peer_world_rank(from), cx.tag) });
        // SAFETY: the slot's buffer holds `bytes` readable bytes; waited for below.
        let sid = s.map(|s| unsafe { cx.isend_world(s.buf, s.bytes, cx.c.peer_world_rank(to), cx.tag) });
        let got = match (rid, r) {
            (Some(id), Some(r)) => cx.wait_recv(id, r.bytes, from),
            _ => Ok(()),
        };
        let sent = sid.transpose().and_then(|id| id.map_or(Ok(()), |id| super::sent_result(&cx.u.engine.wait(id))));
        got.and(sent)?;
    }
    Ok(())
}

/// Bruck's index algorithm for blocks of `block` bytes on an intracommunicator.
///
/// # Safety
/// `send` holds `size * block` readable bytes, `recv` `size * block` writable ones, disjoint.
pub unsafe fn bruck(cx: &Coll, send: *const u8, recv: *mut u8, block: usize) -> MpiResult {
    let (me, n) = (cx.rank(), cx.size());
    // SAFETY: `send` holds n blocks (caller contract).
    let src = unsafe { std::slice::from_raw_parts(send, n * block) };
    // Rotate: tmp block i = send block (me + i) mod n.
    let mut tmp = vec![0u8; n * block];
    for i in 0..n {
        let j = (me + i) % n;
        tmp[i * block..(i + 1) * block].copy_from_slice(&src[j * block..(j + 1) * block]);
    }
    let mut out = Vec::new();
    let mut inb = Vec::new();
    let mut k = 1;
    while k < n {
        let moving: Vec<usize> = (0..n).filter(|i| i & k != 0).collect();
        out.clear();
        for &i in &moving {
            out.extend_from_slice(&tmp[i * block..(i + 1) * block]);
        }
        inb.resize(out.len(), 0);
        // SAFETY: `out` and `inb` hold `out.len()` bytes each and are distinct.
        unsafe { cx.sendrecv(out.as_ptr(), out.len(), (me + k) % n, inb.as_mut_ptr(), inb.len(), (me + n - k) % n)? };
        for (x, &i) in moving.iter().enumerate() {
            tmp[i * block..(i + 1) * block].copy_from_slice(&inb[x * block..(x + 1) * block]);
        }
        k <<= 1;
    }
    // Undo the rotation: recv block (me - i) mod n = tmp block i.
    for i in 0..n {
        let j = (me + n - i) % n;
        // SAFETY: `recv` holds n blocks (caller contract), disjoint from `tmp`.
        unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr().add(i * block), recv.add(j * block), block) };
    }
    Ok(())
}
