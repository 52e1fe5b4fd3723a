//! UCX (its UCP layer) as the carrier of off-node traffic: one worker per rank, an endpoint per
//! remote peer, packets (a small header and a payload) as UCP active messages, delivered to the
//! receiver in the order sent per pair. UCP chooses the wire (TCP, InfiniBand, RoCE, or its own
//! shared memory when the "nodes" share a machine) and the protocol (eager, or rendezvous for big
//! payloads, which this module receives straight into the packet's buffer).
//!
//! libucp is loaded at run time (`ucx_sys`, bindings made by bindgen), and only by a job that
//! spans nodes: liboxmpi does not depend on it, and a machine without UCX runs one-node jobs.
//! Every call goes through a `Worker`, which is single-threaded (UCS_THREAD_MODE_SINGLE): its owner
//! serialises the calls (the engine's lock).
use super::ucx_sys as sys;
mod rma;
use std::collections::VecDeque;
use std::ffi::{c_void, CStr, CString};
use std::os::fd::RawFd;
use std::sync::OnceLock;

/// UCP's library, as Debian's libucx0 installs it.
pub const LIBRARY: &str = "libucp.so.0";
/// The Debian package that has it.
pub const PACKAGE: &str = "libucx0";
/// The active-message id of packets.
const AM_PACKET: u32 = 0;
/// Bytes before the caller's header in a packet's AM header: the sender's index, and
/// `ON_DEMAND`.
const SRC_BYTES: usize = 4;
/// Set in the sender's index of a packet sent by `send_borrowed`: its payload goes by UCX's
/// rendezvous and stays on the sender until the receiver asks for it (`Worker::receive`).
const ON_DEMAND: u32 = 1 << 31;

/// The loaded library, or why it could not be loaded (one line, naming what to install).
pub fn library() -> Result<&'static sys::UcpLib, String> {
    static LIB: OnceLock<Result<sys::UcpLib, String>> = OnceLock::new();
    LIB.get_or_init(|| load(LIBRARY)).as_ref().map_err(Clone::clone)
}

fn load(name: &str) -> Result<sys::UcpLib, String> {
    // SAFETY: loading libucp runs its constructors (UCX's global init), which expect nothing of
    // the caller; the bindings match UCP API 1.13, whose symbols later 1.x releases keep.
    unsafe { sys::UcpLib::new(name) }.map_err(|e| format!("this job spans nodes, which needs UCX, but {name} cannot be loaded ({e}); install Debian package {PACKAGE} (or run every rank on one node)"))
}

/// `status` as UCX words it.
fn status_text(lib: &sys::UcpLib, status: sys::ucs_status_t) -> String {
    // SAFETY: ucs_status_string returns a static NUL-terminated string for any status value.
    unsafe { CStr::from_ptr(lib.ucs_status_string(status)) }.to_string_lossy().into_owned()
}

fn check(lib: &sys::UcpLib, status: sys::ucs_status_t, what: &str) -> Result<(), String> {
    if status == sys::UCS_OK {
        Ok(())
    } else {
        Err(format!("UCX {what} failed: {}", status_text(lib, status)))
    }
}

/// What a `ucs_status_ptr_t` holds (UCS_PTR_IS_ERR / UCS_PTR_IS_PTR of ucs/type/status.h).
enum StatusPtr {
    Done,
    Failed(sys::ucs_status_t),
    Request(*mut c_void),
}

fn status_ptr(p: sys::ucs_status_ptr_t) -> StatusPtr {
    let v = p as usize;
    if v == 0 {
        StatusPtr::Done
    } else if v >= sys::UCS_ERR_LAST as isize as usize {
        StatusPtr::Failed(v as isize as sys::ucs_status_t)
    } else {
        StatusPtr::Request(p)
    }
}

/// A UCP context: the library's state for one rank (its transports and resources).
pub struct Context {
    lib: &'static sys::UcpLib,
    h: sys::ucp_context_h,
}

// SAFETY: the context is used only to make workers and is torn down once, by its owner; UCP
// contexts are not tied to the thread that made them.
unsafe impl Send for Context {}

impl Context {
    /// A context for active messages and RMA, with UCX's configuration from the environment
    /// (UCX_TLS, UCX_NET_DEVICES, ...) and then `settings` (names without the UCX_ prefix).
    pub fn new(settings: &[(&str, &str)]) -> Result<Context, String> {
        let lib = library()?;
        // The ranks of a threads-mode node make their contexts at once; UCX's configuration
        // parsing and global registries are safer entered by one thread at a time.
        static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = MAKING.lock().unwrap_or_else(|p| p.into_inner());
        let mut config: *mut sys::ucp_config_t = std::ptr::null_mut();
        // SAFETY: null prefix and file mean UCX's defaults; `config` receives the new config.
        check(lib, unsafe { lib.ucp_config_read(std::ptr::null(), std::ptr::null(), &mut config) }, "config_read")?;
        let result = (|| {
            for (name, value) in settings {
                let (n, v) = (CString::new(*name).map_err(|e| e.to_string())?, CString::new(*value).map_err(|e| e.to_string())?);
                // SAFETY: `config` is the live configuration read above; both strings are
                // NUL-terminated and UCX copies them.
                check(lib, unsafe { lib.ucp_config_modify(config, n.as_ptr(), v.as_ptr()) }, &format!("setting {name}={value}"))?;
            }
            // SAFETY: an all-zero ucp_params_t is a valid "no field set" value (plain integers,
            // null pointers and None callbacks); the fields used are flagged in field_mask.
            let mut params: sys::ucp_params_t = unsafe { std::mem::zeroed() };
            params.field_mask = sys::UCP_PARAM_FIELD_FEATURES as u64;
            params.features = (sys::UCP_FEATURE_AM | sys::UCP_FEATURE_RMA | sys::UCP_FEATURE_WAKEUP) as u64;
            let mut h: sys::ucp_context_h = std::ptr::null_mut();
            // SAFETY: params and config are valid for the call; `h` receives the context.
            check(lib, unsafe { lib.ucp_init_version(sys::UCP_API_MAJOR, sys::UCP_API_MINOR, &params, config, &mut h) }, "init")?;
            Ok(Context { lib, h })
        })();
        // SAFETY: `config` came from ucp_config_read; ucp_init copied what it needed.
        unsafe { lib.ucp_config_release(config) };
        result
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the context's workers are gone (a Worker owns its Context and drops its
        // handle first).
        unsafe { self.lib.ucp_cleanup(self.h) };
    }
}

/// Buffers of at least this many bytes are kept for reuse (`Spare`): a fresh one of a few
/// hundred KiB comes from mmap, and filling it faults in every page (a quarter of the CPU time
/// of a 4 MiB windowed bandwidth run, both sides); smaller ones come from malloc's free lists.
const SPARE_MIN: usize = 64 << 10;
/// At most this many bytes are kept for reuse (a window of 16 sends of 4 MiB in flight).
const SPARE_BYTES: usize = 64 << 20;

