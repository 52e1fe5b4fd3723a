//! PMIx client: how a rank started by Open MPI's `mpirun` (or `srun --mpi=pmix`, `prterun`)
//! talks to its launcher. PMIx has no simple wire protocol of its own to speak; the launcher's
//! server and its client library (Debian's libpmix2, which Open MPI uses too) must agree, so
//! this goes through that library, loaded at run time (`pmix_sys`, bindings made by bindgen)
//! and only when the environment shows a PMIx launcher: liboxmpi does not depend on it.
use super::foreign::Lookup;
use super::pmix_sys as sys;
use super::{proto_err, Pmi};
use std::ffi::{c_char, c_void, CStr, CString};
use std::io;

/// The PMIx client library, as Debian's libpmix2 installs it.
pub const LIBRARY: &str = "libpmix.so.2";
/// The Debian package that has it.
pub const PACKAGE: &str = "libpmix2";
/// PMIX_RANK_WILDCARD of pmix_common.h (`UINT32_MAX-1`, which bindgen does not evaluate): the
/// rank that names a whole namespace, for job-level keys.
const RANK_WILDCARD: u32 = u32::MAX - 1;

pub struct Pmix {
    lib: std::sync::Arc<sys::PmixLib>,
    me: sys::pmix_proc_t,
    size: usize,
    appnum: i32,
    local_rank: usize,
    local_size: usize,
}

/// Whether the environment shows a rank started by a PMIx launcher (its namespace and rank).
pub fn launched_by_pmix(env: Lookup) -> bool {
    env("PMIX_NAMESPACE").is_some() && env("PMIX_RANK").is_some()
}

/// The launcher, for messages: Open MPI's mpirun sets OMPI_*, Slurm's srun SLURM_STEP_ID.
pub fn launcher_name(env: Lookup) -> String {
    if let Some(n) = env("OMPI_COMM_WORLD_SIZE") {
        format!("Open MPI's mpirun (OMPI_COMM_WORLD_SIZE={n})")
    } else if env("SLURM_STEP_ID").is_some() {
        "Slurm's srun --mpi=pmix".to_string()
    } else {
        format!("a PMIx launcher (namespace '{}')", env("PMIX_NAMESPACE").unwrap_or_default())
    }
}

/// A value PMIx gave back, in the forms this client uses.
/// PMIx's key of a rank's host name (not in the generated bindings).
const PMIX_HOSTNAME: &[u8] = b"pmix.hname\0";

#[derive(Debug, PartialEq)]
enum Value {
    Number(u64),
    Text(String),
    /// Any other PMIx data type (its number).
    Other(u16),
}

/// Reads `v`, which PMIx filled in.
///
/// # Safety
/// `v` must be a valid, initialised pmix_value_t.
unsafe fn read_value(v: &sys::pmix_value_t) -> Value {
    // SAFETY: the union member read is the one `type_` says is set; a string is NUL-terminated
    // (the caller's promise).
    unsafe {
        match v.type_ as u32 {
            sys::PMIX_STRING if !v.data.string.is_null() => Value::Text(CStr::from_ptr(v.data.string).to_string_lossy().into_owned()),
            sys::PMIX_UINT8 => Value::Number(v.data.uint8 as u64),
            sys::PMIX_UINT16 => Value::Number(v.data.uint16 as u64),
            sys::PMIX_UINT32 => Value::Number(v.data.uint32 as u64),
            sys::PMIX_UINT64 => Value::Number(v.data.uint64),
            sys::PMIX_SIZE => Value::Number(v.data.size as u64),
            sys::PMIX_PROC_RANK => Value::Number(v.data.rank as u64),
            sys::PMIX_INT | sys::PMIX_INT32 if v.data.int32 >= 0 => Value::Number(v.data.int32 as u64),
            t => Value::Other(t as u16),
        }
    }
}

/// `key` as PMIx's fixed-size key field (at most PMIX_MAX_KEYLEN bytes, NUL-terminated).
fn key_field(key: &str) -> io::Result<[c_char; sys::PMIX_MAX_KEYLEN as usize + 1]> {
    let mut out = [0 as c_char; sys::PMIX_MAX_KEYLEN as usize + 1];
    if key.len() > sys::PMIX_MAX_KEYLEN as usize || key.as_bytes().contains(&0) {
        return Err(proto_err(format!("PMIx key '{key}' is longer than {} bytes or holds a NUL", sys::PMIX_MAX_KEYLEN)));
    }
    for (o, b) in out.iter_mut().zip(key.bytes()) {
        *o = b as c_char;
    }
    Ok(out)
}

