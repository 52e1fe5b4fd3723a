//! Data access (MPI 4.1 section 14.4): explicit offsets, individual and shared file pointers,
//! ordered access, seeks. Every access turns (position in etypes, count of a memory datatype)
//! into the file byte runs of the view and the data in the file's representation, and hands
//! them to `transfer`.
use super::datarep::Datarep;
use super::file::{allgather_words, File};
use super::transfer::Transfer;
use super::view::View;
use crate::coll::Coll;
use crate::comm::Universe;
use crate::datatype::TypeRepr;
use crate::error::{err, ErrorClass, MpiResult};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Which file pointer an access uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// An explicit offset, in etypes.
    Offset(u64),
    Individual,
    Shared,
}

/// MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    Set,
    Cur,
    End,
}

/// A memory buffer of `count` elements of `dt`.
#[derive(Clone, Copy)]
pub struct Mem<'a> {
    pub buf: *mut u8,
    pub count: usize,
    pub dt: &'a Arc<TypeRepr>,
}

impl File {
    /// Runs `f` under the file's atomic-mode lock when atomic mode is on.
    pub fn exclusive<T>(&self, f: impl FnOnce() -> T) -> T {
        if self.atomic.load(Ordering::Acquire) {
            self.shared.locked(f)
        } else {
            f()
        }
    }

    fn check(&self, write: bool, at: At) -> MpiResult {
        if write && !self.amode.may_write() {
            return Err(err(ErrorClass::ReadOnly, "writing a file opened MPI_MODE_RDONLY"));
        }
        if !write && !self.amode.may_read() {
            return Err(err(ErrorClass::Access, "reading a file opened MPI_MODE_WRONLY"));
        }
        if self.amode.sequential && at != At::Shared {
            return Err(err(ErrorClass::UnsupportedOperation, "a file opened MPI_MODE_SEQUENTIAL is accessed only through the shared file pointer"));
        }
        Ok(())
    }

    /// Reads (`write` false) or writes `m` at `at`; returns the memory bytes transferred.
    /// `collective` for the `_all` forms.
    ///
    /// # Safety
    /// `m.buf` must hold (write) or have room for (read) `m.count` elements of `m.dt`.
    pub unsafe fn access(&self, u: &Universe, write: bool, at: At, m: Mem, collective: bool) -> MpiResult<u64> {
        self.check(write, at)?;
        let view = self.view();
        let fbytes = view.datarep.file_size(m.dt, m.count)?;
        let es = view.etype_size();
        let t = Transfer { u, file: self, collective, comm: &self.comm };
        match at {
            At::Offset(o) => {
                // SAFETY: per this function's contract.
                unsafe { move_data(&t, &view, write, o, m, fbytes) }.map(|r| r.1)
            }
            At::Individual => {
                let mut p = self.pointer();
                // SAFETY: per this function's contract.
                let (file_done, mem) = unsafe { move_data(&t, &view, write, *p, m, fbytes)? };
                *p += file_done / es;
                Ok(mem)
            }
            At::Shared => {
                let o = self.shared.fetch_add(fbytes / es);
                // SAFETY: per this function's contract.
                unsafe { move_data(&t, &view, write, o, m, fbytes) }.map(|r| r.1)
            }
        }
    }

