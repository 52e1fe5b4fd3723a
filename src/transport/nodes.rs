//! The transport of a rank whose job may span nodes: peers on this node through shared memory
//! (`shm::Shm`, unchanged), peers on other nodes through UCX packets (`ucx::Worker`). A one-node
//! job has no UCX part and pays one predictable branch per call.
//!
//! Remote peers get the same packets as local ones (the 64-byte header and a payload, in order
//! per pair), so the protocols stay as they are, except that a remote peer's memory cannot be
//! read or written one-sidedly: `locality` says `OtherNode`, and the engine sends it a small or
//! typed message whole, as one eager packet of any size (sent straight from a contiguous buffer
//! when UCX's short protocol takes it at once, `try_send_contiguous`; else copied by the sender,
//! so that the send completes at once; UCX's rendezvous moves a big one into a buffer of ours,
//! `ucx::on_packet`), and a large contiguous one by an Rts. The Rts goes out with the user's buffer as its payload
//! (`ucx::Worker::send_borrowed`, no copy, UCX's rendezvous): the receiver gets the header
//! only, its address replaced by a token, and once the engine has matched it, `read(token)`
//! pulls the payload straight into the receive buffer (`ucx::Worker::receive`), then the
//! engine's Fin completes the send (a typed receive buffer gets it through a bounce buffer the
//! request keeps, unpacked when the pull ends). Matching stays the engine's, in arrival order of the
//! headers (wildcards, probe, cancel as for local peers); an unmatched payload waits on its
//! sender. Large copies and rendezvous receives reuse the worker's buffers (no page faults), and
//! an eager payload is read where UCX received it (`ucx::Payload`).
use super::packet::{Kind, FLAG_FAILED};
use super::ring::SlotHeader;
use super::shm::Shm;
use super::ucx::{Payload, Worker};
use super::{Locality, Transport};
use crate::runtime::segment::Doorbell;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A packet from a remote peer, taken from UCX and not handed to the engine yet.
type Stashed = (usize, SlotHeader, Payload);

/// `SlotHeader::kind` of the transport's own goodbye packet (`Transport::depart`), never handed
/// to the engine; far from the engine's `packet::Kind` values.
const KIND_BYE: u32 = 0x0B7E_0000;

/// Payloads up to this size to another node are first offered to UCX straight from the
/// sender's buffer (`Worker::send_now`): UCX's short protocol over TCP takes up to its 8 KiB
/// segment; a bigger one would only be refused, then copied.
const SEND_NOW_MAX: usize = 8 << 10;

/// The UCX part: which peers are remote, and this rank's worker connected to them.
struct Net {
    remote: Vec<bool>,
    worker: Mutex<Worker>,
    /// Packets UCX delivered, in arrival order (per pair: the order sent). After `worker` in
    /// drop order: payloads still held in UCX's buffers when the rank goes are freed with it.
    stash: Mutex<VecDeque<Stashed>>,
    /// The farewell of MPI_Finalize. A rank whose sends completed may still have packets on
    /// the wire (UCX's rendezvous or a TCP buffer): if it exited then, the peer would lose them,
    /// or a rendezvous receive would fail. So each rank, its sends done, sends every remote peer
    /// a goodbye (after all its packets, in order) and keeps progressing until it has the
    /// goodbye of every remote peer (or knows it failed or disconnected); `take` hands over a
    /// packet only after those before it are fully received. `byes[p]`: goodbyes received from
    /// `p`; `departures`: goodbyes this rank sent to each (a rank may leave more than once, by
    /// sessions after MPI_Finalize).
    byes: Mutex<(Vec<u64>, u64)>,
    on_demand: Mutex<OnDemand>,
    /// Whether `OnDemand::failed` may hold something (a waiter looks often; the lock is rare).
    failed_pulls: AtomicBool,
}

/// The payloads of off-node Rts packets, by the token that replaced the Rts's address
/// (`deliver`): still on their sender until the engine asks (`pull`, `read`), then on their way.
#[derive(Default)]
struct OnDemand {
    waiting: std::collections::HashMap<u64, Payload>,
    /// Pulls under way: the peer and the `Kind::Pulled` header to hand over when done.
    pulling: std::collections::HashMap<u64, (usize, SlotHeader)>,
    /// Pulls UCX failed because the connection to their sender failed, held back until the
    /// launcher has marked the sender failed (`Nodes::release_failed_pulls`): UCX often learns
    /// of a death first, and the receive must then fail as ProcFailed (MPIX_ERR_PROC_FAILED),
    /// not as an unexplained error. Like every other loss of a remote peer, this relies on the
    /// launcher noticing it (its process ended, or its node's agent went).
    failed: Vec<(usize, SlotHeader)>,
    last: u64,
}

