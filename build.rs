//! Build script: gives the cdylib the MPICH-ABI SONAME.
fn main() {
    // Programs built against MPICH record NEEDED libmpi.so.12 (upstream) or libmpich.so.12 (Debian);
    // glibc matches an already-loaded object by DT_SONAME, so ours must be libmpi.so.12.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
    println!("cargo:rerun-if-changed=build.rs");
}
