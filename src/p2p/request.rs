//! Requests as the engine keeps them: a slab of entries indexed by `ReqId`.
use super::buffer::Buf;
use super::engine::Remote;
use super::Status;

/// Index of a request in the engine's table. The C handle is derived from it in `ffi`.
pub type ReqId = u32;

/// How a send completes (MPI 4.1 section 3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    /// Completes only once the receiver has matched it.
    Sync,
    /// The receiver promises a posted receive; handled like Standard.
    Ready,
    /// Copied into the attached buffer; completes locally.
    Buffered,
}

/// Arguments of a send or receive, kept by persistent requests to start it again. `bytes` and `cap`
/// are the buffer's packed size (a typed buffer's `count * size`).
#[derive(Clone, Debug)]
pub enum OpArgs {
    Send { buf: Buf, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode },
    /// `src` None is MPI_ANY_SOURCE; `tag` -1 is MPI_ANY_TAG.
    Recv { buf: Buf, cap: usize, src: Option<usize>, tag: i32, ctx: u32 },
    /// A persistent operation with MPI_PROC_NULL: completes at once when started.
    ProcNull,
}

/// Progress of a receive whose data arrives in fragments (rendezvous without single copy).
#[derive(Clone, Debug)]
pub struct Streaming {
    pub received: u64,
    pub total: u64,
    /// Split copy: (sender rank, its request id on the wire, its buffer as the Rts described it).
    /// The Fin that releases the sender's buffer goes out once the sender's SplitDone arrives.
    /// Boxed: only large messages split, and every request carries this field.
    pub split: Option<Box<(usize, u64, Remote)>>,
}

#[derive(Debug)]
pub struct Req {
    /// Bumped each time the entry is reused or restarted, so stale ids in late messages are caught.
    pub gen: u32,
    /// The operation now in flight (or last run, for an inactive persistent request).
    pub op: Option<OpArgs>,
    /// The operation finished; `status` is final.
    pub done: bool,
    /// Persistent requests are inactive until MPI_Start and after completion is reported.
    pub persistent: bool,
    pub active: bool,
    /// MPI_Request_free was called while the operation was still running: release on completion.
    pub user_freed: bool,
    pub status: Status,
    /// A receive that has been matched (no longer cancellable).
    pub matched: bool,
    pub streaming: Option<Streaming>,
    /// The transport is moving an off-node payload into the receive buffer (`Transport::pull`):
    /// the receive completes only when it hands back the Pulled header, even if it fails
    /// earlier (the buffer is the network's until then).
    pub pulling: bool,
    /// Where a typed receive's off-node payload is pulled to, until `pulled` unpacks it.
    pub bounce: Option<Box<[u8]>>,
    /// Offset of the buffered-send block to release when this internal send completes.
    pub bsend_block: Option<(super::bsend::Scope, usize)>,
}

impl Req {
    #[inline]
    pub fn new(gen: u32, op: Option<OpArgs>) -> Req {
        Req { gen, op, done: false, persistent: false, active: true, user_freed: false, status: Status::empty(), matched: false, streaming: None, pulling: false, bounce: None, bsend_block: None }
    }
}

/// A slab with a free list; ids are stable for the life of an entry.
pub struct Slab<T> {
    entries: Vec<Option<T>>,
    free: Vec<u32>,
    gens: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { entries: Vec::new(), free: Vec::new(), gens: Vec::new() }
    }
}

impl<T> Slab<T> {
    #[inline]
    pub fn insert_with(&mut self, f: impl FnOnce(u32) -> T) -> u32 {
        if let Some(i) = self.free.pop() {
            let gen = self.gens[i as usize].wrapping_add(1);
            self.gens[i as usize] = gen;
            // A free entry is None: filling it this way (rather than assigning over it) drops
            // nothing, so the entry is built in place instead of on the stack and copied.
            self.entries[i as usize].get_or_insert_with(|| f(gen));
            i
        } else {
            self.entries.push(Some(f(0)));
            self.gens.push(0);
            (self.entries.len() - 1) as u32
        }
    }
    pub fn get(&self, i: u32) -> Option<&T> {
        self.entries.get(i as usize).and_then(|e| e.as_ref())
    }
    pub fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.entries.get_mut(i as usize).and_then(|e| e.as_mut())
    }
    pub fn remove(&mut self, i: u32) -> Option<T> {
        let e = self.entries.get_mut(i as usize)?.take();
        if e.is_some() {
            self.free.push(i);
        }
        e
    }
    /// Drops live entry `i` where it lies (no move out, unlike `remove`: entries are large and
    /// this is on every request's completion path).
    #[inline]
    pub fn discard(&mut self, i: u32) {
        if let Some(e) = self.entries.get_mut(i as usize) {
            if e.is_some() {
                *e = None;
                self.free.push(i);
            }
        }
    }
    /// Advances and returns the generation of live entry `i` (for a restarted persistent request).
    pub fn bump_gen(&mut self, i: u32) -> u32 {
        let g = &mut self.gens[i as usize];
        *g = g.wrapping_add(1);
        *g
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().flatten()
    }

    /// Ids of the live entries.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().enumerate().filter(|(_, e)| e.is_some()).map(|(i, _)| i as u32)
    }

    pub fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
