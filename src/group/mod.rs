//! MPI groups (MPI 4.1 section 7.3): an ordered set of processes, kept as the world rank of each
//! member, and the per-rank registry that gives user-visible group objects their index.
//!
//! The set operations are pure functions on `Group`; only the FFI layer turns indices into handles.
//! Errors carry the classes MPICH raises (checked against MPICH 4.0.2 by `c-tests/group_ops.c`):
//! an invalid rank in a rank list is `ErrorClass::Rank`, a bad count or range triplet is `ErrorClass::Arg`.
//! MPICH 4.0.2 accepts duplicate ranks in MPI_Group_incl/excl (the standard says they are
//! erroneous); oxmpi reports them as `ErrorClass::Rank`, the class of the other rank-list errors.
use crate::error::{err, MpiResult, ErrorClass};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// MPI_Group_compare's answer (MPI 4.1 section 7.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Same members in the same order.
    Ident,
    /// Same members, another order.
    Similar,
    Unequal,
}

/// One rank of MPI_Group_translate_ranks's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Translated {
    Rank(usize),
    /// The process is not a member of the other group (MPI_UNDEFINED in C).
    NotMember,
    /// The null process, which translates to itself.
    NullProcess,
}

/// An ordered list of distinct world ranks; group rank `i` is world rank `members[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub members: Vec<usize>,
    /// The session (index in the rank's session table) whose process set the group came from,
    /// kept by the groups made from it: a communicator made from the group uses that session's
    /// buffered-send buffer (MPI 4.1 section 3.6.1).
    pub session: Option<usize>,
}

impl Group {
    pub fn new(members: Vec<usize>) -> Group {
        Group { members, session: None }
    }
    /// This group, as derived from session `s`.
    pub fn of_session(mut self, s: usize) -> Group {
        self.session = Some(s);
        self
    }
    pub fn size(&self) -> usize {
        self.members.len()
    }
    /// The group rank of world rank `w`, if it is a member.
    pub fn rank_of(&self, w: usize) -> Option<usize> {
        self.members.iter().position(|&m| m == w)
    }

    fn check_rank(&self, r: i32, what: &str) -> MpiResult<usize> {
        if r < 0 || r as usize >= self.size() {
            return Err(err(ErrorClass::Rank, format!("invalid rank {r} in {what}: the group has {} members (ranks {})", self.size(), crate::error::indices(self.size()))));
        }
        Ok(r as usize)
    }

    /// MPI_Group_translate_ranks: the rank in `other` of each rank of `self` (None: the null
    /// process, which stays null).
    pub fn translate(&self, ranks: &[Option<i32>], other: &Group) -> MpiResult<Vec<Translated>> {
        // One map instead of a linear search per rank: translate_ranks is often called with every rank.
        let index: HashMap<usize, usize> = other.members.iter().enumerate().map(|(i, &w)| (w, i)).collect();
        ranks
            .iter()
            .map(|&r| {
                let Some(r) = r else { return Ok(Translated::NullProcess) };
                let w = self.members[self.check_rank(r, "ranks1")?];
                Ok(index.get(&w).map_or(Translated::NotMember, |&i| Translated::Rank(i)))
            })
            .collect()
    }

