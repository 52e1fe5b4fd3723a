//! Argument checks and handle conversions shared by the C entry points. Each returns the MPI error
//! class the standard prescribes, with a message that says what was wrong.
use crate::abi::datatypes::{predefined_name, predefined_size, BUILTIN, PAIRS};
use crate::abi::*;
use crate::comm::Comm;
use crate::datatype::{registry, LeafKind, TypeRepr};
use std::sync::{Arc, OnceLock};
use crate::error::{err, MpiResult, ErrorClass};
use crate::p2p::{Buf, MsgId, ReqId, Status};
use crate::instance::{self, Instance};
use crate::runtime::job;
use std::os::raw::c_int;
use crate::ffi::layer::{CAbi, Mpich};

pub fn universe() -> MpiResult<&'static Instance> {
    instance::get()
}

/// A communicator looked up from its handle: the predefined ones by plain reference (no reference
/// counting on the hot path), user communicators shared with the table (so MPI_Comm_free by another
/// thread cannot pull one from under a running call).
#[derive(Clone)]
pub enum CommRef {
    Static(&'static Comm),
    Shared(std::sync::Arc<Comm>),
}

impl std::ops::Deref for CommRef {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        match self {
            CommRef::Static(c) => c,
            CommRef::Shared(c) => c,
        }
    }
}

/// Handle of user communicator `index` of the table.
pub fn comm_handle(index: u32) -> MPI_Comm {
    make_handle(HANDLE_KIND_DIRECT, OBJ_COMM, index)
}

/// The communicator behind handle `h`.
#[inline]
pub fn comm(u: &'static Instance, h: MPI_Comm) -> MpiResult<CommRef> {
    match h {
        MPI_COMM_WORLD => Ok(CommRef::Static(&u.world)),
        MPI_COMM_SELF => Ok(CommRef::Static(&u.self_comm)),
        MPI_COMM_NULL => Err(err(MPI_ERR_COMM, "invalid communicator: MPI_COMM_NULL")),
        _ if handle_object(h) == OBJ_COMM && handle_kind(h) == HANDLE_KIND_DIRECT => u
            .comms
            .get(handle_index(h))
            .map(CommRef::Shared)
            .ok_or_else(|| err(MPI_ERR_COMM, format!("invalid communicator 0x{:08x} (freed, or never created)", h as u32))),
        _ if handle_object(h) == OBJ_COMM => Err(err(MPI_ERR_COMM, format!("invalid communicator 0x{:08x} (freed, or never created)", h as u32))),
        _ => Err(err(MPI_ERR_COMM, format!("invalid communicator: 0x{:08x} is not a communicator handle", h as u32))),
    }
}

/// Rejects an intercommunicator in `call`, which oxmpi supports on intracommunicators only.
pub fn intra(c: &Comm, call: &str) -> MpiResult {
    if c.is_inter() {
        return Err(err(MPI_ERR_COMM, format!("{call} needs an intracommunicator, not an intercommunicator")));
    }
    Ok(())
}

/// Size in bytes of one element of `dt`.
pub fn datatype_size(dt: MPI_Datatype) -> MpiResult<usize> {
    if dt == MPI_DATATYPE_NULL {
        return Err(err(MPI_ERR_TYPE, "invalid datatype: MPI_DATATYPE_NULL"));
    }
    predefined_size(dt).ok_or_else(|| err(MPI_ERR_TYPE, format!("invalid datatype 0x{:08x} (not a predefined datatype; derived datatypes are not implemented yet)", dt as u32)))
}

/// Whether `dt` is a predefined pair type (`MPI_DOUBLE_INT`..., `MPI_2INT`, `MPI_2REAL`...),
/// whose elements hold two basic elements each (MPI_Get_elements counts both, as MPICH).
pub fn is_pair(dt: MPI_Datatype) -> bool {
    PAIRS.iter().any(|p| p.0 == dt) || predefined_name(dt).is_some_and(|n| n.starts_with("MPI_2"))
}