pub struct Nodes {
    shm: Shm,
    net: Option<Net>,
}

fn header_bytes(hdr: &SlotHeader) -> [u8; 64] {
    // SAFETY: SlotHeader is repr(C), 64 bytes of plain integers without padding (asserted in
    // `packet`); any of its values is a valid byte array.
    unsafe { std::mem::transmute_copy(hdr) }
}

fn header_from(bytes: &[u8]) -> Option<SlotHeader> {
    if bytes.len() != std::mem::size_of::<SlotHeader>() {
        return None;
    }
    // SAFETY: 64 bytes read unaligned into a repr(C) struct of plain integers, for which every
    // bit pattern is valid.
    Some(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const SlotHeader) })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Net {
    /// Makes UCX progress and moves what arrived into the stash; returns whether UCX did
    /// anything (a send or a one-sided access completed, a packet arrived). A failed send or
    /// receive means a peer is gone: the launcher sees its process end and marks it failed (or
    /// ends the job), which the engine learns through the segment, so the error itself is not
    /// kept.
    fn fetch(&self) -> bool {
        let mut w = lock(&self.worker);
        let mut moved = w.progress().unwrap_or(true);
        if w.idle() {
            // A waiter's empty look (most of them): no stash, no goodbyes, no pulls to visit.
            return moved;
        }
        let mut got = Vec::new();
        let mut byes = Vec::new();
        let mut odd = Vec::new();
        // Straight into the stash (no list per packet in between); the stash's lock is taken
        // under the worker's here and never the other way round.
        let mut arrived = 0;
        {
            let mut stash = lock(&self.stash);
            let _ = w.take(|src, h, d| match header_from(h) {
                Some(hdr) if hdr.kind != KIND_BYE => {
                    stash.push_back((src, hdr, d));
                    arrived += 1;
                }
                hdr => {
                    if hdr.is_some() {
                        byes.push(src);
                    }
                    odd.push(d);
                }
            });
        }
        for d in odd {
            w.release(d);
        }
        let mut pulled = Vec::new();
        w.pulled(|token, ok| pulled.push((token, ok)));
        if !pulled.is_empty() {
            let mut d = lock(&self.on_demand);
            for (token, ok) in pulled {
                if let Some((peer, mut hdr)) = d.pulling.remove(&token) {
                    if !ok {
                        hdr.flags |= FLAG_FAILED;
                        if w.peer_failure(peer).is_some() {
                            d.failed.push((peer, hdr));
                            self.failed_pulls.store(true, Ordering::Relaxed);
                            moved = true;
                            continue;
                        }
                    }
                    got.push((peer, hdr, Payload::Owned(Vec::new())));
                }
            }
        }
        drop(w);
        if !byes.is_empty() {
            let mut b = lock(&self.byes);
            for src in byes {
                if let Some(n) = b.0.get_mut(src) {
                    *n += 1;
                }
            }
            moved = true;
        }
        if got.is_empty() {
            return moved || arrived > 0;
        }
        lock(&self.stash).extend(got);
        true
    }

    /// Hands the stashed packets (of `src` only, if given) to `f`, without holding a lock while
    /// `f` runs (it may send, which locks the worker).
    fn deliver(&self, only: Option<usize>, f: &mut impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        // What is stashed goes first; asking UCX again (a system call over TCP) would only find
        // later packets, which the next poll takes. A waiter's `pending` has just fetched.
        let mine_in = |s: &VecDeque<Stashed>| match only {
            None => !s.is_empty(),
            Some(src) => s.iter().any(|p| p.0 == src),
        };
        let mut s = lock(&self.stash);
        if !mine_in(&s) {
            drop(s);
            self.fetch();
            s = lock(&self.stash);
            if !mine_in(&s) {
                // The stash keeps its deque (and its room): taking it now would leave an empty
                // one, grown again (a malloc) by the next packet's push.
                return false;
            }
        }
        let mut mine: VecDeque<Stashed> = match only {
            // All of it (with one remote peer, always): the stash's own deque, no copy.
            Some(src) if !s.iter().all(|p| p.0 == src) => {
                let (take, keep): (VecDeque<_>, VecDeque<_>) = s.drain(..).partition(|p| p.0 == src);
                *s = keep;
                take
            }
            _ => std::mem::take(&mut *s),
        };
        drop(s);
        for (src, mut hdr, data) in mine.drain(..) {
            if data.on_demand() {
                // An Rts whose payload is still on the sender: its address becomes the token
                // the engine's `read` names it by (kept before `f`, which may read at once).
                let mut d = lock(&self.on_demand);
                d.last += 1;
                let token = d.last;
                hdr.addr = token;
                d.waiting.insert(token, data);
                drop(d);
                f(src, &hdr, std::ptr::null());
            } else {
                f(src, &hdr, data.as_ptr());
                // Copied out by `f`: UCX's buffer goes back, ours is reused (an empty one, as
                // a Pulled notice has, needs nothing).
                if !matches!(&data, Payload::Owned(v) if v.capacity() == 0) {
                    lock(&self.worker).release(data);
                }
            }
        }
        // The deque (empty, its room kept) serves as the stash again if nothing came meanwhile.
        let mut s = lock(&self.stash);
        if s.is_empty() {
            std::mem::swap(&mut *s, &mut mine);
        }
        true
    }
}

