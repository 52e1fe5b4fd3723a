//! MPI_Comm_accept, MPI_Comm_connect (MPI 4.1 section 11.10.2) and MPI_Comm_join (11.10.5):
//! an intercommunicator between two groups that share no communicator, built with `inter::create`
//! once their roots know each other's slot.
//!
//! The connecting root sends its slot to the port's slot, on the world's collective context with
//! the port's own tag (`TAG_PORT | index`), which no other message uses; the accepting root takes
//! the first such request from any source, and both roots then lead `inter::create` on that
//! context with `TAG_CONNECT`. Both groups must live in one segment (the transport's reach): the
//! groups of one job, its spawned jobs included. Each root checks its port first and tells its
//! group the outcome, so a bad port fails on every rank (MPI_ERR_PORT) instead of leaving them
//! waiting.
use super::inter::{create, LeaderLink};
use crate::coll::bcast::bcast;
use crate::coll::{Coll, TAG_INTER};
use crate::comm::{Comm, Universe};
use crate::error::{err, ErrorClass, MpiResult};
use crate::p2p::{Buf, SendMode};
use crate::runtime::ports::{self, Port};

/// Tags of a connection request to port index i: `TAG_PORT | i` (ids 0x6, 16-bit index).
const TAG_PORT: i32 = 0x6 << 16;
/// Tag of the roots' messages while they build the intercommunicator, and of the outcome's
/// broadcast in each group.
const TAG_CONNECT: i32 = TAG_INTER | 9;

