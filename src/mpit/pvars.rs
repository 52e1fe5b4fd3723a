//! Performance variables: Open MPI's monitoring variables, same names, classes and types
//! (shared/design/monitoring.md section 2.2), always present.
//!
//! The per-peer arrays (class SIZE, `unsigned long long`, read-only) bind to a communicator and
//! have one element per member, in that communicator's rank order: element i is what this rank
//! sent to the member of rank i (on MPI_COMM_WORLD, the world rank, as Open MPI). Counts are of
//! all traffic of that kind whatever the communicator it used. The o2a/a2o/a2a counters are per
//! communicator (count 1).
use super::*;
use crate::monitoring::comms::Pattern;
use crate::monitoring::Kind;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Field {
    Count,
    Bytes,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    Pair(Kind, Field),
    Comm(Pattern, Field),
    Flush,
}

pub struct Pvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub verbosity: i32,
    pub class: i32,
    pub datatype: i32,
    pub bind: i32,
    pub readonly: bool,
    pub continuous: bool,
    pub atomic: bool,
    pub source: Source,
}

const ULL: i32 = 0x4c000819u32 as i32;
const CHAR: i32 = 0x4c000101u32 as i32;

const fn pair(name: &'static str, desc: &'static str, kind: Kind, f: Field) -> Pvar {
    Pvar { name, desc, verbosity: VERBOSITY_USER_BASIC, class: CLASS_SIZE, datatype: ULL, bind: BIND_MPI_COMM, readonly: true, continuous: false, atomic: false, source: Source::Pair(kind, f) }
}

const fn comm(name: &'static str, desc: &'static str, p: Pattern, f: Field) -> Pvar {
    let class = if matches!(f, Field::Count) { CLASS_COUNTER } else { CLASS_AGGREGATE };
    Pvar { name, desc, verbosity: VERBOSITY_USER_DETAIL, class, datatype: ULL, bind: BIND_MPI_COMM, readonly: false, continuous: false, atomic: true, source: Source::Comm(p, f) }
}

pub static PVARS: &[Pvar] = &[
    Pvar {
        name: "pml_monitoring_flush",
        desc: "Write a file name, then stop the handle: this rank's counters go to <name>.<world rank>.prof (Open MPI's format) and are reset",
        verbosity: VERBOSITY_USER_BASIC,
        class: CLASS_GENERIC,
        datatype: CHAR,
        bind: BIND_NO_OBJECT,
        readonly: false,
        continuous: false,
        atomic: false,
        source: Source::Flush,
    },
    pair("pml_monitoring_messages_count", "Number of point-to-point messages sent to each member of the communicator", Kind::P2p, Field::Count),
    pair("pml_monitoring_messages_size", "Bytes of point-to-point messages sent to each member of the communicator", Kind::P2p, Field::Bytes),
    pair("osc_monitoring_messages_sent_count", "Number of one-sided operations sending data to each member", Kind::OscSent, Field::Count),
    pair("osc_monitoring_messages_sent_size", "Bytes sent by one-sided operations to each member", Kind::OscSent, Field::Bytes),
    pair("osc_monitoring_messages_recv_count", "Number of one-sided operations bringing data back from each member", Kind::OscRecv, Field::Count),
    pair("osc_monitoring_messages_recv_size", "Bytes brought back by one-sided operations from each member", Kind::OscRecv, Field::Bytes),
    pair("coll_monitoring_messages_count", "Number of messages collectives sent to each member (the algorithms' real transfers)", Kind::Coll, Field::Count),
    pair("coll_monitoring_messages_size", "Bytes collectives sent to each member (the algorithms' real transfers)", Kind::Coll, Field::Bytes),
    comm("coll_monitoring_o2a_count", "Number of one-to-all collectives (bcast, scatter) on the communicator", Pattern::OneToAll, Field::Count),
    comm("coll_monitoring_o2a_size", "Bytes of one-to-all collectives on the communicator (root side)", Pattern::OneToAll, Field::Bytes),
    comm("coll_monitoring_a2o_count", "Number of all-to-one collectives (gather, reduce) on the communicator", Pattern::AllToOne, Field::Count),
    comm("coll_monitoring_a2o_size", "Bytes of all-to-one collectives on the communicator (root side)", Pattern::AllToOne, Field::Bytes),
    comm("coll_monitoring_a2a_count", "Number of all-to-all collectives on the communicator", Pattern::AllToAll, Field::Count),
    comm("coll_monitoring_a2a_size", "Bytes of all-to-all collectives on the communicator", Pattern::AllToAll, Field::Bytes),
];

/// `MPI_T_pvar_get_index`: the name and the class must both match.
pub fn get_index(name: &str, class: i32) -> TResult<usize> {
    PVARS.iter().position(|p| p.name == name && p.class == class).ok_or(MPI_T_ERR_INVALID_NAME)
}
