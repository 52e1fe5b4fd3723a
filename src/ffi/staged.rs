//! Staging buffers of nonblocking, persistent and matched-probe operations on non-contiguous
//! datatypes.
//!
//! The engine moves contiguous bytes. A non-contiguous send is packed into a staging buffer that
//! must outlive the engine's use of it; a non-contiguous receive lands in a staging buffer that is
//! unpacked into the user's buffer when the request completes. This table (one per rank: it lives
//! in the `Universe`) owns those buffers, keyed by engine request:
//!
//! - one-shot requests by (id, generation): in MPI_THREAD_MULTIPLE another thread may reuse an id
//!   as soon as the engine releases it, and the generation tells the two requests apart;
//! - persistent requests by id (stable until MPI_Request_free): a send is packed at every MPI_Start,
//!   under the engine lock once the request is known to be inactive (`Engine::start_with`); a
//!   receive is unpacked at every completion;
//! - orphans: staging of requests freed with MPI_Request_free while the engine still runs them.
//!   The engine keeps the request (with the same generation) until the operation is over, so an
//!   orphan is dropped at the first sweep that finds its (id, generation) gone. The data of such a
//!   freed receive is not unpacked (nobody can tell when it would be; MPI 4.1 section 3.7.3
//!   discourages freeing active receives).
//!
//! `complete` is the one place where completion work runs; every completion path of
//! `ffi::request` calls it with the request as resolved before the wait. Each receive is unpacked
//! exactly once per activation (`unpacked`), also when MPI_Request_get_status saw it first.
//! Lock order: this table, then the engine.
use super::check::ReqRef;
use crate::datatype::TypeRepr;
use crate::error::MpiResult;
use crate::p2p::{Engine, ReqId, Status};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The user's typed buffer a staged receive unpacks into (or a persistent send packs from).
pub struct Target {
    pub t: Arc<TypeRepr>,
    pub user: *mut u8,
    pub count: usize,
}

impl Target {
    /// Unpacks the first `bytes` bytes of `stage` (clamped to its length: a truncated receive
    /// unpacks what it received).
    ///
    /// # Safety
    /// `user` must hold `count` elements of `t`, writable, disjoint from `stage`.
    unsafe fn unpack(&self, stage: &mut [u8], bytes: u64) {
        let n = (bytes.min(stage.len() as u64)) as usize;
        // SAFETY: per this function's contract; only the received bytes are copied.
        unsafe { crate::datatype::copy(&self.t.layout, self.user, self.count, stage.as_mut_ptr(), n, 0, false) };
    }

    /// Packs the user's elements into `stage` (of `count * size` bytes).
    ///
    /// # Safety
    /// `user` must hold `count` elements of `t`, readable, disjoint from `stage`.
    pub unsafe fn pack(&self, stage: &mut [u8]) {
        // SAFETY: per this function's contract.
        unsafe { crate::datatype::copy(&self.t.layout, self.user, self.count, stage.as_mut_ptr(), stage.len(), 0, true) };
    }
}

/// Staging of a one-shot request. Buffers are `Vec`s that are never resized, so the address the
/// engine was given stays valid while the entry lives.
enum Entry {
    Send(Vec<u8>),
    Recv { stage: Vec<u8>, to: Target, unpacked: bool },
}

impl Entry {
    fn into_stage(self) -> Vec<u8> {
        match self {
            Entry::Send(v) | Entry::Recv { stage: v, .. } => v,
        }
    }
}

struct Persistent {
    stage: Vec<u8>,
    to: Target,
    send: bool,
    /// The current activation's data was unpacked (or there is none): set at creation and after
    /// each completion, cleared by MPI_Start.
    unpacked: bool,
}

#[derive(Default)]
struct Inner {
    one_shot: HashMap<(ReqId, u32), Entry>,
    persistent: HashMap<ReqId, Persistent>,
    orphans: Vec<(ReqId, u32, Vec<u8>)>,
}

// SAFETY: the raw pointers are user buffers that MPI forbids the application to touch (or free)
// while the operation is pending; they are only dereferenced under the table's mutex by the rank's
// own calls.
unsafe impl Send for Inner {}

/// The staging buffers of one rank (see the module documentation).
#[derive(Default)]
pub struct StagedTable {
    /// Number of entries of all kinds: completions skip the mutex while it is zero (the common case).
    live: AtomicUsize,
    inner: Mutex<Inner>,
}

impl StagedTable {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn recount(&self, g: &Inner) {
        self.live.store(g.one_shot.len() + g.persistent.len() + g.orphans.len(), Ordering::SeqCst);
    }

    fn empty(&self) -> bool {
        self.live.load(Ordering::SeqCst) == 0
    }

    /// Drops the orphans whose engine request is gone (the engine no longer reads or writes them).
    fn sweep(g: &mut Inner, engine: &Engine) {
        if !g.orphans.is_empty() {
            g.orphans.retain(|(id, gen, _)| engine.generation(*id) == Some(*gen));
        }
    }

