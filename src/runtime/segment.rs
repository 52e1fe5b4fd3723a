//! The job's shared-memory segment: header, per-rank control blocks, doorbells and the N x N
//! channel areas, whose size and contents belong to the shared-memory transport
//! (`transport::shm`): the segment only lays them out, `ChannelGeometry` tells it how.
//!
//! In processes mode `mpiexec` creates the segment as a memfd (so nothing ever appears in /dev/shm),
//! initialises it, and the ranks inherit the descriptor (`OXMPI_SHM_FD`). A program started without
//! `mpiexec` (a singleton) gets a private anonymous segment of one rank.
//!
//! Layout (every part aligned like `CachePadded`, 128 bytes on x86_64):
//! ```text
//! SegmentHeader | RankControl[n] | Doorbell[n] | channel[src * n + dst] for all src, dst
//!   | world arena (jobs of at most `ARENA_MAX_RANKS`): ArenaCounters | n + 2 slots of ARENA_SLOT
//!   | Clairvoyant arrival board (jobs of at most `runtime::pap_board::MAX_RANKS`)
//! ```
use crossbeam_utils::CachePadded;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicI32, AtomicU32, Ordering};

pub const MAGIC: u64 = 0x6f78_6d70_6973_6567; // "oxmpiseg"
pub const LAYOUT_VERSION: u32 = 8;

/// Lifecycle of a rank as the launcher sees it.
pub const RANK_NOT_STARTED: u32 = 0;
pub const RANK_INITIALIZED: u32 = 1;
pub const RANK_FINALIZED: u32 = 2;

#[repr(C, align(64))]
pub struct SegmentHeader {
    /// `MAGIC` once the launcher has initialised the segment.
    pub magic: u64,
    /// `LAYOUT_VERSION`; a rank refuses a segment of another version.
    pub version: u32,
    /// Rank slots of the segment: the universe (`mpiexec -usize`), at least the ranks started
    /// with the job; spawned ranks (`runtime::spawn_desk`) take the free ones.
    pub nranks: u32,
    /// Slots per channel (chosen by the transport from nranks; `ChannelGeometry::nslots`).
    pub nslots: u32,
    /// Bytes of one channel area (`ChannelGeometry::bytes`).
    pub channel_bytes: u32,
    /// Process id of the launcher (0 for a singleton).
    pub launcher_pid: i32,
    /// Set to 1 by the first rank that aborts the job (MPI_Abort or a fatal error); first writer wins.
    pub abort_flag: AtomicU32,
    /// Rank that aborted (valid once abort_flag is 1 and abort_ready is 1).
    pub abort_rank: AtomicI32,
    /// Exit code requested by MPI_Abort / the fatal error handler.
    pub abort_code: AtomicI32,
    /// 1 once abort_rank and abort_code are written.
    pub abort_ready: AtomicU32,
    /// Non-zero once the job opted in to surviving the loss of a rank (`mpiexec --survive`,
    /// `OXMPI_SURVIVE=1`, or a rank set a non-fatal error handler on a communicator): the launcher
    /// then marks a dead rank failed instead of ending the job (see `crate::ulfm`).
    pub survive: AtomicU32,
    /// Number of ranks the launcher marked failed (`RankControl::failed`); ranks compare it with
    /// the count they saw last, one relaxed load per progress pass, to notice a new failure.
    pub failures: AtomicU32,
    /// Ranks `mpiexec` started with the job (its MPI_COMM_WORLD, slots 0..initial).
    pub initial: u32,
    /// Slots taken so far (initial, then raised by the launcher as it starts spawned ranks):
    /// progress scans the channels from these slots only.
    pub occupied: AtomicU32,
    /// MPI_UNIVERSE_SIZE (`mpiexec -usize`); 0: the number of slots.
    pub universe: AtomicU32,
}

/// Per-rank state the launcher watches.
#[repr(C, align(64))]
pub struct RankControl {
    /// Process id of the rank once it called MPI_Init (for process_vm_readv and diagnostics).
    pub pid: AtomicI32,
    /// RANK_NOT_STARTED, RANK_INITIALIZED or RANK_FINALIZED.
    pub state: AtomicU32,
    /// 1 once the launcher saw the rank die (signal, or exit without MPI_Finalize) in a job that
    /// survives failures. Written before `SegmentHeader::failures` is incremented.
    pub failed: AtomicU32,
}