impl Nodes {
    /// Shared memory only: every peer is on this node.
    pub fn local(shm: Shm) -> Nodes {
        Nodes { shm, net: None }
    }

    /// Shared memory for the peers where `remote` is false, `worker` (connected to the others)
    /// for the rest.
    pub fn spanning(shm: Shm, remote: Vec<bool>, worker: Worker) -> Nodes {
        let n = remote.len();
        let net = remote.iter().any(|&r| r).then(|| Net { remote, worker: Mutex::new(worker), stash: Mutex::new(VecDeque::new()), byes: Mutex::new((vec![0; n], 0)), on_demand: Mutex::new(Default::default()), failed_pulls: AtomicBool::new(false) });
        Nodes { shm, net }
    }

    /// Connects rank `me`, whose node's peers `shm` reaches, to the ranks of the other nodes
    /// (`node_of`: the node of every world rank) through UCX, exchanging addresses through
    /// `pmi` (collective over the job). `Err` is one line for MPI_Init.
    pub fn connect(shm: Shm, me: usize, node_of: &[usize], pmi: &dyn crate::runtime::pmi::Pmi) -> Result<Nodes, String> {
        // Slots beyond the world (for spawns) are on no other node.
        let mut remote: Vec<bool> = node_of.iter().map(|&n| n != node_of[me]).collect();
        remote.resize(remote.len().max(shm.nranks()), false);
        let others: Vec<usize> = (0..node_of.len()).filter(|&r| remote[r]).collect();
        // UCX's own settings and the user's UCX_* variables. (A TCP_NODELAY passed through
        // ucp_config_modify was never applied by UCX 1.13, which only warned "invalid
        // configuration" in every rank; UCX_TCP_NODELAY in the environment is how to set it.)
        let ctx = super::ucx::Context::new(&[])?;
        let mut worker = Worker::new(ctx, me)?;
        super::ucx_wireup::connect(pmi, &mut worker, &others, super::ucx_wireup::CHUNK)?;
        Ok(Nodes::spanning(shm, remote, worker))
    }

    /// See `Shm::set_same_process` (the ranks of this node are threads of this process).
    pub fn set_same_process(&self, on: bool) {
        self.shm.set_same_process(on);
    }

    /// Whether some peer is on another node.
    pub fn spans_nodes(&self) -> bool {
        self.net.is_some()
    }

    /// Hands over (through the stash) the failed pulls whose sender the launcher has marked
    /// failed since (see `OnDemand::failed`); returns whether there were any.
    #[inline(always)]
    fn release_failed_pulls(&self, net: &Net) -> bool {
        // Relaxed: set and cleared under `on_demand`'s lock, which orders the list itself; a
        // stale false only delays the hand-over to the next look.
        net.failed_pulls.load(Ordering::Relaxed) && self.release_failed_pulls_now(net)
    }

