//! One-sided communication (MPI 4.1 chapter 12) on shared memory.
//!
//! Every operation completes at the origin before it returns, because every rank's window memory
//! is reachable without the target's help:
//! - threads mode: all ranks share one address space, so a put is a store/memcpy at the target
//!   address, whatever the window flavor;
//! - processes mode: memory of `Win_allocate`/`Win_allocate_shared` lives in a memfd that every
//!   rank of the window maps (`shm`), so a put is again a store; windows on user memory
//!   (`Win_create`, dynamic windows) are reached with process_vm_readv/writev (single copy).
//!
//! Accumulates read, combine and write the target elements while holding the target's
//! accumulate mutex (in the window's shared region), so accumulates from many origins are atomic
//! per element as MPI 4.1 section 12.7 requires; in processes mode on user memory this is a CMA
//! read-modify-write under that mutex. No operation needs the target to make progress, so passive
//! target works while the target computes outside MPI (the alternative, active messages served by
//! the target's progress, would need a helper thread per rank; MPICH's ch4 shm and Open MPI's
//! osc/sm likewise do atomics in shared memory). Synchronisation is therefore only ordering:
//! fence = barrier, PSCW = counters in the shared region, lock = a reader-writer lock per target
//! in the shared region; flush is a memory fence. The memory model is MPI_WIN_UNIFIED.
//!
//! A window whose members span nodes (`mpiexec --nodes`) keeps all this among the members of
//! each node (one shared region per node); an operation on a member of another node is a request
//! message (`wire`) that the target's engine progress serves (`serve`, a progress hook: whenever
//! the target is inside MPI, as MPICH does without a progress thread), applying it under the same
//! accumulate mutex and taking the same lock as same-node origins; the origin waits for the reply
//! (`remote`), so operations still complete before they return. Lock requests and PSCW notices to
//! other nodes are messages too; `Win_allocate_shared` across nodes is refused.
pub mod access;
pub mod shm;
pub mod sync;
pub mod window;
pub mod remote;
pub mod serve;
pub mod wire;
