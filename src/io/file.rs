//! An open file (MPI 4.1 sections 14.2 and 14.6) as one rank sees it: its private communicator,
//! its storage, access mode, view, individual file pointer, the state shared by all its ranks
//! (shared file pointer, atomic-mode lock), hints, atomicity and error handler. Opening and
//! closing are collective: the ranks agree on the access mode, rank 0 creates the file, then the
//! others open it, and all learn whether everyone succeeded.
use super::backend::{self, Backend, OpenMode, Posix};
use super::hints::Hints;
use super::range_lock::FileLock;
use super::shared::SharedArea;
use super::view::View;
use crate::coll::Coll;
use crate::comm::{Comm, Universe};
use crate::datatype::TypeRepr;
use crate::error::{err, ErrorClass, MpiError, MpiResult};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// An access mode (MPI_MODE_*), as the engine names its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amode {
    pub rdonly: bool,
    pub wronly: bool,
    pub rdwr: bool,
    pub create: bool,
    pub excl: bool,
    pub delete_on_close: bool,
    pub unique_open: bool,
    pub sequential: bool,
    pub append: bool,
}

impl Amode {
    /// The rules of MPI 4.1 section 14.2.1: exactly one of RDONLY, WRONLY, RDWR; no CREATE or
    /// EXCL with RDONLY; no SEQUENTIAL with RDWR.
    pub fn check(&self) -> MpiResult {
        let n = self.rdonly as u8 + self.wronly as u8 + self.rdwr as u8;
        if n != 1 {
            return Err(err(ErrorClass::Amode, "the access mode must have exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR"));
        }
        if self.rdonly && (self.create || self.excl) {
            return Err(err(ErrorClass::Amode, "MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL"));
        }
        if self.rdwr && self.sequential {
            return Err(err(ErrorClass::Amode, "MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL"));
        }
        Ok(())
    }

    fn bits(&self) -> u64 {
        [self.rdonly, self.wronly, self.rdwr, self.create, self.excl, self.delete_on_close, self.unique_open, self.sequential, self.append]
            .iter()
            .enumerate()
            .map(|(i, &b)| (b as u64) << i)
            .sum()
    }

    pub fn may_read(&self) -> bool {
        !self.wronly
    }
    pub fn may_write(&self) -> bool {
        !self.rdonly
    }
}

