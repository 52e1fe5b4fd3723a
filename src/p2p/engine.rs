//! The point-to-point engine of one rank: matching, protocols, progress.
//!
//! The receiving rank owns all matching (`docs/design/engine.md` 6.4): senders only push slots into the
//! per-pair channels; the receiver drains them in progress, matches against its posted receives
//! (in post order) or files them as unexpected (in arrival order). Channels are FIFO per pair, so
//! MPI's non-overtaking rule holds by construction.
//!
//! Protocols, chosen by size:
//! - eager (payload fits one slot): data travels in the slot; a synchronous send also asks for a
//!   `SyncAck` once matched;
//! - rendezvous: the sender pushes an `Rts` with its buffer address; the matching receiver copies
//!   the data straight from the sender's memory with process_vm_readv (single copy) and answers
//!   `Fin`. If the kernel refuses (ptrace policy), the receiver answers `Cts` and the sender streams
//!   `Data` fragments through the channel instead.
//!
//! Buffers are contiguous bytes or typed (`buffer::Buf`: elements of a derived datatype). A typed
//! buffer is never packed as a whole: eager payloads and streamed fragments are packed straight
//! into the slot and unpacked straight out of it, and a rendezvous copies between the two layouts
//! block by block (`rendezvous.rs`).
//!
//! All state of a rank sits behind one mutex, so MPI_THREAD_MULTIPLE is safe; waiting threads release
//! it and sleep on the rank's doorbell (runtime::wait).
use super::bsend::{BsendPool, Scope};
use super::buffer::Buf;
use super::request::{OpArgs, Req, ReqId, SendMode, Slab, Streaming};
use super::stackvec::StackVec;
use super::Status;
use crate::error::{err, MpiResult, ErrorClass};
use crate::runtime::segment::Segment;
use crate::runtime::wait::WaitPolicy;
use crate::transport::nodes::Nodes;
use crate::transport::shm::Shm;
use crate::transport::{Locality, Transport};
use crate::transport::packet::{Kind, SlotHeader, FLAG_BLOCKING, FLAG_FAILED, FLAG_SHORT_PIECES, FLAG_SYNC};
use std::collections::VecDeque;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

mod failure;
mod rendezvous;
mod stale;
pub use failure::{is_ulfm_tag, status_result as failure_result};
pub use rendezvous::Remote;

/// Index of a matched-probe message (MPI_Message) in the engine's table.
pub type MsgId = u32;

/// A message that arrived before a matching receive was posted.
struct Unexpected {
    src: usize,
    tag: i32,
    ctx: u32,
    total: u64,
    body: Body,
}

enum Body {
    Eager { data: Vec<u8>, sync_sreq: Option<u64> },
    Rts { sreq: u64, remote: Remote, flags: u32 },
}

/// Something waiting for room in the channel to a peer, in send order.
enum Out {
    /// A whole message from `data` (the user's buffer or a bsend block), packed straight into the
    /// slot; `req` completes when pushed unless the send is synchronous.
    Eager { hdr: SlotHeader, data: Buf, req: Option<ReqId> },
    /// A control slot without payload (Rts, Cts, Fin, SyncAck).
    Ctl { hdr: SlotHeader },
    /// A message being streamed after a Cts; `req` completes after the last fragment.
    Stream { req: ReqId, rreq: u64, data: Buf, total: u64, offset: u64 },
}

struct Inner {
    reqs: Slab<Req>,
    /// Posted receives, in post order.
    posted: VecDeque<ReqId>,
    unexpected: VecDeque<Unexpected>,
    /// Messages taken out of matching by MPI_Mprobe/Improbe.
    messages: Slab<Unexpected>,
    /// Per destination, slots waiting for channel space.
    outq: Vec<VecDeque<Out>>,
    /// Destinations whose outq is non-empty.
    pending_dests: Vec<usize>,
    /// Per destination, whether its channel's producer-waiting flag is set and was found, after
    /// the fence, with the ring still full: every slot the consumer frees from then on rings us,
    /// so a later failed push needs neither the flag's SeqCst store nor the fence again. Cleared
    /// wherever the flag is.
    room_armed: Vec<bool>,
    /// The attached buffered-send buffers (process, communicators, sessions).
    bsend: std::collections::HashMap<Scope, BsendPool>,
    /// Communicators made from a session's groups: their context id and the session's index,
    /// whose buffer their buffered sends use when they have none of their own.
    ctx_session: std::collections::HashMap<u32, usize>,
    /// MPI_*_iflush requests waiting for a buffer to empty.
    flush_waiters: Vec<(Scope, ReqId)>,
    /// The send being started is a blocking one (FLAG_BLOCKING on its Rts); reset by post_send.
    blocking_next: bool,
    /// process_vm_readv works here (cleared at the first refusal, or by OXMPI_CMA=0).
    cma: bool,
    /// Failure survival (`failure.rs`): world ranks this rank has noticed failed, whether any has,
    /// the launcher's failure count when last looked at, and the revoked context pairs (even id).
    dead: Vec<bool>,
    any_dead: bool,
    failures_seen: u32,
    revoked: std::collections::HashSet<u32>,
    /// Per context pair, the generations freed here (`stale.rs`).
    floors: super::incarnation::Floors,
}

// SAFETY: the raw pointers in Inner are user buffers the MPI standard forbids the user to touch while
// the operation is pending; they are only dereferenced under the engine mutex.
unsafe impl Send for Inner {}

/// The engine of one rank over transport `T` (shared memory unless said otherwise).
pub struct Engine<T: Transport = Nodes> {
    /// How packets and one-sided copies reach the peers (`crate::transport`).
    t: T,
    me: usize,
    n: usize,
    /// A rank failed or a communicator was revoked (set before `Inner::any_dead` / `revoked`
    /// change, under the lock): until then `collective_refusal` needs no lock.
    faults: std::sync::atomic::AtomicBool,
    policy: WaitPolicy,
    inner: Mutex<Inner>,
    /// Threads of this rank inside `wait_until`; when non-zero, completions ring our own doorbell so
    /// a thread sleeping on another thread's behalf re-checks.
    waiting_threads: AtomicU32,
    /// MPI_THREAD_MULTIPLE was granted (see `set_threaded`).
    threaded: std::sync::atomic::AtomicBool,
    /// Large messages to a blocked sender are copied half by each side (see `set_split_copies`).
    split_copies: std::sync::atomic::AtomicBool,
    /// Largest message sent eagerly to a peer of this node: a slot's payload, or less where the
    /// rendezvous moves the bytes once (`set_local_peers`).
    eager_max: std::sync::atomic::AtomicUsize,
    /// Bounce buffer of rendezvous reads of a sender's small typed pieces (`rendezvous.rs`).
    bounce: Mutex<Vec<u8>>,
    /// Whether world rank `w` is a failed, unacknowledged member of the communicator of context
    /// `ctx` (set once the universe exists; decides MPI_ANY_SOURCE receives, see `failure.rs`).
    unacked: OnceLock<Box<failure::UnackedFn>>,
    /// Counters for MPI_T performance variables.
    pub gauges: super::gauges::Gauges,
    /// Progress hooks of higher layers (`Progress`), run by every progress loop while
    /// `hook_work` is non-zero.
    hooks: std::sync::RwLock<Vec<Hook<T>>>,
    /// How many operations the hooks have in flight (`hook_busy`): zero keeps the hooks off the
    /// point-to-point paths (one relaxed load).
    hook_work: AtomicU32,
}

/// A registered hook: the object as `Any` (found again by type in `hook`) and as `Progress`.
type Hook<T> = (Arc<dyn std::any::Any + Send + Sync>, Arc<dyn Progress<T>>);

/// Work that a layer above the engine has in flight and that advances as messages arrive
/// (collective schedules): every progress loop of the engine (wait, test, probe and the
/// blocking calls built on them) calls `progress` while the owner declares work with
/// `Engine::hook_busy`, so the work moves whenever the rank is inside MPI, with no thread.
///
/// `progress` runs without the engine lock held and may start and test operations; it must not
/// wait. It returns whether anything moved (a round ended, an operation completed): the waiting
/// loop then looks again at once instead of sleeping, since the step may have completed what it
/// waits for or sent what a peer needs.
pub trait Progress<T: Transport = Nodes>: Send + Sync {
    fn progress(&self, e: &Engine<T>) -> bool;
}

/// Messages from this size up are copied half by the receiver and half by a blocked sender.
const SPLIT_MIN: usize = 64 * 1024;

fn req_wire(id: ReqId, gen: u32) -> u64 {
    ((gen as u64) << 32) | id as u64
}

fn wire_req(w: u64) -> (ReqId, u32) {
    (w as u32, (w >> 32) as u32)
}

/// Removes posted receive `i`: mostly the oldest, which `pop_front` takes without the general
/// `remove`'s shifting arithmetic.
#[inline]
fn take_posted(posted: &mut VecDeque<ReqId>, i: usize) -> ReqId {
    if i == 0 { posted.pop_front() } else { posted.remove(i) }.expect("a posted receive at index i")
}

/// The send request an eager packet completes once it is in the channel: all but a synchronous
/// send's, which completes on the receiver's SyncAck.
fn completed_by_push(out: &Out) -> Option<ReqId> {
    match out {
        Out::Eager { hdr, req, .. } if hdr.flags & FLAG_SYNC == 0 => *req,
        _ => None,
    }
}

fn tag_matches(want: i32, got: i32) -> bool {
    want == super::ANY_TAG || want == got
}

