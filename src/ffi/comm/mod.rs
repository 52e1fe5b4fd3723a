//! Communicator queries, error handlers on communicators, and MPI_Barrier.
pub mod attr;
pub mod from_group;
pub mod group;
pub mod ports;
pub mod spawn;
use crate::ffi::check;
use crate::ffi::env::errhandler::{create_user_handler, free_errhandler, is_valid_errhandler, CommErrhandlerFn};
use crate::ffi::pointer_args::{c_str, out};
use crate::abi::*;
use crate::error::{err, ErrorClass};
use crate::export;
use std::os::raw::{c_char, c_int};

/// MPI_Comm_free, and MPI_Comm_disconnect (`disconnect`: a barrier first).
///
/// # Safety
/// `comm` is NULL or points to the caller's MPI_Comm handle.
unsafe fn free_comm(comm: *mut MPI_Comm, disconnect: bool) -> crate::error::MpiResult {
    let comm = out(comm, "comm")?;
    let u = check::universe()?;
    // SAFETY: checked non-NULL above; the caller passes its handle, an MPI_Comm.
    let h = unsafe { *comm };
    if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
        return Err(err(MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"));
    }
    check::comm(u, h)?;
    if disconnect {
        // SAFETY: the blocking form writes no request.
        unsafe { crate::ffi::coll::barrier(h, crate::ffi::families::Launch::Blocking)? };
    }
    // Attribute caching: delete callbacks run before the communicator goes away (ffi/comm/attr.rs).
    // SAFETY: the callbacks are the application's, registered with their keyvals.
    unsafe { crate::ffi::comm::attr::delete_all(u, h)? };
    if let Some(c) = crate::coll::remove_comm(u, handle_index(h)) {
        // Its buffered-send buffer, if any, is detached once its messages are delivered.
        u.engine.release_context(c.context);
    }
    // SAFETY: as above; the handle argument is in-out.
    unsafe { *comm = MPI_COMM_NULL };
    Ok(())
}

/// The info key naming a hardware resource type in MPI_Comm_split_type.
const HW_RESOURCE_KEY: &str = "mpi_hw_resource_type";

export! {
    fn MPI_Comm_rank / PMPI_Comm_rank (comm: MPI_Comm, rank: *mut c_int) on comm comm => {
        let c_ref = check::comm(check::universe()?, comm)?;
        let c = &*c_ref;
        let rank = out(rank, "rank")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *rank = c.rank as c_int };
        Ok(())
    }

    fn MPI_Comm_size / PMPI_Comm_size (comm: MPI_Comm, size: *mut c_int) on comm comm => {
        let c_ref = check::comm(check::universe()?, comm)?;
        let c = &*c_ref;
        let size = out(size, "size")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *size = c.size() as c_int };
        Ok(())
    }

    fn MPI_Comm_compare / PMPI_Comm_compare (comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) on comm comm1 => {
        let u = check::universe()?;
        let a_ref = check::comm(u, comm1)?;
        let a = &*a_ref;
        let b_ref = check::comm(u, comm2)?;
        let b = &*b_ref;
        // Intercommunicators compare both groups; one never equals an intracommunicator
        // (MPI 4.1 section 7.6.1).
        let sorted = |g: &[usize]| {
            let mut g = g.to_vec();
            g.sort_unstable();
            g
        };
        let result = out(result, "result")?;
        let r = if comm1 == comm2 || a.context == b.context && a.group == b.group && a.remote == b.remote {
            MPI_IDENT
        } else if a.is_inter() != b.is_inter() {
            MPI_UNEQUAL
        } else if a.group == b.group && a.remote == b.remote {
            MPI_CONGRUENT
        } else if sorted(&a.group) == sorted(&b.group) && sorted(a.peers()) == sorted(b.peers()) {
            MPI_SIMILAR
        } else {
            MPI_UNEQUAL
        };
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *result = r };
        Ok(())
    }

    fn MPI_Comm_dup / PMPI_Comm_dup (comm: MPI_Comm, newcomm: *mut MPI_Comm) on comm comm => {
        let newcomm = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        // Attribute caching: dup_with_attrs runs the copy callbacks of comm's attributes (ffi/comm/attr.rs).
        // SAFETY: the callbacks are the application's, registered with their keyvals.
        // A failed dup (a copy callback's error) gives MPI_COMM_NULL, as in MPICH.
        let h = unsafe { crate::ffi::comm::attr::dup_with_attrs(u, comm, &c_ref) };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newcomm = *h.as_ref().unwrap_or(&MPI_COMM_NULL) };
        let h = h?;
        Ok(())
    }

    fn MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info (comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) on comm comm => {
        // No communicator info hints are acted on yet (hints may be ignored, MPI 4.1 section
        // 7.4.4); the new communicator keeps `info`'s hints for MPI_Comm_get_info.
        let newcomm = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        // Attribute caching: dup_with_attrs runs the copy callbacks of comm's attributes (ffi/comm/attr.rs).
        // SAFETY: the callbacks are the application's, registered with their keyvals.
        // A failed dup (a copy callback's error) gives MPI_COMM_NULL, as in MPICH.
        let h = unsafe { crate::ffi::comm::attr::dup_with_attrs(u, comm, &c_ref) };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newcomm = *h.as_ref().unwrap_or(&MPI_COMM_NULL) };
        let h = h?;
        if let Ok(c) = check::comm(u, h) {
            crate::ffi::info::set_hints(&c, info)?;
        }
        Ok(())
    }

    fn MPI_Comm_idup / PMPI_Comm_idup (comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) on comm comm => {
        // SAFETY: the caller passes an MPI_Comm and an MPI_Request to write (NULL is rejected),
        // `newcomm` valid until the request completes, as the standard requires.
        unsafe { idup(comm, MPI_INFO_NULL, newcomm, request) }
    }

    fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info (comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) on comm comm => {
        // SAFETY: as in MPI_Comm_idup.
        unsafe { idup(comm, info, newcomm, request) }
    }

    fn MPI_Comm_split / PMPI_Comm_split (comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) on comm comm => {
        let newcomm = out(newcomm, "newcomm")?;
        if color < 0 && color != MPI_UNDEFINED {
            return Err(err(MPI_ERR_ARG, format!("invalid color {color}: must be non-negative or MPI_UNDEFINED")));
        }
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        let color = (color != MPI_UNDEFINED).then_some(color);
        let made = if c_ref.is_inter() { crate::construct::inter::split(u, &c_ref, color, key)? } else { crate::construct::intra::split(u, &c_ref, color, key)? };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newcomm = made.map_or(MPI_COMM_NULL, check::comm_handle) };
        Ok(())
    }

    fn MPI_Comm_split_type / PMPI_Comm_split_type (comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) on comm comm => {
        let newcomm = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let c_ref = check::comm(u, comm)?;
        use crate::construct::split_type::{split_type as split_by_type, SplitKind};
        let guided_name = match (split_type, info) {
            (MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED, i) if i != MPI_INFO_NULL => crate::ffi::info::value_of(i, HW_RESOURCE_KEY)?,
            _ => None,
        };
        let kind = match split_type {
            MPI_COMM_TYPE_SHARED => SplitKind::Shared,
            // MPI 4.1 defines RESOURCE_GUIDED by the same mpi_hw_resource_type key as HW_GUIDED.
            MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => SplitKind::Guided(guided_name.as_deref()),
            MPI_COMM_TYPE_HW_UNGUIDED => SplitKind::Unguided,
            _ => SplitKind::Undefined,
        };
        let made = if c_ref.is_inter() {
            // On an intercommunicator, as in MPICH: the split with one color (the whole node) for
            // the shared-memory types, MPI_COMM_NULL for the others.
            let node = matches!(kind, SplitKind::Shared) || guided_name.as_deref() == Some(crate::construct::hw_resources::SHARED_MEMORY);
            crate::construct::inter::split(u, &c_ref, node.then_some(0), key)?
        } else {
            let (made, resource) = split_by_type(u, &c_ref, kind, key)?;
            // An unguided split reports the resource type it used (MPI 4.1 section 7.4.2).
            if let (Some(_), Some(r), true) = (made, resource, info != MPI_INFO_NULL) {
                crate::ffi::info::set_value(info, HW_RESOURCE_KEY, r)?;
            }
            made
        };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newcomm = made.map_or(MPI_COMM_NULL, check::comm_handle) };
        Ok(())
    }

    fn MPI_Comm_free / PMPI_Comm_free (comm: *mut MPI_Comm) on comm MPI_COMM_WORLD => {
        // SAFETY: the caller passes its handle, an MPI_Comm (NULL is rejected).
        unsafe { free_comm(comm, false) }
    }

    // MPI 4.1 section 11.10.4: collective; returns once all communication on the communicator
    // completed, then frees it. Every exchange oxmpi starts for the application completes before
    // its call (or request) does, so a barrier makes sure every peer is done with it.
    fn MPI_Comm_disconnect / PMPI_Comm_disconnect (comm: *mut MPI_Comm) on comm MPI_COMM_WORLD => {
        // SAFETY: the caller passes its handle, an MPI_Comm (NULL is rejected).
        unsafe { free_comm(comm, true) }
    }

    fn MPI_Comm_set_name / PMPI_Comm_set_name (comm: MPI_Comm, comm_name: *const c_char) on comm comm => {
        let c_ref = check::comm(check::universe()?, comm)?;
        // SAFETY: the standard makes `comm_name` a NUL-terminated string (NULL is rejected).
        let s = unsafe { c_str(comm_name, "comm_name")? }.to_string_lossy();
        let s: String = s.chars().take(MPI_MAX_OBJECT_NAME - 1).collect();
        c_ref.set_name(&s);
        Ok(())
    }

    fn MPI_Comm_get_name / PMPI_Comm_get_name (comm: MPI_Comm, comm_name: *mut c_char, resultlen: *mut c_int) on comm comm => {
        let name = out(comm_name, "comm_name")?;
        let len = out(resultlen, "resultlen")?;
        // MPI 4.1 section 7.8: the null handle is predefined and has its name.
        let s = if comm == MPI_COMM_NULL { "MPI_COMM_NULL".to_string() } else { check::comm(check::universe()?, comm)?.name() };
        // SAFETY: both checked non-NULL above; the standard makes `comm_name` hold
        // MPI_MAX_OBJECT_NAME chars and `resultlen` an int.
        unsafe { *len = crate::ffi::env::init::write_cstr(name, MPI_MAX_OBJECT_NAME, &s) as c_int };
        Ok(())
    }

    fn MPI_Comm_test_inter / PMPI_Comm_test_inter (comm: MPI_Comm, flag: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let flag = out(flag, "flag")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *flag = c.is_inter() as c_int };
        Ok(())
    }

    fn MPI_Comm_remote_size / PMPI_Comm_remote_size (comm: MPI_Comm, size: *mut c_int) on comm comm => {
        let c = check::comm(check::universe()?, comm)?;
        let remote = c.remote.as_ref().ok_or_else(|| err(MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator"))?;
        let size = out(size, "size")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *size = remote.len() as c_int };
        Ok(())
    }

    fn MPI_Intercomm_create / PMPI_Intercomm_create (local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut MPI_Comm) on comm local_comm => {
        let newintercomm = out(newintercomm, "newintercomm")?;
        let u = check::universe()?;
        let local = check::comm(u, local_comm)?;
        check::intra(&local, "MPI_Intercomm_create (as local_comm)")?;
        if local_leader < 0 || local_leader as usize >= local.size() {
            return Err(err(MPI_ERR_RANK, format!("invalid local_leader {local_leader}: local_comm has {} ranks", local.size())));
        }
        // peer_comm, remote_leader and tag are significant at the local leader only.
        let link = if local.rank == local_leader as usize {
            let peer = check::comm(u, peer_comm)?;
            let tag = check::send_tag(tag)?;
            let remote = check::dest_rank(&peer, remote_leader)?
                .ok_or_else(|| err(MPI_ERR_RANK, "remote_leader cannot be MPI_PROC_NULL"))?;
            if remote == u.rank {
                return Err(err(MPI_ERR_RANK, format!("remote_leader {remote_leader} is this process: the two groups must be disjoint")));
            }
            Some(crate::construct::inter::LeaderLink { remote_leader: remote, tag, context: peer.context })
        } else {
            None
        };
        let i = crate::construct::inter::create(u, &local, local_leader as usize, link)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newintercomm = check::comm_handle(i) };
        Ok(())
    }

    fn MPI_Intercomm_merge / PMPI_Intercomm_merge (intercomm: MPI_Comm, high: c_int, newintracomm: *mut MPI_Comm) on comm intercomm => {
        let newintracomm = out(newintracomm, "newintracomm")?;
        let u = check::universe()?;
        let c = check::comm(u, intercomm)?;
        if !c.is_inter() {
            return Err(err(MPI_ERR_COMM, "MPI_Intercomm_merge needs an intercommunicator"));
        }
        let i = crate::construct::inter::merge(u, &c, high != 0)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *newintracomm = check::comm_handle(i) };
        Ok(())
    }

    fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler (comm: MPI_Comm, errhandler: MPI_Errhandler) on comm comm => {
        set_errhandler(comm, errhandler)
    }

    /// MPI-1 name of MPI_Comm_set_errhandler (deprecated, still exported by MPICH).
    fn MPI_Errhandler_set / PMPI_Errhandler_set (comm: MPI_Comm, errhandler: MPI_Errhandler) on comm comm => {
        set_errhandler(comm, errhandler)
    }

    fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler (comm: MPI_Comm, errhandler: *mut MPI_Errhandler) on comm comm => {
        // SAFETY: the caller passes an MPI_Errhandler to write (NULL is rejected).
        unsafe { get_errhandler(comm, errhandler) }
    }

    /// MPI-1 name of MPI_Comm_get_errhandler.
    fn MPI_Errhandler_get / PMPI_Errhandler_get (comm: MPI_Comm, errhandler: *mut MPI_Errhandler) on comm comm => {
        // SAFETY: the caller passes an MPI_Errhandler to write (NULL is rejected).
        unsafe { get_errhandler(comm, errhandler) }
    }

    fn MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler (comm_errhandler_fn: Option<CommErrhandlerFn>, errhandler: *mut MPI_Errhandler) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes an MPI_Errhandler to write (NULL is rejected).
        unsafe { create_errhandler(comm_errhandler_fn, errhandler) }
    }

    /// MPI-1 name of MPI_Comm_create_errhandler.
    fn MPI_Errhandler_create / PMPI_Errhandler_create (comm_errhandler_fn: Option<CommErrhandlerFn>, errhandler: *mut MPI_Errhandler) on comm MPI_COMM_SELF => {
        // SAFETY: the caller passes an MPI_Errhandler to write (NULL is rejected).
        unsafe { create_errhandler(comm_errhandler_fn, errhandler) }
    }

    fn MPI_Errhandler_free / PMPI_Errhandler_free (errhandler: *mut MPI_Errhandler) on comm MPI_COMM_SELF => {
        let h = out(errhandler, "errhandler")?;
        // SAFETY: checked non-NULL above; the caller passes its handle, an MPI_Errhandler.
        free_errhandler(unsafe { *h })?;
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *h = MPI_ERRHANDLER_NULL };
        Ok(())
    }

    fn MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler (comm: MPI_Comm, errorcode: c_int) on comm comm => {
        check::comm(check::universe()?, comm)?;
        let class = crate::ffi::error_codes::class_of(errorcode).unwrap_or(MPI_ERR_UNKNOWN);
        // Route through the normal dispatch; the call itself succeeds if the handler returns.
        crate::ffi::env::errhandler::raise_code("MPI_Comm_call_errhandler", comm, err(class, format!("error code {errorcode} raised by the application")), errorcode);
        Ok(())
    }
}