    /// MPI_Group_compare: IDENT (same members, same order), SIMILAR (same members), else UNEQUAL.
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.members == other.members {
            Comparison::Ident
        } else if self.size() == other.size() && self.members.iter().collect::<HashSet<_>>() == other.members.iter().collect::<HashSet<_>>() {
            Comparison::Similar
        } else {
            Comparison::Unequal
        }
    }

    /// MPI_Group_union: the members of `self` in order, then those of `other` not in `self`.
    pub fn union(&self, other: &Group) -> Group {
        let mine: HashSet<usize> = self.members.iter().copied().collect();
        let mut members = self.members.clone();
        members.extend(other.members.iter().copied().filter(|w| !mine.contains(w)));
        Group { members, session: self.session }
    }

    /// MPI_Group_intersection: the members of `self` that are in `other`, in `self`'s order.
    pub fn intersection(&self, other: &Group) -> Group {
        let theirs: HashSet<usize> = other.members.iter().copied().collect();
        Group { session: self.session, members: self.members.iter().copied().filter(|w| theirs.contains(w)).collect() }
    }

    /// MPI_Group_difference: the members of `self` not in `other`, in `self`'s order.
    pub fn difference(&self, other: &Group) -> Group {
        let theirs: HashSet<usize> = other.members.iter().copied().collect();
        Group { session: self.session, members: self.members.iter().copied().filter(|w| !theirs.contains(w)).collect() }
    }

    /// Checks a list of distinct valid ranks (MPI_Group_incl / excl) and returns them as indices.
    fn distinct_ranks(&self, ranks: &[i32]) -> MpiResult<Vec<usize>> {
        if ranks.len() > self.size() {
            return Err(err(ErrorClass::Arg, format!("n = {} is larger than the group ({} members)", ranks.len(), self.size())));
        }
        let mut seen = vec![false; self.size()];
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let r = self.check_rank(r, &format!("ranks[{i}]"))?;
                if std::mem::replace(&mut seen[r], true) {
                    return Err(err(ErrorClass::Rank, format!("rank {r} appears twice in ranks (again at ranks[{i}])")));
                }
                Ok(r)
            })
            .collect()
    }

    /// MPI_Group_incl: member `ranks[i]` of `self` becomes rank `i`.
    pub fn incl(&self, ranks: &[i32]) -> MpiResult<Group> {
        Ok(Group { session: self.session, members: self.distinct_ranks(ranks)?.into_iter().map(|r| self.members[r]).collect() })
    }

    /// MPI_Group_excl: the members of `self` not listed, in `self`'s order.
    pub fn excl(&self, ranks: &[i32]) -> MpiResult<Group> {
        let mut drop = vec![false; self.size()];
        for r in self.distinct_ranks(ranks)? {
            drop[r] = true;
        }
        Ok(Group { session: self.session, members: self.members.iter().zip(drop).filter(|(_, d)| !d).map(|(&w, _)| w).collect() })
    }

    /// Expands `(first, last, stride)` triplets into ranks, in order, with MPICH's checks: a zero
    /// stride, a first or last *produced* rank outside the group, a triplet whose stride points away from `last`, or a
    /// rank produced twice is `ErrorClass::Arg`.
    fn expand_ranges(&self, ranges: &[[i32; 3]]) -> MpiResult<Vec<usize>> {
        let size = self.size() as i64;
        let mut seen = vec![false; self.size()];
        let mut out = Vec::new();
        for (i, &[first, last, stride]) in ranges.iter().enumerate() {
            let (first, last, stride) = (first as i64, last as i64, stride as i64);
            if stride == 0 {
                return Err(err(ErrorClass::Arg, format!("ranges[{i}] has stride 0")));
            }
            if first < 0 || first >= size {
                return Err(err(ErrorClass::Arg, format!("ranges[{i}] starts at {first}, outside the group of {size} members")));
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return Err(err(ErrorClass::Arg, format!("ranges[{i}] = ({first}, {last}, {stride}): the stride points away from the last rank")));
            }
            // Only the ranks actually produced must exist: (0, 8, 3) in a group of 8 is 0, 3, 6.
            let produced_last = first + stride * ((last - first) / stride);
            if produced_last < 0 || produced_last >= size {
                return Err(err(ErrorClass::Arg, format!("ranges[{i}] = ({first}, {last}, {stride}) reaches rank {produced_last}, outside the group of {size} members")));
            }
            let mut r = first;
            while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
                if std::mem::replace(&mut seen[r as usize], true) {
                    return Err(err(ErrorClass::Arg, format!("rank {r} is produced twice by ranges (again by ranges[{i}])")));
                }
                out.push(r as usize);
                r += stride;
            }
        }
        Ok(out)
    }

    /// MPI_Group_range_incl: the ranks of the triplets, in the order they are produced.
    pub fn range_incl(&self, ranges: &[[i32; 3]]) -> MpiResult<Group> {
        Ok(Group { session: self.session, members: self.expand_ranges(ranges)?.into_iter().map(|r| self.members[r]).collect() })
    }

    /// MPI_Group_range_excl: the members not produced by the triplets, in `self`'s order.
    pub fn range_excl(&self, ranges: &[[i32; 3]]) -> MpiResult<Group> {
        let mut drop = vec![false; self.size()];
        for r in self.expand_ranges(ranges)? {
            drop[r] = true;
        }
        Ok(Group { session: self.session, members: self.members.iter().zip(drop).filter(|(_, d)| !d).map(|(&w, _)| w).collect() })
    }
}

/// The group objects of one rank. Index `i` is the user handle's index; a slot is `None` once freed
/// and is reused by a later group. Groups are shared `Arc`s, so an object that holds one (a future
/// communicator created from it) keeps it alive after the user frees the handle, as MPI requires.
#[derive(Default)]
pub struct GroupTable {
    slots: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    groups: Vec<Option<Arc<Group>>>,
    free: Vec<usize>,
}