/// Large buffers whose packets are done, for the next sends' copies and rendezvous receives.
#[derive(Default)]
struct Spare {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
    /// Small buffers (below SPARE_MIN, at most SMALL_KEPT): a small send's copy goes back at
    /// once (UCX copied it into its own), so one buffer serves send after send without a
    /// malloc and free each.
    small: Vec<Vec<u8>>,
}

/// Small buffers kept for reuse.
const SMALL_KEPT: usize = 8;

impl Spare {
    /// A buffer of capacity >= `len` (the smallest kept that fits, or a new one), its length
    /// whatever of it is initialised (at most its capacity).
    fn take(&mut self, len: usize) -> Vec<u8> {
        if len >= SPARE_MIN {
            let best = (0..self.bufs.len()).filter(|&i| self.bufs[i].capacity() >= len).min_by_key(|&i| self.bufs[i].capacity());
            if let Some(i) = best {
                let v = self.bufs.swap_remove(i);
                self.bytes -= v.capacity();
                return v;
            }
        } else if let Some(i) = self.small.iter().position(|v| v.capacity() >= len) {
            return self.small.swap_remove(i);
        }
        Vec::with_capacity(len)
    }

    fn put(&mut self, v: Vec<u8>) {
        let cap = v.capacity();
        if cap >= SPARE_MIN && self.bytes + cap <= SPARE_BYTES {
            self.bytes += cap;
            self.bufs.push(v);
        } else if cap > 0 && cap < SPARE_MIN && self.small.len() < SMALL_KEPT {
            self.small.push(v);
        }
    }
}

/// A packet's payload, as `Worker::take` hands it over; given back through `Worker::release`
/// once read (else a held one stays UCX's until the worker goes).
pub enum Payload {
    /// Our own bytes: a rendezvous payload received straight into them, or none.
    Owned(Vec<u8>),
    /// An eager payload left where UCX received (or reassembled) it: no copy.
    Held(Held),
    /// A payload of `send_borrowed`, still on the sender: `Worker::receive` moves it straight
    /// into the caller's buffer (UCX's rendezvous descriptor, kept by returning UCS_INPROGRESS).
    OnDemand(Held),
}

/// UCX's receive buffer of an eager payload (UCP_AM_RECV_ATTR_FLAG_DATA), kept by returning
/// UCS_INPROGRESS from the handler.
pub struct Held {
    ptr: *mut c_void,
    len: usize,
}

// SAFETY: only an address and a length; the bytes are read, and released through the worker,
// by whoever holds the worker's lock (the worker itself is Send for the same reason).
unsafe impl Send for Held {}

impl Payload {
    /// The first byte (dangling but non-null when empty).
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            Payload::Owned(v) => v.as_ptr(),
            Payload::Held(h) => h.ptr as *const u8,
            // Not bytes: nothing may be read there before `receive`.
            Payload::OnDemand(_) => std::ptr::NonNull::dangling().as_ptr(),
        }
    }

    /// Whether the bytes are still on the sender (`Worker::receive` fetches them).
    pub fn on_demand(&self) -> bool {
        matches!(self, Payload::OnDemand(_))
    }

    /// The payload's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Payload::Owned(v) => v.len(),
            Payload::Held(h) | Payload::OnDemand(h) => h.len,
        }
    }

    /// Whether the payload has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes.
    ///
    /// # Safety
    /// The worker that handed this payload over is alive (a held payload is UCX's memory,
    /// freed with the worker).
    pub unsafe fn bytes(&self) -> &[u8] {
        match self {
            Payload::Owned(v) => v,
            // SAFETY: UCX's buffer of `len` bytes, kept until released (caller's contract).
            Payload::Held(h) => unsafe { std::slice::from_raw_parts(h.ptr as *const u8, h.len) },
            Payload::OnDemand(_) => &[],
        }
    }
}

/// A packet that arrived: the sender's index, header and payload. A rendezvous payload is still
/// being received while `recv` is set.
struct Arrival {
    src: usize,
    header: Vec<u8>,
    data: Payload,
    recv: Option<*mut c_void>,
}

/// What the active-message handler needs; boxed, so that its address (the handler's argument)
/// stays put while the `Worker` moves.
struct Inbox {
    lib: &'static sys::UcpLib,
    worker: sys::ucp_worker_h,
    arrivals: VecDeque<Arrival>,
    /// A rendezvous receive UCX refused (the sender will see its send fail too).
    error: Option<String>,
    /// Payloads that came by rendezvous (for tests and monitoring).
    rendezvous: u64,
    /// Eager payloads kept in UCX's buffers rather than copied (for tests).
    held: u64,
    /// Payloads left on their sender until asked for (for tests).
    on_demand: u64,
    /// Buffers to reuse (sends' copies, rendezvous receives).
    spare: Spare,
    /// Header buffers of packets handed over (`Worker::take`), for the next arrivals: no
    /// allocation per packet.
    headers: Vec<Vec<u8>>,
}

/// Header buffers kept for reuse.
const HEADERS_KEPT: usize = 64;

/// A send UCX has not completed: the buffers it reads from, kept until it has.
struct Pending {
    req: *mut c_void,
    _header: Vec<u8>,
    _data: Vec<u8>,
}

/// A receive of `receive_start` UCX has not completed, into `dst` or through `bounce`.
struct Pull {
    req: *mut c_void,
    token: u64,
    bounce: Option<Vec<u8>>,
    dst: *mut u8,
    len: usize,
}

/// Copies the first `len` bytes of a pull's bounce buffer, if it had one, to `dst`.
fn finish_pull(bounce: &Option<Vec<u8>>, dst: *mut u8, len: usize) {
    if let Some(b) = bounce {
        // SAFETY: the bounce holds the payload's length > `len` bytes; `dst` holds `len`
        // (`receive_start`'s contract).
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst, len) };
    }
}

/// Set by UCX when the connection to a peer fails (a dead process, a lost link).
struct PeerState {
    failed: std::cell::Cell<sys::ucs_status_t>,
}

/// One rank's UCP worker and its endpoints, indexed as the caller numbers its peers.
pub struct Worker {
    lib: &'static sys::UcpLib,
    h: sys::ucp_worker_h,
    me: u32,
    inbox: Box<Inbox>,
    eps: Vec<Option<(sys::ucp_ep_h, Box<PeerState>)>>,
    pending: Vec<Pending>,
    pulls: Vec<Pull>,
    /// The header buffer of `send`, reused while UCX completes sends at once.
    hdr_spare: Vec<u8>,
    rma: rma::Rma,
    // Dropped last: the context outlives its worker.
    _ctx: Context,
}

