//! MPI_Info objects (MPI 4.1 section 10): ordered (key, value) string pairs, and the per-rank
//! registry that gives user-visible info objects their index.
//!
//! Keys keep insertion order, as in MPICH, so `MPI_Info_get_nthkey` enumerates them in the order
//! they were first set; setting an existing key replaces its value in place. The registry lives in
//! the rank's slot rather than in its `Universe` because MPI 4 allows the info functions before
//! MPI_Init and after MPI_Finalize.
//!
//! `MPI_INFO_ENV` is not stored: `env_info` builds it when it is read, from the state of the moment.
use crate::error::{err, MpiResult, ErrorClass};
use std::sync::{Mutex, MutexGuard};

/// One info object: (key, value) pairs in insertion order, keys distinct. Bytes, not `String`:
/// C strings need not be UTF-8 (file names, for one) and must come back unchanged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// The longest key and value the engine stores, in bytes: what MPI_MAX_INFO_KEY and
/// MPI_MAX_INFO_VAL announce (the C boundary checks that its ABI's values agree).
pub const MAX_KEY: usize = 255;
pub const MAX_VALUE: usize = 1024;

/// Checks a key: 1 to `MAX_KEY` bytes, else `ErrorClass::InfoKey`.
pub fn check_key(key: &[u8]) -> MpiResult {
    if key.is_empty() {
        return Err(err(ErrorClass::InfoKey, "the info key is empty"));
    }
    if key.len() > MAX_KEY {
        return Err(err(ErrorClass::InfoKey, format!("the info key is {} bytes long; MPI_MAX_INFO_KEY is {MAX_KEY}", key.len())));
    }
    Ok(())
}

/// Checks a value: at most `MAX_VALUE` bytes, else `ErrorClass::InfoValue`. An empty value is
/// accepted, as MPICH does.
pub fn check_value(value: &[u8]) -> MpiResult {
    if value.len() > MAX_VALUE {
        return Err(err(ErrorClass::InfoValue, format!("the info value is {} bytes long; MPI_MAX_INFO_VAL is {MAX_VALUE}", value.len())));
    }
    Ok(())
}

impl Info {
    pub fn new() -> Info {
        Info::default()
    }
    /// Sets `key` to `value` (both already checked); an existing key keeps its position.
    pub fn set(&mut self, key: &[u8], value: &[u8]) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_vec(),
            None => self.entries.push((key.to_vec(), value.to_vec())),
        }
    }
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }
    /// Removes `key`; false if it was not set.
    pub fn delete(&mut self, key: &[u8]) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(k, _)| k != key);
        self.entries.len() != before
    }
    pub fn nkeys(&self) -> usize {
        self.entries.len()
    }
    /// The `n`-th key in insertion order.
    pub fn nth_key(&self, n: usize) -> Option<&[u8]> {
        self.entries.get(n).map(|(k, _)| k.as_slice())
    }
}

/// What `MPI_INFO_ENV` holds, from the launch environment and the MPI state of the moment.
/// Keys of MPI 4.1 section 11.2.4 that oxmpi can answer; `soft` and `file` never apply to a job
/// started by `mpiexec -n N program args`, so they are absent, and so is `maxprocs` before MPI_Init.
pub struct EnvFacts {
    /// argv[0] and the further arguments of the program.
    pub args: Vec<String>,
    /// Number of ranks of the job, once known.
    pub maxprocs: Option<usize>,
    /// Thread level granted by MPI_Init_thread, once initialised.
    pub thread_level: Option<crate::runtime::thread_level::ThreadLevel>,
    pub host: Option<String>,
    pub wdir: Option<String>,
}

/// Builds the `MPI_INFO_ENV` object: `command` (argv[0]), `argv` (the other arguments separated by
/// spaces, if any), `maxprocs`, `host`, `arch` (the processor architecture oxmpi was built for),
/// `wdir` (the working directory) and `thread_level`. Values longer than MAX_VALUE are cut
/// (at a character boundary), so that every value can be read back with a buffer of that size.
pub fn env_info(f: &EnvFacts) -> Info {
    let mut info = Info::new();
    let mut put = |k: &str, v: &str| {
        if v.is_empty() {
            return;
        }
        let mut end = v.len().min(MAX_VALUE);
        while !v.is_char_boundary(end) {
            end -= 1;
        }
        info.set(k.as_bytes(), &v.as_bytes()[..end]);
    };
    if let Some(cmd) = f.args.first() {
        put("command", cmd);
    }
    put("argv", &f.args.iter().skip(1).cloned().collect::<Vec<_>>().join(" "));
    if let Some(n) = f.maxprocs {
        put("maxprocs", &n.to_string());
    }
    if let Some(h) = &f.host {
        put("host", h);
    }
    put("arch", std::env::consts::ARCH);
    if let Some(w) = &f.wdir {
        put("wdir", w);
    }
    if let Some(l) = f.thread_level {
        put("thread_level", l.name());
    }
    info
}

