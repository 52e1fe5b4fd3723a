//! A processes-mode program made ready to start, by `mpiexec` on this machine and by a node
//! agent (`agent`) on its host: found like execvp, its MPI ABI read, its libraries planned.
use crate::args::{App, Options};
use std::os::unix::ffi::OsStrExt;
use crate::{abi, libpath, resolve_program};
use std::ffi::OsString;
use std::path::PathBuf;

/// A processes-mode program ready to start: found, its libraries planned.
pub struct Prepared {
    /// The program as the user named it, for messages.
    pub shown: String,
    pub path: PathBuf,
    pub libenv: libpath::LibEnv,
    pub libdir: Option<libpath::LibDir>,
    pub preload: Option<OsString>,
}

/// `prepare_app` for each segment of the command line (one but for MPMD).
pub fn prepare_apps(o: &Options) -> Result<Vec<Prepared>, (i32, String)> {
    o.apps.iter().map(|a| prepare_app(o, a)).collect()
}

/// Finds segment `a`'s program (a relative name with a '/' from its -wdir, as its ranks will
/// see it) and plans its libraries; Err: the exit status and the reason.
fn prepare_app(o: &Options, a: &App) -> Result<Prepared, (i32, String)> {
    let shown = a.program.to_string_lossy().into_owned();
    let named = match &a.wdir {
        Some(d) if a.program.as_bytes().contains(&b'/') => std::path::Path::new(d).join(&a.program).into_os_string(),
        _ => a.program.clone(),
    };
    let path = resolve_program(&named, std::env::var_os("PATH")).map_err(|e| (127, format!("cannot run '{shown}': {e}")))?;
    // Which MPI does it link against? Unreadable or odd files are treated like scripts.
    let (info, abi) = abi::of_program(&path, o.abi);
    let libdir = libpath::find_libdir(std::env::var_os("OXMPI_LIBDIR"), std::env::current_exe().ok());
    let libenv = libpath::plan(&shown, info.as_ref(), abi, libdir.as_ref(), &libpath::UserEnv::from_env()).map_err(|msg| (2, msg))?;
    let preload = libpath::processes_preload(libdir.as_ref(), libenv.ld_preload.as_deref(), std::env::var_os("LD_PRELOAD").as_deref());
    Ok(Prepared { shown, path, libenv, libdir, preload })
}
