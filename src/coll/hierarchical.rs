//! Node-aware (hierarchical) collectives, for a communicator whose ranks span nodes (`mpiexec
//! --nodes`): the ranks of a node meet through shared memory, and only one rank per node (its
//! leader, the lowest communicator rank there) crosses the network, as MPICH's SMP-aware
//! collectives and Open MPI's coll/han do. Chosen automatically when the communicator spans
//! nodes and some node holds more than one of its ranks (`Layout::of`); `OXMPI_HIERARCHICAL=0`
//! turns it off (the flat algorithms then run over every rank alike).
//!
//! Each step is a flat algorithm on a sub-communicator over the same contexts (`Coll::on`): the
//! node's ranks, or the leaders. The two kinds of sub-communicator share only the leader, and
//! messages of different phases carry different tags (`Coll::phase`).
use super::Coll;
use crate::comm::Comm;
use crate::error::MpiResult;
use crate::op::Reduction;

/// Tag phases of the steps (any phase a flat algorithm sets for itself replaces these bits, but
/// each step's peers are then a different set of pairs: same-node pairs or leader pairs).
const LOCAL_IN: i32 = 0x61;
const LEADERS: i32 = 0x62;
const LOCAL_OUT: i32 = 0x63;

/// Where the ranks of a communicator are, by node.
pub struct Layout {
    /// Communicator ranks of this rank's node, ascending.
    local: Vec<usize>,
    /// The lowest communicator rank of each node, ascending (one per node).
    leaders: Vec<usize>,
    /// The node's index in `leaders` of every communicator rank.
    node: Vec<usize>,
}

impl Layout {
    /// The layout of `cx`'s communicator, if hierarchical algorithms apply: an
    /// intracommunicator over several nodes, with at least one node holding two of its ranks.
    pub fn of(cx: &Coll) -> Option<Layout> {
        let map = crate::runtime::node_map::job_map()?;
        static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if cx.c.remote.is_some() || *OFF.get_or_init(|| std::env::var("OXMPI_HIERARCHICAL").is_ok_and(|v| v == "0")) {
            return None;
        }
        let n = cx.size();
        // Ranks beyond the job's world (spawned) have no node in the map: stay flat.
        let node_ids: Vec<usize> = (0..n).map(|r| map.get(cx.c.world_rank(r)).copied()).collect::<Option<_>>()?;
        Layout::from_nodes(&node_ids, cx.rank())
    }

    /// The layout for rank `me` of ranks on nodes `node_ids` (any numbering), if hierarchical
    /// algorithms apply.
    fn from_nodes(node_ids: &[usize], me: usize) -> Option<Layout> {
        let n = node_ids.len();
        let mut leaders: Vec<usize> = Vec::new();
        let mut node = vec![0; n];
        for r in 0..n {
            match leaders.iter().position(|&l| node_ids[l] == node_ids[r]) {
                Some(i) => node[r] = i,
                None => {
                    node[r] = leaders.len();
                    leaders.push(r);
                }
            }
        }
        if leaders.len() < 2 || leaders.len() == n {
            return None;
        }
        let local = (0..n).filter(|&r| node[r] == node[me]).collect();
        Some(Layout { local, leaders, node })
    }

    /// This rank's node's sub-communicator (over `cx`'s contexts).
    fn local_comm(&self, cx: &Coll) -> Comm {
        sub(cx, &self.local)
    }

    /// The leaders' sub-communicator, if this rank is its node's leader.
    fn leaders_comm(&self, cx: &Coll) -> Option<Comm> {
        (self.local[0] == cx.rank()).then(|| sub(cx, &self.leaders))
    }
}

/// A communicator of `members` (communicator ranks of `cx`, ascending, this rank among them) on
/// `cx`'s contexts, which no one else sees.
fn sub(cx: &Coll, members: &[usize]) -> Comm {
    let me = members.iter().position(|&r| r == cx.rank()).expect("this rank is a member");
    Comm::new(cx.c.context, members.iter().map(|&r| cx.c.world_rank(r)).collect(), me, cx.c.errhandler())
}

