//! MPI error values (class + message) as the engine produces them, and the error codes handed to C.
//!
//! A code returned to the application is either a bare error class or a *rich* code: the class in the
//! low 7 bits and, above it, the index of the message that explains this occurrence (as MPICH does),
//! so `MPI_Error_string` can say which function failed and why. `MPI_Error_class` strips the index.
use crate::abi::*;
use std::os::raw::c_int;
use std::sync::Mutex;

/// An MPI error: its class and a message that names what was wrong and, where useful, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiError {
    pub class: c_int,
    pub msg: String,
}

pub type MpiResult<T = ()> = Result<T, MpiError>;

impl MpiError {
    pub fn new(class: c_int, msg: impl Into<String>) -> MpiError {
        MpiError { class, msg: msg.into() }
    }
}

/// Shorthand: `Err(err(MPI_ERR_RANK, format!(...)))`.
pub fn err(class: c_int, msg: impl Into<String>) -> MpiError {
    MpiError::new(class, msg)
}

const CLASS_BITS: u32 = 7;
const MSG_SLOTS: usize = 1024;

/// Ring of recent error messages indexed by rich codes. Old entries are overwritten; their codes
/// then fall back to the class's generic text.
struct MessageTable {
    next: usize,
    msgs: Vec<(c_int, String)>,
}

static MESSAGES: Mutex<MessageTable> = Mutex::new(MessageTable { next: 0, msgs: Vec::new() });

/// Makes a rich error code for `class` carrying `msg`.
pub fn make_code(class: c_int, msg: &str) -> c_int {
    let mut t = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
    let slot = t.next % MSG_SLOTS;
    t.next = t.next.wrapping_add(1);
    let code = class | (((slot + 1) as c_int) << CLASS_BITS);
    if t.msgs.len() <= slot {
        t.msgs.push((code, msg.to_string()));
    } else {
        t.msgs[slot] = (code, msg.to_string());
    }
    code
}

/// The class of any code we return (bare class or rich code); None if it is not one of ours.
pub fn class_of(code: c_int) -> Option<c_int> {
    if code < 0 {
        return None;
    }
    let class = code & ((1 << CLASS_BITS) - 1);
    let slot = (code >> CLASS_BITS) as usize;
    if slot > MSG_SLOTS || error_class_name(class).is_none() {
        return None;
    }
    Some(class)
}

/// Text for a code: the specific message if the code is rich and still in the table, else the
/// class's generic description.
pub fn string_of(code: c_int) -> Option<String> {
    let class = class_of(code)?;
    let slot = (code >> CLASS_BITS) as usize;
    let generic = ERROR_CLASSES.iter().find(|e| e.0 == class).map(|e| format!("{}: {}", e.1, e.2))?;
    if slot > 0 {
        let t = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((c, m)) = t.msgs.get(slot - 1) {
            if *c == code {
                return Some(format!("{m} [{}]", error_class_name(class).unwrap_or("?")));
            }
        }
    }
    Some(generic)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rich_codes_round_trip() {
        let c = make_code(MPI_ERR_RANK, "MPI_Send: invalid rank 5");
        assert_ne!(c, MPI_ERR_RANK);
        assert_eq!(class_of(c), Some(MPI_ERR_RANK));
        assert!(string_of(c).unwrap().contains("invalid rank 5"));
        assert_eq!(class_of(MPI_ERR_TRUNCATE), Some(MPI_ERR_TRUNCATE));
        assert!(string_of(MPI_SUCCESS).unwrap().contains("no error"));
        assert_eq!(class_of(-5), None);
    }
}