/// The info objects of one rank. Index `i` is the user handle's index; a freed slot is `None` and
/// is reused by a later object. `const`-constructible so it can live in a static rank slot.
pub struct InfoTable {
    slots: Mutex<Slots>,
}

struct Slots {
    infos: Vec<Option<Info>>,
    free: Vec<usize>,
}

/// Indices stop at 2^26 - 1: the handle has 26 index bits.
const MAX_INDEX: usize = (1 << 26) - 1;

impl InfoTable {
    pub const fn new() -> InfoTable {
        InfoTable { slots: Mutex::new(Slots { infos: Vec::new(), free: Vec::new() }) }
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `info`; returns its index, or None if all 2^26 indices are in use.
    pub fn insert(&self, info: Info) -> Option<usize> {
        let mut t = self.lock();
        if let Some(i) = t.free.pop() {
            t.infos[i] = Some(info);
            return Some(i);
        }
        if t.infos.len() > MAX_INDEX {
            return None;
        }
        t.infos.push(Some(info));
        Some(t.infos.len() - 1)
    }

    /// Runs `f` on the live object at index `i`; None if there is none.
    pub fn with<R>(&self, i: usize, f: impl FnOnce(&mut Info) -> R) -> Option<R> {
        self.lock().infos.get_mut(i).and_then(Option::as_mut).map(f)
    }

    /// Frees index `i`; false if it was not live.
    pub fn remove(&self, i: usize) -> bool {
        let mut t = self.lock();
        match t.infos.get_mut(i).and_then(Option::take) {
            Some(_) => {
                t.free.push(i);
                true
            }
            None => false,
        }
    }
}

impl Default for InfoTable {
    fn default() -> Self {
        InfoTable::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    

    #[test]
    fn insertion_order_and_replace_in_place() {
        let mut i = Info::new();
        i.set(b"b", b"1");
        i.set(b"a", b"2");
        i.set(b"b", b"3");
        assert_eq!(i.nkeys(), 2);
        assert_eq!(i.nth_key(0), Some(&b"b"[..]));
        assert_eq!(i.get(b"b"), Some(&b"3"[..]));
        assert!(i.delete(b"b"));
        assert!(!i.delete(b"b"));
        assert_eq!(i.nth_key(0), Some(&b"a"[..]));
        assert_eq!(i.nth_key(1), None);
    }

    #[test]
    fn limits() {
        assert!(check_key("k".repeat(MAX_KEY).as_bytes()).is_ok());
        assert_eq!(check_key("k".repeat(MAX_KEY + 1).as_bytes()).unwrap_err().class, ErrorClass::InfoKey);
        assert_eq!(check_key(b"").unwrap_err().class, ErrorClass::InfoKey);
        assert!(check_value("v".repeat(MAX_VALUE).as_bytes()).is_ok());
        assert!(check_value(b"").is_ok());
        assert_eq!(check_value("v".repeat(MAX_VALUE + 1).as_bytes()).unwrap_err().class, ErrorClass::InfoValue);
    }

    #[test]
    fn env_info_keys() {
        let f = EnvFacts { args: vec!["./a.out".into(), "-x".into(), "y".into()], maxprocs: Some(4), thread_level: Some(crate::runtime::thread_level::ThreadLevel::Multiple), host: Some("h".into()), wdir: Some("/w".into()) };
        let i = env_info(&f);
        assert_eq!(i.get(b"command"), Some(&b"./a.out"[..]));
        assert_eq!(i.get(b"argv"), Some(&b"-x y"[..]));
        assert_eq!(i.get(b"maxprocs"), Some(&b"4"[..]));
        assert_eq!(i.get(b"thread_level"), Some(&b"MPI_THREAD_MULTIPLE"[..]));
        assert_eq!(i.get(b"wdir"), Some(&b"/w"[..]));
        let bare = env_info(&EnvFacts { args: vec!["p".into()], maxprocs: None, thread_level: None, host: None, wdir: None });
        assert_eq!(bare.get(b"argv"), None);
        assert_eq!(bare.get(b"maxprocs"), None);
    }

    #[test]
    fn table_reuses_slots() {
        let t = InfoTable::new();
        let a = t.insert(Info::new()).unwrap();
        t.with(a, |i| i.set(b"k", b"v")).unwrap();
        assert_eq!(t.with(a, |i| i.get(b"k").map(<[u8]>::to_vec)).unwrap().as_deref(), Some(&b"v"[..]));
        assert!(t.remove(a));
        assert!(t.with(a, |_| ()).is_none());
        assert_eq!(t.insert(Info::new()), Some(a));
    }
}