    /// Starts a nonblocking access (MPI_File_iread*, iwrite* and their `_all` forms). Everything
    /// the standard checks at the call is checked now, and the file position is claimed now
    /// (MPI 4.1 section 14.4.3: the individual pointer moves by the whole request, the shared
    /// pointer is taken); then another thread transfers. Returns an external request of `u`'s
    /// engine, completed with the memory bytes moved, or with the error's class.
    ///
    /// Independent accesses go to the process's I/O worker pool (`worker::submit`). The
    /// `collective` forms run the same two-phase I/O as the blocking ones, on a helper thread of
    /// this rank and file (`File::nbc_jobs`) that drives the engine while the caller goes on:
    /// on the file's second communicator (`File::nbc`), one after another in call order, which
    /// is the same on every rank (MPI 4.1 section 14.4.1), so their messages pair up and never
    /// meet those of blocking collectives on the file.
    ///
    /// # Safety
    /// `buf` must hold (write) or have room for (read) `count` elements of `dt`, and stay so
    /// until the request completes (the standard's rule for nonblocking buffers).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn start(self: &Arc<Self>, u: &'static Universe, write: bool, at: At, buf: *mut u8, count: usize, dt: Arc<TypeRepr>, collective: bool) -> MpiResult<crate::p2p::ReqId> {
        self.check(write, at)?;
        let view = self.view();
        let fbytes = view.datarep.file_size(&dt, count)?;
        let es = view.etype_size();
        let pos = match at {
            At::Offset(o) => o,
            At::Individual => {
                let mut p = self.pointer();
                let o = *p;
                *p += fbytes / es;
                o
            }
            At::Shared => self.shared.fetch_add(fbytes / es),
        };
        pos.checked_mul(es).ok_or_else(|| err(ErrorClass::Arg, format!("offset {pos} is too large")))?;
        let nbc = if collective { Some(self.nbc.get().ok_or_else(|| err(ErrorClass::Intern, "the file has no communicator for nonblocking collectives"))?.0.clone()) } else { None };
        let (f, addr, ctx) = (self.clone(), buf as usize, crate::runtime::job::context());
        let id = u.engine.new_external();
        self.outstanding.begin();
        let job = move || {
            // The rank's context: the helper drives the rank's engine, and a registered datarep's
            // conversion functions may call MPI.
            let mine = crate::runtime::job::context();
            crate::runtime::job::set_context(ctx);
            let m = Mem { buf: addr as *mut u8, count, dt: &dt };
            let t = Transfer { u, file: &f, collective, comm: nbc.as_deref().unwrap_or(&f.comm) };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: the caller keeps the buffer valid until the request completes (contract).
                unsafe { move_data(&t, &view, write, pos, m, fbytes) }
            }));
            f.outstanding.end();
            let st = match r {
                Ok(Ok((_, mem))) => crate::p2p::Status { bytes: mem, ..crate::p2p::Status::empty() },
                Ok(Err(e)) => crate::p2p::Status { error: Some(e.class), ..crate::p2p::Status::empty() },
                Err(_) => crate::p2p::Status { error: Some(ErrorClass::Intern), ..crate::p2p::Status::empty() },
            };
            u.engine.complete_external_status(id, st);
            crate::runtime::job::set_context(mine);
        };
        if collective {
            // Another thread of this rank now waits in the engine: completions must wake it.
            u.engine.set_threaded(true);
            self.nbc_jobs.submit(job);
        } else {
            super::worker::submit(job);
        }
        Ok(id)
    }

    /// MPI_File_read/write_ordered (collective): the ranks access consecutive pieces at the
    /// shared file pointer in rank order (an exclusive scan of their sizes).
    ///
    /// # Safety
    /// As `access`.
    pub unsafe fn ordered(&self, u: &Universe, write: bool, m: Mem) -> MpiResult<u64> {
        let local = self.check(write, At::Shared);
        let view = self.view();
        let es = view.etype_size();
        let fbytes = match &local {
            Ok(()) => view.datarep.file_size(m.dt, m.count)?,
            Err(_) => 0,
        };
        let all = allgather_words(u, &self.comm, [fbytes / es])?;
        let me = self.comm.rank;
        let before: u64 = all[..me].iter().map(|w| w[0]).sum();
        let total: u64 = all.iter().map(|w| w[0]).sum();
        let mut base = [0u64];
        if me == 0 {
            base[0] = self.shared.fetch_add(total);
        }
        // SAFETY: 8 writable bytes on every rank.
        unsafe { crate::coll::bcast::bcast(&Coll::next(u, &self.comm), base.as_mut_ptr() as *mut u8, 8, 0)? };
        local?;
        let t = Transfer { u, file: self, collective: true, comm: &self.comm };
        // SAFETY: per this function's contract.
        unsafe { move_data(&t, &view, write, base[0] + before, m, fbytes) }.map(|r| r.1)
    }

    /// MPI_File_seek of the individual pointer.
    pub fn seek(&self, off: i64, whence: Whence) -> MpiResult {
        if self.amode.sequential {
            return Err(err(ErrorClass::UnsupportedOperation, "MPI_File_seek on a file opened MPI_MODE_SEQUENTIAL"));
        }
        let mut p = self.pointer();
        *p = self.new_position(*p, off, whence)?;
        Ok(())
    }

    /// MPI_File_seek_shared (collective: the same offset and whence on every rank).
    pub fn seek_shared(&self, u: &Universe, off: i64, whence: Whence) -> MpiResult {
        self.same_everywhere(u, (off as u64).rotate_left(2) ^ whence as u64, "offset and whence")?;
        let r = if self.comm.rank == 0 { self.new_position(self.shared.pointer(), off, whence).map(|p| self.shared.set_pointer(p)) } else { Ok(()) };
        self.agree(u, r)
    }

    fn new_position(&self, cur: u64, off: i64, whence: Whence) -> MpiResult<u64> {
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => cur as i128,
            Whence::End => self.view().position_of(self.size()?) as i128,
        };
        let p = base + off as i128;
        if p < 0 {
            return Err(err(ErrorClass::Arg, format!("the seek would move the file pointer to {p}, before the start of the view")));
        }
        Ok(p as u64)
    }

    /// MPI_File_set_view (collective): installs the view and resets both file pointers. `disp`
    /// None is MPI_DISPLACEMENT_CURRENT (sequential files: where the shared pointer is).
    pub fn set_view(&self, u: &Universe, disp: Option<u64>, etype: Arc<TypeRepr>, filetype: Arc<TypeRepr>, datarep: Datarep) -> MpiResult {
        let v = (|| {
            let disp = match disp {
                Some(d) => d,
                None if self.amode.sequential => self.view().byte_offset(self.shared.pointer()),
                None => return Err(err(ErrorClass::Arg, "MPI_DISPLACEMENT_CURRENT is only valid for files opened MPI_MODE_SEQUENTIAL")),
            };
            View::new(disp, etype, filetype, datarep)
        })();
        let es = v.as_ref().map_or(0, |v| v.datarep.file_size(&v.etype, 1).unwrap_or(0));
        // The etype's file extent must agree (a wrong view on one rank fails everywhere).
        let all = allgather_words(u, &self.comm, [es])?;
        let v = v?;
        if all.iter().any(|w| w[0] != es) {
            return Err(err(ErrorClass::NotSame, "the ranks of the file passed etypes of different sizes, or some rank's view is invalid"));
        }
        *self.view.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(v);
        *self.pointer() = 0;
        if self.comm.rank == 0 {
            self.shared.set_pointer(0);
        }
        self.barrier(u)
    }
}

