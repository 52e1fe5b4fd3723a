//! Neighborhood collectives (MPI 4.1 section 8.6): MPI_Neighbor_allgather, _allgatherv,
//! _alltoall, _alltoallv and _alltoallw in their blocking, nonblocking, persistent and
//! large-count forms. Every one is an exchange of typed blocks with the neighbors
//! (`crate::coll::neighbor` gives them and their order): the forms differ only in how the blocks
//! are laid out in the user buffers, which is all this file works out. The nonblocking and
//! persistent forms run as a schedule (`crate::coll::nbc::exchange`), non-contiguous blocks
//! packed and unpacked by its local steps.
use crate::ffi::check;
use crate::ffi::coll::alltoall::{blocks, check_blocks, extent, int_array, scaled, type_array, PeerBlocks};
use crate::ffi::coll::args::*;
use crate::ffi::coll::launch::{blocking, scheduled, Build, Launch, Pattern, Tally};
use crate::ffi::families::CountArg;
use crate::coll::alltoall::Slot;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::topo::Topology;
use std::os::raw::c_void;

/// Builds per-side arrays for a side of `n` blocks.
type Arr<'a, T> = &'a dyn Fn(usize) -> MpiResult<Vec<T>>;

/// The general neighborhood exchange: block j of the send side (counts, byte displacements and
/// types by `s*`) goes to destination j, block i of the receive side comes from source i.
///
/// # Safety
/// The buffers hold the blocks the arrays describe; `how`'s request pointer is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn neighbor(
    sendbuf: *const c_void,
    scounts: Arr<i64>,
    sdispls: Arr<i64>,
    stypes: Arr<MPI_Datatype>,
    recvbuf: *mut c_void,
    rcounts: Arr<i64>,
    rdispls: Arr<i64>,
    rtypes: Arr<MPI_Datatype>,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    let how = how.check()?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    let tally = Tally::new(Pattern::AllToAll, 0, 0, true);
    let topo = c.topo.get().ok_or_else(|| err(MPI_ERR_TOPOLOGY, "neighborhood collectives need a communicator with a Cartesian, graph or distributed graph topology; this one has none"))?;
    let (srcs, dsts) = crate::coll::neighbor::neighbors(topo, c.rank);
    if in_place(sendbuf) || in_place(recvbuf) {
        return Err(err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighborhood collectives"));
    }
    let (ni, no) = (srcs.len(), dsts.len());
    let send = blocks(sendbuf, &dsts, &scounts(no)?, &sdispls(no)?, &stypes(no)?)?;
    check_blocks(&send, sendbuf, "send buffer")?;
    let recv = blocks(recvbuf, &srcs, &rcounts(ni)?, &rdispls(ni)?, &rtypes(ni)?)?;
    check_blocks(&recv, recvbuf, "receive buffer")?;
    if how.is_blocking() {
        return blocking(u, &c, tally, |cx| run(cx, topo, &send, &recv));
    }
    let topo = topo.clone();
    let build: Build = Box::new(move |cx, s| {
        let slots = |b: &PeerBlocks, st: &[Option<(*mut u8, usize)>]| -> Vec<Slot> {
            b.0.iter().zip(st).map(|(b, t)| {
                let (buf, bytes) = t.unwrap_or((std::ptr::null_mut(), 0));
                Slot { peer: b.peer, buf, bytes, round: 0 }
            }).collect()
        };
        let (st, rt) = (send.stage(s, true), recv.stage(s, false));
        let (mut sends, mut recvs) = (slots(&send, &st), slots(&recv, &rt));
        crate::coll::neighbor::pair_blocks(&topo, &mut sends, &mut recvs);
        crate::coll::nbc::exchange(s, cx, &sends, &recvs);
        recv.unstage(s, &rt);
    });
    // SAFETY: `how`'s request pointer is writable (checked by `Launch::check`, the caller's
    // contract); `build` captures only the user buffers, which MPI keeps valid until completion.
    unsafe { scheduled(u, c.clone(), how, tally, build) }
}

/// One run of a neighborhood exchange.
fn run(cx: &crate::coll::Coll, topo: &Topology, send: &PeerBlocks, recv: &PeerBlocks) -> MpiResult {
    let (mut ts, mut tr) = (Vec::new(), Vec::new());
    // SAFETY: every block holds its elements (checked when the call was made); the receive blocks
    // of distinct sources must not overlap (MPI forbids it) and never overlap the temporaries.
    unsafe {
        let mut sends = send.slots(&mut ts, true);
        let mut recvs = recv.slots(&mut tr, false);
        crate::coll::neighbor::pair_blocks(topo, &mut sends, &mut recvs);
        crate::coll::alltoall::linear(cx, &sends, &recvs)?;
        recv.unpack(&mut tr);
    }
    Ok(())
}