/// A PMIx info (a directive to a call) that sets the boolean attribute `key`.
fn flag_info(key: &[u8]) -> sys::pmix_info_t {
    // SAFETY: pmix_info_t is plain C data; all zeroes is PMIX_INFO_CONSTRUCT's empty info.
    let mut info: sys::pmix_info_t = unsafe { std::mem::zeroed() };
    // The key constants end with their NUL; the field is zeroed, so the copy stays terminated.
    for (o, b) in info.key.iter_mut().zip(key.iter().take_while(|&&b| b != 0)) {
        *o = *b as c_char;
    }
    info.value.type_ = sys::PMIX_BOOL as u16;
    info.value.data.flag = true;
    info
}

/// Loads the PMIx library. Err: the one-line reason, naming the package to install.
fn load(env: Lookup) -> Result<sys::PmixLib, String> {
    let why = |e: String| {
        format!(
            "this program was started by {}, which speaks PMIx, but oxmpi cannot load the PMIx library {LIBRARY} ({e}); install Debian's {PACKAGE} (apt-get install {PACKAGE}), or start the program with oxmpi's mpiexec",
            launcher_name(env)
        )
    };
    let name = env("OXMPI_PMIX_LIBRARY").unwrap_or_else(|| LIBRARY.to_string());
    // SAFETY: loading libpmix runs its initialisers, which only set up the library's own state.
    // RTLD_GLOBAL: its plugins (dlopened by libpmix itself) resolve libpmix's symbols.
    let lib = unsafe { libloading::os::unix::Library::open(Some(&name), libc::RTLD_NOW | libc::RTLD_GLOBAL) }.map_err(|e| why(e.to_string()))?;
    // SAFETY: the symbols are looked up by the names and with the types of pmix.h (bindgen).
    unsafe { sys::PmixLib::from_library(lib) }.map_err(|e| why(format!("{name}: {e}")))
}

impl Pmix {
    /// Loads the library and connects to the launcher's PMIx server (PMIx_Init); learns the
    /// job's size, this rank's appnum and how many ranks share its node.
    pub fn start(env: Lookup) -> Result<Pmix, String> {
        let lib = load(env)?;
        // SAFETY: pmix_proc_t is plain C data, filled in by PMIx_Init.
        let mut me: sys::pmix_proc_t = unsafe { std::mem::zeroed() };
        // SAFETY: PMIx_Init writes this rank's identity into `me`; no info is passed.
        let rc = unsafe { lib.PMIx_Init(&mut me, std::ptr::null_mut(), 0) };
        let fail = |what: String| format!("cannot use the PMIx server of {} ({what}); start the program with oxmpi's mpiexec, or check the launcher", launcher_name(env));
        if rc != sys::PMIX_SUCCESS as i32 {
            return Err(fail(format!("PMIx_Init: {}", error_string(&lib, rc))));
        }
        let mut p = Pmix { lib: std::sync::Arc::new(lib), me, size: 0, appnum: 0, local_rank: 0, local_size: 0 };
        let number = |p: &Pmix, of: &sys::pmix_proc_t, key: &[u8]| -> Result<usize, String> {
            match p.get_value(of, key, false).map_err(|e| fail(e.to_string()))? {
                Some(Value::Number(n)) => Ok(n as usize),
                v => Err(fail(format!("{} is {v:?}, not a number", String::from_utf8_lossy(&key[..key.len() - 1])))),
            }
        };
        let job = p.wildcard();
        p.size = number(&p, &job, sys::PMIX_JOB_SIZE)?;
        p.local_size = number(&p, &job, sys::PMIX_LOCAL_SIZE)?;
        p.local_rank = number(&p, &me, sys::PMIX_LOCAL_RANK)?;
        // Not every PMIx server says (Open MPI's and Slurm's do); a job of one program is 0.
        p.appnum = number(&p, &me, sys::PMIX_APPNUM).unwrap_or(0) as i32;
        if p.size == 0 || p.me.rank as usize >= p.size || p.local_size > p.size || p.local_rank >= p.local_size {
            return Err(fail(format!("rank {} of {} ranks, local rank {} of {} on this node, makes no sense", p.me.rank, p.size, p.local_rank, p.local_size)));
        }
        Ok(p)
    }

    /// The whole job (this namespace, every rank), as PMIx names it for job-level keys.
    fn wildcard(&self) -> sys::pmix_proc_t {
        let mut p = self.me;
        p.rank = RANK_WILDCARD;
        p
    }

    fn rank_of(&self, rank: usize) -> sys::pmix_proc_t {
        let mut p = self.me;
        p.rank = rank as u32;
        p
    }

    fn check(&self, what: &str, rc: sys::pmix_status_t) -> io::Result<()> {
        if rc == sys::PMIX_SUCCESS as i32 {
            Ok(())
        } else {
            Err(proto_err(format!("PMIx {what} failed: {}", error_string(&self.lib, rc))))
        }
    }

