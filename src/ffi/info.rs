//! MPI_Info (MPI 4.1 section 10): handle conversion, C string handling and argument checks over
//! `crate::info`. User info objects are `DIRECT | INFO | index` into the rank's `InfoTable`, which
//! exists before MPI_Init, so these functions work in every phase (errors before MPI_Init, having
//! no error handler to go to yet, end the job as MPI_ERRORS_ARE_FATAL would).
//!
//! `MPI_INFO_ENV` is read-only here (setting or deleting a key is `MPI_ERR_INFO`); it is built on
//! each read (`crate::info::env_info`). Freeing it succeeds and only sets the handle to
//! `MPI_INFO_NULL`, as in MPICH. Error classes follow MPICH 4.0.2 where it is consistent with the
//! standard: `MPI_INFO_NULL` is `MPI_ERR_ARG`, another invalid handle `MPI_ERR_INFO`. Unlike MPICH,
//! MPI_Info_get truncates a long value without an error, as the standard specifies.
use crate::ffi::pointer_args::{c_str, out};
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::info::{check_key, check_value, env_info, EnvFacts, Info};
use crate::instance;
use crate::runtime::job;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// What `MPI_INFO_ENV` says right now.
fn env_snapshot() -> Info {
    let u = instance::peek();
    let mut host = [0 as c_char; 256];
    // SAFETY: gethostname writes at most `len - 1` bytes plus a terminator into the local buffer.
    let host = (unsafe { libc::gethostname(host.as_mut_ptr(), host.len() - 1) } == 0)
        // SAFETY: the buffer was zeroed and gethostname leaves at least its last byte 0.
        .then(|| unsafe { CStr::from_ptr(host.as_ptr()) }.to_string_lossy().into_owned());
    env_info(&EnvFacts {
        args: job::program_args(),
        maxprocs: u.map(|u| u.world.size()).or_else(|| job::threads_job().map(|j| j.seg.initial())),
        thread_level: u.map(|u| u.thread_level()),
        host,
        wdir: std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned()),
    })
}

/// Index of a user info handle, or the error for a handle that cannot be one.
fn user_index(h: MPI_Info) -> MpiResult<usize> {
    match h {
        MPI_INFO_NULL => Err(err(MPI_ERR_ARG, "invalid info object: MPI_INFO_NULL")),
        _ if handle_kind(h) == HANDLE_KIND_DIRECT && handle_object(h) == OBJ_INFO => Ok(handle_index(h) as usize),
        _ => Err(err(MPI_ERR_INFO, format!("invalid info object: 0x{:08x} is not an info handle", h as u32))),
    }
}

fn stale(h: MPI_Info) -> crate::error::MpiError {
    err(MPI_ERR_INFO, format!("invalid info object 0x{:08x} (freed, or never created by this rank)", h as u32))
}

/// Runs `f` on the info object `h` (MPI_INFO_ENV included) for reading.
fn read<R>(h: MPI_Info, f: impl FnOnce(&Info) -> R) -> MpiResult<R> {
    if h == MPI_INFO_ENV {
        return Ok(f(&env_snapshot()));
    }
    let i = user_index(h)?;
    instance::infos()?.with(i, |info| f(info)).ok_or_else(|| stale(h))
}

/// Runs `f` on the user info object `h` for writing.
fn write<R>(h: MPI_Info, f: impl FnOnce(&mut Info) -> R) -> MpiResult<R> {
    if h == MPI_INFO_ENV {
        return Err(err(MPI_ERR_INFO, "MPI_INFO_ENV is read-only; MPI_Info_dup it to get a modifiable copy"));
    }
    let i = user_index(h)?;
    instance::infos()?.with(i, f).ok_or_else(|| stale(h))
}

pub(crate) fn new_handle(info: Info) -> MpiResult<MPI_Info> {
    let i = instance::infos()?.insert(info).ok_or_else(|| err(MPI_ERR_NO_MEM, "too many info objects exist (2^26); free some with MPI_Info_free"))?;
    Ok(make_handle(HANDLE_KIND_DIRECT, OBJ_INFO, i as u32))
}

/// The bytes of a checked key.
///
/// # Safety
/// `key` must be NULL or a NUL-terminated C string.
unsafe fn key_bytes<'a>(key: *const c_char) -> MpiResult<&'a [u8]> {
    if key.is_null() {
        return Err(err(MPI_ERR_INFO_KEY, "the info key is NULL"));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let k = unsafe { CStr::from_ptr(key) }.to_bytes();
    check_key(k)?;
    Ok(k)
}

/// Copies `src` into the C buffer `dst` of `cap` bytes (cap >= 1) as a NUL-terminated string,
/// cutting it to `cap - 1` bytes.
///
/// # Safety
/// `dst` must be writable for `cap` bytes.
unsafe fn put_string(dst: *mut c_char, cap: usize, src: &[u8]) {
    let n = src.len().min(cap - 1);
    // SAFETY: n + 1 <= cap bytes of `dst` are writable; `src` is a distinct Rust buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr() as *const c_char, dst, n);
        *dst.add(n) = 0;
    }
}