/// The engine leaves of the predefined types, built once: builtins by the low byte of their handle,
/// pair types after them (index 256 + N).
fn leaves() -> &'static [Option<Arc<TypeRepr>>] {
    static LEAVES: OnceLock<Vec<Option<Arc<TypeRepr>>>> = OnceLock::new();
    LEAVES.get_or_init(|| {
        let mut v: Vec<Option<Arc<TypeRepr>>> = vec![None; 256 + PAIRS.len()];
        for &(h, name) in BUILTIN {
            let s = predefined_size(h).unwrap_or(0);
            let kind = match name {
                "MPI_LB" => LeafKind::LbMarker,
                "MPI_UB" => LeafKind::UbMarker,
                _ => LeafKind::Data,
            };
            // Alignment as MPICH pads structs: complex and MPI_2xxx types align to their halves.
            let align = if name.contains("COMPLEX") || name.starts_with("MPI_2") { s / 2 } else { s };
            let parts: &[(i64, usize)] = if s == 0 { &[] } else { &[(0, s)] };
            v[(h & 0xff) as usize] = Some(Arc::new(TypeRepr::leaf(h, kind, parts, s as i64, align, name)));
        }
        // C pair types: { T v; int i; } with the compiler's padding (size excludes it, as in MPICH).
        let layouts: [(&[(i64, usize)], usize); 5] =
            [(&[(0, 4), (4, 4)], 4), (&[(0, 8), (8, 4)], 8), (&[(0, 8), (8, 4)], 8), (&[(0, 2), (4, 4)], 4), (&[(0, 16), (16, 4)], 16)];
        for (i, &(h, name, ext)) in PAIRS.iter().enumerate() {
            v[256 + i] = Some(Arc::new(TypeRepr::leaf(h, LeafKind::Data, layouts[i].0, ext as i64, layouts[i].1, name)));
        }
        v
    })
}

/// Handle of a registered derived type.
pub fn derived_handle(index: u32) -> MPI_Datatype {
    make_handle(HANDLE_KIND_DIRECT, OBJ_DATATYPE, index)
}

/// Registers a new derived type and returns its handle.
pub fn register_type(t: TypeRepr) -> MPI_Datatype {
    derived_handle(registry::insert(Arc::new(t)))
}

/// The handle that names `t` to the user: its own for a predefined type, else a new handle (MPI
/// 4.1 section 5.1.13: derived types returned by MPI_Type_get_contents are new objects).
pub fn handle_for(t: &Arc<TypeRepr>) -> MPI_Datatype {
    t.leaf_id.unwrap_or_else(|| derived_handle(registry::insert(t.clone())))
}

/// The engine type behind `dt` (predefined or derived, committed or not).
pub fn dtype(dt: MPI_Datatype) -> MpiResult<Arc<TypeRepr>> {
    if dt == MPI_DATATYPE_NULL {
        return Err(err(MPI_ERR_TYPE, "invalid datatype: MPI_DATATYPE_NULL"));
    }
    if predefined_size(dt).is_some() {
        let i = match PAIRS.iter().position(|p| p.0 == dt) {
            Some(p) => 256 + p,
            None => (dt & 0xff) as usize,
        };
        if let Some(t) = &leaves()[i] {
            return Ok(t.clone());
        }
    }
    if handle_kind(dt) == HANDLE_KIND_DIRECT && handle_object(dt) == OBJ_DATATYPE {
        if let Some(t) = registry::get(handle_index(dt)) {
            return Ok(t);
        }
    }
    Err(err(MPI_ERR_TYPE, format!("invalid datatype 0x{:08x} (freed, or never created)", dt as u32)))
}

