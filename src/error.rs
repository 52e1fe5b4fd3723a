//! The engine's errors: an error class (MPI 4.1 section 9.4, and ULFM's) and a message that names
//! what was wrong and, where useful, what to do. The engine knows no ABI: each C boundary gives a
//! class its ABI's value (`abi::errors` for MPICH's) and turns a message into an error code
//! (`ffi::error_codes`).

/// The error classes of MPI 4.1 (section 9.4 and the tools interface's of section 15.3.10) and
/// of ULFM, as the engine names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    Buffer,
    Count,
    Type,
    Tag,
    Comm,
    Rank,
    Root,
    Group,
    Op,
    Topology,
    Dims,
    Arg,
    Unknown,
    Truncate,
    Other,
    Intern,
    InStatus,
    Pending,
    Request,
    Access,
    Amode,
    BadFile,
    Conversion,
    DupDatarep,
    FileExists,
    FileInUse,
    File,
    Info,
    InfoKey,
    InfoValue,
    InfoNokey,
    Io,
    Name,
    NoMem,
    NotSame,
    NoSpace,
    NoSuchFile,
    Port,
    Quota,
    ReadOnly,
    Service,
    Spawn,
    UnsupportedDatarep,
    UnsupportedOperation,
    Win,
    Base,
    Locktype,
    Keyval,
    RmaConflict,
    RmaSync,
    Size,
    Disp,
    Assert,
    RmaRange,
    RmaAttach,
    RmaShared,
    RmaFlavor,
    Session,
    ProcAborted,
    ValueTooLarge,
    Errhandler,
    TMemory,
    TNotInitialized,
    TCannotInit,
    TInvalidIndex,
    TInvalidItem,
    TInvalidHandle,
    TOutOfHandles,
    TOutOfSessions,
    TInvalidSession,
    TCvarSetNotNow,
    TCvarSetNever,
    TPvarNoStartstop,
    TPvarNoWrite,
    TPvarNoAtomic,
    TInvalidName,
    TInvalid,
    TNotSupported,
    /// ULFM: a process involved in the operation failed.
    ProcFailed,
    /// ULFM: a wildcard receive is pending because a process of the communicator failed.
    ProcFailedPending,
    /// ULFM: the communicator (or window) was revoked.
    Revoked,
    /// MPI 5.0: a standard-ABI Fortran property (MPI_Abi_set_fortran_info/_booleans) is already set.
    Abi,
    /// A class or code the application made (MPI_Add_error_class, MPI_Add_error_code) or a
    /// callback of the application returned, carried through as its value at the C boundary.
    Code(i32),
}

