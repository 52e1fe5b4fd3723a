//! Groups (MPI 4.1 section 7.3) and MPI_Comm_group: handle conversion and argument checks over
//! `crate::group`. User groups are `DIRECT | GROUP | index` into the rank's `GroupTable`;
//! `MPI_GROUP_EMPTY` is built in. Every operation whose result is empty returns `MPI_GROUP_EMPTY`
//! (as MPICH does), and freeing `MPI_GROUP_EMPTY` succeeds without destroying it, because a program
//! cannot tell whether an operation gave it the predefined handle and must free every result.
//! Calls without a communicator raise their errors on MPI_COMM_SELF.
use crate::ffi::check;
use crate::ffi::pointer_args::{out, output};
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::group::{Comparison, Group, Translated};
use crate::instance::Instance;
use std::os::raw::c_int;
use std::sync::Arc;

/// The group behind handle `h`.
pub(crate) fn group(u: &Instance, h: MPI_Group) -> MpiResult<Arc<Group>> {
    match h {
        MPI_GROUP_EMPTY => Ok(Arc::new(Group::default())),
        MPI_GROUP_NULL => Err(err(MPI_ERR_GROUP, "invalid group: MPI_GROUP_NULL")),
        _ if handle_kind(h) == HANDLE_KIND_DIRECT && handle_object(h) == OBJ_GROUP => u
            .groups
            .get(handle_index(h) as usize)
            .ok_or_else(|| err(MPI_ERR_GROUP, format!("invalid group 0x{:08x} (freed, or never created by this rank)", h as u32))),
        _ => Err(err(MPI_ERR_GROUP, format!("invalid group: 0x{:08x} is not a group handle", h as u32))),
    }
}

/// Registers `g` and returns its handle (`MPI_GROUP_EMPTY` for an empty group).
pub(crate) fn new_handle(u: &Instance, g: Group) -> MpiResult<MPI_Group> {
    if g.size() == 0 {
        return Ok(MPI_GROUP_EMPTY);
    }
    let i = u.groups.insert(g).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many groups exist (2^26); free some with MPI_Group_free"))?;
    Ok(make_handle(HANDLE_KIND_DIRECT, OBJ_GROUP, i as u32))
}

