//! `-genv NAME VALUE` / `-env NAME VALUE` / `-x NAME[=VALUE]` and `-wdir DIR`: applied to
//! mpiexec's own environment and working directory, which every rank inherits, on this machine
//! or (forwarded by `remote`) on the other hosts. Applied before the program is looked up, so a
//! relative program name is found from DIR, as with hydra.
use crate::args::Options;

/// Applies them; Err: one line for the user.
pub fn apply(o: &Options) -> Result<(), String> {
    for (k, v) in &o.env {
        match v {
            // Single-threaded still: nothing reads the environment concurrently.
            Some(v) => std::env::set_var(k, v),
            // `-x NAME`: this environment's value, which the ranks get anyway; hydra and Open
            // MPI accept a name that is not set.
            None => {}
        }
    }
    if let Some(d) = &o.wdir {
        std::env::set_current_dir(d).map_err(|e| format!("-wdir {}: {e}", std::path::Path::new(d).display()))?;
    }
    Ok(())
}