export! {
    fn MPI_Info_create / PMPI_Info_create (info: *mut MPI_Info) on comm MPI_COMM_SELF => {
        let o = out(info, "info")?;
        let h = new_handle(Info::new())?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    /// A new info object with the contents of MPI_INFO_ENV. MPI 4.1 lets the arguments describe
    /// the program's command line when MPI is not initialised; oxmpi always reports the real one,
    /// so `argc` and `argv` are not used.
    fn MPI_Info_create_env / PMPI_Info_create_env (argc: c_int, argv: *mut *mut c_char, info: *mut MPI_Info) on comm MPI_COMM_SELF => {
        let o = out(info, "info")?;
        let h = new_handle(env_snapshot())?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Info_set / PMPI_Info_set (info: MPI_Info, key: *const c_char, value: *const c_char) on comm MPI_COMM_SELF => {
        // SAFETY: the standard makes `key` a NUL-terminated string (NULL is rejected).
        let k = unsafe { key_bytes(key)? };
        // SAFETY: the standard makes `value` a NUL-terminated string (NULL is rejected).
        let v = unsafe { c_str(value, "the info value")? }.to_bytes();
        check_value(v)?;
        write(info, |i| i.set(k, v))
    }

    fn MPI_Info_delete / PMPI_Info_delete (info: MPI_Info, key: *const c_char) on comm MPI_COMM_SELF => {
        // SAFETY: the standard makes `key` a NUL-terminated string (NULL is rejected).
        let k = unsafe { key_bytes(key)? };
        if !write(info, |i| i.delete(k))? {
            return Err(err(MPI_ERR_INFO_NOKEY, format!("the info object has no key \"{}\"", String::from_utf8_lossy(k))));
        }
        Ok(())
    }

    /// Deprecated in MPI 4.0 for MPI_Info_get_string. A value longer than `valuelen` is cut to
    /// `valuelen` bytes (plus the terminator: `value` must hold `valuelen + 1` bytes).
    fn MPI_Info_get / PMPI_Info_get (info: MPI_Info, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the standard makes `key` a NUL-terminated string (NULL is rejected).
        let k = unsafe { key_bytes(key)? };
        if valuelen < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid valuelen {valuelen}: must be non-negative")));
        }
        let value = out(value, "value")?;
        let flag = out(flag, "flag")?;
        let found = read(info, |i| i.get(k).map(<[u8]>::to_vec))?;
        // SAFETY: both checked non-NULL above; the caller passes an int for the flag and, as
        // documented above, `valuelen + 1` chars for the value.
        unsafe {
            *flag = found.is_some() as c_int;
            if let Some(v) = found {
                put_string(value, valuelen as usize + 1, &v);
            }
        }
        Ok(())
    }

    fn MPI_Info_get_valuelen / PMPI_Info_get_valuelen (info: MPI_Info, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the standard makes `key` a NUL-terminated string (NULL is rejected).
        let k = unsafe { key_bytes(key)? };
        let valuelen = out(valuelen, "valuelen")?;
        let flag = out(flag, "flag")?;
        let len = read(info, |i| i.get(k).map(<[u8]>::len))?;
        // SAFETY: both checked non-NULL above; the caller passes two ints.
        unsafe {
            *flag = len.is_some() as c_int;
            if let Some(n) = len {
                *valuelen = n as c_int;
            }
        }
        Ok(())
    }

    /// MPI 4.0: `*buflen` is the size of `value` on input; if the key exists, the value is stored
    /// cut to `*buflen - 1` bytes plus a terminator (nothing is written when `*buflen` is 0, and
    /// `value` may then be NULL) and `*buflen` becomes the length of the whole value plus one.
    fn MPI_Info_get_string / PMPI_Info_get_string (info: MPI_Info, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) on comm MPI_COMM_SELF => {
        // SAFETY: the standard makes `key` a NUL-terminated string (NULL is rejected).
        let k = unsafe { key_bytes(key)? };
        let buflen = out(buflen, "buflen")?;
        let flag = out(flag, "flag")?;
        // SAFETY: checked non-NULL above; the caller passes an int, the size of `value`.
        let cap = unsafe { *buflen };
        if cap < 0 {
            return Err(err(MPI_ERR_ARG, format!("invalid *buflen {cap}: must be non-negative")));
        }
        if cap > 0 && value.is_null() {
            return Err(err(MPI_ERR_ARG, format!("value is NULL with *buflen = {cap}")));
        }
        let found = read(info, |i| i.get(k).map(<[u8]>::to_vec))?;
        // SAFETY: `flag` and `buflen` checked non-NULL above (two ints); `value` holds `cap`
        // chars, and is non-NULL when `cap` > 0 (checked above).
        unsafe {
            *flag = found.is_some() as c_int;
            if let Some(v) = found {
                if cap > 0 {
                    put_string(value, cap as usize, &v);
                }
                *buflen = v.len() as c_int + 1;
            }
        }
        Ok(())
    }

    fn MPI_Info_get_nkeys / PMPI_Info_get_nkeys (info: MPI_Info, nkeys: *mut c_int) on comm MPI_COMM_SELF => {
        let o = out(nkeys, "nkeys")?;
        let n = read(info, Info::nkeys)? as c_int;
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *o = n };
        Ok(())
    }

    /// The `n`-th key in insertion order; `key` must hold MPI_MAX_INFO_KEY + 1 bytes.
    fn MPI_Info_get_nthkey / PMPI_Info_get_nthkey (info: MPI_Info, n: c_int, key: *mut c_char) on comm MPI_COMM_SELF => {
        let key = out(key, "key")?;
        let (k, nkeys) = read(info, |i| (usize::try_from(n).ok().and_then(|n| i.nth_key(n)).map(<[u8]>::to_vec), i.nkeys()))?;
        let k = k.ok_or_else(|| err(MPI_ERR_ARG, format!("invalid key number {n}: the info object has {nkeys} keys ({})", crate::error::indices(nkeys as usize))))?;
        // SAFETY: checked non-NULL above; the standard makes `key` hold MPI_MAX_INFO_KEY + 1 chars.
        unsafe { put_string(key, MPI_MAX_INFO_KEY + 1, &k) };
        Ok(())
    }

    /// A new info object with the same keys, values and order (a modifiable copy for MPI_INFO_ENV).
    fn MPI_Info_dup / PMPI_Info_dup (info: MPI_Info, newinfo: *mut MPI_Info) on comm MPI_COMM_SELF => {
        let copy = read(info, Info::clone)?;
        let o = out(newinfo, "newinfo")?;
        let h = new_handle(copy)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPI_Info_free / PMPI_Info_free (info: *mut MPI_Info) on comm MPI_COMM_SELF => {
        let p = out(info, "info")?;
        // SAFETY: checked non-NULL above; the caller passes its handle, an MPI_Info.
        let h = unsafe { *p };
        if h != MPI_INFO_ENV {
            let i = user_index(h)?;
            if !instance::infos()?.remove(i) {
                return Err(stale(h));
            }
        }
        // SAFETY: as above; the handle argument is in-out.
        unsafe { *p = MPI_INFO_NULL };
        Ok(())
    }
}

export! {
    fn MPI_Comm_set_info / PMPI_Comm_set_info (comm: MPI_Comm, info: MPI_Info) on comm comm => {
        let c = crate::ffi::check::comm(crate::ffi::check::universe()?, comm)?;
        let hints = read(info, |i| i.clone())?;
        *c.hints.lock().unwrap_or_else(|p| p.into_inner()) = hints;
        Ok(())
    }

    fn MPI_Comm_get_info / PMPI_Comm_get_info (comm: MPI_Comm, info_used: *mut MPI_Info) on comm comm => {
        let c = crate::ffi::check::comm(crate::ffi::check::universe()?, comm)?;
        let o = out(info_used, "info_used")?;
        let hints = c.hints.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let h = new_handle(hints)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }
}

/// A copy of the hints in `info` (MPI_INFO_NULL: none), taken now: the caller may free `info` as
/// soon as the call returns.
pub(crate) fn hints_of(info: MPI_Info) -> MpiResult<Info> {
    if info == MPI_INFO_NULL {
        return Ok(Info::new());
    }
    read(info, |i| i.clone())
}

/// The value of `key` in the user info object `info` (MPI_INFO_ENV included), if set.
pub(crate) fn value_of(info: MPI_Info, key: &str) -> MpiResult<Option<String>> {
    read(info, |i| i.get(key.as_bytes()).map(|v| String::from_utf8_lossy(v).into_owned()))
}

/// Sets `key` to `value` in the user info object `info` (an INOUT info argument).
pub(crate) fn set_value(info: MPI_Info, key: &str, value: &str) -> MpiResult {
    write(info, |i| i.set(key.as_bytes(), value.as_bytes()))
}

/// MPI_Comm_dup_with_info: the new communicator takes the hints of `info` instead of the parent's.
pub(crate) fn set_hints(c: &crate::comm::Comm, info: MPI_Info) -> MpiResult {
    if info == MPI_INFO_NULL {
        return Ok(());
    }
    let hints = read(info, |i| i.clone())?;
    *c.hints.lock().unwrap_or_else(|p| p.into_inner()) = hints;
    Ok(())
}

// The ABI announces the engine's limits.
const _: () = assert!(MPI_MAX_INFO_KEY == crate::info::MAX_KEY && MPI_MAX_INFO_VAL == crate::info::MAX_VALUE);