/// Moves `m` to or from the view's data at etype `pos` (`fbytes` file bytes); returns (file
/// bytes, memory bytes) transferred.
///
/// # Safety
/// As `File::access`.
unsafe fn move_data(t: &Transfer, view: &View, write: bool, pos: u64, m: Mem, fbytes: u64) -> MpiResult<(u64, u64)> {
    let start = pos.checked_mul(view.etype_size()).ok_or_else(|| err(ErrorClass::Arg, format!("offset {pos} is too large")))?;
    let runs = view.runs(start, fbytes);
    let l = &m.dt.layout;
    // Contiguous memory in the native representation needs no copy.
    let direct = view.datarep.is_native().then(|| l.contiguous_span(m.count)).flatten();
    if write {
        match direct {
            Some((off, len)) => {
                // SAFETY: the buffer's `count` elements are these contiguous bytes (contract).
                let data = unsafe { std::slice::from_raw_parts(m.buf.wrapping_offset(off as isize), len) };
                t.write(&runs, data)?;
            }
            None => {
                // SAFETY: per this function's contract.
                let data = unsafe { view.datarep.to_file(m.buf, m.dt, m.count, pos)? };
                t.write(&runs, &data)?;
            }
        }
        return Ok((fbytes, (l.size * m.count) as u64));
    }
    match direct {
        Some((off, len)) => {
            // SAFETY: as for writes, with room for the elements.
            let data = unsafe { std::slice::from_raw_parts_mut(m.buf.wrapping_offset(off as isize), len) };
            let got = t.read(&runs, data)?;
            Ok((got as u64, got as u64))
        }
        None => {
            let mut data = vec![0u8; fbytes as usize];
            let got = t.read(&runs, &mut data)?;
            // SAFETY: per this function's contract.
            let mem = unsafe { view.datarep.from_file(m.buf, m.dt, m.count, &mut data[..got], pos)? };
            Ok((got as u64, mem as u64))
        }
    }
}
