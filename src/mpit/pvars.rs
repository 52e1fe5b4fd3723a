//! Performance variables: Open MPI's monitoring variables, same names, classes and types
//! (`docs/design/monitoring.md` section 2.2), always present.
//!
//! The per-peer arrays (class SIZE, `unsigned long long`, read-only) bind to a communicator and
//! have one element per member, in that communicator's rank order: element i is what this rank
//! sent to the member of rank i (on MPI_COMM_WORLD, the world rank, as Open MPI). Counts are of
//! all traffic of that kind whatever the communicator it used. The o2a/a2o/a2a counters are per
//! communicator (count 1). `io_monitoring_{read,write}_{count,size}` (COUNTER / AGGREGATE,
//! not bound, count 1) are the calling rank's file reads and writes (`monitoring::io`).
//!
//! Beyond monitoring, one variable of every other class the standard defines (MPI 4.1 section
//! 15.3.7), not bound to an object, count 1:
//!
//! | name | class | type | meaning |
//! |---|---|---|---|
//! | `oxmpi_monitoring_state` | STATE | int, enum MONITORING_STATE | 0 off, 1 this rank records monitoring counters now; continuous |
//! | `p2p_unexpected_messages` | LEVEL | unsigned long long | messages in this rank's unexpected queue now; continuous |
//! | `p2p_unexpected_messages_highwatermark` | HIGHWATERMARK | unsigned long long | largest queue length while started (starts at the current length; reset restarts it there) |
//! | `p2p_unexpected_messages_lowwatermark` | LOWWATERMARK | unsigned long long | smallest queue length while started, same rules |
//! | `p2p_eager_fraction` | PERCENTAGE | double in [0, 1] | share of this rank's sends (user and collective transfers) sent eagerly through the rings, since MPI_Init; continuous |
//! | `p2p_wait_blocked_ns` | TIMER | unsigned long long, ns | time this rank spent blocked in waits while the handle was started |
//! | `clairvoyant_schedules_built` | COUNTER | unsigned long long | Clairvoyant schedules generated (cache misses) |
//! | `clairvoyant_replans` | COUNTER | unsigned long long | Re-plans published by this process (late ranks) |
//! | `clairvoyant_takeovers` | COUNTER | unsigned long long | Re-plans followed by this process's ranks |
//! | `clairvoyant_cache_hits` | COUNTER | unsigned long long | Clairvoyant calls whose schedule was already cached |
//! | `clairvoyant_build_ns` | TIMER | unsigned long long, ns | time spent generating Clairvoyant schedules |
//! | `clairvoyant_prediction_error_ns` | LEVEL | unsigned long long, ns | mean absolute arrival prediction error of the latest measured Clairvoyant call; continuous |
//!
//! Timers are integers in nanoseconds (the standard lets a non-double timer use documented
//! units; 1 ns is also MPI_Wtick here). The Clairvoyant variables are process-wide (in threads
//! mode, every rank of the process together: the schedule cache is shared); the others are the
//! calling rank's. COUNTER and TIMER handles sum what happened while started.
use super::*;
use crate::datatype::basic::Basic;
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
    /// The calling rank's file I/O (`monitoring::io`).
    Io(crate::monitoring::io::Dir, Field),
    Flush,
    MonitoringState,
    Unexpected,
    UnexpectedHigh,
    UnexpectedLow,
    EagerFraction,
    WaitBlocked,
    Clv(ClvStat),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClvStat {
    Built,
    Hits,
    BuildNs,
    ErrorNs,
    Replans,
    Takeovers,
}

impl Source {
    /// A monitoring variable: a started handle turns recording on.
    pub fn is_monitoring(self) -> bool {
        matches!(self, Source::Pair(..) | Source::Comm(..) | Source::Io(..) | Source::Flush)
    }
}

pub struct Pvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub verbosity: Verbosity,
    pub class: PvarClass,
    pub datatype: Basic,
    pub bind: Bind,
    pub readonly: bool,
    pub continuous: bool,
    pub atomic: bool,
    pub source: Source,
}

const ULL: Basic = Basic::UnsignedLongLong;
const CHAR: Basic = Basic::Char;
const INT: Basic = Basic::Int;
const DOUBLE: Basic = Basic::Double;

const fn pair(name: &'static str, desc: &'static str, kind: Kind, f: Field) -> Pvar {
    Pvar { name, desc, verbosity: Verbosity::UserBasic, class: PvarClass::Size, datatype: ULL, bind: Bind::Comm, readonly: true, continuous: false, atomic: false, source: Source::Pair(kind, f) }
}

const fn comm(name: &'static str, desc: &'static str, p: Pattern, f: Field) -> Pvar {
    let class = if matches!(f, Field::Count) { PvarClass::Counter } else { PvarClass::Aggregate };
    Pvar { name, desc, verbosity: Verbosity::UserDetail, class, datatype: ULL, bind: Bind::Comm, readonly: false, continuous: false, atomic: true, source: Source::Comm(p, f) }
}

