//! Ports, connect/accept, join and name publishing (MPI 4.1 sections 11.10.2-11.10.5): the C
//! boundary over `construct::connect` and `runtime::name_service`. The port name of accept and
//! connect is read at the root only, where the standard makes it significant.
use crate::abi::*;
use crate::construct::connect;
use crate::error::{err, ErrorClass, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::pointer_args::{c_str, out};
use crate::runtime::name_service;
use crate::runtime::ports;
use std::os::raw::{c_char, c_int};

/// MPI_MAX_PORT_NAME of mpi.h: the room of a port name argument, terminator included.
const MAX_PORT_NAME: usize = 256;

/// A string argument as Rust text.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text(p: *const c_char, what: &str) -> MpiResult<String> {
    // SAFETY: this function's contract.
    Ok(unsafe { c_str(p, what)? }.to_string_lossy().into_owned())
}

/// Writes `s` with its terminator into `dst`, which holds MPI_MAX_PORT_NAME chars.
///
/// # Safety
/// `dst` is NULL or has room for MPI_MAX_PORT_NAME chars.
unsafe fn write_port_name(dst: *mut c_char, s: &str, what: &str) -> MpiResult {
    let dst = out(dst, what)?;
    if s.len() >= MAX_PORT_NAME {
        return Err(err(ErrorClass::Port, format!("the port name '{s}' is longer than MPI_MAX_PORT_NAME")));
    }
    // SAFETY: checked non-NULL; s.len() + 1 <= MPI_MAX_PORT_NAME chars (this function's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, dst, s.len());
        *dst.add(s.len()) = 0;
    }
    Ok(())
}

/// The common part of accept and connect: checks `root` and `comm`, reads the port at the root.
///
/// # Safety
/// `port_name` follows the C API's contract (read at the root only); `newcomm` is NULL or an
/// MPI_Comm to write.
unsafe fn accept_or_connect(port_name: *const c_char, info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm, accepting: bool) -> MpiResult {
    let newcomm = out(newcomm, "newcomm")?;
    let u = check::universe()?;
    let c = check::comm(u, comm)?;
    check::intra(&c, if accepting { "MPI_Comm_accept" } else { "MPI_Comm_connect" })?;
    if root < 0 || root as usize >= c.size() {
        return Err(err(MPI_ERR_ROOT, format!("invalid root {root}: the communicator has {} ranks", c.size())));
    }
    let port = (c.rank == root as usize).then(|| {
        crate::ffi::info::hints_of(info)?;
        // SAFETY: the caller's contract.
        let name = unsafe { text(port_name, "port_name")? };
        connect::parse_port(u, &name)
    });
    let index = if accepting { connect::accept(u, &c, root as usize, port)? } else { connect::connect(u, &c, root as usize, port)? };
    // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
    unsafe { *newcomm = check::comm_handle(index) };
    Ok(())
}

export! {
    fn MPI_Open_port / PMPI_Open_port (info: MPI_Info, port_name: *mut c_char) on comm MPI_COMM_SELF => {
        let u = check::universe()?;
        crate::ffi::info::hints_of(info)?;
        let port = connect::open_port(u)?;
        // SAFETY: the standard makes `port_name` hold MPI_MAX_PORT_NAME chars.
        let written = unsafe { write_port_name(port_name, &port.name(), "port_name") };
        if written.is_err() {
            let _ = ports::close(&port);
        }
        written
    }

    fn MPI_Close_port / PMPI_Close_port (port_name: *const c_char) on comm MPI_COMM_SELF => {
        check::universe()?;
        // SAFETY: the standard makes `port_name` a NUL-terminated string (NULL is rejected).
        let name = unsafe { text(port_name, "port_name")? };
        let port = ports::Port::parse(&name).ok_or_else(|| err(ErrorClass::Port, format!("'{name}' is not a port name: use one MPI_Open_port returned")))?;
        ports::close(&port).map_err(|m| err(ErrorClass::Port, m))
    }

    fn MPI_Comm_accept / PMPI_Comm_accept (port_name: *const c_char, info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) on comm comm => {
        // SAFETY: the pointer arguments follow the C API's contract.
        unsafe { accept_or_connect(port_name, info, root, comm, newcomm, true) }
    }

    fn MPI_Comm_connect / PMPI_Comm_connect (port_name: *const c_char, info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) on comm comm => {
        // SAFETY: the pointer arguments follow the C API's contract.
        unsafe { accept_or_connect(port_name, info, root, comm, newcomm, false) }
    }

    fn MPI_Comm_join / PMPI_Comm_join (fd: c_int, intercomm: *mut MPI_Comm) on comm MPI_COMM_SELF => {
        let intercomm = out(intercomm, "intercomm")?;
        let u = check::universe()?;
        if fd < 0 {
            return Err(err(MPI_ERR_ARG, format!("fd is {fd}: MPI_Comm_join takes a connected socket")));
        }
        let index = connect::join(u, fd)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Comm for the new handle.
        unsafe { *intercomm = check::comm_handle(index) };
        Ok(())
    }

    fn MPI_Publish_name / PMPI_Publish_name (service_name: *const c_char, info: MPI_Info, port_name: *const c_char) on comm MPI_COMM_SELF => {
        check::universe()?;
        crate::ffi::info::hints_of(info)?;
        // SAFETY: the standard makes both NUL-terminated strings (NULL is rejected).
        let (service, port) = unsafe { (text(service_name, "service_name")?, text(port_name, "port_name")?) };
        name_service::publish(&service, &port)
    }

    fn MPI_Lookup_name / PMPI_Lookup_name (service_name: *const c_char, info: MPI_Info, port_name: *mut c_char) on comm MPI_COMM_SELF => {
        check::universe()?;
        crate::ffi::info::hints_of(info)?;
        // SAFETY: the standard makes `service_name` a NUL-terminated string (NULL is rejected).
        let service = unsafe { text(service_name, "service_name")? };
        let port = name_service::lookup(&service)?;
        // SAFETY: the standard makes `port_name` hold MPI_MAX_PORT_NAME chars.
        unsafe { write_port_name(port_name, &port, "port_name") }
    }

    fn MPI_Unpublish_name / PMPI_Unpublish_name (service_name: *const c_char, info: MPI_Info, port_name: *const c_char) on comm MPI_COMM_SELF => {
        check::universe()?;
        crate::ffi::info::hints_of(info)?;
        // SAFETY: the standard makes both NUL-terminated strings (NULL is rejected).
        let (service, port) = unsafe { (text(service_name, "service_name")?, text(port_name, "port_name")?) };
        name_service::unpublish(&service, &port)
    }
}
