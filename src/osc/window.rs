//! A window (MPI 4.1 section 12.2) as one rank sees it: its private communicator, its shared
//! region, where each rank's memory is, and this rank's synchronisation state (epochs).
use super::shm::{Layout, Region, NO_DATA};
use crate::coll::Coll;
use crate::comm::Comm;
use crate::error::{err, MpiResult, ErrorClass};
use crate::comm::Universe;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::*};
use std::sync::{Arc, Mutex, RwLock};

/// How the window's memory came to be (the MPI_WIN_CREATE_FLAVOR attribute values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Create = 1,
    Allocate = 2,
    Dynamic = 3,
    Shared = 4,
}

/// Where a target's memory is for this rank.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// Addressable here: window offset 0 of the target (0 for a dynamic window, whose
    /// displacements are addresses).
    Direct(usize),
    /// In the address space of job rank `peer` at address `base` (processes mode, user memory):
    /// reached through the transport's reads and writes of peer memory.
    Remote { peer: usize, base: u64 },
}

/// This rank's epochs on the window (MPI 4.1 section 12.5).
#[derive(Default)]
pub struct Epochs {
    /// A fence opened an access/exposure epoch (the last fence had no MPI_MODE_NOSUCCEED).
    pub fence: bool,
    /// MPI_Win_start's group (window ranks), until MPI_Win_complete.
    pub access: Option<Vec<usize>>,
    /// MPI_Win_post's group (window ranks), until MPI_Win_wait/test.
    pub exposure: Option<Vec<usize>>,
    /// Per target: locked by MPI_Win_lock (Some(exclusive), with whether the lock was really
    /// taken: MPI_MODE_NOCHECK skips it).
    pub locks: Vec<Option<(bool, bool)>>,
    /// Inside MPI_Win_lock_all (with whether the locks were taken).
    pub lock_all: Option<bool>,
}

impl Epochs {
    /// Whether this rank may access `t` now; `passive_only` for the request-based operations.
    pub fn may_access(&self, t: usize, passive_only: bool) -> bool {
        let passive = self.lock_all.is_some() || self.locks[t].is_some();
        passive || (!passive_only && (self.fence || self.access.as_ref().is_some_and(|g| g.contains(&t))))
    }
    pub fn passive(&self) -> bool {
        self.lock_all.is_some() || self.locks.iter().any(|l| l.is_some())
    }
}

pub struct Window {
    /// Private duplicate of the creating communicator (fence and free synchronise on it).
    pub comm: Arc<Comm>,
    pub comm_index: u32,
    pub flavor: Flavor,
    pub region: Region,
    pub rank: usize,
    pub size: usize,
    /// This rank's memory (MPI_WIN_BASE), size and displacement unit, as the attributes return
    /// them (the attribute functions hand out pointers to these).
    pub base: usize,
    pub size_attr: isize,
    pub disp_unit_attr: i32,
    pub flavor_attr: i32,
    pub model_attr: i32,
    pub threads: bool,
    pub name: Mutex<String>,
    pub errhandler: AtomicI32,
    pub hints: Mutex<crate::info::Info>,
    pub epochs: Mutex<Epochs>,
    /// Regions this rank attached (dynamic windows), mirrored in its shared control block.
    pub attached: Mutex<Vec<(u64, u64)>>,
    /// The copy of `attached` the other ranks read (`RankArea::overflow` points at its elements):
    /// replaced only while this rank's `acc` lock is held, which readers hold too.
    published: Mutex<Vec<(u64, u64)>>,
    /// Some member is on another node (`far`): operations on it are messages (`super::remote`).
    pub spans: bool,
    /// Per window rank: on another node than this rank.
    pub far: Vec<bool>,
    /// Per window rank: (size, disp_unit), as it gave them at creation.
    pub info: Vec<[u64; 2]>,
    /// Numbers the replies this rank awaits (`super::remote`).
    pub reply_tag: std::sync::atomic::AtomicU32,
    /// Mirrors `Epochs::lock_all.is_some()`, so that the per-operation epoch check of a
    /// lock_all epoch (the common passive-target pattern) takes no lock. Written only by this
    /// rank's epoch calls, after (set) or before (cleared) `epochs`; Relaxed suffices: a thread
    /// racing an operation against its own rank's unlock_all is an erroneous program (MPI 4.1
    /// section 12.5), and every other access to the window goes through `epochs` or the region.
    pub lock_all_open: AtomicBool,
}

