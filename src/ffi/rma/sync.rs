//! RMA synchronisation (MPI 4.1 section 12.5): fence, post-start-complete-wait, passive-target
//! locks, flush and sync. Operations complete before they return (see `crate::osc`), so these
//! calls only order: a fence is a barrier, PSCW counts posts and completions in the window's
//! shared region, a lock is the target's reader-writer lock, a flush is a memory fence. With a
//! member on another node (`Window::far`), its lock and PSCW notices are messages
//! (`crate::osc::remote`), and the waits run the engine's progress so this rank serves other
//! nodes' requests meanwhile.
use crate::ffi::pointer_args::out;
use crate::ffi::rma::win_of;
use crate::export;
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::osc::{remote, sync, wire};
use crate::osc::window::Window;
use crate::comm::Universe;
use std::os::raw::c_int;
use std::sync::atomic::{fence, Ordering::*};


fn check_assert(assert: c_int, allowed: c_int) -> MpiResult {
    if assert & !allowed != 0 {
        return Err(err(MPI_ERR_ASSERT, format!("invalid assert {assert}: only a combination of the MPI_MODE_* values this call accepts")));
    }
    Ok(())
}

/// A group of the caller's as ranks of the window.
fn window_ranks(w: &Window, group: MPI_Group) -> MpiResult<Vec<usize>> {
    let u = crate::ffi::check::universe()?;
    let g = crate::ffi::comm::group::group(u, group)?;
    g.members
        .iter()
        .map(|&m| w.comm.comm_rank_of(m).ok_or_else(|| err(MPI_ERR_GROUP, format!("the group holds process {m} (MPI_COMM_WORLD rank), which is not in the window")))).collect()
}

fn target_rank(w: &Window, rank: c_int) -> MpiResult<usize> {
    if rank < 0 || rank as usize >= w.size {
        return Err(err(MPI_ERR_RANK, format!("invalid target rank {rank}: the window's group has {} ranks", w.size)));
    }
    Ok(rank as usize)
}

/// MPI_Win_lock on `t` (or one target of MPI_Win_lock_all).
/// Fails (ULFM) when the target has failed, or when a member of the window fails while this
/// rank waits: the lock may be the dead rank's, which never releases it.
fn lock_target(u: &Universe, w: &Window, t: usize, exclusive: bool) -> MpiResult {
    w.check_alive(u, t)?;
    if w.far[t] {
        return remote::lock(&u.engine, w, t, exclusive);
    }
    let a = w.region.rank(t);
    let acquired = if w.spans {
        // The holder may be a rank of another node whose unlock only this rank's progress
        // serves (this rank's own lock), or a rank of this node waiting for this rank to serve
        // its request: progress between looks at the lock word. (`rw_acquire` napped 50 ms on
        // the word between passes, leaving such an unlock unserved meanwhile; the engine's wait
        // would not do either: a release rings no waiter, and a rank spanning nodes waits there
        // for a packet, so it slept until UCX's next keepalive, 20 s. Both made rma_sync at 8
        // ranks on 2 nodes take 20-25 s instead of about 1.)
        loop {
            if sync::rw_try_acquire(&a.lock, exclusive) {
                break true;
            }
            if w.failed_member(u).is_some() {
                break false;
            }
            u.engine.poke();
            crate::runtime::threads::sched::yield_now();
        }
    } else {
        sync::rw_acquire(&a.lock, &a.lock_waiters, exclusive, &|| w.failed_member(u).is_some())
    };
    if acquired {
        return Ok(());
    }
    let dead = w.failed_member(u).unwrap_or(t);
    let e = w.check_alive(u, dead).err().unwrap_or_else(|| err(MPIX_ERR_PROC_FAILED, "a member of the window has failed"));
    Err(err(e.class, format!("MPI_Win_lock of window rank {t}: {} (it may hold the lock)", e.msg)))
}

fn unlock_target(u: &Universe, w: &Window, t: usize, exclusive: bool) -> MpiResult {
    fence(SeqCst);
    if w.far[t] {
        return remote::unlock(&u.engine, w, t, exclusive);
    }
    let a = w.region.rank(t);
    sync::rw_release(&a.lock, &a.lock_waiters, exclusive);
    if w.spans {
        // Its progress may hold a lock request of another node (`osc::serve`).
        u.engine.ring_rank(w.comm.world_rank(t));
    }
    serve_others(u, w);
    Ok(())
}

