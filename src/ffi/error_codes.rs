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
    // User-defined classes do not fit the 7 class bits: they stay bare.
    if class == MPI_ERR_IN_STATUS || class >= 1 << CLASS_BITS {
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
    if code >= USER_CLASS_BASE {
        return user_class_of(code);
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
    if code >= USER_CLASS_BASE {
        return Some(user_text(code));
    }
    let slot = (code >> CLASS_BITS) as usize;
    let generic = match ERROR_CLASSES.iter().find(|e| e.0 == class) {
        Some(e) => format!("{}: {}", e.1, e.2),
        None => String::new(),
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
/// one OS process; MPI_LASTUSEDCODE is per rank (`last_used_code`).
///
/// As in MPICH, every user-defined value lies above MPI_ERR_LASTCODE (programs and mpi4py check
/// this): classes are `USER_CLASS_BASE + i`, codes `USER_CODE_BASE + j`. Rich codes only carry
/// predefined classes (7 bits), so they never reach these ranges.
pub const USER_CLASS_BASE: c_int = MPI_ERR_LASTCODE + 1;
/// Room for this many user-defined classes below the first user-defined code.
const USER_CLASS_MAX: c_int = 1 << 16;
pub const USER_CODE_BASE: c_int = USER_CLASS_BASE + USER_CLASS_MAX;

/// One user-defined class or code; `None` in the tables once removed (MPI_Remove_error_*).
#[derive(Clone)]
struct UserEntry {
    /// The class a code belongs to (a class's own value for classes).
    class: c_int,
    /// Set by MPI_Add_error_string, cleared by MPI_Remove_error_string.
    text: Option<String>,
}

struct UserErrors {
    /// Classes USER_CLASS_BASE + i.
    classes: Vec<Option<UserEntry>>,
    /// Codes USER_CODE_BASE + j.
    codes: Vec<Option<UserEntry>>,
}

static USER: Mutex<UserErrors> = Mutex::new(UserErrors { classes: Vec::new(), codes: Vec::new() });

/// The value of the MPI_LASTUSEDCODE attribute: the largest class or code in use. The attribute
/// hands out a pointer to it, so it is an atomic with `int` layout. It starts at
/// MPI_ERR_LASTCODE, as the standard requires (MPI 4.1 section 9.5: never below it), which is
/// above every predefined class and code of every ABI (MPI_ERR_ERRHANDLER 80, MPI_ERR_ABI 81,
/// the ULFM classes, rich codes); user classes and codes lie above it.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(MPI_ERR_LASTCODE);

/// Rank contexts (threads mode) with an MPI_LASTUSEDCODE of their own.
const RANK_LAST_USED: usize = 1024;
/// MPI_LASTUSEDCODE per rank context in threads mode: the largest class or code that rank made,
/// as its own process would show it (the numbers stay unique in the process, so a rank never
/// sees another rank's newer class as its last one).
static LAST_USED_BY_RANK: [AtomicI32; RANK_LAST_USED] = [const { AtomicI32::new(MPI_ERR_LASTCODE) }; RANK_LAST_USED];

/// The MPI_LASTUSEDCODE attribute's value for the caller: its rank's in threads mode.
pub fn last_used_code() -> &'static AtomicI32 {
    let ctx = crate::runtime::job::context();
    usize::try_from(ctx).ok().and_then(|c| LAST_USED_BY_RANK.get(c)).unwrap_or(&LAST_USED_CODE)
}

/// Records `value` as made by the caller.
fn note_used(value: c_int) {
    LAST_USED_CODE.fetch_max(value, Ordering::AcqRel);
    last_used_code().fetch_max(value, Ordering::AcqRel);
}

fn user_lock() -> std::sync::MutexGuard<'static, UserErrors> {
    USER.lock().unwrap_or_else(|p| p.into_inner())
}

impl UserErrors {
    /// The live entry of a user-defined class or code.
    fn entry(&self, value: c_int) -> Option<&UserEntry> {
        self.slot(value).and_then(|(codes, i)| if codes { &self.codes } else { &self.classes }.get(i)?.as_ref())
    }
    fn entry_mut(&mut self, value: c_int) -> Option<&mut UserEntry> {
        let (codes, i) = self.slot(value)?;
        if codes { &mut self.codes } else { &mut self.classes }.get_mut(i)?.as_mut()
    }
    /// (is a code, index) of a value in the user ranges.
    fn slot(&self, value: c_int) -> Option<(bool, usize)> {
        if value >= USER_CODE_BASE {
            Some((true, (value - USER_CODE_BASE) as usize))
        } else if value >= USER_CLASS_BASE {
            Some((false, (value - USER_CLASS_BASE) as usize))
        } else {
            None
        }
    }
}

/// The class of a user-defined class or code still in use.
fn user_class_of(value: c_int) -> Option<c_int> {
    user_lock().entry(value).map(|e| e.class)
}

/// A predefined class or one made by MPI_Add_error_class (and not removed).
pub fn is_class(class: c_int) -> bool {
    error_class_name(class).is_some() || (class >= USER_CLASS_BASE && class < USER_CODE_BASE && user_class_of(class).is_some())
}

fn user_text(value: c_int) -> String {
    user_lock().entry(value).and_then(|e| e.text.clone()).unwrap_or_default()
}

/// MPI_Add_error_class.
pub fn add_error_class() -> MpiResult<c_int> {
    let mut t = user_lock();
    if t.classes.len() as c_int >= USER_CLASS_MAX {
        return Err(err(MPI_ERR_OTHER, format!("no more error classes: oxmpi supports {USER_CLASS_MAX} user-defined classes")));
    }
    let class = USER_CLASS_BASE + t.classes.len() as c_int;
    t.classes.push(Some(UserEntry { class, text: None }));
    note_used(class);
    Ok(class)
}

/// MPI_Add_error_code: a new code of `class` (predefined or user-defined).
pub fn add_error_code(class: c_int) -> MpiResult<c_int> {
    if !is_class(class) || class == MPI_SUCCESS {
        return Err(err(MPI_ERR_ARG, format!("{class} is not an error class")));
    }
    let mut t = user_lock();
    if t.codes.len() >= (c_int::MAX - USER_CODE_BASE) as usize {
        return Err(err(MPI_ERR_OTHER, "no more error codes"));
    }
    let code = USER_CODE_BASE + t.codes.len() as c_int;
    t.codes.push(Some(UserEntry { class, text: None }));
    note_used(code);
    Ok(code)
}

/// MPI_Add_error_string: only user-defined classes and codes may get a string.
pub fn add_error_string(code: c_int, text: &str) -> MpiResult {
    let mut t = user_lock();
    let e = t.entry_mut(code).ok_or_else(|| err(MPI_ERR_ARG, format!("{code} is not a user-defined error class or code (predefined strings cannot be changed)")))?;
    e.text = Some(text.chars().take(MPI_MAX_ERROR_STRING - 1).collect());
    Ok(())
}

impl UserErrors {
    /// Removes user-defined class (`code` false) or code (`code` true) `value`, which must have
    /// no string left; `still_used` names what else keeps it (a class's codes).
    fn remove(&mut self, value: c_int, code: bool, still_used: Option<&str>) -> MpiResult {
        let what = if code { "code" } else { "class" };
        let i = match self.slot(value) {
            Some((is_code, i)) if is_code == code && self.entry(value).is_some() => i,
            _ => return Err(err(MPI_ERR_ARG, format!("{value} is not a user-defined error {what}"))),
        };
        if self.entry(value).is_some_and(|e| e.text.is_some()) {
            return Err(err(MPI_ERR_ARG, format!("error {what} {value} still has a string: remove it first (MPI_Remove_error_string)")));
        }
        if let Some(used) = still_used {
            return Err(err(MPI_ERR_ARG, format!("error {what} {value} still has {used}")));
        }
        let table = if code { &mut self.codes } else { &mut self.classes };
        table[i] = None;
        Ok(())
    }
}

/// MPI_Remove_error_class (MPI 4.1 section 9.5): only a user-defined class with no codes and no
/// string left may go.
pub fn remove_error_class(class: c_int) -> MpiResult {
    let mut t = user_lock();
    let has_codes = t.codes.iter().flatten().any(|c| c.class == class);
    t.remove(class, false, has_codes.then_some("error codes: remove them first (MPI_Remove_error_code)"))
}

/// MPI_Remove_error_code: only a user-defined code with no string left may go.
pub fn remove_error_code(code: c_int) -> MpiResult {
    user_lock().remove(code, true, None)
}

/// MPI_Remove_error_string: the string of a user-defined class or code, which must have one.
pub fn remove_error_string(code: c_int) -> MpiResult {
    let mut t = user_lock();
    let e = t.entry_mut(code).ok_or_else(|| err(MPI_ERR_ARG, format!("{code} is not a user-defined error class or code")))?;
    if e.text.take().is_none() {
        return Err(err(MPI_ERR_ARG, format!("error class or code {code} has no string to remove")));
    }
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
        assert!(c > MPI_ERR_LASTCODE);
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
        // Removal: strings first, then codes, then the class.
        assert!(remove_error_class(c).is_err());
        assert!(remove_error_code(code).is_err());
        remove_error_string(code).unwrap();
        assert!(remove_error_string(code).is_err());
        remove_error_code(code).unwrap();
        assert!(remove_error_code(code).is_err());
        assert_eq!(class_of(code), None);
        remove_error_class(c).unwrap();
        assert!(!is_class(c));
        assert!(remove_error_class(MPI_ERR_RANK).is_err());
    }
}