/// A split collective in progress on a file (MPI 4.1 section 14.4.5): its kind and the memory
/// bytes it transferred, or its error.
pub struct Split {
    pub kind: SplitKind,
    pub result: MpiResult<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitKind {
    ReadAtAll,
    WriteAtAll,
    ReadAll,
    WriteAll,
    ReadOrdered,
    WriteOrdered,
}

pub struct File {
    /// Private duplicate of the opening communicator.
    pub comm: Arc<Comm>,
    pub comm_index: u32,
    pub path: String,
    pub amode: Amode,
    pub backend: Box<dyn Backend>,
    pub shared: SharedArea,
    pub view: RwLock<Arc<View>>,
    /// The individual file pointer, in etypes of the view.
    pub pointer: Mutex<u64>,
    pub atomic: AtomicBool,
    pub hints: Mutex<Hints>,
    /// A byte-range lock on the file for read-modify-write (sieved independent writes, holes
    /// in two-phase writes); none for a read-only file or one that cannot be opened read-write.
    pub lock: Option<FileLock>,
    /// The file's error handler: an opaque handle value of the C boundary.
    pub errhandler: AtomicI32,
    pub split: Mutex<Option<Split>>,
    /// Nonblocking accesses still with the I/O worker or `nbc_jobs`.
    pub outstanding: super::worker::Outstanding,
    /// A second duplicate of the opening communicator (and its index), only for the two-phase
    /// I/O of nonblocking collectives, which `nbc_jobs` runs in call order on a helper thread.
    pub nbc: std::sync::OnceLock<(Arc<Comm>, u32)>,
    pub nbc_jobs: super::worker::Serial,
}

/// How MPI_File_open failures are told to the other ranks.
const OPEN_CLASSES: &[ErrorClass] = &[
    ErrorClass::NoSuchFile,
    ErrorClass::FileExists,
    ErrorClass::Access,
    ErrorClass::NoSpace,
    ErrorClass::Quota,
    ErrorClass::ReadOnly,
    ErrorClass::FileInUse,
    ErrorClass::BadFile,
    ErrorClass::Io,
    ErrorClass::NoMem,
    ErrorClass::Amode,
];

fn class_code(c: ErrorClass) -> u64 {
    OPEN_CLASSES.iter().position(|&x| x == c).unwrap_or(OPEN_CLASSES.len() - 3) as u64 + 1
}
fn code_class(v: u64) -> ErrorClass {
    OPEN_CLASSES.get(v as usize - 1).copied().unwrap_or(ErrorClass::Io)
}

/// Every rank's `K` words, in rank order (a small internal allgather on `c`).
pub(crate) fn allgather_words<const K: usize>(u: &Universe, c: &Comm, mine: [u64; K]) -> MpiResult<Vec<[u64; K]>> {
    let n = c.size();
    let mut all = vec![[0u64; K]; n];
    all[c.rank] = mine;
    let blocks = crate::coll::gather::Blocks { base: all.as_mut_ptr() as *mut u8, offs: (0..n).map(|i| (i * K * 8) as isize).collect(), lens: vec![K * 8; n] };
    // SAFETY: `all` holds n disjoint blocks of K words; our own block is already in place.
    unsafe { crate::coll::allgather::allgather(&Coll::next(u, c), None, &blocks)? };
    Ok(all)
}

/// Rank 0's `K` words on every rank of `c`.
fn bcast_words<const K: usize>(u: &Universe, c: &Comm, mut w: [u64; K]) -> MpiResult<[u64; K]> {
    // SAFETY: `w` is K * 8 writable bytes on every rank.
    unsafe { crate::coll::bcast::bcast(&Coll::next(u, c), w.as_mut_ptr() as *mut u8, K * 8, 0)? };
    Ok(w)
}

impl File {
    /// MPI_File_open on `parent` (collective). `byte` is MPI_BYTE (the initial etype and
    /// filetype); `errhandler` the new file's handler (MPI_FILE_NULL's at the time).
    pub fn open(u: &'static Universe, parent: &Comm, path: &str, amode: Amode, info: &crate::info::Info, byte: Arc<TypeRepr>, errhandler: i32) -> MpiResult<File> {
        if parent.is_inter() {
            return Err(err(ErrorClass::Comm, "files cannot be opened on an intercommunicator"));
        }
        let idx = crate::construct::intra::dup(u, parent)?.ok_or_else(|| err(ErrorClass::Intern, "duplicating the file's communicator gave MPI_COMM_NULL"))?;
        let comm = u.comms.get(idx).ok_or_else(|| err(ErrorClass::Intern, "the file's communicator vanished"))?;
        match Self::open_on(u, comm, idx, path, amode, info, byte, errhandler) {
            Ok(f) => match crate::construct::intra::dup(u, &f.comm) {
                Ok(Some(i)) => {
                    let c = u.comms.get(i).ok_or_else(|| err(ErrorClass::Intern, "the file's second communicator vanished"))?;
                    let _ = f.nbc.set((c, i));
                    Ok(f)
                }
                r => {
                    crate::coll::remove_comm(u, idx);
                    Err(r.err().unwrap_or_else(|| err(ErrorClass::Intern, "duplicating the file's communicator gave MPI_COMM_NULL")))
                }
            },
            Err(e) => {
                crate::coll::remove_comm(u, idx);
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn open_on(u: &'static Universe, comm: Arc<Comm>, comm_index: u32, path: &str, amode: Amode, info: &crate::info::Info, byte: Arc<TypeRepr>, errhandler: i32) -> MpiResult<File> {
        let me = comm.rank;
        // 1. The same valid access mode everywhere.
        let local = amode.check().err();
        let all = allgather_words(u, &comm, [amode.bits(), local.is_some() as u64])?;
        if let Some(e) = local {
            return Err(e);
        }
        if all.iter().any(|w| w[1] != 0) {
            return Err(err(ErrorClass::Amode, "another rank of the communicator passed an invalid access mode"));
        }
        if all.iter().any(|w| w[0] != all[0][0]) {
            return Err(err(ErrorClass::Amode, "the ranks of the communicator passed different access modes (MPI_File_open needs the same amode on all ranks)"));
        }
        let mode = OpenMode { read: !amode.wronly, write: !amode.rdonly, create: amode.create, exclusive: amode.excl };
        // 2. Rank 0 opens (creates) first, and makes the shared page.
        let mut mine: Option<(Posix, Option<SharedArea>)> = None;
        let mut failure: Option<MpiError> = None;
        let mut word = [0u64; 3];
        if me == 0 {
            match Posix::open(path, mode).map_err(|e| backend::mpi_error("opening", path, &e)) {
                Ok(p) => match SharedArea::create() {
                    Ok((a, fd)) => {
                        word = [0, std::process::id() as u64, fd as u64];
                        mine = Some((p, Some(a)));
                    }
                    Err(e) => failure = Some(err(ErrorClass::NoMem, format!("cannot create the file's shared memory: {e}"))),
                },
                Err(e) => failure = Some(e),
            }
            if let Some(e) = &failure {
                word[0] = class_code(e.class);
            }
        }
        let word = bcast_words(u, &comm, word)?;
        if word[0] != 0 {
            return Err(failure.unwrap_or_else(|| err(code_class(word[0]), format!("rank 0 of the communicator could not open {path:?}"))));
        }
        // 3. The others open the file rank 0 made and map the shared page.
        if me != 0 {
            let no_create = OpenMode { create: false, exclusive: false, ..mode };
            match Posix::open(path, no_create).map_err(|e| backend::mpi_error("opening", path, &e)) {
                Ok(p) => mine = Some((p, None)),
                Err(e) => failure = Some(e),
            }
        }
        let shared = match mine.as_mut().map(|m| m.1.take()) {
            Some(Some(a)) => Some(a),
            Some(None) => match SharedArea::open(word[1] as i32, word[2] as i32) {
                Ok(a) => Some(a),
                Err(e) => {
                    failure = Some(err(ErrorClass::NoMem, format!("cannot map the file's shared memory: {e}")));
                    None
                }
            },
            None => None,
        };
        let codes = allgather_words(u, &comm, [failure.as_ref().map_or(0, |e| class_code(e.class))])?;
        if me == 0 {
            // SAFETY: our memfd descriptor; every rank has mapped the page (or failed) by now.
            unsafe { libc::close(word[2] as i32) };
        }
        if let Some(e) = failure {
            return Err(e);
        }
        if let Some(r) = codes.iter().position(|w| w[0] != 0) {
            return Err(err(code_class(codes[r][0]), format!("rank {r} of the communicator could not open {path:?}")));
        }
        let (posix, _) = mine.ok_or_else(|| err(ErrorClass::Intern, "the opened file vanished"))?;
        let shared = shared.ok_or_else(|| err(ErrorClass::Intern, "the file's shared memory vanished"))?;
        let mut hints = Hints::default();
        hints.apply(info, comm.size());
        let f = File {
            comm_index,
            path: path.to_string(),
            amode,
            backend: Box::new(posix),
            shared,
            view: RwLock::new(Arc::new(View::bytes(byte))),
            pointer: Mutex::new(0),
            atomic: AtomicBool::new(false),
            hints: Mutex::new(hints),
            lock: if amode.may_write() { FileLock::open(path).ok() } else { None },
            errhandler: AtomicI32::new(errhandler),
            split: Mutex::new(None),
            outstanding: Default::default(),
            nbc: Default::default(),
            nbc_jobs: Default::default(),
            comm,
        };
        if amode.append {
            // MPI_MODE_APPEND: both pointers start at the end of the file (etypes are bytes now).
            let end = f.size()?;
            *f.pointer() = end;
            if me == 0 {
                f.shared.set_pointer(end);
            }
            f.barrier(u)?;
        }
        Ok(f)
    }

    /// MPI_File_close's collective part: waits for this rank's nonblocking accesses and every
    /// rank's accesses, then rank 0 deletes
    /// the file if it was opened with MPI_MODE_DELETE_ON_CLOSE.
    pub fn close(&self, u: &Universe) -> MpiResult {
        // Closing with nonblocking accesses outstanding is erroneous (MPI 4.1 section 14.2.2);
        // they finish first rather than touch a closed (perhaps deleted) file.
        self.outstanding.wait_none();
        let r = self.barrier(u);
        if let Some(&(_, i)) = self.nbc.get() {
            crate::coll::remove_comm(u, i);
        }
        if self.amode.delete_on_close && self.comm.rank == 0 {
            backend::delete(&self.path).map_err(|e| backend::mpi_error("deleting", &self.path, &e))?;
        }
        r
    }

    pub fn barrier(&self, u: &Universe) -> MpiResult {
        crate::coll::barrier::barrier(&Coll::next(u, &self.comm))
    }

    pub fn pointer(&self) -> MutexGuard<'_, u64> {
        self.pointer.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn view(&self) -> Arc<View> {
        self.view.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn hints(&self) -> MutexGuard<'_, Hints> {
        self.hints.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn io_error(&self, what: &str, e: &std::io::Error) -> MpiError {
        backend::mpi_error(what, &self.path, e)
    }

    pub fn size(&self) -> MpiResult<u64> {
        self.backend.size().map_err(|e| self.io_error("getting the size of", &e))
    }

    /// MPI_File_set_size (collective): every rank must pass the same size.
    pub fn set_size(&self, u: &Universe, size: u64) -> MpiResult {
        self.same_everywhere(u, size, "size")?;
        if !self.amode.may_write() {
            return Err(err(ErrorClass::ReadOnly, "MPI_File_set_size on a file opened MPI_MODE_RDONLY"));
        }
        let r = if self.comm.rank == 0 { self.backend.set_size(size).map_err(|e| self.io_error("resizing", &e)) } else { Ok(()) };
        self.agree(u, r)
    }

    /// MPI_File_preallocate (collective).
    pub fn preallocate(&self, u: &Universe, size: u64) -> MpiResult {
        self.same_everywhere(u, size, "size")?;
        if !self.amode.may_write() {
            return Err(err(ErrorClass::ReadOnly, "MPI_File_preallocate on a file opened MPI_MODE_RDONLY"));
        }
        let r = if self.comm.rank == 0 { self.backend.preallocate(size).map_err(|e| self.io_error("preallocating", &e)) } else { Ok(()) };
        self.agree(u, r)
    }

    /// MPI_File_sync (collective): this rank's writes reach storage, and every rank's are
    /// visible to all once the call returns.
    pub fn sync(&self, u: &Universe) -> MpiResult {
        let r = self.backend.sync().map_err(|e| self.io_error("syncing", &e));
        self.agree(u, r)
    }

    /// Refuses (on every rank) a collective call whose `what` differs between ranks.
    pub fn same_everywhere(&self, u: &Universe, v: u64, what: &str) -> MpiResult {
        let all = allgather_words(u, &self.comm, [v])?;
        if all.iter().any(|w| w[0] != v) {
            return Err(err(ErrorClass::NotSame, format!("the ranks of the file passed different values of {what}")));
        }
        Ok(())
    }

    /// Ends a collective step: every rank learns whether some rank failed; this rank's own error
    /// first.
    pub fn agree(&self, u: &Universe, r: MpiResult) -> MpiResult {
        let all = allgather_words(u, &self.comm, [r.as_ref().err().map_or(0, |e| class_code(e.class))])?;
        r?;
        if let Some(i) = all.iter().position(|w| w[0] != 0) {
            return Err(err(code_class(all[i][0]), format!("rank {i} of the file failed")));
        }
        Ok(())
    }

    /// MPI_File_set_atomicity (collective): the same flag everywhere.
    pub fn set_atomicity(&self, u: &Universe, on: bool) -> MpiResult {
        self.same_everywhere(u, on as u64, "the atomicity flag")?;
        self.atomic.store(on, Ordering::Release);
        Ok(())
    }
}

/// The files of one rank: handle index -> file, with a generation per slot so that the handle
/// of a closed file stays invalid after its slot is reused.
#[derive(Default)]
pub struct FileTable {
    entries: RwLock<Vec<(u32, Option<Arc<File>>)>>,
}

impl FileTable {
    /// Adds `f`; returns its (index, generation).
    pub fn insert(&self, f: File) -> (u32, u32) {
        let mut e = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let f = Some(Arc::new(f));
        if let Some(i) = e.iter().position(|x| x.1.is_none()) {
            // Generations are 15 bits wide in the C boundary's handles.
            e[i].0 = (e[i].0 + 1) & 0x7fff;
            e[i].1 = f;
            (i as u32, e[i].0)
        } else {
            e.push((0, f));
            ((e.len() - 1) as u32, 0)
        }
    }
    /// The file at `i` if it is still of generation `gen`.
    pub fn get(&self, i: u32, gen: u32) -> Option<Arc<File>> {
        let e = self.entries.read().unwrap_or_else(|p| p.into_inner());
        e.get(i as usize).filter(|x| x.0 == gen).and_then(|x| x.1.clone())
    }
    /// The generation of the open file at `i`.
    pub fn generation(&self, i: u32) -> Option<u32> {
        let e = self.entries.read().unwrap_or_else(|p| p.into_inner());
        e.get(i as usize).filter(|x| x.1.is_some()).map(|x| x.0)
    }
    pub fn remove(&self, i: u32) -> Option<Arc<File>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner()).get_mut(i as usize)?.1.take()
    }
}