    /// `release_failed_pulls` once some may be there (rare: out of a waiter's every look).
    #[cold]
    fn release_failed_pulls_now(&self, net: &Net) -> bool {
        let mut d = lock(&net.on_demand);
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut d.failed).into_iter().partition(|&(p, _)| self.shm.peer_failed(p));
        net.failed_pulls.store(!later.is_empty(), Ordering::Relaxed);
        d.failed = later;
        drop(d);
        if now.is_empty() {
            return false;
        }
        lock(&net.stash).extend(now.into_iter().map(|(p, h)| (p, h, Payload::Owned(Vec::new()))));
        true
    }

    #[inline(always)]
    fn remote(&self, peer: usize) -> Option<&Net> {
        match &self.net {
            Some(net) if net.remote[peer] => Some(net),
            _ => None,
        }
    }
}

fn off_node(peer: usize) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("rank {peer} is on another node: its memory is not reachable by a one-sided copy"))
}

impl Transport for Nodes {
    const MAX_PAYLOAD: usize = Shm::MAX_PAYLOAD;

    fn nranks(&self) -> usize {
        self.shm.nranks()
    }

    #[inline(always)]
    fn try_send(&self, dest: usize, hdr: &SlotHeader, len: usize, fill: impl FnOnce(*mut u8)) -> bool {
        let Some(net) = self.remote(dest) else {
            return self.shm.try_send(dest, hdr, len, fill);
        };
        let mut w = lock(&net.worker);
        if hdr.kind == Kind::Rts as u32 {
            // The payload stays in the sender's buffer until the receiver, matched, pulls it
            // into its own (`read`); the engine keeps the buffer until the receiver's Fin.
            // SAFETY: an Rts to another node describes a contiguous buffer of `total` bytes at
            // `addr`, valid and unmodified until the Fin (the contract of `Locality::OtherNode`).
            let _ = unsafe { w.send_borrowed(dest, &header_bytes(hdr), hdr.addr as *const u8, hdr.total as usize) };
            return true;
        }
        let mut data = w.buffer(len);
        if len > 0 {
            fill(data.as_mut_ptr());
            // SAFETY: `fill` wrote the `len` bytes (the contract of `try_send`) into the
            // capacity `buffer` reserved (>= len).
            unsafe { data.set_len(len) };
        }
        // UCX queues what it cannot send now; a failed send means the peer is gone (see `fetch`).
        let _ = w.send(dest, &header_bytes(hdr), data);
        true
    }

    #[inline(always)]
    fn try_send_contiguous(&self, dest: usize, hdr: &SlotHeader, src: *const u8, len: usize, fill: impl FnOnce(*mut u8)) -> bool {
        let Some(net) = self.remote(dest) else {
            return self.shm.try_send(dest, hdr, len, fill);
        };
        if len <= SEND_NOW_MAX && hdr.kind != Kind::Rts as u32 {
            // Straight from the caller's bytes when UCX sends them at once (its short
            // protocol): no copy into a buffer of ours, no buffer kept.
            // SAFETY: `src` holds `len` bytes during the call (the contract of this method).
            match unsafe { lock(&net.worker).send_now(dest, &header_bytes(hdr), src, len) } {
                // A failed send means the peer is gone (see `fetch`).
                Ok(true) | Err(_) => return true,
                Ok(false) => {}
            }
        }
        self.try_send(dest, hdr, len, fill)
    }

    fn has_room(&self, dest: usize) -> bool {
        self.remote(dest).is_some() || self.shm.has_room(dest)
    }

    fn want_room(&self, dest: usize, on: bool) {
        if self.remote(dest).is_none() {
            self.shm.want_room(dest, on);
        }
    }

    #[inline]
    fn announce(&self, dest: usize) {
        match self.remote(dest) {
            // Pushes what UCX queued onto the wire; a send UCX completed at once left nothing
            // queued (and progress over TCP costs a system call per send).
            Some(net) => {
                let mut w = lock(&net.worker);
                if w.sends_in_flight() > 0 {
                    let _ = w.progress();
                }
            }
            None => self.shm.announce(dest),
        }
    }

    #[inline]
    fn poll(&self, mut f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        let any = self.shm.poll(&mut f);
        match &self.net {
            Some(net) => {
                self.release_failed_pulls(net);
                net.deliver(None, &mut f) | any
            }
            None => any,
        }
    }