/// Every predefined class, in declaration order.
const PREDEFINED: [ErrorClass; 82] = [
    ErrorClass::Buffer,
    ErrorClass::Count,
    ErrorClass::Type,
    ErrorClass::Tag,
    ErrorClass::Comm,
    ErrorClass::Rank,
    ErrorClass::Root,
    ErrorClass::Group,
    ErrorClass::Op,
    ErrorClass::Topology,
    ErrorClass::Dims,
    ErrorClass::Arg,
    ErrorClass::Unknown,
    ErrorClass::Truncate,
    ErrorClass::Other,
    ErrorClass::Intern,
    ErrorClass::InStatus,
    ErrorClass::Pending,
    ErrorClass::Request,
    ErrorClass::Access,
    ErrorClass::Amode,
    ErrorClass::BadFile,
    ErrorClass::Conversion,
    ErrorClass::DupDatarep,
    ErrorClass::FileExists,
    ErrorClass::FileInUse,
    ErrorClass::File,
    ErrorClass::Info,
    ErrorClass::InfoKey,
    ErrorClass::InfoValue,
    ErrorClass::InfoNokey,
    ErrorClass::Io,
    ErrorClass::Name,
    ErrorClass::NoMem,
    ErrorClass::NotSame,
    ErrorClass::NoSpace,
    ErrorClass::NoSuchFile,
    ErrorClass::Port,
    ErrorClass::Quota,
    ErrorClass::ReadOnly,
    ErrorClass::Service,
    ErrorClass::Spawn,
    ErrorClass::UnsupportedDatarep,
    ErrorClass::UnsupportedOperation,
    ErrorClass::Win,
    ErrorClass::Base,
    ErrorClass::Locktype,
    ErrorClass::Keyval,
    ErrorClass::RmaConflict,
    ErrorClass::RmaSync,
    ErrorClass::Size,
    ErrorClass::Disp,
    ErrorClass::Assert,
    ErrorClass::RmaRange,
    ErrorClass::RmaAttach,
    ErrorClass::RmaShared,
    ErrorClass::RmaFlavor,
    ErrorClass::Session,
    ErrorClass::ProcAborted,
    ErrorClass::ValueTooLarge,
    ErrorClass::Errhandler,
    ErrorClass::TMemory,
    ErrorClass::TNotInitialized,
    ErrorClass::TCannotInit,
    ErrorClass::TInvalidIndex,
    ErrorClass::TInvalidItem,
    ErrorClass::TInvalidHandle,
    ErrorClass::TOutOfHandles,
    ErrorClass::TOutOfSessions,
    ErrorClass::TInvalidSession,
    ErrorClass::TCvarSetNotNow,
    ErrorClass::TCvarSetNever,
    ErrorClass::TPvarNoStartstop,
    ErrorClass::TPvarNoWrite,
    ErrorClass::TPvarNoAtomic,
    ErrorClass::TInvalidName,
    ErrorClass::TInvalid,
    ErrorClass::TNotSupported,
    ErrorClass::ProcFailed,
    ErrorClass::ProcFailedPending,
    ErrorClass::Revoked,
    ErrorClass::Abi,
];

impl ErrorClass {
    /// A positive number naming the class between the ranks of one job (collectives that agree on
    /// an error exchange it): ABI-free, unlike the classes' C values.
    pub fn wire(self) -> i64 {
        match self {
            ErrorClass::Code(c) => (1 << 32) + c as i64,
            class => 1 + PREDEFINED.iter().position(|&k| k == class).expect("every class but Code is predefined") as i64,
        }
    }

    /// The class `wire` named (Other for a number no class has).
    pub fn from_wire(w: i64) -> ErrorClass {
        if w >= 1 << 32 {
            return ErrorClass::Code((w - (1 << 32)) as i32);
        }
        usize::try_from(w - 1).ok().and_then(|i| PREDEFINED.get(i).copied()).unwrap_or(ErrorClass::Other)
    }
}

#[cfg(test)]
#[test]
fn wire_numbers_round_trip() {
    for c in PREDEFINED.iter().copied().chain([ErrorClass::Code(7), ErrorClass::Code(1 << 20)]) {
        assert!(c.wire() > 0);
        assert_eq!(ErrorClass::from_wire(c.wire()), c);
    }
}

/// An MPI error: its class and a message that names what was wrong and, where useful, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiError {
    pub class: ErrorClass,
    pub msg: String,
}

pub type MpiResult<T = ()> = Result<T, MpiError>;

impl MpiError {
    pub fn new(class: impl Into<ErrorClass>, msg: impl Into<String>) -> MpiError {
        MpiError { class: class.into(), msg: msg.into() }
    }
}

/// Shorthand: `Err(err(ErrorClass::Rank, format!(...)))`.
pub fn err(class: impl Into<ErrorClass>, msg: impl Into<String>) -> MpiError {
    MpiError::new(class, msg)
}

/// The values `lo` to `hi` (both included) as an error message writes them: "0 to 1", or "0"
/// when there is one (Rust's `0..2` and `0..=1` read differently to different people).
pub fn range(lo: i64, hi: i64) -> String {
    if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo} to {hi}")
    }
}

/// The indices of `n` items as an error message writes them: "0 to n-1", or "none" when `n` is 0.
pub fn indices(n: usize) -> String {
    if n == 0 {
        "none".to_string()
    } else {
        range(0, n as i64 - 1)
    }
}

#[cfg(test)]
#[test]
fn ranges_read_unambiguously() {
    assert_eq!(indices(2), "0 to 1");
    assert_eq!(indices(1), "0");
    assert_eq!(indices(0), "none");
    assert_eq!(range(0, 2147483647), "0 to 2147483647");
}