/// What one rank brings to a new window.
pub struct Spec {
    pub flavor: Flavor,
    /// User memory (Win_create); ignored for the allocating flavors.
    pub base: usize,
    pub size: usize,
    pub disp_unit: usize,
    pub hints: crate::info::Info,
    /// What the C boundary's attributes and error handler start as, in its ABI's values: the
    /// MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL attributes and the window's error handler.
    pub flavor_attr: i32,
    pub model_attr: i32,
    pub errhandler: i32,
}

fn ioerr(what: &str, e: std::io::Error) -> crate::error::MpiError {
    err(ErrorClass::NoMem, format!("cannot {what} the window's shared memory: {e}"))
}

impl Window {
    /// The collective part of every window constructor on `parent`: dups the communicator, makes
    /// and maps the shared region (with the memory of the allocating flavors), and publishes where
    /// each rank's memory is.
    pub fn create(u: &'static Universe, parent: &Comm, spec: Spec) -> MpiResult<Window> {
        let idx = crate::construct::intra::dup(u, parent)?.ok_or_else(|| err(ErrorClass::Intern, "duplicating the window's communicator gave MPI_COMM_NULL"))?;
        let comm = u.comms.get(idx).ok_or_else(|| err(ErrorClass::Intern, "the window's communicator vanished"))?;
        match Self::build(u, comm.clone(), idx, spec) {
            Ok(w) => Ok(w),
            Err(e) => {
                revoke_on_failure(u, &comm, &e);
                crate::coll::remove_comm(u, idx);
                Err(e)
            }
        }
    }