    fn insert(&self, engine: &Engine, id: ReqId, e: Entry) {
        let gen = engine.generation(id).expect("a request just created exists");
        let mut g = self.lock();
        Self::sweep(&mut g, engine);
        g.one_shot.insert((id, gen), e);
        self.recount(&g);
    }

    /// Keeps the packed bytes of one-shot send `id` until it completes.
    pub fn add_send(&self, engine: &Engine, id: ReqId, stage: Vec<u8>) {
        self.insert(engine, id, Entry::Send(stage));
    }

    /// Keeps the staging buffer of one-shot receive `id`, to unpack into `to` at completion.
    pub fn add_recv(&self, engine: &Engine, id: ReqId, stage: Vec<u8>, to: Target) {
        self.insert(engine, id, Entry::Recv { stage, to, unpacked: false });
    }

    /// Registers persistent request `id` whose operation uses `stage`: a send packs `to` into it
    /// at each start, a receive unpacks it into `to` at each completion.
    pub fn add_persistent(&self, engine: &Engine, id: ReqId, stage: Vec<u8>, to: Target, send: bool) {
        let mut g = self.lock();
        Self::sweep(&mut g, engine);
        g.persistent.insert(id, Persistent { stage, to, send, unpacked: true });
        self.recount(&g);
    }

    /// The completion work of request `r` whose status is `st`: unpacks a staged receive (unless
    /// cancelled or already unpacked) and, when `finish` (the request is released or made inactive,
    /// not just peeked at by MPI_Request_get_status), drops a one-shot request's staging.
    ///
    /// # Safety
    /// The user buffers registered for `r` must still be valid (MPI requires it until completion).
    pub unsafe fn complete(&self, r: ReqRef, st: &Status, finish: bool) {
        let ReqRef::Engine(id, persistent, gen) = r else { return };
        if self.empty() {
            return;
        }
        let mut g = self.lock();
        if persistent {
            if let Some(p) = g.persistent.get_mut(&id) {
                if !p.send && !p.unpacked && !st.cancelled {
                    // SAFETY: the user buffer given to MPI_Recv_init, valid while the request is.
                    unsafe { p.to.unpack(&mut p.stage, st.bytes) };
                }
                p.unpacked = true;
            }
            return;
        }
        if finish {
            let e = g.one_shot.remove(&(id, gen));
            self.recount(&g);
            drop(g);
            if let Some(Entry::Recv { mut stage, to, unpacked }) = e {
                if !unpacked && !st.cancelled {
                    // SAFETY: the user buffer of the receive, valid until its completion (now).
                    unsafe { to.unpack(&mut stage, st.bytes) };
                }
            }
        } else if let Some(Entry::Recv { stage, to, unpacked }) = g.one_shot.get_mut(&(id, gen)) {
            if !*unpacked && !st.cancelled {
                // SAFETY: as above; the request is complete, so the engine no longer writes `stage`.
                unsafe { to.unpack(stage, st.bytes) };
            }
            *unpacked = true;
        }
    }

    /// MPI_Start (and each request of MPI_Startall): packs a staged persistent send first.
    pub fn start(&self, engine: &Engine, id: ReqId) -> MpiResult {
        if self.empty() {
            return engine.start(id);
        }
        let mut g = self.lock();
        let Some(p) = g.persistent.get_mut(&id) else {
            drop(g);
            return engine.start(id);
        };
        engine.start_with(id, &mut || {
            if p.send {
                // SAFETY: the user buffer given to MPI_Send_init; the request is inactive (checked by
                // the engine before calling this), so the engine is not reading `stage`.
                unsafe { p.to.pack(&mut p.stage) };
            } else {
                p.unpacked = false;
            }
        })
    }

    /// MPI_Request_free of `r`. A completed staged receive is unpacked first; the staging of an
    /// operation the engine still runs becomes an orphan (see the module documentation).
    pub fn free(&self, engine: &Engine, r: ReqRef) {
        let ReqRef::Engine(id, persistent, gen) = r else { return };
        if self.empty() {
            engine.free(id);
            return;
        }
        let mut g = self.lock();
        let stage = if persistent {
            g.persistent.remove(&id).map(|p| p.stage)
        } else {
            match g.one_shot.remove(&(id, gen)) {
                Some(Entry::Recv { mut stage, to, unpacked }) => {
                    if let Some(st) = engine.peek_status(id) {
                        if !unpacked && !st.cancelled {
                            // SAFETY: the receive is complete; its user buffer is still valid.
                            unsafe { to.unpack(&mut stage, st.bytes) };
                        }
                    }
                    Some(stage)
                }
                e => e.map(Entry::into_stage),
            }
        };
        engine.free(id);
        if let Some(stage) = stage {
            if engine.generation(id) == Some(gen) {
                g.orphans.push((id, gen, stage));
            }
        }
        Self::sweep(&mut g, engine);
        self.recount(&g);
    }
}
