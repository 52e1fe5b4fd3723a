//! MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent: the C boundary over
//! `construct::spawn`. Arguments other than `root` and `comm` are read at the root only, as the
//! standard makes them significant there only.
use crate::abi::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::pointer_args::{c_str, out};
use crate::construct::spawn::Plan;
use crate::runtime::spawn_desk::{soft_count, App};
use std::os::raw::{c_char, c_int};

/// A NULL-terminated argument vector (MPI_ARGV_NULL: none).
///
/// # Safety
/// `argv` is NULL or points to NUL-terminated strings ending with a NULL pointer.
unsafe fn read_argv(argv: *const *mut c_char) -> MpiResult<Vec<String>> {
    let mut args = Vec::new();
    if argv.is_null() {
        return Ok(args);
    }
    for i in 0.. {
        // SAFETY: the vector ends with a NULL pointer (this function's contract).
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string.
        args.push(unsafe { c_str(p, "argv entry")? }.to_string_lossy().into_owned());
    }
    Ok(args)
}

/// Whether the info key `host` names this machine.
fn is_this_host(h: &str) -> bool {
    let mut buf = [0 as c_char; 256];
    // SAFETY: gethostname writes at most len - 1 bytes and we keep the last byte 0.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr(), buf.len() - 1) } == 0;
    // SAFETY: the buffer is NUL-terminated (zeroed, last byte never written).
    let me = ok.then(|| unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned());
    h == "localhost" || me.is_some_and(|m| m == h || m.split('.').next() == Some(h))
}

/// One command of a spawn as the root reads it.
///
/// # Safety
/// `command` and `argv` follow the C API's contract for MPI_Comm_spawn.
unsafe fn read_app(command: *const c_char, argv: *const *mut c_char, maxprocs: c_int, info: MPI_Info) -> MpiResult<App> {
    // SAFETY: the caller's contract.
    let program = unsafe { c_str(command, "command")? }.to_string_lossy().into_owned();
    if program.is_empty() {
        return Err(err(MPI_ERR_ARG, "command is an empty string"));
    }
    if maxprocs < 1 {
        return Err(err(MPI_ERR_ARG, format!("maxprocs is {maxprocs}; it must be at least 1")));
    }
    // SAFETY: the caller's contract.
    let args = unsafe { read_argv(argv)? };
    let hints = crate::ffi::info::hints_of(info)?;
    let get = |k: &str| hints.get(k.as_bytes()).map(|v| String::from_utf8_lossy(v).into_owned());
    if let Some(h) = get("host") {
        if !is_this_host(&h) {
            return Err(err(MPI_ERR_SPAWN, format!("info key host = '{h}': oxmpi starts ranks on this machine only")));
        }
    }
    // The launcher picks the count `soft` allows with the slots it has free; checked here.
    let soft = get("soft");
    if let Some(v) = &soft {
        soft_count(v, maxprocs as usize).map_err(|m| err(MPI_ERR_INFO, m))?;
    }
    Ok(App { program, args, nprocs: maxprocs as usize, wdir: get("wdir"), path: get("path"), soft })
}

/// The common part: checks `root` and `comm`, runs the spawn, writes the results.
///
/// # Safety
/// `intercomm` is NULL or an MPI_Comm to write; `errcodes` is NULL or has room for one int per
/// process asked for.
unsafe fn run(root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, errcodes: *mut c_int, plan: impl FnOnce() -> MpiResult<Plan>) -> MpiResult {
    let intercomm = out(intercomm, "intercomm")?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    check::intra(&c, "MPI_Comm_spawn")?;
    if root < 0 || root as usize >= c.size() {
        return Err(err(MPI_ERR_ROOT, format!("invalid root {root}: the communicator has {} ranks", c.size())));
    }
    let mine = (c.rank == root as usize).then(plan);
    let (index, codes) = crate::construct::spawn::spawn(u, &c, root as usize, mine)?;
    // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
    unsafe { *intercomm = check::comm_handle(index) };
    if !errcodes.is_null() {
        for (i, &started) in codes.iter().enumerate() {
            // SAFETY: MPI_ERRCODES_IGNORE is NULL; else the array has one int per process asked for.
            unsafe { *errcodes.add(i) = if started { MPI_SUCCESS } else { MPI_ERR_SPAWN } };
        }
    }
    Ok(())
}

export! {
    fn MPI_Comm_spawn / PMPI_Comm_spawn (command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) on comm comm => {
        // SAFETY: the pointer arguments follow the C API's contract (read at the root only).
        unsafe {
            run(root, comm, intercomm, array_of_errcodes, || Ok(Plan { apps: vec![read_app(command, argv, maxprocs, info)?] }))
        }
    }

    fn MPI_Comm_spawn_multiple / PMPI_Comm_spawn_multiple (count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) on comm comm => {
        // SAFETY: the pointer arguments follow the C API's contract (read at the root only).
        unsafe {
            run(root, comm, intercomm, array_of_errcodes, || {
                if count < 1 {
                    return Err(err(MPI_ERR_ARG, format!("count is {count}; it must be at least 1")));
                }
                if array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null() {
                    return Err(err(MPI_ERR_ARG, "array_of_commands, array_of_maxprocs or array_of_info is NULL"));
                }
                let mut plan = Plan { apps: Vec::new() };
                for i in 0..count as usize {
                    // SAFETY: the arrays have `count` entries; MPI_ARGVS_NULL is NULL.
                    let argv = if array_of_argv.is_null() { std::ptr::null() } else { *array_of_argv.add(i) as *const *mut c_char };
                    plan.apps.push(read_app(*array_of_commands.add(i), argv, *array_of_maxprocs.add(i), *array_of_info.add(i))?);
                }
                Ok(plan)
            })
        }
    }

    fn MPI_Comm_get_parent / PMPI_Comm_get_parent (parent: *mut MPI_Comm) on comm MPI_COMM_WORLD => {
        let parent = out(parent, "parent")?;
        let u = check::universe()?;
        // MPI 4.1 section 11.8.2: MPI_COMM_NULL for a rank not spawned, or once the parent
        // intercommunicator was freed or disconnected.
        let p = *u.parent.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the handle.
        unsafe { *parent = p.map_or(MPI_COMM_NULL, check::comm_handle) };
        Ok(())
    }
}
