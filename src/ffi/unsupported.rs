//! Functions of the MPI API that oxmpi does not implement yet. `build.rs` generates one stub per
//! prototype in `include/mpi.h` that has no implementation in `src/ffi/`; each stub calls `report`,
//! which raises MPI_ERR_UNSUPPORTED_OPERATION through the error handler of the communicator the
//! call concerns (or MPI_COMM_SELF), with a message naming the function. Never fake success.
use crate::abi::MPI_ERR_UNSUPPORTED_OPERATION;
use std::os::raw::c_int;

pub fn report(name: &'static str, comm: c_int) -> c_int {
    let e = crate::error::err(MPI_ERR_UNSUPPORTED_OPERATION, format!("{name} is not implemented in oxmpi yet (see README, Limitations)"));
    crate::ffi::env::errhandler::raise(name, comm, e)
}

// One `MPI_X`/`PMPI_X` stub pair per unimplemented prototype of include/mpi.h, plus compile-time
// signature checks of the implemented ones (see build.rs).
include!(concat!(env!("OUT_DIR"), "/unsupported_stubs.rs"));

#[cfg(test)]
mod tests {
    /// docs/UNSUPPORTED.md must list exactly the stubbed functions, so the README's list of
    /// limitations never drifts. Regenerate with `OXMPI_UPDATE_DOCS=1 cargo test --lib unsupported`.
    #[test]
    fn unsupported_list_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/UNSUPPORTED.md");
        let mut want = String::from("# Functions not implemented yet\n\nEach of these is exported (as `MPI_X` and `PMPI_X`) and returns `MPI_ERR_UNSUPPORTED_OPERATION`\nthrough the error handler, with a message naming the function. Generated from the build; do not edit\n(`OXMPI_UPDATE_DOCS=1 cargo test --lib unsupported` rewrites it).\n\n");
        want.push_str(&format!("{} functions:\n\n", super::STUB_NAMES.len()));
        for n in super::STUB_NAMES {
            want.push_str(&format!("- `{n}`\n"));
        }
        if std::env::var("OXMPI_UPDATE_DOCS").is_ok() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(have == want, "docs/UNSUPPORTED.md is out of date: run `OXMPI_UPDATE_DOCS=1 cargo test --lib unsupported`");
    }
}