/// A datatype looked up from its handle: the predefined ones by plain reference (no reference
/// counting on the hot path of the RMA calls), derived ones shared with the registry.
pub enum DtypeRef {
    Static(&'static TypeRepr),
    Shared(Arc<TypeRepr>),
}

impl std::ops::Deref for DtypeRef {
    type Target = TypeRepr;
    fn deref(&self) -> &TypeRepr {
        match self {
            DtypeRef::Static(t) => t,
            DtypeRef::Shared(t) => t,
        }
    }
}

/// As `committed_dtype`, without touching a reference count for a predefined type.
pub fn committed_dtype_ref(dt: MPI_Datatype) -> MpiResult<DtypeRef> {
    if dt != MPI_DATATYPE_NULL && predefined_size(dt).is_some() {
        let i = match PAIRS.iter().position(|p| p.0 == dt) {
            Some(p) => 256 + p,
            None => (dt & 0xff) as usize,
        };
        if let Some(t) = &leaves()[i] {
            let t: &'static TypeRepr = t;
            if t.is_committed() {
                return Ok(DtypeRef::Static(t));
            }
        }
    }
    committed_dtype(dt).map(DtypeRef::Shared)
}

/// The engine type behind `dt`, which must be committed (as communication and pack require).
pub fn committed_dtype(dt: MPI_Datatype) -> MpiResult<Arc<TypeRepr>> {
    let t = dtype(dt)?;
    if !t.is_committed() {
        return Err(err(MPI_ERR_TYPE, format!("datatype 0x{:08x} is not committed: call MPI_Type_commit before using it", dt as u32)));
    }
    Ok(t)
}

pub fn datatype_name(dt: MPI_Datatype) -> String {
    predefined_name(dt).map(str::to_string).unwrap_or_else(|| format!("0x{:08x}", dt as u32))
}

/// A count argument (int or MPI_Count): MPI_ERR_COUNT when negative.
pub fn count(c: impl Into<i64>) -> MpiResult<usize> {
    let c = c.into();
    usize::try_from(c).map_err(|_| err(MPI_ERR_COUNT, format!("invalid count {c}: must be non-negative")))
}

/// Bytes of a buffer of `count` elements of `dt`, checking that a non-empty buffer is not NULL.
pub fn buffer_bytes(buf: *const std::os::raw::c_void, count_: impl Into<i64>, dt: MPI_Datatype) -> MpiResult<usize> {
    let n = count(count_)?;
    let size = datatype_size(dt)?;
    let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", datatype_name(dt))))?;
    if bytes > 0 && buf.is_null() {
        return Err(err(MPI_ERR_BUFFER, format!("invalid buffer: NULL with count {n} of {}", datatype_name(dt))));
    }
    Ok(bytes)
}

// The per-call checks of every send and receive are inlined (a call each showed in the
// message-rate profile); their error messages stay out of line.
#[inline]
pub fn send_tag(tag: c_int) -> MpiResult<i32> {
    if !(0..=MPI_TAG_UB_VALUE).contains(&tag) {
        return Err(bad_send_tag(tag));
    }
    Ok(tag)
}

#[cold]
fn bad_send_tag(tag: c_int) -> crate::error::MpiError {
    err(MPI_ERR_TAG, format!("invalid tag {tag}: send tags must be {} (MPI_TAG_UB)", crate::error::range(0, MPI_TAG_UB_VALUE as i64)))
}

pub fn recv_tag(tag: c_int) -> MpiResult<i32> {
    if tag == MPI_ANY_TAG {
        return Ok(tag);
    }
    if !(0..=MPI_TAG_UB_VALUE).contains(&tag) {
        return Err(err(MPI_ERR_TAG, format!("invalid tag {tag}: receive tags must be MPI_ANY_TAG or {}", crate::error::range(0, MPI_TAG_UB_VALUE as i64))));
    }
    Ok(tag)
}

/// Peer of a send: Some(world rank), or None for MPI_PROC_NULL.
#[inline]
pub fn dest_rank(c: &Comm, r: c_int) -> MpiResult<Option<usize>> {
    if r == MPI_PROC_NULL {
        return Ok(None);
    }
    // On an intercommunicator, ranks address the remote group (MPI 4.1 section 7.6.1).
    let peers = c.peers();
    if r < 0 || r as usize >= peers.len() {
        return Err(bad_dest_rank(c, r));
    }
    Ok(Some(peers[r as usize]))
}

#[cold]
fn bad_dest_rank(c: &Comm, r: c_int) -> crate::error::MpiError {
    let peers = c.peers();
    err(MPI_ERR_RANK, format!("invalid rank {r}: the {} has {} ranks ({})", kind(c), peers.len(), crate::error::indices(peers.len())))
}

/// Source of a receive or probe.
pub enum Source {
    ProcNull,
    Any,
    World(usize),
}

pub fn source_rank(c: &Comm, r: c_int) -> MpiResult<Source> {
    let peers = c.peers();
    match r {
        MPI_PROC_NULL => Ok(Source::ProcNull),
        MPI_ANY_SOURCE => Ok(Source::Any),
        _ if r < 0 || r as usize >= peers.len() => Err(err(MPI_ERR_RANK, format!("invalid source rank {r}: the {} has {} ranks", kind(c), peers.len()))),
        _ => Ok(Source::World(peers[r as usize])),
    }
}

/// What a communicator's point-to-point ranks are, for error messages.
fn kind(c: &Comm) -> &'static str {
    if c.is_inter() { "remote group of the intercommunicator" } else { "communicator" }
}

