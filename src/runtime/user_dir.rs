//! The per-user directory where ranks of any oxmpi job of this user find each other's open ports
//! and published names (`runtime::ports`, `runtime::name_service`): no server to start, nothing
//! to set up. `OXMPI_NAME_DIR` if set, else `$XDG_RUNTIME_DIR/oxmpi`, else `/tmp/oxmpi-UID`;
//! made on first use with mode 0700, and refused if another user owns it.
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;

/// Environment variable naming the directory (tests use it to keep their names apart).
pub const ENV_NAME_DIR: &str = "OXMPI_NAME_DIR";

/// The directory `sub` of the per-user directory, made if missing.
pub fn subdir(sub: &str) -> Result<PathBuf, String> {
    // SAFETY: plain syscall without arguments.
    let uid = unsafe { libc::getuid() };
    let base = match std::env::var_os(ENV_NAME_DIR) {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_dir()) {
            Some(d) => d.join("oxmpi"),
            None => PathBuf::from(format!("/tmp/oxmpi-{uid}")),
        },
    };
    let dir = base.join(sub);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot make the directory '{}' for ports and names: {e} (set {ENV_NAME_DIR} to a writable directory)", dir.display()))?;
    let owner = std::fs::metadata(&base).map_err(|e| format!("'{}': {e}", base.display()))?.uid();
    if owner != uid {
        return Err(format!("'{}' belongs to another user (uid {owner}); set {ENV_NAME_DIR} to a directory of yours", base.display()));
    }
    Ok(dir)
}

/// Whether process `pid` still runs (a file whose owner is gone is stale).
pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}
