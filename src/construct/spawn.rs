//! MPI_Comm_spawn / MPI_Comm_spawn_multiple (MPI 4.1 section 11.8) and the spawned ranks' side,
//! the parent intercommunicator of MPI_Comm_get_parent. How new ranks come to be is in
//! `runtime::spawn_desk` (processes mode; threads mode cannot spawn yet).
//!
//! The spawning group and the new MPI_COMM_WORLD build their intercommunicator with
//! `inter::create`: the spawning root and the new world's rank 0 are the leaders, and talk on the
//! world's collective context with a tag of their own. No other traffic joins those two slots on
//! that context: they share no communicator, and the new slots were never used before.
use super::inter::{create, LeaderLink};
use crate::coll::bcast::bcast;
use crate::coll::{Coll, TAG_INTER};
use crate::comm::{Comm, Universe};
use crate::error::{err, ErrorClass, MpiResult};
use crate::runtime::spawn_desk::{self, App, Request};

/// Tag of the spawn's messages: the root's broadcast of the outcome, the leaders' exchange.
const TAG_SPAWN: i32 = TAG_INTER | 8;

fn leader_link(u: &Universe, remote_leader: usize) -> LeaderLink {
    LeaderLink { remote_leader, tag: TAG_SPAWN, context: u.world.coll_context() }
}

/// Why this rank cannot spawn at all (the same answer on every rank of a job), if it cannot.
pub fn unavailable() -> Option<&'static str> {
    crate::runtime::job::threads_job().map(|_| {
        "MPI_Comm_spawn is not available in threads mode yet: run the job in processes mode (mpiexec --mode processes, the default)"
    })
}

/// What the root of a spawn asks for: the commands with the counts to start, and the error code
/// of each process asked for (MPI_SUCCESS for those started, in order; `soft` may start fewer).
pub struct Plan {
    pub apps: Vec<App>,
    pub errcodes: Vec<i32>,
}

/// MPI_Comm_spawn(_multiple), collective over the intracommunicator `comm`; `plan` is Some at
/// local rank `root` only (an error there: bad arguments, reported at the root, after telling
/// the others). Returns the new intercommunicator's table index and the error codes (one per
/// process asked for, on every rank).
pub fn spawn(u: &Universe, comm: &Comm, root: usize, plan: Option<MpiResult<Plan>>) -> MpiResult<(u32, Vec<i32>)> {
    if let Some(why) = unavailable() {
        return Err(err(ErrorClass::Spawn, why));
    }
    // [started?, first slot, count, number of error codes]
    let mut outcome = [0u64; 4];
    let mut failure = None;
    let mut codes = Vec::new();
    match plan {
        Some(Ok(plan)) => match spawn_desk::ask(&u.seg, &Request { parent_root: u.rank, apps: plan.apps }) {
            Ok((base, count)) => {
                outcome = [1, base as u64, count as u64, plan.errcodes.len() as u64];
                codes = plan.errcodes.iter().map(|&c| c as i64 as u64).collect();
            }
            Err(m) => failure = Some(err(ErrorClass::Spawn, m)),
        },
        Some(Err(e)) => failure = Some(e),
        None => {}
    }
    let cx = Coll::fixed(u, comm, TAG_SPAWN);
    // SAFETY: `outcome` holds 4 u64 on every rank.
    unsafe { bcast(&cx, outcome.as_mut_ptr() as *mut u8, 32, root)? };
    if outcome[0] == 0 {
        return Err(failure.unwrap_or_else(|| err(ErrorClass::Spawn, format!("the spawn failed at the root (rank {root} of the communicator), which reports why"))));
    }
    codes.resize(outcome[3] as usize, 0);
    // SAFETY: `codes` holds outcome[3] u64 on every rank.
    unsafe { bcast(&cx, codes.as_mut_ptr() as *mut u8, codes.len() * 8, root)? };
    let base = outcome[1] as usize;
    let link = (comm.rank == root).then(|| leader_link(u, base));
    let index = create(u, comm, root, link)?;
    Ok((index, codes.iter().map(|&c| c as i64 as i32).collect()))
}

/// A spawned rank's MPI_Init: builds the intercommunicator with the spawning group (collective
/// with the parents' MPI_Comm_spawn). Nothing to do for a rank that was not spawned.
pub fn join_parent(u: &Universe) -> MpiResult {
    if unavailable().is_some() {
        return Ok(());
    }
    let Some(root) = std::env::var(spawn_desk::ENV_PARENT_ROOT).ok().and_then(|v| v.parse::<usize>().ok()) else {
        return Ok(());
    };
    if root >= u.size {
        return Err(err(ErrorClass::Other, format!("{}={root} is no slot of the job", spawn_desk::ENV_PARENT_ROOT)));
    }
    let link = (u.world.rank == 0).then(|| leader_link(u, root));
    let index = create(u, &u.world, 0, link)?;
    *u.parent.lock().unwrap_or_else(|p| p.into_inner()) = Some(index);
    Ok(())
}

/// The info key `soft` (MPI 4.1 section 11.8.4): the largest count it allows that is at most
/// `most`. Its value is a comma-separated list of `a`, `a:b` or `a:b:c` (from a to b by c).
pub fn soft_count(value: &str, most: usize) -> Result<Option<usize>, String> {
    let bad = || format!("info key soft: '{value}' is not a list of a, a:b or a:b:c");
    let mut best = None;
    for part in value.split(',').map(str::trim) {
        let nums: Vec<usize> = part.split(':').map(|x| x.trim().parse::<usize>()).collect::<Result<_, _>>().map_err(|_| bad())?;
        let (a, b, c) = match nums[..] {
            [a] => (a, a, 1),
            [a, b] => (a, b, 1),
            [a, b, c] if c > 0 => (a, b, c),
            _ => return Err(bad()),
        };
        let mut x = a;
        while x <= b && x <= most {
            if x > 0 {
                best = best.max(Some(x));
            }
            x += c;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_values() {
        assert_eq!(soft_count("1:4", 3), Ok(Some(3)));
        assert_eq!(soft_count("2,4,8", 7), Ok(Some(4)));
        assert_eq!(soft_count("1:9:4", 8), Ok(Some(5)));
        assert_eq!(soft_count("5", 4), Ok(None));
        assert!(soft_count("x", 4).is_err());
        assert!(soft_count("1:2:0", 4).is_err());
    }
}