/// A file I/O counter of the calling rank, count 1 (as the per-communicator counters).
const fn io(name: &'static str, desc: &'static str, d: crate::monitoring::io::Dir, f: Field) -> Pvar {
    let class = if matches!(f, Field::Count) { PvarClass::Counter } else { PvarClass::Aggregate };
    Pvar { name, desc, verbosity: Verbosity::UserDetail, class, datatype: ULL, bind: Bind::NoObject, readonly: false, continuous: false, atomic: true, source: Source::Io(d, f) }
}

/// A variable of the calling rank (or process), count 1.
const fn gauge(name: &'static str, desc: &'static str, class: PvarClass, datatype: Basic, continuous: bool, source: Source) -> Pvar {
    // Continuous gauges only show a state; the others (sums, watermarks) can be reset and written.
    let readonly = continuous;
    let atomic = matches!(class, PvarClass::Counter | PvarClass::Timer);
    Pvar { name, desc, verbosity: Verbosity::TunerDetail, class, datatype, bind: Bind::NoObject, readonly, continuous, atomic, source }
}

pub static PVARS: &[Pvar] = &[
    Pvar {
        name: "pml_monitoring_flush",
        desc: "Write a file name, then stop the handle: this rank's counters go to <name>.<world rank>.prof (Open MPI's format) and are reset",
        verbosity: Verbosity::UserBasic,
        class: PvarClass::Generic,
        datatype: CHAR,
        bind: Bind::NoObject,
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
    io("io_monitoring_read_count", "Number of file reads (MPI_File_read* calls) this rank made", crate::monitoring::io::Dir::Read, Field::Count),
    io("io_monitoring_read_size", "Bytes this rank's file reads brought", crate::monitoring::io::Dir::Read, Field::Bytes),
    io("io_monitoring_write_count", "Number of file writes (MPI_File_write* calls) this rank made", crate::monitoring::io::Dir::Write, Field::Count),
    io("io_monitoring_write_size", "Bytes this rank's file writes carried", crate::monitoring::io::Dir::Write, Field::Bytes),
    gauge("oxmpi_monitoring_state", "Whether this rank records monitoring counters now (enum MONITORING_STATE: 0 off, 1 recording)", PvarClass::State, INT, true, Source::MonitoringState),
    gauge("p2p_unexpected_messages", "Messages in this rank's unexpected queue (arrived before a matching receive was posted)", PvarClass::Level, ULL, true, Source::Unexpected),
    gauge("p2p_unexpected_messages_highwatermark", "Largest length of this rank's unexpected queue while the handle was started (starts, and restarts at reset, at the current length)", PvarClass::HighWatermark, ULL, false, Source::UnexpectedHigh),
    gauge("p2p_unexpected_messages_lowwatermark", "Smallest length of this rank's unexpected queue while the handle was started (starts, and restarts at reset, at the current length)", PvarClass::LowWatermark, ULL, false, Source::UnexpectedLow),
    gauge("p2p_eager_fraction", "Share of this rank's sends, user and collective transfers, sent eagerly through the shared-memory rings since MPI_Init, from 0.0 to 1.0 (larger messages go by rendezvous)", PvarClass::Percentage, DOUBLE, true, Source::EagerFraction),
    gauge("p2p_wait_blocked_ns", "Nanoseconds this rank spent blocked in waits (MPI_Wait, MPI_Recv, ...) while the handle was started", PvarClass::Timer, ULL, false, Source::WaitBlocked),
    gauge("clairvoyant_schedules_built", "Clairvoyant MPI_Reduce schedules generated, foreground or background (cache misses); process-wide", PvarClass::Counter, ULL, false, Source::Clv(ClvStat::Built)),
    gauge("clairvoyant_cache_hits", "Clairvoyant MPI_Reduce calls whose schedule was already cached; process-wide", PvarClass::Counter, ULL, false, Source::Clv(ClvStat::Hits)),
    gauge("clairvoyant_build_ns", "Nanoseconds spent generating Clairvoyant schedules; process-wide", PvarClass::Timer, ULL, false, Source::Clv(ClvStat::BuildNs)),
    gauge("clairvoyant_replans", "Clairvoyant MPI_Reduce re-plans published by this process's watchdog (a rank overdue: the call taken over with a new schedule); process-wide", PvarClass::Counter, ULL, false, Source::Clv(ClvStat::Replans)),
    gauge("clairvoyant_takeovers", "Clairvoyant MPI_Reduce re-plans followed, one per rank of this process and re-plan; process-wide", PvarClass::Counter, ULL, false, Source::Clv(ClvStat::Takeovers)),
    gauge("clairvoyant_prediction_error_ns", "Mean absolute error (ns) of the arrival prediction of the latest measured Clairvoyant call; process-wide", PvarClass::Level, ULL, true, Source::Clv(ClvStat::ErrorNs)),
];

/// `MPI_T_pvar_get_index`: the name and the class must both match.
pub fn get_index(name: &str, class: PvarClass) -> TResult<usize> {
    PVARS.iter().position(|p| p.name == name && p.class == class).ok_or(ErrorClass::TInvalidName)
}
