//! Attribute caching (MPI 4.1 section 7.7): the keyvals of one rank and the attributes set on its
//! objects (communicators, datatypes or windows: one registry each).
//!
//! Bookkeeping only, generic over the callback types `C` (copy) and `D` (delete) and keyed by the
//! objects' handles, all of which only the C boundary knows. It calls the callbacks, never while
//! this registry's lock is held, because a callback may itself call MPI attribute functions.
//! One registry per rank: in threads mode the ranks of a process must not see each other's keyvals.
use std::collections::HashMap;
use std::sync::Mutex;

/// A keyval made by MPI_Comm_create_keyval (or the deprecated MPI_Keyval_create).
#[derive(Clone, Copy)]
pub struct Keyval<C, D> {
    /// None is the null copy function (MPI_COMM_NULL_COPY_FN & co.): the attribute is not copied.
    pub copy: Option<C>,
    /// None is the null delete function: nothing to call.
    pub delete: Option<D>,
    /// The user's `extra_state` pointer, kept as an address so the registry is `Send`.
    pub extra_state: usize,
    /// The user's handle is still valid (not yet given to MPI_Comm_free_keyval).
    live: bool,
    /// Attributes currently set with this keyval; the slot is reused only once this is 0 and the
    /// handle was freed (freeing a keyval in use is allowed, MPI 4.1 section 7.7.2).
    uses: usize,
}

struct Inner<C, D> {
    keyvals: Vec<Option<Keyval<C, D>>>,
    /// Object handle -> (keyval index, attribute value), in order of first setting.
    attrs: HashMap<i32, Vec<(u32, usize)>>,
}

impl<C, D> Default for Inner<C, D> {
    fn default() -> Self {
        Inner { keyvals: Vec::new(), attrs: HashMap::new() }
    }
}

impl<C, D> Inner<C, D> {
    /// Drops a use of keyval `k`; forgets the keyval when it was freed and nothing uses it.
    fn unuse(&mut self, k: u32) {
        if let Some(Some(kv)) = self.keyvals.get_mut(k as usize) {
            kv.uses = kv.uses.saturating_sub(1);
            if !kv.live && kv.uses == 0 {
                self.keyvals[k as usize] = None;
            }
        }
    }
}

/// The keyvals and attributes of one kind of object, of one rank.
pub struct Attrs<C, D> {
    inner: Mutex<Inner<C, D>>,
}

impl<C, D> Default for Attrs<C, D> {
    fn default() -> Self {
        Attrs { inner: Mutex::new(Inner::default()) }
    }
}

impl<C: Copy, D: Copy> Attrs<C, D> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<C, D>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a keyval; returns its index (the handle is made by `ffi::comm::attr`).
    pub fn create_keyval(&self, copy: Option<C>, delete: Option<D>, extra_state: usize) -> u32 {
        let mut t = self.lock();
        let kv = Keyval { copy, delete, extra_state, live: true, uses: 0 };
        if let Some(i) = t.keyvals.iter().position(|x| x.is_none()) {
            t.keyvals[i] = Some(kv);
            i as u32
        } else {
            t.keyvals.push(Some(kv));
            (t.keyvals.len() - 1) as u32
        }
    }

    /// Replaces the callbacks and extra_state of live keyval `k` (MPICH's C++ bindings route a
    /// keyval's callbacks through their own proxy right after creating it); false if `k` is not
    /// a live keyval.
    pub fn set_callbacks(&self, k: u32, copy: Option<C>, delete: Option<D>, extra_state: usize) -> bool {
        let mut t = self.lock();
        match t.keyvals.get_mut(k as usize) {
            Some(Some(kv)) if kv.live => {
                kv.copy = copy;
                kv.delete = delete;
                kv.extra_state = extra_state;
                true
            }
            _ => false,
        }
    }

    /// The keyval behind a user handle index, if that handle is valid (created and not freed).
    pub fn live_keyval(&self, k: u32) -> Option<Keyval<C, D>> {
        self.lock().keyvals.get(k as usize).copied().flatten().filter(|kv| kv.live)
    }

    /// The keyval of an attribute, also after its handle was freed (for the callbacks).
    pub fn keyval(&self, k: u32) -> Option<Keyval<C, D>> {
        self.lock().keyvals.get(k as usize).copied().flatten()
    }

    /// MPI_Comm_free_keyval: invalidates the handle; false if it was not valid.
    pub fn free_keyval(&self, k: u32) -> bool {
        let mut t = self.lock();
        match t.keyvals.get_mut(k as usize) {
            Some(Some(kv)) if kv.live => {
                kv.live = false;
                if kv.uses == 0 {
                    t.keyvals[k as usize] = None;
                }
                true
            }
            _ => false,
        }
    }

    /// The value of attribute `k` on `comm`.
    pub fn get(&self, comm: i32, k: u32) -> Option<usize> {
        self.lock().attrs.get(&comm).and_then(|v| v.iter().find(|a| a.0 == k)).map(|a| a.1)
    }

    /// Sets attribute `k` on `comm` (replacing the value in place if it exists; the caller has run
    /// the delete callback on the old value).
    pub fn put(&self, comm: i32, k: u32, value: usize) {
        let mut t = self.lock();
        let list = t.attrs.entry(comm).or_default();
        if let Some(a) = list.iter_mut().find(|a| a.0 == k) {
            a.1 = value;
            return;
        }
        list.push((k, value));
        if let Some(Some(kv)) = t.keyvals.get_mut(k as usize) {
            kv.uses += 1;
        }
    }

    /// Removes attribute `k` from `comm` (after its delete callback succeeded).
    pub fn remove(&self, comm: i32, k: u32) {
        let mut t = self.lock();
        let Some(list) = t.attrs.get_mut(&comm) else { return };
        let Some(i) = list.iter().position(|a| a.0 == k) else { return };
        list.remove(i);
        if list.is_empty() {
            t.attrs.remove(&comm);
        }
        t.unuse(k);
    }

    /// Drops every attribute of `comm` without callbacks (a failed dup's communicator, whose handle
    /// will be reused).
    pub fn clear(&self, comm: i32) {
        let mut t = self.lock();
        for (k, _) in t.attrs.remove(&comm).unwrap_or_default() {
            t.unuse(k);
        }
    }

    /// The attributes of `comm` as (keyval index, value), in order of setting.
    pub fn list(&self, comm: i32) -> Vec<(u32, usize)> {
        self.lock().attrs.get(&comm).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn keyval_freed_while_in_use_stays_until_last_attribute_goes() {
        let a: Attrs<fn(), fn()> = Attrs::default();
        let k = a.create_keyval(None, None, 7);
        a.put(5, k, 42);
        a.put(5, k, 43);
        assert_eq!(a.get(5, k), Some(43));
        assert!(a.free_keyval(k));
        assert!(!a.free_keyval(k));
        assert!(a.live_keyval(k).is_none());
        assert_eq!(a.keyval(k).map(|kv| kv.extra_state), Some(7));
        // Not reused while an attribute holds it.
        assert_ne!(a.create_keyval(None, None, 0), k);
        a.remove(5, k);
        assert!(a.keyval(k).is_none());
        assert_eq!(a.list(5), vec![]);
    }
}
