//! MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw (MPI 4.1 section 6.8) in their blocking,
//! nonblocking, persistent and large-count forms, on intra- and intercommunicators.
//!
//! MPI_Alltoall's buffers are `peers * count` consecutive elements, staged as one `Plan`
//! (`crate::coll::stage`). The vector forms describe one typed block per peer (`PeerBlocks`,
//! built here from the argument arrays): each is sent straight from the
//! user buffer when contiguous, or packed into its own temporary (and unpacked after receiving).
//! `PeerBlocks` also serves the neighborhood collectives (`coll_neighbor`).
//!
//! On intracommunicators the nonblocking and persistent forms always run as schedules
//! (`crate::coll::nbc`), whatever the datatypes (another rank's may be contiguous where this
//! rank's are not): non-contiguous blocks are packed and unpacked by local steps of the
//! schedule. Intercommunicator forms run as the schedules of `crate::coll::nbc_inter`.
use crate::ffi::check;
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::CountArg;
use crate::abi::*;
use crate::coll::alltoall as a2a;
pub use crate::coll::stage::{PeerBlock, PeerBlocks};
use crate::coll::{nbc, nbc_inter as nbi};
use crate::coll::schedule::{Schedule, Step};
use crate::error::{err, MpiResult};
use std::os::raw::c_void;
use std::sync::Arc;

/// Reads an array argument of `n` integers (int, MPI_Count or MPI_Aint) as i64.
///
/// # Safety
/// If non-null, `p` points to `n` readable elements.
pub unsafe fn int_array<T: Copy + Into<i64>>(p: *const T, n: usize, what: &str) -> MpiResult<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: non-null and, per the contract, `n` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&v| v.into()).collect())
}

/// Reads an array of `n` datatype handles.
///
/// # Safety
/// As `array`.
pub unsafe fn type_array(p: *const MPI_Datatype, n: usize, what: &str) -> MpiResult<Vec<MPI_Datatype>> {
    // SAFETY: per this function's contract.
    Ok(unsafe { int_array(p, n, what) }?.into_iter().map(|v| v as MPI_Datatype).collect())
}

/// The extent of `dt` in bytes (the stride of consecutive elements).
pub fn extent(dt: MPI_Datatype) -> MpiResult<i64> {
    Ok(check::dtype(dt)?.layout.extent())
}

/// Builds the blocks of one side: block j holds `counts[j]` elements of `types[j]` at byte
/// displacement `displs[j]` from `base`, exchanged with `peers[j]`.
pub fn blocks(base: *const c_void, peers: &[Option<usize>], counts: &[i64], displs: &[i64], types: &[MPI_Datatype]) -> MpiResult<PeerBlocks> {
    let mut v = Vec::with_capacity(peers.len());
    for (j, &peer) in peers.iter().enumerate() {
        let plan = plan_of(counts[j], types[j])?;
        v.push(PeerBlock { peer, addr: (base as *mut u8).wrapping_offset(displs[j] as isize) as *mut c_void, plan });
    }
    Ok(PeerBlocks(v))
}

/// MPI_IN_PLACE is judged on `base`, NULL on each block's own address: MPI_BOTTOM with absolute
/// displacements (from MPI_Get_address) is a valid buffer.
pub fn check_blocks(b: &PeerBlocks, base: *const c_void, what: &str) -> MpiResult {
    let in_place = in_place(base);
    b.0.iter().filter(|b| b.peer.is_some()).try_for_each(|b| b.plan.check(if in_place { base } else { b.addr }, what))
}

/// Displacements in elements of `dt` as byte displacements.
pub fn scaled(displs: &[i64], dt: MPI_Datatype) -> MpiResult<Vec<i64>> {
    let e = extent(dt)?;
    Ok(displs.iter().map(|&d| d.wrapping_mul(e)).collect())
}

/// The peers of an alltoall on `c`: every rank of the communicator (the remote group on
/// intercommunicators).
fn all_peers(c: &crate::comm::Comm) -> Vec<Option<usize>> {
    (0..c.peer_size()).map(Some).collect()
}