// SAFETY: a single-threaded UCP worker may move between threads as long as one thread at a time
// calls it, which `&mut self` on every call that reaches UCX guarantees.
unsafe impl Send for Worker {}

impl Worker {
    /// A worker of `ctx` for the rank with index `me`, its packet handler installed.
    pub fn new(ctx: Context, me: usize) -> Result<Worker, String> {
        let lib = ctx.lib;
        // SAFETY: an all-zero ucp_worker_params_t is "no field set"; thread_mode is flagged.
        let mut params: sys::ucp_worker_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = sys::UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
        params.thread_mode = sys::UCS_THREAD_MODE_SINGLE;
        let mut h: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: a live context, valid params; `h` receives the worker.
        check(lib, unsafe { lib.ucp_worker_create(ctx.h, &params, &mut h) }, "worker_create")?;
        let mut w = Worker { lib, h, me: me as u32, inbox: Box::new(Inbox { lib, worker: h, arrivals: VecDeque::new(), error: None, rendezvous: 0, held: 0, on_demand: 0, spare: Spare::default(), headers: Vec::new() }), eps: Vec::new(), pending: Vec::new(), pulls: Vec::new(), hdr_spare: Vec::new(), rma: Default::default(), _ctx: ctx };
        // SAFETY: as above, all-zero is "no field set".
        let mut am: sys::ucp_am_handler_param_t = unsafe { std::mem::zeroed() };
        am.field_mask = (sys::UCP_AM_HANDLER_PARAM_FIELD_ID | sys::UCP_AM_HANDLER_PARAM_FIELD_CB | sys::UCP_AM_HANDLER_PARAM_FIELD_ARG | sys::UCP_AM_HANDLER_PARAM_FIELD_FLAGS) as u64;
        am.id = AM_PACKET;
        // Whole messages, and their eager payloads kept for us (UCX copies one only when its
        // transport cannot lend its receive buffer): the engine reads them without our copy.
        am.flags = sys::UCP_AM_FLAG_WHOLE_MSG | sys::UCP_AM_FLAG_PERSISTENT_DATA;
        am.cb = Some(on_packet);
        am.arg = &mut *w.inbox as *mut Inbox as *mut c_void;
        // SAFETY: the worker is live; `arg` points into the boxed inbox, which lives as long as
        // the worker (dropped after it is destroyed).
        check(lib, unsafe { lib.ucp_worker_set_am_recv_handler(w.h, &am) }, "set_am_recv_handler")?;
        Ok(w)
    }

    /// This worker's address, for the peers to connect to (an opaque blob of UCX's).
    pub fn address(&self) -> Result<Vec<u8>, String> {
        let mut addr: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: a live worker; UCX allocates the address and gives its length.
        check(self.lib, unsafe { self.lib.ucp_worker_get_address(self.h, &mut addr, &mut len) }, "worker_get_address")?;
        // SAFETY: UCX wrote `len` bytes at `addr`, released right after the copy.
        let out = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
        // SAFETY: `addr` came from ucp_worker_get_address of this worker.
        unsafe { self.lib.ucp_worker_release_address(self.h, addr) };
        Ok(out)
    }