    /// The value of `key` (a NUL-terminated key constant or name) of process `of`, None if it
    /// has none. `local_only`: look only at what this process already holds (after a fence),
    /// rather than ask the server and wait for the key to appear.
    fn get_value(&self, of: &sys::pmix_proc_t, key: &[u8], local_only: bool) -> io::Result<Option<Value>> {
        let name = CStr::from_bytes_with_nul(key).map_err(|_| proto_err("PMIx key without its NUL"))?;
        let mut info = flag_info(sys::PMIX_OPTIONAL);
        let (info_ptr, ninfo) = if local_only { (&mut info as *mut sys::pmix_info_t, 1) } else { (std::ptr::null_mut(), 0) };
        let mut val: *mut sys::pmix_value_t = std::ptr::null_mut();
        // SAFETY: PMIx_Get reads the proc, key and info (all valid for the call) and on success
        // stores a value it allocated into `val`.
        let rc = unsafe { self.lib.PMIx_Get(of, name.as_ptr(), info_ptr, ninfo, &mut val) };
        if rc == sys::PMIX_ERR_NOT_FOUND {
            return Ok(None);
        }
        self.check(&format!("get of '{}'", name.to_string_lossy()), rc)?;
        if val.is_null() {
            return Ok(None);
        }
        // SAFETY: PMIx gave a valid value; it is released as PMIX_VALUE_RELEASE does (destruct,
        // then free the malloc'ed struct).
        unsafe {
            let out = read_value(&*val);
            self.lib.PMIx_Value_destruct(val);
            libc::free(val as *mut c_void);
            Ok(Some(out))
        }
    }
}

fn error_string(lib: &sys::PmixLib, rc: sys::pmix_status_t) -> String {
    // SAFETY: PMIx_Error_string returns a static string (or NULL) for any status.
    let s = unsafe { lib.PMIx_Error_string(rc) };
    if s.is_null() {
        return format!("PMIx status {rc}");
    }
    // SAFETY: a NUL-terminated static string of the library's.
    format!("{} ({rc})", unsafe { CStr::from_ptr(s) }.to_string_lossy())
}

fn with_nul(key: &str) -> io::Result<CString> {
    key_field(key)?;
    CString::new(key).map_err(|_| proto_err("PMIx key holds a NUL"))
}

