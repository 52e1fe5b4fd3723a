//! MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name (MPI 4.1 section 11.10.4): one file
//! per service name under the per-user directory (`runtime::user_dir`), so every job of the user
//! sees the names the others publish, with no name server to start. A file holds the publisher's
//! pid and the port name; a name whose publisher is gone is stale and treated as unpublished.
//! Errors follow MPICH: MPI_ERR_NAME for a lookup of an unknown name, MPI_ERR_SERVICE for an
//! unpublish of a name not published (or published with another port) and for publishing a name
//! that is taken.
use super::user_dir;
use crate::error::{err, ErrorClass, MpiResult};
use std::path::PathBuf;

/// The file of a service name: its bytes in hex (any name is a valid file name).
fn file(service: &str) -> MpiResult<PathBuf> {
    let dir = user_dir::subdir("names").map_err(|m| err(ErrorClass::Service, m))?;
    Ok(dir.join(service.bytes().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// The live entry of `path`: (publisher pid, port name); a stale one is removed.
fn read(path: &PathBuf) -> Option<(i32, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (pid, port) = text.split_once('\n')?;
    let pid: i32 = pid.parse().ok()?;
    if !user_dir::alive(pid) {
        let _ = std::fs::remove_file(path);
        return None;
    }
    Some((pid, port.to_string()))
}

pub fn publish(service: &str, port: &str) -> MpiResult {
    let path = file(service)?;
    // SAFETY: plain syscall without arguments.
    let pid = unsafe { libc::getpid() };
    // Written aside, then linked in place: the name appears whole, and only if it was free.
    let tmp = path.with_extension(format!("tmp{pid}.{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', ""));
    std::fs::write(&tmp, format!("{pid}\n{port}")).map_err(|e| err(ErrorClass::Service, format!("cannot publish '{service}': {e}")))?;
    let mut linked = std::fs::hard_link(&tmp, &path);
    if linked.is_err() && read(&path).is_none() {
        // A stale entry, removed by `read`: try once more.
        linked = std::fs::hard_link(&tmp, &path);
    }
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => err(ErrorClass::Service, format!("the service name '{service}' is published already: unpublish it first (MPI_Unpublish_name)")),
        _ => err(ErrorClass::Service, format!("cannot publish '{service}': {e}")),
    })
}

pub fn lookup(service: &str) -> MpiResult<String> {
    read(&file(service)?).map(|(_, port)| port).ok_or_else(|| err(ErrorClass::Name, format!("no port is published under the service name '{service}'")))
}

pub fn unpublish(service: &str, port: &str) -> MpiResult {
    let path = file(service)?;
    match read(&path) {
        None => Err(err(ErrorClass::Service, format!("the service name '{service}' is not published"))),
        Some((_, p)) if p != port => Err(err(ErrorClass::Service, format!("the service name '{service}' is published with port '{p}', not '{port}'"))),
        Some(_) => std::fs::remove_file(&path).map_err(|e| err(ErrorClass::Service, format!("cannot unpublish '{service}': {e}"))),
    }
}
