//! MPICH's values of the engine's error classes (`crate::error::ErrorClass`).
use crate::error::ErrorClass;
use std::os::raw::c_int;

/// Every predefined class and its MPICH value.
const VALUES: &[(ErrorClass, c_int)] = &[
    (ErrorClass::Buffer, 1),
    (ErrorClass::Count, 2),
    (ErrorClass::Type, 3),
    (ErrorClass::Tag, 4),
    (ErrorClass::Comm, 5),
    (ErrorClass::Rank, 6),
    (ErrorClass::Root, 7),
    (ErrorClass::Group, 8),
    (ErrorClass::Op, 9),
    (ErrorClass::Topology, 10),
    (ErrorClass::Dims, 11),
    (ErrorClass::Arg, 12),
    (ErrorClass::Unknown, 13),
    (ErrorClass::Truncate, 14),
    (ErrorClass::Other, 15),
    (ErrorClass::Intern, 16),
    (ErrorClass::InStatus, 17),
    (ErrorClass::Pending, 18),
    (ErrorClass::Request, 19),
    (ErrorClass::Access, 20),
    (ErrorClass::Amode, 21),
    (ErrorClass::BadFile, 22),
    (ErrorClass::Conversion, 23),
    (ErrorClass::DupDatarep, 24),
    (ErrorClass::FileExists, 25),
    (ErrorClass::FileInUse, 26),
    (ErrorClass::File, 27),
    (ErrorClass::Info, 28),
    (ErrorClass::InfoKey, 29),
    (ErrorClass::InfoValue, 30),
    (ErrorClass::InfoNokey, 31),
    (ErrorClass::Io, 32),
    (ErrorClass::Name, 33),
    (ErrorClass::NoMem, 34),
    (ErrorClass::NotSame, 35),
    (ErrorClass::NoSpace, 36),
    (ErrorClass::NoSuchFile, 37),
    (ErrorClass::Port, 38),
    (ErrorClass::Quota, 39),
    (ErrorClass::ReadOnly, 40),
    (ErrorClass::Service, 41),
    (ErrorClass::Spawn, 42),
    (ErrorClass::UnsupportedDatarep, 43),
    (ErrorClass::UnsupportedOperation, 44),
    (ErrorClass::Win, 45),
    (ErrorClass::Base, 46),
    (ErrorClass::Locktype, 47),
    (ErrorClass::Keyval, 48),
    (ErrorClass::RmaConflict, 49),
    (ErrorClass::RmaSync, 50),
    (ErrorClass::Size, 51),
    (ErrorClass::Disp, 52),
    (ErrorClass::Assert, 53),
    (ErrorClass::RmaRange, 55),
    (ErrorClass::RmaAttach, 56),
    (ErrorClass::RmaShared, 57),
    (ErrorClass::RmaFlavor, 58),
    (ErrorClass::TMemory, 59),
    (ErrorClass::TNotInitialized, 60),
    (ErrorClass::TCannotInit, 61),
    (ErrorClass::TInvalidIndex, 62),
    (ErrorClass::TInvalidItem, 63),
    (ErrorClass::TInvalidHandle, 64),
    (ErrorClass::TOutOfHandles, 65),
    (ErrorClass::TOutOfSessions, 66),
    (ErrorClass::TInvalidSession, 67),
    (ErrorClass::TCvarSetNotNow, 68),
    (ErrorClass::TCvarSetNever, 69),
    (ErrorClass::TPvarNoStartstop, 70),
    (ErrorClass::TPvarNoWrite, 71),
    (ErrorClass::TPvarNoAtomic, 72),
    (ErrorClass::TInvalidName, 73),
    (ErrorClass::TInvalid, 74),
    (ErrorClass::Session, 75),
    (ErrorClass::ProcAborted, 76),
    (ErrorClass::ValueTooLarge, 77),
    (ErrorClass::TNotSupported, 78),
    (ErrorClass::ProcFailed, 101),
    (ErrorClass::ProcFailedPending, 102),
    (ErrorClass::Revoked, 103),
    (ErrorClass::Errhandler, super::MPI_ERR_ERRHANDLER),
    (ErrorClass::Abi, super::MPI_ERR_ABI),
];

impl ErrorClass {
    /// The class's value in the MPICH ABI.
    pub fn mpich(self) -> c_int {
        match self {
            ErrorClass::Code(c) => c,
            class => VALUES.iter().find(|(k, _)| *k == class).map_or(super::MPI_ERR_INTERN, |&(_, v)| v),
        }
    }

    /// The class of MPICH value `v`: a predefined class, else the application's own (`Code`).
    pub fn from_mpich(v: c_int) -> ErrorClass {
        VALUES.iter().find(|&&(_, x)| x == v).map_or(ErrorClass::Code(v), |&(k, _)| k)
    }
}

/// The C boundary raises errors with MPICH's class values: `err(MPI_ERR_RANK, ...)`.
impl From<c_int> for ErrorClass {
    fn from(v: c_int) -> ErrorClass {
        ErrorClass::from_mpich(v)
    }
}

/// Lets the C boundary compare a class with an MPICH value: `e.class == MPI_ERR_TRUNCATE`.
impl PartialEq<c_int> for ErrorClass {
    fn eq(&self, v: &c_int) -> bool {
        self.mpich() == *v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn every_mpich_class_round_trips() {
        for &(class, value, ..) in super::super::ERROR_CLASSES.iter().skip(1) {
            let c = ErrorClass::from_mpich(class);
            assert!(!matches!(c, ErrorClass::Code(_)), "{value}: no engine class");
            assert_eq!(c.mpich(), class, "{value}");
        }
        assert_eq!(ErrorClass::from_mpich(90), ErrorClass::Code(90));
        assert_eq!(ErrorClass::Code(90).mpich(), 90);
        let mut seen = std::collections::HashSet::new();
        assert!(VALUES.iter().all(|(k, _)| seen.insert(*k)), "a class listed twice");
    }
}