/// MPI_Comm_idup(_with_info): MPI_Comm_dup on a background thread, completing `request`; the
/// new handle is written to `newcomm` before the request completes (MPI 4.1 section 7.4.2).
///
/// # Safety
/// `newcomm` and `request` must be NULL or writable; `newcomm` must stay valid until the request
/// completes (the standard's rule for nonblocking output arguments).
unsafe fn idup(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> crate::error::MpiResult {
    let newcomm = out(newcomm, "newcomm")?;
    let request = out(request, "request")?;
    let u = check::universe()?;
    let parent = check::comm(u, comm)?;
    // The hints are copied now: `info` may be freed as soon as this call returns.
    let hints = (info != MPI_INFO_NULL).then(|| crate::ffi::info::hints_of(info)).transpose()?;
    // Another thread of this rank now uses the engine: completions must wake other waiters.
    u.engine.set_threaded(true);
    let id = u.engine.new_external();
    let ticket = u.idups.ticket(parent.context);
    let ctx = crate::runtime::job::context();
    let out_addr = newcomm as usize;
    let spawned = std::thread::Builder::new().name("oxmpi-idup".into()).spawn(move || {
        crate::runtime::job::set_context(ctx);
        u.idups.wait_turn(parent.context, ticket);
        // SAFETY: attribute copy callbacks are the application's (as in MPI_Comm_dup).
        let result = unsafe { crate::ffi::comm::attr::dup_with_attrs_tagged(u, comm, &parent, crate::coll::TAG_IDUP) };
        u.idups.done(parent.context);
        let (handle, class) = match result {
            Ok(h) => (h, None),
            Err(e) => (MPI_COMM_NULL, Some(e.class)),
        };
        if let (Some(h), Ok(c)) = (hints, check::comm(u, handle)) {
            *c.hints.lock().unwrap_or_else(|p| p.into_inner()) = h;
        }
        // SAFETY: `newcomm` stays valid until the request completes (caller's contract).
        unsafe { *(out_addr as *mut MPI_Comm) = handle };
        u.engine.complete_external(id, class);
    });
    if let Err(e) = spawned {
        u.engine.complete_external(id, Some(ErrorClass::Other));
        return Err(err(MPI_ERR_OTHER, format!("cannot start the MPI_Comm_idup thread: {e}")));
    }
    // SAFETY: checked non-NULL above; the caller passes an MPI_Request (contract).
    unsafe { *request = check::req_handle(id) };
    Ok(())
}

fn set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> crate::error::MpiResult {
    let c = check::comm(check::universe()?, comm)?;
    if !is_valid_errhandler(errhandler) {
        return Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", errhandler as u32)));
    }
    c.set_errhandler(errhandler);
    if !matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT) {
        // The program handles errors itself: from now on a dead rank no longer ends the job.
        crate::ulfm::want_survival(check::universe()?);
    }
    Ok(())
}

/// # Safety
/// `errhandler` must be NULL or writable.
unsafe fn get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> crate::error::MpiResult {
    let c = check::comm(check::universe()?, comm)?;
    let errhandler = out(errhandler, "errhandler")?;
    // SAFETY: checked non-NULL above; writable by this function's contract.
    unsafe { *errhandler = c.errhandler() };
    Ok(())
}

/// # Safety
/// `errhandler` must be NULL or writable.
unsafe fn create_errhandler(f: Option<CommErrhandlerFn>, errhandler: *mut MPI_Errhandler) -> crate::error::MpiResult {
    let f = f.ok_or_else(|| err(MPI_ERR_ARG, "the error handler function is NULL"))?;
    let h = create_user_handler(f);
    let errhandler = out(errhandler, "errhandler")?;
    // SAFETY: checked non-NULL above; writable by this function's contract.
    unsafe { *errhandler = h };
    Ok(())
}

/// The barrier of communicator constructors (fixed internal tag, see `coll`).
pub fn barrier(u: &crate::instance::Instance, c: &crate::comm::Comm) {
    crate::coll::barrier::barrier(&crate::coll::Coll::fixed(u, c, 0)).expect("zero-byte standard sends do not fail");
}