impl Source {
    pub fn as_option(&self) -> Option<usize> {
        match self {
            Source::World(w) => Some(*w),
            _ => None,
        }
    }
}

// ---- requests and messages ----

const REQ_BASE: c_int = make_handle(HANDLE_KIND_DIRECT, OBJ_REQUEST, 0);
/// A request that completed at once and needs no engine entry (operations with MPI_PROC_NULL):
/// INDIRECT request handles carry the status kind in the index.
pub const REQ_PROC_NULL: c_int = make_handle(HANDLE_KIND_INDIRECT, OBJ_REQUEST, 1);
/// A nonblocking standard or ready send whose message went into the channel at once (eager, no
/// queue ahead of it): complete when started, so it has no engine entry either. Every such
/// request shares this handle (MPI handles are opaque; each wait or free sets the user's copy to
/// MPI_REQUEST_NULL), which saves the request's allocation, completion and release on the
/// message-rate path.
pub const REQ_SENT: c_int = make_handle(HANDLE_KIND_INDIRECT, OBJ_REQUEST, 2);

pub fn req_handle(id: ReqId) -> MPI_Request {
    REQ_BASE | id as c_int
}

/// What a user request handle stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqRef {
    Null,
    /// A request complete from its start, with no engine entry (`REQ_PROC_NULL`, `REQ_SENT`).
    Complete(Settled),
    /// An engine request, whether it is persistent, and its generation. Both are read when the
    /// handle is resolved, before any wait: afterwards the id may already belong to another
    /// thread's request (the generation tells them apart).
    Engine(ReqId, bool, u32),
}

/// What a request complete from its start was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// An operation with MPI_PROC_NULL.
    ProcNull,
    /// A send pushed whole at its start (`REQ_SENT`).
    Sent,
}

impl Settled {
    /// The status a wait or test reports: MPI_PROC_NULL's (MPI 4.1 section 3.10), or for a
    /// send the empty status (a send's source, tag and count are undefined; its error field is
    /// MPI_SUCCESS and MPI_Test_cancelled says false).
    pub fn status(self) -> Status {
        match self {
            Settled::ProcNull => Status::proc_null(),
            Settled::Sent => Status::empty(),
        }
    }
}

pub fn req_ref(u: &Instance, h: MPI_Request) -> MpiResult<ReqRef> {
    req_ref_by(h, |id| u.engine.persistence(id))
}

/// `req_ref` with the engine's lookup given (`Engine::persistence_with`: one lock for an array).
pub fn req_ref_by(h: MPI_Request, persistence: impl Fn(ReqId) -> Option<(bool, u32)>) -> MpiResult<ReqRef> {
    if h == MPI_REQUEST_NULL {
        return Ok(ReqRef::Null);
    }
    if h == REQ_SENT {
        return Ok(ReqRef::Complete(Settled::Sent));
    }
    if h == REQ_PROC_NULL {
        return Ok(ReqRef::Complete(Settled::ProcNull));
    }
    if handle_kind(h) == HANDLE_KIND_DIRECT && handle_object(h) == OBJ_REQUEST {
        let id = handle_index(h);
        if let Some((persistent, gen)) = persistence(id) {
            return Ok(ReqRef::Engine(id, persistent, gen));
        }
    }
    Err(err(MPI_ERR_REQUEST, format!("invalid request 0x{:08x} (already completed and freed, or never created)", h as u32)))
}