/// Indices stop at 2^26 - 1: the handle has 26 index bits.
const MAX_INDEX: usize = (1 << 26) - 1;

impl GroupTable {
    pub fn new() -> GroupTable {
        GroupTable::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `g`; returns its index, or None if all 2^26 indices are in use.
    pub fn insert(&self, g: Group) -> Option<usize> {
        let mut t = self.lock();
        let g = Some(Arc::new(g));
        if let Some(i) = t.free.pop() {
            t.groups[i] = g;
            return Some(i);
        }
        if t.groups.len() > MAX_INDEX {
            return None;
        }
        t.groups.push(g);
        Some(t.groups.len() - 1)
    }

    /// The live group at index `i`.
    pub fn get(&self, i: usize) -> Option<Arc<Group>> {
        self.lock().groups.get(i).cloned().flatten()
    }

    /// Frees index `i`; false if it was not live.
    pub fn remove(&self, i: usize) -> bool {
        let mut t = self.lock();
        match t.groups.get_mut(i).and_then(Option::take) {
            Some(_) => {
                t.free.push(i);
                true
            }
            None => false,
        }
    }

    /// Number of live groups (for leak checks in tests).
    pub fn live(&self) -> usize {
        self.lock().groups.iter().filter(|g| g.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(m: &[usize]) -> Group {
        Group::new(m.to_vec())
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let a = g(&[3, 1, 4, 0]);
        let b = g(&[5, 4, 2, 3]);
        assert_eq!(a.union(&b), g(&[3, 1, 4, 0, 5, 2]));
        assert_eq!(a.intersection(&b), g(&[3, 4]));
        assert_eq!(b.intersection(&a), g(&[4, 3]));
        assert_eq!(a.difference(&b), g(&[1, 0]));
        assert_eq!(a.compare(&a.clone()), Comparison::Ident);
        assert_eq!(a.compare(&g(&[0, 1, 3, 4])), Comparison::Similar);
        assert_eq!(a.compare(&b), Comparison::Unequal);
        assert_eq!(a.compare(&g(&[3, 1, 4])), Comparison::Unequal);
    }

    #[test]
    fn incl_excl_and_translate() {
        let w = g(&[0, 1, 2, 3, 4, 5]);
        let i = w.incl(&[5, 0, 3]).unwrap();
        assert_eq!(i, g(&[5, 0, 3]));
        assert_eq!(w.excl(&[5, 0, 3]).unwrap(), g(&[1, 2, 4]));
        assert_eq!(w.translate(&[Some(0), Some(3), None, Some(5)], &i).unwrap(), vec![Translated::Rank(1), Translated::Rank(2), Translated::NullProcess, Translated::Rank(0)]);
        assert_eq!(w.translate(&[Some(1)], &i).unwrap(), vec![Translated::NotMember]);
        assert_eq!(w.translate(&[Some(6)], &i).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(w.incl(&[1, 1]).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(w.incl(&[-1]).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(w.excl(&[6]).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(w.incl(&[]).unwrap(), g(&[]));
        assert_eq!(i.rank_of(3), Some(2));
        assert_eq!(i.rank_of(1), None);
    }

    #[test]
    fn ranges() {
        let w = g(&[10, 11, 12, 13, 14, 15, 16, 17]);
        assert_eq!(w.range_incl(&[[0, 6, 3], [7, 5, -2]]).unwrap(), g(&[10, 13, 16, 17, 15]));
        assert_eq!(w.range_incl(&[[2, 2, 1]]).unwrap(), g(&[12]));
        assert_eq!(w.range_excl(&[[0, 6, 3], [7, 5, -2]]).unwrap(), g(&[11, 12, 14]));
        assert_eq!(w.range_incl(&[[0, 3, 0]]).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(w.range_incl(&[[0, 8, 1]]).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(w.range_incl(&[[0, 8, 3]]).unwrap(), g(&[10, 13, 16]));
        assert_eq!(w.range_incl(&[[3, 1, 1]]).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(w.range_incl(&[[0, 3, 1], [3, 4, 1]]).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn table_reuses_freed_slots() {
        let t = GroupTable::new();
        let a = t.insert(g(&[0])).unwrap();
        let b = t.insert(g(&[1])).unwrap();
        assert_ne!(a, b);
        let held = t.get(a).unwrap();
        assert!(t.remove(a));
        assert!(!t.remove(a));
        assert!(t.get(a).is_none());
        assert_eq!(*held, g(&[0]));
        assert_eq!(t.insert(g(&[2])).unwrap(), a);
        assert_eq!(t.live(), 2);
    }
}