/// MPI's progress rule (MPI 4.1 section 12.7) for a window spanning nodes: the requests of other
/// nodes' ranks to this rank wait for its progress (`osc::serve`), and a rank may poll through
/// calls that need no progress of their own on this node (a compare-and-swap on its own window
/// then a flush, in a loop; a lock, get and unlock of itself; MPI_Win_sync), so such a call
/// makes one progress pass. Without it two ranks could wait for each other for ever: this one
/// for a value that only the other's request, never served, would change.
fn serve_others(u: &Universe, w: &Window) {
    if w.spans {
        u.engine.poke();
    }
}

/// Tells window rank `r` (of this node) a PSCW counter of its changed.
fn ring(u: &Universe, w: &Window, r: usize) {
    let a = w.region.rank(r);
    sync::ring(&a.bell, &a.bell_sleepers);
    if w.spans {
        // In a window spanning nodes, PSCW waits in the engine's progress loop (`wait_local`).
        u.engine.ring_rank(w.comm.world_rank(r));
    }
}

/// Waits until `ready()` (PSCW counters of this node, consumed by it): on the window's
/// doorbell, or in a window spanning nodes in the engine's progress, so that this rank serves
/// other nodes' requests meanwhile.
fn wait_local(u: &Universe, w: &Window, ready: impl Fn() -> bool) -> MpiResult {
    if !w.spans {
        let me = w.region.rank(w.rank);
        sync::wait_until(&me.bell, &me.bell_sleepers, ready);
        return Ok(());
    }
    let members: Vec<usize> = (0..w.size).map(|r| w.comm.world_rank(r)).collect();
    u.engine.wait_for_collective(w.comm.coll_context(), &members, ready)
}

/// Consumes one unit of each counter if all are non-zero (MPI_Win_test/wait).
fn take_all(counters: &[&std::sync::atomic::AtomicU32]) -> bool {
    if counters.iter().any(|c| c.load(Acquire) == 0) {
        return false;
    }
    for c in counters {
        c.fetch_sub(1, AcqRel);
    }
    true
}