/// MPI_Alltoall and its forms.
///
/// # Safety
/// The buffers hold `peers * count` elements of their datatypes (the MPI contract); `how`'s
/// request pointer is writable.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn alltoall(sendbuf: *const c_void, scount: impl CountArg, stype: MPI_Datatype, recvbuf: *mut c_void, rcount: impl CountArg, rtype: MPI_Datatype, comm: MPI_Comm, how: Launch) -> MpiResult {
    let (scount, rcount) = (scount.get(), rcount.get());
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, scount, stype, true);
    let m = c.peer_size() as i64;
    let total = |n: i64| count(n).and_then(|_| n.checked_mul(m).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} times {m} ranks overflows"))));
    let rplan = plan_of(total(rcount)?, rtype)?;
    rplan.check(recvbuf, "receive buffer")?;
    let rblock = rplan.bytes / m as usize;
    let uniform = move |p: *mut u8, block: usize| crate::coll::gather::Blocks { base: p, offs: (0..m as usize).map(|i| (i * block) as isize).collect(), lens: vec![block; m as usize] };
    if in_place(sendbuf) {
        if c.is_inter() {
            return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in MPI_Alltoall on an intercommunicator"));
        }
        if how.is_blocking() {
            return blocking(u, &c, tally, |cx| {
                let (mut ts, mut tr) = (Vec::new(), Vec::new());
                // SAFETY: recvbuf holds `m * rcount` elements (checked above); its data is copied
                // before anything is received into it.
                unsafe {
                    let s = rplan.bytes_of(recvbuf, &mut ts, true);
                    if ts.is_empty() {
                        ts = std::slice::from_raw_parts(s, rplan.bytes).to_vec();
                    }
                    let r = rplan.bytes_of(recvbuf, &mut tr, false);
                    a2a::alltoall(cx, ts.as_ptr(), rblock, r, rblock)?;
                    rplan.unpack(recvbuf, &mut tr);
                }
                Ok(())
            });
        }
        let rp = Arc::new(rplan);
        let build: Build = Box::new(move |cx, s| {
            // The data to send is a private copy of the receive buffer, taken before anything
            // is received into it.
            let src = stage(&rp, s, recvbuf, true);
            let snd = if matches!(rp.shape, Shape::Staged(..)) || rp.bytes == 0 {
                src
            } else {
                let t = s.scratch(rp.bytes);
                s.push(Step::Copy { src, dst: t, bytes: rp.bytes });
                t
            };
            let rcv = stage(&rp, s, recvbuf, false);
            nbc::alltoall(s, cx, &uniform(snd, rblock), &uniform(rcv, rblock));
            unstage(&rp, s, recvbuf, rcv);
        });
        // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
        // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
        return unsafe { scheduled(u, c, how, tally, build) };
    }
    let splan = plan_of(total(scount)?, stype)?;
    splan.check(sendbuf, "send buffer")?;
    if !splan.derived && !rplan.derived {
        no_alias(sendbuf, recvbuf, splan.bytes.min(rplan.bytes))?;
    }
    let sblock = splan.bytes / m as usize;
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: both buffers hold `m` blocks of their types (checked above) and are disjoint.
            unsafe {
                let s = splan.bytes_of(sendbuf, &mut ts, true);
                let r = rplan.bytes_of(recvbuf, &mut tr, false);
                a2a::alltoall(cx, s, sblock, r, rblock)?;
                rplan.unpack(recvbuf, &mut tr);
            }
            Ok(())
        });
    }
    let inter = c.is_inter();
    let (sp, rp) = (Arc::new(splan), Arc::new(rplan));
    let build: Build = Box::new(move |cx: &crate::coll::Coll, s: &mut Schedule| {
        let snd = stage(&sp, s, sendbuf, true);
        let rcv = stage(&rp, s, recvbuf, false);
        let (sb, rb) = (uniform(snd, sblock), uniform(rcv, rblock));
        if inter {
            nbi::alltoall(s, cx, &sb, &rb);
        } else {
            nbc::alltoall(s, cx, &sb, &rb);
        }
        unstage(&rp, s, recvbuf, rcv);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// The receive side and, unless MPI_IN_PLACE, the send side of a vector all-to-all, as checked
/// blocks; runs it as the user asked.
///
/// # Safety
/// The blocks' addresses hold their elements; `how` as in `alltoall`.
unsafe fn run_vector(c: check::CommRef, how: Launch, send: Option<PeerBlocks>, recv: PeerBlocks) -> MpiResult {
    let u = check::universe()?;
    let tally = Tally::new(Pattern::AllToAll, 0, 0, true);
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| {
            let (mut ts, mut tr) = (Vec::new(), Vec::new());
            // SAFETY: every block holds its elements (checked by the caller); with MPI_IN_PLACE
            // the data to send is copied out of the receive blocks before they are written.
            unsafe {
                let sends = match &send {
                    Some(s) => s.slots(&mut ts, true),
                    None => recv.copies(&mut ts),
                };
                let recvs = recv.slots(&mut tr, false);
                a2a::alltoallv(cx, &sends, &recvs)?;
                recv.unpack(&mut tr);
            }
            Ok(())
        });
    }
    let inter = c.is_inter();
    let build: Build = Box::new(move |cx: &crate::coll::Coll, s: &mut Schedule| {
        let snd = match &send {
            Some(b) => b.stage(s, true),
            None => recv.stage_copies(s),
        };
        let rcv = recv.stage(s, false);
        let flat = |v: &[Option<(*mut u8, usize)>]| v.iter().map(|b| b.unwrap_or((std::ptr::null_mut(), 0))).collect::<Vec<_>>();
        if inter {
            nbi::alltoallv(s, cx, &flat(&snd), &flat(&rcv));
        } else {
            nbc::alltoallv(s, cx, &flat(&snd), &flat(&rcv));
        }
        recv.unstage(s, &rcv);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c, how, tally, build) }
}