    fn poll_from(&self, src: usize, mut f: impl FnMut(usize, &SlotHeader, *const u8)) -> bool {
        match self.remote(src) {
            Some(net) => {
                self.release_failed_pulls(net);
                net.deliver(Some(src), &mut f)
            }
            None => self.shm.poll_from(src, f),
        }
    }

    fn poll_from_until(&self, src: usize, mut f: impl FnMut(usize, &SlotHeader, *const u8) -> bool) -> bool {
        match self.remote(src) {
            // The network's packets are already out of their channel: all of them.
            Some(net) => {
                self.release_failed_pulls(net);
                net.deliver(Some(src), &mut |s, h, p| {
                    f(s, h, p);
                })
            }
            None => self.shm.poll_from_until(src, f),
        }
    }

    #[inline]
    fn pending(&self) -> bool {
        if self.shm.pending() {
            return true;
        }
        let Some(net) = &self.net else { return false };
        // A completed send is news too: a waiter on it (MPI_Wait, MPI_Finalize's flush) would
        // otherwise yield on, since a rank spanning nodes never sleeps and nothing rings it.
        self.release_failed_pulls(net) | net.fetch() || !lock(&net.stash).is_empty()
    }

    fn locality(&self, peer: usize) -> Locality {
        if self.remote(peer).is_some() {
            return Locality::OtherNode;
        }
        self.shm.locality(peer)
    }

    fn all_same_process(&self) -> bool {
        self.net.is_none() && self.shm.all_same_process()
    }

    fn read(&self, peer: usize, addr: u64, dst: *mut u8, len: usize) -> io::Result<()> {
        if let Some(net) = self.remote(peer) {
            // The payload of the Rts whose address `deliver` replaced by `addr`.
            let Some(p) = lock(&net.on_demand).waiting.remove(&addr) else {
                return Err(io::Error::new(io::ErrorKind::NotFound, format!("no payload from rank {peer} under token {addr}")));
            };
            let mut w = lock(&net.worker);
            // SAFETY: `dst` holds `len` bytes (the contract of `read`).
            return unsafe { w.receive(p, dst, len) }.map_err(io::Error::other);
        }
        self.shm.read(peer, addr, dst, len)
    }

    fn pull(&self, peer: usize, addr: u64, dst: *mut u8, len: usize, done: &SlotHeader) -> io::Result<()> {
        let Some(net) = self.remote(peer) else {
            return Err(off_node(peer));
        };
        let p = {
            let mut d = lock(&net.on_demand);
            let Some(p) = d.waiting.remove(&addr) else {
                return Err(io::Error::new(io::ErrorKind::NotFound, format!("no payload from rank {peer} under token {addr}")));
            };
            // Known before it can finish (`fetch` looks it up).
            d.pulling.insert(addr, (peer, *done));
            p
        };
        // SAFETY: `dst` holds `len` bytes until `done` is handed over (the contract of `pull`).
        let started = unsafe { lock(&net.worker).receive_start(p, dst, len, addr) };
        if matches!(started, Ok(false)) {
            return Ok(());
        }
        // Done (or failed) at once: `done` goes with the next poll.
        let (peer, mut hdr) = lock(&net.on_demand).pulling.remove(&addr).expect("inserted above");
        if started.is_err() {
            hdr.flags |= FLAG_FAILED;
        }
        lock(&net.stash).push_back((peer, hdr, Payload::Owned(Vec::new())));
        Ok(())
    }

    fn drop_payload(&self, peer: usize, addr: u64) {
        if let Some(net) = self.remote(peer) {
            if let Some(p) = lock(&net.on_demand).waiting.remove(&addr) {
                lock(&net.worker).release(p);
            }
        }
    }

    fn write(&self, peer: usize, addr: u64, src: *const u8, len: usize) -> io::Result<()> {
        if self.remote(peer).is_some() {
            return Err(off_node(peer));
        }
        self.shm.write(peer, addr, src, len)
    }

    fn transfer_pieces<L, R>(&self, read: bool, peer: usize, start: usize, end: usize, local: impl Fn(usize, usize) -> L, remote: impl Fn(usize, usize) -> R) -> io::Result<()>
    where
        L: Iterator<Item = (u64, usize)>,
        R: Iterator<Item = (u64, usize)>,
    {
        if self.remote(peer).is_some() {
            return Err(off_node(peer));
        }
        self.shm.transfer_pieces(read, peer, start, end, local, remote)
    }