export! {
    fn MPI_Win_fence / PMPI_Win_fence (assert: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        check_assert(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)?;
        {
            let e = w.epochs();
            if e.access.is_some() || e.exposure.is_some() || e.passive() {
                return Err(err(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a PSCW or passive-target epoch"));
            }
        }
        w.barrier(u)?;
        w.epochs().fence = assert & MPI_MODE_NOSUCCEED == 0;
        Ok(())
    }

    fn MPI_Win_post / PMPI_Win_post (group: MPI_Group, assert: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)?;
        let origins = window_ranks(&w, group)?;
        let mut e = w.epochs();
        if e.exposure.is_some() || e.passive() {
            return Err(err(MPI_ERR_RMA_SYNC, "MPI_Win_post while an exposure or passive-target epoch is open"));
        }
        e.fence = false;
        fence(SeqCst);
        for &o in &origins {
            if w.far[o] {
                remote::notify(&u.engine, &w, o, wire::TAG_POST)?;
            } else {
                w.region.post(o, w.rank).fetch_add(1, Release);
                ring(u, &w, o);
            }
        }
        e.exposure = Some(origins);
        Ok(())
    }

    fn MPI_Win_start / PMPI_Win_start (group: MPI_Group, assert: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        check_assert(assert, MPI_MODE_NOCHECK)?;
        let targets = window_ranks(&w, group)?;
        if w.epochs().access.is_some() || w.epochs().passive() {
            return Err(err(MPI_ERR_RMA_SYNC, "MPI_Win_start while an access epoch is open"));
        }
        // Wait for each target's post (MPI_MODE_NOCHECK: the application guarantees it).
        if assert & MPI_MODE_NOCHECK == 0 {
            for &t in targets.iter().filter(|&&t| w.far[t]) {
                remote::await_notice(&u.engine, &w, t, wire::TAG_POST)?;
            }
            let posts: Vec<_> = targets.iter().filter(|&&t| !w.far[t]).map(|&t| w.region.post(w.rank, t)).collect();
            wait_local(u, &w, || take_all(&posts))?;
        }
        fence(SeqCst);
        let mut e = w.epochs();
        e.fence = false;
        e.access = Some(targets);
        Ok(())
    }

    fn MPI_Win_complete / PMPI_Win_complete (win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        let targets = w.epochs().access.take().ok_or_else(|| err(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start"))?;
        fence(SeqCst);
        for &t in &targets {
            if w.far[t] {
                remote::notify(&u.engine, &w, t, wire::TAG_DONE)?;
            } else {
                w.region.done(t, w.rank).fetch_add(1, Release);
                ring(u, &w, t);
            }
        }
        Ok(())
    }

    fn MPI_Win_wait / PMPI_Win_wait (win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        let origins = w.epochs().exposure.clone().ok_or_else(|| err(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post"))?;
        for &o in origins.iter().filter(|&&o| w.far[o]) {
            remote::await_notice(&u.engine, &w, o, wire::TAG_DONE)?;
        }
        let done: Vec<_> = origins.iter().filter(|&&o| !w.far[o]).map(|&o| w.region.done(w.rank, o)).collect();
        wait_local(u, &w, || take_all(&done))?;
        fence(SeqCst);
        w.epochs().exposure = None;
        Ok(())
    }

    fn MPI_Win_test / PMPI_Win_test (win: MPI_Win, flag: *mut c_int) on win win => {
        let (u, w) = win_of(win)?;
        let flag = out(flag, "flag")?;
        let origins = w.epochs().exposure.clone().ok_or_else(|| err(MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post"))?;
        let done: Vec<_> = origins.iter().filter(|&&o| !w.far[o]).map(|&o| w.region.done(w.rank, o)).collect();
        let far: Vec<usize> = origins.iter().copied().filter(|&o| w.far[o]).collect();
        // Every far origin's notice must be there before any counter is consumed.
        let mut ok = done.iter().all(|c| c.load(Acquire) != 0);
        for &o in &far {
            ok = ok && remote::notice_arrived(&u.engine, &w, o, wire::TAG_DONE)?;
        }
        if ok {
            for &o in &far {
                remote::await_notice(&u.engine, &w, o, wire::TAG_DONE)?;
            }
            ok = take_all(&done);
        }
        if ok {
            fence(SeqCst);
            w.epochs().exposure = None;
        } else {
            u.engine.poll_failed();
            serve_others(u, &w);
        }
        // SAFETY: `out` checked `flag` non-null; the caller passes a writable int.
        unsafe { *flag = ok as c_int };
        Ok(())
    }

    fn MPI_Win_lock / PMPI_Win_lock (lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        let exclusive = match lock_type {
            MPI_LOCK_EXCLUSIVE => true,
            MPI_LOCK_SHARED => false,
            _ => return Err(err(MPI_ERR_LOCKTYPE, format!("invalid lock type {lock_type}: MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED"))),
        };
        check_assert(assert, MPI_MODE_NOCHECK)?;
        if rank == MPI_PROC_NULL {
            return Ok(());
        }
        let t = target_rank(&w, rank)?;
        {
            let e = w.epochs();
            if e.locks[t].is_some() || e.lock_all.is_some() || e.access.is_some() {
                return Err(err(MPI_ERR_RMA_SYNC, format!("MPI_Win_lock: an access epoch to rank {t} is already open")));
            }
        }
        // A fence without MPI_MODE_NOSUCCEED leaves a fence epoch nominally open; programs
        // commonly lock after it (MPICH accepts this), so the lock ends it.
        w.epochs().fence = false;
        let take = assert & MPI_MODE_NOCHECK == 0;
        if take {
            lock_target(u, &w, t, exclusive)?;
        } else {
            w.check_alive(u, t)?;
        }
        w.epochs().locks[t] = Some((exclusive, take));
        Ok(())
    }

    fn MPI_Win_unlock / PMPI_Win_unlock (rank: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        if rank == MPI_PROC_NULL {
            return Ok(());
        }
        let t = target_rank(&w, rank)?;
        let (exclusive, taken) = w.epochs().locks[t].take().ok_or_else(|| err(MPI_ERR_RMA_SYNC, format!("MPI_Win_unlock: rank {t} is not locked by MPI_Win_lock")))?;
        if taken {
            unlock_target(u, &w, t, exclusive)?;
        }
        // The epoch's operations on a failed target did not all complete (ULFM).
        w.check_alive(u, t)
    }

    fn MPI_Win_lock_all / PMPI_Win_lock_all (assert: c_int, win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        check_assert(assert, MPI_MODE_NOCHECK)?;
        {
            let e = w.epochs();
            if e.passive() || e.access.is_some() {
                return Err(err(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all: an access epoch is already open"));
            }
        }
        w.epochs().fence = false;
        let take = assert & MPI_MODE_NOCHECK == 0;
        if take {
            for t in 0..w.size {
                if let Err(e) = lock_target(u, &w, t, false) {
                    for held in 0..t {
                        let _ = unlock_target(u, &w, held, false);
                    }
                    return Err(e);
                }
            }
        } else {
            w.check_all_alive(u)?;
        }
        w.epochs().lock_all = Some(take);
        w.lock_all_open.store(true, Relaxed);
        Ok(())
    }

    fn MPI_Win_unlock_all / PMPI_Win_unlock_all (win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        let taken = {
            let mut e = w.epochs();
            w.lock_all_open.store(false, Relaxed);
            e.lock_all.take().ok_or_else(|| err(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all"))?
        };
        if taken {
            let mut first = Ok(());
            for t in 0..w.size {
                let r = unlock_target(u, &w, t, false);
                if first.is_ok() {
                    first = r;
                }
            }
            first?;
        }
        w.check_all_alive(u)
    }

    fn MPI_Win_flush / PMPI_Win_flush (rank: c_int, win: MPI_Win) on win win => {
        flush(win, Some(rank))
    }
    fn MPI_Win_flush_local / PMPI_Win_flush_local (rank: c_int, win: MPI_Win) on win win => {
        flush(win, Some(rank))
    }
    fn MPI_Win_flush_all / PMPI_Win_flush_all (win: MPI_Win) on win win => {
        flush(win, None)
    }
    fn MPI_Win_flush_local_all / PMPI_Win_flush_local_all (win: MPI_Win) on win win => {
        flush(win, None)
    }

    /// Unified memory model: public and private copies are the same memory; a full fence. Only
    /// in a passive-target epoch, as MPICH requires.
    fn MPI_Win_sync / PMPI_Win_sync (win: MPI_Win) on win win => {
        let (u, w) = win_of(win)?;
        if !w.epochs().passive() {
            return Err(err(MPI_ERR_RMA_SYNC, "MPI_Win_sync outside a passive-target epoch (MPI_Win_lock/lock_all)"));
        }
        fence(SeqCst);
        serve_others(u, &w);
        Ok(())
    }
}

/// The flushes: valid only in a passive-target epoch to the target(s); operations have already
/// completed, so a memory fence is all that remains (and, in a window spanning nodes, a
/// progress pass: `serve_others`).
fn flush(win: MPI_Win, rank: Option<c_int>) -> MpiResult {
    let (u, w) = win_of(win)?;
    match rank {
        Some(MPI_PROC_NULL) => {}
        // Inside lock_all (`Window::lock_all_open`) every target is in the epoch: no lock taken.
        Some(r) if w.lock_all_open.load(Relaxed) => {
            let t = target_rank(&w, r)?;
            w.check_alive(u, t)?;
        }
        Some(r) => {
            let e = w.epochs();
            let t = target_rank(&w, r)?;
            if e.lock_all.is_none() && e.locks[t].is_none() {
                return Err(err(MPI_ERR_RMA_SYNC, format!("flush of rank {t} outside a passive-target epoch to it")));
            }
            w.check_alive(u, t)?;
        }
        None => {
            if !w.lock_all_open.load(Relaxed) && !w.epochs().passive() {
                return Err(err(MPI_ERR_RMA_SYNC, "flush outside a passive-target epoch"));
            }
            w.check_all_alive(u)?;
        }
    }
    fence(SeqCst);
    serve_others(u, &w);
    Ok(())
}
