//! Error codes as the MPICH ABI hands them to C: bare classes, rich codes that carry the message
//! of one occurrence, and the classes, codes and strings the application adds.
//!
//! A code returned to the application is either a bare error class or a *rich* code: the class in the
//! low 7 bits and, above it, the index of the message that explains this occurrence (as MPICH does),
//! so `MPI_Error_string` can say which function failed and why. `MPI_Error_class` strips the index.
use crate::abi::*;
use crate::error::{err, MpiResult};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

const CLASS_BITS: u32 = 7;
const MSG_SLOTS: usize = 1024;

/// Ring of recent error messages indexed by rich codes. Old entries are overwritten; their codes
/// then fall back to the class's generic text.
struct MessageTable {
    next: usize,
    msgs: Vec<(c_int, String)>,
}

static MESSAGES: Mutex<MessageTable> = Mutex::new(MessageTable { next: 0, msgs: Vec::new() });

/// Makes a rich error code for `class` carrying `msg`. MPI_ERR_IN_STATUS stays the bare class:
/// the multiple-completion calls "return the error code MPI_ERR_IN_STATUS" (MPI 4.1 section
/// 3.2.5), and programs test for it with `==`, as the standard's examples and MPICH do.
pub fn make_code(class: c_int, msg: &str) -> c_int {
    if class == MPI_ERR_IN_STATUS {
        return class;
    }
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
    if code >= USER_CODE_BASE {
        let t = USER.lock().unwrap_or_else(|p| p.into_inner());
        return t.codes.get((code - USER_CODE_BASE) as usize).map(|c| c.0);
    }
    let class = code & ((1 << CLASS_BITS) - 1);
    let slot = (code >> CLASS_BITS) as usize;
    if slot > MSG_SLOTS || !is_class(class) {
        return None;
    }
    Some(class)
}

/// Text for a code: the specific message if the code is rich and still in the table, else the
/// class's generic description.
pub fn string_of(code: c_int) -> Option<String> {
    let class = class_of(code)?;
    if code >= USER_CODE_BASE {
        let t = USER.lock().unwrap_or_else(|p| p.into_inner());
        return Some(t.codes[(code - USER_CODE_BASE) as usize].1.clone());
    }
    let slot = (code >> CLASS_BITS) as usize;
    let generic = match ERROR_CLASSES.iter().find(|e| e.0 == class) {
        Some(e) => format!("{}: {}", e.1, e.2),
        None => user_class_text(class),
    };
    if slot > 0 {
        let t = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((c, m)) = t.msgs.get(slot - 1) {
            if *c == code {
                return Some(format!("{m} [{}]", error_class_name(class).unwrap_or("user-defined error class")));
            }
        }
    }
    Some(generic)
}

/// User-defined error classes and codes (MPI 4.1 section 9.5). They are process-local in the
/// standard; in threads mode the ranks of one process share them (a class added by one rank is
/// valid in all of them), which the standard's process-local rule permits since those ranks are
/// one OS process.
///
/// Classes take the numbers after MPICH's last predefined class up to 127, so that they still fit
/// the 7 class bits of rich codes. Codes start at `USER_CODE_BASE`, far above every rich code
/// (class | slot << 7 with slot <= MSG_SLOTS), so the two can never be confused.
pub const USER_CODE_BASE: c_int = 1 << 20;
/// Up to MPICH_ERR_FIRST_MPIX (100): the MPIX classes (ULFM) follow.
const USER_CLASS_MAX: c_int = 100;

struct UserErrors {
    /// Strings of classes MPICH_ERR_LAST_CLASS + 1 + i ("" until MPI_Add_error_string).
    classes: Vec<String>,
    /// (class, string) of codes USER_CODE_BASE + i.
    codes: Vec<(c_int, String)>,
}

static USER: Mutex<UserErrors> = Mutex::new(UserErrors { classes: Vec::new(), codes: Vec::new() });

/// The value of the MPI_LASTUSEDCODE attribute: the largest class or code in use. The attribute
/// hands out a pointer to it, so it is an atomic with `int` layout.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(MPICH_ERR_LAST_CLASS);

fn user_lock() -> std::sync::MutexGuard<'static, UserErrors> {
    USER.lock().unwrap_or_else(|p| p.into_inner())
}

/// A predefined class or one made by MPI_Add_error_class.
pub fn is_class(class: c_int) -> bool {
    error_class_name(class).is_some() || (class > MPICH_ERR_LAST_CLASS && class - MPICH_ERR_LAST_CLASS <= user_lock().classes.len() as c_int)
}

fn user_class_text(class: c_int) -> String {
    user_lock().classes.get((class - MPICH_ERR_LAST_CLASS - 1) as usize).cloned().unwrap_or_default()
}

/// MPI_Add_error_class.
pub fn add_error_class() -> MpiResult<c_int> {
    let mut t = user_lock();
    let class = MPICH_ERR_LAST_CLASS + 1 + t.classes.len() as c_int;
    if class > USER_CLASS_MAX {
        return Err(err(MPI_ERR_OTHER, format!("no more error classes: oxmpi supports {} user-defined classes", USER_CLASS_MAX - MPICH_ERR_LAST_CLASS)));
    }
    t.classes.push(String::new());
    LAST_USED_CODE.fetch_max(class, Ordering::AcqRel);
    Ok(class)
}

/// MPI_Add_error_code: a new code of `class` (predefined or user-defined).
pub fn add_error_code(class: c_int) -> MpiResult<c_int> {
    if !is_class(class) || class == MPI_SUCCESS {
        return Err(err(MPI_ERR_ARG, format!("{class} is not an error class")));
    }
    let mut t = user_lock();
    let code = USER_CODE_BASE + t.codes.len() as c_int;
    t.codes.push((class, String::new()));
    LAST_USED_CODE.fetch_max(code, Ordering::AcqRel);
    Ok(code)
}

/// MPI_Add_error_string: only user-defined classes and codes may get a string.
pub fn add_error_string(code: c_int, text: &str) -> MpiResult {
    let mut t = user_lock();
    let slot = if code >= USER_CODE_BASE {
        t.codes.get_mut((code - USER_CODE_BASE) as usize).map(|c| &mut c.1)
    } else if code > MPICH_ERR_LAST_CLASS {
        t.classes.get_mut((code - MPICH_ERR_LAST_CLASS - 1) as usize)
    } else {
        None
    };
    let slot = slot.ok_or_else(|| err(MPI_ERR_ARG, format!("{code} is not a user-defined error class or code (predefined strings cannot be changed)")))?;
    *slot = text.chars().take(MPI_MAX_ERROR_STRING - 1).collect();
    Ok(())
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
        assert_eq!(make_code(MPI_ERR_IN_STATUS, "one or more requests failed"), MPI_ERR_IN_STATUS);
    }
    #[test]
    fn user_classes_and_codes() {
        let c = add_error_class().unwrap();
        assert!(c > MPICH_ERR_LAST_CLASS);
        assert_eq!(class_of(c), Some(c));
        assert_eq!(string_of(c).unwrap(), "");
        let code = add_error_code(c).unwrap();
        assert!(code >= USER_CODE_BASE);
        assert_eq!(class_of(code), Some(c));
        add_error_string(code, "my code").unwrap();
        assert_eq!(string_of(code).unwrap(), "my code");
        assert!(add_error_string(MPI_ERR_RANK, "x").is_err());
        let rich = make_code(c, "raised with a user class");
        assert_eq!(class_of(rich), Some(c));
        assert!(LAST_USED_CODE.load(Ordering::Acquire) >= code);
        assert_eq!(class_of(code + 1000), None);
    }
}
