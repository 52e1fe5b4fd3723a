//! Per-communicator collective counters, as Open MPI's coll/monitoring keeps them: how many
//! one-to-all (bcast, scatter), all-to-one (gather, reduce) and all-to-all (the rest) operations
//! this rank started on a communicator, and the bytes they carry by the caller's arguments
//! (Open MPI's estimate: root-side `count x type size x (n - 1)` for rooted ones, the caller's
//! contribution to every other rank for all-to-all ones).
use std::collections::HashMap;
use std::sync::Mutex;

/// The three patterns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pattern {
    OneToAll = 0,
    AllToOne = 1,
    AllToAll = 2,
}

/// Counters of one communicator, as seen by one rank.
#[derive(Clone, Debug, Default)]
pub struct CommStat {
    pub name: String,
    /// Members as world ranks, in communicator rank order.
    pub members: Vec<usize>,
    /// `[pattern] = (operations, bytes)`.
    pub ops: [(u64, u64); 3],
}

/// Keyed by the communicator's point-to-point context id. A freed communicator's entry stays
/// (its counts belong in the final dump); a new communicator on the same context with other
/// members replaces it.
#[derive(Default)]
pub struct CommCounters {
    map: Mutex<HashMap<u32, CommStat>>,
}

impl CommCounters {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, CommStat>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one collective of `pattern` carrying `bytes` on the communicator `context`.
    pub fn add(&self, context: u32, name: &str, members: &[usize], pattern: Pattern, bytes: u64) {
        let mut m = self.lock();
        let e = m.entry(context).or_default();
        if e.members != members {
            *e = CommStat { name: name.to_string(), members: members.to_vec(), ops: Default::default() };
        }
        e.ops[pattern as usize].0 += 1;
        e.ops[pattern as usize].1 += bytes;
    }

    /// `(operations, bytes)` of `pattern` on communicator `context` with these members.
    pub fn get(&self, context: u32, members: &[usize], pattern: Pattern) -> (u64, u64) {
        self.lock().get(&context).filter(|e| e.members == members).map_or((0, 0), |e| e.ops[pattern as usize])
    }

    /// Every communicator seen, by context id.
    pub fn snapshot(&self) -> Vec<(u32, CommStat)> {
        let mut v: Vec<_> = self.lock().iter().map(|(k, v)| (*k, v.clone())).collect();
        v.sort_by_key(|e| e.0);
        v
    }

    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// Hook for the collective entry points: counts one collective started by world rank `rank` (of
/// `size`) on the communicator of context `context` whose members are the world ranks `members`;
/// `name` gives its name, asked only when recording. Costs one relaxed load when monitoring is off.
#[inline]
pub fn collective(rank: usize, size: usize, context: u32, name: impl FnOnce() -> String, members: &[usize], pattern: Pattern, bytes: u64) {
    if super::on() && super::recording(rank, size) {
        super::row(rank, size).comms.add(context, &name(), members, pattern, bytes);
    }
}
