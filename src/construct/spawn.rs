//! MPI_Comm_spawn / MPI_Comm_spawn_multiple (MPI 4.1 section 11.8) and the spawned ranks' side,
//! the parent intercommunicator of MPI_Comm_get_parent. How new ranks come to be is in
//! `runtime::spawn_desk` (processes mode) and `runtime::threads::spawn` (threads mode).
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

/// Starts the new ranks: the launcher does in processes mode, this process in threads mode.
fn start(u: &Universe, apps: &[App]) -> Result<spawn_desk::Answer, String> {
    if crate::runtime::job::threads_job().is_some() {
        crate::runtime::threads::spawn::spawn(u.rank, apps)
    } else {
        spawn_desk::ask(&u.seg, &Request { parent_root: u.rank, apps: apps.to_vec() })
    }
}

/// What the root of a spawn asks for: the commands, each with its `maxprocs` (`App::nprocs`).
pub struct Plan {
    pub apps: Vec<App>,
}

/// Whether each process asked for was started (`soft` may leave some out), command by command.
fn started(apps: &[App], counts: &[usize]) -> Vec<bool> {
    apps.iter().zip(counts).flat_map(|(a, &k)| (0..a.nprocs).map(move |i| i < k)).collect()
}

/// MPI_Comm_spawn(_multiple), collective over the intracommunicator `comm`; `plan` is Some at
/// local rank `root` only (an error there: bad arguments, reported at the root, after telling
/// the others). Returns the new intercommunicator's table index and, on every rank, whether
/// each process asked for was started.
pub fn spawn(u: &Universe, comm: &Comm, root: usize, plan: Option<MpiResult<Plan>>) -> MpiResult<(u32, Vec<bool>)> {
    // [started?, the new world's rank 0 slot, number of processes asked for]
    let mut outcome = [0u64; 3];
    let mut failure = None;
    let mut codes = Vec::new();
    match plan {
        Some(Ok(plan)) => match start(u, &plan.apps) {
            Ok(a) => {
                codes = started(&plan.apps, &a.counts).into_iter().map(u64::from).collect();
                outcome = [1, a.slots[0] as u64, codes.len() as u64];
            }
            Err(m) => failure = Some(err(ErrorClass::Spawn, m)),
        },
        Some(Err(e)) => failure = Some(e),
        None => {}
    }
    let cx = Coll::fixed(u, comm, TAG_SPAWN);
    // SAFETY: `outcome` holds 3 u64 on every rank.
    unsafe { bcast(&cx, outcome.as_mut_ptr() as *mut u8, 24, root)? };
    if outcome[0] == 0 {
        return Err(failure.unwrap_or_else(|| err(ErrorClass::Spawn, format!("the spawn failed at the root (rank {root} of the communicator), which reports why"))));
    }
    codes.resize(outcome[2] as usize, 0);
    // SAFETY: `codes` holds outcome[2] u64 on every rank.
    unsafe { bcast(&cx, codes.as_mut_ptr() as *mut u8, codes.len() * 8, root)? };
    let link = (comm.rank == root).then(|| leader_link(u, outcome[1] as usize));
    let index = create(u, comm, root, link)?;
    Ok((index, codes.iter().map(|&c| c != 0).collect()))
}

/// A spawned rank's MPI_Init: builds the intercommunicator with the spawning group (collective
/// with the parents' MPI_Comm_spawn). Nothing to do for a rank that was not spawned.
pub fn join_parent(u: &Universe) -> MpiResult {
    let spawned = crate::runtime::spawned::of(u.rank, u.seg.nranks()).map_err(|m| err(ErrorClass::Other, m))?;
    let Some(root) = spawned.and_then(|s| s.parent_root) else { return Ok(()) };
    let link = (u.world.rank == 0).then(|| leader_link(u, root));
    let index = create(u, &u.world, 0, link)?;
    *u.parent.lock().unwrap_or_else(|p| p.into_inner()) = Some(index);
    Ok(())
}