    fn build(u: &'static Universe, comm: Arc<Comm>, comm_index: u32, spec: Spec) -> MpiResult<Window> {
        let n = comm.size();
        let me = comm.rank;
        // Members on another node than this rank: their memory is reached by messages their own
        // progress serves (`super::serve`); the members of each node share one region. Every
        // member sees the same answer to "does the window span nodes", so all refuse or none.
        let t = u.engine.transport();
        let far: Vec<bool> = (0..n).map(|r| crate::transport::Transport::locality(t, comm.world_rank(r)) == crate::transport::Locality::OtherNode).collect();
        if let (true, Some(r)) = (spec.flavor == Flavor::Shared, far.iter().position(|&f| f)) {
            return Err(err(ErrorClass::RmaShared, format!("MPI_Win_allocate_shared needs ranks that share memory, but rank {r} of the communicator is on another node than this rank (make the communicator with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))")));
        }
        let leader = (0..n).find(|&r| !far[r]).expect("this rank is on its own node");
        let cx = Coll::next(u, &comm);
        // Everyone's data size, for the layout of the allocated memory.
        let alloc = matches!(spec.flavor, Flavor::Allocate | Flavor::Shared);
        let mine = if alloc { spec.size as u64 } else { 0 };
        let mut sizes = vec![0u64; n];
        sizes[me] = mine;
        // SAFETY: u64 has no invalid bit patterns.
        unsafe { allgather_each(&cx.phase(1), &mut sizes)? };
        let layout = Layout::new(n);
        // Allocated (non-shared) windows pad each rank's memory to 64 bytes; shared windows are
        // contiguous in rank order (MPI 4.1 section 12.2.3, alloc_shared_noncontig not set).
        // The region of a node holds the memory of that node's members only.
        let pad = |s: u64| if spec.flavor == Flavor::Shared { s } else { s.div_ceil(64) * 64 };
        let mut offs = Vec::with_capacity(n);
        let mut at = layout.data_off as u64;
        for (r, &s) in sizes.iter().enumerate() {
            offs.push(at);
            if !far[r] {
                at = at.checked_add(pad(s)).ok_or_else(|| err(ErrorClass::Size, "the window's total size overflows"))?;
            }
        }
        let len = at.max(layout.data_off as u64 + 1) as usize;
        // The lowest member of each node creates the node's memfd; every rank publishes (pid, fd)
        // (a leader's failure as fd -1, others [0, 0]) and opens its leader's.
        let mut ids = vec![[0i32; 2]; n];
        let mut made = None;
        let mut failure = None;
        if me == leader {
            match Region::create(layout, len) {
                Ok((r, fd)) => {
                    ids[me] = [std::process::id() as i32, fd];
                    made = Some(r);
                }
                Err(e) => {
                    ids[me] = [0, -1];
                    failure = Some(ioerr("create", e));
                }
            }
        }
        // SAFETY: i32 pairs have no invalid bit patterns.
        unsafe { allgather_each(&cx.phase(2), &mut ids)? };
        // A failed leader fails the window everywhere (no member is left waiting in a later step).
        if let Some(r) = (0..n).find(|&r| ids[r][1] < 0) {
            return Err(failure.unwrap_or_else(|| err(ErrorClass::NoMem, format!("rank {r} of the window could not create its node's shared memory"))));
        }
        let id = ids[leader];
        let region = match made {
            Some(r) => Ok(r),
            None => Region::open(id[0], id[1], layout, len).map_err(|e| ioerr("map", e)),
        };
        // Everyone must have mapped before the leaders close their descriptor; a rank that failed
        // to map still joins the barrier so that no rank is left waiting.
        crate::coll::barrier::barrier(&cx.phase(3))?;
        if me == leader {
            // SAFETY: our descriptor; the mappings keep the memfd alive.
            unsafe { libc::close(id[1]) };
        }
        let region = region?;
        let base = match spec.flavor {
            Flavor::Allocate | Flavor::Shared => region.at(offs[me]) as usize,
            Flavor::Create => spec.base,
            Flavor::Dynamic => 0,
        };
        let a = region.rank(me);
        a.base.store(base as u64, Relaxed);
        a.size.store(spec.size as u64, Relaxed);
        a.disp_unit.store(spec.disp_unit as u64, Relaxed);
        a.data_off.store(if alloc { offs[me] } else { NO_DATA }, Relaxed);
        // Everyone's (size, disp_unit), for the members of other nodes; this allgather also
        // orders the stores above before any member's first access (it is the last step).
        let mut info = vec![[0u64; 2]; n];
        info[me] = [spec.size as u64, spec.disp_unit as u64];
        // SAFETY: u64 pairs have no invalid bit patterns.
        unsafe { allgather_each(&cx.phase(4), &mut info)? };
        let threads = crate::runtime::job::threads_job().is_some();
        Ok(Window {
            comm,
            comm_index,
            flavor: spec.flavor,
            region,
            rank: me,
            size: n,
            base,
            size_attr: spec.size as isize,
            disp_unit_attr: spec.disp_unit as i32,
            flavor_attr: spec.flavor_attr,
            model_attr: spec.model_attr,
            threads,
            name: Mutex::new(String::new()),
            errhandler: AtomicI32::new(spec.errhandler),
            hints: Mutex::new(spec.hints),
            epochs: Mutex::new(Epochs { locks: vec![None; n], ..Default::default() }),
            attached: Mutex::new(Vec::new()),
            published: Mutex::new(Vec::new()),
            spans: far.iter().any(|&f| f),
            far,
            info,
            reply_tag: std::sync::atomic::AtomicU32::new(0),
            lock_all_open: AtomicBool::new(false),
        })
    }

    /// Where target `t`'s memory is for this rank.
    pub fn target(&self, t: usize) -> Target {
        if self.far[t] {
            // Not addressable from here (the operations go to `super::remote` before asking).
            return Target::Remote { peer: self.comm.world_rank(t), base: 0 };
        }
        let a = self.region.rank(t);
        let off = a.data_off.load(Relaxed);
        if off != NO_DATA {
            return Target::Direct(self.region.at(off) as usize);
        }
        let base = a.base.load(Relaxed);
        if self.threads || t == self.rank {
            return Target::Direct(base as usize);
        }
        Target::Remote { peer: self.comm.world_rank(t), base }
    }

    /// (size, disp_unit) of target `t`.
    pub fn extent_of(&self, t: usize) -> (u64, u64) {
        if self.far[t] {
            return (self.info[t][0], self.info[t][1]);
        }
        let a = self.region.rank(t);
        (a.size.load(Relaxed), a.disp_unit.load(Relaxed))
    }