const MSG_BASE: c_int = make_handle(HANDLE_KIND_INDIRECT, OBJ_REQUEST, 0x100_0000);

pub fn msg_handle(m: MsgId) -> MPI_Message {
    MSG_BASE | m as c_int
}

pub enum MsgRef {
    NoProc,
    Engine(MsgId),
}

pub fn msg_ref(u: &Instance, h: MPI_Message) -> MpiResult<MsgRef> {
    if h == MPI_MESSAGE_NO_PROC {
        return Ok(MsgRef::NoProc);
    }
    if h != MPI_MESSAGE_NULL && (h & !0x00ff_ffff) == MSG_BASE {
        let m = (h & 0x00ff_ffff) as u32;
        if u.engine.message_valid(m) {
            return Ok(MsgRef::Engine(m));
        }
    }
    Err(err(MPI_ERR_REQUEST, format!("invalid message handle 0x{:08x} (use the handle MPI_Mprobe/MPI_Improbe returned, once)", h as u32)))
}

// ---- statuses ----

pub fn status_ignored(s: *mut MPI_Status) -> bool {
    s.is_null() || s as usize == STATUS_IGNORE_ADDR
}

/// Notes that a completion call (MPI_Wait, MPI_Testsome, ...) reports the failure of an operation
/// on context id `ctx`: its error goes to that communicator's handler (MPI 4.1 section 9.3), not
/// MPI_COMM_WORLD's. Found only on the error path, so completions cost nothing more.
pub fn note_failed_context(ctx: u32) {
    let Some(u) = instance::peek() else { return };
    let h = match ctx & !1 {
        c if c == u.world.context => MPI_COMM_WORLD,
        c if c == u.self_comm.context => MPI_COMM_SELF,
        c => u.comms.index_of_context(c).map_or(MPI_COMM_WORLD, comm_handle),
    };
    job::set_failed_comm(h);
}

/// The communicator noted by `note_failed_context` during this call (MPI_COMM_WORLD if none),
/// reset for the next call.
pub fn failed_comm() -> MPI_Comm {
    job::take_failed_comm().unwrap_or(MPI_COMM_WORLD)
}

/// The communicator an operation's context id belongs to.
pub fn comm_of_context(u: &'static Instance, ctx: u32) -> Option<CommRef> {
    if let Some(c) = [&u.world, &u.self_comm].into_iter().find(|c| ctx == c.context || ctx == c.coll_context()) {
        return Some(CommRef::Static(c));
    }
    u.comms.by_context(ctx).map(CommRef::Shared)
}

/// Writes an engine status into a C status, translating the world rank into the rank in the
/// operation's communicator. `MPI_ERROR` is written only by multiple-completion calls (`set_error`),
/// as MPI 4.1 section 3.2.5 specifies.
///
/// # Safety
/// `s` must be MPI_STATUS_IGNORE, NULL, or point to a writable MPI_Status.
pub unsafe fn write_status(s: *mut MPI_Status, st: &Status, set_error: bool) {
    // SAFETY: this function's contract.
    unsafe { write_status_as::<Mpich>(s, st, set_error) }
}

/// `write_status` in the caller's ABI `A` (`crate::ffi::layer`).
///
/// # Safety
/// `s` is `A`'s MPI_STATUS_IGNORE or points to a writable status of `A`.
#[inline]
pub unsafe fn write_status_as<A: CAbi>(s: *mut A::Status, st: &Status, set_error: bool) {
    if A::status_ignored(s) {
        return;
    }
    // SAFETY: not MPI_STATUS_IGNORE, so a writable status (caller contract).
    unsafe { StatusWriter::new().write_as::<A>(s, st, set_error) }
}

/// `write_status` for the statuses of one array call (MPI_Waitall...): finds the instance once,
/// and a communicator once per run of statuses with the same context.
pub struct StatusWriter {
    u: Option<&'static Instance>,
    last: Option<(u32, Option<CommRef>)>,
}

