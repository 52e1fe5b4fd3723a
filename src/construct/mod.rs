//! Communicator constructors (MPI 4.1 section 7.4.2 and 7.6): dup, split, create, create_group,
//! intercommunicator creation, merge and split, and the edge exchange of distributed graphs;
//! and the communicators of MPI-4's group-based constructors, which have no parent (`from_group`).
//!
//! Every constructor agrees on a context id (or exchanges data) with a collective over the
//! parent communicator, so they sit above `coll`; the communicator object itself and its table
//! live below, in `comm`.
pub mod connect;
pub mod dist_graph;
pub mod from_group;
pub mod hw_resources;
pub mod inter;
pub mod intra;
pub mod spawn;
pub mod split_type;