impl Engine<Nodes> {
    /// The engine of rank `me` of the job of segment `seg`, over shared memory.
    pub fn new(seg: Arc<Segment>, me: usize, policy: WaitPolicy) -> Engine<Nodes> {
        Engine::over(Nodes::local(Shm::new(seg, me)), me, policy)
    }

    /// Declares that all peers share this address space (threads mode): the receiver of a large
    /// message copies it straight from the sender's buffer with memcpy (TMPI section 4), no syscall.
    pub fn set_local_peers(&self, local: bool) {
        self.t.set_same_process(local);
        // Threads of one process: the rendezvous copies once, straight between the buffers, and
        // beats the eager path's two copies from about 8 KiB (NetPIPE, 8192 bytes: 1.66-1.75 us
        // by rendezvous, 1.79-1.93 us eagerly); processes keep eager up to the slot's payload.
        let slot = <Nodes as Transport>::MAX_PAYLOAD;
        let max = if local { slot.min(SAME_PROCESS_EAGER_MAX) } else { slot };
        self.eager_max.store(max, Ordering::Relaxed);
    }
}

/// Messages to a peer on another node from this size on go by an Rts, their payload moved
/// without a copy (UCX's rendezvous from the sender's buffer into the receiver's); smaller ones
/// go whole in one packet, copied on both sides but sent at once, without waiting for the match.
/// Measured (2 namespaces over UCX/TCP, 2 cores, 2026-11, MB/s; eager / Rts): windowed bandwidth
/// (16 in flight) 32 KiB 1978-2022 / 1891-2043, 48 KiB 2519-2555 / 2478-2626, 64 KiB 2194-2202 /
/// 2345-2414, 96 KiB 2698-2739 / 3070-3180; ping-pong 32 KiB 1532-1540 / 1191-1222 (the Rts's
/// extra round trips), 64 KiB 1705-1739 / 1625-1638. Hence 64 KiB: the Rts wins the windowed
/// transfers from there on and costs a ping-pong only 5%.
const OFF_NODE_RTS_MIN: usize = 64 << 10;

/// `eager_max` when the peers are threads of this process (see `Engine::set_local_peers`).
const SAME_PROCESS_EAGER_MAX: usize = 8192 - std::mem::size_of::<SlotHeader>();

impl<X: Transport> Engine<X> {
    /// The engine of rank `me` over transport `t`.
    pub fn over(t: X, me: usize, policy: WaitPolicy) -> Engine<X> {
        let n = t.nranks();
        let cma = std::env::var("OXMPI_CMA").map(|v| v != "0").unwrap_or(true);
        Engine {
            t,
            me,
            n,
            faults: std::sync::atomic::AtomicBool::new(false),
            policy,
            inner: Mutex::new(Inner {
                reqs: Slab::default(),
                posted: VecDeque::new(),
                unexpected: VecDeque::new(),
                messages: Slab::default(),
                outq: (0..n).map(|_| VecDeque::new()).collect(),
                pending_dests: Vec::new(),
                room_armed: vec![false; n],
                bsend: Default::default(),
                ctx_session: Default::default(),
                flush_waiters: Vec::new(),
                blocking_next: false,
                cma,
                dead: vec![false; n],
                any_dead: false,
                failures_seen: 0,
                revoked: Default::default(),
                floors: Default::default(),
            }),
            waiting_threads: AtomicU32::new(0),
            threaded: std::sync::atomic::AtomicBool::new(true),
            split_copies: std::sync::atomic::AtomicBool::new(false),
            eager_max: std::sync::atomic::AtomicUsize::new(X::MAX_PAYLOAD),
            bounce: Mutex::new(Vec::new()),
            unacked: OnceLock::new(),
            gauges: Default::default(),
            hooks: Default::default(),
            hook_work: AtomicU32::new(0),
        }
    }

    /// Uses the streamed rendezvous for every large message, as when the kernel refuses
    /// process_vm_readv (what OXMPI_CMA=0 selects at start-up).
    pub fn disable_single_copy(&self) {
        self.lock().cma = false;
    }

    /// The transport under this engine, for the one-sided layer's reads and writes of a peer's
    /// memory (`crate::osc::access`).
    pub fn transport(&self) -> &X {
        &self.t
    }