/// The job a slot of `u`'s segment belongs to, as port names carry it.
pub fn job_id(u: &Universe) -> i32 {
    let launcher = u.seg.header().launcher_pid;
    if launcher > 0 {
        launcher
    } else {
        u.seg.rank(0).pid.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A port name as the root of a connect or accept passes it, checked.
pub fn parse_port(u: &Universe, name: &str) -> MpiResult<Port> {
    let port = Port::parse(name).ok_or_else(|| err(ErrorClass::Port, format!("'{name}' is not a port name: use one MPI_Open_port returned")))?;
    if port.job != job_id(u) {
        return Err(err(
            ErrorClass::Port,
            format!("port '{name}' belongs to another oxmpi job: oxmpi connects groups of one job (its spawned jobs included) only"),
        ));
    }
    if !port.is_open().map_err(|m| err(ErrorClass::Port, m))? {
        return Err(err(ErrorClass::Port, format!("port '{name}' is not open (closed with MPI_Close_port, or its job ended)")));
    }
    Ok(port)
}

/// MPI_Open_port for rank `u`.
pub fn open_port(u: &Universe) -> MpiResult<Port> {
    ports::open(job_id(u), u.rank).map_err(|m| err(ErrorClass::Port, m))
}

/// Tells the group the root's outcome (the remote root's slot, or failure) and builds the
/// intercommunicator. `remote` is Some at the root only.
fn finish(u: &Universe, comm: &Comm, root: usize, remote: Option<MpiResult<usize>>) -> MpiResult<u32> {
    let mut outcome = [0u64; 2];
    let mut failure = None;
    match remote {
        Some(Ok(slot)) => outcome = [1, slot as u64],
        Some(Err(e)) => failure = Some(e),
        None => {}
    }
    // SAFETY: `outcome` holds 2 u64 on every rank.
    unsafe { bcast(&Coll::fixed(u, comm, TAG_CONNECT), outcome.as_mut_ptr() as *mut u8, 16, root)? };
    if outcome[0] == 0 {
        return Err(failure.unwrap_or_else(|| err(ErrorClass::Port, format!("the root (rank {root} of the communicator) could not connect, and reports why"))));
    }
    let link = (comm.rank == root).then(|| LeaderLink { remote_leader: outcome[1] as usize, tag: TAG_CONNECT, context: u.world.coll_context() });
    create(u, comm, root, link)
}

/// MPI_Comm_accept, collective over the intracommunicator `comm`; `port` is Some at the root.
pub fn accept(u: &Universe, comm: &Comm, root: usize, port: Option<MpiResult<Port>>) -> MpiResult<u32> {
    let remote = port.map(|p| {
        let p = p?;
        if p.slot != u.rank {
            return Err(err(ErrorClass::Port, format!("port '{}' was opened by another process: MPI_Comm_accept takes the ports of its root", p.name())));
        }
        let mut from = 0u64;
        // SAFETY: `from` outlives the request, waited for here.
        let r = unsafe { u.engine.irecv(Buf::Flat(&mut from as *mut u64 as *mut u8), 8, None, TAG_PORT | p.index as i32, u.world.coll_context()) };
        let st = u.engine.wait(r);
        if st.error.is_some() || st.bytes != 8 || st.source < 0 || from != st.source as u64 {
            return Err(err(ErrorClass::Port, format!("malformed connection request on port '{}'", p.name())));
        }
        Ok(st.source as usize)
    });
    finish(u, comm, root, remote)
}

/// MPI_Comm_connect, collective over the intracommunicator `comm`; `port` is Some at the root.
pub fn connect(u: &Universe, comm: &Comm, root: usize, port: Option<MpiResult<Port>>) -> MpiResult<u32> {
    let remote = port.map(|p| {
        let p = p?;
        let me = u.rank as u64;
        // SAFETY: `me` outlives the request, waited for here.
        let s = unsafe { u.engine.isend(Buf::flat(&me as *const u64 as *const u8), 8, p.slot, TAG_PORT | p.index as i32, u.world.coll_context(), SendMode::Standard)? };
        let st = u.engine.wait(s);
        if let Some(e) = st.error {
            return Err(err(e, format!("cannot reach the process of port '{}'", p.name())));
        }
        Ok(p.slot)
    });
    finish(u, comm, root, remote)
}

/// Writes all of `b` to `fd`.
fn write_all(fd: i32, b: &[u8]) -> MpiResult {
    let mut done = 0;
    while done < b.len() {
        // SAFETY: the range is inside `b`.
        let n = unsafe { libc::write(fd, b[done..].as_ptr() as *const libc::c_void, b.len() - done) };
        if n <= 0 {
            let e = std::io::Error::last_os_error();
            if n < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err(ErrorClass::Arg, format!("MPI_Comm_join: cannot write to descriptor {fd}: {e}")));
        }
        done += n as usize;
    }
    Ok(())
}

/// Reads exactly `b.len()` bytes from `fd`.
fn read_exact(fd: i32, b: &mut [u8]) -> MpiResult {
    let mut done = 0;
    while done < b.len() {
        // SAFETY: the range is inside `b`.
        let n = unsafe { libc::read(fd, b[done..].as_mut_ptr() as *mut libc::c_void, b.len() - done) };
        if n <= 0 {
            let e = std::io::Error::last_os_error();
            if n < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            let why = if n == 0 { "the other end closed the connection".to_string() } else { e.to_string() };
            return Err(err(ErrorClass::Arg, format!("MPI_Comm_join: cannot read from descriptor {fd}: {why}")));
        }
        done += n as usize;
    }
    Ok(())
}

/// Bytes of a port name on the socket of MPI_Comm_join.
const JOIN_NAME: usize = 128;

/// MPI_Comm_join over the connected socket `fd`: the ends swap their (job, slot); the lower slot
/// opens a port, sends its name and accepts, the other connects (both on MPI_COMM_SELF).
pub fn join(u: &Universe, fd: i32) -> MpiResult<u32> {
    let mine = [job_id(u) as i64 as u64, u.rank as u64];
    let mut hello = [0u8; 16];
    hello[..8].copy_from_slice(&mine[0].to_le_bytes());
    hello[8..].copy_from_slice(&mine[1].to_le_bytes());
    write_all(fd, &hello)?;
    read_exact(fd, &mut hello)?;
    let theirs = [u64::from_le_bytes(hello[..8].try_into().expect("8 bytes")), u64::from_le_bytes(hello[8..].try_into().expect("8 bytes"))];
    if theirs[0] != mine[0] {
        return Err(err(ErrorClass::Port, "MPI_Comm_join: the other end is a process of another oxmpi job: oxmpi joins processes of one job (its spawned jobs included) only"));
    }
    if theirs[1] == mine[1] {
        return Err(err(ErrorClass::Arg, "MPI_Comm_join: both ends of the socket are this process"));
    }
    if mine[1] < theirs[1] {
        let port = open_port(u)?;
        let mut name = [0u8; JOIN_NAME];
        let s = port.name();
        name[..s.len()].copy_from_slice(s.as_bytes());
        let out = write_all(fd, &name).and_then(|_| accept(u, &u.self_comm, 0, Some(Ok(port))));
        let _ = ports::close(&port);
        out
    } else {
        let mut name = [0u8; JOIN_NAME];
        read_exact(fd, &mut name)?;
        let s = String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(JOIN_NAME)]).into_owned();
        // The name was made by the other end, which keeps the port open until we connected.
        let port = Port::parse(&s).ok_or_else(|| err(ErrorClass::Port, format!("MPI_Comm_join: the other end sent '{s}', not a port name")))?;
        connect(u, &u.self_comm, 0, Some(Ok(port)))
    }
}