    /// Connects to peer `peer`, whose worker published `address`.
    pub fn connect(&mut self, peer: usize, address: &[u8]) -> Result<(), String> {
        if self.eps.len() <= peer {
            self.eps.resize_with(peer + 1, || None);
        }
        if self.eps[peer].is_some() {
            return Err(format!("UCX: peer {peer} is already connected"));
        }
        let state = Box::new(PeerState { failed: std::cell::Cell::new(sys::UCS_OK) });
        // SAFETY: all-zero ucp_ep_params_t is "no field set"; the fields used are flagged.
        let mut params: sys::ucp_ep_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = (sys::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | sys::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | sys::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
        params.address = address.as_ptr() as *const sys::ucp_address_t;
        params.err_mode = sys::UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler = sys::ucp_err_handler_t { cb: Some(on_peer_error), arg: &*state as *const PeerState as *mut c_void };
        let mut ep: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: a live worker; `address` is a worker address blob that UCX copies; the error
        // handler's argument is the boxed state kept next to the endpoint until it is closed.
        check(self.lib, unsafe { self.lib.ucp_ep_create(self.h, &params, &mut ep) }, &format!("connecting to peer {peer}"))?;
        self.eps[peer] = Some((ep, state));
        Ok(())
    }

    /// Whether the connection to `peer` failed (UCX's word for why), once UCX noticed.
    pub fn peer_failure(&self, peer: usize) -> Option<String> {
        let (_, state) = self.eps.get(peer)?.as_ref()?;
        let s = state.failed.get();
        (s != sys::UCS_OK).then(|| status_text(self.lib, s))
    }

    /// The endpoint to `peer`, if connected and not failed.
    fn endpoint(&self, peer: usize) -> Result<sys::ucp_ep_h, String> {
        match self.eps.get(peer) {
            Some(Some((ep, state))) if state.failed.get() == sys::UCS_OK => Ok(*ep),
            Some(Some(_)) => Err(format!("UCX: the connection to peer {peer} failed: {}", self.peer_failure(peer).unwrap_or_default())),
            _ => Err(format!("UCX: peer {peer} is not connected")),
        }
    }

    /// Sends one packet to `peer`: `header` (at most a few hundred bytes) and `data`, which this
    /// worker keeps until UCX is done with it. Packets to one peer arrive in the order sent.
    pub fn send(&mut self, peer: usize, header: &[u8], data: Vec<u8>) -> Result<(), String> {
        let ep = self.endpoint(peer)?;
        // The header buffer of the last send UCX completed at once (it copied the header).
        let mut hdr = std::mem::take(&mut self.hdr_spare);
        hdr.clear();
        hdr.extend_from_slice(&self.me.to_le_bytes());
        hdr.extend_from_slice(header);
        // SAFETY: all-zero ucp_request_param_t is "no attribute set": contiguous bytes, no
        // callback (completion is polled in `progress`).
        let param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        // SAFETY: a live endpoint of this worker; header and data stay valid until the send
        // completes (kept in `pending` if it does not complete now).
        let p = unsafe { self.lib.ucp_am_send_nbx(ep, AM_PACKET, hdr.as_ptr() as *const c_void, hdr.len(), data.as_ptr() as *const c_void, data.len(), &param) };
        match status_ptr(p) {
            StatusPtr::Done => {
                self.inbox.spare.put(data);
                self.hdr_spare = hdr;
                Ok(())
            }
            StatusPtr::Failed(s) => Err(format!("UCX send to peer {peer} failed: {}", status_text(self.lib, s))),
            StatusPtr::Request(req) => {
                self.pending.push(Pending { req, _header: hdr, _data: data });
                Ok(())
            }
        }
    }

    /// Sends one packet to `peer` straight from the `len` bytes at `data` if UCX can complete
    /// the send at once (its short protocol, the bytes on their way when this returns):
    /// Ok(true). Ok(false): nothing was sent (too big for that, or sends are queued ahead of
    /// it); send a copy with `send` instead, which keeps the order.
    ///
    /// # Safety
    /// `data` is readable for `len` bytes during the call (or `len` is 0).
    pub unsafe fn send_now(&mut self, peer: usize, header: &[u8], data: *const u8, len: usize) -> Result<bool, String> {
        let ep = self.endpoint(peer)?;
        let mut hdr = std::mem::take(&mut self.hdr_spare);
        hdr.clear();
        hdr.extend_from_slice(&self.me.to_le_bytes());
        hdr.extend_from_slice(header);
        // SAFETY: all-zero is "no attribute set"; the one flag asks UCX to complete the send
        // before returning or not to start it at all (UCS_ERR_NO_RESOURCE).
        let mut param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        param.op_attr_mask = sys::UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
        // SAFETY: a live endpoint of this worker; header and data are read during the call only
        // (an immediate completion means UCX no longer needs them).
        let p = unsafe { self.lib.ucp_am_send_nbx(ep, AM_PACKET, hdr.as_ptr() as *const c_void, hdr.len(), data as *const c_void, len, &param) };
        self.hdr_spare = hdr;
        match status_ptr(p) {
            StatusPtr::Done => Ok(true),
            StatusPtr::Failed(sys::UCS_ERR_NO_RESOURCE) => Ok(false),
            StatusPtr::Failed(s) => Err(format!("UCX send to peer {peer} failed: {}", status_text(self.lib, s))),
            StatusPtr::Request(req) => {
                // Not expected with FORCE_IMM_CMPL; the request is UCX's until it completes, and
                // it reads the caller's bytes: wait for it here rather than let them go.
                loop {
                    // SAFETY: a live worker (`&mut self`) and a request of it not freed yet.
                    unsafe { self.lib.ucp_worker_progress(self.h) };
                    // SAFETY: as above.
                    let s = unsafe { self.lib.ucp_request_check_status(req) };
                    if s != sys::UCS_INPROGRESS {
                        // SAFETY: completed; freed once.
                        unsafe { self.lib.ucp_request_free(req) };
                        return if s == sys::UCS_OK { Ok(true) } else { Err(format!("UCX send to peer {peer} failed: {}", status_text(self.lib, s))) };
                    }
                }
            }
        }
    }

    /// Sends one packet to `peer` whose payload, `len` bytes at `data`, is not copied: it stays
    /// where it is until the receiver asks for it (`Payload::OnDemand`, `receive`), through
    /// UCX's rendezvous. Packets to one peer still arrive in the order sent.
    ///
    /// # Safety
    /// The `len` bytes at `data` stay valid and unmodified until the receiver has them (its
    /// `receive` returned, which the caller learns by a packet of its own back) or the send
    /// failed.
    pub unsafe fn send_borrowed(&mut self, peer: usize, header: &[u8], data: *const u8, len: usize) -> Result<(), String> {
        let ep = self.endpoint(peer)?;
        let mut hdr = Vec::with_capacity(SRC_BYTES + header.len());
        hdr.extend_from_slice(&(self.me | ON_DEMAND).to_le_bytes());
        hdr.extend_from_slice(header);
        // SAFETY: all-zero is "no attribute set"; the flags field is flagged: rendezvous even
        // for a small payload, so that the receiver gets a descriptor and not the bytes.
        let mut param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        param.op_attr_mask = sys::UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = sys::UCP_AM_SEND_FLAG_RNDV;
        // SAFETY: a live endpoint of this worker; the header is kept in `pending` until the send
        // completes, the data by the caller (this function's contract).
        let p = unsafe { self.lib.ucp_am_send_nbx(ep, AM_PACKET, hdr.as_ptr() as *const c_void, hdr.len(), data as *const c_void, len, &param) };
        match status_ptr(p) {
            StatusPtr::Done => Ok(()),
            StatusPtr::Failed(s) => Err(format!("UCX send to peer {peer} failed: {}", status_text(self.lib, s))),
            StatusPtr::Request(req) => {
                self.pending.push(Pending { req, _header: hdr, _data: Vec::new() });
                Ok(())
            }
        }
    }

    /// Starts moving payload `p` (from `take`) into the `len` bytes at `dst`, under the caller's
    /// name `token`: an on-demand one straight from its sender, any other by a copy at once.
    /// `len` may be less than the payload's length (the rest is dropped). Ok(true): done now;
    /// Ok(false): `pulled` names `token` once done. `Err`: failed at once.
    ///
    /// # Safety
    /// `dst` is valid for writes of `len` bytes until done (or until the worker is dropped).
    pub unsafe fn receive_start(&mut self, p: Payload, dst: *mut u8, len: usize, token: u64) -> Result<bool, String> {
        let Payload::OnDemand(h) = p else {
            // SAFETY: this worker handed the payload over; `dst` holds `len` bytes (contract).
            unsafe { std::ptr::copy_nonoverlapping(p.bytes().as_ptr(), dst, len.min(p.len())) };
            self.release(p);
            return Ok(true);
        };
        // UCX takes a receive buffer of the whole length only.
        let mut bounce = (len < h.len).then(|| vec![0u8; h.len]);
        let target = bounce.as_mut().map_or(dst, |b| b.as_mut_ptr());
        // SAFETY: all-zero is "no attribute set" (contiguous bytes, completion polled).
        let rp: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        // SAFETY: `h.ptr` is a rendezvous descriptor UCX let us keep (UCS_INPROGRESS in
        // `on_packet`), used once (`p` is consumed); `target` holds `h.len` bytes and stays put
        // until the request completes (the bounce's heap block moves with the Vec, not its
        // bytes; `dst` by the caller's contract).
        let r = unsafe { self.lib.ucp_am_recv_data_nbx(self.h, h.ptr, target as *mut c_void, h.len, &rp) };
        match status_ptr(r) {
            StatusPtr::Done => {
                finish_pull(&bounce, dst, len);
                Ok(true)
            }
            StatusPtr::Failed(s) => Err(format!("UCX: receiving a {}-byte payload failed: {}", h.len, status_text(self.lib, s))),
            StatusPtr::Request(req) => {
                self.pulls.push(Pull { req, token, bounce, dst, len });
                Ok(false)
            }
        }
    }

    /// Hands `f(token, ok)` every receive of `receive_start` that finished since (`ok`: the
    /// bytes are in place).
    pub fn pulled(&mut self, mut f: impl FnMut(u64, bool)) {
        let mut i = 0;
        while i < self.pulls.len() {
            // SAFETY: a receive request of this worker not freed yet.
            let s = unsafe { self.lib.ucp_request_check_status(self.pulls[i].req) };
            if s == sys::UCS_INPROGRESS {
                i += 1;
                continue;
            }
            let p = self.pulls.swap_remove(i);
            // SAFETY: completed; freed once.
            unsafe { self.lib.ucp_request_free(p.req) };
            if s == sys::UCS_OK {
                finish_pull(&p.bounce, p.dst, p.len);
            }
            f(p.token, s == sys::UCS_OK);
        }
    }

    /// `receive_start`, waiting (progressing UCX) until the payload is in place.
    ///
    /// # Safety
    /// `dst` is valid for writes of `len` bytes.
    pub unsafe fn receive(&mut self, p: Payload, dst: *mut u8, len: usize) -> Result<(), String> {
        const WAITING: u64 = u64::MAX;
        // SAFETY: the caller's contract; the wait below outlasts the receive.
        if unsafe { self.receive_start(p, dst, len, WAITING) }? {
            return Ok(());
        }
        loop {
            // SAFETY: a live worker, from its one thread at a time (`&mut self`).
            unsafe { self.lib.ucp_worker_progress(self.h) };
            let i = self.pulls.iter().position(|p| p.token == WAITING).expect("started above");
            // SAFETY: a receive request of this worker not freed yet.
            let s = unsafe { self.lib.ucp_request_check_status(self.pulls[i].req) };
            if s == sys::UCS_INPROGRESS {
                continue;
            }
            let p = self.pulls.swap_remove(i);
            // SAFETY: completed; freed once.
            unsafe { self.lib.ucp_request_free(p.req) };
            if s != sys::UCS_OK {
                return Err(format!("UCX: receiving a payload failed: {}", status_text(self.lib, s)));
            }
            finish_pull(&p.bounce, p.dst, p.len);
            return Ok(());
        }
    }

    /// Number of payloads left on their sender until asked for, so far.
    pub fn on_demand_received(&self) -> u64 {
        self.inbox.on_demand
    }

    /// Number of payloads received by rendezvous so far.
    pub fn rendezvous_received(&self) -> u64 {
        self.inbox.rendezvous
    }

    /// Number of eager payloads handed over in UCX's own buffers so far.
    pub fn held_received(&self) -> u64 {
        self.inbox.held
    }

    /// An empty buffer with room for `len` bytes, for the payload of a `send` (a large one is
    /// reused, its pages already mapped).
    pub fn buffer(&mut self, len: usize) -> Vec<u8> {
        let mut v = self.inbox.spare.take(len);
        v.clear();
        v
    }

    /// Gives back a payload `take` handed over, once read.
    pub fn release(&mut self, p: Payload) {
        match p {
            Payload::Owned(v) => self.inbox.spare.put(v),
            // SAFETY: a buffer UCX let this worker keep (UCS_INPROGRESS in `on_packet`),
            // released once (`p` is consumed).
            // SAFETY: as above: a rendezvous descriptor is given back the same way (UCX then
            // lets the sender's send complete without the bytes).
            Payload::Held(h) | Payload::OnDemand(h) => unsafe { self.lib.ucp_am_data_release(self.h, h.ptr) },
        }
    }

    /// Number of sends UCX has not completed yet.
    pub fn sends_in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Makes UCX progress (sends, receives, connections) one pass; returns whether anything
    /// happened. `Err` when a send failed (its peer is gone) or a payload could not be received.
    /// One pass, not until idle: over TCP each pass is an `epoll_wait`, and a second one after
    /// a packet arrived would only delay handing it over (the callers poll again anyway).
    pub fn progress(&mut self) -> Result<bool, String> {
        // SAFETY: a live worker, called from its one thread at a time (`&mut self`).
        let mut any = unsafe { self.lib.ucp_worker_progress(self.h) } != 0;
        let lib = self.lib;
        let mut failed = None;
        let mut i = 0;
        while i < self.pending.len() {
            let req = self.pending[i].req;
            // SAFETY: `req` is a request of this worker not freed yet.
            let s = unsafe { lib.ucp_request_check_status(req) };
            if s == sys::UCS_INPROGRESS {
                i += 1;
                continue;
            }
            if s != sys::UCS_OK && failed.is_none() {
                failed = Some(format!("UCX send failed: {}", status_text(lib, s)));
            }
            // SAFETY: the request completed; freed once, and UCX no longer reads its buffers.
            unsafe { lib.ucp_request_free(req) };
            let p = self.pending.remove(i);
            self.inbox.spare.put(p._data);
            any = true;
        }
        self.reap_accesses();
        if let Some(e) = self.inbox.error.take().or(failed) {
            return Err(e);
        }
        Ok(any)
    }

    /// Hands every packet that arrived to `f(src, header, payload)` (the payload is not copied
    /// again; give it back through `release`), in order per sender, and returns how many. A
    /// packet whose payload is still being received holds back those after it.
    pub fn take(&mut self, mut f: impl FnMut(usize, &[u8], Payload)) -> Result<usize, String> {
        let mut n = 0;
        while let Some(a) = self.inbox.arrivals.front_mut() {
            if let Some(req) = a.recv {
                // SAFETY: a receive request of this worker not freed yet.
                let s = unsafe { self.lib.ucp_request_check_status(req) };
                if s == sys::UCS_INPROGRESS {
                    break;
                }
                // SAFETY: completed; freed once.
                unsafe { self.lib.ucp_request_free(req) };
                a.recv = None;
                if s != sys::UCS_OK {
                    let src = a.src;
                    self.inbox.arrivals.pop_front();
                    return Err(format!("UCX: receiving a payload from peer {src} failed: {}", status_text(self.lib, s)));
                }
            }
            let a = self.inbox.arrivals.pop_front().expect("front exists");
            f(a.src, &a.header, a.data);
            if self.inbox.headers.len() < HEADERS_KEPT {
                self.inbox.headers.push(a.header);
            }
            n += 1;
        }
        Ok(n)
    }

    /// Whether nothing waits to be handed over: no packet for `take`, no receive for `pulled`
    /// (a waiter's empty look skips both).
    #[inline]
    pub fn idle(&self) -> bool {
        self.inbox.arrivals.is_empty() && self.pulls.is_empty()
    }

    /// The file descriptor that becomes readable when this worker has events, after `arm`.
    pub fn event_fd(&self) -> Result<RawFd, String> {
        let mut fd: RawFd = -1;
        // SAFETY: a live worker of a context made with UCP_FEATURE_WAKEUP.
        check(self.lib, unsafe { self.lib.ucp_worker_get_efd(self.h, &mut fd) }, "worker_get_efd")?;
        Ok(fd)
    }

    /// Arms the event fd before sleeping on it: false when events are already waiting (progress
    /// first, do not sleep).
    pub fn arm(&mut self) -> Result<bool, String> {
        // SAFETY: a live worker, from its one thread at a time.
        match unsafe { self.lib.ucp_worker_arm(self.h) } {
            sys::UCS_OK => Ok(true),
            sys::UCS_ERR_BUSY => Ok(false),
            s => Err(format!("UCX worker_arm failed: {}", status_text(self.lib, s))),
        }
    }

    /// Makes a sleeper on the event fd wake up (from any thread).
    pub fn signal(&self) -> Result<(), String> {
        // SAFETY: ucp_worker_signal is the one worker call UCX allows from any thread.
        check(self.lib, unsafe { self.lib.ucp_worker_signal(self.h) }, "worker_signal")
    }

    /// Closes `ep` without waiting for the peer (its state is dropped by the caller after).
    fn close_ep(&mut self, ep: sys::ucp_ep_h) {
        // SAFETY: all-zero is "no attribute"; the flag is flagged.
        let mut param: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        param.op_attr_mask = sys::UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = sys::UCP_EP_CLOSE_FLAG_FORCE;
        // SAFETY: a live endpoint of this worker, closed once.
        if let StatusPtr::Request(req) = status_ptr(unsafe { self.lib.ucp_ep_close_nbx(ep, &param) }) {
            // A forced close completes locally; bounded, in case it does not.
            for _ in 0..10_000 {
                // SAFETY: a live worker and a request of it not freed yet.
                unsafe { self.lib.ucp_worker_progress(self.h) };
                // SAFETY: as above.
                if unsafe { self.lib.ucp_request_check_status(req) } != sys::UCS_INPROGRESS {
                    break;
                }
            }
            // SAFETY: freed once; UCX finishes an uncompleted one by itself.
            unsafe { self.lib.ucp_request_free(req) };
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.drop_rma();
        for p in std::mem::take(&mut self.pending) {
            // SAFETY: an unfreed request of this worker; UCX finishes or drops it by itself
            // (the worker is destroyed right after, which cancels what is left).
            unsafe { self.lib.ucp_request_free(p.req) };
            // The buffers must outlive UCX's use of them: the worker goes below, but a send may
            // still point at them until then.
            std::mem::forget(p._header);
            std::mem::forget(p._data);
        }
        for p in std::mem::take(&mut self.pulls) {
            // SAFETY: an unfreed receive request of this worker, cancelled with it below.
            unsafe { self.lib.ucp_request_free(p.req) };
            std::mem::forget(p.bounce);
        }
        for ep in std::mem::take(&mut self.eps).into_iter().flatten() {
            self.close_ep(ep.0);
        }
        for a in std::mem::take(&mut self.inbox.arrivals) {
            if let Some(req) = a.recv {
                // SAFETY: an unfreed receive request of this worker.
                unsafe { self.lib.ucp_request_free(req) };
                std::mem::forget(a.data);
            } else if let Payload::Held(h) | Payload::OnDemand(h) = a.data {
                // SAFETY: a buffer UCX let this worker keep, released once.
                unsafe { self.lib.ucp_am_data_release(self.h, h.ptr) };
            }
        }
        // SAFETY: every endpoint is closed; destroyed once, before the context (field order).
        unsafe { self.lib.ucp_worker_destroy(self.h) };
    }
}

/// UCX's handler of a packet (inside `ucp_worker_progress`): queues it, keeping an eager payload
/// in UCX's buffer (copying it only when UCX does not allow that), or starting the receive of a
/// rendezvous one into a buffer of ours.
unsafe extern "C" fn on_packet(arg: *mut c_void, header: *const c_void, header_length: usize, data: *mut c_void, length: usize, param: *const sys::ucp_am_recv_param_t) -> sys::ucs_status_t {
    // No panic may unwind into UCX.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `arg` is the worker's boxed inbox (set in `Worker::new`), reached only from
        // inside progress of its one thread; UCX gives header/data of the lengths it says, and
        // a valid `param`.
        let inbox = unsafe { &mut *(arg as *mut Inbox) };
        if header_length < SRC_BYTES {
            inbox.error = Some(format!("UCX: a packet arrived with a {header_length}-byte header (not from oxmpi?)"));
            return sys::UCS_OK;
        }
        // SAFETY: as above.
        let hdr = unsafe { std::slice::from_raw_parts(header as *const u8, header_length) };
        let word = u32::from_le_bytes(hdr[..SRC_BYTES].try_into().expect("4 bytes"));
        let src = (word & !ON_DEMAND) as usize;
        let mut header = inbox.headers.pop().unwrap_or_default();
        header.clear();
        header.extend_from_slice(&hdr[SRC_BYTES..]);
        // SAFETY: as above.
        let attr = unsafe { (*param).recv_attr };
        if word & ON_DEMAND != 0 && attr & sys::UCP_AM_RECV_ATTR_FLAG_RNDV as u64 != 0 {
            // Left on the sender until `Worker::receive` (UCS_INPROGRESS keeps the descriptor).
            inbox.arrivals.push_back(Arrival { src, header, data: Payload::OnDemand(Held { ptr: data, len: length }), recv: None });
            inbox.on_demand += 1;
            return sys::UCS_INPROGRESS;
        }
        if attr & sys::UCP_AM_RECV_ATTR_FLAG_RNDV as u64 == 0 {
            if length > 0 && attr & sys::UCP_AM_RECV_ATTR_FLAG_DATA as u64 != 0 {
                // Ours until `Worker::release` (UCS_INPROGRESS below).
                inbox.arrivals.push_back(Arrival { src, header, data: Payload::Held(Held { ptr: data, len: length }), recv: None });
                inbox.held += 1;
                return sys::UCS_INPROGRESS;
            }
            let payload = if length == 0 {
                Vec::new()
            } else {
                // SAFETY: eager data of `length` bytes, valid during the callback.
                unsafe { std::slice::from_raw_parts(data as *const u8, length) }.to_vec()
            };
            inbox.arrivals.push_back(Arrival { src, header, data: Payload::Owned(payload), recv: None });
            return sys::UCS_OK;
        }
        let mut buf = inbox.spare.take(length);
        // Initialised bytes only (UCX overwrites them all): a reused buffer of the same size
        // needs no clearing.
        buf.truncate(length);
        buf.resize(length, 0);
        // SAFETY: all-zero is "no attribute set" (contiguous bytes, completion polled).
        let rp: sys::ucp_request_param_t = unsafe { std::mem::zeroed() };
        // SAFETY: `data` is the rendezvous descriptor UCX gave this callback; `buf` has `length`
        // bytes and its heap block stays put (the Vec moves, its buffer does not) until the
        // request completes (`take`) or is dropped with the worker.
        let p = unsafe { inbox.lib.ucp_am_recv_data_nbx(inbox.worker, data, buf.as_mut_ptr() as *mut c_void, length, &rp) };
        let recv = match status_ptr(p) {
            StatusPtr::Done => None,
            StatusPtr::Request(req) => Some(req),
            StatusPtr::Failed(s) => {
                inbox.error = Some(format!("UCX: receiving a {length}-byte payload from peer {src} failed: {}", status_text(inbox.lib, s)));
                return sys::UCS_OK;
            }
        };
        inbox.arrivals.push_back(Arrival { src, header, data: Payload::Owned(buf), recv });
        inbox.rendezvous += 1;
        sys::UCS_OK
    }));
    r.unwrap_or(sys::UCS_OK)
}

