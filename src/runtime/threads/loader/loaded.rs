//! A reference to an object the dynamic loader already holds, looked up by file with
//! `RTLD_NOLOAD` (which never loads anything) and given back when dropped. The passes that fix
//! a new instance's copies after `dlopen` (`copy_source`, `copy_refresh`, `copy_bind`) need the
//! handles of libraries that instance brought in, only for `dlsym`, and only while they run.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

/// One reference taken on an already loaded object; `dlclose`d on drop.
pub(super) struct Loaded(NonNull<c_void>);

impl Loaded {
    /// The object loaded from `path` (a path or, with the working directory set, a relative
    /// name), if the loader holds it; takes a reference that [`Drop`] gives back.
    pub(super) fn find(path: &CStr) -> Option<Loaded> {
        // SAFETY: a NUL-terminated string; RTLD_NOLOAD only returns an object already loaded.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        NonNull::new(h).map(Loaded)
    }

    /// The handle, for `dlsym`; valid while `self` lives.
    pub(super) fn handle(&self) -> *mut c_void {
        self.0.as_ptr()
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: the reference `find` took, given back once.
        unsafe { libc::dlclose(self.0.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_what_is_loaded() {
        // libc is loaded in every test process; a library nobody loaded is not found (and
        // looking for it does not load it).
        assert!(Loaded::find(c"libc.so.6").is_some_and(|l| !l.handle().is_null()));
        assert!(Loaded::find(c"libz-not-loaded-by-oxmpi.so.1").is_none());
    }
}