/// MPI_Alltoallv and MPI_Alltoallw and their forms: per-peer counts, byte displacements and
/// types (`None` for the send side under MPI_IN_PLACE). `scale` displacements are in extents of
/// the single type (alltoallv), else bytes (alltoallw).
///
/// # Safety
/// The arrays hold one entry per peer; the buffers hold the blocks they describe.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw(
    sendbuf: *const c_void,
    scounts: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    sdispls: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    stypes: &dyn Fn(usize) -> MpiResult<Vec<MPI_Datatype>>,
    recvbuf: *mut c_void,
    rcounts: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    rdispls: &dyn Fn(usize) -> MpiResult<Vec<i64>>,
    rtypes: &dyn Fn(usize) -> MpiResult<Vec<MPI_Datatype>>,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let peers = all_peers(&c);
    let m = peers.len();
    if in_place(recvbuf) {
        return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as the receive buffer"));
    }
    let recv = blocks(recvbuf, &peers, &rcounts(m)?, &rdispls(m)?, &rtypes(m)?)?;
    check_blocks(&recv, recvbuf, "receive buffer")?;
    let send = if in_place(sendbuf) {
        if c.is_inter() {
            return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in all-to-all on an intercommunicator"));
        }
        None
    } else {
        let s = blocks(sendbuf, &peers, &scounts(m)?, &sdispls(m)?, &stypes(m)?)?;
        check_blocks(&s, sendbuf, "send buffer")?;
        Some(s)
    };
    // SAFETY: the blocks describe the user buffers (MPI contract).
    unsafe { run_vector(c, how, send, recv) }
}

/// MPI_Alltoallv and its forms: `alltoallw` with one type and displacements in its extents.
///
/// # Safety
/// As `alltoallw`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn alltoallv<C: CountArg, D: CountArg>(
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const D,
    stype: MPI_Datatype,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const D,
    rtype: MPI_Datatype,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    // SAFETY (array reads): MPI requires one entry per peer in each array.
    unsafe {
        alltoallw(
            sendbuf,
            &|m| int_array(scounts, m, "sendcounts"),
            &|m| scaled(&int_array(sdispls, m, "sdispls")?, stype),
            &|m| Ok(vec![stype; m]),
            recvbuf,
            &|m| int_array(rcounts, m, "recvcounts"),
            &|m| scaled(&int_array(rdispls, m, "rdispls")?, rtype),
            &|m| Ok(vec![rtype; m]),
            comm,
            how,
        )
    }
}

/// MPI_Alltoallw and its forms, with raw arrays.
///
/// # Safety
/// As `alltoallw`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn alltoallw_raw<C: CountArg, D: CountArg>(
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const D,
    stypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const D,
    rtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    // SAFETY (array reads): MPI requires one entry per peer in each array.
    unsafe {
        alltoallw(
            sendbuf,
            &|m| int_array(scounts, m, "sendcounts"),
            &|m| int_array(sdispls, m, "sdispls"),
            &|m| type_array(stypes, m, "sendtypes"),
            recvbuf,
            &|m| int_array(rcounts, m, "recvcounts"),
            &|m| int_array(rdispls, m, "rdispls"),
            &|m| type_array(rtypes, m, "recvtypes"),
            comm,
            how,
        )
    }
}