    pub fn rank(&self) -> usize {
        self.me
    }
    pub fn size(&self) -> usize {
        self.n
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    // ------------------------------------------------------------------ starting operations

    /// Starts a send of buffer `buf`, `bytes` packed bytes, to world rank `dest`.
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn isend(&self, buf: Buf, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> MpiResult<ReqId> {
        self.isend_flagged(buf, bytes, dest, tag, ctx, mode, false)
    }

    /// A send whose caller waits for it right away (MPI_Send and friends): large messages may then
    /// be copied half by each side.
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn send_blocking(&self, buf: Buf, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> MpiResult {
        let id = self.isend_flagged(buf, bytes, dest, tag, ctx, mode, true)?;
        failure::status_result(&self.wait(id))
    }

    #[allow(clippy::too_many_arguments)]
    fn isend_flagged(&self, buf: Buf, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode, blocking: bool) -> MpiResult<ReqId> {
        let mut g = self.lock();
        let id = g.reqs.insert_with(|gen| Req::new(gen, None));
        g.blocking_next = blocking;
        if let Err(e) = self.start_send(&mut g, id, OpArgs::Send { buf, bytes, dest, tag, ctx, mode }) {
            // Nothing was queued (start_send only fails before enqueueing): drop the entry, which
            // the caller never learns about and so could never free.
            g.reqs.discard(id);
            return Err(e);
        }
        Ok(id)
    }

    /// Starts a receive into buffer `buf` of `cap` packed bytes from world rank `src` (None: any source).
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn irecv(&self, buf: Buf, cap: usize, src: Option<usize>, tag: i32, ctx: u32) -> ReqId {
        let mut g = self.lock();
        // Built with its arguments in place: no second lookup and move of them in `start_recv`.
        let id = g.reqs.insert_with(|gen| Req::new(gen, Some(OpArgs::Recv { buf, cap, src, tag, ctx })));
        self.start_recv(&mut g, id, src, tag, ctx);
        id
    }

    /// Creates an inactive persistent request.
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn persistent(&self, args: OpArgs) -> ReqId {
        let mut g = self.lock();
        g.reqs.insert_with(|gen| {
            let mut r = Req::new(gen, Some(args));
            r.persistent = true;
            r.active = false;
            r
        })
    }

    /// MPI_Start on a persistent request. Errors if it is not persistent or still active.
    pub fn start(&self, id: ReqId) -> MpiResult {
        let mut g = self.lock();
        let r = g.reqs.get_mut(id).ok_or_else(|| err(ErrorClass::Request, "invalid request"))?;
        if !r.persistent {
            return Err(err(ErrorClass::Request, "MPI_Start needs a persistent request (from MPI_Send_init, MPI_Recv_init, ...)"));
        }
        if r.active {
            return Err(err(ErrorClass::Request, "the persistent request is still active; complete it (MPI_Wait/MPI_Test) before starting it again"));
        }
        let args = r.op.clone().expect("persistent request keeps its arguments");
        // The slab's counter, not just the entry's: a later occupant of this slot must never reuse
        // a generation this request already put on the wire.
        let gen = g.reqs.bump_gen(id);
        let r = g.reqs.get_mut(id).unwrap();
        r.gen = gen;
        r.active = true;
        r.done = false;
        r.matched = false;
        r.streaming = None;
        r.status = Status::empty();
        match args {
            OpArgs::Send { .. } => {
                let res = self.start_send(&mut g, id, args);
                if res.is_err() {
                    // The send did not start (e.g. a buffered send with no room, ErrorClass::Buffer) and
                    // nothing was queued: leave the request inactive as it was, or MPI_Wait on it
                    // would block forever and MPI_Start could never be retried.
                    g.reqs.get_mut(id).unwrap().active = false;
                }
                res
            }
            OpArgs::Recv { src, tag, ctx, .. } => {
                self.start_recv(&mut g, id, src, tag, ctx);
                Ok(())
            }
            OpArgs::ProcNull => {
                let r = g.reqs.get_mut(id).unwrap();
                r.status = Status::proc_null();
                r.done = true;
                Ok(())
            }
        }
    }

    fn start_send(&self, g: &mut Inner, id: ReqId, args: OpArgs) -> MpiResult {
        let OpArgs::Send { ref buf, bytes, dest, tag, ctx, mode } = args else { unreachable!() };
        crate::monitoring::record_send(self.me, self.size(), dest, bytes, ctx);
        if mode == SendMode::Buffered {
            // Copy into the attached buffer; an internal request carries the copy while the user's
            // request completes at once.
            // The communicator's buffer, else its session's, else the process's (MPI 4.1 section 3.6.1).
            let scope = if g.bsend.contains_key(&Scope::Comm(ctx)) {
                Scope::Comm(ctx)
            } else {
                match g.ctx_session.get(&ctx) {
                    Some(&s) if g.bsend.contains_key(&Scope::Session(s)) => Scope::Session(s),
                    _ => Scope::Process,
                }
            };
            let pool = g.bsend.get_mut(&scope).ok_or_else(|| {
                err(ErrorClass::Buffer, format!("buffered send of {bytes} bytes but no buffer is attached (call MPI_Buffer_attach or MPI_Comm_attach_buffer first)"))
            })?;
            let (off, p) = pool.alloc(bytes).ok_or_else(|| {
                err(ErrorClass::Buffer, format!("the attached buffer ({} bytes) has no room for {bytes} bytes plus MPI_BSEND_OVERHEAD; attach a larger buffer", pool.size()))
            })?;
            // SAFETY: `p` has room for `bytes` (alloc above); `buf` is the user's send buffer holding
            // `bytes` packed bytes. A typed buffer is packed into the block.
            unsafe { buf.pack(0, p, bytes) };
            let user = g.reqs.get_mut(id).unwrap();
            user.op = Some(args.clone());
            user.status = Status { source: self.me as i32, tag, error: None, bytes: bytes as u64, cancelled: false, context: ctx };
            user.done = true;
            let internal = g.reqs.insert_with(|gen| Req::new(gen, Some(args)));
            let r = g.reqs.get_mut(internal).unwrap();
            r.user_freed = true;
            r.bsend_block = Some((scope, off));
            return self.post_send(g, internal, Buf::Flat(p), bytes, dest, tag, ctx, false);
        }
        let data = buf.clone();
        g.reqs.get_mut(id).unwrap().op = Some(args);
        self.post_send(g, id, data, bytes, dest, tag, ctx, mode == SendMode::Sync)
    }

    #[allow(clippy::too_many_arguments)]
    fn post_send(&self, g: &mut Inner, id: ReqId, data: Buf, bytes: usize, dest: usize, tag: i32, ctx: u32, sync: bool) -> MpiResult {
        let gen = g.reqs.get(id).unwrap().gen;
        let sreq = req_wire(id, gen);
        let mut hdr = SlotHeader { tag, context: ctx, total: bytes as u64, sreq, ..Default::default() };
        if sync {
            hdr.flags |= FLAG_SYNC;
        }
        if std::mem::take(&mut g.blocking_next) {
            hdr.flags |= FLAG_BLOCKING;
        }
        if (g.any_dead || !g.revoked.is_empty()) && self.refuse_send(g, id, dest, tag, ctx) {
            return Ok(());
        }
        {
            let r = g.reqs.get_mut(id).unwrap();
            r.status = Status { source: self.me as i32, tag, error: None, bytes: bytes as u64, cancelled: false, context: ctx };
        }
        // A peer on another node gets a small or typed message whole, in one packet (of any
        // size); a large contiguous one by an Rts that the network transport sends from the
        // user's buffer and the receiver, once matched, pulls straight into its own
        // (`transport::nodes`): no copy on either side, the send done at the Fin.
        let eager = if self.t.locality(dest) == Locality::OtherNode {
            bytes < OFF_NODE_RTS_MIN || !matches!(data, Buf::Flat(_))
        } else {
            bytes <= self.eager_max.load(Ordering::Relaxed)
        };
        self.gauges.sent(eager);
        let out = if eager {
            hdr.kind = Kind::Eager as u32;
            hdr.len = bytes as u64;
            Out::Eager { hdr, data, req: Some(id) }
        } else {
            hdr.kind = Kind::Rts as u32;
            // The request's arguments keep a typed buffer's type alive until the Fin.
            Remote::describe(&data, self.same_process(dest), &mut hdr);
            Out::Ctl { hdr }
        };
        // Nothing queued ahead of it (so order holds): push it straight into the channel, without
        // the queue round trip (push, pending list, pop, retain) that cost a third of a send.
        if g.outq[dest].is_empty() && self.push_whole(dest, &out) {
            if let Some(done) = completed_by_push(&out) {
                self.complete(g, done);
            }
            self.announce(dest);
            return Ok(());
        }
        self.enqueue(g, dest, out);
        self.flush_dest(g, dest);
        Ok(())
    }

    /// Posts receive `id`, whose arguments (`OpArgs::Recv` with `src`, `tag`, `ctx`) it holds.
    fn start_recv(&self, g: &mut Inner, id: ReqId, src: Option<usize>, tag: i32, ctx: u32) {
        if !g.revoked.is_empty() && Self::revoked(g, ctx, tag) {
            self.fail(g, id, ErrorClass::Revoked);
            return;
        }
        // Messages already drained into the unexpected queue arrived before anything still in the
        // channels, so matching them first and then posting keeps MPI's order; slots still in the
        // channels match straight into the user's buffer (no extra copy) when drained.
        let pos = g.unexpected.iter().position(|u| u.ctx == ctx && src.is_none_or(|s| s == u.src) && tag_matches(tag, u.tag));
        if let Some(i) = pos {
            let u = g.unexpected.remove(i).unwrap();
            self.gauges.set_unexpected(g.unexpected.len());
            self.deliver(g, id, u);
            // Send the acknowledgement (SyncAck/Fin/Cts) now: the sender may be blocked on it
            // while this rank computes without calling MPI.
            self.flush_pending(g);
        } else {
            g.posted.push_back(id);
            // Only the named source's channel, not a progress pass over every peer and queue
            // (which cost more than the rest of the post), and only until no posted receive is
            // left (this one matched, and no other waits): the messages behind it would
            // otherwise be copied out as unexpected (an allocation and a copy each) when the
            // receives posted next take them straight from their slots. Any wait or test
            // progresses everything. Replies it queued (SyncAck, Fin, Cts) go out now: the
            // sender may be blocked on them.
            if let Some(s) = src {
                let drained = self.t.poll_from_until(s, |src, hdr, payload| {
                    self.handle_incoming(g, src, hdr, payload);
                    g.posted.is_empty()
                });
                if drained && !g.pending_dests.is_empty() {
                    self.flush_pending(g);
                }
            }
            // A failure is still noticed at post, as the full pass did (one relaxed load).
            let failures = self.t.failure_epoch();
            if failures != g.failures_seen {
                self.note_failures(g, failures);
            }
        }
        if g.any_dead {
            self.refuse_recv(g, id);
        }
    }

    /// Blocking standard/ready send: when nothing is queued for `dest` and the message fits a slot,
    /// pushes it straight into the channel without creating a request. Returns false when the
    /// caller must take the general path (isend + wait).
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn try_send_now(&self, buf: &Buf, bytes: usize, dest: usize, tag: i32, ctx: u32) -> bool {
        if bytes > self.eager_max.load(Ordering::Relaxed) {
            return false;
        }
        let g = self.lock();
        // After a failure or a revocation the general path decides (`failure.rs`).
        if !g.outq[dest].is_empty() || g.any_dead || !g.revoked.is_empty() {
            return false;
        }
        let hdr = SlotHeader { kind: Kind::Eager as u32, tag, context: ctx, len: bytes as u64, total: bytes as u64, ..Default::default() };
        let pushed = match buf {
            // The latency-critical path: contiguous bytes, copied as a slice. A zero-byte send may
            // pass NULL; never build a slice from a null pointer.
            Buf::Flat(p) => {
                let p = *p;
                // SAFETY: `p` holds `bytes` bytes (checked by the caller against count and
                // datatype); the transport calls this only for a non-empty payload, so a zero-byte
                // send's NULL is never read.
                self.t.try_send_contiguous(dest, &hdr, p, bytes, |dst| unsafe { super::buffer::copy_bytes(p, dst, bytes) })
            }
            // SAFETY: `buf` holds `bytes` packed bytes; the transport calls this only for a non-empty payload.
            Buf::Typed { .. } => self.t.try_send(dest, &hdr, bytes, |dst| unsafe { buf.pack(0, dst, bytes) }),
        };
        if !pushed {
            return false;
        }
        self.gauges.sent(true);
        drop(g);
        crate::monitoring::record_send(self.me, self.size(), dest, bytes, ctx);
        self.announce(dest);
        true
    }

    /// Lets a receiver ask a blocked sender to copy half of a large message (process_vm_writev) while
    /// it copies the other half: worth it only when both ranks have a core of their own.
    pub fn set_split_copies(&self, on: bool) {
        self.split_copies.store(on, Ordering::Relaxed);
    }

    /// Whether every peer lives in this address space (threads mode).
    pub fn local_peers(&self) -> bool {
        self.t.all_same_process()
    }

    /// Whether `peer`'s buffers are in this address space.
    fn same_process(&self, peer: usize) -> bool {
        self.t.locality(peer) == Locality::SameProcess
    }

    /// Declares whether several threads of this rank may call MPI at once (MPI_THREAD_MULTIPLE);
    /// only then must a completion wake other waiting threads of the same rank.
    pub fn set_threaded(&self, threaded: bool) {
        self.threaded.store(threaded, Ordering::Relaxed);
    }

    /// Flushes every destination with queued slots; returns whether anything was pushed. Walks
    /// the list in place (a copy per pass was most of a sender's allocations): `flush_dest`
    /// removes only its own destination, once its queue empties, and adds none.
    fn flush_pending(&self, g: &mut Inner) -> bool {
        let mut any = false;
        let mut i = 0;
        while let Some(&d) = g.pending_dests.get(i) {
            any |= self.flush_dest(g, d);
            // Still listed: move on; else the next destination has moved down to `i`.
            if g.pending_dests.get(i) == Some(&d) {
                i += 1;
            }
        }
        any
    }

    // ------------------------------------------------------------------ matching and delivery

    /// Hands message `u` to receive request `id` (already matched).
    fn deliver(&self, g: &mut Inner, id: ReqId, u: Unexpected) {
        let (buf, cap) = match g.reqs.get(id).and_then(|r| r.op.as_ref()) {
            Some(OpArgs::Recv { buf, cap, .. }) => (buf.clone(), *cap),
            _ => unreachable!("deliver to a non-receive"),
        };
        let n = (u.total as usize).min(cap);
        let error = if (u.total as usize) > cap { Some(ErrorClass::Truncate) } else { None };
        {
            let r = g.reqs.get_mut(id).unwrap();
            r.matched = true;
            r.status = Status { source: u.src as i32, tag: u.tag, error, bytes: n as u64, cancelled: false, context: u.ctx };
        }
        match u.body {
            Body::Eager { data, sync_sreq } => {
                if n > 0 {
                    // SAFETY: `buf` holds `cap` >= n stream bytes (receive contract); data holds total >= n.
                    unsafe { buf.unpack(0, data.as_ptr(), n) };
                }
                if let Some(sreq) = sync_sreq {
                    self.enqueue(g, u.src, Out::Ctl { hdr: SlotHeader { kind: Kind::SyncAck as u32, sreq, ..Default::default() } });
                }
                self.complete(g, id);
            }
            Body::Rts { sreq, remote, flags } => {
                if self.t.peer_failed(u.src) {
                    // Its buffer went with it: nothing to read, and no reason to give up single copies.
                    // An off-node payload's descriptor is let go (UCX keeps it until released).
                    self.t.drop_payload(u.src, remote.addr);
                    self.fail(g, id, ErrorClass::ProcFailed);
                    return;
                }
                // A split needs our buffer contiguous (the sender writes into it); the sender's may be
                // typed. Without split copies, a sender of short typed pieces still writes it all: for
                // it they are local iovecs, for us a bounce buffer that copies the gaps too.
                let halves = self.split_copies.load(Ordering::Relaxed);
                // A peer on another node is reached by packets only: streamed, and its refusal
                // of one-sided copies says nothing about the peers on this node.
                let off_node = self.t.locality(u.src) == Locality::OtherNode;
                let split = g.cma && !off_node && flags & FLAG_BLOCKING != 0 && n >= SPLIT_MIN && (halves || flags & FLAG_SHORT_PIECES != 0);
                if let (true, Buf::Flat(dst)) = (split, &buf) {
                    // Ask the (blocked) sender to write the second half while we read the first.
                    let half = if halves { (n / 2) & !4095 } else { 0 };
                    let r = g.reqs.get_mut(id).unwrap();
                    let rreq = req_wire(id, r.gen);
                    r.streaming = Some(Streaming { received: 0, total: n as u64, split: Some(Box::new((u.src, sreq, remote))) });
                    let split = SlotHeader { kind: Kind::Split as u32, sreq, rreq, addr: *dst as u64 + half as u64, len: (n - half) as u64, offset: half as u64, ..Default::default() };
                    self.enqueue(g, u.src, Out::Ctl { hdr: split });
                    self.flush_dest(g, u.src);
                    if half > 0 && self.read_message(u.src, &remote, &buf, 0, half).is_err() {
                        // Not expected (reading worked before, or g.cma would be off); the sender's
                        // buffer stays valid until our Fin, so read it all, one more time.
                        g.cma = false;
                        if self.read_message(u.src, &remote, &buf, 0, n).is_err() {
                            let r = g.reqs.get_mut(id).unwrap();
                            r.status.error = Some(ErrorClass::Other);
                        }
                    }
                    // Complete (and send Fin) once the sender's SplitDone is in.
                    self.add_received(g, id, half as u64);
                    return;
                }
                if off_node {
                    // The payload waits in the transport under the token `remote.addr`: pulled
                    // straight into a contiguous receive buffer, else into a bounce buffer the
                    // request keeps (unpacked at the end); done, and the Fin sent, when the
                    // transport hands back the Pulled header. A failed pull of either kind ends
                    // the receive there, as ProcFailed once the sender is known dead.
                    let mut bounce = match &buf {
                        Buf::Flat(_) => None,
                        Buf::Typed { .. } => Some(vec![0u8; n].into_boxed_slice()),
                    };
                    let dst = match (&buf, &mut bounce) {
                        (_, Some(b)) => b.as_mut_ptr(),
                        (Buf::Flat(p), None) => *p,
                        (Buf::Typed { .. }, None) => unreachable!("a typed buffer has a bounce"),
                    };
                    let r = g.reqs.get_mut(id).unwrap();
                    let done = SlotHeader { kind: Kind::Pulled as u32, sreq, rreq: req_wire(id, r.gen), ..Default::default() };
                    // From here a failure noted (`fail`) waits for the transport to give the
                    // buffer back (`pulled`). The bounce's heap block stays put in the request.
                    r.pulling = true;
                    r.bounce = bounce;
                    if self.t.pull(u.src, remote.addr, dst, n, &done).is_ok() {
                        return;
                    }
                    g.reqs.get_mut(id).unwrap().pulling = false;
                    self.pulled(g, u.src, &SlotHeader { flags: FLAG_FAILED, ..done });
                    return;
                }
                let copied = g.cma && (n == 0 || self.read_message(u.src, &remote, &buf, 0, n).is_ok());
                if copied {
                    self.enqueue(g, u.src, Out::Ctl { hdr: SlotHeader { kind: Kind::Fin as u32, sreq, ..Default::default() } });
                    self.complete(g, id);
                } else {
                    // The kernel refused the single copy: streaming for good.
                    g.cma = false;
                    let r = g.reqs.get_mut(id).unwrap();
                    r.streaming = Some(Streaming { received: 0, total: u.total, split: None });
                    let rreq = req_wire(id, r.gen);
                    self.enqueue(g, u.src, Out::Ctl { hdr: SlotHeader { kind: Kind::Cts as u32, sreq, rreq, ..Default::default() } });
                }
            }
        }
    }

    /// A pull of an off-node payload into receive `hdr.rreq` ended (`Transport::pull`): the
    /// receive completes (failed with `FLAG_FAILED`), and the sender `src` gets its Fin unless it
    /// is gone.
    fn pulled(&self, g: &mut Inner, src: usize, hdr: &SlotHeader) {
        let gone = self.t.peer_failed(src);
        if !gone {
            self.enqueue(g, src, Out::Ctl { hdr: SlotHeader { kind: Kind::Fin as u32, sreq: hdr.sreq, ..Default::default() } });
            self.flush_dest(g, src);
        }
        let (id, gen) = wire_req(hdr.rreq);
        let Some(r) = g.reqs.get_mut(id).filter(|r| r.gen == gen && !r.done) else { return };
        r.pulling = false;
        // A typed receive's bounce buffer, free now that the transport is done with it.
        let bounce = r.bounce.take();
        // A failure noted meanwhile (the sender died, the communicator was revoked: `fail` left
        // the receive to this) wins over how the transfer ended; a truncation (set at matching)
        // does not.
        if let Some(class) = r.status.error.filter(|&c| c != ErrorClass::Truncate) {
            self.fail(g, id, class);
        } else if hdr.flags & FLAG_FAILED != 0 {
            self.fail(g, id, if gone { ErrorClass::ProcFailed } else { ErrorClass::Other });
        } else {
            if let (Some(b), Some(OpArgs::Recv { buf, .. })) = (&bounce, &r.op) {
                if !b.is_empty() {
                    // SAFETY: `buf` holds `cap` >= b.len() stream bytes (receive contract; the
                    // bounce was sized to the received length at matching).
                    unsafe { buf.unpack(0, b.as_ptr(), b.len()) };
                }
            }
            self.complete(g, id);
        }
    }

    /// Counts `bytes` more of a receive that arrives in parts; completes it when all are there.
    fn add_received(&self, g: &mut Inner, id: ReqId, bytes: u64) {
        let Some(st) = g.reqs.get_mut(id).and_then(|r| r.streaming.as_mut()) else { return };
        st.received += bytes;
        if st.received >= st.total {
            self.complete(g, id);
        }
    }

    fn complete(&self, g: &mut Inner, id: ReqId) {
        let Some(r) = g.reqs.get_mut(id) else { return };
        r.done = true;
        if r.user_freed {
            let block = r.bsend_block;
            g.reqs.discard(id);
            if let Some((scope, off)) = block {
                if let Some(pool) = g.bsend.get_mut(&scope) {
                    pool.free(off);
                    if !pool.in_use() {
                        self.flushed(g, scope);
                    }
                }
            }
        }
        if self.threaded.load(Ordering::Relaxed) && self.waiting_threads.load(Ordering::Relaxed) > 0 {
            self.t.wake(self.me);
        }
    }

    /// Handles one slot that arrived from `src`. `payload` points at the slot's payload.
    fn handle_incoming(&self, g: &mut Inner, src: usize, hdr: &SlotHeader, payload: *const u8) {
        match hdr.kind {
            k if k == Kind::Eager as u32 || k == Kind::Rts as u32 => {
                let pos = g.posted.iter().position(|&id| match g.reqs.get(id).and_then(|r| r.op.as_ref()) {
                    Some(&OpArgs::Recv { src: s, tag, ctx, .. }) => ctx == hdr.context && s.is_none_or(|s| s == src) && tag_matches(tag, hdr.tag),
                    _ => false,
                });
                if pos.is_none() && self.dropped_stale(g, src, hdr) {
                    return;
                }
                let sync = hdr.flags & FLAG_SYNC != 0;
                if k == Kind::Eager as u32 {
                    if let Some(i) = pos {
                        // Matched on arrival: copy straight from the slot into the user's buffer.
                        let id = take_posted(&mut g.posted, i);
                        let r = g.reqs.get_mut(id).unwrap();
                        let Some(OpArgs::Recv { buf, cap, .. }) = &r.op else { unreachable!() };
                        let cap = *cap;
                        let n = (hdr.len as usize).min(cap);
                        if n > 0 {
                            // SAFETY: payload holds hdr.len >= n bytes; buf holds cap >= n stream bytes.
                            unsafe { buf.unpack(0, payload, n) };
                        }
                        r.matched = true;
                        r.status = Status { source: src as i32, tag: hdr.tag, error: if hdr.len as usize > cap { Some(ErrorClass::Truncate) } else { None }, bytes: n as u64, cancelled: false, context: hdr.context };
                        if sync {
                            self.enqueue(g, src, Out::Ctl { hdr: SlotHeader { kind: Kind::SyncAck as u32, sreq: hdr.sreq, ..Default::default() } });
                        }
                        self.complete(g, id);
                    } else {
                        // SAFETY: payload holds hdr.len bytes.
                        let data = unsafe { std::slice::from_raw_parts(payload, hdr.len as usize) }.to_vec();
                        g.unexpected.push_back(Unexpected { src, tag: hdr.tag, ctx: hdr.context, total: hdr.len, body: Body::Eager { data, sync_sreq: sync.then_some(hdr.sreq) } });
                        self.gauges.set_unexpected(g.unexpected.len());
                    }
                } else {
                    let u = Unexpected { src, tag: hdr.tag, ctx: hdr.context, total: hdr.total, body: Body::Rts { sreq: hdr.sreq, remote: Remote::from_rts(hdr), flags: hdr.flags } };
                    if let Some(i) = pos {
                        let id = take_posted(&mut g.posted, i);
                        self.deliver(g, id, u);
                    } else {
                        g.unexpected.push_back(u);
                        self.gauges.set_unexpected(g.unexpected.len());
                    }
                }
            }
            k if k == Kind::Pulled as u32 => self.pulled(g, src, hdr),
            k if k == Kind::Fin as u32 || k == Kind::SyncAck as u32 => {
                let (id, gen) = wire_req(hdr.sreq);
                if g.reqs.get(id).is_some_and(|r| r.gen == gen) {
                    self.complete(g, id);
                }
            }
            k if k == Kind::Cts as u32 => {
                let (id, gen) = wire_req(hdr.sreq);
                let Some(r) = g.reqs.get(id).filter(|r| r.gen == gen) else { return };
                let Some(OpArgs::Send { bytes, .. }) = r.op else { return };
                let Some(data) = self.send_data(g, id) else { return };
                self.enqueue(g, src, Out::Stream { req: id, rreq: hdr.rreq, data, total: bytes as u64, offset: 0 });
            }
            k if k == Kind::Split as u32 => {
                // We are the sender: copy our part into the receiver, then tell it.
                let (id, gen) = wire_req(hdr.sreq);
                if g.reqs.get(id).is_none_or(|r| r.gen != gen) {
                    return;
                }
                let Some(data) = self.send_data(g, id) else { return };
                // hdr.addr is where stream offset hdr.offset goes in the receiver's contiguous buffer.
                let (start, end) = (hdr.offset as usize, (hdr.offset + hdr.len) as usize);
                let ok = self.write_message(src, &data, hdr.addr.wrapping_sub(hdr.offset), start, end).is_ok();
                let done = SlotHeader { kind: Kind::SplitDone as u32, rreq: hdr.rreq, len: hdr.len, offset: hdr.offset, flags: if ok { 0 } else { FLAG_FAILED }, ..Default::default() };
                self.enqueue(g, src, Out::Ctl { hdr: done });
            }
            k if k == Kind::SplitDone as u32 => {
                let (id, gen) = wire_req(hdr.rreq);
                if !g.reqs.get(id).is_some_and(|r| r.gen == gen) {
                    return;
                }
                let r = g.reqs.get_mut(id).unwrap();
                let Some(OpArgs::Recv { buf, .. }) = r.op.clone() else { return };
                let Some(&(ssrc, sreq, remote)) = r.streaming.as_mut().and_then(|st| st.split.take()).as_deref() else { return };
                if hdr.flags & FLAG_FAILED != 0 {
                    // The sender could not write its part; its buffer is still valid (no Fin yet).
                    let (start, end) = (hdr.offset as usize, (hdr.offset + hdr.len) as usize);
                    if self.read_message(ssrc, &remote, &buf, start, end).is_err() {
                        g.reqs.get_mut(id).unwrap().status.error = Some(ErrorClass::Other);
                    }
                }
                self.enqueue(g, ssrc, Out::Ctl { hdr: SlotHeader { kind: Kind::Fin as u32, sreq, ..Default::default() } });
                self.add_received(g, id, hdr.len);
            }
            k if k == Kind::Revoke as u32 && !g.floors.is_stale(hdr.context) => self.revoked_by_peer(g, hdr.context),
            k if k == Kind::Data as u32 => {
                let (id, gen) = wire_req(hdr.rreq);
                let Some(r) = g.reqs.get_mut(id).filter(|r| r.gen == gen) else { return };
                let Some(OpArgs::Recv { buf, cap, .. }) = &r.op else { return };
                if (hdr.offset as usize) < *cap {
                    let n = (hdr.len as usize).min(*cap - hdr.offset as usize);
                    // SAFETY: offset + n <= cap stream bytes of the buffer; payload holds hdr.len >= n bytes.
                    unsafe { buf.unpack(hdr.offset as usize, payload, n) };
                }
                let st = r.streaming.as_mut().expect("Data for a receive that is not streaming");
                st.received += hdr.len;
                if st.received >= st.total {
                    self.complete(g, id);
                }
            }
            _ => {}
        }
    }

    /// The buffer send `id` sends from: its bsend block for a buffered send (the address its Rts
    /// announced), else the user's buffer.
    fn send_data(&self, g: &Inner, id: ReqId) -> Option<Buf> {
        let r = g.reqs.get(id)?;
        if let Some((scope, off)) = r.bsend_block {
            if let Some(pool) = g.bsend.get(&scope) {
                return Some(Buf::Flat(pool.payload(off)));
            }
        }
        match &r.op {
            Some(OpArgs::Send { buf, .. }) => Some(buf.clone()),
            _ => None,
        }
    }

    // ------------------------------------------------------------------ outgoing

    fn enqueue(&self, g: &mut Inner, dest: usize, out: Out) {
        if g.outq[dest].is_empty() {
            g.pending_dests.push(dest);
        }
        g.outq[dest].push_back(out);
    }

    /// Pushes what fits of `dest`'s queue into the channel; returns whether anything was pushed.
    fn flush_dest(&self, g: &mut Inner, dest: usize) -> bool {
        // Iterate rather than recurse on the "room appeared after all" re-check: with a consumer
        // draining on another core that re-check can succeed once per slot, so recursion depth
        // grew with the queue length (thousands of queued isends could overflow the stack).
        let mut pushed = false;
        loop {
            let (p, again) = self.flush_dest_once(g, dest);
            pushed |= p;
            if !again {
                return pushed;
            }
        }
    }

    /// Pushes a one-slot packet (`Out::Eager`, `Out::Ctl`) into `dest`'s channel; false when the
    /// channel has no room (and for `Out::Stream`, which `flush_dest_once` pushes piece by piece).
    fn push_whole(&self, dest: usize, out: &Out) -> bool {
        match out {
            Out::Eager { hdr, data, .. } => {
                let len = hdr.len as usize;
                // SAFETY: `data` holds hdr.len packed bytes (user buffer or bsend block, valid until
                // completion). The ring calls this only for a non-empty payload: a zero-byte send
                // may pass a NULL buffer (MPI_Send(NULL, 0, ...)).
                let fill = |dst| unsafe { data.pack(0, dst, len) };
                match data {
                    // A network transport may send contiguous bytes from where they are.
                    Buf::Flat(p) => self.t.try_send_contiguous(dest, hdr, *p, len, fill),
                    Buf::Typed { .. } => self.t.try_send(dest, hdr, len, fill),
                }
            }
            Out::Ctl { hdr } => self.t.try_send(dest, hdr, 0, |_| {}),
            Out::Stream { .. } => false,
        }
    }

    /// One pass of `flush_dest`: (whether anything was pushed, whether to pass again because the
    /// consumer freed room between our last failed push and setting `producer_waiting`).
    fn flush_dest_once(&self, g: &mut Inner, dest: usize) -> (bool, bool) {
        let mut pushed = false;
        loop {
            let Some(front) = g.outq[dest].front_mut() else { break };
            let mut completed = None;
            let ok = match front {
                Out::Eager { .. } | Out::Ctl { .. } => {
                    let ok = self.push_whole(dest, front);
                    if ok {
                        completed = completed_by_push(front);
                    }
                    ok
                }
                Out::Stream { req, rreq, data, total, offset } => {
                    let mut any = false;
                    while *offset < *total {
                        let len = ((*total - *offset) as usize).min(X::MAX_PAYLOAD);
                        let hdr = SlotHeader { kind: Kind::Data as u32, len: len as u64, total: *total, rreq: *rreq, offset: *offset, ..Default::default() };
                        let at = *offset as usize;
                        // SAFETY: the send buffer holds `total` packed bytes; offset + len <= total.
                        if !self.t.try_send(dest, &hdr, len, |dst| unsafe { data.pack(at, dst, len) }) {
                            break;
                        }
                        any = true;
                        *offset += len as u64;
                    }
                    pushed |= any;
                    if *offset >= *total {
                        completed = Some(*req);
                        true
                    } else {
                        false
                    }
                }
            };
            if !ok {
                break;
            }
            pushed = true;
            g.outq[dest].pop_front();
            if let Some(id) = completed {
                self.complete(g, id);
            }
        }
        if pushed {
            self.announce(dest);
        }
        if g.outq[dest].is_empty() {
            self.t.want_room(dest, false);
            g.room_armed[dest] = false;
            g.pending_dests.retain(|&d| d != dest);
        } else if !g.room_armed[dest] {
            // Ask the consumer to ring us when it frees a slot, then look once more (Dekker pairing
            // with the consumer's pop + SeqCst fence + flag check in `progress`).
            self.t.want_room(dest, true);
            fence(Ordering::SeqCst);
            if self.t.has_room(dest) {
                return (pushed, true);
            }
            g.room_armed[dest] = true;
        }
        (pushed, false)
    }

    // ------------------------------------------------------------------ progress

    /// Drains every incoming channel and pushes pending outgoing slots. Returns whether anything
    /// happened.
    fn progress(&self, g: &mut Inner) -> bool {
        let mut any = self.t.poll(|src, hdr, payload| self.handle_incoming(g, src, hdr, payload));
        any |= self.flush_pending(g);
        // The one check failure survival adds to progress (a relaxed load on shared memory).
        let failures = self.t.failure_epoch();
        if failures != g.failures_seen {
            self.note_failures(g, failures);
            any = true;
        }
        any
    }

    /// Handles every packet waiting from `src`; returns whether there was any.
    fn drain(&self, g: &mut Inner, src: usize) -> bool {
        self.t.poll_from(src, |src, hdr, payload| self.handle_incoming(g, src, hdr, payload))
    }

    /// Runs progress until `cond` holds (checked under the engine lock after each progress pass),
    /// waiting on the doorbell between passes.
    fn wait_until<T>(&self, mut cond: impl FnMut(&mut Inner) -> Option<T>) -> T {
        self.waiting_threads.fetch_add(1, Ordering::SeqCst);
        let began = super::gauges::Gauges::wait_begins();
        let bell = self.t.doorbell();
        let out = loop {
            let seen = bell.seq.load(Ordering::Acquire);
            let hooked = self.run_hooks();
            let moved = {
                let mut g = self.lock();
                let moved = self.progress(&mut g);
                if let Some(v) = cond(&mut g) {
                    break v;
                }
                moved
            };
            // With hooks at work, what progress just delivered may let a schedule take its next
            // step (which nobody would ring us for): look again before sleeping.
            if hooked || (moved && self.hook_work.load(Ordering::Relaxed) != 0) {
                continue;
            }
            self.policy.wait(bell, seen, || self.anything_arrived());
        };
        self.waiting_threads.fetch_sub(1, Ordering::SeqCst);
        self.gauges.wait_ends(began);
        out
    }

    /// Waits, progressing meanwhile, until `cond` holds: a collective that meets in shared
    /// memory. Whoever makes `cond` hold must ring this rank's doorbell (`ring_rank`) so a
    /// sleeping waiter notices. Gives up with ErrorClass::Revoked
    /// once context pair `ctx` is revoked, or with ErrorClass::ProcFailed once one of `members`
    /// (world ranks that must all take part: the collective can then never complete) is known dead.
    pub fn wait_for_collective(&self, ctx: u32, members: &[usize], cond: impl Fn() -> bool) -> MpiResult {
        self.wait_until(|g| {
            if cond() {
                Some(Ok(()))
            } else {
                Self::collective_refused(g, ctx, members).map(Err)
            }
        })
    }

    /// Whether this rank's wait policy spins (it has a core of its own): a shared-memory
    /// algorithm may then look at its condition a few times before `wait_for_collective`.
    pub fn may_spin(&self) -> bool {
        self.policy.spins > 0
    }

    /// Why a shared-memory collective on context pair `ctx` cannot run now, if it cannot (see
    /// `wait_for_collective`); makes no progress.
    pub fn collective_refusal(&self, ctx: u32, members: &[usize]) -> MpiResult {
        if !self.faults.load(Ordering::Acquire) {
            return Ok(());
        }
        Self::collective_refused(&self.lock(), ctx, members).map_or(Ok(()), Err)
    }

    fn collective_refused(g: &Inner, ctx: u32, members: &[usize]) -> Option<crate::error::MpiError> {
        if g.revoked.contains(&(ctx & !1)) {
            Some(err(ErrorClass::Revoked, "the communicator was revoked (MPIX_Comm_revoke)"))
        } else if let Some(w) = members.iter().find(|&&w| g.any_dead && g.dead[w]) {
            Some(err(ErrorClass::ProcFailed, format!("world rank {w} of the communicator has failed")))
        } else {
            None
        }
    }

    /// Rings world rank `r`'s doorbell: something it waits for with `wait_for_collective` changed.
    pub fn ring_rank(&self, r: usize) {
        self.t.wake(r);
    }

    /// Tells `dest` that packets wait for it (after sending them).
    #[inline]
    fn announce(&self, dest: usize) {
        self.t.announce(dest);
    }

    /// Whether a packet waits for this rank (the spinning waiter's check).
    fn anything_arrived(&self) -> bool {
        self.t.pending()
    }

    /// A request completed by someone other than the engine (MPI_Comm_idup's background thread):
    /// pending until `complete_external`.
    pub fn new_external(&self) -> ReqId {
        self.lock().reqs.insert_with(|gen| Req::new(gen, None))
    }

    /// An inactive persistent request completed by someone other than the engine (persistent
    /// collectives): `start_external` activates it, `complete_external` ends each activation.
    pub fn new_external_persistent(&self) -> ReqId {
        self.lock().reqs.insert_with(|gen| {
            let mut r = Req::new(gen, None);
            r.persistent = true;
            r.active = false;
            r.done = true;
            r
        })
    }

    /// MPI_Start on a request from `new_external_persistent`: errors unless it is inactive.
    pub fn start_external(&self, id: ReqId) -> MpiResult {
        let mut g = self.lock();
        let r = g.reqs.get_mut(id).ok_or_else(|| err(ErrorClass::Request, "invalid request"))?;
        if r.active {
            return Err(err(ErrorClass::Request, "the persistent collective request is still active; complete it (MPI_Wait/MPI_Test) before starting it again"));
        }
        r.active = true;
        r.done = false;
        r.status = Status::empty();
        Ok(())
    }

    /// Completes external request `id` with error class `error` (MPI_SUCCESS for none) and wakes
    /// every thread of this rank that may be waiting for it.
    pub fn complete_external(&self, id: ReqId, error: Option<ErrorClass>) {
        let mut g = self.lock();
        if let Some(r) = g.reqs.get_mut(id) {
            r.status.error = error;
        }
        self.complete(&mut g, id);
        drop(g);
        self.t.wake(self.me);
    }

    /// Completes external request `id` with status `st` (a receive's source, tag and size, or a
    /// request made of other requests: MPI_Isendrecv) and wakes every thread of this rank that
    /// may be waiting for it.
    pub fn complete_external_status(&self, id: ReqId, st: Status) {
        let mut g = self.lock();
        if let Some(r) = g.reqs.get_mut(id) {
            r.status = st;
        }
        self.complete(&mut g, id);
        drop(g);
        self.t.wake(self.me);
    }

    /// Completes external request `id` with `result`: its error's class on failure.
    pub fn finish_external(&self, id: ReqId, result: &MpiResult) {
        self.complete_external(id, result.as_ref().err().map(|e| e.class));
    }

    /// One progress pass (MPI_Test* and friends).
    pub fn poke(&self) {
        self.run_hooks();
        let mut g = self.lock();
        self.progress(&mut g);
    }

    // ------------------------------------------------------------------ progress hooks

    /// The registered hook of type `T`, registering `make()` first if there is none (one per
    /// engine: coll keeps its schedules of this rank in it).
    pub fn hook<H: Progress<X> + 'static>(&self, make: impl FnOnce() -> H) -> Arc<H> {
        let find = |hooks: &[Hook<X>]| hooks.iter().find_map(|(any, _)| any.clone().downcast::<H>().ok());
        if let Some(h) = find(&self.hooks.read().unwrap_or_else(|p| p.into_inner())) {
            return h;
        }
        let mut hooks = self.hooks.write().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = find(&hooks) {
            return h;
        }
        let h = Arc::new(make());
        hooks.push((h.clone(), h.clone()));
        h
    }

    /// A hook's owner starts (`true`) or ends (`false`) one operation the hooks must advance.
    pub fn hook_busy(&self, start: bool) {
        if start {
            self.hook_work.fetch_add(1, Ordering::SeqCst);
        } else {
            self.hook_work.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Runs the hooks if they have work; whether any moved. Inlined: without work (nearly always
    /// on the point-to-point paths) it is one relaxed load.
    #[inline]
    fn run_hooks(&self) -> bool {
        if self.hook_work.load(Ordering::Relaxed) == 0 {
            return false;
        }
        self.run_hooks_now()
    }

    #[inline(never)]
    fn run_hooks_now(&self) -> bool {
        let hooks: Vec<Arc<dyn Progress<X>>> = self.hooks.read().unwrap_or_else(|p| p.into_inner()).iter().map(|h| h.1.clone()).collect();
        let mut any = false;
        for h in hooks {
            any |= h.progress(self);
        }
        any
    }

    /// The status of request `id` if it completed, releasing it; no progress, no hooks (for
    /// hooks testing their own operations).
    pub fn take_done(&self, id: ReqId) -> Option<Status> {
        let mut g = self.lock();
        if !Self::is_done(&g, id) {
            return None;
        }
        Self::take(&mut g, id)
    }

    // ------------------------------------------------------------------ completion

    /// For a live request: Some((whether it is persistent, its generation)). The generation tells
    /// this request from a later one that reuses the id once it is released.
    pub fn persistence(&self, id: ReqId) -> Option<(bool, u32)> {
        self.lock().reqs.get(id).filter(|r| !r.user_freed).map(|r| (r.persistent, r.gen))
    }

    /// The generation of request `id` if it still exists (also after MPI_Request_free, while the
    /// engine finishes it): `Some(gen)` for the same request means the engine may still use the
    /// buffers it was given.
    pub fn generation(&self, id: ReqId) -> Option<u32> {
        self.lock().reqs.get(id).map(|r| r.gen)
    }

    /// Takes the result of a finished request: frees it, or makes a persistent one inactive.
    /// Inactive persistent requests report an empty status.
    fn take(g: &mut Inner, id: ReqId) -> Option<Status> {
        let r = g.reqs.get_mut(id)?;
        if r.persistent && !r.active {
            return Some(Status::empty());
        }
        if !r.done {
            return None;
        }
        let st = r.status;
        if r.persistent {
            r.active = false;
        } else {
            g.reqs.discard(id);
        }
        Some(st)
    }

    /// Whether request `id` is complete (or inactive); does not free it.
    fn is_done(g: &Inner, id: ReqId) -> bool {
        g.reqs.get(id).is_some_and(|r| r.done || (r.persistent && !r.active))
    }

    /// MPI_Test: progress once; the status if `id` completed (the request is then released).
    pub fn test(&self, id: ReqId) -> Option<Status> {
        self.run_hooks();
        let mut g = self.lock();
        if !Self::is_done(&g, id) {
            self.progress(&mut g);
        }
        self.unsuccessful_test(g, |g| Self::take(g, id))
    }

    /// Runs a test's (or probe's) `check` and returns its result; when it found nothing while this
    /// node's cores are oversubscribed, yields the CPU first (a rank fiber: its carrier). An application polling MPI_Test* in a loop
    /// would otherwise burn whole time slices the peers it waits for need (MPICH yields the same
    /// way in its progress loop).
    fn unsuccessful_test<T>(&self, mut g: MutexGuard<'_, Inner>, check: impl FnOnce(&mut Inner) -> Option<T>) -> Option<T> {
        let r = check(&mut g);
        if r.is_none() && self.policy.spins == 0 {
            drop(g);
            crate::runtime::threads::sched::yield_now();
        }
        r
    }

    pub fn wait(&self, id: ReqId) -> Status {
        {
            let mut g = self.lock();
            if let Some(st) = Self::take(&mut g, id) {
                return st;
            }
        }
        self.wait_until(|g| Self::take(g, id))
    }

    /// Waits for request `id` like `wait`, but gives up when `stop()` holds (checked after each
    /// progress pass, under the engine lock: it must not call the engine): None then, and the
    /// request stays pending. Whoever makes `stop()` hold rings this rank (`ring_rank`).
    pub fn wait_or(&self, id: ReqId, stop: impl Fn() -> bool) -> Option<Status> {
        {
            let mut g = self.lock();
            if let Some(st) = Self::take(&mut g, id) {
                return Some(st);
            }
        }
        self.wait_until(|g| match Self::take(g, id) {
            Some(st) => Some(Some(st)),
            None => stop().then_some(None),
        })
    }

    /// Whether `id` is an active request. Waitany, Waitsome, Testany and Testsome ignore inactive
    /// persistent requests like null handles (MPI 4.1 section 3.7.5); reporting them as complete
    /// would hand the same, already completed request back on every call.
    fn is_active(g: &Inner, id: ReqId) -> bool {
        g.reqs.get(id).is_some_and(|r| !r.persistent || r.active)
    }

    fn any_active(g: &Inner, ids: &[Option<ReqId>]) -> bool {
        ids.iter().any(|id| id.is_some_and(|id| Self::is_active(g, id)))
    }

    fn take_any(g: &mut Inner, ids: &[Option<ReqId>]) -> Option<(usize, Status)> {
        ids.iter().enumerate().find_map(|(i, id)| id.filter(|&id| Self::is_active(g, id) && Self::is_done(g, id)).map(|id| (i, Self::take(g, id).unwrap())))
    }

    /// MPI_Waitany over `ids` (None entries are null): (index, status), or None when no request
    /// is active (the caller reports MPI_UNDEFINED and an empty status).
    pub fn wait_any(&self, ids: &[Option<ReqId>]) -> Option<(usize, Status)> {
        self.wait_until(|g| if Self::any_active(g, ids) { Self::take_any(g, ids).map(Some) } else { Some(None) })
    }

    /// MPI_Testany: None if no active request completed (flag false); Some(None) if no request
    /// is active (flag true, index MPI_UNDEFINED); else Some((index, status)).
    pub fn test_any(&self, ids: &[Option<ReqId>]) -> Option<Option<(usize, Status)>> {
        self.run_hooks();
        let mut g = self.lock();
        if !Self::any_active(&g, ids) {
            return Some(None);
        }
        self.progress(&mut g);
        self.unsuccessful_test(g, |g| Self::take_any(g, ids).map(Some))
    }

    /// Completes every active request in `ids` that is done now and appends (index, status) of
    /// each to `out`; false when no request is active (the caller reports MPI_UNDEFINED).
    pub fn test_some<const N: usize>(&self, ids: &[Option<ReqId>], out: &mut StackVec<(usize, Status), N>) -> bool {
        self.run_hooks();
        let mut g = self.lock();
        if !Self::any_active(&g, ids) {
            return false;
        }
        self.progress(&mut g);
        Self::collect_done(&mut g, ids, out);
        true
    }

    fn collect_done<const N: usize>(g: &mut Inner, ids: &[Option<ReqId>], out: &mut StackVec<(usize, Status), N>) {
        for (i, id) in ids.iter().enumerate() {
            if let Some(id) = *id {
                if Self::is_active(g, id) && Self::is_done(g, id) {
                    out.push((i, Self::take(g, id).unwrap()));
                }
            }
        }
    }

    /// MPI_Waitsome: blocks until at least one active request is done, appending as `test_some`;
    /// false when none is active.
    pub fn wait_some<const N: usize>(&self, ids: &[Option<ReqId>], out: &mut StackVec<(usize, Status), N>) -> bool {
        let before = out.len();
        self.wait_until(|g| {
            if !Self::any_active(g, ids) {
                return Some(false);
            }
            Self::collect_done(g, ids, out);
            (out.len() > before).then_some(true)
        })
    }

    /// MPI_Testall: if all are done, releases them, writes their statuses to `out` (as long as
    /// `ids`) and returns true.
    pub fn test_all(&self, ids: &[Option<ReqId>], out: &mut [Status]) -> bool {
        self.run_hooks();
        let mut g = self.lock();
        self.progress(&mut g);
        self.unsuccessful_test(g, |g| Self::take_all(g, ids, out)).is_some()
    }

    /// Whether all of `ids` are done; if so releases them and writes their statuses to `out`.
    fn take_all(g: &mut Inner, ids: &[Option<ReqId>], out: &mut [Status]) -> Option<()> {
        if ids.iter().any(|id| id.is_some_and(|id| !Self::is_done(g, id))) {
            return None;
        }
        for (id, st) in ids.iter().zip(out.iter_mut()) {
            *st = id.map_or(Status::empty(), |id| Self::take(g, id).unwrap());
        }
        Some(())
    }

    /// MPI_Waitall: releases all of `ids` once done and writes their statuses to `out` (as long
    /// as `ids`).
    pub fn wait_all(&self, ids: &[Option<ReqId>], out: &mut [Status]) {
        // A request found done stays done until taken, so each pass resumes where the last
        // one stopped.
        let mut from = 0;
        self.wait_until(|g| {
            from += ids[from..].iter().position(|id| id.is_some_and(|id| !Self::is_done(g, id))).unwrap_or(ids.len() - from);
            if from == ids.len() { Self::take_all(g, ids, out) } else { None }
        });
    }

    /// The persistence and generation of requests (`persistence`) for a whole array, under one
    /// lock: `f` gets the lookup. Always inlined: left a call, it cost MPI_Waitall ~30
    /// instructions (when the crate's code-generation units were partitioned differently, or
    /// once `ffi::p2p::request::resolve_as` was inlined into each completion call, the optimiser
    /// did not inline it).
    #[inline(always)]
    pub fn persistence_with<R>(&self, f: impl FnOnce(&dyn Fn(ReqId) -> Option<(bool, u32)>) -> R) -> R {
        let g = self.lock();
        f(&|id| g.reqs.get(id).filter(|r| !r.user_freed).map(|r| (r.persistent, r.gen)))
    }

    /// MPI_Request_get_status: the status if done, without releasing the request.
    pub fn peek_status(&self, id: ReqId) -> Option<Status> {
        self.run_hooks();
        let mut g = self.lock();
        self.progress(&mut g);
        let r = g.reqs.get(id)?;
        if r.persistent && !r.active {
            return Some(Status::empty());
        }
        r.done.then_some(r.status)
    }

    /// MPI_Request_get_status_any / _some: whether `id` is an active request (inactive
    /// persistent requests count as null there).
    pub fn active(&self, id: ReqId) -> bool {
        Self::is_active(&self.lock(), id)
    }

    /// MPI_Request_free.
    pub fn free(&self, id: ReqId) {
        let mut g = self.lock();
        let Some(r) = g.reqs.get_mut(id) else { return };
        if r.done || (r.persistent && !r.active) {
            g.reqs.discard(id);
        } else {
            r.user_freed = true;
            r.persistent = false;
        }
    }

    /// MPI_Cancel: a posted, unmatched receive is cancelled; anything else completes normally
    /// (the standard allows a cancel to fail; MPI_Test_cancelled then reports false).
    pub fn cancel(&self, id: ReqId) {
        let mut g = self.lock();
        self.progress(&mut g);
        if let Some(i) = g.posted.iter().position(|&p| p == id) {
            g.posted.remove(i);
            let r = g.reqs.get_mut(id).unwrap();
            r.status = Status { cancelled: true, ..Status::empty() };
            self.complete(&mut g, id);
            self.t.wake(self.me);
        }
    }

    // ------------------------------------------------------------------ probe

    fn find_unexpected(g: &Inner, src: Option<usize>, tag: i32, ctx: u32) -> Option<usize> {
        g.unexpected.iter().position(|u| u.ctx == ctx && src.is_none_or(|s| s == u.src) && tag_matches(tag, u.tag))
    }

    fn probe_status(u: &Unexpected) -> Status {
        Status { source: u.src as i32, tag: u.tag, error: None, bytes: u.total, cancelled: false, context: u.ctx }
    }

    pub fn iprobe(&self, src: Option<usize>, tag: i32, ctx: u32) -> Option<Status> {
        self.run_hooks();
        let mut g = self.lock();
        self.progress(&mut g);
        self.unsuccessful_test(g, |g| Self::find_unexpected(g, src, tag, ctx).map(|i| Self::probe_status(&g.unexpected[i])))
    }

    pub fn probe(&self, src: Option<usize>, tag: i32, ctx: u32) -> Status {
        self.wait_until(|g| Self::find_unexpected(g, src, tag, ctx).map(|i| Self::probe_status(&g.unexpected[i])))
    }

    fn take_message(g: &mut Inner, gauges: &super::gauges::Gauges, src: Option<usize>, tag: i32, ctx: u32) -> Option<(MsgId, Status)> {
        let i = Self::find_unexpected(g, src, tag, ctx)?;
        let u = g.unexpected.remove(i).unwrap();
        gauges.set_unexpected(g.unexpected.len());
        let st = Self::probe_status(&u);
        Some((g.messages.insert_with(|_| u), st))
    }

    pub fn improbe(&self, src: Option<usize>, tag: i32, ctx: u32) -> Option<(MsgId, Status)> {
        self.run_hooks();
        let mut g = self.lock();
        self.progress(&mut g);
        self.unsuccessful_test(g, |g| Self::take_message(g, &self.gauges, src, tag, ctx))
    }

    /// A message that arrived on (`tag`, `ctx`) from any source, taken for `imrecv` like
    /// `improbe` but without progress or hooks: for a hook serving such messages (`osc::serve`),
    /// which the progress loops call right before their progress pass.
    pub fn take_arrived(&self, tag: i32, ctx: u32) -> Option<(MsgId, Status)> {
        Self::take_message(&mut self.lock(), &self.gauges, None, tag, ctx)
    }

    /// A polling call found nothing (MPI_Win_test and the like): on an oversubscribed node, let
    /// the peers run first (see `unsuccessful_test`).
    pub fn poll_failed(&self) {
        if self.policy.spins == 0 {
            crate::runtime::threads::sched::yield_now();
        }
    }

    pub fn mprobe(&self, src: Option<usize>, tag: i32, ctx: u32) -> (MsgId, Status) {
        self.wait_until(|g| Self::take_message(g, &self.gauges, src, tag, ctx))
    }

    pub fn message_valid(&self, m: MsgId) -> bool {
        self.lock().messages.get(m).is_some()
    }

    /// MPI_Imrecv: receives matched message `m` into `buf`.
    ///
    /// # Safety
    /// The buffer must stay valid (and, for sends, unmodified; for receives, untouched by the
    /// caller) until the operation completes, as MPI requires of its users: the engine copies from
    /// or into it, possibly from another rank, at any time until then.
    pub unsafe fn imrecv(&self, m: MsgId, buf: Buf, cap: usize) -> MpiResult<ReqId> {
        let mut g = self.lock();
        let u = g.messages.remove(m).ok_or_else(|| err(ErrorClass::Request, "invalid message handle (already received?)"))?;
        let args = OpArgs::Recv { buf, cap, src: Some(u.src), tag: u.tag, ctx: u.ctx };
        let id = g.reqs.insert_with(|gen| Req::new(gen, Some(args)));
        self.deliver(&mut g, id, u);
        self.flush_pending(&mut g);
        Ok(id)
    }

    // ------------------------------------------------------------------ buffered sends

    /// MPI_Buffer_attach, MPI_Comm_attach_buffer, MPI_Session_attach_buffer: attaches `buffer`
    /// (base, size) to `scope`; None is MPI_BUFFER_AUTOMATIC (each message's copy allocated).
    ///
    /// # Safety
    /// The buffer must be `size` writable bytes that stay valid until detached: buffered sends
    /// copy into it and peers read from it until the messages are delivered.
    pub unsafe fn buffer_attach(&self, scope: Scope, buffer: Option<(*mut u8, usize)>, overhead: usize) -> MpiResult {
        let mut g = self.lock();
        if g.bsend.contains_key(&scope) {
            return Err(err(ErrorClass::Buffer, format!("a buffer is already attached to {}; detach it first", scope_name(scope))));
        }
        let pool = match buffer {
            Some((base, size)) => BsendPool::new(base, size, overhead),
            None => BsendPool::automatic(),
        };
        g.bsend.insert(scope, pool);
        Ok(())
    }

    /// MPI_Buffer_detach and friends: waits until every buffered message has left the buffer;
    /// gives the buffer back (None for MPI_BUFFER_AUTOMATIC).
    pub fn buffer_detach(&self, scope: Scope) -> MpiResult<Option<(*mut u8, usize)>> {
        if !self.lock().bsend.contains_key(&scope) {
            return Err(err(ErrorClass::Buffer, format!("no buffer is attached to {}", scope_name(scope))));
        }
        Ok(self.wait_until(|g| {
            if g.bsend.get(&scope).is_some_and(|p| p.in_use()) {
                return None;
            }
            let p = g.bsend.remove(&scope)?;
            Some((!p.is_automatic()).then(|| (p.base(), p.size())))
        }))
    }

    /// MPI_Buffer_flush and friends: waits until every message buffered in `scope`'s buffer has
    /// left it (at once if none is attached).
    pub fn buffer_flush(&self, scope: Scope) {
        self.wait_until(|g| (!g.bsend.get(&scope).is_some_and(|p| p.in_use())).then_some(()))
    }

    /// MPI_Buffer_iflush and friends: a request that completes when `buffer_flush` would return.
    pub fn buffer_iflush(&self, scope: Scope) -> ReqId {
        let mut g = self.lock();
        let id = g.reqs.insert_with(|gen| Req::new(gen, None));
        if g.bsend.get(&scope).is_some_and(|p| p.in_use()) {
            g.flush_waiters.push((scope, id));
        } else {
            self.complete(&mut g, id);
        }
        id
    }

    /// `scope`'s buffer has emptied: completes the iflush requests waiting for it.
    fn flushed(&self, g: &mut Inner, scope: Scope) {
        if g.flush_waiters.is_empty() {
            return;
        }
        let (done, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut g.flush_waiters).into_iter().partition(|&(s, _)| s == scope);
        g.flush_waiters = rest;
        for (_, id) in done {
            self.complete(g, id);
        }
    }

    /// The communicator of context `ctx` was made from a group of session `session`: its
    /// buffered sends use the session's buffer when it has none of its own.
    pub fn bind_session(&self, ctx: u32, session: usize) {
        self.lock().ctx_session.insert(ctx, session);
    }

    /// The communicator of context `ctx` is freed: its messages still in its buffer are delivered
    /// and the buffer detached implicitly (the context id may be reused).
    pub fn release_context(&self, ctx: u32) {
        let scope = Scope::Comm(ctx);
        self.wait_until(|g| (!g.bsend.get(&scope).is_some_and(|p| p.in_use())).then_some(()));
        let mut g = self.lock();
        g.bsend.remove(&scope);
        g.ctx_session.remove(&ctx);
    }

    /// Session `session` is finalized: as `release_context`, for its buffer and communicators.
    pub fn release_session(&self, session: usize) {
        let scope = Scope::Session(session);
        self.wait_until(|g| (!g.bsend.get(&scope).is_some_and(|p| p.in_use())).then_some(()));
        let mut g = self.lock();
        g.bsend.remove(&scope);
        g.ctx_session.retain(|_, s| *s != session);
    }

    // ------------------------------------------------------------------ finalize

    /// Pushes out everything still queued (buffered sends, acknowledgements) before the rank goes
    /// away; peers may still need them.
    pub fn flush_all(&self) {
        self.wait_until(|g| {
            // Sends the user freed while active (MPI_Request_free) are still ours to finish: a peer
            // may yet read their buffers.
            let busy = g.pending_dests.iter().any(|&d| !g.outq[d].is_empty())
                || g.bsend.values().any(|p| p.in_use())
                || g.reqs.iter().any(|r| r.user_freed && !r.done && matches!(r.op, Some(OpArgs::Send { .. })))
                || self.t.sends_pending();
            (!busy).then_some(())
        })
    }

    /// The rank leaves MPI: after `flush_all`, says goodbye to the peers the transport needs to
    /// tell and keeps progressing until they have said theirs (`Transport::depart`).
    pub fn depart(&self) {
        self.flush_all();
        self.t.depart();
        self.wait_until(|_| self.t.all_departed().then_some(()))
    }

    /// Internal consistency error for callers that need one.
    pub fn internal(msg: &str) -> crate::error::MpiError {
        err(ErrorClass::Other, msg.to_string())
    }
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Process => "the process (MPI_Buffer_attach)",
        Scope::Comm(_) => "the communicator (MPI_Comm_attach_buffer)",
        Scope::Session(_) => "the session (MPI_Session_attach_buffer)",
    }
}