/// Where a rank sleeps when it has nothing to do. Any peer that gives it work (a message, a freed
/// slot) increments `seq` and, when `sleepers` is non-zero, wakes it with FUTEX_WAKE.
/// Dekker-style pairing, both sides SeqCst: the waiter increments `sleepers` then re-reads `seq`;
/// the waker increments `seq` then reads `sleepers`. At least one of them sees the other's write, so
/// a wake-up is never lost (and FUTEX_WAIT re-checks `seq` atomically in the kernel).
/// Both words share one cache line on purpose: the waker's increment of `seq` brings the line over
/// and its read of `sleepers` is then local, and the spinning waiter already polls that line.
#[repr(C, align(128))]
pub struct Doorbell {
    pub seq: AtomicU32,
    pub sleepers: AtomicU32,
    /// Threads mode with fibers: rank fibers parked on this doorbell. Like `sleepers` they make
    /// `notify` ring, but need no FUTEX_WAKE: their carrier polls `seq`.
    pub parked: AtomicU32,
    /// Jobs of 9 to 64 ranks: bit `src` is set when rank `src` pushed into its channel to this
    /// rank, so progress drains only those channels instead of polling all of them (the scan
    /// cost grows with the job; below 9 ranks it is cheaper than the extra atomic per send).
    pub inbox: AtomicU64,
    /// Threads mode with fibers: 1 + the scheduler slot whose sleeping carrier holds this rank's
    /// parked fiber (see `threads::sched`), 0 if none ever did. `ring` wakes that carrier too.
    pub carrier: AtomicU32,
}

/// What the shared-memory transport keeps per ordered pair of ranks, as the segment lays it out:
/// `bytes` bytes holding a channel of `nslots` slots (the transport reads `nslots` back from the
/// segment, which is all a rank attaching to the launcher's segment learns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelGeometry {
    pub nslots: usize,
    pub bytes: usize,
}

/// Bytes of one contribution (or result) slot of the world communicator's arena
/// (`coll::arena`): processes-mode allreduces of at most this size meet there.
pub const ARENA_SLOT: usize = 4096;
/// Jobs of more ranks get no world arena (it would take `(n + 2) * ARENA_SLOT` bytes).
pub const ARENA_MAX_RANKS: usize = 256;

/// Bytes of the spawn desk, where a rank hands a spawn request to the launcher.
pub const DESK_BYTES: usize = 64 * 1024;

/// The counters of the world arena's episodes (see `coll::arena`), each on its own line.
#[repr(C)]
pub struct ArenaCounters {
    /// Completed episodes.
    pub gen: CachePadded<AtomicU64>,
    /// Ranks counted into the current episode.
    pub arrived: CachePadded<AtomicU64>,
}

fn align_line(x: usize) -> usize {
    // 128, not 64: crossbeam's CachePadded is 128-byte aligned on x86_64 (adjacent-line prefetch).
    const A: usize = std::mem::align_of::<CachePadded<u8>>();
    (x + A - 1) & !(A - 1)
}

/// Byte offsets of the segment's parts.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub nranks: usize,
    pub channel: ChannelGeometry,
    pub ranks_off: usize,
    pub doorbells_off: usize,
    pub channels_off: usize,
    pub channel_stride: usize,
    /// Offset of the world arena, 0 if the job has none.
    pub arena_off: usize,
    /// Offset of the spawn desk (`runtime::spawn_desk`): `DESK_BYTES` bytes.
    pub desk_off: usize,
    /// Offset of the arrival board (`pap_board`), 0 if the job has none.
    pub board_off: usize,
    pub total: usize,
}