/// `n` consecutive blocks of `count` elements of `dt`: their byte displacements.
fn consecutive(n: usize, count: i64, dt: MPI_Datatype) -> MpiResult<Vec<i64>> {
    let stride = count.checked_mul(extent(dt)?).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {count} overflows")))?;
    Ok((0..n as i64).map(|j| j.wrapping_mul(stride)).collect())
}

/// MPI_Neighbor_allgather (`each` false: the same send block to every destination) and
/// MPI_Neighbor_alltoall (`each` true: block j to destination j), and their forms.
///
/// # Safety
/// As `neighbor`.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn uniform(sendbuf: *const c_void, scount: impl CountArg, stype: MPI_Datatype, recvbuf: *mut c_void, rcount: impl CountArg, rtype: MPI_Datatype, comm: MPI_Comm, each: bool, how: Launch) -> MpiResult {
    let (scount, rcount) = (scount.get(), rcount.get());
    // SAFETY: per this function's contract.
    unsafe {
        neighbor(
            sendbuf,
            &|n| Ok(vec![scount; n]),
            &|n| if each { consecutive(n, scount, stype) } else { Ok(vec![0; n]) },
            &|n| Ok(vec![stype; n]),
            recvbuf,
            &|n| Ok(vec![rcount; n]),
            &|n| consecutive(n, rcount, rtype),
            &|n| Ok(vec![rtype; n]),
            comm,
            how,
        )
    }
}

/// MPI_Neighbor_allgatherv and its forms.
///
/// # Safety
/// As `neighbor`; `rcounts`/`displs` hold one entry per source.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn allgatherv<C: CountArg, D: CountArg>(
    sendbuf: *const c_void,
    scount: impl CountArg,
    stype: MPI_Datatype,
    recvbuf: *mut c_void,
    rcounts: *const C,
    displs: *const D,
    rtype: MPI_Datatype,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    let scount = scount.get();
    // SAFETY: per this function's contract.
    unsafe {
        neighbor(
            sendbuf,
            &|n| Ok(vec![scount; n]),
            &|n| Ok(vec![0; n]),
            &|n| Ok(vec![stype; n]),
            recvbuf,
            &|n| int_array(rcounts, n, "recvcounts"),
            &|n| scaled(&int_array(displs, n, "displs")?, rtype),
            &|n| Ok(vec![rtype; n]),
            comm,
            how,
        )
    }
}

/// MPI_Neighbor_alltoallv and its forms.
///
/// # Safety
/// As `neighbor`; the send arrays hold one entry per destination, the receive ones per source.
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
    // SAFETY: per this function's contract.
    unsafe {
        neighbor(
            sendbuf,
            &|n| int_array(scounts, n, "sendcounts"),
            &|n| scaled(&int_array(sdispls, n, "sdispls")?, stype),
            &|n| Ok(vec![stype; n]),
            recvbuf,
            &|n| int_array(rcounts, n, "recvcounts"),
            &|n| scaled(&int_array(rdispls, n, "rdispls")?, rtype),
            &|n| Ok(vec![rtype; n]),
            comm,
            how,
        )
    }
}

/// MPI_Neighbor_alltoallw and its forms (displacements in bytes in every form).
///
/// # Safety
/// As `alltoallv`, plus the type arrays.
#[allow(clippy::too_many_arguments)]
pub(in crate::ffi) unsafe fn alltoallw<C: CountArg>(
    sendbuf: *const c_void,
    scounts: *const C,
    sdispls: *const MPI_Aint,
    stypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    rcounts: *const C,
    rdispls: *const MPI_Aint,
    rtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    how: Launch,
) -> MpiResult {
    // SAFETY: per this function's contract.
    unsafe {
        neighbor(
            sendbuf,
            &|n| int_array(scounts, n, "sendcounts"),
            &|n| int_array(sdispls, n, "sdispls"),
            &|n| type_array(stypes, n, "sendtypes"),
            recvbuf,
            &|n| int_array(rcounts, n, "recvcounts"),
            &|n| int_array(rdispls, n, "rdispls"),
            &|n| type_array(rtypes, n, "recvtypes"),
            comm,
            how,
        )
    }
}