/// MPI_Allreduce with a commutative op: reduce inside each node to its leader, allreduce among
/// the leaders, broadcast inside each node.
///
/// # Safety
/// As `allreduce::allreduce_internal`; `red` is commutative.
pub unsafe fn allreduce(cx: &Coll, l: &Layout, sendbuf: *const u8, recvbuf: *mut u8, count: usize, red: &Reduction) -> MpiResult {
    let local = l.local_comm(cx);
    let bytes = count * red.size;
    // SAFETY: per this function's contract; the local root is position 0 (the leader), whose
    // recvbuf takes the node's result; elsewhere recvbuf is unused until the broadcast.
    unsafe { super::reduce::binomial(&cx.on(&local).phase(LOCAL_IN), sendbuf, recvbuf, count, red, 0)? };
    if let Some(leaders) = l.leaders_comm(cx) {
        // SAFETY: in place on the leader's recvbuf, `count` elements.
        unsafe { super::allreduce::recursive_doubling(&cx.on(&leaders).phase(LEADERS), recvbuf, recvbuf, count, red)? };
    }
    // SAFETY: recvbuf holds `bytes` bytes, the result at the leader.
    unsafe { super::bcast::binomial(&cx.on(&local).phase(LOCAL_OUT), recvbuf, bytes, 0) }
}

/// MPI_Bcast from `root`: among the nodes' representatives first (the root for its node, the
/// leader elsewhere), then inside each node from its representative.
///
/// # Safety
/// As `bcast::bcast`.
pub unsafe fn bcast(cx: &Coll, l: &Layout, buf: *mut u8, bytes: usize, root: usize) -> MpiResult {
    let root_node = l.node[root];
    let reps: Vec<usize> = l.leaders.iter().enumerate().map(|(i, &lead)| if i == root_node { root } else { lead }).collect();
    let mut sorted = reps.clone();
    sorted.sort_unstable();
    if sorted.contains(&cx.rank()) {
        let reps_comm = sub(cx, &sorted);
        let at = sorted.iter().position(|&r| r == root).expect("the root represents its node");
        // SAFETY: per this function's contract.
        unsafe { super::bcast::binomial(&cx.on(&reps_comm).phase(LEADERS), buf, bytes, at)? };
    }
    let local = l.local_comm(cx);
    let rep = reps[l.node[cx.rank()]];
    let at = l.local.iter().position(|&r| r == rep).expect("the representative is on its node");
    // SAFETY: per this function's contract.
    unsafe { super::bcast::binomial(&cx.on(&local).phase(LOCAL_OUT), buf, bytes, at) }
}

/// MPI_Barrier: inside each node, among the leaders, inside each node again (nobody leaves
/// before its leader passed the leaders' barrier, which no leader passes before every node's
/// ranks entered).
pub fn barrier(cx: &Coll, l: &Layout) -> MpiResult {
    let local = l.local_comm(cx);
    super::barrier::barrier(&cx.on(&local).phase(LOCAL_IN))?;
    if let Some(leaders) = l.leaders_comm(cx) {
        super::barrier::barrier(&cx.on(&leaders).phase(LEADERS))?;
    }
    super::barrier::barrier(&cx.on(&local).phase(LOCAL_OUT))
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn nodes_leaders_and_local_ranks() {
        // Ranks 0..6 on nodes 5, 3, 5, 3, 9, 5 (a communicator of interleaved world ranks).
        let ids = [5, 3, 5, 3, 9, 5];
        let l = Layout::from_nodes(&ids, 2).unwrap();
        assert_eq!(l.leaders, vec![0, 1, 4]);
        assert_eq!(l.local, vec![0, 2, 5]);
        assert_eq!(l.node, vec![0, 1, 0, 1, 2, 0]);
        assert_eq!(Layout::from_nodes(&ids, 3).unwrap().local, vec![1, 3]);
        assert_eq!(Layout::from_nodes(&ids, 4).unwrap().local, vec![4]);
        // One node, or one rank per node: nothing to gain.
        assert!(Layout::from_nodes(&[1, 1, 1], 0).is_none());
        assert!(Layout::from_nodes(&[0, 1, 2], 1).is_none());
    }
}