impl StatusWriter {
    pub fn new() -> StatusWriter {
        StatusWriter { u: instance::peek(), last: None }
    }

    /// # Safety
    /// As `write_status`.
    pub unsafe fn write(&mut self, s: *mut MPI_Status, st: &Status, set_error: bool) {
        // SAFETY: this function's contract.
        unsafe { self.write_as::<Mpich>(s, st, set_error) }
    }

    /// `write` in the caller's ABI `A`.
    ///
    /// # Safety
    /// As `write_status_as`.
    #[inline]
    pub unsafe fn write_as<A: CAbi>(&mut self, s: *mut A::Status, st: &Status, set_error: bool) {
        if A::status_ignored(s) {
            return;
        }
        let source = match self.u {
            Some(u) if st.source >= 0 => {
                if self.last.as_ref().is_none_or(|(ctx, _)| *ctx != st.context) {
                    self.last = Some((st.context, comm_of_context(u, st.context)));
                }
                let c = self.last.as_ref().and_then(|(_, c)| c.as_ref());
                c.and_then(|c| c.peer_rank_of(st.source as usize)).map_or(st.source, |r| r as i32)
            }
            _ => st.source,
        };
        // SAFETY: not MPI_STATUS_IGNORE, so a writable status (caller contract).
        unsafe { A::fill_status(s, source, st, set_error) }
    }
}

impl Default for StatusWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// Fills C status `s` from `st` with `source` already translated to a communicator rank.
///
/// # Safety
/// `s` points to a writable MPI_Status.
pub(crate) unsafe fn fill_status(s: *mut MPI_Status, source: i32, st: &Status, set_error: bool) {
    // SAFETY: this function's contract.
    let out = unsafe { &mut *s };
    out.MPI_SOURCE = source;
    out.MPI_TAG = st.tag;
    if set_error {
        out.MPI_ERROR = st.error.map_or(MPI_SUCCESS, ErrorClass::mpich);
    }
    out.set_count_bytes(st.bytes, st.cancelled);
}

// ---- communication buffers ----

/// Checks a communication buffer: count, datatype (derived types must be committed) and NULL
/// buffers for predefined types (a derived type may address absolute memory from MPI_BOTTOM).
/// Returns the buffer as the engine takes it and its packed size in bytes: contiguous bytes for
/// predefined types and contiguous derived types (the pointer already moved by the type's true lb,
/// the latency-critical path), else the typed buffer, which the engine moves block by block.
pub fn comm_data(buf: *const std::os::raw::c_void, count_: impl Into<i64>, dt: MPI_Datatype) -> MpiResult<(Buf, usize)> {
    let count_ = count_.into();
    if let Some(size) = predefined_size(dt) {
        // buffer_bytes without its second look-up of the size (the send/receive fast path).
        let n = count(count_)?;
        let bytes = n.checked_mul(size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of {} overflows", datatype_name(dt))))?;
        if bytes > 0 && buf.is_null() {
            return Err(err(MPI_ERR_BUFFER, format!("invalid buffer: NULL with count {n} of {}", datatype_name(dt))));
        }
        return Ok((Buf::Flat(buf as *mut u8), bytes));
    }
    if dt == MPI_DATATYPE_NULL {
        return Ok((Buf::Flat(buf as *mut u8), buffer_bytes(buf, count_, dt)?));
    }
    let t = committed_dtype(dt)?;
    let n = count(count_)?;
    let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(MPI_ERR_COUNT, format!("count {n} of datatype 0x{:08x} overflows", dt as u32)))?;
    Ok(match t.layout.contiguous_span(n) {
        Some((off, b)) => (Buf::Flat((buf as *mut u8).wrapping_offset(off as isize)), b),
        None => (Buf::Typed { t, base: buf as *mut u8, count: n }, bytes),
    })
}

// The engine's wildcard and null values are MPICH's, so statuses and arguments pass unconverted.
const _: () = assert!(MPI_ANY_SOURCE == crate::p2p::ANY_SOURCE && MPI_PROC_NULL == crate::p2p::PROC_NULL && MPI_ANY_TAG == crate::p2p::ANY_TAG);