impl Layout {
    pub fn new(nranks: usize, channel: ChannelGeometry) -> Layout {
        let ranks_off = align_line(std::mem::size_of::<SegmentHeader>());
        let doorbells_off = align_line(ranks_off + nranks * std::mem::size_of::<RankControl>());
        let channels_off = align_line(doorbells_off + nranks * std::mem::size_of::<Doorbell>());
        let channel_stride = align_line(channel.bytes);
        let mut total = align_line(channels_off + nranks * nranks * channel_stride);
        let mut arena_off = 0;
        if nranks <= ARENA_MAX_RANKS {
            arena_off = total;
            total = align_line(arena_off + std::mem::size_of::<ArenaCounters>() + (nranks + 2) * ARENA_SLOT);
        }
        let desk_off = total;
        total = align_line(desk_off + DESK_BYTES);
        let mut board_off = 0;
        let board = super::pap_board::bytes(nranks);
        if board > 0 {
            board_off = total;
            total = align_line(board_off + board);
        }
        Layout { nranks, channel, ranks_off, doorbells_off, channels_off, channel_stride, arena_off, desk_off, board_off, total }
    }
}

/// A mapped segment. The mapping lives until the process exits (ranks) or the value is dropped.
pub struct Segment {
    base: *mut u8,
    layout: Layout,
    fd: i32,
    owned_mapping: bool,
}
// SAFETY: all shared fields are atomics or follow the channel protocol; the mapping is never moved.
unsafe impl Send for Segment {}
unsafe impl Sync for Segment {}

impl Segment {
    /// Launcher side: creates and initialises a memfd-backed segment for `nranks` ranks with
    /// channels of `channel` (`transport::shm::geometry`). The descriptor is inheritable (no
    /// CLOEXEC) so that children find it at `fd()`.
    /// `initial` of the slots are the job's MPI_COMM_WORLD; the others wait for spawned ranks.
    pub fn create(nranks: usize, initial: usize, launcher_pid: i32, channel: ChannelGeometry) -> io::Result<Segment> {
        let layout = Layout::new(nranks, channel);
        // SAFETY: the name is a valid C string; flags 0 = inheritable.
        let fd = unsafe { libc::memfd_create(c"oxmpi-job".as_ptr(), 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is ours.
        if unsafe { libc::ftruncate(fd, layout.total as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: fd is ours and not used after.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let seg = Self::map(fd, layout, true)?;
        seg.init_header(nranks, initial.min(nranks), channel, launcher_pid);
        Ok(seg)
    }

    /// Singleton and threads-mode side: a private anonymous segment (a program run without
    /// mpiexec, or all the ranks of a threads-mode job), with channels of `channel`.
    pub fn anonymous(nranks: usize, channel: ChannelGeometry) -> io::Result<Segment> {
        Self::anonymous_world(nranks, nranks, channel)
    }

    /// A private anonymous segment of `nranks` slots whose first `initial` are the job's
    /// MPI_COMM_WORLD (threads mode: the others wait for spawned ranks).
    pub fn anonymous_world(nranks: usize, initial: usize, channel: ChannelGeometry) -> io::Result<Segment> {
        let layout = Layout::new(nranks, channel);
        // SAFETY: anonymous shared mapping of a fresh size; checked for MAP_FAILED. No swap is
        // reserved for it (MAP_NORESERVE): the channels span about 1 GiB of address space of which
        // only the pages used are touched, which must not count against the overcommit limit.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), layout.total, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let seg = Segment { base: p as *mut u8, layout, fd: -1, owned_mapping: true };
        seg.init_header(nranks, initial.min(nranks), channel, 0);
        Ok(seg)
    }

    /// Rank side: maps the segment the launcher passed as descriptor `fd`.
    pub fn attach(fd: i32) -> io::Result<Segment> {
        // Read the header first to learn the layout.
        let mut hdr_bytes = [0u8; std::mem::size_of::<SegmentHeader>()];
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe { libc::pread(fd, hdr_bytes.as_mut_ptr() as *mut libc::c_void, hdr_bytes.len(), 0) };
        if n != hdr_bytes.len() as isize {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("OXMPI_SHM_FD={fd} is not an oxmpi segment (short read)")));
        }
        let magic = u64::from_ne_bytes(hdr_bytes[0..8].try_into().unwrap());
        let version = u32::from_ne_bytes(hdr_bytes[8..12].try_into().unwrap());
        let nranks = u32::from_ne_bytes(hdr_bytes[12..16].try_into().unwrap()) as usize;
        let nslots = u32::from_ne_bytes(hdr_bytes[16..20].try_into().unwrap()) as usize;
        let bytes = u32::from_ne_bytes(hdr_bytes[20..24].try_into().unwrap()) as usize;
        if magic != MAGIC || version != LAYOUT_VERSION {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("OXMPI_SHM_FD={fd}: not an oxmpi segment of layout version {LAYOUT_VERSION} (was this program started by another oxmpi's mpiexec?)")));
        }
        Self::map(fd, Layout::new(nranks, ChannelGeometry { nslots, bytes }), false)
    }