    pub fn epochs(&self) -> std::sync::MutexGuard<'_, Epochs> {
        self.epochs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The window's bytes `[lo, hi)` of target `t` (offsets from its window start; for a dynamic
    /// window absolute addresses) must lie in its memory, or ErrorClass::RmaRange. A dynamic
    /// window's memory is the union of the attached regions, so an access may span adjacent ones.
    pub fn check_range(&self, engine: &crate::p2p::Engine, t: usize, lo: i128, hi: i128) -> MpiResult {
        if hi <= lo {
            return Ok(());
        }
        if self.flavor == Flavor::Dynamic {
            if self.far[t] {
                return Ok(()); // its own node checks (`super::serve`)
            }
            if !covered(&self.regions_of(engine, t)?, lo, hi) {
                return Err(err(ErrorClass::RmaRange, format!("target rank {t} has no attached memory covering addresses 0x{lo:x} to 0x{:x} of this dynamic window", (hi - 1).max(lo))));
            }
            return Ok(());
        }
        let (size, _) = self.extent_of(t);
        if lo < 0 || hi > size as i128 {
            return Err(err(ErrorClass::RmaRange, format!("target bytes {} are outside target rank {t}'s window of {size} bytes", crate::error::range(lo as i64, (hi - 1).max(lo) as i64))));
        }
        Ok(())
    }

    /// The regions target `t` has attached to this dynamic window: from its control block, or,
    /// beyond `MAX_REGIONS`, from its own memory (read under its `acc` lock, so the list cannot be
    /// replaced meanwhile).
    fn regions_of(&self, engine: &crate::p2p::Engine, t: usize) -> MpiResult<Vec<(u64, u64)>> {
        let a = self.region.rank(t);
        super::sync::lock(&a.acc);
        let n = a.nregions.load(Relaxed) as usize;
        let got = if n <= super::shm::MAX_REGIONS {
            Ok((0..n).map(|i| (a.regions[i][0].load(Relaxed), a.regions[i][1].load(Relaxed))).collect())
        } else {
            let mut all = vec![(0u64, 0u64); n];
            let at = a.overflow.load(Relaxed);
            if self.threads || t == self.rank {
                // SAFETY: `at` is the target's `published` list of `n` pairs in this address space,
                // which it replaces only under `acc`, held here.
                unsafe { std::ptr::copy_nonoverlapping(at as *const (u64, u64), all.as_mut_ptr(), n) };
                Ok(all)
            } else {
                use crate::transport::Transport;
                let peer = self.comm.world_rank(t);
                engine.transport().read(peer, at, all.as_mut_ptr() as *mut u8, n * 16).map(|_| all).map_err(|e| {
                    err(ErrorClass::Other, format!("cannot read the regions attached by target rank {t} (rank {peer} of MPI_COMM_WORLD): {e}"))
                })
            }
        };
        super::sync::unlock(&a.acc);
        got
    }

    /// MPI_Win_attach: records `[addr, addr + len)` in this rank's control block.
    pub fn attach(&self, addr: u64, len: u64) -> MpiResult {
        let mut at = self.attached.lock().unwrap_or_else(|p| p.into_inner());
        if at.iter().any(|&(b, l)| addr < b + l && b < addr + len) {
            return Err(err(ErrorClass::RmaAttach, "the region overlaps a region already attached to this window"));
        }
        at.push((addr, len));
        self.publish(&at);
        Ok(())
    }

    /// MPI_Win_detach of the region attached at `addr`.
    pub fn detach(&self, addr: u64) -> MpiResult {
        let mut at = self.attached.lock().unwrap_or_else(|p| p.into_inner());
        let i = at.iter().position(|r| r.0 == addr).ok_or_else(|| err(ErrorClass::RmaAttach, format!("no region is attached at address 0x{addr:x}")))?;
        at.remove(i);
        self.publish(&at);
        Ok(())
    }

    fn publish(&self, regions: &[(u64, u64)]) {
        let a = self.region.rank(self.rank);
        super::sync::lock(&a.acc);
        let mut p = self.published.lock().unwrap_or_else(|p| p.into_inner());
        // The old list is freed here, under `acc`: no reader is looking at it.
        *p = regions.to_vec();
        a.overflow.store(p.as_ptr() as u64, Relaxed);
        for (i, &(b, l)) in regions.iter().take(super::shm::MAX_REGIONS).enumerate() {
            a.regions[i][0].store(b, Relaxed);
            a.regions[i][1].store(l, Relaxed);
        }
        a.nregions.store(regions.len() as u32, Relaxed);
        drop(p);
        super::sync::unlock(&a.acc);
    }

