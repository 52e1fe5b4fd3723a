//! What a spawned rank knows of the spawn that started it, in either rank mode: the slots of its
//! MPI_COMM_WORLD, the spawning root's slot and its command's index (MPI_APPNUM). (A joined job's
//! ranks, `mpiexec --join`, have world slots and no parent.) Processes mode
//! hands it over in the rank's environment (`spawn_desk`); threads mode keeps it per rank in the
//! host (`threads::host::spawn`), since the ranks share one environment.
use super::spawn_desk::{ENV_APPNUM, ENV_PARENT_ROOT, ENV_WORLD_SLOTS};
use std::sync::Mutex;

/// A spawned rank's spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spawned {
    /// The new MPI_COMM_WORLD's slots in rank order.
    pub world: Vec<usize>,
    /// The spawning root's slot (None: a joined job's rank).
    pub parent_root: Option<usize>,
    /// The rank's command in MPI_Comm_spawn_multiple (0 for MPI_Comm_spawn).
    pub appnum: usize,
}

/// Threads mode: the spawn of each spawned rank, by slot.
static THREAD_RANKS: Mutex<Vec<Option<Spawned>>> = Mutex::new(Vec::new());

/// Threads mode: records rank `slot`'s spawn before the rank starts.
pub fn record(slot: usize, s: Spawned) {
    let mut v = THREAD_RANKS.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() <= slot {
        v.resize(slot + 1, None);
    }
    v[slot] = Some(s);
}

/// The spawn of rank `slot` (the caller's), None if it was not spawned; Err for an environment
/// that does not describe a spawn of this job (`nslots` slots).
pub fn of(slot: usize, nslots: usize) -> Result<Option<Spawned>, String> {
    if super::job::threads_job().is_some() {
        return Ok(THREAD_RANKS.lock().unwrap_or_else(|p| p.into_inner()).get(slot).cloned().flatten());
    }
    let Ok(list) = std::env::var(ENV_WORLD_SLOTS) else { return Ok(None) };
    let world: Option<Vec<usize>> = list.split(',').map(|x| x.parse().ok().filter(|&s| s < nslots)).collect();
    let world = match world {
        Some(w) if w.contains(&slot) => w,
        _ => return Err(format!("{ENV_WORLD_SLOTS}={list} is no list of slots of the job segment ({nslots} slots) holding this rank's slot {slot}")),
    };
    let parent_root = match std::env::var(ENV_PARENT_ROOT) {
        Err(_) => None,
        Ok(v) => match v.parse::<usize>() {
            Ok(r) if r < nslots => Some(r),
            _ => return Err(format!("{ENV_PARENT_ROOT}={v} is no slot of the job ({nslots} slots)")),
        },
    };
    let appnum = std::env::var(ENV_APPNUM).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    Ok(Some(Spawned { world, parent_root, appnum }))
}