impl Pmi for Pmix {
    fn protocol(&self) -> &'static str {
        "PMIx"
    }
    fn rank(&self) -> usize {
        self.me.rank as usize
    }
    fn size(&self) -> usize {
        self.size
    }
    fn appnum(&self) -> i32 {
        self.appnum
    }

    fn put(&self, key: &str, value: &str) -> io::Result<()> {
        let k = with_nul(key)?;
        let text = CString::new(value).map_err(|_| proto_err("a PMIx value holds a NUL"))?;
        // SAFETY: pmix_value_t is plain C data; this one points at `text`, which PMIx_Put copies.
        let mut v: sys::pmix_value_t = unsafe { std::mem::zeroed() };
        v.type_ = sys::PMIX_STRING as u16;
        v.data.string = text.as_ptr() as *mut c_char;
        // SAFETY: key and value stay valid for the call; PMIx keeps copies.
        let rc = unsafe { self.lib.PMIx_Put(sys::PMIX_GLOBAL as u8, k.as_ptr(), &mut v) };
        self.check(&format!("put of '{key}'"), rc)
    }

    fn fence(&self) -> io::Result<()> {
        // SAFETY: PMIx_Commit takes no arguments.
        self.check("commit", unsafe { self.lib.PMIx_Commit() })?;
        // Every rank's data comes to every rank with the fence, so that gets are local.
        let info = flag_info(sys::PMIX_COLLECT_DATA);
        // SAFETY: no procs (the whole namespace) and one info, valid for the call.
        self.check("fence", unsafe { self.lib.PMIx_Fence(std::ptr::null(), 0, &info, 1) })
    }

    fn get(&self, owner: usize, key: &str) -> io::Result<Option<String>> {
        let k = with_nul(key)?;
        match self.get_value(&self.rank_of(owner), k.as_bytes_with_nul(), true)? {
            None => Ok(None),
            Some(Value::Text(t)) => Ok(Some(t)),
            Some(v) => Err(proto_err(format!("PMIx: rank {owner}'s '{key}' is {v:?}, not the text this rank put"))),
        }
    }

    fn job_attr(&self, key: &str) -> io::Result<Option<String>> {
        let k = with_nul(key)?;
        Ok(match self.get_value(&self.wildcard(), k.as_bytes_with_nul(), true)? {
            None => None,
            Some(Value::Text(t)) => Some(t),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(Value::Other(t)) => return Err(proto_err(format!("PMIx job attribute '{key}' has data type {t}, which oxmpi does not read"))),
        })
    }

    fn local(&self) -> io::Result<Option<(usize, usize)>> {
        Ok(Some((self.local_rank, self.local_size)))
    }

    fn nodes(&self) -> io::Result<Option<Vec<usize>>> {
        // Every rank on this node: one node (the common case, without asking per rank).
        if self.local_size == self.size {
            return Ok(Some(vec![0; self.size]));
        }
        // A rank's node id (PMIX_NODEID); Open MPI 4.1's launcher gives none for the ranks of
        // other nodes, but their host name (PMIX_HOSTNAME, as named on its --host list), which
        // is numbered here in order of first appearance.
        let mut hosts: Vec<String> = Vec::new();
        let mut out = Vec::with_capacity(self.size);
        for r in 0..self.size {
            let of = self.rank_of(r);
            let id = match self.get_value(&of, sys::PMIX_NODEID, true)? {
                Some(Value::Number(n)) => n as usize,
                _ => match self.get_value(&of, PMIX_HOSTNAME, true)?.or(self.get_value(&of, PMIX_HOSTNAME, false)?) {
                    Some(Value::Text(h)) => {
                        // Far above any node id the launcher gives, so the two never mix up.
                        let i = hosts.iter().position(|x| *x == h).unwrap_or_else(|| {
                            hosts.push(h);
                            hosts.len() - 1
                        });
                        (1 << 32) + i
                    }
                    v => return Err(proto_err(format!("PMIx: neither the node id nor the host name of rank {r} is known (got {v:?})"))),
                },
            };
            out.push(id);
        }
        Ok(Some(out))
    }

    fn abort(&self, code: i32, message: &str) {
        let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // PMIx_Abort waits for the server's answer; a server that is gone must not keep this
        // rank from exiting, so it is asked from a thread and waited for a bounded time.
        let lib = self.lib.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new().name("oxmpi-pmix-abort".into()).spawn(move || {
            // SAFETY: no procs means the whole job; the message lives in the closure.
            unsafe { lib.PMIx_Abort(code, msg.as_ptr(), std::ptr::null_mut(), 0) };
            let _ = tx.send(());
        });
        if spawned.is_ok() {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
        }
    }

    fn finalize(&self) -> io::Result<()> {
        // SAFETY: no info.
        self.check("finalize", unsafe { self.lib.PMIx_Finalize(std::ptr::null(), 0) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn recognises_pmix_launchers() {
        let ompi = env_of(&[("PMIX_NAMESPACE", "1854603265"), ("PMIX_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2")]);
        assert!(launched_by_pmix(&ompi));
        assert_eq!(launcher_name(&ompi), "Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=2)");
        let srun = env_of(&[("PMIX_NAMESPACE", "slurm.pmix.7.0"), ("PMIX_RANK", "0"), ("SLURM_STEP_ID", "0")]);
        assert_eq!(launcher_name(&srun), "Slurm's srun --mpi=pmix");
        assert!(launcher_name(&env_of(&[("PMIX_NAMESPACE", "prte-1"), ("PMIX_RANK", "0")])).contains("'prte-1'"));
        assert!(!launched_by_pmix(&env_of(&[("PMIX_RANK", "0")])));
        assert!(!launched_by_pmix(&env_of(&[])));
    }

    #[test]
    fn a_missing_library_names_the_package() {
        let env = env_of(&[("PMIX_NAMESPACE", "1"), ("PMIX_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2"), ("OXMPI_PMIX_LIBRARY", "libpmix-absent.so.2")]);
        let m = Pmix::start(&env).err().unwrap();
        assert!(m.contains("Open MPI's mpirun") && m.contains("apt-get install libpmix2") && m.contains("libpmix-absent.so.2"), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }

    #[test]
    fn reads_values() {
        // SAFETY: zeroed plain C data, then one member set as its type says.
        let mut v: sys::pmix_value_t = unsafe { std::mem::zeroed() };
        v.type_ = sys::PMIX_UINT16 as u16;
        v.data.uint16 = 3;
        // SAFETY: v is initialised.
        assert_eq!(unsafe { read_value(&v) }, Value::Number(3));
        let s = CString::new("a,b").unwrap();
        v.type_ = sys::PMIX_STRING as u16;
        v.data.string = s.as_ptr() as *mut c_char;
        // SAFETY: v points at a live string.
        assert_eq!(unsafe { read_value(&v) }, Value::Text("a,b".into()));
        v.type_ = sys::PMIX_BOOL as u16;
        // SAFETY: v is initialised.
        assert_eq!(unsafe { read_value(&v) }, Value::Other(sys::PMIX_BOOL as u16));
        assert!(key_field(&"k".repeat(600)).is_err());
        assert_eq!(key_field("ab").unwrap()[..3], [b'a' as c_char, b'b' as c_char, 0]);
    }
}
