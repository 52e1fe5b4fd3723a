//! Communicators made from groups without a parent (MPI 4.1 sections 7.4.2 and 7.6.2):
//! MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups, the constructors of the
//! Sessions model (over `construct::from_group`). They work on any group, a session's or one of
//! the World model. Their errors go to the error handler they are given (the new communicator's),
//! as there is no object yet.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::comm::group::group;
use crate::ffi::env::errhandler::is_valid_errhandler;
use crate::ffi::pointer_args::{c_str, out};
use std::os::raw::{c_char, c_int};

/// The string tag argument: at most MPI_MAX_STRINGTAG_LEN bytes with its terminator.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn stringtag<'a>(p: *const c_char) -> MpiResult<&'a [u8]> {
    // SAFETY: per this function's contract.
    let t = unsafe { c_str(p, "stringtag") }?.to_bytes();
    if t.len() >= MPI_MAX_STRINGTAG_LEN {
        return Err(err(MPI_ERR_ARG, format!("the string tag has {} characters; at most {} are allowed", t.len(), MPI_MAX_STRINGTAG_LEN - 1)));
    }
    Ok(t)
}

fn check_errhandler(h: MPI_Errhandler) -> MpiResult {
    if is_valid_errhandler(h) {
        Ok(())
    } else {
        Err(err(MPI_ERR_ARG, format!("invalid error handler 0x{:08x}", h as u32)))
    }
}

/// Gives the new communicator `index` the hints of `info`, ties it to the session its group came
/// from (whose buffered-send buffer it uses, MPI 4.1 section 3.6.1) and returns its handle.
fn finish(u: &crate::instance::Instance, index: u32, info: MPI_Info, session: Option<usize>) -> MpiResult<MPI_Comm> {
    let c = u.comms.get(index).expect("a communicator just made is in the table");
    crate::ffi::info::set_hints(&c, info)?;
    if let Some(s) = session {
        u.engine.bind_session(c.context, s);
    }
    Ok(check::comm_handle(index))
}

export! {
    fn MPI_Comm_create_from_group / PMPI_Comm_create_from_group (group: MPI_Group, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) on handler (errhandler, MPI_COMM_NULL) => {
        let o = out(newcomm, "newcomm")?;
        let u = check::universe()?;
        let g = self::group(u, group)?;
        // SAFETY: the caller passes a NUL-terminated string (NULL is rejected).
        let tag = unsafe { self::stringtag(stringtag) }?;
        check_errhandler(errhandler)?;
        // MPI_GROUP_EMPTY: a local call giving MPI_COMM_NULL.
        let h = if g.size() == 0 {
            MPI_COMM_NULL
        } else {
            let i = crate::construct::from_group::create(u, &g.members, tag, errhandler)?;
            finish(u, i, info, g.session)?
        };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Intercomm_create_from_groups / PMPI_Intercomm_create_from_groups (local_group: MPI_Group, local_leader: c_int, remote_group: MPI_Group, remote_leader: c_int, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newintercomm: *mut MPI_Comm) on handler (errhandler, MPI_COMM_NULL) => {
        let o = out(newintercomm, "newintercomm")?;
        let u = check::universe()?;
        let (local, remote) = (group(u, local_group)?, group(u, remote_group)?);
        // SAFETY: the caller passes a NUL-terminated string (NULL is rejected).
        let tag = unsafe { self::stringtag(stringtag) }?;
        check_errhandler(errhandler)?;
        if local.size() == 0 || remote.size() == 0 {
            return Err(err(MPI_ERR_GROUP, "MPI_Intercomm_create_from_groups: both groups must be non-empty"));
        }
        if local_leader < 0 || local_leader as usize >= local.size() {
            return Err(err(MPI_ERR_RANK, format!("invalid local_leader {local_leader}: the local group has {} ranks", local.size())));
        }
        // remote_leader is significant at the local leader only (MPI 4.1 section 7.6.2).
        let leader = local.members[local_leader as usize] == u.rank;
        if leader && (remote_leader < 0 || remote_leader as usize >= remote.size()) {
            return Err(err(MPI_ERR_RANK, format!("invalid remote_leader {remote_leader}: the remote group has {} ranks", remote.size())));
        }
        let i = crate::construct::from_group::create_inter(u, &local.members, &remote.members, tag, errhandler)?;
        let h = finish(u, i, info, local.session)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *o = h };
        Ok(())
    }
}