/// `n` elements from a C array (`n` checked non-negative, the array non-NULL when `n > 0`).
///
/// # Safety
/// `p` must point to at least `n` readable elements when `n > 0`.
unsafe fn array<'a, T>(p: *const T, n: c_int, what: &str) -> MpiResult<&'a [T]> {
    if n < 0 {
        return Err(err(MPI_ERR_ARG, format!("invalid count n = {n}: must be non-negative")));
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(err(MPI_ERR_ARG, format!("{what} is NULL with n = {n}")));
    }
    // SAFETY: the caller guarantees `n` readable elements at the non-NULL `p`.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

/// Shared body of the two-group constructors (union, intersection, difference).
fn binary(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group, op: fn(&Group, &Group) -> Group) -> MpiResult {
    let u = check::universe()?;
    let (a, b) = (group(u, group1)?, group(u, group2)?);
    let o = out(newgroup, "newgroup")?;
    let h = new_handle(u, op(&a, &b))?;
    // SAFETY: `o` is non-NULL and, by the MPI contract, points to an MPI_Group.
    unsafe { *o = h };
    Ok(())
}

export! {
    fn MPI_Group_size / PMPI_Group_size (group: MPI_Group, size: *mut c_int) on comm MPI_COMM_SELF => {
        let g = self::group(check::universe()?, group)?;
        let size = out(size, "size")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *size = g.size() as c_int };
        Ok(())
    }

    fn MPI_Group_rank / PMPI_Group_rank (group: MPI_Group, rank: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let g = self::group(u, group)?;
        let rank = out(rank, "rank")?;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *rank = g.rank_of(u.rank).map_or(MPI_UNDEFINED, |r| r as c_int) };
        Ok(())
    }

    fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks (group1: MPI_Group, n: c_int, ranks1: *const c_int, group2: MPI_Group, ranks2: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let (a, b) = (group(u, group1)?, group(u, group2)?);
        // SAFETY: the standard makes `ranks1` hold `n` ints; it is read in full here, before
        // `ranks2` (which may be the same array) is written.
        let input = unsafe { array(ranks1, n, "ranks1")? };
        if n > 0 && ranks2.is_null() {
            return Err(err(MPI_ERR_ARG, format!("ranks2 is NULL with n = {n}")));
        }
        let input: Vec<Option<c_int>> = input.iter().map(|&r| (r != MPI_PROC_NULL).then_some(r)).collect();
        let result: Vec<c_int> = a
            .translate(&input, &b)?
            .into_iter()
            .map(|r| match r {
                Translated::Rank(r) => r as c_int,
                Translated::NotMember => MPI_UNDEFINED,
                Translated::NullProcess => MPI_PROC_NULL,
            })
            .collect();
        // Written after the whole input is read and checked: ranks1 and ranks2 may be the same array.
        // SAFETY: the standard makes `ranks2` hold `n` ints (`result` has one per input rank).
        unsafe { output(ranks2, &result, "ranks2") }
    }

    fn MPI_Group_compare / PMPI_Group_compare (group1: MPI_Group, group2: MPI_Group, result: *mut c_int) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let (a, b) = (group(u, group1)?, group(u, group2)?);
        let result = out(result, "result")?;
        let r = match a.compare(&b) {
            Comparison::Ident => MPI_IDENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *result = r };
        Ok(())
    }

    fn MPI_Group_union / PMPI_Group_union (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        binary(group1, group2, newgroup, Group::union)
    }

    fn MPI_Group_intersection / PMPI_Group_intersection (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        binary(group1, group2, newgroup, Group::intersection)
    }

    fn MPI_Group_difference / PMPI_Group_difference (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        binary(group1, group2, newgroup, Group::difference)
    }

    fn MPI_Group_incl / PMPI_Group_incl (group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let g = self::group(u, group)?;
        // SAFETY: the standard makes `ranks` hold `n` ints (NULL is rejected).
        let result = g.incl(unsafe { array(ranks, n, "ranks")? })?;
        let h = new_handle(u, result)?;
        let newgroup = out(newgroup, "newgroup")?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *newgroup = h };
        Ok(())
    }

    fn MPI_Group_excl / PMPI_Group_excl (group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let g = self::group(u, group)?;
        // SAFETY: the standard makes `ranks` hold `n` ints (NULL is rejected).
        let result = g.excl(unsafe { array(ranks, n, "ranks")? })?;
        let h = new_handle(u, result)?;
        let newgroup = out(newgroup, "newgroup")?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *newgroup = h };
        Ok(())
    }

    fn MPI_Group_range_incl / PMPI_Group_range_incl (group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let g = self::group(u, group)?;
        // SAFETY: the standard makes `ranges` hold `n` triplets of ints (NULL is rejected).
        let result = g.range_incl(unsafe { array(ranges as *const [c_int; 3], n, "ranges")? })?;
        let h = new_handle(u, result)?;
        let newgroup = out(newgroup, "newgroup")?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *newgroup = h };
        Ok(())
    }

    fn MPI_Group_range_excl / PMPI_Group_range_excl (group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let g = self::group(u, group)?;
        // SAFETY: the standard makes `ranges` hold `n` triplets of ints (NULL is rejected).
        let result = g.range_excl(unsafe { array(ranges as *const [c_int; 3], n, "ranges")? })?;
        let h = new_handle(u, result)?;
        let newgroup = out(newgroup, "newgroup")?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *newgroup = h };
        Ok(())
    }

    fn MPI_Group_free / PMPI_Group_free (group: *mut MPI_Group) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        let p = out(group, "group")?;
        // SAFETY: checked non-NULL above; the caller passes its handle, an MPI_Group.
        match unsafe { *p } {
            MPI_GROUP_EMPTY => {}
            g => {
                self::group(u, g)?;
                u.groups.remove(handle_index(g) as usize);
            }
        }
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *p = MPI_GROUP_NULL };
        Ok(())
    }

    /// The group of MPI_COMM_WORLD or MPI_COMM_SELF, as a new group object.
    fn MPI_Comm_group / PMPI_Comm_group (comm: MPI_Comm, group: *mut MPI_Group) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let o = out(group, "group")?;
        let h = new_handle(u, Group::new(c.group.clone()))?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Comm_remote_group / PMPI_Comm_remote_group (comm: MPI_Comm, group: *mut MPI_Group) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let o = out(group, "group")?;
        let remote = c.remote.as_ref().ok_or_else(|| err(MPI_ERR_COMM, "MPI_Comm_remote_group needs an intercommunicator"))?;
        let h = new_handle(u, Group::new(remote.clone()))?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Group for the new handle.
        unsafe { *o = h };
        Ok(())
    }
}

/// The group's members as world ranks, checked to lie within communicator `c`.
fn members_within(c: &crate::comm::Comm, g: &Group) -> MpiResult<Vec<usize>> {
    if let Some(w) = g.members.iter().find(|w| !c.group.contains(w)) {
        let whose = if c.is_inter() { "the intercommunicator's local group" } else { "the communicator" };
        return Err(err(MPI_ERR_GROUP, format!("the group holds world rank {w}, which is not in {whose}")));
    }
    Ok(g.members.clone())
}

export! {
    fn MPI_Comm_create / PMPI_Comm_create (comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        let o = out(newcomm, "newcomm")?;
        // On an intercommunicator `group` is a subset of the local group (MPI 4.1 section 7.4.2);
        // a bad one is reported to both groups, so that the other one does not wait.
        let members = self::group(u, group).and_then(|g| members_within(&c, &g));
        let made = if c.is_inter() { crate::construct::inter::create_subsets(u, &c, members)? } else { crate::construct::intra::create(u, &c, &members?)? };
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *o = made.map_or(MPI_COMM_NULL, check::comm_handle) };
        Ok(())
    }

    fn MPI_Comm_create_group / PMPI_Comm_create_group (comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) on comm comm => {
        let u = check::universe()?;
        let c = check::comm(u, comm)?;
        if c.is_inter() {
            return Err(err(MPI_ERR_COMM, "MPI_Comm_create_group needs an intracommunicator: MPI 4.1 section 7.4.2 defines it on intracommunicators only (use MPI_Comm_create on an intercommunicator)"));
        }
        let o = out(newcomm, "newcomm")?;
        check::send_tag(tag)?;
        let g = self::group(u, group)?;
        let members = members_within(&c, &g)?;
        let h = crate::construct::intra::create_group(u, &c, &members, tag)?.map_or(MPI_COMM_NULL, check::comm_handle);
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *o = h };
        Ok(())
    }
}
