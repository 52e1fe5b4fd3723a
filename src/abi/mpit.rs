//! MPICH's values of the tools interface's enums (`crate::mpit::{Verbosity, Bind, Scope,
//! PvarClass}`): members of C enums in `include/mpi.h`, so `tests/abi_consts.rs` probes them
//! without `#ifdef`.
use crate::mpit::{Bind, PvarClass, Scope, Verbosity};
use std::os::raw::c_int;

pub const MPI_T_VERBOSITY_USER_BASIC: c_int = 221;
pub const MPI_T_VERBOSITY_USER_DETAIL: c_int = 222;
pub const MPI_T_VERBOSITY_USER_ALL: c_int = 223;
pub const MPI_T_VERBOSITY_TUNER_BASIC: c_int = 224;
pub const MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 225;
pub const MPI_T_VERBOSITY_TUNER_ALL: c_int = 226;
pub const MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 227;
pub const MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 228;
pub const MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 229;

pub const MPI_T_BIND_NO_OBJECT: c_int = 9700;
pub const MPI_T_BIND_MPI_COMM: c_int = 9701;
pub const MPI_T_BIND_MPI_DATATYPE: c_int = 9702;
pub const MPI_T_BIND_MPI_ERRHANDLER: c_int = 9703;
pub const MPI_T_BIND_MPI_FILE: c_int = 9704;
pub const MPI_T_BIND_MPI_GROUP: c_int = 9705;
pub const MPI_T_BIND_MPI_OP: c_int = 9706;
pub const MPI_T_BIND_MPI_REQUEST: c_int = 9707;
pub const MPI_T_BIND_MPI_WIN: c_int = 9708;
pub const MPI_T_BIND_MPI_MESSAGE: c_int = 9709;
pub const MPI_T_BIND_MPI_INFO: c_int = 9710;
/// MPI 4.0; MPICH 4.1's value (after MPI_T_BIND_MPI_INFO).
pub const MPI_T_BIND_MPI_SESSION: c_int = 9711;

pub const MPI_T_SCOPE_CONSTANT: c_int = 60438;
pub const MPI_T_SCOPE_READONLY: c_int = 60439;
pub const MPI_T_SCOPE_LOCAL: c_int = 60440;
pub const MPI_T_SCOPE_GROUP: c_int = 60441;
pub const MPI_T_SCOPE_GROUP_EQ: c_int = 60442;
pub const MPI_T_SCOPE_ALL: c_int = 60443;
pub const MPI_T_SCOPE_ALL_EQ: c_int = 60444;

pub const MPI_T_PVAR_CLASS_STATE: c_int = 240;
pub const MPI_T_PVAR_CLASS_LEVEL: c_int = 241;
pub const MPI_T_PVAR_CLASS_SIZE: c_int = 242;
pub const MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 243;
pub const MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 244;
pub const MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 245;
pub const MPI_T_PVAR_CLASS_COUNTER: c_int = 246;
pub const MPI_T_PVAR_CLASS_AGGREGATE: c_int = 247;
pub const MPI_T_PVAR_CLASS_TIMER: c_int = 248;
pub const MPI_T_PVAR_CLASS_GENERIC: c_int = 249;

impl Verbosity {
    /// The verbosity's value in the MPICH ABI.
    pub fn mpich(self) -> c_int {
        match self {
            Verbosity::UserBasic => MPI_T_VERBOSITY_USER_BASIC,
            Verbosity::UserDetail => MPI_T_VERBOSITY_USER_DETAIL,
            Verbosity::UserAll => MPI_T_VERBOSITY_USER_ALL,
            Verbosity::TunerBasic => MPI_T_VERBOSITY_TUNER_BASIC,
            Verbosity::TunerDetail => MPI_T_VERBOSITY_TUNER_DETAIL,
            Verbosity::TunerAll => MPI_T_VERBOSITY_TUNER_ALL,
            Verbosity::MpidevBasic => MPI_T_VERBOSITY_MPIDEV_BASIC,
            Verbosity::MpidevDetail => MPI_T_VERBOSITY_MPIDEV_DETAIL,
            Verbosity::MpidevAll => MPI_T_VERBOSITY_MPIDEV_ALL,
        }
    }
}

impl Bind {
    /// The binding's value in the MPICH ABI.
    pub fn mpich(self) -> c_int {
        match self {
            Bind::NoObject => MPI_T_BIND_NO_OBJECT,
            Bind::Comm => MPI_T_BIND_MPI_COMM,
            Bind::Datatype => MPI_T_BIND_MPI_DATATYPE,
            Bind::Errhandler => MPI_T_BIND_MPI_ERRHANDLER,
            Bind::File => MPI_T_BIND_MPI_FILE,
            Bind::Group => MPI_T_BIND_MPI_GROUP,
            Bind::Op => MPI_T_BIND_MPI_OP,
            Bind::Request => MPI_T_BIND_MPI_REQUEST,
            Bind::Win => MPI_T_BIND_MPI_WIN,
            Bind::Message => MPI_T_BIND_MPI_MESSAGE,
            Bind::Info => MPI_T_BIND_MPI_INFO,
        }
    }
}

impl Scope {
    /// The scope's value in the MPICH ABI.
    pub fn mpich(self) -> c_int {
        match self {
            Scope::Constant => MPI_T_SCOPE_CONSTANT,
            Scope::Readonly => MPI_T_SCOPE_READONLY,
            Scope::Local => MPI_T_SCOPE_LOCAL,
            Scope::Group => MPI_T_SCOPE_GROUP,
            Scope::GroupEq => MPI_T_SCOPE_GROUP_EQ,
            Scope::All => MPI_T_SCOPE_ALL,
            Scope::AllEq => MPI_T_SCOPE_ALL_EQ,
        }
    }
}

/// Every pvar class and its MPICH value: MPI_T_pvar_get_index reads a class from C.
const PVAR_CLASSES: [(PvarClass, c_int); 10] = [
    (PvarClass::State, MPI_T_PVAR_CLASS_STATE),
    (PvarClass::Level, MPI_T_PVAR_CLASS_LEVEL),
    (PvarClass::Size, MPI_T_PVAR_CLASS_SIZE),
    (PvarClass::Percentage, MPI_T_PVAR_CLASS_PERCENTAGE),
    (PvarClass::HighWatermark, MPI_T_PVAR_CLASS_HIGHWATERMARK),
    (PvarClass::LowWatermark, MPI_T_PVAR_CLASS_LOWWATERMARK),
    (PvarClass::Counter, MPI_T_PVAR_CLASS_COUNTER),
    (PvarClass::Aggregate, MPI_T_PVAR_CLASS_AGGREGATE),
    (PvarClass::Timer, MPI_T_PVAR_CLASS_TIMER),
    (PvarClass::Generic, MPI_T_PVAR_CLASS_GENERIC),
];

impl PvarClass {
    /// The class's value in the MPICH ABI.
    pub fn mpich(self) -> c_int {
        PVAR_CLASSES.iter().find(|(k, _)| *k == self).expect("every class is listed").1
    }

    /// The class of MPICH value `v`, if it names one.
    pub fn from_mpich(v: c_int) -> Option<PvarClass> {
        PVAR_CLASSES.iter().find(|&&(_, x)| x == v).map(|&(k, _)| k)
    }
}

#[cfg(test)]
#[test]
fn pvar_classes_round_trip() {
    for (k, v) in PVAR_CLASSES {
        assert_eq!(PvarClass::from_mpich(v), Some(k));
        assert_eq!(k.mpich(), v);
    }
    assert_eq!(PvarClass::from_mpich(0), None);
}