/// UCX's handler of a failed connection: records it for the peer.
unsafe extern "C" fn on_peer_error(arg: *mut c_void, _ep: sys::ucp_ep_h, status: sys::ucs_status_t) {
    // SAFETY: `arg` is the boxed PeerState of the endpoint (set in `connect`), alive until the
    // endpoint is closed; called inside progress of the worker's one thread.
    let state = unsafe { &*(arg as *const PeerState) };
    state.failed.set(status);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_the_package() {
        let e = load("libucp-not-there.so.0").err().expect("no such library");
        assert!(e.contains(PACKAGE) && e.contains("libucp-not-there"), "{e}");
    }

    /// Two connected workers, indexes 0 and 1, over the transports `tls` (UCX_TLS).
    pub(crate) fn pair(tls: &str) -> (Worker, Worker) {
        let settings = [("TLS", tls)];
        let mut a = Worker::new(Context::new(&settings).unwrap(), 0).unwrap();
        let mut b = Worker::new(Context::new(&settings).unwrap(), 1).unwrap();
        let (aa, ba) = (a.address().unwrap(), b.address().unwrap());
        a.connect(1, &ba).unwrap();
        b.connect(0, &aa).unwrap();
        (a, b)
    }

    /// The packets that arrived at `w` as (sender, header, payload) copies, the payloads given
    /// back to the worker.
    pub(crate) fn take_copies(w: &mut Worker) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
        let mut got = Vec::new();
        w.take(|src, h, d| got.push((src, h.to_vec(), d))).unwrap();
        got.into_iter()
            .map(|(src, h, d)| {
                // SAFETY: `w` handed the payload over and is alive; released right after.
                let bytes = unsafe { d.bytes() }.to_vec();
                w.release(d);
                (src, h, bytes)
            })
            .collect()
    }

    fn payload(i: usize, n: usize) -> Vec<u8> {
        (0..n).map(|k| (k * 31 + i * 7) as u8).collect()
    }

    /// Sends packets of every size class both ways at once (eager, and rendezvous for the big
    /// ones) and checks each arrives whole, with its header, in the order sent.
    /// Two rounds: the second reuses the first's large buffers (sends' copies, rendezvous
    /// receives), which must not leak old bytes into new packets.
    fn exchange(tls: &str) {
        let (mut a, mut b) = pair(tls);
        for round in 0..2 {
            exchange_round(tls, &mut a, &mut b, round);
        }
        // The MiB payloads took UCX's rendezvous path, received into buffers of ours; the
        // eager ones stayed in UCX's (no copy).
        assert!(a.rendezvous_received() > 0 && b.rendezvous_received() > 0, "no rendezvous ({tls})");
        assert!(a.held_received() > 0 && b.held_received() > 0, "no eager payload kept in UCX's buffer ({tls})");
    }

    fn exchange_round(tls: &str, a: &mut Worker, b: &mut Worker, round: usize) {
        let sizes = [0usize, 1, 8, 100, 4096, 65_536, 1 << 20, 3 << 20, 7, 0, 200_000, 1 << 20];
        let payload = |i: usize, n: usize| payload(i + 7 * round, n);
        for (i, &n) in sizes.iter().enumerate() {
            a.send(1, &(i as u64).to_le_bytes(), payload(i, n)).unwrap();
            b.send(0, &(1000 + i as u64).to_le_bytes(), payload(1000 + i, n)).unwrap();
        }
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while got_a.len() < sizes.len() || got_b.len() < sizes.len() || a.sends_in_flight() + b.sends_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "UCX ({tls}) delivered {} and {} of {} packets", got_a.len(), got_b.len(), sizes.len());
            a.progress().unwrap();
            b.progress().unwrap();
            got_a.extend(take_copies(a));
            got_b.extend(take_copies(b));
        }
        for (i, &n) in sizes.iter().enumerate() {
            assert_eq!((got_b[i].0, got_b[i].1.as_slice()), (0, &(i as u64).to_le_bytes()[..]), "packet {i} at b");
            assert!(got_b[i].2 == payload(i, n), "payload {i} ({n} bytes) at b");
            assert_eq!((got_a[i].0, got_a[i].1.as_slice()), (1, &(1000 + i as u64).to_le_bytes()[..]), "packet {i} at a");
            assert!(got_a[i].2 == payload(1000 + i, n), "payload {i} ({n} bytes) at a");
        }
    }

    #[test]
    fn packets_cross_over_tcp_in_order() {
        exchange("tcp");
    }

    #[test]
    fn packets_cross_over_what_ucx_picks() {
        exchange("all");
    }

    /// Packets sent straight from the caller's bytes (`send_now`) arrive whole and in order with
    /// copied ones around them; the caller's buffer is reused at once (UCX is done with it when
    /// `send_now` says so); one too big for an immediate send is refused untouched (Ok(false))
    /// and then goes as a copy, still in order.
    #[test]
    fn immediate_sends_arrive_in_order_with_copies() {
        let (mut a, mut b) = pair("tcp");
        // Wired up first: UCX connects on the first send, and queues sends until then.
        a.send(1, b"hello", Vec::new()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while take_copies(&mut b).is_empty() || a.sends_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "the first packet did not arrive");
            a.progress().unwrap();
            b.progress().unwrap();
        }
        let sizes = [8usize, 0, 1024, 5, 4000, 1 << 20, 17];
        let mut scratch = vec![0u8; 1 << 20];
        let mut immediate = 0;
        for (i, &n) in sizes.iter().enumerate() {
            let want = payload(i, n);
            scratch[..n].copy_from_slice(&want);
            // SAFETY: `scratch` holds `n` bytes, read during the call only.
            let now = unsafe { a.send_now(1, &(i as u64).to_le_bytes(), scratch.as_ptr(), n) }.unwrap();
            if now {
                immediate += 1;
            } else {
                a.send(1, &(i as u64).to_le_bytes(), want).unwrap();
            }
            // Overwritten at once: a packet sent from it must already be on its way.
            scratch[..n].fill(0xEE);
            if i == 2 {
                a.send(1, b"copied", payload(99, 300)).unwrap();
            }
        }
        let mut got = Vec::new();
        while got.len() < sizes.len() + 1 || a.sends_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "{} of {} packets arrived", got.len(), sizes.len() + 1);
            a.progress().unwrap();
            b.progress().unwrap();
            got.extend(take_copies(&mut b));
        }
        let mut k = 0;
        for (i, &n) in sizes.iter().enumerate() {
            assert_eq!((got[k].0, got[k].1.as_slice()), (0, &(i as u64).to_le_bytes()[..]), "packet {i}");
            assert!(got[k].2 == payload(i, n), "payload {i} ({n} bytes)");
            k += 1;
            if i == 2 {
                assert_eq!((got[k].1.as_slice(), &got[k].2), (&b"copied"[..], &payload(99, 300)));
                k += 1;
            }
        }
        assert!(immediate >= 3, "only {immediate} of the small packets went at once");
    }

    /// Borrowed payloads stay on the sender until the receiver asks: received straight into a
    /// buffer of the receiver's (whole, or cut short), or dropped (the send completes anyway),
    /// in order with the copied packets around them.
    #[test]
    fn borrowed_payloads_move_on_demand_in_order() {
        let (mut a, mut b) = pair("tcp");
        let sizes = [1usize << 20, 0, 100, 3 << 20, 70_000, 5];
        let bufs: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| payload(i, n)).collect();
        for (i, buf) in bufs.iter().enumerate() {
            // Every other packet borrowed, the rest copied.
            if i % 2 == 0 || buf.len() > 4096 {
                // SAFETY: `bufs` outlives the sends (checked complete below) and is not modified.
                unsafe { a.send_borrowed(1, &(i as u64).to_le_bytes(), buf.as_ptr(), buf.len()) }.unwrap();
            } else {
                a.send(1, &(i as u64).to_le_bytes(), buf.clone()).unwrap();
            }
        }
        let mut got: Vec<(usize, Vec<u8>, Payload)> = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while got.len() < sizes.len() {
            assert!(std::time::Instant::now() < deadline, "{} of {} packets arrived", got.len(), sizes.len());
            a.progress().unwrap();
            b.progress().unwrap();
            b.take(|src, h, d| got.push((src, h.to_vec(), d))).unwrap();
        }
        for (i, (src, h, d)) in got.into_iter().enumerate() {
            assert_eq!((src, h), (0, (i as u64).to_le_bytes().to_vec()), "packet {i}");
            let n = sizes[i];
            assert_eq!(d.len(), n, "packet {i}");
            if i == 4 {
                // Never asked for: let go.
                assert!(d.on_demand());
                b.release(d);
                continue;
            }
            // The 3 MiB one cut short (a truncated receive), the others whole.
            let want = if i == 3 { n / 2 } else { n };
            let mut dst = vec![0xEEu8; want];
            // A rendezvous needs the sender's progress while `receive` waits: another thread's.
            let on_demand = d.on_demand();
            if on_demand {
                let stop = std::sync::atomic::AtomicBool::new(false);
                std::thread::scope(|s| {
                    let a = &mut a;
                    let stop_ref = &stop;
                    s.spawn(move || {
                        while !stop_ref.load(std::sync::atomic::Ordering::Relaxed) {
                            a.progress().unwrap();
                        }
                    });
                    // SAFETY: `dst` holds `want` bytes.
                    let r = unsafe { b.receive(d, dst.as_mut_ptr(), want) };
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    r.unwrap();
                });
            } else {
                // SAFETY: `dst` holds `want` bytes.
                unsafe { b.receive(d, dst.as_mut_ptr(), want) }.unwrap();
            }
            assert!(dst[..] == bufs[i][..want], "payload {i} ({n} bytes, {want} received, on demand: {on_demand})");
        }
        while a.sends_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "the sends did not complete");
            a.progress().unwrap();
            b.progress().unwrap();
        }
        assert!(b.on_demand_received() >= 3, "{} payloads on demand", b.on_demand_received());
    }

    /// A sender that goes away mid-pull (here its worker is destroyed, which closes its
    /// connections as a dying process's kernel does): UCX fails the receive request, so
    /// `pulled` reports it, and only then is the receive buffer free again. The engine relies on
    /// this to fail such a receive without UCX writing into a buffer it gave back.
    #[test]
    fn a_pull_from_a_sender_that_goes_ends_failed() {
        let (mut a, mut b) = pair("tcp");
        let n = 64 << 20;
        let src = payload(3, n);
        // SAFETY: `src` outlives `a` (dropped below, before `src`) and is not modified.
        unsafe { a.send_borrowed(1, b"rts", src.as_ptr(), n) }.unwrap();
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while got.is_empty() {
            assert!(std::time::Instant::now() < deadline, "the Rts did not arrive");
            a.progress().unwrap();
            b.progress().unwrap();
            b.take(|_, _, d| got.push(d)).unwrap();
        }
        let mut dst = vec![0u8; n];
        // SAFETY: `dst` holds `n` bytes and outlives `b`'s use of it (checked: `pulled` below).
        let done_now = unsafe { b.receive_start(got.pop().unwrap(), dst.as_mut_ptr(), n, 7) }.unwrap();
        assert!(!done_now, "64 MiB by rendezvous finished at once");
        // Part of it may move; then the sender goes.
        a.progress().unwrap();
        b.progress().unwrap();
        drop(a);
        let mut ended = None;
        while ended.is_none() {
            assert!(std::time::Instant::now() < deadline, "UCX never ended a pull whose sender went away");
            let _ = b.progress();
            b.pulled(|token, ok| ended = Some((token, ok)));
        }
        // Failed, or (if the bytes all crossed before the sender went) whole.
        let (token, ok) = ended.unwrap();
        assert_eq!(token, 7);
        assert!(!ok || dst == src, "a pull reported done with wrong bytes");
        assert_eq!(b.pulls.len(), 0);
    }

    #[test]
    fn a_sleeper_on_the_event_fd_wakes_for_a_packet() {
        let (mut a, mut b) = pair("tcp");
        // Wire the pair up first (UCX connects on the first send and needs both sides' progress).
        a.send(1, b"hello", Vec::new()).unwrap();
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while got.is_empty() || a.sends_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "the first packet did not arrive");
            a.progress().unwrap();
            b.progress().unwrap();
            got.extend(take_copies(&mut b).into_iter().map(|(_, h, _)| h));
        }
        let fd = b.event_fd().unwrap();
        while !b.arm().unwrap() {
            b.progress().unwrap();
        }
        a.send(1, b"wake", vec![1, 2, 3]).unwrap();
        a.progress().unwrap();
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd on the stack.
        let ready = unsafe { libc::poll(&mut pfd, 1, 30_000) };
        assert_eq!(ready, 1, "the armed event fd did not become readable for a packet");
        got.clear();
        while got.is_empty() {
            assert!(std::time::Instant::now() < deadline, "no packet after the wake-up");
            b.progress().unwrap();
            got.extend(take_copies(&mut b).into_iter().map(|(_, h, d)| [h, d].concat()));
        }
        assert_eq!(got, vec![b"wake\x01\x02\x03".to_vec()]);
    }
}