    fn map(fd: i32, layout: Layout, owned: bool) -> io::Result<Segment> {
        // SAFETY: mapping `layout.total` bytes of a file we sized (or the launcher sized) to that length.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), layout.total, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Segment { base: p as *mut u8, layout, fd, owned_mapping: owned })
    }

    fn init_header(&self, nranks: usize, initial: usize, channel: ChannelGeometry, launcher_pid: i32) {
        // SAFETY: the mapping is fresh (zero-filled) and at least size_of::<SegmentHeader>() long;
        // nobody else uses it yet.
        unsafe {
            let h = self.base as *mut SegmentHeader;
            (*h).version = LAYOUT_VERSION;
            (*h).nranks = nranks as u32;
            (*h).nslots = channel.nslots as u32;
            (*h).channel_bytes = channel.bytes as u32;
            (*h).launcher_pid = launcher_pid;
            (*h).initial = initial as u32;
            (*h).occupied = AtomicU32::new(initial as u32);
            std::sync::atomic::fence(Ordering::Release);
            (*h).magic = MAGIC;
        }
    }

    pub fn fd(&self) -> i32 {
        self.fd
    }
    pub fn nranks(&self) -> usize {
        self.layout.nranks
    }
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn header(&self) -> &SegmentHeader {
        // SAFETY: the header is at offset 0 of a live mapping.
        unsafe { &*(self.base as *const SegmentHeader) }
    }
    pub fn rank(&self, r: usize) -> &RankControl {
        assert!(r < self.layout.nranks);
        // SAFETY: in bounds of the RankControl array.
        unsafe { &*(self.base.add(self.layout.ranks_off) as *const RankControl).add(r) }
    }
    pub fn doorbell(&self, r: usize) -> &Doorbell {
        assert!(r < self.layout.nranks);
        // SAFETY: in bounds of the Doorbell array.
        unsafe { &*(self.base.add(self.layout.doorbells_off) as *const Doorbell).add(r) }
    }
    /// The area of the channel carrying messages from `src` to `dst`: `channel_geometry().bytes`
    /// bytes, zero-filled at creation, aligned like `CachePadded`.
    pub fn channel_area(&self, src: usize, dst: usize) -> *mut u8 {
        let n = self.layout.nranks;
        assert!(src < n && dst < n);
        // SAFETY: in bounds: n * n areas of channel_stride >= channel.bytes bytes each.
        unsafe { self.base.add(self.layout.channels_off + (src * n + dst) * self.layout.channel_stride) }
    }

    /// Launcher: records MPI_UNIVERSE_SIZE (at most the slots).
    pub fn set_universe_size(&self, n: usize) {
        self.header().universe.store(n.min(self.nranks()) as u32, Ordering::Release);
    }

    /// MPI_UNIVERSE_SIZE: what the launcher said, else the number of slots.
    pub fn universe_size(&self) -> usize {
        match self.header().universe.load(Ordering::Acquire) {
            0 => self.nranks(),
            u => u as usize,
        }
    }

    /// Ranks the launcher started with the job (its MPI_COMM_WORLD: slots 0..initial).
    pub fn initial(&self) -> usize {
        self.header().initial as usize
    }

    /// Slots taken so far: no packet comes from a slot at or above this.
    #[inline(always)]
    pub fn occupied(&self) -> usize {
        self.header().occupied.load(Ordering::Acquire) as usize
    }

    /// The spawn desk: `DESK_BYTES` bytes, zero-filled at creation, aligned like `CachePadded`.
    pub fn desk_area(&self) -> *mut u8 {
        // SAFETY: the desk lies inside the mapping (see `Layout::new`).
        unsafe { self.base.add(self.layout.desk_off) }
    }

    /// How the channel areas were laid out.
    pub fn channel_geometry(&self) -> ChannelGeometry {
        self.layout.channel
    }

