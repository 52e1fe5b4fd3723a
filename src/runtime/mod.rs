//! How ranks come to be and find each other: launch environment, the shared segment, waiting.
pub mod futex;
pub mod hw;
pub mod pap_board;
pub mod pmi;
pub mod mpmd;
pub mod name_service;
pub mod node_map;
pub mod pmi_job;
pub mod ports;
pub mod segment;
pub mod shared_map;
pub mod spawn_desk;
pub mod spawned;
pub mod thread_level;
pub mod user_dir;
pub mod threads;

/// Environment variables `mpiexec` sets for every rank (the launcher/rank contract).
pub mod env {
    /// Threads mode: the CPUs of each rank of the host, in rank order (`mpiexec --bind-to`):
    /// Linux CPU lists ("0-1,4") separated by ';'. Unset: no binding.
    pub const BIND: &str = "OXMPI_BIND";
    /// This rank's number in MPI_COMM_WORLD.
    pub const RANK: &str = "OXMPI_RANK";
    /// Number of ranks in MPI_COMM_WORLD.
    pub const SIZE: &str = "OXMPI_SIZE";
    /// Inherited descriptor of the job's memfd segment.
    pub const SHM_FD: &str = "OXMPI_SHM_FD";
    /// `processes` or `threads`; also the launcher's default when set by the user.
    pub const MODE: &str = "OXMPI_MODE";
    /// `1`: the job survives the loss of a rank (`mpiexec --survive`; the threads-mode host reads
    /// it, processes-mode ranks learn it from the segment).
    pub const SURVIVE: &str = "OXMPI_SURVIVE";
    /// MPI_UNIVERSE_SIZE (`mpiexec -usize`; the threads-mode host reads it).
    pub const UNIVERSE: &str = "OXMPI_UNIVERSE_SIZE";
}
pub mod wait;
pub mod job;