    #[inline]
    fn doorbell(&self) -> &Doorbell {
        self.shm.doorbell()
    }

    fn wake(&self, peer: usize) {
        // A remote rank polls its worker while it waits (it never sleeps on a futex).
        if self.remote(peer).is_none() {
            self.shm.wake(peer);
        }
    }

    #[inline]
    fn failure_epoch(&self) -> u32 {
        self.shm.failure_epoch()
    }

    fn sends_pending(&self) -> bool {
        // A large payload goes by UCX's rendezvous, which needs the sender's progress until the
        // receiver has pulled it; a send to a dead peer fails and stops being pending.
        self.net.as_ref().is_some_and(|net| {
            let mut w = lock(&net.worker);
            let _ = w.progress();
            w.sends_in_flight() > 0
        })
    }

    fn peer_failed(&self, peer: usize) -> bool {
        self.shm.peer_failed(peer)
    }

    fn depart(&self) {
        let Some(net) = &self.net else { return };
        lock(&net.byes).1 += 1;
        let hdr = header_bytes(&SlotHeader { kind: KIND_BYE, ..Default::default() });
        let mut w = lock(&net.worker);
        for peer in (0..net.remote.len()).filter(|&p| net.remote[p]) {
            // A failed send: the peer is gone, and `all_departed` does not wait for it.
            let _ = w.send(peer, &hdr, Vec::new());
        }
        let _ = w.progress();
    }

    fn all_departed(&self) -> bool {
        let Some(net) = &self.net else { return true };
        net.fetch();
        let w = lock(&net.worker);
        let b = lock(&net.byes);
        // Our goodbyes must be out too (a send completes once UCX no longer needs us), else the
        // peer waits for them in vain.
        w.sends_in_flight() == 0
            && (0..net.remote.len()).all(|p| !net.remote[p] || b.0[p] >= b.1 || self.shm.peer_failed(p) || w.peer_failure(p).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_through_bytes() {
        let h = SlotHeader { kind: 3, tag: -7, context: 9, flags: 5, len: 1 << 40, total: 77, sreq: 1, rreq: 2, addr: 3, offset: 4 };
        let b = header_bytes(&h);
        let back = header_from(&b).unwrap();
        assert_eq!(header_bytes(&back), b);
        assert!(header_from(&b[..63]).is_none());
    }

    /// Rank 0 and rank 1 as two nodes of one job: each its own segment, the peer through UCX
    /// over TCP.
    fn two_nodes() -> (Nodes, Nodes) {
        use crate::runtime::segment::Segment;
        use std::sync::Arc;
        let (a, b) = crate::transport::ucx::tests::pair("tcp");
        let shm = |me| Shm::new(Arc::new(Segment::anonymous(2, super::super::shm::geometry(2)).unwrap()), me);
        (Nodes::spanning(shm(0), vec![false, true], a), Nodes::spanning(shm(1), vec![true, false], b))
    }

    #[test]
    fn an_empty_poll_keeps_the_stash_and_its_room() {
        let (a, b) = two_nodes();
        let hdr = SlotHeader { kind: Kind::Eager as u32, tag: 5, len: 8, total: 8, ..Default::default() };
        // SAFETY (the fill): `try_send` hands it room for the 8 bytes asked for.
        assert!(a.try_send(1, &hdr, 8, |p| unsafe { std::ptr::copy_nonoverlapping([7u8; 8].as_ptr(), p, 8) }));
        let mut got = Vec::new();
        while got.is_empty() {
            a.announce(1);
            b.poll(|src, h, p| {
                // SAFETY: an eager packet's payload of `len` bytes, readable during the call.
                let bytes = unsafe { std::slice::from_raw_parts(p, h.len as usize) };
                got.push((src, h.tag, bytes.to_vec()));
            });
        }
        assert_eq!(got, vec![(0, 5, vec![7u8; 8])]);
        let net = b.net.as_ref().unwrap();
        let room = lock(&net.stash).capacity();
        assert!(room > 0, "the delivered packets' deque serves as the stash again");
        // Nothing more arrived: the polls find nothing and leave the stash's deque in place
        // (it was taken and dropped, so that the next packet grew a new one).
        assert!(!b.poll(|_, _, _| panic!("nothing was sent")));
        assert!(!b.poll_from(0, |_, _, _| panic!("nothing was sent")));
        assert_eq!(lock(&net.stash).capacity(), room);
    }
}