    /// The world arena: its counters and the first of its `n + 2` slots of `ARENA_SLOT` bytes
    /// (one per rank, then the two result slots). None for jobs of more than `ARENA_MAX_RANKS`.
    pub fn world_arena(&self) -> Option<(&ArenaCounters, *mut u8)> {
        if self.layout.arena_off == 0 {
            return None;
        }
        // SAFETY: the arena lies inside the mapping (see `Layout::new`); the counters are atomics
        // in zero-initialised memory, which is their initial state.
        unsafe {
            let c = self.base.add(self.layout.arena_off);
            Some((&*(c as *const ArenaCounters), c.add(std::mem::size_of::<ArenaCounters>())))
        }
    }

    /// The Clairvoyant arrival board, None for jobs of more than `runtime::pap_board::MAX_RANKS`.
    pub fn board(&self) -> Option<super::pap_board::Board> {
        if self.layout.board_off == 0 {
            return None;
        }
        // SAFETY: the board lies inside the mapping (`Layout::new`), 128-byte aligned, zeroed at
        // creation, and the mapping lives as long as the segment, which outlives the ranks' use.
        Some(unsafe { super::pap_board::Board::new(self.base.add(self.layout.board_off), self.layout.nranks) })
    }

    /// Records that `rank` aborts the job with `code`. Returns false if another rank was first.
    pub fn record_abort(&self, rank: i32, code: i32) -> bool {
        let h = self.header();
        if h.abort_flag.compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return false;
        }
        h.abort_rank.store(rank, Ordering::SeqCst);
        h.abort_code.store(code, Ordering::SeqCst);
        h.abort_ready.store(1, Ordering::SeqCst);
        true
    }

    /// Launcher: marks `rank` failed and wakes every rank, so that sleepers notice at once.
    pub fn mark_failed(&self, rank: usize) {
        if self.rank(rank).failed.swap(1, Ordering::SeqCst) != 0 {
            return;
        }
        self.header().failures.fetch_add(1, Ordering::SeqCst);
        for r in 0..self.nranks() {
            crate::runtime::wait::ring(self.doorbell(r));
        }
    }

    /// Whether the launcher marked `rank` failed.
    pub fn is_failed(&self, rank: usize) -> bool {
        self.rank(rank).failed.load(Ordering::Acquire) != 0
    }

    /// Records that the job wants to survive failures (see `SegmentHeader::survive`).
    pub fn want_survival(&self) {
        self.header().survive.store(1, Ordering::Relaxed);
    }

    /// Launcher: whether the job opted in to surviving failures.
    pub fn survival_wanted(&self) -> bool {
        self.header().survive.load(Ordering::SeqCst) != 0
    }

    /// Launcher: (rank, code) if some rank recorded an abort.
    pub fn abort_record(&self) -> Option<(i32, i32)> {
        let h = self.header();
        if h.abort_ready.load(Ordering::SeqCst) == 1 {
            Some((h.abort_rank.load(Ordering::SeqCst), h.abort_code.load(Ordering::SeqCst)))
        } else {
            None
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        if self.owned_mapping {
            // SAFETY: we created this mapping and nothing refers to it after drop.
            unsafe {
                libc::munmap(self.base as *mut libc::c_void, self.layout.total);
                if self.fd >= 0 {
                    libc::close(self.fd);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn create_attach_roundtrip() {
        let g = ChannelGeometry { nslots: 8, bytes: 4096 };
        let s = Segment::create(4, 4, 1, g).unwrap();
        s.rank(2).state.store(RANK_INITIALIZED, Ordering::SeqCst);
        let a = Segment::attach(s.fd()).unwrap();
        assert_eq!(a.nranks(), 4);
        assert_eq!(a.rank(2).state.load(Ordering::SeqCst), RANK_INITIALIZED);
        assert_eq!(a.channel_geometry(), g);
        // SAFETY: both areas are 4096 bytes of the shared mapping.
        unsafe { *a.channel_area(1, 3).add(7) = 42 };
        assert_eq!(unsafe { *s.channel_area(1, 3).add(7) }, 42);
        assert!(s.record_abort(3, 7));
        assert!(!a.record_abort(1, 9));
        assert_eq!(a.abort_record(), Some((3, 7)));
        std::mem::forget(a); // shares the fd with `s`
    }
}