    /// Barrier on the window's communicator (fence, free).
    /// ULFM: RMA with a failed rank fails (its memory may still be mapped, but an epoch that
    /// touches it must not report success). A cheap check: the segment's failure flag.
    pub fn check_alive(&self, u: &Universe, t: usize) -> MpiResult {
        let w = self.comm.world_rank(t);
        if u.seg.is_failed(w) {
            return Err(err(ErrorClass::ProcFailed, format!("window rank {t} (world rank {w}) has failed: RMA with it cannot complete")));
        }
        Ok(())
    }

    /// The first failed member of the window (window rank), if any.
    pub fn failed_member(&self, u: &Universe) -> Option<usize> {
        (0..self.size).find(|&t| u.seg.is_failed(self.comm.world_rank(t)))
    }

    /// `check_alive` for every member.
    pub fn check_all_alive(&self, u: &Universe) -> MpiResult {
        self.failed_member(u).map_or(Ok(()), |t| self.check_alive(u, t))
    }

    pub fn barrier(&self, u: &Universe) -> MpiResult {
        std::sync::atomic::fence(SeqCst);
        crate::coll::barrier::barrier(&Coll::next(u, &self.comm)).inspect_err(|e| revoke_on_failure(u, &self.comm, e))?;
        std::sync::atomic::fence(SeqCst);
        Ok(())
    }
}

/// A collective step of a window failed on this rank because a member died (ULFM): other members
/// may wait in it for this rank, which gave up, on the window's private communicator, which the
/// program cannot revoke. Revoking it here fails their wait too (the window is unusable then).
fn revoke_on_failure(u: &Universe, comm: &Comm, e: &crate::error::MpiError) {
    if matches!(e.class, ErrorClass::ProcFailed | ErrorClass::Revoked) {
        u.engine.revoke(comm.context, &comm.group);
    }
}

/// Gives every member all members' `all[r]` (each rank has put its own at its index).
///
/// # Safety
/// Every bit pattern must be a valid `T` (plain integers): the elements arrive as bytes.
unsafe fn allgather_each<T: Copy>(cx: &Coll, all: &mut [T]) -> MpiResult {
    let size = std::mem::size_of::<T>();
    let blocks = crate::coll::gather::Blocks { base: all.as_mut_ptr() as *mut u8, offs: (0..all.len()).map(|i| (i * size) as isize).collect(), lens: vec![size; all.len()] };
    // SAFETY: `all` holds all.len() disjoint blocks of `size` bytes, ours in place; any bytes
    // are a valid `T` (caller).
    unsafe { crate::coll::allgather::allgather(cx, None, &blocks) }
}

/// Whether `[lo, hi)` lies in the union of `regions` (address, length): regions attached back to
/// back form one range.
pub(super) fn covered(regions: &[(u64, u64)], lo: i128, hi: i128) -> bool {
    let mut sorted: Vec<(i128, i128)> = regions.iter().map(|&(b, l)| (b as i128, b as i128 + l as i128)).collect();
    sorted.sort_unstable();
    let mut reach = lo;
    for (b, e) in sorted {
        if b > reach {
            return false; // a gap: no later region starts before `b`
        }
        reach = reach.max(e);
        if reach >= hi {
            return true;
        }
    }
    false
}

/// The windows of one rank: handle index -> window.
#[derive(Default)]
pub struct WinTable {
    entries: RwLock<Vec<Option<Arc<Window>>>>,
}

impl WinTable {
    pub fn insert(&self, w: Window) -> u32 {
        let mut e = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let w = Some(Arc::new(w));
        if let Some(i) = e.iter().position(|x| x.is_none()) {
            e[i] = w;
            i as u32
        } else {
            e.push(w);
            (e.len() - 1) as u32
        }
    }
    pub fn get(&self, i: u32) -> Option<Arc<Window>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).get(i as usize).cloned().flatten()
    }
    pub fn remove(&self, i: u32) -> Option<Arc<Window>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner()).get_mut(i as usize)?.take()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn adjacent_regions_cover_a_spanning_range() {
        let r = [(200, 50), (100, 100), (400, 10)];
        assert!(super::covered(&r, 150, 240), "spans the two adjacent regions");
        assert!(super::covered(&r, 100, 250));
        assert!(!super::covered(&r, 240, 260), "runs past the end");
        assert!(!super::covered(&r, 90, 120), "starts before the first");
        assert!(!super::covered(&r, 240, 405), "a gap between 250 and 400");
        assert!(super::covered(&r, 400, 410));
    }
}
